"""
From finished sweeps to BenchExec's tables and the kit's one report.

Reads only: sweep manifests and result files go in, table-generator pages and the report come
out. A failure here never touches a result file.
"""

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from analysis import environment, results, runner, time_apis
from analysis.experiments import EXPERIMENTS
from analysis.report import Report, Table, write_report


# every column some section reads (the loader skips the rest)
COLUMNS = set(time_apis.COLUMNS)


class PipelineError(Exception):
    """Tables or report cannot be made (one line for the user)."""


def _table_generator(table_config, files, outdir, name):
    """One table-generator page with the given result files side by side."""
    outdir.mkdir(parents=True, exist_ok=True)
    command = [_benchexec_program("table-generator"), "-x", str(table_config),
               "-o", str(outdir), "-n", name, "-q", *map(str, files)]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        last = (done.stdout.strip().splitlines() or ["no output"])[-1]
        raise PipelineError(f"table-generator failed for {name}: {last}")
    return outdir / f"{name}.table.html"


def _benchexec_program(name):
    """BenchExec's console script next to this Python (a venv's), else the one on PATH."""
    sibling = Path(sys.executable).parent / name
    found = str(sibling) if sibling.exists() else shutil.which(name)
    if not found:
        raise PipelineError(f"'{name}' not found; install BenchExec (pip install benchexec)")
    return found


def tables_for_sweep(directory, sweep):
    """One table-generator page per benchexec invocation: the timing APIs side by side."""
    experiment = EXPERIMENTS[sweep.experiment]
    pages = []
    for step in sweep.steps:
        if step.status == "done" and step.result_files:
            files = [directory / f for f in step.result_files]
            pages.append(_table_generator(experiment.table, files, directory / "tables", step.name))
    return pages


def load_tables(path, columns=COLUMNS):
    """(RunTables, conditions by file name, sweep or None) of a sweep directory or result files."""
    path = Path(path)
    if (path / runner.MANIFEST).exists():
        sweep = runner.Sweep.load(path)
        files, conditions = [], {}
        for step in sweep.steps:
            for name in step.result_files:
                files.append(path / name)
                conditions[name] = (step.load, step.rerun)
        return results.load_results(files, columns), conditions, sweep
    if path.is_dir():
        return _without_duplicate_blocks(results.load_results(path, columns)), {}, None
    return results.load_results([path], columns), {}, None


def _without_duplicate_blocks(tables):
    """BenchExec writes a run definition's runs once in total and again per task set (files with a
    `block` attribute), but only the per-task-set files when just one task set ran. Keep each run once."""
    key = lambda t: (t.benchmark, t.date, t.rundefinition)  # noqa: E731
    combined = {key(t) for t in tables if "block" not in t.attributes}
    return [t for t in tables if "block" not in t.attributes or key(t) not in combined]


def build_report(paths, table_pages=()):
    """The report over sweep directories and/or result files, plus what it was made of;
    `table_pages` are table-generator pages to list, as paths relative to the report."""
    tables, conditions, sweeps = [], {}, []
    for path in paths:
        t, c, sweep = load_tables(path)
        tables += t
        conditions.update(c)
        if sweep:
            sweeps.append((Path(path), sweep))
    if not tables:
        raise PipelineError(f"no result files found in {', '.join(map(str, paths))}")

    env = sweeps[0][1].environment if sweeps else environment.snapshot()
    report = Report(
        title="timekit report",
        environment={p["name"]: f"{p['value']} ({p['verdict']}: {p['why']})" for p in env.get("probes", [])},
    )
    cores = _cores(env)
    time_tables = [t for t in tables if t.toolmodule.startswith("tool_info.timed_divisors")]
    if time_tables:
        samples = time_apis.collect(time_tables, conditions)
        notes = _sweep_notes(sweeps)
        section, data = time_apis.section(samples, cores, notes)
        if any(not s.container for _, s in sweeps):
            section.warnings.append("Some runs were made with --no-container: less isolation than BenchExec's default.")
        if table_pages:
            section.tables.append(Table(
                title="BenchExec's own view: table-generator pages (timing APIs side by side)",
                columns=["page (relative to this report)"], rows=[[str(page)] for page in table_pages],
                caption="Made with table-configs/time-apis.xml, one per benchexec invocation."))
        report.sections.append(section)
        report.data["time-apis"] = data
        report.samples = samples.as_columns()
    report.data["sources"] = [str(t.path) for t in tables]
    report.data["sweeps"] = [{"directory": str(d), "experiment": s.experiment, "preset": s.preset, "reps": s.reps,
                              "loads": s.loads, "reruns": s.reruns, "skipped": s.skipped, "build": s.build}
                             for d, s in sweeps]
    return report


def _cores(env):
    for probe in env.get("probes", []):
        if probe["name"] == "online CPUs" and probe["value"] != environment.UNKNOWN:
            return int(probe["value"].split()[0])
    return os.cpu_count()


def _sweep_notes(sweeps):
    notes = []
    for directory, s in sweeps:
        notes.append(f"Sweep {directory.name}: preset {s.preset}, {s.reps} runs per task and API, load levels "
                     f"{', '.join(map(str, s.loads))}, {s.reruns} rerun(s); run definitions run one after another "
                     f"inside each benchexec invocation. Build: {s.build.replace(chr(10), '; ')}.")
        for rundefinition, why in s.skipped.items():
            notes.append(f"Run definition {rundefinition} was skipped: {why}.")
    return notes


def tables_and_report(paths, outdir):
    """table-generator pages for every sweep, then the report; returns the report's paths."""
    pages = []
    for path in map(Path, paths):
        if (path / runner.MANIFEST).exists():
            pages += tables_for_sweep(path, runner.Sweep.load(path))
    relative = [os.path.relpath(page, outdir) for page in pages]
    try:
        with warnings.catch_warnings():
            # scipy warns on degenerate samples (GNU time's identical 10 ms steps); the tests'
            # notes and NaN results already say so in the report
            warnings.simplefilter("ignore", RuntimeWarning)
            report = build_report(paths, relative)
    except results.ResultFileError as e:
        raise PipelineError(str(e)) from None
    return write_report(report, outdir)

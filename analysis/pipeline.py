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

from analysis import cores, discipline, environment, microbench, noise, numa, results, runner, time_apis, topology
from analysis.experiments import EXPERIMENTS
from analysis.report import Report, Table, write_report




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
    """table-generator pages of a sweep: one per benchexec invocation (the timing APIs side by side),
    or one for the whole sweep where the experiment's conditions are its steps."""
    experiment = EXPERIMENTS[sweep.experiment]
    if experiment.one_table:
        files = [directory / f for step in sweep.steps if step.status == "done" for f in step.result_files]
        return [_table_generator(experiment.table, files, directory / "tables", experiment.name)] if files else []
    pages = []
    for step in sweep.steps:
        if step.status == "done" and step.result_files:
            files = [directory / f for f in step.result_files]
            pages.append(_table_generator(experiment.table, files, directory / "tables", step.name))
    return pages


def load_tables(path, columns=None):
    """(RunTables, conditions by file name, sweep or None) of a sweep directory or result files."""
    path = Path(path)
    columns = columns or {c for _, cols in SECTIONS.values() for c in cols}
    if (path / runner.MANIFEST).exists():
        sweep = runner.Sweep.load(path)
        files, conditions = [], {}
        for step in sweep.steps:
            for name in step.result_files:
                files.append(path / name)
                conditions[name] = step
        return results.load_results(files, columns), conditions, sweep
    if path.is_dir():
        return results.without_duplicate_blocks(results.load_results(path, columns)), {}, None
    return results.load_results([path], columns), {}, None


# Each builder gets (tables, conditions, environment, sweeps) and gives (section, data, samples
# for samples.csv or None); the modules' own section() functions take only what they need.
def _time_apis_section(tables, conditions, env, sweeps):
    samples = time_apis.collect(tables, conditions)
    section, data = time_apis.section(samples, _cores(env), _sweep_notes(sweeps))
    return section, data, samples.as_columns()


def _discipline_section(tables, conditions, env, sweeps):
    return (*discipline.section(tables, conditions, env.get("probes", []), _cores(env)), None)


def _cores_section(tables, conditions, env, sweeps):
    return (*cores.section(tables, topology.cpus(), notes=_sweep_notes(sweeps)), None)


def _tables_only(section):
    return lambda tables, conditions, env, sweeps: (*section(tables), None)


# experiment -> (section builder, columns it reads); report order = this order
SECTIONS = {
    "time-apis": (_time_apis_section, time_apis.COLUMNS),
    "discipline": (_discipline_section, discipline.COLUMNS),
    "core-heterogeneity": (_cores_section, cores.COLUMNS),
    "os-microbench": (_tables_only(microbench.section), microbench.COLUMNS),
    "scheduling-noise": (_tables_only(noise.section), noise.COLUMNS),
    "memory-bandwidth": (_tables_only(numa.section), numa.COLUMNS),
}


def experiment_of(table, sweep=None):
    """Which experiment a result file belongs to: its sweep's, else its benchmark file's name
    (BenchExec's benchmarkname starts with it), else the time-APIs one for its tool module."""
    if sweep is not None:
        return sweep.experiment
    stem = table.benchmark.split(".")[0]
    if stem in SECTIONS:
        return stem
    return "time-apis" if table.toolmodule.startswith("tool_info.timed_") else None


def build_report(paths, table_pages=None):
    """The report over sweep directories and/or result files, plus what it was made of;
    `table_pages` maps an experiment to its table-generator pages, as paths relative to the report."""
    by_experiment, conditions, sweeps, sources = {}, {}, [], []
    for path in paths:
        t, c, sweep = load_tables(path)
        conditions.update(c)
        sources += t
        if sweep:
            sweeps.append((Path(path), sweep))
        for table in t:
            by_experiment.setdefault(experiment_of(table, sweep), []).append(table)
    if not sources:
        raise PipelineError(f"no result files found in {', '.join(map(str, paths))}")
    unknown = by_experiment.pop(None, [])

    env = sweeps[0][1].environment if sweeps else environment.snapshot()
    report = Report(
        title="timekit report",
        environment={p["name"]: f"{p['value']} ({p['verdict']}: {p['why']})" for p in env.get("probes", [])},
    )
    for name, (builder, _) in SECTIONS.items():
        if name not in by_experiment:
            continue
        own_sweeps = [(d, s) for d, s in sweeps if s.experiment == name]
        section, data, samples = builder(by_experiment[name], conditions, env, own_sweeps)
        if any(not s.container for _, s in own_sweeps):
            section.warnings.append("Some runs were made with --no-container: less isolation than BenchExec's default.")
        pages = (table_pages or {}).get(name, [])
        if pages:
            section.tables.append(Table(
                title="BenchExec's own view: table-generator pages",
                columns=["page (relative to this report)"], rows=[[str(page)] for page in pages],
                caption=f"Made with table-configs/{name}.xml."))
        report.sections.append(section)
        report.data[name] = data
        if samples is not None and not report.samples:
            report.samples = samples
    if unknown:
        report.data["not analysed"] = sorted({str(t.path) for t in unknown})
    report.data["sources"] = [str(t.path) for t in sources]
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
        conditions = (f"load levels {', '.join(map(str, s.loads))}, {s.reruns} rerun(s)" if s.loads
                      else f"{s.reruns} rerun(s) of: {', '.join(dict.fromkeys(step.condition for step in s.steps))}")
        notes.append(f"Sweep {directory.name}: preset {s.preset}, {s.reps} runs per task in each of {len(s.steps)} "
                     f"benchexec invocations ({conditions}); run definitions run one after another inside each "
                     f"invocation. Build: {s.build.replace(chr(10), '; ')}.")
        for rundefinition, why in s.skipped.items():
            notes.append(f"Run definition {rundefinition} was skipped: {why}.")
    return notes


def tables_and_report(paths, outdir):
    """table-generator pages for every sweep, then the report; returns the report's paths."""
    pages = {}
    for path in map(Path, paths):
        if (path / runner.MANIFEST).exists():
            sweep = runner.Sweep.load(path)
            pages.setdefault(sweep.experiment, []).extend(os.path.relpath(page, outdir) for page in tables_for_sweep(path, sweep))
    try:
        with warnings.catch_warnings():
            # scipy warns on degenerate samples (GNU time's identical 10 ms steps); the tests'
            # notes and NaN results already say so in the report
            warnings.simplefilter("ignore", RuntimeWarning)
            report = build_report(paths, pages)
    except results.ResultFileError as e:
        raise PipelineError(str(e)) from None
    return write_report(report, outdir)

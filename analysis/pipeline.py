"""
From finished sweeps to BenchExec's tables and the kit's one report.

Reads only: sweep manifests and result files go in, table-generator pages and the report come
out. A failure here never touches a result file. Each experiment's section comes from its own
folder (analysis.experiments); this module knows none of them by name.
"""

import concurrent.futures
import dataclasses
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from analysis.core import cost, results, verdicts
from analysis.core.results import machines, outcome
from analysis.core.errors import UserError
from analysis.core.report import Report, Table, write_report
from analysis.experiments import EXPERIMENTS
from analysis.machine import environment
from analysis.machine import facts as machine_facts
from analysis.sweep import run_rows
from analysis.sweep.load import load
from analysis.sweep.model import MANIFEST, Context, Sweep
from analysis.tools.compare import generic_report
from analysis.tools.plan import run_looks, run_summary


class PipelineError(UserError):
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
    return page_of((table_config, files, outdir, name))


def _benchexec_program(name):
    """BenchExec's console script next to this Python (a venv's), else the one on PATH."""
    sibling = Path(sys.executable).parent / name
    found = str(sibling) if sibling.exists() else shutil.which(name)
    if not found:
        raise PipelineError(f"'{name}' not found; install BenchExec (pip install benchexec)")
    return found


def table_jobs(directory, sweep, pages):
    """(config, result files, output folder, page name) of every table-generator page of a sweep,
    written into `pages`: one per benchexec invocation (the timing APIs side by side), or one for
    the whole sweep where the experiment's conditions are its steps."""
    experiment = EXPERIMENTS[sweep.experiment]
    done = [step for step in sweep.steps if step.status == "done" and step.result_files]
    if experiment.one_table:
        files = [directory / f for step in done for f in step.result_files]
        return [(experiment.table, files, pages, experiment.name)] if files else []
    return [(experiment.table, [directory / f for f in step.result_files], pages, step.name) for step in done]


def pages_folder(sweep_dir, outdir, sweep_dirs):
    """Where a report puts a sweep's table-generator pages: the sweep's own tables/ when the report
    is written inside that sweep (timekit run, timekit report SWEEP), else a folder of the report's
    own, named by the sweep's path below the sweeps' common folder. A report never writes into
    the results it reads otherwise: recorded results (another machine's, kept as recorded, perhaps
    read-only) lose nothing, and their old pages are not replaced by this kit's."""
    sweep_dir, outdir = Path(sweep_dir).resolve(), Path(outdir).resolve()
    if outdir.is_relative_to(sweep_dir):
        return sweep_dir / "tables"
    common = Path(os.path.commonpath([Path(d).resolve() for d in sweep_dirs]))
    return outdir / "tables" / (sweep_dir.relative_to(common) if sweep_dir != common else sweep_dir.name)


def run_table_jobs(jobs):
    """The pages, as many table-generators at once as there are CPUs: they run after the
    measurements, so they cannot disturb them."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(lambda job: _table_generator(*job), jobs))


def page_of(job):
    """Where table-generator writes a job's page (the report links it before it exists)."""
    _config, _files, outdir, name = job
    return outdir / f"{name}.table.html"


def all_columns():
    """Every column some experiment's section reads."""
    return {c for experiment in EXPERIMENTS.values() for c in experiment.columns}


def experiment_of(table, sweep=None):
    """Which experiment a result file belongs to: its sweep's, else its benchmark file's name
    (BenchExec's benchmarkname starts with it), else the time-APIs one for its tool module."""
    if sweep is not None:
        return sweep.experiment
    stem = table.benchmark.split(".")[0]
    if stem in EXPERIMENTS:
        return stem
    return "time-apis" if table.toolmodule.startswith("tool_info.timed_") else None


def build_report(paths, table_pages=None, notes=None):
    """The report over sweep directories and/or result files, plus what it was made of;
    `table_pages` maps an experiment to its table-generator pages, as paths relative to the report;
    `notes` (a list) gets one line per thing analysed or skipped, for the terminal."""
    notes = [] if notes is None else notes
    by_experiment, conditions, sweeps, sources, measured = {}, {}, [], [], {}
    found_disturbed = {}  # id(sweep) -> its Disturbed (analysis.sweep.disturbed)
    spent_aside = {}  # experiment -> RunTables of invocations set aside: they cost time all the same
    for path in paths:
        loaded = load(path, all_columns() | generic_report.wanted_columns() | {"host"})
        t, c, sweep = loaded.tables, loaded.conditions, loaded.sweep
        if loaded.disturbed:
            found_disturbed[id(sweep)] = loaded.disturbed
            spent_aside.setdefault(sweep.experiment, []).extend(loaded.set_aside)
        measured[Path(path).name] = machines.of_tables(t)
        conditions.update(c)
        sources += t
        if sweep:
            sweeps.append((Path(path), sweep))
        for table in t:
            experiment = experiment_of(table, sweep)
            by_experiment.setdefault(experiment, []).append(table if experiment is None else _only(table, all_columns()))
    if not sources:
        raise PipelineError(f"no result files found in {', '.join(map(str, paths))}")
    aside = {t.path.name: "disturbed from outside" for tables in spent_aside.values() for t in tables}
    samples = run_rows.columns([(e, t) for e, tables in by_experiment.items() for t in tables]
                               + [(e, t) for e, tables in spent_aside.items() for t in tables], conditions, aside)
    unknown = by_experiment.pop(None, [])
    if len(measured) == 2 and machines.warning(*measured.values()):  # two sides: say so before anything
        notes.append(machines.warning(*measured.values()))

    env = sweeps[0][1].environment if sweeps else (environment.snapshot() if machine_facts.made_here(sources) else {})
    report = Report(
        title="timekit report",
        environment={**{p["name"]: f"{p['value']} ({p['verdict']}: {p['why']})" for p in env.get("probes", [])},
                     # result files no sweep recorded: their <systeminfo> (sweeps' probes say it already)
                     **(machines.environment(measured) if len(sweeps) < len(paths) else {})},
    )
    for name, experiment in EXPERIMENTS.items():
        if name not in by_experiment:
            continue
        own_sweeps = [(d, s) for d, s in sweeps if s.experiment == name]
        context = Context(tables=by_experiment[name], conditions=conditions, sweeps=own_sweeps, environment=env,
                          machine=_facts(own_sweeps, by_experiment[name], sweeps))
        with run_looks.applied(own_sweeps[0][1] if own_sweeps else None):  # a sequential sweep's levels
            result = experiment.section(context)
        section = result.section
        if own_sweeps and own_sweeps[0][1].sequential:  # decisions made at earlier looks stand
            sweep = own_sweeps[0][1]
            section.findings = run_looks.settled(section.findings, sweep.sequential)
            section.paragraphs[:0] = run_summary.paragraphs(sweep.sequential, section.findings, sweep.reruns)
            section.tables.insert(0, run_summary.looks_table(sweep.sequential, section.findings))
        for _, sweep in own_sweeps:
            judge_disturbed(section, found_disturbed.get(id(sweep)), notes, name)
        skipped = {r: why for _, s in own_sweeps for r, why in s.skipped.items()}
        section.runs, section.runs_missing = outcome.runs_line(by_experiment[name], skipped)
        price_findings(section.findings, name, by_experiment[name] + spent_aside.get(name, []), conditions, own_sweeps)
        if any(not s.container for _, s in own_sweeps):
            section.warnings.append("Some runs were made with --no-container: less isolation than BenchExec's default.")
        redone = sum(step.redone for _, s in own_sweeps for step in s.steps)
        if redone:  # analysis.sweep.steps_loop: a kill or a crash cut them short, a resume ran them again
            section.warnings.append(f"{redone} invocation(s) ran again after being cut short (a kill or a crash); "
                                    "what they had written is under incomplete/ and not counted.")
        pages = (table_pages or {}).get(name, [])
        if pages:
            section.tables.append(Table(
                title="BenchExec's own view: table-generator pages",
                columns=["page (relative to this report)"], rows=[[str(page)] for page in pages],
                caption=f"Made with table-configs/{name}.xml."))
        report.sections.append(section)
        notes.append(f"{name}: {section.runs} ({len(by_experiment[name])} result file(s))")
        report.data[name] = result.data
    _check_contradictions(report.sections)
    if unknown:
        generic = generic_report.generic(unknown)
        report.sections += generic.sections
        notes += generic.notes
        if generic.data:
            report.data["no experiment"] = generic.data
        if generic.skipped_files:
            report.data["not analysed"] = generic.skipped_files
    report.samples = samples  # every run of every file, one row each (analysis.sweep.run_rows)
    report.data["sources"] = [str(t.path) for t in sources]
    report.data["sweeps"] = [{"directory": str(d), "experiment": s.experiment, "preset": s.preset, "reps": s.reps,
                              "loads": s.loads, "reruns": s.reruns, "skipped": s.skipped, "build": s.build,
                              **({"sequential": s.sequential} if s.sequential else {}),
                              **({"redone": n} if (n := sum(step.redone for step in s.steps)) else {}),
                              **({"disturbed": sorted(found.names), "set_aside": not found.too_many}
                                 if (found := found_disturbed.get(id(s))) else {})}
                             for d, s in sweeps]
    return report


def judge_disturbed(section, found, notes, experiment):
    """A sweep's invocations that met outside work: where they were set aside (analysis.sweep.load),
    the section counts them; where too many did, no finding of the section keeps a verdict, and
    what would decide it is a rerun on a quiet machine."""
    if not found:
        return
    if not found.too_many:
        section.warnings.append(found.set_aside_line())
        notes.append(f"{experiment}: {found.set_aside_line()}")
        return
    section.warnings.append(f"No verdict: {found.busy_line()}. Rerun on a quiet machine.")
    notes.append(f"{experiment}: no verdict, {found.busy_line()}")
    for k, finding in enumerate(section.findings):
        section.findings[k] = dataclasses.replace(
            finding, verdict="inconclusive", parts=(), why=found.busy(), summary="",
            decide={"quiet": found.busy()},
            evidence=f"Not judged: {found.busy_line()}. What the disturbed data say: {finding.evidence}")


def _check_contradictions(sections):
    """Verdicts that cannot both hold, over every part of every finding of every section: a
    warning in the section of the second, naming both."""
    section_of = {finding.claim: section for section in sections for finding in section.findings}
    judged = [(finding.claim, part) for section in sections for finding in section.findings for part in finding.parts]
    for _, claim_b, why in verdicts.contradictions(judged):
        section_of[claim_b].warnings.append(f"Contradictory verdicts: {why}.")


def price_findings(findings, experiment, tables, conditions, sweeps):
    """Each finding's cost: the section's invocations, runs and minutes (the step seconds that
    sweep.json recorded, BenchExec's start and end times), and for an inconclusive one what
    deciding it would cost here (analysis.core.cost). A claim decided at an earlier look of
    `--until-decided` cost what ran up to that look, not what later rounds added for others."""
    seconds = {name: step.seconds for name, step in conditions.items() if step.seconds}
    reruns = max((s.reruns for _, s in sweeps), default=0)
    spent = cost.of(tables, seconds, reruns)
    for finding in findings:
        look = max((run_looks.decided_at(finding, s.sequential) for _, s in sweeps), default=0)
        if look:
            upto = [t for t in tables if t.path.name in conditions and conditions[t.path.name].rerun <= look]
            whole = spent.text().removeprefix("cost: ")
            finding.cost = f"{cost.of(upto, seconds, look).text()} (up to look M = {look}; the sweep: {whole})"
            continue
        plan = cost.decision_plan(finding, spent, experiment) if finding.verdict == "inconclusive" else ""
        finding.cost = spent.text() + (f"; {plan}" if plan else "")


def _only(table, columns):
    """The table with just these columns (and status, category), as an experiment's section
    expects it; the generic section's extra columns are loaded for files of no experiment."""
    keep = set(columns) | {"status", "category"}
    return dataclasses.replace(
        table, columns={k: v for k, v in table.columns.items() if k in keep},
        units={k: v for k, v in table.units.items() if k in keep},
        text_columns={k: v for k, v in table.text_columns.items() if k in keep},
        nonfinite={k: v for k, v in table.nonfinite.items() if k in keep})


def _facts(sweeps, tables, others=()):
    """The measured machine as the (first) sweep recorded it, its kernel log's TSC lines from
    another of `others` (the report's sweeps) of the same boot where it recorded none; for bare
    result files, this host's only if they were made here (analysis.machine.facts.for_results)."""
    for _, sweep in sweeps:
        if sweep.machine:
            recorded = [(s.experiment, machine_facts.Facts.from_dict(s.machine)) for _, s in others
                        if s.machine and s is not sweep]
            return machine_facts.with_kernel_log(machine_facts.Facts.from_dict(sweep.machine), recorded)
    return machine_facts.for_results(tables)


def tables_and_report(paths, outdir, out=None):
    """table-generator pages for every sweep, then the report; returns the report's paths. What
    was analysed and what was skipped (and why) is printed to `out` (default stdout)."""
    jobs, experiments = [], []
    sweep_dirs = [path for path in map(Path, paths) if (path / MANIFEST).exists()]
    for path in sweep_dirs:
        sweep = Sweep.load(path)
        sweep_jobs = table_jobs(path, sweep, pages_folder(path, outdir, sweep_dirs))
        jobs += sweep_jobs
        experiments += [sweep.experiment] * len(sweep_jobs)
    pages = {}
    for experiment, job in zip(experiments, jobs):
        pages.setdefault(experiment, []).append(os.path.relpath(page_of(job), outdir))
    # table-generator's pages (subprocesses) are made while this process builds the report
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as background:
        made = background.submit(run_table_jobs, jobs)
        try:
            with warnings.catch_warnings():
                # scipy warns on degenerate samples (GNU time's identical 10 ms steps); the tests'
                # notes and NaN results already say so in the report
                warnings.simplefilter("ignore", RuntimeWarning)
                notes = []
                report = build_report(paths, pages, notes)
        except results.ResultFileError as e:
            raise PipelineError(str(e)) from None
        made.result()  # a failed page is an error, as before
    for line in notes:
        print(line, file=out or sys.stdout)
    return write_report(report, outdir)

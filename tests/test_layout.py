"""The package's architecture holds: no import cycles, one registry, and a report rebuilt from a
recorded sweep is the same report (content and numbers) and states the recorded machine."""

import ast
import gzip
import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import pipeline
from analysis.core.report import write_report
from analysis.experiments import EXPERIMENTS
from analysis.experiments.core_heterogeneity import ranking
from analysis.core.verdicts import ClaimSpec
from analysis.machine import facts

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-demo"


def _imports(path, package_root):
    """Modules of the `analysis` package a module imports (at any depth, lazily or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("analysis"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if _module_path(candidate, package_root) else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("analysis"))
    return {m for m in found if _module_path(m, package_root)}


def _module_path(module, package_root):
    base = package_root.parent / module.replace(".", "/")
    return base.with_suffix(".py") if base.with_suffix(".py").exists() else (
        base / "__init__.py" if (base / "__init__.py").exists() else None)


def import_graph():
    root = REPO / "analysis"
    graph = {}
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        graph[module] = _imports(path, root) - {module}
    # the registry imports every experiment folder by discovery (importlib), not by an import statement
    graph["analysis.experiments"] |= {m for m in graph if m.count(".") == 2 and m.startswith("analysis.experiments.")}
    return graph


def _cycle(graph):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def test_no_import_cycles_inside_analysis():
    graph = import_graph()
    assert len(graph) > 30
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_cycle_detection_finds_a_planted_cycle():
    graph = import_graph()
    graph["analysis.core.report"] = graph["analysis.core.report"] | {"analysis.pipeline"}
    assert _cycle(graph) is not None


# the engines (analysis.tools: compare, shell commands, the sequential looks, planning and calibration math)
# < timekit ab (analysis.ab) < what uses ab (analysis.products: bisect, plan's and calibrate's paired halves)
LAYERS = ["analysis.core", "analysis.machine", "analysis.sweep.model", "analysis.experiments", "analysis.sweep",
          "analysis.tools", "analysis.ab", "analysis.products", "analysis.pipeline", "analysis.cli"]


def _layer(module):
    """Index of the most specific layer the module belongs to (analysis/__init__: the bottom)."""
    matches = [(len(layer), i) for i, layer in enumerate(LAYERS) if module == layer or module.startswith(layer + ".")]
    return max(matches)[1] if matches else 0


def test_no_import_runs_up_a_layer():
    """core < machine < sweep model < experiments < runner/tools < pipeline < cli."""
    upward = [(m, i) for m, deps in import_graph().items() for i in deps
              if m.startswith("analysis.") and _layer(i) > _layer(m)]
    assert upward == []


def test_every_experiment_declares_itself_once_and_its_files_follow_from_its_name():
    assert list(EXPERIMENTS) == ["time-apis", "discipline", "core-heterogeneity", "os-microbench", "scheduling-noise",
                                 "memory-bandwidth"]
    for name, experiment in EXPERIMENTS.items():
        folder = REPO / "analysis" / "experiments" / name.replace("-", "_")
        assert folder.is_dir() and experiment.benchmark == REPO / "benchmark-defs" / f"{name}.xml"
        assert experiment.table == REPO / "table-configs" / f"{name}.xml" and experiment.summary


def _normalised(report):
    """The report without what differs between runs: times of writing, the checkout's path, and
    float digits beyond the 12th (numpy 1.x and 2.x sum in another order: the last bit differs)."""
    def walk(x):
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items() if k not in ("generated", "created", "created_epoch")}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if isinstance(x, float):
            return float(f"{x:.12g}")
        return x.replace(str(REPO) + "/", "") if isinstance(x, str) else x
    return walk(report)


def _report_json(tmp_path):
    paths = sorted(p for p in RECORDED.iterdir() if p.is_dir())
    written = write_report(pipeline.build_report([p.relative_to(REPO) for p in paths]), tmp_path)
    return json.loads(written["json"].read_text())


def test_the_command_line_starts_without_scipy_or_matplotlib():
    """Parsing arguments, the registry and the light commands (lint, env, fleet submit|status)
    need neither: imported at start-up they cost about 1.5 s per `timekit` process, which is most
    of the fleet's overhead on a short sweep and of the CLI tests' time."""
    probe = ("import sys; from analysis import cli; cli.build_parser().parse_args(['lint', 'x.xml']); "
             "from analysis.tools.fleet import status, submit; "
             "print(' '.join(sorted(m for m in ('scipy', 'matplotlib', 'analysis.pipeline') if m in sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []
    specs = [s for e in EXPERIMENTS.values() for s in e.claim_specs()]  # what calibrate --claims imports when asked
    assert len(specs) >= 20 and all(isinstance(s, ClaimSpec) for s in specs)


def test_report_of_the_recorded_demo_is_unchanged_and_states_the_recorded_machine(tmp_path, monkeypatch):
    """report.before.json.gz is the report of the same result files before the change at hand.
    A change meant to alter the report (a new verdict policy, say) rewrites it with
    `python -m tests.test_layout --regenerate` and says in its commit which findings changed.
    It is rebuilt here on a faked other host (another name and boot, a machine without caches,
    tick or TSC log): a report states the measured machine's facts, so nothing may change."""
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(platform, "node", lambda: "another-host")
    monkeypatch.setattr(ranking, "read_boot_time", lambda *a: 42)
    monkeypatch.setattr(facts, "record", lambda *a, **k: facts.Facts(hostname="another-host", config_hz=1000,
                                                                      config_hz_source="faked host"))
    before = _normalised(json.loads(gzip.decompress((RECORDED / "report.before.json.gz").read_bytes())))
    after = _normalised(_report_json(tmp_path))
    assert len(after["findings"]) == len(before["findings"]) == 42
    assert after == before
    recorded = facts.Facts.from_dict(json.loads((RECORDED / "scheduling-noise" / "sweep.json").read_text())["machine"])
    data = after["data"]
    assert data["scheduling-noise"]["config_hz"] == recorded.config_hz != 1000
    assert data["os-microbench"]["caches"] == {str(k): v for k, v in recorded.caches.items()} != {}
    assert "faked host" not in json.dumps(data)
    assert (data["core-heterogeneity"]["ranking"]["host"], data["core-heterogeneity"]["ranking"]["boot_time"]) == \
        (recorded.hostname, recorded.boot_time) != ("another-host", 42)


if __name__ == "__main__":
    import os
    import sys
    import tempfile

    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: python -m tests.test_layout --regenerate   (rewrites tests/data/recorded-demo/report.before.json.gz)")
    os.chdir(REPO)
    with tempfile.TemporaryDirectory() as scratch:
        report = _normalised(_report_json(Path(scratch)))
    (RECORDED / "report.before.json.gz").write_bytes(
        gzip.compress(json.dumps(report, indent=1, sort_keys=True).encode(), mtime=0))
    print(f"rewrote {RECORDED / 'report.before.json.gz'}: {len(report['findings'])} findings")

"""
Fleets of distinct machines made from the recorded demo sweeps (tests/data/recorded-demo), with
known differences between the nodes: each node's result files are the recorded ones with every
time scaled by the node's factor (throughputs divided by it) and a small per-run jitter, one
node's core made noisy, one node's environment check changed. What the fleet report must find is
known exactly.
"""

import bz2
import json
import re
import shutil
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from analysis.tools.fleet.manifest import Fleet

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-demo"

# columns holding a time (BenchExec's with an 's' unit, the tools' in s or ns): scaled by the factor
_TIME = re.compile(r"^(cputime|walltime|cputime-cpu\d+|self-seconds|self-cputime|self-clock|timer-(real|user|sys))$|-ns(-\d+)?$")
_THROUGHPUT = re.compile(r"-gbs(-\d+)?$")  # ... and throughputs divided by it
_MAIN = ("median", "p10", "p90", "min")  # os-microbench's main value, in the run's 'unit'


@dataclass
class Machine:
    """How one generated node differs from the recorded machine."""

    factor: float = 1.0  # every time x factor
    noisy_core: int = None  # runs on this CPU get occasional large delays
    probes: dict = field(default_factory=dict)  # environment probe name -> (value, verdict)
    jitter: float = 0.003  # sd of the per-run multiplicative jitter


def _multiplier(machine, node, benchmark, run, core):
    rng = np.random.default_rng(zlib.crc32(f"{node}|{benchmark}|{run}".encode()))
    m = machine.factor * (1 + rng.normal(0, machine.jitter))
    if machine.noisy_core is not None and core == machine.noisy_core and rng.random() < 0.35:
        m *= 1 + rng.uniform(0.6, 1.2)  # an interrupt storm, a throttled core: never faster, often much slower
    return m


def _scaled(text, m, divide=False):
    match = re.match(r"^(-?[0-9.eE+-]+)(s?)$", text or "")
    if not match:
        return text
    value = float(match.group(1))
    return f"{value / m if divide else value * m:.9g}{match.group(2)}"


def alter_result(source, target, machine, node, host):
    """Copy one bz2 BenchExec result file with the node's differences applied."""
    tree = etree.fromstring(bz2.decompress(source.read_bytes()), etree.XMLParser(remove_blank_text=False))
    benchmark = tree.get("benchmarkname")
    for info in tree.iter("systeminfo"):
        info.set("hostname", host)
    for run in tree.iter("run"):
        columns = {c.get("title"): c for c in run.iter("column")}
        start = columns.get("cpu-start")
        core = int(float(start.get("value"))) if start is not None else None
        m = _multiplier(machine, node, benchmark, run.get("name"), core)
        unit = columns["unit"].get("value") if "unit" in columns else None
        for title, column in columns.items():
            if _TIME.search(title) or (title in _MAIN and unit == "ns"):
                column.set("value", _scaled(column.get("value"), m))
            elif _THROUGHPUT.search(title) or (title in _MAIN and unit == "GB/s"):
                column.set("value", _scaled(column.get("value"), m, divide=True))
    doctype = ("<!DOCTYPE result\n  PUBLIC '+//IDN sosy-lab.org//DTD BenchExec result 3.12//EN'\n"
               "  'https://www.sosy-lab.org/benchexec/result-3.12.dtd'>")
    text = etree.tostring(tree, xml_declaration=True, encoding="utf-8", doctype=doctype)
    target.write_bytes(bz2.compress(text))


def make_node_sweep(experiment, target, node, machine):
    """The recorded sweep of `experiment` as measured on `node` (host host-<node>)."""
    source = RECORDED / experiment
    target.mkdir(parents=True)
    host = f"host-{node}"
    for path in source.iterdir():
        if path.name.endswith(".xml.bz2"):
            alter_result(path, target / path.name, machine, node, host)
        elif path.is_dir() and path.name not in ("tables", "report"):
            shutil.copytree(path, target / path.name)
    sweep = json.loads((source / "sweep.json").read_text())
    sweep["environment"]["hostname"] = sweep["machine"]["hostname"] = host
    for probe in sweep["environment"]["probes"]:
        if probe["name"] in machine.probes:
            probe["value"], probe["verdict"] = machine.probes[probe["name"]]
    (target / "sweep.json").write_text(json.dumps(sweep, indent=1))


def make_fleet(root, experiment, machines):
    """A fleet directory of `experiment` with one node sweep per {node: Machine}; returns it."""
    directory = Path(root) / experiment
    for node, machine in machines.items():
        make_node_sweep(experiment, directory / node, node, machine)
    Fleet(experiment=experiment, preset="quick", nodes=list(machines), created="2026-11-23T21:05:00+00:00",
          kit_commit="recorded", kit_path=str(REPO), python="python3", time_limit_minutes=30,
          time_estimate="generated from the recorded demo").save(directory)
    return directory


# the fleet the tests judge: four alike, one 8 % slower (its governor set to powersave), one with a noisy CPU 1
SLOW, NOISY = "n5", "n6"
MACHINES = {
    "n1": Machine(factor=1.000),
    "n2": Machine(factor=0.996),
    "n3": Machine(factor=1.003),
    "n4": Machine(factor=1.001),
    SLOW: Machine(factor=1.08, probes={"frequency governor": ("powersave", "noisy")}),
    NOISY: Machine(factor=0.998, noisy_core=1),
}

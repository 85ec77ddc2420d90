"""
Every claim of the node reports judged across the fleet: on how many nodes it holds, and which
nodes disagree with the fleet's majority verdict, next to how their recorded environment differs
from the rest (a claim that fails on one node only is a fact about that node, and its environment
check is the first place to look for why).
"""

from collections import Counter

from analysis.core.report import Table


def verdicts(nodes):
    """{(experiment, claim): {node: verdict}} over every finding of every node report."""
    found = {}
    for node in nodes:
        for experiment, entry in node.sweeps.items():
            for finding in entry.report.get("findings", []):
                if finding.get("section", experiment) == experiment:
                    found.setdefault((experiment, finding["claim"]), {})[node.name] = finding["verdict"]
    return found


def _differences_text(differences):
    if not differences:
        return "none recorded"
    return "; ".join(f"{probe}: {mine} (others: {theirs})" for probe, mine, theirs in differences)


def claims_tables(nodes, differences):
    """(Tables, data): per experiment one table, per claim 'holds on k of n nodes' with the verdict
    counts and where it is refuted, and the nodes that disagree with the majority, each with how
    its recorded environment differs from the others'."""
    rows, data = {}, []
    for (experiment, claim), by_node in verdicts(nodes).items():
        counts = Counter(by_node.values())
        majority, _ = counts.most_common(1)[0]
        holds = counts.get("confirmed", 0)
        dissent = {n: v for n, v in by_node.items() if v != majority}
        fails = sorted(n for n, v in by_node.items() if v == "refuted")
        where = ", ".join(fails) if 0 < len(fails) < len(by_node) else ("all" if fails else "none")
        summary = (f"holds on {holds} of {len(by_node)} node{'s' if len(by_node) != 1 else ''} "
                   f"({', '.join(f'{v} {c}' for v, c in counts.most_common())}); refuted on {where}")
        rows.setdefault(experiment, []).append([
            claim, summary,
            "; ".join(f"{n} ({v}; environment: {_differences_text(differences.get(n, []))})"
                      for n, v in sorted(dissent.items())) or "none",
        ])
        data.append({"experiment": experiment, "claim": claim, "verdicts": by_node, "holds_on": holds,
                     "nodes": len(by_node), "majority": majority, "differing_nodes": sorted(dissent),
                     "refuted_on": fails})
    tables = [Table(
        title=f"{experiment}: claims across the fleet",
        columns=["claim", "across the fleet", "nodes that differ from the majority"],
        rows=experiment_rows,
        caption="Each node's verdict is its own report's (same tests, alpha and n as there). 'Differ from the majority': "
                "nodes whose verdict is not the most common one, with how their recorded environment check differs "
                "from the other nodes' (load average left out: it describes the moment, not the machine).")
        for experiment, experiment_rows in rows.items()]
    return tables, data


def environment_table(nodes, differences):
    """One row per node: host, CPU, kernel, and where its environment check differs from the rest."""
    rows = []
    for node in nodes:
        probes = node.probes
        rows.append([node.name, node.host, probes.get("CPU model", "?"), probes.get("online CPUs", "?"),
                     probes.get("kernel", "?"), ", ".join(sorted(node.sweeps)),
                     _differences_text(differences.get(node.name, []))])
    return Table(title="Nodes and their recorded environment",
                 columns=["node", "host", "CPU model", "online CPUs", "kernel", "experiments", "differs from the rest in"],
                 rows=rows,
                 caption="From the environment check each sweep recorded on its node (sweep.json), not from this host.")

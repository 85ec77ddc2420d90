"""
Every claim of the node reports judged across the fleet: on how many nodes it holds, and which
nodes disagree with the fleet's majority verdict, next to how their recorded environment differs
from the rest (a claim that fails on one node only is a fact about that node, and its environment
check is the first place to look for why).
"""

from collections import Counter

from analysis.core.report import Table
from analysis.tools.fleet.manifest import FleetError


def claim_key(finding):
    """What lines a finding up with the same claim on other machines: its stable `id` (no machine's
    number in it). Findings written before findings had ids fall back to the claim's text."""
    return finding.get("id") or finding["claim"]


def verdicts(nodes):
    """{(experiment, claim key): {node: (verdict, claim text)}} over every finding of every node
    report; a node with two findings of one key is a report that cannot be lined up: an error."""
    found = {}
    for node in nodes:
        for experiment, entry in node.sweeps.items():
            for finding in entry.report.get("findings", []):
                if finding.get("section", experiment) != experiment:
                    continue
                by_node = found.setdefault((experiment, claim_key(finding)), {})
                if node.name in by_node:
                    raise FleetError(f"{node.name}: two {experiment} findings are both '{claim_key(finding)}' "
                                     f"in {entry.report_html.parent / 'report.json'}; claims cannot be lined up")
                by_node[node.name] = (finding["verdict"], finding["claim"])
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
    for (experiment, key), found in verdicts(nodes).items():
        by_node = {n: verdict for n, (verdict, _) in found.items()}
        texts = {n: text for n, (_, text) in found.items()}
        claim = next(iter(texts.values()))  # the first node's words; machines' numbers may differ
        counts = Counter(by_node.values())
        majority, _ = counts.most_common(1)[0]
        holds = counts.get("confirmed", 0)
        dissent = {n: v for n, v in by_node.items() if v != majority}
        fails = sorted(n for n, v in by_node.items() if v == "refuted")
        where = ", ".join(fails) if 0 < len(fails) < len(by_node) else ("all" if fails else "none")
        summary = (f"holds on {holds} of {len(by_node)} node{'s' if len(by_node) != 1 else ''} "
                   f"({', '.join(f'{v} {c}' for v, c in counts.most_common())}); refuted on {where}")
        rows.setdefault(experiment, []).append([
            key, claim if len(set(texts.values())) == 1 else f"{claim} (in {next(iter(texts))}'s words)", summary,
            "; ".join(f"{n} ({v}; environment: {_differences_text(differences.get(n, []))})"
                      for n, v in sorted(dissent.items())) or "none",
        ])
        data.append({"experiment": experiment, "id": key, "claim": claim, "claims": texts, "verdicts": by_node, "holds_on": holds,
                     "nodes": len(by_node), "majority": majority, "differing_nodes": sorted(dissent),
                     "refuted_on": fails})
    tables = [Table(
        title=f"{experiment}: claims across the fleet",
        columns=["claim id", "claim", "across the fleet", "nodes that differ from the majority"],
        rows=experiment_rows,
        caption="One row per claim id: a claim whose words name a machine's number (a cache size) is one row. "
                "Each node's verdict is its own report's (same tests, alpha and n as there). 'Differ from the majority': "
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

"""
The record `timekit ab` keeps of the shell commands it compares (DIR/commands.json, written by
analysis.ab.command_pairs), as far as a reader below ab needs it: which commands stand behind
each run definition of a pair, so that `timekit compare` names an ab folder's sides by them.
"""

import json
from pathlib import Path

MANIFEST = "commands.json"


def labels_of(base, new):
    """{run definition: 'base command → new command'} where BASE and NEW are the sides of one pair of
    an A/B run of shell commands (their folder, or the one above, holds its record); else {}."""
    base, new = Path(base).resolve(), Path(new).resolve()
    if base.parent != new.parent or not base.is_dir():
        return {}
    for folder in (base.parent, base.parent.parent):
        try:
            record = json.loads((folder / MANIFEST).read_text())
        except (OSError, ValueError):
            continue
        for pair in record.get("pairs", []):
            if (folder / pair["directory"]).resolve() == base.parent:
                return pair_commands(pair)
    return {}


def pair_commands(pair):
    """{run definition: 'base command → new command'}, in full (the JSON, a caller's AbRow)."""
    return {r["name"]: f"{r['base']} → {r['new']}" for r in pair["rundefinitions"]}

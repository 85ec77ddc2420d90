"""Where the kit's files live: everything is found relative to the checkout (BenchExec's container
cannot see /tmp, so results and builds stay inside it)."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PROGRAMS = REPO / "programs"
RESULTS = REPO / "results"

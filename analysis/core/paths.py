"""Where the kit's files live. Programs, definitions and the demo's results are found relative to
the checkout; what a user measures (`ab`, `bench`, `run`) goes to `results/` in the current
directory, where the user is, unless BenchExec's container could not see it there."""

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
PROGRAMS = REPO / "programs"
RESULTS = REPO / "results"
HIDDEN_IN_CONTAINER = ("/tmp", "/run")   # BenchExec's container shows neither (the checkout is overlaid)


def hidden_in_container(path):
    """The directory of HIDDEN_IN_CONTAINER that hides `path` inside the kit's container, or None.
    The checkout stays visible wherever it is (the runner overlays it), /tmp included."""
    path = Path(os.path.abspath(path))
    if path == REPO or REPO in path.parents:
        return None
    return next((d for d in HIDDEN_IN_CONTAINER if path == Path(d) or Path(d) in path.parents), None)


@dataclass(frozen=True)
class Results:
    """The results/ folder a command writes to, and why it is not the current directory's."""
    root: Path
    hidden: str = ""   # the hidden directory the current one lies under, when root fell back to the checkout's

    def note(self):
        return (f" (not under the current directory: BenchExec's container hides {self.hidden}, so the "
                f"checkout's results/ instead)" if self.hidden else "")


def user_results(cwd=None):
    """results/ in the current directory; the checkout's where the container would not see it."""
    cwd = Path(cwd or os.getcwd())
    hidden = hidden_in_container(cwd)
    return Results(RESULTS, hidden) if hidden else Results(cwd / "results")


DEFAULT_HELP = "results/{} in the current directory; the checkout's where that lies under /tmp or /run"

"""What every os-microbench claim shares: its finding's id, the seed report as its source, and the
verdict of one that cannot be judged here."""

from analysis.core.report import Claim

CLAIM_SEED = "seed report"
NOT_TESTABLE = "not testable here"


def _id(slug):
    return f"os-microbench/{slug}"


def _seed(statement):
    """A claim of the seed report."""
    return Claim(statement, label=CLAIM_SEED)

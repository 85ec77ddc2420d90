"""The one error the user sees as a single line (what, where, why) instead of a traceback."""


class UserError(Exception):
    """Bad input or a missing prerequisite; str(e) is one line for the user."""

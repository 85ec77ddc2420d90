"""
The line A/B prints after each finished invocation, `... (k/N invocations)`, built from the counts
(not read back from the text), with an ETA from the time per invocation so far where asked.
"""

import datetime
import sys
import time


class InvocationLines:
    """Progress lines of invocations on `stream`; any other text passes through (print(..., file=it))."""

    def __init__(self, stream=None, eta=False):
        self.stream = stream if stream is not None else sys.stderr
        self.eta, self.start, self.before = eta, time.monotonic(), None

    def invocation(self, text, done, total):
        """`text (done/total invocations)`, and its ETA: invocations done before this process
        started (--resume) do not count into the time per invocation."""
        text += f" ({done}/{total} invocations)"
        if self.eta:
            self.before = done - 1 if self.before is None else self.before
            per = (time.monotonic() - self.start) / max(1, done - self.before)
            text += f", ETA {datetime.timedelta(seconds=int(per * (total - done)))}"
        print(text, file=self.stream, flush=True)

    def write(self, text):
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


def lines(out):
    """`out` as InvocationLines (a plain stream gets lines without ETA)."""
    return out if isinstance(out, InvocationLines) else InvocationLines(out)

"""
Modules imported at their first use, and signals held off while something must run to its end.
scipy.stats takes about a second of one CPU to import: at the top of a module that `timekit ab`
imports, that second is spent before the first invocation starts; imported at first use
(analysis.ab.paired imports it beside the first invocation), it is not.
"""

import contextlib
import importlib
import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_deferred():
    """What runs inside runs to its end: a stop signal that arrives meanwhile is handled as it would
    have been (raises Interrupted under the kit's handler) right after it. A handler, not a signal
    mask: a mask would not hold off a signal that another thread of the kit takes. Outside the main
    thread there is nothing to hold off (Python runs handlers in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            handler = previous[caught[0]]
            handler(caught[0], None) if callable(handler) else signal.raise_signal(caught[0])


class Deferred:
    """Stands for a module; the module is imported when an attribute is first asked for. The import
    runs with signals deferred: an exception raised inside a C extension's initialisation (scipy
    has several) leaves as "ImportError: initialization failed", not as the interrupt it was."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attribute):
        with signals_deferred():
            module = importlib.import_module(self._name)
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return getattr(module, attribute)


scipy_stats = Deferred("scipy.stats")

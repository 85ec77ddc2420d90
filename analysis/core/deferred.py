"""
Modules imported at their first use. scipy.stats takes about a second of one CPU to import: at
the top of a module that `timekit ab` imports, that second is spent before the first invocation
starts; imported at first use (analysis.ab.paired imports it beside the first invocation), it is not.
"""

import importlib


class Deferred:
    """Stands for a module; the module is imported when an attribute is first asked for."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attribute):
        module = importlib.import_module(self._name)
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return getattr(module, attribute)


scipy_stats = Deferred("scipy.stats")

"""
The experiments, one folder each, named as its benchmark definition (`_` for `-`). Each folder's
`__init__.py` declares its `EXPERIMENT` (analysis.sweep.model.Experiment); this registry finds
them, so adding an experiment edits nothing here.
"""

import importlib
import pkgutil


def _discover():
    found = []
    for module in pkgutil.iter_modules(__path__):
        if module.ispkg:
            experiment = importlib.import_module(f"{__name__}.{module.name}").EXPERIMENT
            if experiment.name.replace("-", "_") != module.name:
                raise ImportError(f"analysis/experiments/{module.name} declares '{experiment.name}': the folder must be named after it")
            found.append(experiment)
    return {e.name: e for e in sorted(found, key=lambda e: e.order)}


EXPERIMENTS = _discover()

"""xlayer: fast, deterministic packet-level simulation of transport protocols over
wireless and cellular links. Rust core, Python front.

    import xlayer
    res = xlayer.run("scenarios/dumbbell.toml", seed=1, run=0,
                     overrides={"simulation.duration": "10s"})
    res.flows            # one row per flow (pandas)
    res.series           # long time series: time_s, entity, metric, value
    df = xlayer.sweep("scenarios/dumbbell.toml",
                      grid={"link.bottleneck.rate": ["10Mbps", "20Mbps"]}, seeds=[1, 2, 3])
    xlayer.summarize(df)  # mean and 95% Student-t CI per grid point and flow
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _core
from .outdir import OutputError
from .scenario import (
    OverrideError,
    ScenarioError,
    ScenarioNotFoundError,
    apply_overrides,
    canonical_json,
    load,
    resolve,
    schema,
    validate,
)

if TYPE_CHECKING:
    from . import scenarios
    from .api import RNG, RunResult, check_determinism, run
    from .plan import Plan, PlanError, Sample, load_plan
    from .stats import summarize
    from .store import Store
    from .sweeps import sweep

__version__: str = _core.__version__

# Names whose modules import pandas (or numpy, scipy) load on first use, so that
# `import xlayer` and the command line stay fast (PEP 562).
_LAZY = {
    "RNG": "api", "RunResult": "api", "check_determinism": "api", "run": "api",
    "Plan": "plan", "PlanError": "plan", "Sample": "plan", "load_plan": "plan",
    "summarize": "stats", "Store": "store", "sweep": "sweeps", "scenarios": None,
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'xlayer' has no attribute {name!r}")
    module = importlib.import_module(f".{_LAZY[name] or name}", __name__)
    value = module if _LAZY[name] is None else getattr(module, name)
    globals()[name] = value
    return value

__all__ = [
    "RNG",
    "OutputError",
    "OverrideError",
    "Plan",
    "PlanError",
    "RunResult",
    "ScenarioError",
    "ScenarioNotFoundError",
    "Sample",
    "Store",
    "__version__",
    "apply_overrides",
    "canonical_json",
    "check_determinism",
    "load",
    "load_plan",
    "resolve",
    "run",
    "scenarios",
    "schema",
    "summarize",
    "sweep",
    "validate",
]

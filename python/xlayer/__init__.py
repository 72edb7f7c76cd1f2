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

from . import _core, scenarios
from .api import RNG, RunResult, check_determinism, run
from .outdir import OutputError
from .plan import Plan, PlanError, Sample, load_plan
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
from .stats import summarize
from .store import Store
from .sweep import sweep

__version__: str = _core.__version__

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

"""Replication statistics: means with Student-t confidence intervals (scipy's t quantiles),
over a sweep's DataFrame or a results store."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .store import Store

Source = Union[pd.DataFrame, str, "os.PathLike[str]", "Store"]

DEFAULT_METRICS = (
    "goodput_bps",
    "delay_mean_s",
    "delay_p95_s",
    "lost_packets",
    "retransmissions",
    "timeouts",
    "completion_time_s",
)


def mean_ci(values: Sequence[float] | np.ndarray, ci: float = 0.95) -> dict[str, float]:
    """n, mean, sample std and the two-sided Student-t interval of the mean (NaN-free input)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    mean = float(x.mean()) if n else math.nan
    std = float(x.std(ddof=1)) if n > 1 else math.nan
    from scipy import stats  # here: every sweep worker imports this module, few need SciPy

    hw = float(stats.t.ppf((1.0 + ci) / 2.0, n - 1)) * std / math.sqrt(n) if n > 1 else math.nan
    return {"n": n, "mean": mean, "std": std, "ci_low": mean - hw, "ci_high": mean + hw,
            "ci_half_width": hw}


def summarize(
    source: Source,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    ci: float = 0.95,
    *,
    plan: str | None = None,
    table: str = "flows",
) -> pd.DataFrame:
    """Mean and Student-t confidence interval of each metric over replications.

    `source` is a sweep's DataFrame or a results store (a path or `xlayer.Store`; then
    `plan` picks one plan's points, default all, and `table` the flows or links table;
    only the columns needed are read). Returns one row per (group, metric) with n, mean,
    std, ci_low, ci_high, ci_half_width. Defaults: `by` = the sweep's axes plus the flow
    name; `metrics` = the usual per-flow metrics present. Missing values (e.g. no
    completion time) are skipped.
    """
    df = source if isinstance(source, pd.DataFrame) else _from_store(source, by, metrics, plan, table)
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    by = list(by) if by is not None else _default_by(df)
    metrics = list(metrics) if metrics is not None else [m for m in DEFAULT_METRICS if m in df]
    missing = [c for c in [*by, *metrics] if c not in df.columns]
    if missing:
        raise KeyError(f"columns not in the table: {missing}; available: {list(df.columns)}")
    groups = df.groupby(by, sort=False, dropna=False) if by else [((), df)]
    rows: list[dict[str, Any]] = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            x = pd.to_numeric(g[m], errors="coerce").dropna().to_numpy(dtype=float)
            rows.append({**dict(zip(by, key)), "metric": m, **mean_ci(x, ci)})
    return pd.DataFrame(rows, columns=[*by, "metric", "n", "mean", "std", "ci_low", "ci_high",
                                       "ci_half_width"])


def _from_store(source: Source, by: Sequence[str] | None, metrics: Sequence[str] | None,
                plan: str | None, table: str) -> pd.DataFrame:
    from .store import Store

    st = source if isinstance(source, Store) else Store(source, create=False)
    # Read only the columns the summary needs (all of them when `by` is left to default).
    cols = None if by is None and metrics is None else [*(by or []), *(metrics or DEFAULT_METRICS), "name", "flow"]
    return st.frame(plan=plan, table=table, columns=cols)


def _default_by(df: pd.DataFrame) -> list[str]:
    params = list(df.attrs.get("xlayer", {}).get("params", []))
    flow = next((c for c in ("name", "flow") if c in df.columns), None)
    return [p for p in params if p in df.columns] + ([flow] if flow else [])

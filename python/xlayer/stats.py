"""Replication statistics: means with Student-t confidence intervals (no scipy needed)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

DEFAULT_METRICS = (
    "goodput_bps",
    "delay_mean_s",
    "delay_p95_s",
    "lost_packets",
    "retransmissions",
    "timeouts",
    "completion_time_s",
)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with `df` degrees of freedom."""
    tail = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t (inverse CDF), by bisection; accurate to ~1e-12."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_ppf needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_ci(values: Sequence[float] | np.ndarray, ci: float = 0.95) -> dict[str, float]:
    """n, mean, sample std and the two-sided Student-t interval of the mean (NaN-free input)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    mean = float(x.mean()) if n else math.nan
    std = float(x.std(ddof=1)) if n > 1 else math.nan
    hw = t_ppf((1.0 + ci) / 2.0, n - 1) * std / math.sqrt(n) if n > 1 else math.nan
    return {"n": n, "mean": mean, "std": std, "ci_low": mean - hw, "ci_high": mean + hw,
            "ci_half_width": hw}


def summarize(
    df: pd.DataFrame,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Mean and Student-t confidence interval of each metric over replications.

    Returns one row per (group, metric) with n, mean, std, ci_low, ci_high, ci_half_width.
    Defaults: `by` = the sweep's grid columns plus the flow name; `metrics` = the usual
    per-flow metrics present in `df`. Missing values (e.g. no completion time) are skipped.
    """
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


def _default_by(df: pd.DataFrame) -> list[str]:
    params = list(df.attrs.get("xlayer", {}).get("params", []))
    flow = next((c for c in ("name", "flow") if c in df.columns), None)
    return [p for p in params if p in df.columns] + ([flow] if flow else [])

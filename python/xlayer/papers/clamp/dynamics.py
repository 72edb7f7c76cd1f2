"""Time-domain experiments: Fig. 2 (deterministic link, flows come and go), Fig. 6
(windows of the 30 ms flow) and Section V-H (a long flow among short ones)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import experiments as ex
from . import scenarios as sc

FIG2_A, FIG2_TAU, FIG2_RATE_BPS = 5500.0, 500.0, 10e6
FIG2_PHASES = [(0.0, 50.0, ["flow1"]), (50.0, 100.0, ["flow1", "flow2"]), (100.0, 150.0, ["flow1", "flow2", "flow3"]),
               (150.0, 200.0, ["flow1", "flow3"]), (200.0, 250.0, ["flow1"])]
FIG2_SKIP_S = 20.0  # per phase: the fluid model settles within 1% in at most 16 s


def _cov(v: pd.Series) -> float:
    return float(v.std(ddof=0) / v.mean())


def _window(s: pd.Series, t0: float, t1: float) -> pd.Series:
    return s[(s.index >= t0) & (s.index < t1)]


def fig2() -> dict[str, Any]:
    """Both Fig. 2 experiments with their series, and the per-phase numbers of C2."""
    doc = sc.load("clamp_fig2.toml")
    clamp, reno = ex.run_series(doc), ex.run_series(sc.as_newreno(doc))
    cuts = sorted({t for t0, t1, _ in FIG2_PHASES for t in (t0 + FIG2_SKIP_S, t1)})
    rates = ex.window_rates(doc, cuts)
    queue = ex.metric_series(clamp, "ap", "queue_bytes")
    phases = []
    for t0, t1, active in FIG2_PHASES:
        k = len(active)
        a = t0 + FIG2_SKIP_S
        r = rates[(rates.t0 == a) & (rates.t1 == t1)].set_index("flow")["rate_bps"]
        phases.append({
            "t0": t0, "t1": t1, "k": k,
            "queue": float(_window(queue, a, t1).mean()),
            "q_star": k * FIG2_TAU + FIG2_A,
            "fair_bps": FIG2_RATE_BPS / k,
            "rates_bps": {f: float(r[f]) for f in active},
            "cov_clamp": {f: _cov(_window(ex.metric_series(clamp, f, "rwnd_bytes"), a, t1)) for f in active},
            "cov_newreno": {f: _cov(_window(ex.metric_series(reno, f, "cwnd_bytes"), a, t1)) for f in active},
        })
    return {"clamp": clamp, "newreno": reno, "phases": phases,
            "lost": {"clamp": int(clamp.flows.lost_packets.sum()), "newreno": int(reno.flows.lost_packets.sum())}}


def fig6(fading: str, clamp_sweep: pd.DataFrame, reno_sweep: pd.DataFrame, targets: tuple[float, ...],
         duration_s: float, model: dict[str, Any] | None = None, warm_s: float = 20.0) -> dict[float, dict[str, Any]]:
    """For each target mean queueing delay: CLAMP's a and NewReno's buffer read off the
    sweeps (Fig. 7 backwards), the 30 ms flow's windows over time, and the downlink's
    state in the CLAMP run after `warm_s` (mean margin, mean saturated capacity).
    `model`: a reading's settings of the downlink (readings.py)."""
    out = {}
    for t in targets:
        a = ex.value_for_delay(clamp_sweep, t)
        b = ex.value_for_delay(reno_sweep, t)
        c = ex.run_series(sc.with_model(sc.fig3(fading, "clamp", a, duration_s), model or {}))
        radio = {k: v for k, v in (model or {}).items() if k != "clamp"}  # NewReno runs without the AP agent
        r = ex.run_series(sc.with_model(sc.fig3(fading, "newreno", b, duration_s), radio))
        out[t] = {
            "a": a, "buffer": b,
            "clamp_awnd": ex.metric_series(c, "f30", "rwnd_bytes"),
            "clamp_cwnd": ex.metric_series(c, "f30", "cwnd_bytes"),
            "newreno_cwnd": ex.metric_series(r, "f30", "cwnd_bytes"),
            "margin_db": _mean_after(ex.metric_series(c, "ap", "margin_db"), warm_s),
            "capacity_bps": _mean_after(ex.metric_series(c, "ap", "capacity_bps"), warm_s),
        }
        out[t]["awnd_below_cwnd"] = float(np.mean(out[t]["clamp_awnd"] <= out[t]["clamp_cwnd"]))
    return out


def _mean_after(s: pd.Series, t0: float) -> float:
    return float(s[s.index > t0].mean())


def short_flows(duration_s: float, a_values: tuple[float, ...], buffer_bytes: float = 60_000) -> dict[str, Any]:
    """§V-H: NewReno with a 60 kB buffer, then CLAMP with the a (from `a_values`) whose
    mean queue is closest to NewReno's ("parameters were chosen to get the same average
    queue size"). The long flow's rate is read from the AP's delivered rate (the short
    flows add at most 0.32 Mb/s to a 100 ms sample)."""
    doc = sc.with_duration(sc.load("clamp_short_flows.toml"), duration_s)
    reno = ex.run_series(sc.as_newreno(doc, buffer_bytes))
    target = float(ex.metric_series(reno, "ap", "queue_bytes").mean())
    runs: dict[float, Any] = {}

    def mean_queue(a: float) -> float:
        runs[a] = ex.run_series(sc.with_clamp_a(doc, a))
        return float(ex.metric_series(runs[a], "ap", "queue_bytes").mean())

    a, q = ex.matched_value(a_values, mean_queue, target)
    clamp = runs[a]

    def long_rate(res: Any) -> pd.Series:
        # The AP's delivered rate per 100 ms sample: the long flow plus the short ones,
        # which add at most one 4000-byte transfer (0.32 Mb/s) to a sample.
        return ex.metric_series(res, "ap", "throughput_bps")

    out = {"a": a, "buffer": buffer_bytes, "queue_mean": {"newreno": target, "clamp": q}}
    for name, res in (("newreno", reno), ("clamp", clamp)):
        rate = long_rate(res)
        queue = ex.metric_series(res, "ap", "queue_bytes")
        smooth = rate.rolling(10, min_periods=1).mean()  # 1 s
        out[name] = {"rate": smooth, "queue": queue,
                     "rate_cov": _cov(smooth[smooth.index > 10]),
                     "queue_cov": _cov(queue[queue.index > 10]),
                     "long_goodput_bps": float(res.flows.set_index("name").at["long", "goodput_bps"]),
                     "long_timeouts": int(res.flows.set_index("name").at["long", "timeouts"]),
                     # where the earlier NewReno timeout cycle sat (docs/reproductions/clamp.md)
                     "queue_empty_46_92": float((_window(queue, 46.0, 92.0) == 0).mean()),
                     "short_completion_s": float(res.flows[res.flows.name.str.startswith("short")].completion_time_s.mean())}
    return out

"""Rows the report states without a threshold: where the paper describes a figure in
words, our number beside its statement, and the achieved radio loss beside Table I."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...stats import mean_ci
from . import experiments as ex

TABLE_I_LOSS = 1e-3  # Table I: "Pk loss rate" of X-R_i
C4_DELAYS_S = (0.020, 0.030, 0.040, 0.050, 0.075, 0.100, 0.150, 0.200, 0.300)
KNEE_SHARE = 0.9  # the knee: the delay where the mean total first reaches 90% of its largest value


def radio_loss(sweeps: dict[tuple[str, str], pd.DataFrame]) -> list[dict[str, Any]]:
    """Per scenario: achieved radio loss and failed-slot fraction over every run (mean
    and 95% CI over the runs of all swept values)."""
    rows = []
    for (fading, proto), df in sweeps.items():
        loss = mean_ci(df["radio_loss"].dropna().to_numpy())
        slots = mean_ci(df["slot_failure"].dropna().to_numpy())
        rows.append({"channel": fading, "protocol": proto, "loss": loss, "slots": slots, "runs": len(df)})
    return rows


def knee_s(df: pd.DataFrame) -> float:
    c = ex.curve(df, "total")
    hit = c[c["mean"] >= KNEE_SHARE * c["mean"].max()]
    return float(hit["qdelay"].iloc[0]) if len(hit) else math.nan


def c4_range(sweeps: dict[tuple[str, str], pd.DataFrame]) -> list[dict[str, Any]]:
    rows = []
    for fading in ("slow", "fast", "low_rate"):
        for t in C4_DELAYS_S:
            c = ex.summary_at(sweeps[(fading, "clamp")], "total", t)
            r = ex.summary_at(sweeps[(fading, "newreno")], "total", t)
            rows.append({"channel": fading, "delay_ms": 1e3 * t, "ratio": c["mean"] / r["mean"] - 1,
                         "n": min(c["n"], r["n"])})
    return rows


def timeouts_band(df: pd.DataFrame, flow: str, lo: float = 0.025, hi: float = 0.100) -> dict[str, float]:
    """Mean timeouts of `flow` per run over the sweep points whose delay lies in [lo, hi]."""
    g = df[(df["qdelay"] >= lo) & (df["qdelay"] <= hi)]
    return mean_ci(g[f"timeouts_{flow}"].to_numpy()) if len(g) else {"n": 0, "mean": math.nan, "ci_half_width": math.nan}


def fig4a_high_delay(df: pd.DataFrame) -> dict[str, float]:
    """CLAMP at 0.1 m/s: the 10 ms flow's rate at the largest swept delay against 100 ms."""
    c = ex.curve(df, "thr_f10")
    at100 = ex.summary_at(df, "thr_f10", 0.100)["mean"]
    return {"max_delay_ms": 1e3 * float(c["qdelay"].iloc[-1]), "f10_top": float(c["mean"].iloc[-1]), "f10_100": at100}


def rows(sweeps: dict[tuple[str, str], pd.DataFrame], fig6: dict[float, dict[str, Any]], vh: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(what, the paper, ours) for the figures the paper describes in words."""
    out = []
    for t, r in fig6.items():
        aw, cw = r["clamp_awnd"].mean(), r["newreno_cwnd"].mean()
        out.append((f"Fig. 6, {1e3 * t:.0f} ms: mean AWND against NewReno's mean CWND",
                    "AWND slightly greater (§V-G)", f"{aw / 1e3:.1f} kB vs {cw / 1e3:.1f} kB ({aw / cw - 1:+.0%})"))
        out.append((f"Fig. 6, {1e3 * t:.0f} ms: share of time AWND ≤ CWND in the CLAMP run",
                    "almost always at 50 ms, less at 180 ms (§V-G)", f"{100 * r['awnd_below_cwnd']:.1f}%"))
    for fading in ("fast", "slow"):
        tb = timeouts_band(sweeps[(fading, "clamp")], "f10")
        out.append((f"Fig. 4({'c' if fading == 'fast' else 'a'}): CLAMP 10 ms flow's timeouts per run, 25-100 ms",
                    "a dip of the 10 ms flow at 25-100 ms from timeouts (Fig. 4(c), §V-E)" if fading == "fast"
                    else "(not stated for 0.1 m/s)", f"{tb['mean']:.1f} (over {tb['n']} runs)"))
    h = fig4a_high_delay(sweeps[("slow", "clamp")])
    out.append(("Fig. 4(a) past 250 ms: CLAMP 10 ms flow's rate at the largest delay against 100 ms",
                "more rate above 250 ms: CLAMP loses control (§V-E)",
                f"largest swept delay {h['max_delay_ms']:.0f} ms: {h['f10_top'] / 1e6:.2f} vs {h['f10_100'] / 1e6:.2f} Mb/s"))
    for name in ("newreno", "clamp"):
        r = vh[name]
        out.append((f"§V-H, {name}: long flow's timeouts; share of 46-92 s with the queue empty; CoV of the 1 s rate",
                    "rate fluctuates less under CLAMP; queue fluctuations similar",
                    f"{r['long_timeouts']} timeouts; {100 * r['queue_empty_46_92']:.0f}%; CoV {r['rate_cov']:.3f}"))
    knees = {k: knee_s(sweeps[(k, "clamp")]) for k in ("fast", "low_rate")}
    out.append((f"§V-J: CLAMP knee ({KNEE_SHARE:.0%} of the largest mean total), 10 m/s at 10 Mb/s against 1.44 Mb/s",
                "knee at lower delay at the low rate (§V-J)",
                f"10 Mb/s {1e3 * knees['fast']:.0f} ms, 1.44 Mb/s {1e3 * knees['low_rate']:.0f} ms"))
    for row in c4_range(sweeps):
        if row["n"]:
            out.append((f"C4 over the delay range: CLAMP/NewReno − 1, {row['channel']}, {row['delay_ms']:.0f} ms",
                        "not much difference (§V-F)", f"{row['ratio']:+.1%} ({row['n']} seeds)"))
    return out


__all__ = ["TABLE_I_LOSS", "radio_loss", "rows", "c4_range", "knee_s", "timeouts_band"]

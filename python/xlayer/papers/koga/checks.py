"""Checks C1-C7 of issue 3 against the reproduction's runs. Each returns a Check with
the numbers it decided on; thresholds are the issue's, never adjusted to the results."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...stats import mean_ci
from . import paper

C6_LOSS_BUDGET_PCT = 1.0  # C6 rule: the largest awnd whose mean UDP total loss <= 1%


@dataclass
class Check:
    name: str
    claim: str
    passed: bool
    detail: str
    values: dict[Any, Any] = field(default_factory=dict)
    threshold: str = ""  # the pass rule and where it comes from


def summary(df: pd.DataFrame, exp: str, metric: str) -> pd.DataFrame:
    """Mean and 95% Student-t CI over seeds, per (rate, x)."""
    d = df[df.experiment == exp]
    rows = []
    for (rate, x), g in d.groupby(["rate_kbps", "x"], sort=True, dropna=False):
        rows.append({"rate_kbps": rate, "x": x, **mean_ci(g[metric].to_numpy(dtype=float))})
    return pd.DataFrame(rows).set_index(["rate_kbps", "x"])


def table_mean(df: pd.DataFrame, exp: str, metric: str) -> dict[int, float]:
    s = summary(df, exp, metric)
    return {int(r): float(s.loc[(r, s.loc[r].index[0]), "mean"]) for r in paper.RATES_KBPS}


def c1() -> Check:
    got = {r: paper.ideal_awnd(r * 1e3) for r in paper.RATES_KBPS}
    ok = all(abs(got[r] - paper.IDEAL_AWND[r]) <= 0.005 for r in got)
    detail = ", ".join(f"{r} kb/s: {got[r]:.3f} (paper {paper.IDEAL_AWND[r]:.2f})" for r in got)
    return Check("C1", "ideal awnd 5.52 / 5.20 / 4.56 packets with two retransmissions", ok, detail, got,
                 "abs(eq. (3) − paper) ≤ 0.005 packets (the paper's rounding to 2 decimals); values: §5.3")


def c2(df: pd.DataFrame) -> Check:
    total, app, tr = (table_mean(df, "table2", m) for m in ("total", "app", "transport"))
    ok = all(total[r] >= 50.0 and app[r] > tr[r] and app[r] >= 0.5 * total[r] for r in total)
    detail = "; ".join(f"{r} kb/s: total {total[r]:.1f}% (app {app[r]:.1f}%, transport {tr[r]:.2f}%)"
                       for r in total) + "; paper 88-94%, mostly application"
    return Check("C2", "no QoS, TCP-optimal (5 retx, WT 500 ms): UDP loss >= 50%, mostly application",
                 ok, detail, total, "total ≥ 50 % and application ≥ half of it (issue 3; paper Table 2: 88–94 %)")


def c3(df: pd.DataFrame) -> Check:
    total = table_mean(df, "table4", "total")
    ok = all(v <= 1.0 for v in total.values())
    detail = "; ".join(f"{r} kb/s: {v:.2f}%" for r, v in total.items()) + " (limit 1%)"
    return Check("C3", "priority scheduling (2 retx, WT 150 ms): UDP total loss <= 1%", ok, detail, total,
                 "total ≤ 1 % at every rate (issue 3; paper Table 4: ≤ 0.23 %)")


def c4(df: pd.DataFrame) -> Check:
    total = table_mean(df, "table5", "total")
    tcp5, tcp4 = table_mean(df, "table5", "tcp_kbps"), table_mean(df, "table4", "tcp_kbps")
    ratio = {r: tcp5[r] / tcp4[r] for r in tcp5}
    ok = all(total[r] <= 2.0 and ratio[r] >= 0.9 for r in total)
    detail = "; ".join(f"{r} kb/s: loss {total[r]:.2f}%, TCP {tcp5[r]:.0f} = {100 * ratio[r]:.0f}% of priority's"
                       for r in total)
    return Check("C4", "receiver-based (2 retx, WT 90 ms, awnd 6/5/4): loss <= 2%, TCP >= 90% of priority",
                 ok, detail, {"total": total, "tcp_ratio": ratio},
                 "total ≤ 2 % and TCP ≥ 0.9 × Table 4's (issue 3; paper Table 5: ≤ 0.56 %, 97 %)")


def c5(df: pd.DataFrame) -> Check:
    parts, ok = [], True
    for t in paper.TABLES:
        tcp = table_mean(df, t, "tcp_kbps")
        falls = tcp[32] > tcp[64] > tcp[128]
        dev = {r: tcp[r] / paper.TABLES[t][r][3] - 1.0 for r in tcp}
        within = all(abs(d) <= 0.2 for d in dev.values())
        ok &= falls and within
        parts.append(f"{t}: " + "/".join(f"{tcp[r]:.0f}" for r in paper.RATES_KBPS)
                     + f" kb/s ({'falls' if falls else 'does NOT fall'}; vs paper "
                     + "/".join(f"{100 * dev[r]:+.0f}%" for r in paper.RATES_KBPS) + ")")
    return Check("C5", "TCP throughput falls with the UDP rate and is within +-20% of the paper", ok,
                 "; ".join(parts), threshold="strictly falling and abs(ours/paper − 1) ≤ 0.20 (issue 3; Tables 2–5)")


def best_awnd(df: pd.DataFrame, budget_pct: float = C6_LOSS_BUDGET_PCT, exp: str = "fig8") -> dict[int, float]:
    """C6 rule: throughput grows with awnd, so the best trade-off is the largest awnd
    whose mean UDP total loss stays within the budget (NaN if none does)."""
    s = summary(df, exp, "total")
    best = {}
    for r in paper.RATES_KBPS:
        ok = [int(x) for x, row in s.loc[r].iterrows() if row["mean"] <= budget_pct]
        best[r] = float(max(ok)) if ok else math.nan
    return best


def c6(df: pd.DataFrame) -> Check:
    best = best_awnd(df)
    ok = all(not math.isnan(best[r]) and abs(best[r] - paper.ideal_awnd(r * 1e3)) <= 1.0 for r in best)
    detail = "; ".join(f"{r} kb/s: best awnd {best[r]:.0f} vs formula {paper.ideal_awnd(r * 1e3):.2f}"
                       f" (paper's sweep: {paper.PAPER_OPTIMA['fig8'][r]})" for r in best)
    return Check("C6", f"Fig. 8 best awnd (largest with UDP loss <= {C6_LOSS_BUDGET_PCT:g}%) within +-1 of eq. (3)",
                 ok, detail, best, "abs(best awnd − eq. (3)) ≤ 1 packet, budget 1 % (issue 3; §5.3 gives no rule)")


def interior_minimum(df: pd.DataFrame, exp: str, rate: int) -> dict[str, Any]:
    """Argmin over WT of the mean UDP total loss, and paired (same seed) differences to
    both ends of the sweep with 95% CIs."""
    d = df[(df.experiment == exp) & (df.rate_kbps == rate)].pivot(index="seed", columns="x", values="total")
    means = d.mean()
    wt = int(means.idxmin())
    lo, hi = int(d.columns.min()), int(d.columns.max())
    diffs = {end: mean_ci((d[end] - d[wt]).to_numpy(dtype=float)) for end in (lo, hi)}
    sig = wt not in (lo, hi) and all(c["ci_low"] > 0 for c in diffs.values())
    return {"argmin_ms": wt, "means": means.to_dict(), "diffs": diffs, "significant": bool(sig),
            "interior": wt not in (lo, hi)}


def c7(df: pd.DataFrame) -> Check:
    m128, m64 = interior_minimum(df, "fig2", 128), interior_minimum(df, "fig2", 64)

    def say(r: int, m: dict[str, Any]) -> str:
        d = m["diffs"]
        ends = ", ".join(f"loss({e} ms) - loss(min) = {c['mean']:+.2f} [{c['ci_low']:+.2f}, {c['ci_high']:+.2f}] pp"
                         for e, c in d.items())
        return f"{r} kb/s: min at WT {m['argmin_ms']} ms ({m['means'][m['argmin_ms']]:.2f}%); {ends}"

    return Check("C7", "no QoS, Fig. 2 settings (buffer 10, UDP max retx 5): interior, significant "
                 "minimum of UDP loss over WT at 128 kb/s", m128["significant"],
                 say(128, m128) + ". Reported: " + say(64, m64), {"128": m128, "64": m64},
                 "argmin not at an end of the WT grid and both paired 95 % CIs to the ends > 0 (issue 3; §5.1)")


def all_checks(df: pd.DataFrame) -> list[Check]:
    return [c1(), c2(df), c3(df), c4(df), c5(df), c6(df), c7(df)]


def reading_evidence(df: pd.DataFrame) -> pd.DataFrame:
    """Application-layer loss under the "or" and "and" readings against the paper, per
    table and rate: the evidence for the loss definition."""
    rows = []
    for t, published in paper.TABLES.items():
        or_, and_ = table_mean(df, t, "app"), table_mean(df, t, "app_and")
        for r in paper.RATES_KBPS:
            rows.append({"table": t, "rate_kbps": r, "paper_app": published[r][1], "ours_or": or_[r],
                         "ours_and": and_[r]})
    out = pd.DataFrame(rows)
    out["abs_err_or"] = (out.ours_or - out.paper_app).abs()
    out["abs_err_and"] = (out.ours_and - out.paper_app).abs()
    return out


def mean_abs(values: Any) -> float:
    return float(np.mean(np.asarray(list(values), dtype=float)))

"""Checks C1-C7 of the DBP issue against the reproduction's runs, plus the reported rows
without a threshold. Each Check carries the numbers it decided on; thresholds are the
issue's (sources beside each), never adjusted to the results."""

from __future__ import annotations


import numpy as np
import pandas as pd

from .._shared import Check, ci, fmt, rows
from . import paper


def c1(df: pd.DataFrame) -> Check:
    d, t = rows(df, "share", "dbp", flow="dbp").goodput_kbps, rows(df, "share", "tcp", flow="tcp").goodput_kbps
    ratio = d.mean() / t.mean()
    return Check("C1", "alone on the bearer, DBP's mean throughput >= 1.2x TCP NewReno's",
                 ">= 1.2 (issue; paper ~40 vs ~30 kb/s, §V-B)", bool(ratio >= 1.2),
                 f"DBP {fmt(ci(d))} kb/s, TCP {fmt(ci(t))} kb/s, ratio {ratio:.2f} "
                 f"(paper {paper.DBP_ALONE_KBPS:.0f} / {paper.TCP_ALONE_KBPS:.0f} = 1.33)",
                 {"dbp": d.mean(), "tcp": t.mean(), "ratio": ratio})


def c2(df: pd.DataFrame) -> Check:
    d = rows(df, "share", "dbp", flow="dbp")
    t = rows(df, "share", "tcp", flow="tcp")
    frac, tfrac = ci(d.srtt_bounded_frac), ci(t.srtt_bounded_frac)
    ok = bool(frac["mean"] >= 0.9)
    return Check("C2", "outside de-allocation episodes (and 30 s after them), after 30 s of start-up, DBP's "
                 "smoothed RTT stays below 1.2·R2 = 1.44 s", ">= 90% of the time (issue; paper: "
                 "'DBP contains the delays well within the bounds of R1 and R2', §V-B)", ok,
                 f"DBP {100 * frac['mean']:.1f}% (± {100 * frac['ci_half_width']:.1f}) of samples below 1.44 s; "
                 f"TCP {100 * tfrac['mean']:.1f}%; p95 srtt DBP {d.srtt_p95_s.mean():.2f} s, TCP "
                 f"{t.srtt_p95_s.mean():.2f} s; time excluded as episodes {100 * d.episode_time_frac.mean():.1f}%",
                 {"dbp": frac["mean"], "tcp": tfrac["mean"]})


def jain(x: list[float]) -> float:
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


def c3(df: pd.DataFrame) -> Check:
    d = rows(df, "share", "dbp2")
    per_seed = d.pivot(index="seed", columns="flow", values="goodput_kbps")
    j = [jain(list(r)) for r in per_seed.to_numpy()]
    agg = per_seed.sum(axis=1)
    alone = rows(df, "share", "dbp", flow="dbp").goodput_kbps.mean()
    rel = agg.mean() / alone
    ok = bool(min(j) >= 0.9 and abs(rel - 1.0) <= 0.15)
    return Check("C3", "two DBP flows: Jain's index >= 0.9 in every run; their aggregate within ±15% of one "
                 "flow alone", "Jain >= 0.9, aggregate/alone in [0.85, 1.15] (issue)", ok,
                 f"Jain min {min(j):.3f} (mean {np.mean(j):.3f}); aggregate {fmt(ci(agg))} kb/s vs alone "
                 f"{alone:.1f} kb/s ({rel:.2f}x); per flow "
                 + ", ".join(f"{c} {per_seed[c].mean():.1f}" for c in per_seed.columns)
                 + f" kb/s (paper: each 'just over {paper.TWO_DBP_PER_FLOW_KBPS:.0f}' kb/s)",
                 {"jain_min": min(j), "aggregate_ratio": rel})


def c4(df: pd.DataFrame) -> Check:
    d = rows(df, "share", "mixed")
    dbp, tcp = d[d.flow == "dbp"].goodput_kbps, d[d.flow == "tcp"].goodput_kbps
    ratio = tcp.mean() / dbp.mean()
    return Check("C4", "DBP with TCP: TCP gets >= 40% of DBP's throughput",
                 ">= 0.4 (issue; paper 16 vs 25 kb/s = 0.64, §V-B)", bool(ratio >= 0.4),
                 f"TCP {fmt(ci(tcp))} kb/s, DBP {fmt(ci(dbp))} kb/s, ratio {ratio:.2f} (paper "
                 f"{paper.TCP_WITH_DBP_KBPS:.0f} / {paper.DBP_WITH_TCP_KBPS:.0f})", {"ratio": ratio})


def transfer_times(df: pd.DataFrame, kb: int) -> tuple[pd.Series, pd.Series]:
    d = rows(df, "file", x=kb)
    return d[d.variant == "tcp"].set_index("seed").completion_s, d[d.variant == "dbp"].set_index("seed").completion_s


def c5(df: pd.DataFrame) -> Check:
    tcp, dbp = transfer_times(df, 100)
    unfinished = int(tcp.isna().sum() + dbp.isna().sum())
    # An unfinished transfer counts as the run's whole window (a lower bound on its time).
    t, d = tcp.fillna(290.0), dbp.fillna(290.0)
    ok = bool(d.mean() < t.mean() and d.quantile(0.9) < t.quantile(0.9))
    return Check("C5", "100 KB transfers: DBP's mean and 90th-percentile completion times both below TCP's",
                 "both strictly below (issue; paper Fig. 11)", ok,
                 f"mean DBP {d.mean():.1f} s vs TCP {t.mean():.1f} s; p90 DBP {d.quantile(0.9):.1f} s vs TCP "
                 f"{t.quantile(0.9):.1f} s over {len(t)} paired trials; unfinished in 290 s: {unfinished}",
                 {"dbp_mean": d.mean(), "tcp_mean": t.mean()})


def c6(df: pd.DataFrame) -> Check:
    parts, ok = [], True
    lo, hi = paper.GOOD_RTT_S
    for r in paper.PROBE_RATES_KBPS:
        d = rows(df, "probe", x=r)
        good, over, loss = d.rtt_good_frac.mean(), d.rtt_over1_frac.mean(), d.loss_pct.mean()
        if r <= 60:
            this = good >= 0.5 and paper.GOOD_LOSS_PCT[0] <= loss <= paper.GOOD_LOSS_PCT[1]
            parts.append(f"{r} kb/s: RTT in {lo}-{hi} s {100 * good:.0f}% of samples, loss {loss:.2f}%"
                         f"{'' if this else ' (MISS)'}")
        else:
            this = over >= 0.5 and loss > paper.OVERLOAD_LOSS_PCT
            parts.append(f"{r} kb/s: RTT above 1 s {100 * over:.0f}%, loss {loss:.1f}%{'' if this else ' (MISS)'}")
        ok &= bool(this)
    e = rows(df, "episode", x=50)
    this = bool((e.rtt_max_s > 10.0).all() and (e.loss_run > paper.EPISODE_LOSS_RUN).all())
    parts.append(f"episode at 50 kb/s: max RTT {e.rtt_max_s.min():.1f}-{e.rtt_max_s.max():.1f} s, longest loss "
                 f"run {e.loss_run.min():.0f}-{e.loss_run.max():.0f}{'' if this else ' (MISS)'}")
    ok &= this
    return Check("C6", "the probes show the paper's regimes (§IV, Figs. 1-4)",
                 "<= 60 kb/s: RTT mostly (>= 50% of samples) in 0.5-0.8 s and loss 3-5%; 80 kb/s: RTT mostly "
                 "above 1 s and loss above 10%; the episode: RTT past 10 s and a run of more than 100 losses "
                 "(issue, from §IV's text)", ok, "; ".join(parts))


def c7(df: pd.DataFrame) -> Check:
    traces = sorted({e.split(":", 1)[1] for e in df.experiment.unique() if e.startswith("trace:")})
    if not traces:
        return Check("C7", "DBP vs TCP over the recorded Mahimahi traces", "reported, no threshold", None,
                     "skipped: no Mahimahi traces found (set XLAYER_TRACES)")
    parts = []
    for tr in traces:
        d = rows(df, f"trace:{tr}")
        f = rows(df, f"tracefile:{tr}")
        g = {v: d[d.variant == v].goodput_kbps.mean() for v in ("dbp", "tcp")}
        parts.append(f"{tr}: goodput DBP {g['dbp'] / 1e3:.2f} vs TCP {g['tcp'] / 1e3:.2f} Mb/s, "
                     f"100 KB in {f[f.variant == 'dbp'].completion_s.mean():.2f} vs "
                     f"{f[f.variant == 'tcp'].completion_s.mean():.2f} s")
    return Check("C7", "DBP vs TCP over the recorded Mahimahi traces", "reported, no threshold", None,
                 "; ".join(parts))


def no_loss(df: pd.DataFrame) -> Check:
    g = {v: rows(df, "noloss", v).groupby("flow").goodput_kbps.mean().to_dict() for v in ("dbp", "tcp", "mixed")}
    return Check("R1", "DBP against TCP with no random loss on the bearer", "reported, no threshold", None,
                 f"alone: DBP {g['dbp']['dbp']:.1f}, TCP {g['tcp']['tcp']:.1f} kb/s; together: DBP "
                 f"{g['mixed']['dbp']:.1f}, TCP {g['mixed']['tcp']:.1f} kb/s")


def all_checks(df: pd.DataFrame) -> list[Check]:
    return [c1(df), c2(df), c3(df), c4(df), c5(df), c6(df), c7(df), no_loss(df)]

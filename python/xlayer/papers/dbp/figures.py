"""The reproduction's figures (PNG and SVG): the probes of Figs. 1-4, the rates of
Figs. 6-9 with DBP's own dynamics, the transfers of Figs. 10-11 and the trace table's
bars. The paper's published values are drawn as reference marks where it gives numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._shared import pyplot, rows, save
from . import paper
from .checks import transfer_times
from .experiments import EPISODE_AT_S, EPISODE_S, Results


def _metric(s: pd.DataFrame, entity: str, metric: str) -> pd.Series:
    d = s[(s.entity == entity) & (s.metric == metric)]
    return pd.Series(d.value.to_numpy(), index=d.time_s.to_numpy()).dropna()


def probes(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
    panels = [("probe", 30, "Fig. 1: probe at 30 kb/s"), ("probe", 60, "Fig. 2: probe at 60 kb/s"),
              ("probe", 80, "Fig. 3: probe at 80 kb/s"),
              ("episode", 50, f"Fig. 4: 50 kb/s, channel taken away at {EPISODE_AT_S:.0f} s for {EPISODE_S:.0f} s")]
    for ax, (exp, rate, title) in zip(axes.flat, panels):
        rtt = _metric(res.series(exp, "probe", rate), "probe", "rtt_s")
        ax.plot(rtt.index, rtt.to_numpy(), lw=0.6, color="tab:blue", label="RTT of the latest ACK (seed 1)")
        if exp == "probe" and rate <= 60:
            ax.axhspan(*paper.GOOD_RTT_S, color="tab:green", alpha=0.15, label="paper: 0.5-0.8 s most of the time")
        elif exp == "probe":
            ax.axhline(paper.OVERLOAD_RTT_S, color="tab:red", ls="--", label="paper: above 1 s most of the time")
        else:
            ax.axhline(paper.EPISODE_RTT_S, color="tab:red", ls=":", label="paper: RTT up to 17 s")
        ax.set_yscale("log")
        ax.set_yticks([0.5, 0.8, 1, 2, 5, 10, 20])
        ax.set_yticklabels(["0.5", "0.8", "1", "2", "5", "10", "20"])
        ax.set_ylabel("RTT [s]")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, loc="upper left")
    for ax in axes[1]:
        ax.set_xlabel("time [s]")
    return save(fig, out, "fig1_4_probes")


def _rate_kbps(s: pd.DataFrame, flow: str, bin_s: float = 5.0) -> pd.Series:
    g = _metric(s, flow, "goodput_bps")
    bins = (g.index // bin_s) * bin_s
    return g.groupby(bins).mean() / 1e3


def shares(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True, sharey=True)
    panels = [("dbp", "Fig. 6: one DBP flow", {"dbp": paper.DBP_ALONE_KBPS}),
              ("tcp", "Fig. 7: one TCP flow", {"tcp": paper.TCP_ALONE_KBPS}),
              ("dbp2", "Fig. 8: two DBP flows", {}),
              ("mixed", "Fig. 9: DBP and TCP", {"dbp": paper.DBP_WITH_TCP_KBPS, "tcp": paper.TCP_WITH_DBP_KBPS})]
    colors = {"dbp": "tab:blue", "dbp1": "tab:blue", "dbp2": "tab:purple", "tcp": "tab:orange"}
    for ax, (variant, title, ref) in zip(axes.flat, panels):
        s = res.series("share", variant, 0)
        for flow in sorted(rows(res.runs, "share", variant).flow.unique()):
            r = _rate_kbps(s, flow)
            agg = r.expanding().mean()
            ax.plot(r.index, r.to_numpy(), lw=0.8, color=colors[flow], label=f"{flow}: 5 s mean")
            ax.plot(agg.index, agg.to_numpy(), lw=1.6, ls="--", color=colors[flow], label=f"{flow}: aggregate")
            if flow in ref:
                ax.axhline(ref[flow], color=colors[flow], ls=":", lw=1.2, label=f"paper {flow}: {ref[flow]:.0f} kb/s")
        if variant == "dbp2":
            ax.axhline(paper.TWO_DBP_PER_FLOW_KBPS, color="grey", ls=":",
                       label=f"paper: each flow's mean 'just over {paper.TWO_DBP_PER_FLOW_KBPS:.0f}'")
        ax.set_title(title + " (seed 1; goodput at the receiver)", fontsize=9)
        ax.set_ylabel("rate [kb/s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, ncol=2, loc="upper right")
    for ax in axes[1]:
        ax.set_xlabel("time [s]")
    return save(fig, out, "fig6_9_rates")


def dbp_dynamics(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    s = res.series("share", "dbp", 0)
    fig, (a, b) = plt.subplots(2, 1, figsize=(11, 5.5), sharex=True)
    rate = _metric(s, "dbp", "rate_bps") / 1e3
    a.plot(rate.index, rate.to_numpy(), lw=0.8, label="DBP sending rate")
    cap = s[(s.metric == "capacity_bps") & s.entity.str.startswith("air")]
    if not cap.empty:
        c = pd.Series(cap.value.to_numpy(), index=cap.time_s.to_numpy())
        c = c.groupby((c.index // 1.0) * 1.0).mean() / 1e3
        a.step(c.index, c.to_numpy(), lw=0.8, color="grey", alpha=0.7, where="post", label="bearer capacity (1 s mean)")
    a.set_ylabel("kb/s")
    a.legend(fontsize=7)
    a.grid(alpha=0.3)
    a.set_title("Fig. 6 in detail: DBP's rate against the bearer's capacity, and its smoothed RTT (seed 1)", fontsize=9)
    srtt = _metric(s, "dbp", "srtt_s")
    b.plot(srtt.index, srtt.to_numpy(), lw=0.8, color="tab:blue", label="DBP smoothed RTT")
    b.axhspan(paper.R1_S, paper.R2_S, color="tab:green", alpha=0.15, label="hysteresis band R1-R2")
    b.axhline(1.2 * paper.R2_S, color="tab:red", ls="--", lw=0.8, label="C2 bound 1.2·R2")
    b.set_yscale("log")
    b.set_yticks([0.5, 0.8, 1.2, 2, 5, 10])
    b.set_yticklabels(["0.5", "0.8", "1.2", "2", "5", "10"])
    b.set_ylabel("RTT [s]")
    b.set_xlabel("time [s]")
    b.grid(alpha=0.3, which="both")
    b.legend(fontsize=7)
    return save(fig, out, "fig6_dbp_dynamics")


def transfers(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, kb, fig_no in zip(axes, paper.FILE_SIZES_KB, (10, 11)):
        tcp, dbp = transfer_times(res.runs, kb)
        ax.plot(tcp.index, tcp.to_numpy(), "o-", ms=3, lw=0.7, color="tab:orange", label="TCP")
        ax.plot(dbp.index, dbp.to_numpy(), "s-", ms=3, lw=0.7, color="tab:blue", label="DBP")
        ax.set_xlabel("trial (seed)")
        ax.set_ylabel("transfer time [s]")
        ax.set_title(f"Fig. {fig_no}: {kb} KB transfers; each trial a fresh draw of the bearer, shared by "
                     "TCP and DBP", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save(fig, out, "fig10_11_transfers")


def traces(res: Results, out: Path) -> list[str]:
    df = res.runs
    names = sorted({e.split(":", 1)[1] for e in df.experiment.unique() if e.startswith("trace:")})
    if not names:
        return []
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    x = np.arange(len(names))
    for k, (v, color) in enumerate((("tcp", "tab:orange"), ("dbp", "tab:blue"))):
        g = [rows(df, f"trace:{n}", v).goodput_kbps.mean() / 1e3 for n in names]
        t = [rows(df, f"tracefile:{n}", v).completion_s.mean() for n in names]
        axes[0].bar(x + 0.4 * k - 0.2, g, 0.4, color=color, label=v.upper())
        axes[1].bar(x + 0.4 * k - 0.2, t, 0.4, color=color, label=v.upper())
    for ax, label in zip(axes, ("goodput [Mb/s]", "100 KB transfer time [s]")):
        ax.set_xticks(x)
        ax.set_xticklabels(names, fontsize=7)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
    axes[0].set_title("Over the Mahimahi traces: bulk goodput", fontsize=9)
    axes[1].set_title("Over the Mahimahi traces: 100 KB transfers (mean over start times)", fontsize=9)
    return save(fig, out, "traces")


def all_figures(res: Results, out: Path) -> list[str]:
    return [f for make in (probes, shares, dbp_dynamics, transfers, traces) for f in make(res, out)]

"""The reproduction's figures (PNG and SVG), numbered as the paper's: Fig. 3 (fairness),
Fig. 4 (responsiveness), Fig. 5 (Table II) and Fig. 6 (permanent degradation). The
paper's published values are drawn as reference marks where it gives numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._shared import pyplot, save
from . import paper
from .checks import goodput, table2
from .experiments import LOSS_STEPS, TCP_BASELINES, Results

COLORS = {"tfmcc": "tab:blue", "pgmcc": "tab:orange", "tcp": "tab:green", "tfmcc1": "tab:blue",
          "tfmcc2": "tab:purple", "MOD_TFMCC": "tab:blue", "LEG_TFMCC": "tab:cyan", "MOD_PGMCC": "tab:orange",
          "LEG_PGMCC": "tab:red"}


def _smooth(g: Any, seconds: float = 2.0) -> Any:
    step = float(np.median(np.diff(g.index.to_numpy())))
    return g.rolling(max(1, round(seconds / step))).mean()


def fairness(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    s = res.series("pair", "tfmcc", 0)
    for f in ("tfmcc1", "tfmcc2"):
        g = _smooth(goodput(s, f))
        a.plot(g.index, g.to_numpy() / 1e3, lw=0.9, color=COLORS[f], label=f"{f.upper()} (2 s average)")
    a.set_title("Fig. 3(a): two modified TFMCC sessions to UEx, Iu bottleneck", fontsize=9)
    s = res.series("mixed", "random_rtt", 0)
    for f in ("tfmcc", "pgmcc", "tcp"):
        g = _smooth(goodput(s, f))
        b.plot(g.index, g.to_numpy() / 1e3, lw=0.9, color=COLORS[f], label=f"{f.upper()} (2 s average)")
    b.set_title("Fig. 3(b): TFMCC vs PGMCC vs TCP to UEx (trial 0)", fontsize=9)
    for ax in (a, b):
        ax.set_xlabel("time [s]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    a.set_ylabel("goodput at UEx [kb/s]")
    return save(fig, out, "fig3_fairness")


def responsiveness(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4))
    s = res.series("respond", "all", 0)
    for f in ("tfmcc", "pgmcc", "tcp"):
        g = _smooth(goodput(s, f))
        ax.plot(g.index, g.to_numpy() / 1e3, lw=0.9, color=COLORS[f], label=f"{f.upper()} (2 s average, seed 1)")
    ends = [t for t, _ in LOSS_STEPS[1:]] + [paper.RESPONSIVENESS_S]
    for (t0, p), t1, shade in zip(LOSS_STEPS, ends, ("0.95", "0.85", "0.95")):
        ax.axvspan(t0, t1, color=shade, alpha=0.5, lw=0)
        ax.text((t0 + t1) / 2, 0.97, f"Iu loss {100 * p:g}%", ha="center", va="top", fontsize=8,
                transform=ax.get_xaxis_transform())
    ax.set_xlabel("time [s]")
    ax.set_ylabel("goodput at UEx [kb/s]")
    ax.set_title("Fig. 4: responsiveness to changes of the Iu loss rate", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right", bbox_to_anchor=(1.0, 0.9))
    return save(fig, out, "fig4_responsiveness")


def degradation(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    t = table2(res.runs)
    primary = f"ratio:{next(iter(TCP_BASELINES))}"
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for scheme, g in t.groupby("scheme", sort=False):
        g = g.sort_values("ues")
        tcp = g.kbps / g[primary]
        ax.errorbar(g.ues, g[primary], yerr=g.ci / tcp, marker="o", ms=4, lw=1, capsize=3,
                    color=COLORS[str(scheme)], label=f"{scheme} (ours, 95% CI)")
        ax.plot(paper.TABLE2_UES, paper.TABLE2[str(scheme)], ls="none", marker="x", ms=7,
                color=COLORS[str(scheme)], label=f"{scheme} (paper, Table II)")
    ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xticks(list(paper.TABLE2_UES))
    ax.set_xticklabels([str(n) for n in paper.TABLE2_UES])
    ax.set_xlabel("UEs in the multicast group")
    ax.set_ylabel("throughput ÷ TCP's")
    ax.set_title("Fig. 5 / Table II: temporary radio degradation (0-5% per UE, redrawn every 5 s)", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    return save(fig, out, "fig5_table2")


def permanent(res: Results, out: Path) -> list[str]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 4))
    for f in ("tfmcc", "pgmcc", "tcp"):
        g = _smooth(goodput(res.series("permanent", f, 0), f))
        ax.plot(g.index, g.to_numpy() / 1e3, lw=0.9, color=COLORS[f], label=f"{f.upper()} alone (2 s average, seed 1)")
    ax.axvline(paper.PERMANENT_AT_S, color="k", ls=":", lw=1)
    ax.text(paper.PERMANENT_AT_S + 1, 0.97, "20% loss on UEx's radio link", fontsize=8, va="top",
            transform=ax.get_xaxis_transform())
    for f, s in paper.PERMANENT_ADAPT_S.items():
        ax.axvline(paper.PERMANENT_AT_S + s, color=COLORS[f], ls="--", lw=0.7,
                   label=f"paper: {f.upper()} adapted after {'<' if f == 'tcp' else '≈'}{s:g} s")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("goodput at UEx [kb/s]")
    ax.set_title("Fig. 6: permanent radio degradation of UEx", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    return save(fig, out, "fig6_permanent")


def all_figures(res: Results, out: Path) -> list[str]:
    return fairness(res, out) + responsiveness(res, out) + degradation(res, out) + permanent(res, out)

"""The reproduction's figures (PNG and SVG): Fig. 4 (a) and (b) with 95% CIs and the
paper's stated values as reference marks, AAL5's sensitivity to the readings, and
eq. (2) against the grid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import experiments as ex
from .._shared import pyplot, save
from . import paper
from .._shared import ci
from .checks import rows
from .lopt import lopt_closed_form, lopt_numeric, grid_choice_octets


def _curve(df: pd.DataFrame, experiment: str, variant: str, aal: str, metric: str) -> tuple[np.ndarray, ...]:
    d = rows(df, experiment, variant, aal)
    d = d[d.x > 0]
    xs = np.array(sorted(d.x.unique()))
    stats = [ci(d[np.isclose(d.x, x)][metric]) for x in xs]
    return xs, np.array([s["mean"] for s in stats]), np.nan_to_num(np.array([s["ci_half_width"] for s in stats]))


_STYLE = {("aal5", "primary"): ("tab:orange", "o", "-", "AAL5, independent errors"),
          ("aalx", "primary"): ("tab:blue", "s", "-", "AAL-X, independent errors"),
          ("aal5", "rayleigh"): ("tab:orange", "v", "--", f"AAL5, Rayleigh {ex.RAYLEIGH_SLOW_HZ:.0f} Hz"),
          ("aalx", "rayleigh"): ("tab:blue", "^", "--", f"AAL-X, Rayleigh {ex.RAYLEIGH_SLOW_HZ:.0f} Hz")}


def _cer_axis(ax: Any) -> None:
    ax.set_xscale("log")
    ticks = [x for x in ex.CERS if x > 0]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{x:g}" for x in ticks], fontsize=8)
    ax.minorticks_off()
    ax.set_xlabel("cell error rate (CER)")
    ax.grid(alpha=0.3, which="both")


def fig4(df: pd.DataFrame, out: Path) -> list[str]:
    plt = pyplot()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11.5, 4.4))
    for (aal, variant), (color, marker, ls, label) in _STYLE.items():
        xs, m, hw = _curve(df, "fig4", variant, aal, "norm")
        a.errorbar(xs, m, yerr=hw, color=color, marker=marker, ls=ls, ms=4, capsize=3, lw=1.2, label=label)
        xs, m, hw = _curve(df, "fig4", variant, aal, "delay_mean_s")
        b.errorbar(xs, m, yerr=hw, color=color, marker=marker, ls=ls, ms=4, capsize=3, lw=1.2, label=label)
    for refs, color, label in ((paper.AAL5_NORM, "tab:orange", "paper, AAL5 (§3.2 text)"),
                               (paper.AALX_NORM, "tab:blue", "paper, AAL-X (§3.2 text)")):
        a.plot(list(refs), list(refs.values()), ls="none", marker="*", ms=13, mfc="none", mec=color, mew=1.5,
               label=label)
    a.set_ylabel("normalized TCP throughput (goodput ÷ CER-0 goodput)")
    a.set_ylim(0.0, 1.05)
    a.set_title("Fig. 4(a): normalized TCP throughput vs CER (mean ± 95% CI)", fontsize=9)
    a.legend(fontsize=7, loc="lower left")
    for aal, color in (("aal5", "tab:orange"), ("aalx", "tab:blue")):
        b.plot([paper.DELAY_CER], [paper.DELAY_S[aal]], ls="none", marker="*", ms=13, mfc="none", mec=color,
               mew=1.5, label=f"paper, {aal.upper().replace('AALX', 'AAL-X')}: {paper.DELAY_S[aal]} s (§3.2 text)")
    b.set_yscale("log")
    b.set_ylim(0.01, 3.0)
    b.set_yticks([0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0])
    b.set_yticklabels(["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2"])
    b.set_ylabel("mean packet delay, TCP to TCP [s]")
    b.set_title("Fig. 4(b): mean end-to-end delay of TCP segments vs CER (mean ± 95% CI)", fontsize=9)
    b.legend(fontsize=7, loc="lower left")
    for ax in (a, b):
        _cer_axis(ax)
    return save(fig, out, "fig4")


def sensitivity(df: pd.DataFrame, out: Path) -> list[str]:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.4), sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = [n for n in ex.READINGS if n != "rayleigh"]
    for ax, aal in zip(axes, ex.AALS):
        for k, name in enumerate(names):
            exp = "fig4" if name in ex.FIG4 else "sens"
            xs, m, hw = _curve(df, exp, name, aal, "norm")
            if len(xs) == 0:
                continue
            ax.errorbar(xs, m, yerr=hw, color=colors[k % len(colors)], marker="o", ms=3, capsize=2,
                        lw=2.0 if name == "primary" else 1.0, label=name)
        if aal == "aal5":
            ax.plot(list(paper.AAL5_NORM), list(paper.AAL5_NORM.values()), ls="none", marker="*", ms=13,
                    mfc="none", mec="k", mew=1.5, label="paper (§3.2 text)")
            ax.set_ylabel("normalized TCP throughput")
        ax.set_title(f"{'AAL5' if aal == 'aal5' else 'AAL-X'}: normalized throughput under each reading "
                     "(mean ± 95% CI)", fontsize=9)
        ax.set_ylim(0.0, 1.05)
        _cer_axis(ax)
        ax.legend(fontsize=6.5, loc="lower left")
    return save(fig, out, "sensitivity")


def lopt(out: Path) -> list[str]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    bers = np.logspace(-8, -2, 200)
    ax.plot(bers, [lopt_closed_form(p) / 8 for p in bers], color="tab:blue", lw=1.5, label="eq. (2), closed form")
    pts = np.logspace(-8, -2, 13)
    ax.plot(pts, [lopt_numeric(p) / 8 for p in pts], "o", mfc="none", color="k", ms=6, label="numeric maximizer of η")
    ax.step(bers, [grid_choice_octets(p) for p in bers], where="mid", color="tab:orange", lw=1.2,
            label="grid choice L = 48i − 4")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("end-to-end bit error rate P_b")
    ax.set_ylabel("CP-ARQ payload length [octets]")
    ax.set_title("Eq. (2): optimal CP-ARQ payload, h = 32 bits", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return save(fig, out, "lopt")


def all_figures(df: pd.DataFrame, out: Path) -> list[str]:
    return fig4(df, out) + sensitivity(df, out) + lopt(out)

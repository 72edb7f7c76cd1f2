"""The "Readings and sensitivity" section of the Koga report and its figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from . import paper, sensitivity as sens
from ...stats import mean_ci
from .checks import Check, interior_minimum, summary
from .experiments import PDUS_ALT, STATUS_DELAYS_MS

METRICS = (("transport", "transport %"), ("app", "application %"), ("total", "total %"), ("tcp_kbps", "TCP kb/s"))
COLORS = {32: "tab:blue", 64: "tab:orange", 128: "tab:green"}


def _cell(df: pd.DataFrame, exp: str, metric: str, rate: int, digits: int) -> str:
    s = summary(df, exp, metric)
    if rate not in s.index.get_level_values(0):
        return "—"
    row = s.loc[rate].iloc[0]
    hw = row["ci_half_width"]
    return f"{row['mean']:.{digits}f} ± {'n/a' if pd.isna(hw) else f'{hw:.{digits}f}'}"


def _save(fig: Any, out: Path, stem: str) -> None:
    fig.savefig(out / f"{stem}.png", dpi=110)
    fig.savefig(out / f"{stem}.svg")


def _sweep_panels(df: pd.DataFrame, rows: list[tuple[str, str, str]], curves: list[tuple[str, str, str]],
                  x_label: str, title: str, out: Path, stem: str, budgets: tuple[float, ...] = ()) -> None:
    """One panel per (row, rate): each curve is an experiment key prefix, mean ± 95 % CI."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(rows), 3, figsize=(13, 3.4 * len(rows)), squeeze=False)
    for i, (exp, metric, ylabel) in enumerate(rows):
        for j, r in enumerate(paper.RATES_KBPS):
            ax = axes[i][j]
            for prefix, label, style in curves:
                s = summary(df, prefix + exp, metric)
                if r not in s.index.get_level_values(0):
                    continue
                d = s.loc[r]
                ax.errorbar([float(x) for x in d.index], d["mean"], yerr=d["ci_half_width"].fillna(0.0),
                            fmt=style, ms=4, capsize=2, label=label)
            for b in budgets if metric == "total" else ():
                ax.axhline(b, color="grey", lw=0.8, ls=":",
                           label="C6 budgets 0.5 / 1 / 2 %" if b == budgets[0] else None)
            if metric == "total" and budgets:
                from matplotlib.ticker import FuncFormatter

                ax.set_yscale("log", nonpositive="clip")
                ax.set_ylim(bottom=0.01)
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.set_title(f"{exp.replace('fig', 'Fig. ')}, UDP {r} kb/s", fontsize=9)
            ax.set_xlabel(x_label)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _save(fig, out, stem)
    plt.close(fig)


def section(out: Path, df: pd.DataFrame, c1_runs: pd.DataFrame, quick: bool) -> list[str]:
    by = sens.checks_by_reading(df)
    c1s = {24: sens.c1_sim(c1_runs, 24), PDUS_ALT: sens.c1_sim(c1_runs, PDUS_ALT)}
    lines = ["## Readings and sensitivity", "",
             "Primary readings (reasons: `docs/reproductions/koga.md`, \"Primary readings\"): 24 PDUs of 42 B per "
             "20 ms TTI; status reports take the 30 ms link delay; ns-2's 20-packet TCP window; C6's loss budget 1 %. "
             "Each alternative below re-runs the experiments it touches; the rest of its column is the primary run.",
             "", "### Every check under every reading", "",
             "| check | threshold (source) | " + " | ".join(r.label for r in sens.READINGS) + " |",
             "|---|---|" + "---|" * len(sens.READINGS)]
    for i, c in enumerate(by[sens.PRIMARY.key]):
        cells = ["PASS" if by[r.key][i].passed else "**FAIL**" for r in sens.READINGS]
        lines.append(f"| {c.name} | {c.threshold} | " + " | ".join(cells) + " |")
    c1_cells = [("PASS" if c1s[PDUS_ALT if r.key == "pdus22" else 24].passed else "**FAIL**") for r in sens.READINGS]
    lines.append(f"| C1-sim | {c1s[24].threshold} | " + " | ".join(c1_cells) + " |")
    fl = sens.flips(by)
    if c1s[PDUS_ALT].passed != c1s[24].passed:  # C1-sim is run per PDU reading, not per view
        by["pdus22"] = [*by["pdus22"], c1s[PDUS_ALT]]
        fl.append(("pdus22", "C1-sim", c1s[24].passed, c1s[PDUS_ALT].passed))
    lines += ["", "Checks that flip: " + ("; ".join(f"{c} {'PASS' if a else 'FAIL'} → {'PASS' if b else 'FAIL'} "
                                                    f"under {k}" for k, c, a, b in fl) or "none") + ".", ""]
    for k, name, _, _ in fl:
        alt = next(x for x in by[k] if x.name == name)
        lines.append(f"- {name} under {k}: {alt.detail}")
    lines += ["", f"### PDUs per TTI: 24 (primary) against {PDUS_ALT}", "",
              f"{PDUS_ALT} whole 42-B PDUs fit a 7680-bit transport block: 352 kb/s of payload, 331 kb/s after "
              "5.9 % frame errors, against 384 / 361 kb/s with 24. Eq. (2) uses 384 kb/s under either reading "
              "(the paper's 5.52 / 5.20 / 4.56), so it does not decide this.", "",
              f"| table | UDP rate | metric | paper | 24 PDUs | {PDUS_ALT} PDUs |", "|---|---|---|---|---|---|"]
    for t in paper.TABLES:
        for r in paper.RATES_KBPS:
            for i, (m, label) in enumerate(METRICS):
                d = 1 if m == "tcp_kbps" else 2
                lines.append(f"| {t} | {r} kb/s | {label} | {paper.TABLES[t][r][i]:.2f} | {_cell(df, t, m, r, d)} | "
                             f"{_cell(df, f'p{PDUS_ALT}_{t}', m, r, d)} |")
    _sweep_panels(df, [("fig8", "total", "UDP total loss [%]"), ("fig8", "tcp_kbps", "TCP throughput [kb/s]")],
                  [("", "24 PDUs/TTI", "o-"), (f"p{PDUS_ALT}_", f"{PDUS_ALT} PDUs/TTI", "s--")], "awnd [packets]",
                  f"Fig. 8 (WT 90 ms, UDP max retx 2) with 24 and {PDUS_ALT} PDUs per TTI: UDP loss (dotted: "
                  "C6 budgets 0.5 / 1 / 2 %) and TCP goodput, mean ± 95 % CI", out, "sens_fig8_pdus",
                  sens.C6_BUDGETS_PCT)
    lines += ["", "![Fig. 8 under both PDU readings](sens_fig8_pdus.png)", "",
              "### C6: the chosen awnd under each loss budget", "",
              "| PDUs/TTI | budget | 32 kb/s | 64 kb/s | 128 kb/s | C6 (±1 of 5.52 / 5.20 / 4.56) |",
              "|---|---|---|---|---|---|"]
    for _, b in sens.budgets(df).iterrows():
        lines.append(f"| {b.pdus} | {b.budget_pct:g} % | " + " | ".join(f"{b[r]:.0f}" for r in paper.RATES_KBPS)
                     + f" | {'PASS' if b.c6 else 'FAIL'} |")
    lines += ["", "The paper's choice (its Fig. 8): 6 / 5 / 4.", "",
              "### Retransmission timing: the status (NACK) delay", "",
              "The 60 ms WT optimum rests on two ties at equal instants: the retransmission leaves at exactly "
              "t0 + 80 ms (the status arrives at that TTI boundary), and an arrival at the deadline is in "
              "time. A status 1 ms later (31 ms) misses the boundary, so the retransmission leaves at the next TTI, "
              "t0 + 100 ms, exactly as with a status one TTI later (50 ms): the two readings give identical "
              "results (different event times, same TTI schedule).", "",
              "| figure | UDP rate | " + " | ".join(f"status {d} ms" for d in (30, *STATUS_DELAYS_MS)) + " |",
              "|---|---|" + "---|" * (1 + len(STATUS_DELAYS_MS))]
    for f in ("fig2", "fig6"):
        for r in paper.RATES_KBPS:
            cells = []
            for pre in ("", *(f"sd{d}_" for d in STATUS_DELAYS_MS)):
                im = interior_minimum(df, pre + f, r)
                dl, dh = im["diffs"][min(im["diffs"])], im["diffs"][max(im["diffs"])]
                cells.append(f"min {im['means'][im['argmin_ms']]:.2f} % at {im['argmin_ms']} ms "
                             f"({dl['mean']:+.2f} [{dl['ci_low']:+.2f}, {dl['ci_high']:+.2f}] / {dh['mean']:+.2f} "
                             f"[{dh['ci_low']:+.2f}, {dh['ci_high']:+.2f}]"
                             " pp to the ends)")
            lines.append(f"| {f} | {r} kb/s | " + " | ".join(cells) + " |")
    for r in paper.RATES_KBPS:
        cells = [f"total {_cell(df, pre + 'table3', 'total', r, 2)} %, transport "
                 f"{_cell(df, pre + 'table3', 'transport', r, 2)} %, TCP {_cell(df, pre + 'table3', 'tcp_kbps', r, 1)}"
                 for pre in ("", *(f"sd{d}_" for d in STATUS_DELAYS_MS))]
        lines.append(f"| table3 | {r} kb/s | " + " | ".join(cells) + " |")
    curves = [("", "status 30 ms (primary)", "o-")] + [(f"sd{d}_", f"status {d} ms", st)
                                                       for d, st in zip(STATUS_DELAYS_MS, ("s--", "^:"))]
    _sweep_panels(df, [("fig2", "total", "UDP total loss [%]"), ("fig6", "total", "UDP total loss [%]")], curves,
                  "WT [ms]", "UDP total loss over WT (Fig. 2: no QoS; Fig. 6: awnd 5/5/4) with the status "
                  "delay 30, 31 and 50 ms, mean ± 95 % CI (31 and 50 ms coincide: both resend one TTI later)", out, "sens_timing")
    lines += ["", "![WT sweeps under the timing readings](sens_timing.png)", "",
              "The other tie alone (status delay 30 ms): WT 59 ms, where a hole filled by one retransmission "
              "(60 ms old) is given up, against WT 60 ms (paired over seeds):", "",
              "| figure | UDP rate | loss at WT 59 ms | loss at WT 60 ms | 59 − 60 [pp] (95 % CI) |", "|---|---|---|---|---|"]
    for f in ("fig2", "fig6"):
        for r in paper.RATES_KBPS:
            a = df[(df.experiment == f"wt59_{f}") & (df.rate_kbps == r)].set_index("seed")["total"]
            b = df[(df.experiment == f) & (df.rate_kbps == r) & (df.x == 60)].set_index("seed")["total"]
            pd_ = mean_ci((a - b.reindex(a.index)).to_numpy(dtype=float))
            lines.append(f"| {f} | {r} kb/s | {a.mean():.2f} % | {b.mean():.2f} % | {pd_['mean']:+.2f} "
                         f"[{pd_['ci_low']:+.2f}, {pd_['ci_high']:+.2f}] |")
    lines += ["",
              "### Table 2 with larger TCP receive windows", "",
              "| window | UDP rate | transport % | application % | total % | TCP kb/s |", "|---|---|---|---|---|---|"]
    for label, exp in sens.table2_windows(df):
        for r in paper.RATES_KBPS:
            lines.append(f"| {label} | {r} kb/s | " + " | ".join(
                _cell(df, exp, m, r, 1 if m == "tcp_kbps" else 2) for m, _ in METRICS) + " |")
    lines += ["| paper | 32 / 64 / 128 | " + " | ".join(
        " / ".join(f"{paper.TABLES['table2'][r][i]:.2f}" for r in paper.RATES_KBPS) for i in range(4)) + " |", "",
        "### C1 from a simulation: the adaptive agent", "",
        "Table 5's setting with the live agent (`agent = { kind = \"koga\" }`): eq. (3) evaluated on what the "
        "simulation reports (the W-CDMA model's link rate and delay, the UDP source's measured L7 rate) with "
        "n = 2, and the window the agent advertised (series `rwnd_bytes`, 100 ms samples from 1 s on). The "
        "agent's n at the end is read back from its last window.", ""]
    lines += sens.c1_sim_table(c1_runs) + [""]
    for c in c1s.values():
        lines.append(f"- {c.name} {'PASS' if c.passed else 'FAIL'} ({c.claim}): {c.detail}")
    if quick:
        lines += ["", "Quick mode: 4 seeds and the quick grids; the numbers in docs/reproductions/koga.md are the full run's."]
    return lines + [""]


def checks_with_sim(results: list[Check], c1_runs: pd.DataFrame) -> list[Check]:
    """The primary checks plus C1-sim (24 PDUs/TTI), after C1."""
    return [results[0], sens.c1_sim(c1_runs, 24), *results[1:]]

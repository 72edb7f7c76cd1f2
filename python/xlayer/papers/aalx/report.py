"""report.md of the AAL-X reproduction: checks with thresholds and sources, Fig. 4 paper
vs ours (mean ± 95% CI over seeds), the delay argument, the readings, and eq. (2)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from . import experiments as ex
from . import paper
from .._shared import Check, ci, verdict
from .checks import fmt, link_rtt_s, probe_added_delay, rows
from .lopt import lopt_table


def _paper(aal: str, cer: float) -> str:
    refs = paper.AAL5_NORM if aal == "aal5" else paper.AALX_NORM
    return next((f"{v}" for k, v in refs.items() if math.isclose(k, cer)), "–")


def _fig4(df: pd.DataFrame) -> list[str]:
    lines = ["| CER | paper AAL5 | AAL5 | AAL-X | paper AAL-X | AAL5, Rayleigh | AAL-X, Rayleigh | "
             "delay AAL5 s | delay AAL-X s | AAL5 timeouts / fast retransmits per run |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for cer in ex.CERS:
        def n(variant: str, aal: str) -> str:
            d = rows(df, "fig4", variant, aal, cer)
            return fmt(ci(d.norm)) if not d.empty else "–"
        d5 = rows(df, "fig4", "primary", "aal5", cer)
        dx = rows(df, "fig4", "primary", "aalx", cer)
        lines.append(f"| {cer:g} | {_paper('aal5', cer)} | {n('primary', 'aal5')} | {n('primary', 'aalx')} | "
                     f"{_paper('aalx', cer)} | {n('rayleigh', 'aal5')} | {n('rayleigh', 'aalx')} | "
                     f"{fmt(ci(d5.delay_mean_s))} | {fmt(ci(dx.delay_mean_s))} | "
                     f"{d5.timeouts.mean():.1f} / {d5.fast_retransmits.mean():.1f} |")
    return lines


def _offered(df: pd.DataFrame) -> list[str]:
    lines = ["| reading | AAL5 offered Mb/s | AAL-X offered Mb/s |", "|---|---|---|"]
    for name in ex.READINGS:
        exp = "fig4" if name in ex.FIG4 else "sens"
        g = [rows(df, exp, name, a, 0.0).goodput_bps.mean() / 1e6 for a in ex.AALS]
        lines.append(f"| {name} | {g[0]:.4f} | {g[1]:.4f} |")
    return lines


def _readings(df: pd.DataFrame) -> list[str]:
    cers = sorted({x for x in df[df.experiment == "sens"].x.unique() if x > 0})
    head = " | ".join(f"AAL5 {c:g}" for c in cers)
    lines = [f"| reading | {head} | AAL-X {max(cers):g} | AAL-X − AAL5 at 1e-3 | C2 (±0.15 of 0.7 at 1e-3) |",
             "|---|" + "---|" * (len(cers) + 3)]
    for name in ex.READINGS:
        exp = "fig4" if name in ex.FIG4 else "sens"
        cells = [fmt(ci(rows(df, exp, name, "aal5", c).norm)) for c in cers]
        a5 = rows(df, exp, name, "aal5", 1e-3).norm.mean()
        ax = rows(df, exp, name, "aalx", 1e-3).norm.mean()
        top = fmt(ci(rows(df, exp, name, "aalx", max(cers)).norm))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {top} | {ax - a5:.3f} | "
                     f"{'in' if abs(a5 - 0.7) <= 0.15 else 'out'} |")
    return lines


def _delay(df: pd.DataFrame) -> list[str]:
    cell_s = paper.CELL_BYTES * 8 / paper.DS1_BPS
    segs = math.ceil(paper.RCV_WINDOW_BYTES / 1460)
    cells = segs * math.ceil((1460 + paper.IP_TCP_HEADER_BYTES + paper.AAL5_TRAILER_BYTES) / paper.CELL_PAYLOAD_BYTES)
    g = rows(df, "fig4", "primary", "aal5", 0.0).goodput_bps.mean()
    need_cells = paper.DELAY_S["aal5"] / cell_s
    file_bytes = 2 * paper.DELAY_S["aal5"] * g / 8
    added = probe_added_delay(df, 1e-3)
    d0 = ci(rows(df, "fig4", "primary", "aal5", 0.0).delay_mean_s)
    return [
        f"- A cell takes {1e6 * cell_s:.1f} µs at DS1. A full 64 KB window is {segs} segments of 1460 B, "
        f"{cells} cells: {cells * cell_s:.3f} s of line time; the 1000-cell buffer holds "
        f"{paper.BUFFER_CELLS * cell_s:.3f} s. So no TCP segment can wait more than about 0.3–0.4 s in this "
        f"network, and ours wait {fmt(d0)} s on average at CER 0 (the buffer stays full: the window exceeds it).",
        f"- The paper's 1.5 s would need {need_cells:.0f} cells (≈ {need_cells * 48 / 1024:.0f} KB) queued ahead of "
        "a segment — four times the receive window. The paper's delay starts when 'an application data packet is "
        "sent to the source TCP layer' (§3.2), so it includes the wait in the sender's socket buffer, which a "
        f"greedy source fills without bound. A file of F bytes handed over at once and carried at the goodput G "
        f"waits F/(2G) on average per byte: at G = {g / 1e6:.3f} Mb/s, 1.5 s is F ≈ {file_bytes / 1e3:.0f} kB. "
        "The paper's number is therefore a property of its FTP file size (not given), not of the link; our "
        "packet delay, which starts at TCP's hand-off, cannot show it.",
        "- The ordering does carry over: AAL-X's delay exceeds AAL5's because TCP over AAL-X never backs off and "
        "keeps the base-station buffer full, while AAL5's losses shrink TCP's window and its queue; S-ARQ's own "
        f"recovery adds only {1e3 * added['mean']:.2f} ms per lost PDU (CBR probe, CER 1e-3; link round trip "
        f"{1e3 * link_rtt_s():.2f} ms).",
    ]


def _lopt() -> list[str]:
    t = lopt_table()
    t = t[t.cer.notna()]
    lines = ["| CER | BER (independent bits) | L_opt eq. (2) bits | numeric maximizer bits | grid L octets (i) |",
             "|---|---|---|---|---|"]
    for r in t.itertuples():
        lines.append(f"| {r.cer:g} | {r.ber:.3e} | {r.lopt_bits:.1f} | {r.numeric_bits:.1f} | "
                     f"{r.grid_octets} ({(r.grid_octets + 4) // 48}) |")
    return lines


def write(out: Path, df: pd.DataFrame, checks: list[Check], figures: list[str], meta: dict[str, Any]) -> Path:
    src = meta.get("source_commit")
    lines = ["# Akyildiz & Joe, TCP over AAL-X vs AAL5 on wireless ATM (Fig. 4): reproduction report", "",
             f"Generated by `xlayer reproduce aalx{' --quick' if meta['quick'] else ''}` with xlayer "
             f"{meta['version']} (commit {meta['commit']}"
             + (f"; Python source at {src}" if src and src != meta["commit"] else "")
             + f"): {meta['runs']} runs, {meta['wall_s']:.0f} s wall time on {meta['workers']} workers. "
             "Modelling choices and every difference: `docs/reproductions/aalx.md`.",
             "Normalized throughput = goodput (in-order application bytes at the mobile over the run) ÷ the "
             "goodput of the same configuration at CER 0 (C0). CIs are Student-t over seeds; the paper gives "
             "no error bars.", "",
             "## Checks", "", "| check | claim | threshold (source) | result | measured |", "|---|---|---|---|---|"]
    for c in checks:
        lines.append(f"| {c.name} | {c.claim} | {c.threshold} | {verdict(c)} | {c.detail} |")
    lines += ["", "## Fig. 4: throughput and delay against CER", "", "![fig4](fig4.png)", "",
              "Paper values are the ones §3.2's text states (the only numbers it prints). Normalized throughput "
              "mean ± 95% CI; delay = the flow table's `delay_mean_s` (per received TCP segment, from TCP's "
              "hand-off to the network to the mobile).", ""] + _fig4(df)
    lines += ["", "## Offered load (C0): goodput at CER 0", ""] + _offered(df)
    lines += ["", "## Delay: why the paper's 1.5–1.7 s is not a network delay", ""] + _delay(df)
    lines += ["", "## Readings: what moves AAL5's curve", "", "![sensitivity](sensitivity.png)", "",
              "Each row changes one thing against the primary reading (first row) and is normalized by its own "
              "CER-0 run; the primary was chosen from the paper's text before the checks were run "
              "(docs/reproductions/aalx.md).", ""] + _readings(df)
    lines += ["", "## Eq. (2): the optimal CP-ARQ payload (C4)", "", "![lopt](lopt.png)", ""] + _lopt()
    lines += ["", "Raw per-run results: `results.csv`. Figures also as SVG.", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path

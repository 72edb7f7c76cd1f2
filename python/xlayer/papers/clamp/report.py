"""report.md of the CLAMP reproduction."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from .checks import Check

# What Andrew & Hanly states in numbers (its figures are images, absent from the seed text,
# so no curve values can be read off them; these are the quantitative statements).
PAPER: dict[str, str] = {
    "Theorem 1": "q(t) of eq. (2) converges iff b < π/2; b = 1 is used",
    "eq. (11)": "equilibrium queue q* = (kτ + a)/b, rates μ_c/k",
    "Fig. 2 parameters": "10 Mb/s, 50 ms, buffer 18000 B, a = 5500 B, τ = 500 B; 6000 B at 10 Mb/s is 4.8 ms",
    "Fig. 2 text": "CLAMP's queue tracks the fluid model closely; CLAMP's window has much less fast time-scale fluctuation",
    "Tables I-II": "S_i-X 100 Mb/s, d_i/2; X-R_i 1 ms; 1500 B packets; τ 500 B; b 1; d = 30, 130, 10, 180 ms",
    "§V-B": "G = 20, f_d 0.6 / 60 Hz, SNR 4 (6 dB), 3 ms slots, W0 4.3 MHz, C_max 10 Mb/s, n = 5 / 15, loss 1e-3",
    "§V-E": "NewReno: 30 ms flow gets more than 130 ms flow, strikingly more for 10 ms vs 180 ms; "
            "CLAMP (10 m/s): the three queues get about equal rates, the 10 and 180 ms flows about equal",
    "§V-F": "not much between the protocols in total throughput; at 50 ms and 10.1 m/s NewReno takes "
            "more than twice as long to download 1 MB",
    "§V-G": "CLAMP AWND slightly above NewReno's mean CWND; AWND < CWND almost always at 50 ms",
    "§V-H": "TCP buffer 60 kB; CLAMP a chosen for the same mean queue; queue fluctuations similar",
    "§V-J": "W0 620 kHz, C_max 1.44 Mb/s: same conclusions; knees at lower delays",
}


def _table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        lines.append("| " + " | ".join(_cell(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def sweep_table(sweeps: dict[tuple[str, str], pd.DataFrame]) -> str:
    rows = []
    for (fading, proto), df in sweeps.items():
        for value, g in df.groupby("value"):
            rows.append({
                "channel": fading, "protocol": proto,
                "a or buffer (B)": int(value),
                "delay (ms)": 1e3 * g["qdelay"].mean(),
                **{f"{f} (Mb/s)": g[f"thr_{f}"].mean() / 1e6 for f in ("f30", "f130", "f10", "f180")},
                "total (Mb/s)": g["total"].mean() / 1e6,
                "Jain 4": g["jain4"].mean(),
                "1 MB (s)": g["download_s"].mean(),
                "timeouts": sum(g[f"timeouts_{f}"].mean() for f in ("f30", "f130", "f10", "f180")),
                "seeds": len(g),
            })
    return _table(pd.DataFrame(rows))


def write(out: Path, checks: Sequence[Check], figures: Sequence[Path], sweeps: dict[tuple[str, str], pd.DataFrame],
          fig2: dict[str, Any], fig6: dict[float, dict[str, Any]], vh: dict[str, Any], settings: dict[str, Any],
          elapsed_s: float, extra: Sequence[str] = ()) -> Path:
    failed = sum(c.passed is False for c in checks)
    lines = [
        "# CLAMP (Andrew & Hanly) — reproduction report",
        "",
        f"Mode: {'quick' if settings['quick'] else 'full'}; {settings['seeds']} seeds per point, "
        f"{settings['duration_s']:g} s runs (statistics after {settings['warm_s']:g} s); wall time {elapsed_s:.0f} s. "
        f"Checks: {len(checks) - failed - sum(c.passed is None for c in checks)} pass, {failed} fail, "
        f"{sum(c.passed is None for c in checks)} not run. Modelling choices and discussion: "
        "docs/reproductions/clamp.md.",
        "",
        "## Checks",
        "",
        "| check | what | result | numbers |",
        "|---|---|---|---|",
    ]
    for c in checks:
        lines.append(f"| {c.name} | {c.title} | **{c.status}** | {c.summary} |")
    lines += ["", "## The paper's numbers", "",
              "The seed text has no figure images, so no values can be read off Figs. 2-8; these are its "
              "quantitative statements.", "", "| where | statement |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in PAPER.items()]
    lines += ["", "## Fig. 2 phases", "", _table(pd.DataFrame([
        {"phase (s)": f"{p['t0']:g}-{p['t1']:g}", "k": p["k"], "queue (B)": p["queue"], "kτ + a (B)": p["q_star"],
         "rates (Mb/s)": ", ".join(f"{v / 1e6:.2f}" for v in p["rates_bps"].values()),
         "CoV AWND (CLAMP)": max(p["cov_clamp"].values()), "CoV CWND (NewReno)": min(p["cov_newreno"].values())}
        for p in fig2["phases"]])),
        "", f"Packets lost: CLAMP {fig2['lost']['clamp']}, NewReno {fig2['lost']['newreno']}.",
        "", "## Sweeps (means over seeds)", "", sweep_table(sweeps), ""]
    lines += ["## Fig. 6", ""]
    for t, r in fig6.items():
        lines.append(f"- {t * 1e3:.0f} ms: a = {r['a']:.0f} B, NewReno buffer = {r['buffer']:.0f} B; CLAMP AWND ≤ CWND "
                     f"{100 * r['awnd_below_cwnd']:.1f}% of the time; mean AWND {r['clamp_awnd'].mean():.0f} B vs "
                     f"NewReno mean CWND {r['newreno_cwnd'].mean():.0f} B")
    lines += ["", "## Section V-H", "",
              f"NewReno buffer {vh['buffer']:.0f} B, mean queue {vh['queue_mean']['newreno']:.0f} B; CLAMP a = {vh['a']:.0f} B, "
              f"mean queue {vh['queue_mean']['clamp']:.0f} B.", ""]
    for name in ("newreno", "clamp"):
        r = vh[name]
        lines.append(f"- {name}: CoV of the 1 s delivered rate {r['rate_cov']:.3f}, queue CoV {r['queue_cov']:.3f}, long-flow goodput "
                     f"{r['long_goodput_bps'] / 1e6:.2f} Mb/s, mean short-flow completion {r['short_completion_s']:.3f} s")
    lines += ["", *extra, "## Figures", ""] + [f"![{p.stem}]({p.name})" for p in figures] + [""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


__all__ = ["PAPER", "write"]

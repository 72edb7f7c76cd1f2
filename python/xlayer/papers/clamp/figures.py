"""Figures of the CLAMP reproduction (matplotlib, Agg backend): each a PNG with an SVG
beside it; curves over seeds are mean ± 95% Student-t CI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from . import experiments as ex  # noqa: E402

FLOW_STYLE = {"f30": ("30 ms", "-"), "f130": ("130 ms", "-"), "f10": ("10 ms (R34)", "-."), "f180": ("180 ms (R34)", "--")}
PROTO = {"clamp": "CLAMP", "newreno": "TCP NewReno"}
FADING = {"slow": "0.1 m/s", "fast": "10 m/s", "low_rate": "10 m/s, 1.44 Mb/s"}


def save(fig: Any, path: Path) -> Path:
    """`path` (PNG) and the same figure as SVG beside it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)
    return path


_save = save


def log_axis(ax: Any, which: str) -> None:
    """A log axis labelled in plain numbers at 1, 2, 5 × 10^k (never only "10⁰")."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _log_x(ax: Any) -> None:
    log_axis(ax, "x")


def _errorbar(ax: Any, c: pd.DataFrame, scale: float, **kw: Any) -> None:
    ax.errorbar(c["qdelay"] * 1e3, c["mean"] / scale, yerr=c["hw"].fillna(0) / scale,
                xerr=c["qdelay_hw"].fillna(0) * 1e3, capsize=2, **kw)


def fig2(res: dict[str, Any], out: Path) -> Path:
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    active = {"flow1": (0, 250), "flow2": (50, 150), "flow3": (100, 200)}
    for f, color in zip(("flow1", "flow2", "flow3"), ("C0", "C1", "C2")):
        t0, t1 = active[f]
        for run, kw in (("newreno", {"alpha": 0.35, "lw": 0.7, "label": f"NewReno CWND {f}"}),
                        ("clamp", {"label": f"CLAMP AWND {f}"})):
            s = ex.metric_series(res[run], f, "rwnd_bytes" if run == "clamp" else "cwnd_bytes")
            a.plot(*_xy(s[(s.index >= t0) & (s.index < t1)]), color=color, **kw)
    a.set_ylim(0, 1.6e5)
    a.set_ylabel("window (bytes)")
    a.legend(ncol=2, fontsize=7)
    a.set_title("Fig. 2(a): windows (CLAMP AWND, NewReno CWND), deterministic 10 Mb/s link, 50 ms RTT", fontsize=10)
    b.plot(*_xy(ex.metric_series(res["newreno"], "ap", "queue_bytes")), color="0.6", lw=0.6, label="NewReno")
    b.plot(*_xy(ex.metric_series(res["clamp"], "ap", "queue_bytes")), color="C3", lw=0.8, label="CLAMP")
    for ph in res["phases"]:
        b.hlines(ph["q_star"], ph["t0"], ph["t1"], colors="k", linestyles="--", lw=1)
    b.plot([], [], "k--", label="fluid model kτ + a")
    b.set_xlabel("time (s)")
    b.set_ylabel("AP queue (bytes)")
    b.set_title("Fig. 2(b): AP queue against the fluid model's kτ + a (eq. (11))", fontsize=10)
    b.legend(fontsize=7)
    return _save(fig, out / "fig2_deterministic_link.png")


def _xy(s: pd.Series) -> tuple[Any, Any]:
    return s.index.to_numpy(), s.to_numpy()


def fig4(sweeps: dict[tuple[str, str], pd.DataFrame], out: Path, fadings: tuple[str, ...] = ("slow", "fast"),
         name: str = "fig4_throughput_per_flow.png", title: str = "Fig. 4") -> Path:
    fig, axes = plt.subplots(len(fadings), 2, figsize=(10, 4 * len(fadings)), squeeze=False, sharey="row")
    for row, fading in enumerate(fadings):
        for col, proto in enumerate(("clamp", "newreno")):
            ax = axes[row][col]
            df = sweeps[(fading, proto)]
            for f, (label, ls) in FLOW_STYLE.items():
                _errorbar(ax, ex.curve(df, f"thr_{f}"), 1e6, ls=ls, marker="o", ms=3, label=label)
            ax.set_title(f"{title}: per-flow throughput, {PROTO[proto]}\n{FADING[fading]} (mean ± 95% CI)", fontsize=9)
            ax.axvline(50, color="0.7", lw=0.8, ls=":", label="50 ms (§V-E's comparison point)")
            ax.set_xlabel("mean queueing delay (ms)")
            ax.set_ylabel("throughput (Mb/s)")
            _log_x(ax)
            ax.legend(fontsize=7)
    return _save(fig, out / name)


def fig5(sweeps: dict[tuple[str, str], pd.DataFrame], out: Path) -> Path:
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for fading, marker in (("slow", "s"), ("fast", "o")):
        for proto, ls in (("clamp", "-"), ("newreno", "--")):
            df = sweeps[(fading, proto)]
            lab = f"{PROTO[proto]}, {FADING[fading]}"
            _errorbar(a, ex.curve(df, "total"), 1e6, ls=ls, marker=marker, ms=3, label=lab)
            _errorbar(b, ex.curve(df, "download_s"), 1.0, ls=ls, marker=marker, ms=3, label=lab)
    c = ex.summary_at(sweeps[("fast", "clamp")], "download_s", 0.050)["mean"]
    b.plot([50], [2 * c], marker="v", color="k", ls="none", ms=7,
           label="§V-F: NewReno > 2× CLAMP at 50 ms, 10 m/s (bound)")
    a.set_title("Fig. 5(a): total throughput vs mean queueing delay (mean ± 95% CI)", fontsize=9)
    a.set_ylabel("total throughput (Mb/s)")
    b.set_title("Fig. 5(b): mean time to download 1 MB (mean ± 95% CI)", fontsize=9)
    b.set_ylabel("download time (s)")
    log_axis(b, "y")
    for ax in (a, b):
        ax.set_xlabel("mean queueing delay (ms)")
        _log_x(ax)
        ax.legend(fontsize=7)
    return _save(fig, out / "fig5_total_and_download.png")


def fig6(res: dict[float, dict[str, Any]], out: Path) -> Path:
    fig, axes = plt.subplots(len(res), 1, figsize=(9, 3.3 * len(res)), squeeze=False)
    for ax, (t, r) in zip(axes[:, 0], res.items()):
        ax.plot(*_xy(r["newreno_cwnd"]), color="0.55", lw=0.6, label=f"TCP CWND (buffer {r['buffer'] / 1e3:.0f} kB)")
        ax.plot(*_xy(r["clamp_cwnd"]), color="C2", lw=0.6, alpha=0.6, label="CWND in the CLAMP run")
        ax.plot(*_xy(r["clamp_awnd"]), color="C3", lw=1.0, label=f"CLAMP AWND (a = {r['a'] / 1e3:.1f} kB)")
        ax.axhline(r["newreno_cwnd"].mean(), color="k", lw=0.8, ls="--", label="mean TCP CWND")
        log_axis(ax, "y")  # the CLAMP run's CWND winds up far above the AWND that holds it
        ax.set_title(f"Fig. 6: windows of the 30 ms flow, {t * 1e3:.0f} ms mean queueing delay, 10 m/s "
                     f"(AWND ≤ CWND {100 * r['awnd_below_cwnd']:.0f}% of the time)", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("window (bytes, log)")
        ax.legend(fontsize=7, ncol=2)
    return _save(fig, out / "fig6_windows_30ms_flow.png")


def fig7(sweeps: dict[tuple[str, str], pd.DataFrame], out: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for fading, marker in (("slow", "s"), ("fast", "o")):
        for proto, label in (("newreno", "TCP buffer"), ("clamp", "CLAMP a")):
            c = ex.curve(sweeps[(fading, proto)], "total")
            ax.errorbar(c["qdelay"] * 1e3, c["value"] / 1e3, xerr=c["qdelay_hw"].fillna(0) * 1e3, marker=marker,
                        ms=4, capsize=2, ls="-" if proto == "clamp" else "--", label=f"{label}, {FADING[fading]}")
    _log_x(ax)
    log_axis(ax, "y")
    ax.set_xlabel("mean queueing delay (ms, mean ± 95% CI)")
    ax.set_ylabel("TCP buffer per queue or CLAMP a (kB)")
    ax.set_title("Fig. 7: TCP buffer (per queue) and CLAMP a vs delay", fontsize=10)
    ax.legend(fontsize=7)
    return _save(fig, out / "fig7_buffer_and_a.png")


def short_flows(res: dict[str, Any], out: Path) -> Path:
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for name, color in (("newreno", "0.5"), ("clamp", "C3")):
        r = res[name]
        label = f"{PROTO[name]}" + (f" (a = {res['a'] / 1e3:.0f} kB)" if name == "clamp" else f" (buffer {res['buffer'] / 1e3:.0f} kB)")
        a.plot(*_xy(r["rate"] / 1e6), color=color, lw=0.7, label=label)
        b.plot(*_xy(r["queue"] / 1e3), color=color, lw=0.7, label=label)
    a.set_ylabel("rate (Mb/s), 1 s mean\n(AP delivered rate)")
    a.set_title("§V-H (a): rate of the long-lived flow (AP delivered rate, 1 s mean)", fontsize=10)
    b.set_ylabel("AP queue (kB)")
    b.set_xlabel("time (s)")
    b.set_title("§V-H (b): AP queue, one mobile, 10 m/s", fontsize=10)
    for ax in (a, b):
        ax.legend(fontsize=7)
    return _save(fig, out / "vh_short_flows.png")


def all_figures(out: Path, fig2_res: dict[str, Any], sweeps: dict[tuple[str, str], pd.DataFrame],
                fig6_res: dict[float, dict[str, Any]], vh: dict[str, Any]) -> list[Path]:
    return [
        fig2(fig2_res, out),
        fig4(sweeps, out),
        fig5(sweeps, out),
        fig6(fig6_res, out),
        fig7(sweeps, out),
        fig4(sweeps, out, ("low_rate",), "fig8_low_rate_per_flow.png", "Fig. 8"),
        short_flows(vh, out),
    ]


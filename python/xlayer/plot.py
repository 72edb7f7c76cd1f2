"""Figures of one run: `xlayer plot RUN_DIR` (from the files `xlayer run` writes) and
`RunResult.plot(out_dir)` (from a result in memory).

Each figure is written as PNG and SVG: congestion window and smoothed RTT per flow,
queue per link direction and goodput per flow over time (from series.parquet), and
goodput against 95th-percentile one-way delay per flow (from flows.parquet). A figure
whose data the run does not have (no TCP flow, series turned off, no queue ever built)
is skipped and the reason reported. matplotlib is an optional dependency (the `plot`
extra); it is imported only here, when a figure is drawn.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Union

import numpy as np
import pandas as pd

from .extras import require
from .outdir import MARKER, atomic_dir, mark, target_path

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_LINES = 12  # curves per figure; with more entities, those with the highest mean
MAX_NAMED = 20  # points of the scatter that get a colour and a legend entry each
FORMATS = ("png", "svg")
PNG_DPI = 130


class PlotError(ValueError):
    """The figures cannot be made as asked (not a run's folder, --out inside it)."""


@dataclass
class Plotted:
    """What was written: the folder, its files, and the figures skipped with the reason."""

    out: Path
    files: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def plot_run(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, *,
             overwrite: bool = False) -> Plotted:
    """Draw the figures of the run in `run_dir` (a folder `xlayer run` or
    `RunResult.to_dir` wrote) into `out`, by default `run_dir/plots`. `out` is written
    atomically and by the rules of `xlayer run --out`: new, empty, or a previous plot
    folder (replaced); another non-empty folder only with `overwrite`."""
    src = Path(run_dir)
    flows, series, manifest = read_run(src)
    dest = src / "plots" if out is None else Path(out)
    here, there = target_path(dest), src.resolve()
    if here == there or here in there.parents:
        raise PlotError(f"--out {dest}: is the run's folder or contains it; the figures would "
                        "replace the results they are drawn from. Name another folder, e.g. "
                        f"{src / 'plots'}")
    return draw(flows, series, manifest, dest, overwrite=overwrite, source=str(src))


def read_run(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """flows.parquet, series.parquet and manifest.json of a run's folder."""
    if not run_dir.is_dir():
        raise PlotError(f"{run_dir}: not a folder; give the --out folder of an `xlayer run`")
    if (run_dir / "sweep.parquet").exists():
        raise PlotError(f"{run_dir}: a sweep's output; `xlayer plot` draws one run (`xlayer "
                        "report STORE` plots sweeps kept in a store)")
    missing = [f for f in ("flows.parquet", "series.parquet") if not (run_dir / f).is_file()]
    if missing:
        raise PlotError(f"{run_dir}: not a run's output folder: {', '.join(missing)} missing "
                        "(`xlayer run --out DIR` writes flows.parquet, series.parquet, "
                        "links.parquet and manifest.json)")
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    flows = pd.read_parquet(run_dir / "flows.parquet")
    series = pd.read_parquet(run_dir / "series.parquet")
    return flows, series, manifest if isinstance(manifest, dict) else {}


def draw(flows: pd.DataFrame, series: pd.DataFrame, manifest: dict[str, Any],
         out: str | os.PathLike[str], *, overwrite: bool = False, source: str | None = None) -> Plotted:
    """Draw every figure from a run's flow table, series and manifest into `out`."""
    require("matplotlib", "Plotting (xlayer plot, RunResult.plot)")
    import matplotlib

    context = _context(manifest)
    done = Plotted(Path(out))
    with atomic_dir(out, overwrite=overwrite) as stage, matplotlib.rc_context(_STYLE):
        for stem, make in _FIGURES:
            fig = make(flows, series, context)
            if isinstance(fig, str):
                done.skipped[stem] = fig
                continue
            for ext in FORMATS:
                fig.savefig(stage / f"{stem}.{ext}", dpi=PNG_DPI,
                            metadata={"Date": None} if ext == "svg" else None)
                done.files.append(f"{stem}.{ext}")
        from .api import version, write_json

        write_json({MARKER: mark("plot"), "version": version(), "source": source,
                    "scenario_name": manifest.get("scenario_name"), "seed": manifest.get("seed"),
                    "run": manifest.get("run"), "fingerprint": manifest.get("fingerprint"),
                    "files": [*done.files, "manifest.json"], "skipped": done.skipped},
                   stage / "manifest.json")
    return done


# Deterministic SVG ids; text kept as text in SVG (searchable, smaller).
_STYLE: Any = {"svg.hashsalt": "xlayer", "svg.fonttype": "none", "axes.titlesize": "medium"}


def _context(manifest: dict[str, Any]) -> str:
    parts = [str(manifest.get("scenario_name") or "run")]
    parts += [f"{k} {manifest[k]}" for k in ("seed", "run") if manifest.get(k) is not None]
    if manifest.get("fingerprint"):
        parts.append(f"fingerprint {manifest['fingerprint']}")
    return " · ".join(parts)


def _figure(title: str, context: str) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.8), layout="constrained")
    ax = fig.add_subplot()
    fig.suptitle(title, fontsize="large")
    ax.set_title(context, fontsize="small", color="0.35")
    ax.grid(alpha=0.3)
    ax.ticklabel_format(axis="both", style="plain", useOffset=False)
    return fig, ax


def _wide(series: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One column per entity (in the order the run reports them), indexed by time."""
    s = series[series["metric"] == metric]
    wide = s.pivot(index="time_s", columns="entity", values="value")
    return wide[list(dict.fromkeys(s["entity"]))].astype(float)


def _interval(series: pd.DataFrame) -> float | None:
    t = np.unique(series["time_s"].to_numpy(dtype=float))
    return float(np.median(np.diff(t))) if len(t) > 1 else None


def _lines(series: pd.DataFrame, metric: str, what: str, scale: float, ylabel: str, title: str,
           context: str, keep: Callable[[pd.Series], bool] | None = None,
           legend: str = "flow") -> Union[Figure, str]:
    """A time-series figure of `metric`, one curve per entity (at most MAX_LINES)."""
    if series.empty:
        return "the run has no time series (output.series_interval = \"0s\")"
    wide = _wide(series, metric)
    wide = wide[[c for c in wide.columns if wide[c].notna().any() and (keep is None or keep(wide[c]))]]
    if wide.shape[1] == 0:
        return f"no {what} in this run"
    shown = list(wide.columns)
    if len(shown) > MAX_LINES:
        shown = list(wide.mean().sort_values(ascending=False).index[:MAX_LINES])
        title += f" ({MAX_LINES} of {wide.shape[1]} {what} with the highest mean)"
    fig, ax = _figure(title, context)
    for i, name in enumerate(shown):
        ax.plot(wide.index, wide[name] * scale, label=str(name), linewidth=1.1,
                color=_color(i, len(shown)))
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(float(wide.index.min()), float(wide.index.max()))
    ax.set_ylim(bottom=0)
    _legend(ax, legend)
    return fig


def _legend(ax: Axes, title: str) -> None:
    """Outside the plot, on the right: it never hides a curve."""
    ax.legend(title=title, fontsize="small", title_fontsize="small", loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _cwnd(flows: pd.DataFrame, series: pd.DataFrame, context: str) -> Union[Figure, str]:
    return _lines(series, "cwnd_bytes", "TCP flows", 1e-3, "congestion window (kB)",
                  "Congestion window per TCP flow (cwnd_bytes, sampled)", context)


def _srtt(flows: pd.DataFrame, series: pd.DataFrame, context: str) -> Union[Figure, str]:
    return _lines(series, "srtt_s", "flows with an RTT estimate", 1e3, "smoothed RTT (ms)",
                  "Smoothed round-trip time per flow (srtt_s, sampled)", context)


def _queue(flows: pd.DataFrame, series: pd.DataFrame, context: str) -> Union[Figure, str]:
    return _lines(series, "queue_bytes", "link directions whose queue ever held a packet", 1e-3,
                  "queue (kB waiting)", "Queue per link direction (queue_bytes, sampled; only "
                  "directions whose queue ever held a packet)", context,
                  keep=lambda col: bool((col > 0).any()), legend="link:direction")


def _goodput(flows: pd.DataFrame, series: pd.DataFrame, context: str) -> Union[Figure, str]:
    dt = _interval(series) if not series.empty else None
    every = f" over each {dt * 1e3:g} ms interval" if dt else ""
    return _lines(series, "goodput_bps", "flows", 1e-6, "goodput (Mbit/s)",
                  f"Goodput per flow{every} (goodput_bps)", context)


def _scatter(flows: pd.DataFrame, series: pd.DataFrame, context: str) -> Union[Figure, str]:
    need = {"goodput_bps", "delay_p95_s", "name"}
    if flows.empty or not need <= set(flows.columns):
        return "the flow table is empty"
    rows = flows[flows["receiver"] != "*"] if "receiver" in flows.columns else flows
    rows = rows[rows["delay_p95_s"].notna()]
    if rows.empty:
        return "no flow received anything (no one-way delay)"
    group = rows["dst"] != rows["receiver"] if {"dst", "receiver"} <= set(rows.columns) else None
    labels = [f"{n} → {r}" if group is not None and g else str(n)
              for n, r, g in zip(rows["name"], rows.get("receiver", rows["name"]),
                                 group if group is not None else [False] * len(rows))]
    fig, ax = _figure("Goodput against 95th-percentile one-way delay, per flow "
                      "(better: up and right)", context)
    x = rows["delay_p95_s"].to_numpy(dtype=float) * 1e3
    y = rows["goodput_bps"].to_numpy(dtype=float) * 1e-6
    named = len(labels) <= MAX_NAMED
    if not named:
        ax.set_title(f"{context}\n{len(labels)} flows (too many to name each)", fontsize="small",
                     color="0.35")
    for i, (xi, yi, label) in enumerate(zip(x, y, labels)):
        ax.scatter([xi], [yi], s=60 if named else 25, color=_color(i, len(labels)) if named else "C0",
                   edgecolor="black", linewidth=0.6, zorder=3, label=label if named else None)
    if len(labels) <= MAX_LINES:
        for (xi, yi), names in _nearby(x, y, labels):
            ax.annotate(", ".join(names), (xi, yi), textcoords="offset points", xytext=(7, 5),
                        fontsize="small")
    ax.margins(0.15)
    ax.set_ylim(bottom=0)
    ax.invert_xaxis()
    ax.set_xlabel("95th-percentile one-way delay (ms; lower is to the right)")
    ax.set_ylabel("goodput over the flow's active time (Mbit/s)")
    if named:
        _legend(ax, "flow")
    return fig


def _color(i: int, n: int) -> Any:
    """Ten distinct colours; up to twenty from the paired palette."""
    if n <= 10:
        return f"C{i}"
    from matplotlib import colormaps

    return colormaps["tab20"](i % 20)


def _nearby(x: np.ndarray, y: np.ndarray, labels: list[str]) -> list[tuple[tuple[float, float], list[str]]]:
    """Labels of points that would overlap on the plot (within 3% of each axis' span) are
    joined into one note at the first of them."""
    xspan = max(float(np.ptp(x)), 0.1 * float(np.abs(x).max()), 1e-12)
    yspan = max(float(np.abs(y).max()), 1e-12)  # the y axis starts at 0
    notes: list[tuple[tuple[float, float], list[str]]] = []
    for xi, yi, label in zip(x, y, labels):
        for (cx, cy), names in notes:
            if abs(xi - cx) < 0.03 * xspan and abs(yi - cy) < 0.03 * yspan:
                names.append(label)
                break
        else:
            notes.append(((float(xi), float(yi)), [label]))
    return notes


_FIGURES: tuple[tuple[str, Callable[[pd.DataFrame, pd.DataFrame, str], Union[Figure, str]]], ...] = (
    ("cwnd", _cwnd),
    ("srtt", _srtt),
    ("queue", _queue),
    ("goodput", _goodput),
    ("goodput_vs_delay", _scatter),
)

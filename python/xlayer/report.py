"""`xlayer report STORE --by AXIS --metric COLUMN`: a Markdown page with tables and plots
of a results store: the metric's mean and 95% confidence interval against the axis (one
line per scheme), and throughput against 95th-percentile one-way delay per scheme, as
Pantheon's reports draw it (delay axis reversed and logarithmic: better is up and right).

A scheme is what the curves compare: a flow column (`name`, `protocol`) or an axis (say
`flow.f0.tcp.congestion_control`).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .extras import require
from .outdir import MARKER, atomic_dir, mark
from .stats import summarize

if TYPE_CHECKING:
    import pandas as pd

THROUGHPUT, DELAY = "goodput_bps", "delay_p95_s"
FILES = ("report.md", "summary.csv", "manifest.json")


class ReportError(ValueError):
    """The report cannot be made as asked (a column that is not there, nothing stored)."""


def report(store: Any, out: str | os.PathLike[str], by: str, metric: str, *, plan: str | None = None,
           scheme: str = "name", fmt: str = "png", overwrite: bool = False) -> Path:
    """Write the report of `store` (a path or `xlayer.Store`) into `out` (atomically, as
    `--out` of `xlayer run`) and return the path of report.md."""
    from .store import Store

    require("matplotlib", "xlayer report (its plots)")
    st = store if isinstance(store, Store) else Store(store, create=False)
    if fmt not in ("png", "svg"):
        raise ReportError(f"--format must be png or svg, got {fmt!r}")
    df = st.frame(plan=plan, columns=[by, metric, scheme, THROUGHPUT, DELAY])
    axes = list(df.attrs["xlayer"]["params"])
    pts = st.points(plan)
    if df.empty:
        raise ReportError(f"{st.shown}: no finished runs" + (f" in plan {plan!r}" if plan else ""))
    for what, col in (("--by", by), ("--metric", metric), ("--scheme", scheme)):
        if col not in df.columns:
            raise ReportError(f"{what} {col}: not an axis or a column of the flow table; axes: "
                              f"{', '.join(axes) or 'none'}; columns: {', '.join(_columns(df, axes))}")
    summary = summarize(df, by=[by, scheme], metrics=[metric])
    with atomic_dir(out, overwrite=overwrite) as stage:
        images = [_curve(summary, by, scheme, metric, stage / f"{_slug(metric)}_vs_{_slug(by)}.{fmt}")]
        if {THROUGHPUT, DELAY} <= set(df.columns):
            images.append(_scatter(df, scheme, stage / f"throughput_vs_delay.{fmt}"))
        summary.to_csv(stage / "summary.csv", index=False)
        text = _markdown(st, plan, df, pts, summary, by, scheme, metric, images)
        (stage / "report.md").write_text(text, encoding="utf-8")
        from .api import version, write_json

        write_json({MARKER: mark("report"), "version": version(), "store": str(st.root), "plan": plan,
                    "by": by, "metric": metric, "scheme": scheme, "files": [*FILES, *images]},
                   stage / "manifest.json")
    return Path(out) / "report.md"


def _columns(df: pd.DataFrame, axes: Sequence[str]) -> list[str]:
    return [c for c in df.columns if c not in (*axes, "seed", "run", "record", "fingerprint")]


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def _positions(values: Sequence[Any]) -> tuple[list[float], list[str] | None]:
    """x positions of axis values: the numbers themselves, or 0, 1, 2... with labels."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values], None
    return list(map(float, range(len(values)))), [str(v) for v in values]


def _curve(summary: pd.DataFrame, by: str, scheme: str, metric: str, path: Path) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    order = list(dict.fromkeys(summary[by]))
    xs, labels = _positions(order)
    where = dict(zip(map(str, order), xs))
    for name, g in summary.groupby(scheme, sort=False):
        x = [where[str(v)] for v in g[by]]
        hw = g["ci_half_width"].fillna(0.0)
        ax.errorbar(x, g["mean"], yerr=hw, marker="o", capsize=4, label=str(name))
    if labels is not None:
        ax.set_xticks(xs, labels)
    ax.set_xlabel(by)
    ax.set_ylabel(f"{metric} (mean ± 95% CI)")
    ax.grid(alpha=0.3)
    ax.legend(title=scheme, fontsize="small")
    fig.savefig(path)
    return path.name


def _scatter(df: pd.DataFrame, scheme: str, path: Path) -> str:
    from matplotlib.figure import Figure
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    ok = df[(df[DELAY] > 0) & df[THROUGHPUT].notna()]
    for i, (name, g) in enumerate(ok.groupby(scheme, sort=False)):
        color = f"C{i % 10}"
        d, t = g[DELAY].to_numpy(dtype=float) * 1e3, g[THROUGHPUT].to_numpy(dtype=float) / 1e6
        ax.scatter(d, t, s=12, alpha=0.35, color=color)
        ax.scatter([d.mean()], [t.mean()], s=90, color=color, edgecolor="black", label=str(name), zorder=3)
        ax.annotate(str(name), (d.mean(), t.mean()), textcoords="offset points", xytext=(6, 6), fontsize="small")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.invert_xaxis()
    ax.set_xlabel("95th-percentile one-way delay (ms)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title("each run (small) and the mean (large) per scheme; better is up and right", fontsize="small")
    ax.grid(alpha=0.3, which="both")
    ax.legend(title=scheme, fontsize="small")
    fig.savefig(path)
    return path.name


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.6g}"
    return str(v)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_fmt(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _markdown(st: Any, plan: str | None, df: pd.DataFrame, pts: pd.DataFrame, summary: pd.DataFrame,
              by: str, scheme: str, metric: str, images: list[str]) -> str:
    counts = pts["status"].value_counts().to_dict()
    runs = df["record"].nunique()
    out = [f"# {metric} by {by}", "",
           f"Store `{st.root.name}`, plan {plan or 'all plans (' + ', '.join(st.plans()) + ')'}: "
           f"{runs} runs read; points ok {counts.get('ok', 0)}, failed {counts.get('failed', 0)}, "
           f"not yet run {counts.get('missing', 0)}.", "",
           f"## {metric}: mean and 95% confidence interval (Student t over seeds and runs)", "",
           f"![{metric} against {by}]({images[0]})", "",
           _table([by, scheme, "n", "mean", "± 95% CI", "std"],
                  [[r[by], r[scheme], int(r["n"]), r["mean"], r["ci_half_width"], r["std"]]
                   for _, r in summary.iterrows()]), ""]
    if len(images) > 1:
        per = df.groupby(scheme, sort=False).agg(runs=("record", "nunique"), thr=(THROUGHPUT, "mean"),
                                                  delay=(DELAY, "mean"))
        out += ["## Throughput and 95th-percentile one-way delay per scheme", "",
                f"![throughput against delay]({images[1]})", "",
                _table([scheme, "runs", "mean throughput (Mbit/s)", "mean p95 delay (ms)"],
                       [[n, int(r["runs"]), r["thr"] / 1e6, r["delay"] * 1e3] for n, r in per.iterrows()]), ""]
    failed = pts[pts["status"] == "failed"]
    if len(failed):
        out += ["## Failed runs", "", f"{len(failed)} points failed; `xlayer store ls STORE --failed` "
                "lists their errors.", ""]
    return "\n".join(out)

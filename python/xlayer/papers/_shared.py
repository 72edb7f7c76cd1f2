"""What the paper reproductions share: the course of a reproduction (`reproduce`),
running their points' seeds through a results store, the Check record of a report,
mean ± 95% CI formatting, and matplotlib figures saved as PNG and SVG."""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import pandas as pd

from ..api import commit, conserved, version
from ..executors import Job, execute, executor_for
from ..progress import enabled
from ..stats import mean_ci
from ..store import Store, key


class Point(Protocol):
    """One configuration of a reproduction: its scenario, its seeds, its parameters."""

    @property
    def doc(self) -> dict[str, Any]: ...
    @property
    def trials(self) -> int: ...
    @property
    def params(self) -> dict[str, Any]: ...


@dataclass
class Ran:
    """One finished run: its point, seed, record key in the store and manifest."""

    point: Any
    seed: int
    record: str
    manifest: dict[str, Any]


def run_points(name: str, scenario: str, pts: Sequence[Point], workers: int, store: Path | None,
               series: bool = False) -> tuple[Store, list[Ran]]:
    """Run seeds 1..trials of every point as records of `store` (a scratch store if
    None); records already there are not run again. Raises if a run failed or broke
    packet conservation."""
    jobs: list[Job] = []
    owners: list[tuple[Point, int]] = []
    for p in pts:
        for seed in range(1, p.trials + 1):
            jobs.append(Job(key(p.doc, seed, 0), p.doc, seed, 0, p.params, series=series))
            owners.append((p, seed))
    path = Path(store) if store is not None else Path(tempfile.mkdtemp(prefix=f"xlayer-{name}-"), "store")
    st = Store(path)
    st.gc()
    st.save_plan(name, {"name": name, "scenario": scenario},
                 [{"params": j.params, "seed": j.seed, "run": 0, "key": j.record} for j in jobs])
    out = execute(st, jobs, executor_for(workers), progress=enabled(None), label=name)
    if out.failed:
        err = st.manifest(out.failed[0])["error"]
        raise RuntimeError(f"{len(out.failed)} {name} run(s) failed, the first with: {err['message']}")
    ran = []
    for job, (p, seed) in zip(jobs, owners):
        m = st.manifest(job.record)
        if not conserved(m["conservation"]):
            raise RuntimeError(f"packet conservation violated: {m['conservation']}")
        ran.append(Ran(p, seed, job.record, m))
    return st, ran


@dataclass
class Check:
    name: str
    claim: str
    threshold: str  # the rule and where it comes from
    passed: bool | None  # None: reported, no threshold
    detail: str
    values: dict[str, Any] = field(default_factory=dict)


def reproduce(out_dir: Path, quick: bool, workers: int, experiments: Any,
              analyse: Callable[[Any, Path], tuple[list[Check], Any]],
              write: Callable[[Path, Any, list[Check], Any, dict[str, Any]], Path],
              **meta: Any) -> int:
    """Run a paper's experiments (`experiments.points`, `run_all`: records of the store
    `out_dir/store`, so an interrupted reproduction computes only what it lacks when
    started again), save results.csv, `analyse` the results into checks and figures,
    `write` the report with the run's metadata (and `meta`), print the check outcomes,
    and return the number of failed checks."""
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    res = experiments.run_all(experiments.points(quick), workers or experiments.default_workers(),
                              store=out_dir / "store")
    res.runs.to_csv(out_dir / "results.csv", index=False)
    results, figs = analyse(res, out_dir)
    wall = time.perf_counter() - t0
    meta = {"quick": quick, "runs": int(res.runs.fingerprint.nunique()), "wall_s": wall, "workers": workers,
            "version": version(), "commit": commit(), **meta}
    return announce(results, write(out_dir, res, results, figs, meta), wall)


def rows(df: pd.DataFrame, experiment: str, variant: str | None = None, x: float | None = None,
         **columns: str | None) -> pd.DataFrame:
    """The results of one experiment, narrowed to a variant, an x value (equal to within
    rounding: x values are grid points, some computed) and other columns' values (e.g.
    `flow=`, `aal=`) where given."""
    d = df[df.experiment == experiment]
    if variant is not None:
        d = d[d.variant == variant]
    if x is not None:
        d = d[np.isclose(d.x, x, rtol=1e-9, atol=0.0)]
    for name, value in columns.items():
        if value is not None:
            d = d[d[name] == value]
    return d


def verdict(c: Check) -> str:
    return "reported" if c.passed is None else ("PASS" if c.passed else "FAIL")


def announce(results: Sequence[Check], report: Path, wall_s: float) -> int:
    """Print each check's outcome and where the report is; the number of failed checks."""
    for c in results:
        print(f"{c.name} {verdict(c)}: {c.detail}")
    print(f"report: {report} ({wall_s:.0f} s)")
    return sum(c.passed is False for c in results)


def ci(values: Any) -> dict[str, float]:
    """Mean and 95% Student-t half width of the values that are not NaN."""
    v = np.asarray(values, dtype=float)
    return mean_ci(v[~np.isnan(v)])


def fmt(c: dict[str, float], digits: int = 1) -> str:
    hw = c["ci_half_width"]
    return f"{c['mean']:.{digits}f} ± {hw:.{digits}f}" if not math.isnan(hw) else f"{c['mean']:.{digits}f}"


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend (imported on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, out: Path, name: str) -> list[str]:
    """Write `fig` as out/name.png and out/name.svg, close it, return the file names."""
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out / f"{name}.{ext}", dpi=120)
    pyplot().close(fig)
    return [f"{name}.png", f"{name}.svg"]

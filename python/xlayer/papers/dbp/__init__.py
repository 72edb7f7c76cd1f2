"""Jayaram & Rhee, "A Case for Delay-based Flow Control in CDMA 2.5G Networks": the UDP
probes of Figs. 1-4, DBP and TCP alone and together (Figs. 6-9), the bulk transfers of
Figs. 10-11, and the same comparisons over the Mahimahi cellular traces, on the
reliable UDP of `xlayer_proto::dbp` and the `cdma1x` bearer.

    from xlayer.papers import dbp
    failed = dbp.reproduce(Path("out/dbp"), quick=True)

Modelling choices: docs/reproductions/dbp.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...api import commit, version
from . import checks, experiments, figures, paper
from .._shared import announce
from .report import write

__all__ = ["reproduce", "checks", "experiments", "figures", "paper"]


def reproduce(out_dir: Path, quick: bool = False, workers: int = 2) -> int:
    """Run the experiments, write report.md, the figures (PNG and SVG) and results.csv
    into `out_dir`, print the check outcomes, and return the number of failed checks.
    Runs are records of the store `out_dir/store`, so an interrupted reproduction
    computes only what it lacks when started again."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    res = experiments.run_all(experiments.points(quick), workers or experiments.default_workers(),
                              store=out_dir / "store")
    wall = time.perf_counter() - t0
    res.runs.to_csv(out_dir / "results.csv", index=False)
    results = checks.all_checks(res.runs)
    figs = figures.all_figures(res, out_dir)
    meta = {"quick": quick, "runs": int(res.runs.fingerprint.nunique()), "wall_s": wall, "workers": workers,
            "version": version(), "commit": commit()}
    path = write(out_dir, res, results, figs, meta)
    return announce(results, path, wall)

"""Akyildiz & Joe, "TCP Performance Improvement over Wireless ATM Networks through a New
AAL Protocol": Fig. 4 — TCP over AAL5 and over AAL-X (S-ARQ, TCP's timer off) on the
DS1 wireless ATM hop against the cell error rate — with the readings the paper leaves
open, S-ARQ's recovery delay, and eq. (2).

    from xlayer.papers import aalx
    failed = aalx.reproduce(Path("out/aalx"), quick=True)

Modelling choices: docs/reproductions/aalx.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...api import commit, version
from ...native import _git_head
from . import checks, experiments, figures, lopt, paper
from .._shared import announce
from .report import write

__all__ = ["reproduce", "checks", "experiments", "figures", "lopt", "paper"]


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
    figs = figures.all_figures(res.runs, out_dir)
    meta = {"quick": quick, "runs": int(res.runs.fingerprint.nunique()), "wall_s": wall, "workers": workers,
            "version": version(), "commit": commit(), "source_commit": _git_head(Path(__file__).resolve().parent)}
    path = write(out_dir, res.runs, results, figs, meta)
    return announce(results, path, wall)

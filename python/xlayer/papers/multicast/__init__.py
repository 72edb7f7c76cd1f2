"""Alexiou, Bouras & Papazois, "A study of multicast congestion control for UMTS": TFMCC
and PGMCC, legacy and with the Node-B loss indication, over an MBMS bearer — §5.1
fairness, §5.2 responsiveness, §5.3 temporary degradation (Table II), §5.4 permanent
degradation, and the Table I network.

    from xlayer.papers import multicast
    failed = multicast.reproduce(Path("out/multicast"), quick=True)

Modelling choices: docs/reproductions/multicast.md.
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
    res.runs.to_csv(out_dir / "results.csv", index=False)
    results = checks.all_checks(res, checks.c6())
    figs = figures.all_figures(res, out_dir)
    wall = time.perf_counter() - t0
    meta = {"quick": quick, "runs": int(res.runs.fingerprint.nunique()), "wall_s": wall, "workers": workers,
            "version": version(), "commit": commit()}
    path = write(out_dir, res, results, figs, meta)
    return announce(results, path, wall)

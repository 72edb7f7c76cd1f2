"""Jayaram & Rhee, "A Case for Delay-based Flow Control in CDMA 2.5G Networks": the UDP
probes of Figs. 1-4, DBP and TCP alone and together (Figs. 6-9), the bulk transfers of
Figs. 10-11, and the same comparisons over the Mahimahi cellular traces, on the
reliable UDP of `xlayer_proto::dbp` and the `cdma1x` bearer.

    from xlayer.papers import dbp
    failed = dbp.reproduce(Path("out/dbp"), quick=True)

Modelling choices: docs/reproductions/dbp.md.
"""

from __future__ import annotations

from pathlib import Path

from . import checks, experiments, figures, paper
from .. import _shared
from .report import write

__all__ = ["reproduce", "checks", "experiments", "figures", "paper"]


def reproduce(out_dir: Path, quick: bool = False, workers: int = 2) -> int:
    """Run the experiments, write report.md, the figures (PNG and SVG) and results.csv
    into `out_dir`, print the check outcomes, and return the number of failed checks
    (`_shared.reproduce`)."""
    return _shared.reproduce(Path(out_dir), quick, workers, experiments,
                             lambda res, out: (checks.all_checks(res.runs), figures.all_figures(res, out)),
                             write)

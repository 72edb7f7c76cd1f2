"""Akyildiz & Joe, "TCP Performance Improvement over Wireless ATM Networks through a New
AAL Protocol": Fig. 4 — TCP over AAL5 and over AAL-X (S-ARQ, TCP's timer off) on the
DS1 wireless ATM hop against the cell error rate — with the readings the paper leaves
open, S-ARQ's recovery delay, and eq. (2).

    from xlayer.papers import aalx
    failed = aalx.reproduce(Path("out/aalx"), quick=True)

Modelling choices: docs/reproductions/aalx.md.
"""

from __future__ import annotations

from pathlib import Path

from ...native import _git_head
from . import checks, experiments, figures, lopt, paper
from .. import _shared
from .report import write

__all__ = ["reproduce", "checks", "experiments", "figures", "lopt", "paper"]


def reproduce(out_dir: Path, quick: bool = False, workers: int = 2) -> int:
    """Run the experiments, write report.md, the figures (PNG and SVG) and results.csv
    into `out_dir`, print the check outcomes, and return the number of failed checks
    (`_shared.reproduce`)."""
    return _shared.reproduce(Path(out_dir), quick, workers, experiments,
                             lambda res, out: (checks.all_checks(res.runs), figures.all_figures(res.runs, out)),
                             lambda out, res, *report: write(out, res.runs, *report),
                             source_commit=_git_head(Path(__file__).resolve().parent))

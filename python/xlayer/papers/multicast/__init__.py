"""Alexiou, Bouras & Papazois, "A study of multicast congestion control for UMTS": TFMCC
and PGMCC, legacy and with the Node-B loss indication, over an MBMS bearer — §5.1
fairness, §5.2 responsiveness, §5.3 temporary degradation (Table II), §5.4 permanent
degradation, and the Table I network.

    from xlayer.papers import multicast
    failed = multicast.reproduce(Path("out/multicast"), quick=True)

Modelling choices: docs/reproductions/multicast.md.
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
                             lambda res, out: (checks.all_checks(res, checks.c6()), figures.all_figures(res, out)),
                             write)

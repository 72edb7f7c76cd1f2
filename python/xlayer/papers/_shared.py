"""What the paper reproductions share: the Check record of a report, mean ± 95% CI
formatting, and matplotlib figures saved as PNG and SVG."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..stats import mean_ci


@dataclass
class Check:
    name: str
    claim: str
    threshold: str  # the rule and where it comes from
    passed: bool | None  # None: reported, no threshold
    detail: str
    values: dict[str, Any] = field(default_factory=dict)


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

"""Paper reproductions: one module per seed paper (experiments, published numbers, checks).

Each module exposes `reproduce(out_dir, quick=False, workers=2) -> int` (the number of
failed checks); `xlayer reproduce NAME` runs it.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

# The papers whose reproductions exist, by CLI name -> module.
_PAPERS = {"koga": "koga", "clamp": "clamp", "dbp": "dbp", "aalx": "aalx", "multicast": "multicast"}


def available() -> list[str]:
    """Papers whose reproduction module is installed."""
    return sorted(n for n, m in _PAPERS.items() if importlib.util.find_spec(f"{__name__}.{m}"))


def reproduce(name: str, out_dir: Path, quick: bool = False, workers: int = 2) -> int:
    module = importlib.import_module(f"{__name__}.{_PAPERS[name]}")
    return int(module.reproduce(Path(out_dir), quick=quick, workers=workers))

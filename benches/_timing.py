"""Shared timing helper for the paper-reproduction benchmarks."""

from __future__ import annotations

import os
import pathlib
import tempfile
import time
from typing import Callable


def time_reproduction(reproduce: Callable[..., int], quick: bool, workers: int, target_s: float) -> None:
    """Time `reproduce(out_dir, quick=, workers=)` in a scratch directory and print it."""
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        failed = reproduce(pathlib.Path(d), quick=quick, workers=workers)
        print(f"{'quick' if quick else 'full'} reproduction: {time.perf_counter() - t:.0f} s wall on "
              f"{workers} workers ({os.cpu_count()} CPUs), {failed} failed checks [target < {target_s:.0f} s]")

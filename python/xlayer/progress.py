"""Progress bars on stderr (rich). Shown only when asked, or by default when stderr is a TTY."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)


def enabled(flag: bool | None) -> bool:
    """`flag` if given, else whether stderr is an interactive terminal."""
    if flag is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(flag)


def _progress(*columns: object) -> Progress:
    return Progress(*columns, console=Console(stderr=True), transient=False)  # type: ignore[arg-type]


@contextmanager
def sim_bar(duration_s: float, label: str) -> Iterator[Callable[[float, int], None]]:
    """Bar over simulated time; yields `update(now_s, events)`."""
    start = time.perf_counter()
    bar = _progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=20),
        TaskProgressColumn(),
        TextColumn("{task.fields[sim]}"),
        TextColumn("{task.fields[rate]}"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with bar:
        task = bar.add_task(label, total=max(duration_s, 1e-12), sim="", rate="")

        def update(now_s: float, events: int) -> None:
            wall = max(time.perf_counter() - start, 1e-9)
            bar.update(
                task,
                completed=now_s,
                sim=f"sim {now_s:.1f}/{duration_s:g} s",
                rate=f"{events / wall / 1e6:.1f} Mev/s",
            )

        yield update


@contextmanager
def count_bar(total: int, label: str) -> Iterator[Callable[[], None]]:
    """Bar over a number of runs; yields `advance()`."""
    bar = _progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=30),
        MofNCompleteColumn(),
        TextColumn("runs  ETA"),
        TimeRemainingColumn(),
    )
    with bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)

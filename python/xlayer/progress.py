"""Progress bars on stderr (rich). Shown only when asked, or by default when stderr is a TTY."""

from __future__ import annotations

import math
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


LOG_EVERY_S = 10.0


@contextmanager
def run_counter(total: int, label: str, show: bool, cached: int = 0) -> Iterator[Callable[..., None]]:
    """Runs done / total, failures and ETA; yields `count(failed=False)`, called once per
    run. On a terminal a bar; elsewhere (a batch job's log) a line every LOG_EVERY_S
    seconds and a last one; nothing unless `show`."""
    state = {"done": 0, "failed": 0}
    start = time.monotonic()
    head = f"{label}: {total} runs to compute" + (f", {cached} already in the store" if cached else "")
    if not show:
        def quiet(failed: bool = False) -> None:
            state["done"] += 1
            state["failed"] += bool(failed)

        yield quiet
        return
    if enabled(None):
        bar = _progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TextColumn("runs  {task.fields[failed]} failed  ETA"),
            TimeRemainingColumn(),
        )
        with bar:
            bar.console.print(head, highlight=False)
            task = bar.add_task(label, total=total, failed=0)

            def advance(failed: bool = False) -> None:
                state["failed"] += bool(failed)
                bar.update(task, advance=1, failed=state["failed"])

            yield advance
        return

    print(head, file=sys.stderr, flush=True)
    last = [start]

    def line() -> str:
        d, elapsed = state["done"], time.monotonic() - start
        eta = elapsed / d * (total - d) if d else math.nan
        return (f"{label}: {d}/{total} runs, {state['failed']} failed, {elapsed:.0f} s elapsed"
                + (f", ETA {eta:.0f} s" if d < total and math.isfinite(eta) else ""))

    def log(failed: bool = False) -> None:
        state["done"] += 1
        state["failed"] += bool(failed)
        now = time.monotonic()
        if now - last[0] >= LOG_EVERY_S:
            last[0] = now
            print(line(), file=sys.stderr, flush=True)

    yield log
    print(line(), file=sys.stderr, flush=True)

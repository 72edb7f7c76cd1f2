"""Benchmarks of sweeps and the results store (issue 13, check C5 and the performance
targets).

    python benches/bench_sweep.py overhead            # C5: 10,000 runs of 0.1 s simulated
    python benches/bench_sweep.py overhead --runs 2000
    python benches/bench_sweep.py scaling             # 1 vs 2 local workers, runs of >= 0.5 s

overhead: the same plan in memory and into an empty store, on this process (the store's
cost per run is the difference: encoding the record in the worker, writing it, reading
the table back), then into the store on 2 local workers, then again (every record
already there: what a rerun pays per run). Target: under 5 ms per run.

scaling: a plan of runs that take at least 0.5 s each, into a store on 1 and on 2 local
workers. Target: at least 1.8x from 1 to 2 workers on 2 cores, on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import xlayer


def _timed(label: str, fn: object) -> float:
    t = time.perf_counter()
    df = fn()  # type: ignore[operator]
    wall = time.perf_counter() - t
    info = df.attrs["xlayer"]
    extra = f" ({info['computed']} computed, {info['cached']} from the store)" if "computed" in info else ""
    print(f"{label}: {wall:.2f} s{extra}", flush=True)
    return wall


def overhead(n: int) -> None:
    doc = xlayer.scenarios.dumbbell(n_flows=1, duration="100ms")
    doc["output"] = {"series_interval": "0s"}
    plan = xlayer.Plan(doc, seeds=range(1, n + 1), name="overhead")
    print(f"{n} runs of one flow over a dumbbell, 0.1 s simulated; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as d:
        memory = _timed("in memory, 1 process", lambda: xlayer.sweep(plan, workers=1, progress=False))
        stored = _timed("into an empty store, 1 process",
                        lambda: xlayer.sweep(plan, workers=1, store=Path(d, "a"), progress=False))
        pool = _timed("into an empty store, 2 local workers",
                      lambda: xlayer.sweep(plan, workers=2, store=Path(d, "b"), progress=False))
        rerun = _timed("again, every record in the store",
                       lambda: xlayer.sweep(plan, workers=2, store=Path(d, "b"), progress=False))
    print(f"store overhead per run, 1 process: {(stored - memory) / n * 1e3:.2f} ms [target < 5 ms]")
    print(f"wall per run: in memory {memory / n * 1e3:.2f} ms, store 1 process {stored / n * 1e3:.2f} ms, "
          f"store 2 workers {pool / n * 1e3:.2f} ms, rerun {rerun / n * 1e3:.2f} ms")


def scaling(n: int) -> None:
    doc = xlayer.scenarios.dumbbell(n_flows=16, duration="1500s")
    doc["output"] = {"series_interval": "0s"}
    one = xlayer.run(doc, seed=1, progress=False).metadata["wall_time_s"]
    print(f"{n} runs of 16 flows over a dumbbell, 1500 s simulated, about {one:.2f} s each; "
          f"{os.cpu_count()} CPUs")
    plan = xlayer.Plan(doc, seeds=range(1, n + 1), name="scaling")
    with tempfile.TemporaryDirectory() as d:
        w1 = _timed("1 worker", lambda: xlayer.sweep(plan, workers=1, store=Path(d, "1"), progress=False))
        w2 = _timed("2 workers", lambda: xlayer.sweep(plan, workers=2, store=Path(d, "2"), progress=False))
    print(f"speed-up from 1 to 2 workers: {w1 / w2:.2f}x [target >= 1.8x on a quiet machine]")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("overhead", "scaling"))
    p.add_argument("--runs", type=int, help="runs in the plan (default 10,000 / 32)")
    a = p.parse_args()
    if a.what == "overhead":
        overhead(a.runs or 10_000)
    else:
        scaling(a.runs or 32)


if __name__ == "__main__":
    main()

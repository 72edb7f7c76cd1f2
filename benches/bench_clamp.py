"""Benchmarks of the CLAMP reproduction (Andrew & Hanly).

    python benches/bench_clamp.py            # Fig. 3 scenario, 300 simulated seconds
    python benches/bench_clamp.py --full     # ... and the full reproduction (minutes)

Targets (issue 4): a Fig. 3 run (four flows, 10 Mb/s, 300 s) under 2 s of wall time;
the full reproduction under 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

import xlayer
from _timing import time_reproduction
from xlayer.papers import clamp
from xlayer.papers.clamp import scenarios as sc


def bench_fig3(repeats: int) -> None:
    for fading in ("fast", "slow"):
        for proto, value in (("clamp", 20_000), ("newreno", 40_000)):
            doc = sc.fig3(fading, proto, value, 300.0)
            walls, events = [], 0
            for i in range(repeats):
                t = time.perf_counter()
                res = xlayer.run(doc, seed=1 + i, run=0, progress=False)
                walls.append(time.perf_counter() - t)
                events = res.metadata["events"]
            med = statistics.median(walls)
            print(f"fig3 {fading:4s} {proto:7s}: median {med:.2f} s wall for 300 s simulated "
                  f"({events / med / 1e6:.2f} M events/s, {events} events) [target < 2 s]")


def bench_reproduction(quick: bool, workers: int) -> None:
    time_reproduction(clamp.reproduce, quick, workers, 120 if quick else 600)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="also time the quick reproduction")
    p.add_argument("--full", action="store_true", help="also time the full reproduction")
    a = p.parse_args()
    bench_fig3(a.repeats)
    if a.quick:
        bench_reproduction(True, a.workers)
    if a.full:
        bench_reproduction(False, a.workers)


if __name__ == "__main__":
    main()

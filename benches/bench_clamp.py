"""Benchmarks of the CLAMP reproduction (Andrew & Hanly).

    python benches/bench_clamp.py            # Fig. 3 scenario, 300 simulated seconds
    python benches/bench_clamp.py --full     # ... and the full reproduction (minutes)

Instructions per delivered segment (the run only: no build or warm-up, no Python):

    valgrind --tool=callgrind --toggle-collect='*World::run_until*' \
        python benches/bench_clamp.py --once --case fast-clamp

then divide the collected instructions by the segments it prints.

Targets (issue 4): a Fig. 3 run (four flows, 10 Mb/s, 300 s) under 2 s of wall time;
the full reproduction under 10 minutes on 2 cores. Scale issue: at most 0.8 us of wall
time per delivered TCP segment with fast fading.
"""

from __future__ import annotations

import argparse
import statistics
import time

import xlayer
from _timing import time_reproduction
from xlayer.papers import clamp
from xlayer.papers.clamp import scenarios as sc


CASES = {f"{fading}-{proto}": (fading, proto, value)
         for fading in ("fast", "slow") for proto, value in (("clamp", 20_000), ("newreno", 40_000))}


def tcp_segments(res: xlayer.RunResult) -> int:
    """TCP data segments delivered to the receiving endpoints."""
    f = res.flows
    return int(f.loc[f["protocol"] == "tcp", "rx_packets"].sum())


def bench_fig3(repeats: int, cases: list[str]) -> None:
    for case in cases:
        fading, proto, value = CASES[case]
        doc = sc.fig3(fading, proto, value, 300.0)
        walls, core, events, segs = [], [], 0, []
        for i in range(repeats):
            t = time.perf_counter()
            res = xlayer.run(doc, seed=1 + i, run=0, progress=False)
            walls.append(time.perf_counter() - t)
            core.append(float(res.metadata["wall_time_s"]))
            events = res.metadata["events"]
            segs.append(tcp_segments(res))
        med, in_core, seg = statistics.median(walls), statistics.median(core), statistics.median(segs)
        target = " [target <= 0.8 us]" if fading == "fast" else ""
        print(f"fig3 {fading:4s} {proto:7s}: median {med:.3f} s wall for 300 s simulated "
              f"({in_core:.3f} s in the core, {events / med / 1e6:.2f} M events/s, {events} events) "
              f"[target < 2 s]; {seg:.0f} TCP segments delivered: {med / seg * 1e6:.3f} us wall per "
              f"segment ({in_core / seg * 1e6:.3f} us in the core){target}")


def bench_reproduction(quick: bool, workers: int) -> None:
    time_reproduction(clamp.reproduce, quick, workers, 120 if quick else 600)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--case", choices=list(CASES), action="append",
                   help="run only this configuration (repeatable; default: all)")
    p.add_argument("--once", action="store_true", help="one run per case (for callgrind)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="also time the quick reproduction")
    p.add_argument("--full", action="store_true", help="also time the full reproduction")
    a = p.parse_args()
    bench_fig3(1 if a.once else a.repeats, a.case or list(CASES))
    if a.quick:
        bench_reproduction(True, a.workers)
    if a.full:
        bench_reproduction(False, a.workers)


if __name__ == "__main__":
    main()

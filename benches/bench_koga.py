"""Benchmarks of the Koga et al. reproduction (Koga et al.).

    python benches/bench_koga.py               # one 60 s run of the Fig. 1 scenario
    python benches/bench_koga.py --full        # ... and the full reproduction

Instructions per delivered segment (the run only: no build, no calibration, no Python):

    valgrind --tool=callgrind --toggle-collect='*World::run_until*' \
        python benches/bench_koga.py --once --case table2

then divide the collected instructions by the segments it prints. The Python around the
core (scenario, native build, DataFrames), step by step: benches/bench_front.py.

Targets (issue 3): a 60 s run under 0.2 s of wall time; the full (non-quick)
reproduction under 5 minutes on 2 cores. Scale issue: at most 3 us of wall time per
delivered TCP segment.
"""

from __future__ import annotations

import argparse
import statistics
import time

import xlayer
from _timing import time_reproduction
from xlayer.papers import koga
from xlayer.papers.koga.experiments import SCENARIO, Setting


CASES = {
    "table2": ("no QoS, 64 kb/s", Setting(buffer=50, wt_ms=500).overrides(64)),
    "table4": ("priority, 128 kb/s", Setting(qos="priority", wt_ms=150, udp_retx=2).overrides(128)),
    "table5": ("receiver-based, 32 kb/s", Setting(wt_ms=90, udp_retx=2, awnd=6).overrides(32)),
}


def tcp_segments(res: xlayer.RunResult) -> int:
    """TCP data segments delivered to the receiving endpoints."""
    f = res.flows
    return int(f.loc[f["protocol"] == "tcp", "rx_packets"].sum())


def bench_run(repeats: int, cases: list[str], calibrate: bool) -> None:
    if calibrate:
        t = time.perf_counter()
        xlayer.run(SCENARIO, seed=99, progress=False)  # pays the one-off fading calibration
        print(f"first run in this process: {time.perf_counter() - t:.2f} s (includes the TTI-mean "
              f"threshold calibration, once per process)")
    for case in cases:
        label, ov = CASES[case]
        walls, core, events, segs = [], [], 0, []
        for i in range(repeats):
            t = time.perf_counter()
            res = xlayer.run(SCENARIO, seed=1 + i, overrides=ov, progress=False)
            walls.append(time.perf_counter() - t)
            core.append(float(res.metadata["wall_time_s"]))
            events = int(res.metadata["events"])
            segs.append(tcp_segments(res))
        wall, in_core, seg = statistics.median(walls), statistics.median(core), statistics.median(segs)
        print(f"{case} ({label}): median {wall * 1e3:.1f} ms wall per 60 s run "
              f"({in_core * 1e3:.1f} ms in the core, {events} events) [target < 200 ms]; "
              f"{seg:.0f} TCP segments delivered: {wall / seg * 1e6:.2f} us wall per segment "
              f"({in_core / seg * 1e6:.2f} us in the core) [target <= 3 us]")


def bench_reproduction(quick: bool, workers: int) -> None:
    time_reproduction(koga.reproduce, quick, workers, 120 if quick else 300)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--case", choices=sorted(CASES), action="append",
                    help="run only this experiment (repeatable; default: all)")
    ap.add_argument("--once", action="store_true",
                    help="one run per case and no calibration run first (for callgrind)")
    ap.add_argument("--quick", action="store_true", help="also time reproduce(quick=True)")
    ap.add_argument("--full", action="store_true", help="also time the full reproduction")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    bench_run(1 if a.once else a.repeats, a.case or sorted(CASES), calibrate=not a.once)
    if a.quick:
        bench_reproduction(True, a.workers)
    if a.full:
        bench_reproduction(False, a.workers)


if __name__ == "__main__":
    main()

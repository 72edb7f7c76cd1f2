"""Benchmarks of the Koga et al. reproduction (Koga et al.).

    python benches/bench_koga.py               # one 60 s run of the Fig. 1 scenario
    python benches/bench_koga.py --full        # ... and the full reproduction

Targets (issue 3): a 60 s run under 0.2 s of wall time; the full (non-quick)
reproduction under 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

import xlayer
from _timing import time_reproduction
from xlayer.papers import koga
from xlayer.papers.koga.experiments import SCENARIO, Setting


def bench_run(repeats: int) -> None:
    cases = {
        "table2 (no QoS, 64 kb/s)": Setting(buffer=50, wt_ms=500).overrides(64),
        "table4 (priority, 128 kb/s)": Setting(qos="priority", wt_ms=150, udp_retx=2).overrides(128),
        "table5 (receiver-based, 32 kb/s)": Setting(wt_ms=90, udp_retx=2, awnd=6).overrides(32),
    }
    t = time.perf_counter()
    xlayer.run(SCENARIO, seed=99, progress=False)  # pays the one-off fading calibration
    print(f"first run in this process: {time.perf_counter() - t:.2f} s (includes the TTI-mean "
          f"threshold calibration, once per process)")
    for name, ov in cases.items():
        walls, core, events = [], [], 0
        for i in range(repeats):
            t = time.perf_counter()
            res = xlayer.run(SCENARIO, seed=1 + i, overrides=ov, progress=False)
            walls.append(time.perf_counter() - t)
            core.append(float(res.metadata["wall_time_s"]))
            events = int(res.metadata["events"])
        print(f"{name}: median {statistics.median(walls) * 1e3:.1f} ms wall per 60 s run "
              f"({statistics.median(core) * 1e3:.1f} ms in the core, {events} events) [target < 200 ms]")


def bench_reproduction(quick: bool, workers: int) -> None:
    time_reproduction(koga.reproduce, quick, workers, 120 if quick else 300)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="also time reproduce(quick=True)")
    ap.add_argument("--full", action="store_true", help="also time the full reproduction")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    bench_run(a.repeats)
    if a.quick:
        bench_reproduction(True, a.workers)
    if a.full:
        bench_reproduction(False, a.workers)


if __name__ == "__main__":
    main()

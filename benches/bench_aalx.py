"""Benchmarks of the AAL-X reproduction (Akyildiz & Joe, Fig. 4).

    python benches/bench_aalx.py              # 120 s TCP runs over AAL5 and AAL-X at CER 1e-3
    python benches/bench_aalx.py --full       # ... and the full reproduction

Targets: the full (non-quick) reproduction under 10 minutes on 2 cores; the per-segment
costs are tracked in docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

import xlayer
from _timing import time_reproduction
from xlayer.papers import aalx
from xlayer.papers.aalx import experiments as ex


def bench(aal: str, repeats: int) -> None:
    doc = ex.fig4_doc(aal, 1e-3, ex.READINGS["primary"], 120.0)
    walls, core, segs, events = [], [], 0, 0
    for i in range(repeats):
        t = time.perf_counter()
        res = xlayer.run(doc, seed=1 + i, progress=False)
        walls.append(time.perf_counter() - t)
        core.append(float(res.metadata["wall_time_s"]))
        segs, events = int(res.flows.rx_packets.sum()), int(res.metadata["events"])
    w = statistics.median(walls)
    print(f"TCP over {aal.upper()}, CER 1e-3, 120 s: median {w * 1e3:.0f} ms wall per run (core "
          f"{statistics.median(core) * 1e3:.0f} ms); {segs:,} segments delivered, {events:,} events: "
          f"{w / segs * 1e6:.1f} us wall per delivered segment")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="also time the full reproduction")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    for aal in ex.AALS:
        bench(aal, args.repeats)
    if args.full:
        time_reproduction(aalx.reproduce, quick=False, workers=2, target_s=600)


if __name__ == "__main__":
    main()

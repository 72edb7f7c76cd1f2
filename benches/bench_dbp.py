"""Benchmarks of the DBP reproduction (Jayaram & Rhee).

    python benches/bench_dbp.py               # 600 s runs: DBP on the cdma1x bearer and over each trace
    python benches/bench_dbp.py --full        # ... and the full reproduction

Targets (the DBP issue): one 600 s DBP run over a trace under 0.5 s of wall time; the
full (non-quick) reproduction under 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

import xlayer
from _timing import time_reproduction
from xlayer.papers import dbp
from xlayer.papers.dbp import experiments as ex


def bench(name: str, doc: dict, repeats: int) -> None:
    walls, core, events, packets = [], [], 0, 0
    for i in range(repeats):
        t = time.perf_counter()
        res = xlayer.run(doc, seed=1 + i, progress=False)
        walls.append(time.perf_counter() - t)
        core.append(float(res.metadata["wall_time_s"]))
        events, packets = int(res.metadata["events"]), int(res.flows.tx_packets.sum())
    print(f"{name}: median {statistics.median(walls) * 1e3:.0f} ms wall per 600 s run "
          f"(simulation core {statistics.median(core) * 1e3:.0f} ms; {events:,} events, "
          f"{packets:,} data packets) [target < 500 ms]")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="also time the full reproduction")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    bench("DBP on the cdma1x bearer", ex.cdma_doc([ex.dbp()], 600.0), args.repeats)
    folder = ex.traces_dir()
    if folder is None:
        print("no Mahimahi traces found (set XLAYER_TRACES): trace runs skipped")
    for down in sorted(folder.glob("*.down")) if folder else []:
        bench(f"DBP over {down.stem}", ex.trace_doc(down, [ex.dbp()], 600.0), args.repeats)
        bench(f"TCP over {down.stem}", ex.trace_doc(down, [ex.tcp()], 600.0), args.repeats)
    if args.full:
        time_reproduction(dbp.reproduce, quick=False, workers=2, target_s=600)


if __name__ == "__main__":
    main()

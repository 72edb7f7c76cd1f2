"""The Python front's cost per `xlayer.run` call: everything outside the core's own
`wall_time_s` (issue 11: Koga et al.'s Table 2 run at <= 3 us a delivered segment).

    python benches/bench_front.py                 # Koga Table 2 and a tiny dumbbell, 200 rounds
    python benches/bench_front.py --rounds 500 --case tiny

Each round times the steps of one `xlayer.run` separately (resolve: read, parse,
override and canonicalise the scenario; encode: the JSON sent to the core; build: the
core parses it and builds the world; drive: the `advance` calls; finish: the core's
tables as Python columns; result: DataFrames, metadata, conservation), then one whole
`xlayer.run` call, and prints the median of each over the rounds. "outside the core" is
the whole call less the core's `wall_time_s` (the `advance` and `finish` calls).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import xlayer
from xlayer import _core, api, native, scenario as sc
from xlayer.papers.koga.experiments import SCENARIO, Setting


def cases() -> dict[str, tuple[Any, dict[str, Any]]]:
    tiny = xlayer.scenarios.dumbbell(n_flows=1, duration="10ms")
    tiny["output"] = {"series_interval": "0s"}
    return {
        "koga": (SCENARIO, Setting(buffer=50, wt_ms=500).overrides(64)),
        "tiny": (tiny, {}),
    }


def steps(scenario: Any, overrides: dict[str, Any], seed: int) -> dict[str, float]:
    """One run taken apart into the steps `xlayer.run` makes, each timed."""
    pc = time.perf_counter
    t: list[float] = [pc()]
    doc = sc.resolve(scenario, overrides)
    t.append(pc())
    text = sc.canonical_json(doc)
    t.append(pc())
    sim = _core.Simulation(text, seed, 0, None, sc.base_dir(scenario))
    t.append(pc())
    native._advance_in_chunks(sim, float(sim.duration_s), None)
    t.append(pc())
    raw = sim.finish()
    t.append(pc())
    api._result(raw, doc, seed, 0)
    t.append(pc())
    names = ["resolve", "encode", "build", "drive", "finish", "result"]
    return {n: t[i + 1] - t[i] for i, n in enumerate(names)}


def bench(name: str, scenario: Any, overrides: dict[str, Any], rounds: int,
          segments: Callable[[xlayer.RunResult], int]) -> None:
    xlayer.run(scenario, seed=99, overrides=overrides, progress=False)  # calibration, imports
    parts: dict[str, list[float]] = {}
    whole, core, outside = [], [], []
    segs = 0
    for i in range(rounds):
        for k, v in steps(scenario, overrides, 1 + i).items():
            parts.setdefault(k, []).append(v)
        t = time.perf_counter()
        res = xlayer.run(scenario, seed=1 + i, overrides=overrides, progress=False)
        wall = time.perf_counter() - t
        whole.append(wall)
        core.append(float(res.metadata["wall_time_s"]))
        outside.append(wall - core[-1])
        segs = segments(res)
    med = {k: statistics.median(v) * 1e3 for k, v in parts.items()}
    print(f"{name}: median of {rounds} rounds, ms a run: "
          + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))
    per = f"; {statistics.median(outside) / segs * 1e6:.2f} us a segment outside the core" if segs else ""
    print(f"{name}: xlayer.run {statistics.median(whole) * 1e3:.3f} ms, core {statistics.median(core) * 1e3:.3f} ms, "
          f"outside the core {statistics.median(outside) * 1e3:.3f} ms{per}")


def tcp_segments(res: xlayer.RunResult) -> int:
    f = res.flows
    return int(f.loc[f["protocol"] == "tcp", "rx_packets"].sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--case", choices=["koga", "tiny"], action="append")
    a = ap.parse_args()
    for name, (scenario, overrides) in cases().items():
        if a.case is None or name in a.case:
            bench(name, scenario, overrides, a.rounds, tcp_segments if name == "koga" else lambda r: 0)


if __name__ == "__main__":
    main()

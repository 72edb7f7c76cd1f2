"""Start-up cost of the command line: wall time of `xlayer run` on a 0.05 s simulation
(one NewReno flow, 10 Mb/s), from process start to exit, files written.

    python benches/bench_cli.py [--repeats 20]

Target (the first-contact issue): under 0.3 s on the reference machine (2 cores).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY = """
[simulation]
duration = "0.05s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
[[flow]]
protocol = "tcp"
src = "a"
dst = "b"
app = { kind = "bulk" }
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    xlayer = Path(sys.executable).with_name("xlayer")
    with tempfile.TemporaryDirectory() as d:
        scenario = Path(d, "tiny.toml")
        scenario.write_text(TINY)
        walls = []
        for i in range(args.repeats):
            t = time.perf_counter()
            subprocess.run([str(xlayer), "run", str(scenario), "--out", str(Path(d, f"o{i}")), "-q"],
                           check=True, capture_output=True)
            walls.append(time.perf_counter() - t)
    walls.sort()
    print(f"xlayer run, 0.05 s simulation: median {statistics.median(walls) * 1e3:.0f} ms, "
          f"best {walls[0] * 1e3:.0f} ms, worst {walls[-1] * 1e3:.0f} ms over {args.repeats} runs [target < 300 ms]")


if __name__ == "__main__":
    main()

"""Instruction counts of the scale issue's benchmarks, under callgrind, in one command.

    python benches/instructions.py                       # every case (about six minutes on two cores)
    python benches/instructions.py --case dumbbell-16    # chosen cases (repeatable)
    python benches/instructions.py --json                # the figures as JSON on stdout

Instructions are the measure that holds on a shared or virtual machine, where wall
times move by half from one run to the next and hardware counters are not exposed: each
case runs once under `valgrind --tool=callgrind` (the Debian package `valgrind`), and
the count is divided by what the case delivers. The dumbbell counts the whole process,
as its target does; the other cases count `World::run_until` alone (the run, without
the scenario's build, the W-CDMA calibration or Python). The Rust benchmarks are built
first with `cargo bench --no-run` (release profile, fat LTO); Koga et al.'s and
Andrew & Hanly's runs use the `xlayer` installed in this interpreter.

The targets it checks are the ones stated in instructions or as a ratio: at most 3,000
instructions a delivered packet on the 16-flow dumbbell, and at most 1.5x from 16 to
10,000 flows and from 50 to 1,000 mobiles. Koga's and CLAMP's targets are wall times
(`bench_koga.py`, `bench_clamp.py`); their instructions are reported beside them.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
RUN_ONLY = "*World::run_until*"


@dataclass(frozen=True)
class Case:
    """One callgrind run: `argv` (its first item a Rust benchmark's name or "python"),
    what it collects (`None`: the whole process), and the count it divides by, read from
    its output by `unit_pattern`."""
    argv: tuple[str, ...]
    collect: str | None
    unit: str
    unit_pattern: str


PACKETS = r"(\d+) packets"
EVENTS = r"^\s*\S+\s+\d+\s+\S+\s+(\d+)\s"  # radio_scale's row: model, UEs, run_s, events
SEGMENTS = r"(\d+) TCP segments delivered"

CASES: dict[str, Case] = {
    "dumbbell-1": Case(("dumbbell", "once", "1"), None, "packet", PACKETS),
    "dumbbell-16": Case(("dumbbell", "once", "16"), None, "packet", PACKETS),
    "scale-16": Case(("scale", "once", "16", "secs=100"), RUN_ONLY, "packet", PACKETS),
    "scale-1000": Case(("scale", "once", "1000", "secs=10"), RUN_ONLY, "packet", PACKETS),
    "scale-10000": Case(("scale", "once", "10000", "secs=3"), RUN_ONLY, "packet", PACKETS),
    **{f"{model}-{n}": Case(("radio_scale", model, str(n), "rounds=1"), RUN_ONLY, "event", EVENTS)
       for model in ("wcdma", "shared", "cdma1x") for n in (50, 1000)},
    "koga-table2": Case(("python", "bench_koga.py", "--once", "--case", "table2"), RUN_ONLY, "segment", SEGMENTS),
    "clamp-fast": Case(("python", "bench_clamp.py", "--once", "--case", "fast-clamp"), RUN_ONLY, "segment",
                       SEGMENTS),
}

# (name, numerator case, denominator case or None, bound): a ratio of instructions a unit
# at most `bound`, or, without a denominator, instructions a unit at most `bound`.
TARGETS = [
    ("<= 3,000 instructions a packet, 16-flow dumbbell", "dumbbell-16", None, 3000.0),
    ("10,000 flows within 1.5x of 16, a pair each", "scale-10000", "scale-16", 1.5),
    *[(f"{label} within 1.5x from 50 to 1,000 mobiles", f"{model}-1000", f"{model}-50", 1.5)
      for model, label in (("wcdma", "W-CDMA DCH"), ("shared", "shared downlink"), ("cdma1x", "CDMA2000-1x"))],
]


def totals(callgrind_out: str) -> int:
    """The instructions a callgrind output file counted (its `totals:` line, else its
    `summary:` line)."""
    found: dict[str, int] = {}
    for line in callgrind_out.splitlines():
        key, _, value = line.partition(":")
        if key in ("totals", "summary") and value.split():
            found[key] = int(value.split()[0])
    if not found:
        raise ValueError("no totals or summary line in the callgrind output")
    return found["totals"] if "totals" in found else found["summary"]


def units(stdout: str, pattern: str) -> int:
    """The count a case's output reports (the last match of `pattern`)."""
    matches = re.findall(pattern, stdout, flags=re.MULTILINE)
    if not matches:
        raise ValueError(f"no match for {pattern!r} in the benchmark's output:\n{stdout}")
    return int(matches[-1])


def bench_executables(cargo_json: str) -> dict[str, str]:
    """Benchmark name -> executable, from `cargo --message-format=json` lines."""
    found = {}
    for line in cargo_json.splitlines():
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        target = msg.get("target", {})
        if msg.get("reason") == "compiler-artifact" and "bench" in target.get("kind", []) and msg.get("executable"):
            found[target["name"]] = msg["executable"]
    return found


def build(benches: set[str]) -> dict[str, str]:
    if not benches:
        return {}
    cmd = ["cargo", "bench", "-p", "xlayer-sim", "--no-run", "--message-format=json"]
    for b in sorted(benches):
        cmd += ["--bench", b]
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    return bench_executables(out)


@dataclass(frozen=True)
class Row:
    case: str
    command: str
    collected: str
    instructions: int
    unit: str
    units: int

    @property
    def per_unit(self) -> float:
        return self.instructions / self.units


@dataclass(frozen=True)
class Check:
    target: str
    value: float
    bound: float

    @property
    def met(self) -> bool:
        return self.value <= self.bound


def measure(case: Case, executables: dict[str, str], scratch: pathlib.Path, name: str) -> Row:
    first, *rest = case.argv
    argv = [sys.executable, *rest] if first == "python" else [executables[first], *rest]
    out_file = scratch / f"{name}.callgrind"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
    if case.collect:
        cmd.append(f"--toggle-collect={case.collect}")
    done = subprocess.run([*cmd, *argv], cwd=ROOT / "benches", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{name}: exit code {done.returncode}\n{done.stderr[-2000:]}")
    return Row(name, " ".join(case.argv), case.collect or "whole process", totals(out_file.read_text()), case.unit,
               units(done.stdout, case.unit_pattern))


def checks(rows: dict[str, Row]) -> list[Check]:
    """The targets whose cases ran."""
    out = []
    for label, num, den, bound in TARGETS:
        if num in rows and (den is None or den in rows):
            out.append(Check(label, rows[num].per_unit / (rows[den].per_unit if den else 1.0), bound))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=list(CASES), action="append",
                    help="run only this case (repeatable; default: every case)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="callgrind runs at once (the counts do not depend on it; default: the CPUs)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    a = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("error: valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    if a.jobs < 1:
        print(f"error: --jobs must be at least 1, got {a.jobs}", file=sys.stderr)
        return 2
    names = a.case or list(CASES)
    executables = build({CASES[n].argv[0] for n in names} - {"python"})
    with tempfile.TemporaryDirectory() as d, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {n: pool.submit(measure, CASES[n], executables, pathlib.Path(d), n) for n in names}
        rows = {n: f.result() for n, f in futures.items()}
    results = checks(rows)
    if a.json:
        print(json.dumps({"cases": [{**asdict(r), "per_unit": r.per_unit} for r in rows.values()],
                          "targets": [{**asdict(c), "met": c.met} for c in results]}, indent=2))
        return 0
    print(f"{'case':<14} {'collected':<22} {'instructions':>15} {'units':>12}  {'a unit':>10}")
    for r in rows.values():
        print(f"{r.case:<14} {r.collected:<22} {r.instructions:>15,} {r.units:>12,} {r.unit:>7} {r.per_unit:>10,.0f}")
    for c in results:
        shown = f"{c.value:,.0f}" if c.bound > 100 else f"{c.value:.2f}x"
        print(f"{c.target}: {shown} ({'met' if c.met else 'not met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

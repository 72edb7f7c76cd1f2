"""The scale issue's targets stated in instructions, counted under callgrind by
`benches/instructions.py`: at most 3,000 instructions a packet on the 16-flow dumbbell,
and the cost a packet (an event) within 1.5x from 16 to 10,000 flows and from 50 to
1,000 mobiles in each radio model. Instruction counts do not move with the machine's
load, so these hold where wall times cannot be asserted; a change that makes a model's
cost grow with its size fails here (about five minutes on two cores, and valgrind)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any

import pytest

from conftest import ROOT, bench_module

instructions = bench_module("instructions")
CASES = sorted({c for _, num, den, _ in instructions.TARGETS for c in (num, den) if c})


@pytest.fixture(scope="module")
def targets() -> dict[str, Any]:
    if shutil.which("valgrind") is None:
        pytest.skip("needs valgrind (Debian: apt-get install valgrind)")
    cmd = [sys.executable, "benches/instructions.py", "--json", *(f"--case={c}" for c in CASES)]
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    return {t["target"]: t for t in json.loads(out)["targets"]}


@pytest.mark.slow
@pytest.mark.parametrize("target", [t[0] for t in instructions.TARGETS])
def test_target_is_met(targets: dict[str, Any], target: str) -> None:
    t = targets[target]
    assert t["met"], f"{target}: {t['value']:.4g} against at most {t['bound']}"

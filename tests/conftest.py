"""Shared fixtures. The tests run against the real native module `xlayer._core`
(build it with `pip install -e .` or `pip install .`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

import xlayer
from xlayer import cli

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
DUMBBELL = SCENARIOS / "dumbbell.toml"
LOSSY = SCENARIOS / "lossy_link.toml"
SHORT = {"simulation.duration": "5s"}  # keep simulated time (and test time) small
# Data some shipped scenarios read from outside the repository (the GPL-3.0 Mahimahi
# traces); a checkout without it skips those scenarios.
SHARED = ROOT.parent / "shared"


def bench_module(name: str) -> Any:
    """A script of `benches/` as a module (`benches/` is not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benches" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # for its dataclasses
    spec.loader.exec_module(module)
    return module


def shipped_scenarios() -> list[Any]:
    """Every `scenarios/*.toml`, marked skipped when it reads `../shared` and that is absent."""
    out = []
    for p in sorted(SCENARIOS.glob("*.toml")):
        absent = "../../shared/" in p.read_text() and not SHARED.exists()
        out.append(pytest.param(p, id=p.name, marks=pytest.mark.skipif(absent, reason="needs ../shared")))
    return out


def assert_conserved(res: xlayer.RunResult) -> None:
    c = res.conservation
    assert set(c) >= {"sent", "delivered", "dropped", "in_flight"}, c
    # Group forwarding's copies count beside what was sent (the first shipped group
    # scenario, mbms_group, has them).
    assert c["sent"] + c.get("replicated", 0) == c["delivered"] + c["dropped"] + c["in_flight"], c
    assert c["sent"] > 0, c


@pytest.fixture(scope="session")
def lossy_run() -> xlayer.RunResult:
    """The lossy scenario, 5 s, seed 1 run 0 (shared: several tests only read it)."""
    return xlayer.run(LOSSY, seed=1, run=0, overrides=SHORT, progress=False)


@pytest.fixture(scope="session")
def dumbbell_run() -> xlayer.RunResult:
    return xlayer.run(DUMBBELL, seed=1, run=0, overrides=SHORT, progress=False)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Any:
    """Run the `xlayer` command in-process: returns (exit code, stdout, stderr)."""

    def go(*argv: str) -> tuple[int, str, str]:
        try:
            code = cli.main([str(a) for a in argv])
        except SystemExit as e:  # argparse usage errors
            code = int(e.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return go

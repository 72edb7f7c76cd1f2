"""The full Akyildiz & Joe (AAL-X, Fig. 4) reproduction: every check as its own test, on
10 seeds of 120 s (a few minutes on 2 cores), and C5's Rust tests where cargo is
available."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from xlayer.papers.aalx import checks, experiments

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return experiments.run_all(experiments.points(quick=False), workers=2).runs


@pytest.mark.slow
@pytest.mark.parametrize("check", [checks.c0, checks.c1, checks.c2, checks.c3], ids=["C0", "C1", "C2", "C3"])
def test_check(runs: pd.DataFrame, check) -> None:
    c = check(runs)
    assert c.passed, f"{c.name}: {c.claim}: {c.detail}"


@pytest.mark.slow
def test_c4_eq2() -> None:
    c = checks.c4()
    assert c.passed, c.detail


@pytest.mark.slow
def test_every_point_has_every_seed(runs: pd.DataFrame) -> None:
    want = {(p.experiment, p.variant, p.aal, p.x): p.trials for p in experiments.points(quick=False)}
    got = runs.groupby(["experiment", "variant", "aal", "x"]).seed.nunique().to_dict()
    assert got == want


# C5: the CRC catalogue values and the six §2.4 scenarios are Rust tests (Python cannot
# reach the Rust CRCs); run them by name.
@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["--lib", "l2::atm::crc::tests::catalogue_check_values", "--", "--exact"],
    ["--test", "sarq_scenarios", "scenario_"],
], ids=["crc-catalogue", "section-2.4-scenarios"])
def test_c5_rust(args: list[str]) -> None:
    cargo = shutil.which("cargo")
    if cargo is None or not (ROOT / "Cargo.toml").exists():
        pytest.skip("cargo or the Rust workspace is not available")
    r = subprocess.run([cargo, "test", "-q", "-p", "xlayer-proto", *args], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    passed = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", r.stdout))
    assert passed >= (1 if "crc" in args[1] else 6), r.stdout[-2000:]

"""The full Jayaram & Rhee (DBP) reproduction: every check of the DBP issue as its own
test, on 10 seeds and 40 transfer trials (a few minutes on 2 cores). C2 and C3 fail in
this model, for the reasons in docs/reproductions/dbp.md; they are strict xfails, so a
change that makes them pass is noticed."""

from __future__ import annotations

import pandas as pd
import pytest

from xlayer.papers.dbp import checks, experiments


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return experiments.run_all(experiments.points(quick=False), workers=2).runs


@pytest.mark.slow
@pytest.mark.parametrize("check", [
    checks.c1,
    pytest.param(checks.c2, marks=pytest.mark.xfail(strict=True, reason="DBP's smoothed RTT overshoots the band: "
                                                                       "docs/reproductions/dbp.md, 'Why C2 fails'")),
    pytest.param(checks.c3, marks=pytest.mark.xfail(strict=True, reason="two DBP flows keep their first shares: "
                                                                       "docs/reproductions/dbp.md, 'Why C3 fails'")),
    checks.c4, checks.c5, checks.c6,
], ids=["C1", "C2", "C3", "C4", "C5", "C6"])
def test_check(runs: pd.DataFrame, check) -> None:
    c = check(runs)
    assert c.passed, f"{c.name}: {c.claim}: {c.detail}"


@pytest.mark.slow
def test_every_point_has_every_seed(runs: pd.DataFrame) -> None:
    want = {(p.experiment, p.variant, p.x): p.trials for p in experiments.points(quick=False)}
    got = runs.groupby(["experiment", "variant", "x"]).seed.nunique().to_dict()
    assert got == want

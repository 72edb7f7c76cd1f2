"""The full Koga et al. reproduction: every check of issue 3 as its own test,
on 20 seeds and the full grids (about 2-3 minutes on 2 cores). C6 and C7 fail under the
primary readings and pass under one alternative each (22 PDUs per TTI; the status one
tick later), for the reasons in docs/reproductions/koga.md; they are strict xfails, so a
change that makes them pass is noticed."""

from __future__ import annotations

import pandas as pd
import pytest

from xlayer.papers.koga import checks, experiments, SEEDS_FULL


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return experiments.run_all(experiments.experiments(quick=False), range(1, SEEDS_FULL + 1), workers=2)


@pytest.mark.slow
def test_c1_ideal_awnd() -> None:
    c = checks.c1()
    assert c.passed, c.detail


@pytest.mark.slow
@pytest.mark.parametrize("check", [
    checks.c2, checks.c3, checks.c4, checks.c5,
    pytest.param(checks.c6, marks=pytest.mark.xfail(strict=True, reason="Fig. 8's best windows are 7/6/4 with 24 "
                                                                       "PDUs per TTI: docs/reproductions/koga.md, "
                                                                       "'Why C6 fails'")),
    pytest.param(checks.c7, marks=pytest.mark.xfail(strict=True, reason="no significant rise past Fig. 2's minimum "
                                                                       "with the status at t0 + 80 ms: "
                                                                       "docs/reproductions/koga.md, 'Why C7 fails'")),
], ids=["C2", "C3", "C4", "C5", "C6", "C7"])
def test_check(runs: pd.DataFrame, check) -> None:
    c = check(runs)
    assert c.passed, f"{c.name}: {c.claim}: {c.detail}"


@pytest.mark.slow
def test_every_run_is_accounted_for(runs: pd.DataFrame) -> None:
    # run_all raises on a conservation failure; here: every point has every seed.
    counts = runs.groupby(["experiment", "rate_kbps", "x"], dropna=False).seed.nunique()
    assert (counts == SEEDS_FULL).all()

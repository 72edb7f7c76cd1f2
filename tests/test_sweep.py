"""Sweeps (serial and parallel) and replication statistics."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import xlayer
from xlayer.stats import mean_ci, summarize
from xlayer.plan import Plan

GRID = {"link.bottleneck.rate": ["10Mbps", "20Mbps"]}
SEEDS = [1, 2]


@pytest.fixture(scope="module")
def small() -> dict:
    return xlayer.scenarios.dumbbell(n_flows=2, duration="3s")


@pytest.fixture(scope="module")
def serial(small: dict) -> pd.DataFrame:
    return xlayer.sweep(small, GRID, seeds=SEEDS, workers=1, progress=False)


def test_points_order() -> None:
    got = Plan({}, grid={"a": [1, 2], "b": ["x", "y"]}, seeds=[7, 8], runs=[0]).points()
    assert [(p.params["a"], p.params["b"], p.seed) for p in got] == [
        (a, b, s) for a in (1, 2) for b in ("x", "y") for s in (7, 8)
    ]


def test_sweep_table(serial: pd.DataFrame, small: dict) -> None:
    assert list(serial.columns[:4]) == ["link.bottleneck.rate", "seed", "run", "fingerprint"]
    assert len(serial) == 2 * 2 * 2  # grid points x seeds x flows
    heads = serial[["link.bottleneck.rate", "seed"]].drop_duplicates()
    assert [tuple(r) for r in heads.itertuples(index=False)] == [
        ("10Mbps", 1), ("10Mbps", 2), ("20Mbps", 1), ("20Mbps", 2)
    ]
    assert (serial["run"] == 0).all()
    assert serial.attrs["xlayer"]["params"] == ["link.bottleneck.rate"]
    # Each row's fingerprint is the one a single run of that point gives.
    one = xlayer.run(small, seed=2, overrides={"link.bottleneck.rate": "20Mbps"}, progress=False)
    row = serial[(serial["seed"] == 2) & (serial["link.bottleneck.rate"] == "20Mbps")]
    assert set(row["fingerprint"]) == {one.fingerprint}
    pd.testing.assert_frame_equal(row.iloc[:, 4:].reset_index(drop=True), one.flows)


def test_parallel_equals_serial(serial: pd.DataFrame, small: dict) -> None:
    parallel = xlayer.sweep(small, GRID, seeds=SEEDS, workers=2, progress=False)
    pd.testing.assert_frame_equal(parallel, serial)


def test_runs_argument(small: dict) -> None:
    lossy = xlayer.apply_overrides(
        xlayer.load(small), {"link.bottleneck.loss": {"model": "bernoulli", "p": 0.01}}
    )
    df = xlayer.sweep(lossy, seeds=[1], runs=2, progress=False)
    assert list(df.drop_duplicates("run")["run"]) == [0, 1]
    assert df["fingerprint"].nunique() == 2  # each run draws different losses


def test_invalid_grid_point_fails_before_running(small: dict) -> None:
    with pytest.raises(xlayer.ScenarioError, match="10Mbit"):
        xlayer.sweep(small, {"link.bottleneck.rate": ["10Mbps", "10Mbit"]}, progress=False)
    with pytest.raises(xlayer.OverrideError, match="link.nope.rate"):
        xlayer.sweep(small, {"link.nope.rate": ["10Mbps"]}, progress=False)


def test_intervals_use_the_t_quantiles_of_the_tables() -> None:
    # Two-sided critical values from standard t tables, for n = df + 1 samples.
    for df, t in [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (29, 2.0452), (120, 1.9799)]:
        x = [float(i % 2) for i in range(df + 1)]
        r = mean_ci(x)
        assert r["ci_half_width"] == pytest.approx(t * r["std"] / math.sqrt(df + 1), rel=1e-4)
    r = mean_ci([0.0, 1.0] * 5 + [0.5], ci=0.99)  # df 10
    assert r["ci_half_width"] == pytest.approx(3.1693 * r["std"] / math.sqrt(11), rel=1e-4)


def test_mean_ci() -> None:
    r = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    hw = 2.7764451 * math.sqrt(2.5) / math.sqrt(5)
    assert (r["n"], r["mean"]) == (5, 3.0)
    assert r["ci_low"] == pytest.approx(3 - hw) and r["ci_high"] == pytest.approx(3 + hw)
    assert math.isnan(mean_ci([1.0])["ci_half_width"])


def test_summarize_sweep(serial: pd.DataFrame) -> None:
    s = summarize(serial, metrics=["goodput_bps"])
    assert list(s.columns[:2]) == ["link.bottleneck.rate", "name"]  # default grouping
    assert len(s) == 2 * 2  # grid points x flows
    assert (s["n"] == len(SEEDS)).all()
    assert (s["ci_low"] <= s["mean"]).all() and (s["mean"] <= s["ci_high"]).all()
    g = serial[(serial["link.bottleneck.rate"] == "10Mbps") & (serial["name"] == "f0")]
    row = s[(s["link.bottleneck.rate"] == "10Mbps") & (s["name"] == "f0")].iloc[0]
    assert row["mean"] == pytest.approx(g["goodput_bps"].mean())


def test_summarize_explicit() -> None:
    df = pd.DataFrame({"k": ["a", "a", "a", "b"], "x": [1.0, 2.0, 3.0, 5.0],
                       "y": [1.0, None, 3.0, 1.0]})
    s = summarize(df, by=["k"], metrics=["x", "y"], ci=0.9)
    a_y = s[(s["k"] == "a") & (s["metric"] == "y")].iloc[0]
    assert a_y["n"] == 2 and a_y["mean"] == 2.0
    with pytest.raises(KeyError, match="nope"):
        summarize(df, by=["nope"], metrics=["x"])

"""Sweeps on a Dask cluster (a 2-worker LocalCluster here) give the same records as a
serial run (check C2), record failures, and the CLI reaches a scheduler by address."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pytest
from distributed import Client, LocalCluster

import xlayer
from xlayer.store import Store

GRID = {"link.bottleneck.rate": ["10Mbps", "20Mbps"], "link.bottleneck.queue": ["30pkt", "100pkt"]}
SEEDS = [1, 2, 3]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    return xlayer.scenarios.dumbbell(n_flows=2, duration="3s")


def _fingerprints(df: pd.DataFrame) -> list[tuple[Any, ...]]:
    heads = df[[*GRID, "seed", "run", "fingerprint"]].drop_duplicates()
    return [tuple(r) for r in heads.itertuples(index=False)]


def test_c2_one_worker_two_workers_and_dask_give_the_same_fingerprints(
        tmp_path: Path, small: dict[str, Any], client: Client) -> None:
    one = xlayer.sweep(small, GRID, seeds=SEEDS, store=tmp_path / "one", workers=1, progress=False)
    two = xlayer.sweep(small, GRID, seeds=SEEDS, store=tmp_path / "two", workers=2, progress=False)
    dask = xlayer.sweep(small, GRID, seeds=SEEDS, store=tmp_path / "dask", client=client, progress=False)
    assert len(_fingerprints(one)) == 4 * len(SEEDS)
    assert _fingerprints(one) == _fingerprints(two) == _fingerprints(dask)
    pd.testing.assert_frame_equal(dask, one)
    assert dask.attrs["xlayer"]["computed"] == 12
    # The records are the same files' content, whoever computed them.
    for name in ("one", "two", "dask"):
        st = Store(tmp_path / name)
        assert sorted(st.keys()) == sorted(Store(tmp_path / "one").keys())


def test_dask_failures_are_recorded_and_the_rest_completes(tmp_path: Path, small: dict[str, Any],
                                                          client: Client) -> None:
    grid = {"simulation.max_events_per_instant": [1, 10_000_000]}
    df = xlayer.sweep(small, grid, seeds=[1, 2], store=tmp_path / "st", client=client, progress=False)
    failed = df.attrs["xlayer"]["failed"]
    assert [f["params"]["simulation.max_events_per_instant"] for f in failed] == [1, 1]
    assert all("simulated time stopped advancing" in f["message"] for f in failed)
    assert df["seed"].nunique() == 2


def test_dask_without_a_store_raises_like_a_serial_sweep(small: dict[str, Any], client: Client) -> None:
    with pytest.raises(xlayer.ScenarioError, match="grid point simulation.max_events_per_instant=1: "
                                                   "simulated time stopped advancing"):
        xlayer.sweep(small, {"simulation.max_events_per_instant": [1]}, client=client, progress=False)
    df = xlayer.sweep(small, GRID, seeds=[1], client=client, progress=False)
    pd.testing.assert_frame_equal(df, xlayer.sweep(small, GRID, seeds=[1], progress=False))


def test_cli_sweep_on_a_scheduler_address(run_cli: Any, tmp_path: Path, cluster: LocalCluster,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(xlayer.scenarios.dumbbell(n_flows=1, duration="1s")))
    code, out, err = run_cli("sweep", "s.json", "--grid", "link.bottleneck.rate=10Mbps,20Mbps",
                             "--seeds", "1-3", "--store", "st", "--executor", "dask",
                             "--scheduler", cluster.scheduler_address, "-q")
    assert code == 0, err
    assert "s: 6 runs (6 computed, 0 from the store, 0 failed) in st" in out
    code, _, err = run_cli("sweep", "s.json", "--store", "st", "--executor", "dask",
                           "--scheduler", "nonsense://x")
    assert code == 2 and "cannot reach the Dask scheduler at nonsense://x: unknown address scheme" in err

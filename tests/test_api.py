"""xlayer.run, RunResult, scenario loading and overrides."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import DUMBBELL, LOSSY, SHORT, assert_conserved, shipped_scenarios

import xlayer
from xlayer import _core
from xlayer.api import RUN_FILES
from xlayer.scenario import parse_value

FLOW_COLUMNS = {
    "flow", "name", "protocol", "src", "dst", "tx_packets", "tx_bytes", "rx_packets",
    "rx_bytes", "lost_packets", "in_flight_packets", "delay_p95_s", "goodput_bps",
    "retransmissions", "timeouts",
}
LINK_COLUMNS = {"link", "direction", "tx_packets", "tx_bytes", "utilization",
                "drops_queue_overflow", "drops_channel"}


def test_run_returns_tidy_tables(dumbbell_run: xlayer.RunResult) -> None:
    res = dumbbell_run
    assert isinstance(res.flows, pd.DataFrame) and isinstance(res.links, pd.DataFrame)
    assert FLOW_COLUMNS <= set(res.flows.columns)
    assert list(res.flows["name"]) == ["f0", "f1", "f2", "f3"]
    assert (res.flows["protocol"] == "tcp").all()
    assert LINK_COLUMNS <= set(res.links.columns)
    assert len(res.links) == 2 * 9  # one row per link direction
    assert list(res.series.columns) == ["time_s", "entity", "metric", "value"]
    assert len(res.series) > 0
    assert (res.flows["rx_packets"] > 0).all()
    assert (res.flows["rx_packets"] <= res.flows["tx_packets"]).all()
    assert re.fullmatch(r"0x[0-9a-f]{16}", res.fingerprint)
    assert res.scenario["simulation"]["duration"] == "5s"


@pytest.mark.parametrize("flow_name", ["bernoulli", "bernoulli-over-the-lossy-link"])
def test_series_names_are_the_rows_text_as_arrow_lays_it_out(flow_name: str) -> None:
    """The native series gives entity and metric as Arrow text buffers (n + 1 i64
    offsets into the rows' UTF-8); the DataFrame holds each row's name as a string
    column, as a list of names would give. Names of up to 16 bytes are copied a fixed
    16 bytes at a time, longer ones (the second case) by their length."""
    doc = xlayer.resolve(LOSSY, {"simulation.duration": "2s", "flow.bernoulli.name": flow_name})
    raw = _core.Simulation(xlayer.canonical_json(doc), 1, 0).finish()
    series = xlayer.run(doc, seed=1, run=0, progress=False).series
    assert flow_name in set(series["entity"])
    for column in ("entity", "metric"):
        text = raw["series"][column]
        offsets = memoryview(text["offsets"]).cast("q")
        assert offsets[0] == 0 and len(offsets) == len(series) + 1
        names = [bytes(text["utf8"][a:b]).decode() for a, b in zip(offsets, offsets[1:])]
        assert len(set(names)) > 1
        pd.testing.assert_series_equal(series[column], pd.Series(names, name=column), check_exact=True)


def test_metadata(dumbbell_run: xlayer.RunResult) -> None:
    m = dumbbell_run.metadata
    assert m["version"] == _core.__version__ == xlayer.__version__
    assert "commit" in m
    assert (m["seed"], m["run"], m["scenario_name"]) == (1, 0, "dumbbell")
    # Built from this checkout (the README's `pip install .`): the commit is recorded at
    # build time, not looked up in the working directory at run time.
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", _core.__commit__), _core.__commit__
    assert m["commit"] == _core.__commit__
    assert m["events"] > 0 and m["wall_time_s"] >= 0
    assert m["sim_time_s"] == pytest.approx(5.0)
    assert m["scenario_hash"]
    assert "xoshiro256++" in m["rng"]


@pytest.mark.parametrize("path", shipped_scenarios())
def test_every_scenario_conserves_packets(path: Path) -> None:
    res = xlayer.run(path, overrides=SHORT, progress=False)
    assert_conserved(res)
    assert res.conserved


def test_dict_and_path_inputs_agree(dumbbell_run: xlayer.RunResult) -> None:
    doc = xlayer.load(DUMBBELL)
    res = xlayer.run(doc, overrides=SHORT, progress=False)
    assert res.fingerprint == dumbbell_run.fingerprint
    assert res.metadata["scenario_hash"] == dumbbell_run.metadata["scenario_hash"]
    assert doc["simulation"]["duration"] == "100s"  # the caller's dict is not modified


def test_builder_matches_file() -> None:
    assert xlayer.scenarios.dumbbell(n_flows=4, name="dumbbell", start_jitter="100ms") == xlayer.load(DUMBBELL)
    doc = xlayer.scenarios.dumbbell(n_flows=2, duration="3s", tcp={"delayed_ack": True})
    res = xlayer.run(doc, progress=False)
    assert len(res.flows) == 2
    assert_conserved(res)


def test_same_seed_same_fingerprint(lossy_run: xlayer.RunResult) -> None:
    again = xlayer.run(LOSSY, seed=1, run=0, overrides=SHORT, progress=False)
    assert again.fingerprint == lossy_run.fingerprint
    pd.testing.assert_frame_equal(again.flows, lossy_run.flows)


def test_run_and_seed_change_the_lossy_outcome(lossy_run: xlayer.RunResult) -> None:
    other_run = xlayer.run(LOSSY, seed=1, run=1, overrides=SHORT, progress=False)
    other_seed = xlayer.run(LOSSY, seed=2, run=0, overrides=SHORT, progress=False)
    fps = {lossy_run.fingerprint, other_run.fingerprint, other_seed.fingerprint}
    assert len(fps) == 3


def test_stepped_run_equals_direct_run(lossy_run: xlayer.RunResult) -> None:
    stepped = xlayer.run(LOSSY, seed=1, run=0, overrides=SHORT, progress=True)
    assert stepped.fingerprint == lossy_run.fingerprint


def test_overrides_change_the_run(dumbbell_run: xlayer.RunResult) -> None:
    fast = xlayer.run(DUMBBELL, overrides={**SHORT, "link.bottleneck.rate": "20Mbps"},
                      progress=False)
    assert fast.fingerprint != dumbbell_run.fingerprint
    assert fast.scenario["link"][4]["rate"] == "20Mbps"
    assert fast.flows["goodput_bps"].sum() > dumbbell_run.flows["goodput_bps"].sum()


def test_override_paths_by_name_and_index() -> None:
    doc = xlayer.scenarios.dumbbell(n_flows=2)
    xlayer.apply_overrides(doc, {
        "simulation.duration": "50s",
        "link.bottleneck.rate": "20Mbps",
        "link.bottleneck.loss": {"model": "bernoulli", "p": 0.01},
        "flow.f0.tcp.delayed_ack": True,
        "flow.1.start": "1s",
        "link.s1-r0.delay": "2ms",
    })
    assert doc["simulation"]["duration"] == "50s"
    assert doc["link"][2]["rate"] == "20Mbps"
    assert doc["link"][2]["loss"] == {"model": "bernoulli", "p": 0.01}
    assert doc["flow"][0]["tcp"] == {"delayed_ack": True}
    assert doc["flow"][1]["start"] == "1s"
    assert doc["link"][1]["delay"] == "2ms"
    xlayer.validate(doc)
    xlayer.apply_overrides(doc, {"link.bottleneck.loss.p": 0.05})
    assert doc["link"][2]["loss"]["p"] == 0.05


def test_default_names_address_unnamed_elements() -> None:
    doc = xlayer.scenarios.dumbbell(n_flows=1)
    for e in doc["link"] + doc["flow"]:
        del e["name"]
    xlayer.apply_overrides(doc, {"link.r0-r1.rate": "1Mbps", "flow.flow0.app.kind": "bulk"})
    assert doc["link"][1]["rate"] == "1Mbps"


@pytest.mark.parametrize("path, needle", [
    ("flow.f9.app.rate", "no flow named `f9`"),
    ("link.7.rate", "no link named `7`"),
    ("simulation.duration.unit", "`simulation.duration` is a string"),
    ("a..b", "not a dotted path"),
])
def test_bad_override_paths(path: str, needle: str) -> None:
    doc = xlayer.scenarios.dumbbell(n_flows=2)
    with pytest.raises(xlayer.OverrideError) as e:
        xlayer.apply_overrides(doc, {path: "1"})
    assert path in str(e.value) and needle in str(e.value)
    assert isinstance(e.value, xlayer.ScenarioError) and isinstance(e.value, ValueError)


def test_unknown_override_field_is_rejected_by_rust() -> None:
    with pytest.raises(xlayer.ScenarioError, match="colour"):
        xlayer.run(DUMBBELL, overrides={"link.bottleneck.colour": "red"}, progress=False)


def test_parse_value() -> None:
    assert parse_value("true") is True
    assert parse_value("3") == 3
    assert parse_value("0.01") == 0.01
    assert parse_value('"x"') == "x"
    assert parse_value("20Mbps") == "20Mbps"
    assert parse_value("s0") == "s0"
    assert parse_value("1979-05-27") == "1979-05-27"
    assert parse_value("{model = 'bernoulli', p = 0.1}") == {"model": "bernoulli", "p": 0.1}


def test_errors() -> None:
    # A Python subclass of the native class: picklable (see test_hardening.py), and
    # `except xlayer._core.ScenarioError` still catches it.
    assert issubclass(xlayer.ScenarioError, _core.ScenarioError)
    with pytest.raises(FileNotFoundError, match="no_such.toml"):
        xlayer.run("no_such.toml")
    with pytest.raises(xlayer.ScenarioError, match="no_such.toml"):
        xlayer.load("no_such.toml")
    with pytest.raises(ValueError, match="seed"):
        xlayer.run(DUMBBELL, seed=-1)


def test_json_file_input(tmp_path: Path, lossy_run: xlayer.RunResult) -> None:
    p = tmp_path / "lossy.json"
    p.write_text(json.dumps(xlayer.load(LOSSY)))
    assert xlayer.run(p, overrides=SHORT, progress=False).fingerprint == lossy_run.fingerprint


def test_series_wide(lossy_run: xlayer.RunResult) -> None:
    metric = lossy_run.series["metric"].iloc[0]
    wide = lossy_run.series_wide(metric)
    assert wide.index.name == "time_s" and wide.index.is_monotonic_increasing
    expected = set(lossy_run.series.loc[lossy_run.series["metric"] == metric, "entity"])
    assert set(wide.columns) == expected
    both = lossy_run.series_wide()
    assert list(both.columns.names) == ["entity", "metric"]


def test_to_dir_writes_complete_results(tmp_path: Path, lossy_run: xlayer.RunResult) -> None:
    out = tmp_path / "res"
    lossy_run.to_dir(out)
    assert sorted(p.name for p in out.iterdir()) == sorted(RUN_FILES)
    assert [p.name for p in tmp_path.iterdir()] == ["res"]  # no temp dirs left
    pd.testing.assert_frame_equal(pd.read_parquet(out / "flows.parquet"), lossy_run.flows,
                                  check_dtype=False)
    assert len(pd.read_parquet(out / "series.parquet")) == len(lossy_run.series)
    m = json.loads((out / "manifest.json").read_text())
    assert m["fingerprint"] == lossy_run.fingerprint
    assert m["scenario"] == lossy_run.scenario
    lossy_run.to_dir(out)  # replacing an existing result works too
    assert sorted(p.name for p in out.iterdir()) == sorted(RUN_FILES)


def test_to_dir_leaves_nothing_on_error(tmp_path: Path, lossy_run: xlayer.RunResult,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: object, **k: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(OSError):
        lossy_run.to_dir(tmp_path / "a" / "b")
    assert list(tmp_path.iterdir()) == []


def test_check_determinism() -> None:
    doc = xlayer.resolve(LOSSY, {"simulation.duration": "2s"})
    assert _core.check_determinism(xlayer.canonical_json(doc), 1, 0) is None
    assert xlayer.check_determinism(doc, seed=1, run=0) is None


def test_schema_is_json_schema() -> None:
    s = xlayer.schema()
    assert isinstance(s, dict) and "properties" in json.dumps(s)

"""The `xlayer` command line: run, validate, schema, sweep."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DUMBBELL, LOSSY

import xlayer
from xlayer.api import RUN_FILES

MANIFEST_KEYS = {
    "version", "commit", "command", "seed", "run", "scenario_hash", "fingerprint", "events",
    "wall_time_s", "python", "platform", "rng", "conservation", "scenario",
}


def test_run_writes_results_and_manifest(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "res"
    code, stdout, stderr = run_cli("run", LOSSY, "--seed", "3", "--run", "2", "--out", out,
                                   "--set", "simulation.duration=5s")
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(RUN_FILES)
    m = json.loads((out / "manifest.json").read_text())
    assert MANIFEST_KEYS <= set(m)
    assert (m["seed"], m["run"]) == (3, 2)
    assert m["command"][:2] == ["xlayer", "run"]
    assert "xoshiro256++" in m["rng"] and m["events"] > 0
    assert m["scenario"]["simulation"]["duration"] == "5s"
    api = xlayer.run(LOSSY, seed=3, run=2, overrides={"simulation.duration": "5s"}, progress=False)
    assert m["fingerprint"] == api.fingerprint and m["scenario_hash"] == api.metadata["scenario_hash"]
    assert api.fingerprint in stdout and "bernoulli" in stdout  # summary table + fingerprint
    flows = pd.read_csv(out / "flows.csv")
    assert list(flows["name"]) == ["bernoulli", "gilbert"]
    assert stderr == ""  # no progress bar when stderr is not a terminal
    # The series' names are stored as the flow table's are, as they always have been
    # (the core hands them over as `large_string`, the type pandas keeps).
    series = pq.read_table(out / "series.parquet")
    assert series.schema.field("entity").type == series.schema.field("metric").type == pa.string()
    pd.testing.assert_frame_equal(series.to_pandas(), api.series)


def test_run_default_out_dir_and_quiet(run_cli, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run_cli("run", DUMBBELL, "--quiet", "--set", "simulation.duration=2s")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out" / "dumbbell").iterdir()) == sorted(RUN_FILES)
    assert stdout.startswith("0x") and len(stdout.splitlines()) == 1


def test_run_pcap(run_cli, tmp_path: Path) -> None:
    out = tmp_path / "res"
    code, _, stderr = run_cli("run", LOSSY, "--pcap", "--quiet", "--out", out,
                              "--set", "simulation.duration=1s")
    assert code == 0, stderr
    pcaps = sorted((out / "pcap").iterdir())
    assert pcaps and all(p.stat().st_size > 24 for p in pcaps)
    m = json.loads((out / "manifest.json").read_text())
    assert {f"pcap/{p.name}" for p in pcaps} <= set(m["files"])


def test_validate(run_cli) -> None:
    code, stdout, _ = run_cli("validate", DUMBBELL, "--set", "link.bottleneck.rate=20Mbps")
    assert code == 0 and stdout.startswith("OK")


def test_schema_subprocess() -> None:
    p = subprocess.run([sys.executable, "-m", "xlayer.cli", "schema"], capture_output=True,
                       text=True, check=True)
    schema = json.loads(p.stdout)
    assert isinstance(schema, dict)
    text = json.dumps(schema)
    for field in ("simulation", "node", "link", "flow"):
        assert f'"{field}"' in text


def test_sweep_cli(run_cli, tmp_path: Path) -> None:
    scen = tmp_path / "small.json"
    scen.write_text(json.dumps(xlayer.scenarios.dumbbell(n_flows=2, duration="2s")))
    out = tmp_path / "sw"
    code, stdout, stderr = run_cli("sweep", scen, "--grid", "link.bottleneck.rate=5Mbps,10Mbps",
                                   "--grid", "flow.f0.tcp.delayed_ack=true,false",
                                   "--seeds", "1-2", "--out", out)
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "sweep.csv", "sweep.parquet"]
    df = pd.read_parquet(out / "sweep.parquet")
    assert len(df) == 2 * 2 * 2 * 2
    assert df["flow.f0.tcp.delayed_ack"].tolist()[:8] == [True] * 4 + [False] * 4
    m = json.loads((out / "manifest.json").read_text())
    assert m["n_runs"] == 8 and m["seeds"] == [1, 2]
    assert [r["fingerprint"] for r in m["run_list"]] == df["fingerprint"].iloc[::2].tolist()
    assert "goodput" in stdout


def test_sweep_notes_seeds_of_a_deterministic_scenario(run_cli, tmp_path: Path) -> None:
    scen = tmp_path / "fixed.json"
    scen.write_text(json.dumps(xlayer.scenarios.dumbbell(n_flows=1, duration="1s")))
    code, _, stderr = run_cli("sweep", scen, "--seeds", "1-3", "--out", tmp_path / "a")
    assert code == 0, stderr
    assert "draws no random number" in stderr and "3 seeds give identical runs" in stderr
    df = pd.read_parquet(tmp_path / "a" / "sweep.parquet")
    assert df["fingerprint"].nunique() == 1
    # A random start, one seed, or an override that adds randomness: no note.
    jitter = tmp_path / "jitter.json"
    jitter.write_text(json.dumps(xlayer.scenarios.dumbbell(n_flows=1, duration="1s", start_jitter="50ms")))
    for argv in (["sweep", jitter, "--seeds", "1-2"], ["sweep", scen, "--seeds", "1"],
                 ["sweep", scen, "--seeds", "1,2", "--set",
                  "link.bottleneck.loss={model = \"bernoulli\", p = 0.01}"]):
        code, _, stderr = run_cli(*argv, "--out", tmp_path / "b", "--overwrite")
        assert code == 0, stderr
        assert "draws no random number" not in stderr, argv


def test_console_script_exit_code(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "xlayer.cli", "run", str(tmp_path / "nope.toml"),
                        "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert p.returncode == 2
    assert "nope.toml" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()

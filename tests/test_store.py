"""Plans, the results store and resumable sweeps (issue 13, checks C1, C3, C4)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import xlayer
from xlayer import executors
from xlayer.executors import Job, LocalPool, Serial, execute
from xlayer.plan import Plan, PlanError, Sample, load_plan
from xlayer.store import Store, key

GRID = {"link.bottleneck.rate": ["10Mbps", "20Mbps"]}


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    return xlayer.scenarios.dumbbell(n_flows=2, duration="2s")


# --- plans ------------------------------------------------------------------------------


def test_plan_file_axes_combine_in_order(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(xlayer.scenarios.dumbbell(n_flows=1, duration="1s")))
    (tmp_path / "p.toml").write_text('''
scenario = "s.json"
seeds = "1-2"
runs = [0, 1]
[set]
"simulation.duration" = "2s"
[grid]
"link.bottleneck.queue" = ["50pkt", "200pkt"]
[[zip]]
"link.bottleneck.rate" = ["10Mbps", "20Mbps", "40Mbps"]
"link.bottleneck.delay" = ["10ms", "5ms", "2ms"]
[[random]]
samples = 2
seed = 7
"flow.f0.tcp.min_rto" = { low = 100, high = 1000, integer = true, unit = "ms" }
''')
    plan = load_plan(tmp_path / "p.toml")
    assert plan.name == "p" and plan.scenario == str(tmp_path / "s.json")
    pts = plan.points()
    assert len(pts) == 2 * 3 * 2 * 2 * 2
    assert plan.axes() == ["link.bottleneck.queue", "link.bottleneck.rate", "link.bottleneck.delay",
                           "flow.f0.tcp.min_rto"]
    first = pts[0].params
    assert (first["link.bottleneck.queue"], first["link.bottleneck.rate"], first["link.bottleneck.delay"]) == \
        ("50pkt", "10Mbps", "10ms")  # zipped values go together
    assert {(p.params["link.bottleneck.rate"], p.params["link.bottleneck.delay"]) for p in pts} == \
        {("10Mbps", "10ms"), ("20Mbps", "5ms"), ("40Mbps", "2ms")}
    rto = sorted({p.params["flow.f0.tcp.min_rto"] for p in pts})
    assert len(rto) == 2 and all(r.endswith("ms") and 100 <= int(r[:-2]) <= 1000 for r in rto)
    assert [(p.seed, p.run) for p in pts[:4]] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert load_plan(tmp_path / "p.toml").points() == pts, "random samples come from the plan's seed"
    other = Sample({"flow.f0.tcp.min_rto": {"low": 100, "high": 1000, "integer": True, "unit": "ms"}},
                   samples=2, seed=8).values()
    assert sorted(v["flow.f0.tcp.min_rto"] for v in other) != rto


@pytest.mark.parametrize("body, needle", [
    ('seeds = [1]\n', "scenario:"),
    ('scenario = "s.json"\nsedes = [1]\n', "unknown field(s) ['sedes']"),
    ('scenario = "s.json"\n[[zip]]\n"a.b" = [1, 2]\n"c.d" = [1]\n', "zip[0]: lists of different lengths"),
    ('scenario = "s.json"\n[grid]\n"a.b" = "x"\n', 'grid."a.b": must be a list'),
    ('scenario = "s.json"\n[[random]]\nsamples = 3\n"a.b" = { low = 2, high = 1 }\n', 'random[0]."a.b": low (2)'),
    ('scenario = "s.json"\n[[random]]\nsamples = 0\n"a.b" = [1, 2]\n', "random[0].samples"),
    ('scenario = "s.json"\nseeds = "3-1"\n', "seeds:"),
    ('scenario = "s.json"\n[grid]\n"a.b" = [1]\n[[zip]]\n"a.b" = [2]\n', "appear in more than one axis"),
])
def test_plan_errors_name_the_field(tmp_path: Path, body: str, needle: str) -> None:
    (tmp_path / "p.toml").write_text(body)
    with pytest.raises(PlanError) as info:
        load_plan(tmp_path / "p.toml").points()
    assert needle in str(info.value) and str(tmp_path / "p.toml") in str(info.value)


# --- the store --------------------------------------------------------------------------


def test_store_sweep_equals_memory_sweep_and_reruns_nothing(tmp_path: Path, small: dict[str, Any]) -> None:
    ref = xlayer.sweep(small, GRID, seeds=[1, 2], progress=False)
    got = xlayer.sweep(small, GRID, seeds=[1, 2], store=tmp_path / "st", progress=False)
    pd.testing.assert_frame_equal(got, ref)
    assert (got.attrs["xlayer"]["computed"], got.attrs["xlayer"]["cached"]) == (4, 0)
    again = xlayer.sweep(small, GRID, seeds=[1, 2], store=tmp_path / "st", workers=2, progress=False)
    pd.testing.assert_frame_equal(again, ref)
    assert (again.attrs["xlayer"]["computed"], again.attrs["xlayer"]["cached"]) == (0, 4)
    st = Store(tmp_path / "st", create=False)
    assert len(st.keys()) == 4 and st.plans() == ["dumbbell-2"]
    k = st.keys()[0]
    m = st.manifest(k)
    assert m["status"] == "ok" and m["version"] == xlayer.__version__
    assert k == key(m["scenario"], m["seed"], m["run"])
    assert set(m["files"]) == {"flows.parquet", "links.parquet", "manifest.json"}
    # Every table leads with record, seed, run, fingerprint; the dataset reads them lazily.
    flows = st.dataset("flows").to_table(columns=["record", "seed", "fingerprint", "goodput_bps"]).to_pandas()
    assert len(flows) == 4 * 2 and set(flows["record"]) == set(st.keys())
    links = st.dataset("links").to_table().to_pandas()
    assert set(links["fingerprint"]) == set(ref["fingerprint"])
    pts = st.points()
    assert list(pts.columns[:4]) == ["link.bottleneck.rate", "seed", "run", "record"]
    assert (pts["status"] == "ok").all()


def test_series_are_kept_when_the_plan_asks(tmp_path: Path, small: dict[str, Any]) -> None:
    xlayer.sweep(small, seeds=[1], store=tmp_path / "st", progress=False)
    st = Store(tmp_path / "st")
    assert not st.has(st.keys()[0], series=True)
    df = xlayer.sweep(small, seeds=[1], store=st, series=True, progress=False)
    assert df.attrs["xlayer"]["computed"] == 1, "a record without series is computed again"
    series = st.dataset("series").to_table().to_pandas()
    assert {"time_s", "entity", "metric", "value", "record"} <= set(series.columns) and len(series) > 0


def test_c3_adding_seeds_computes_exactly_the_new_runs(tmp_path: Path, small: dict[str, Any]) -> None:
    first = xlayer.sweep(small, GRID, seeds=range(1, 11), store=tmp_path / "st", workers=2, progress=False)
    assert first.attrs["xlayer"]["computed"] == 20
    more = xlayer.sweep(small, GRID, seeds=range(1, 21), store=tmp_path / "st", workers=2, progress=False)
    assert (more.attrs["xlayer"]["computed"], more.attrs["xlayer"]["cached"]) == (20, 20)
    assert len(Store(tmp_path / "st").keys()) == 40
    pd.testing.assert_frame_equal(more, xlayer.sweep(small, GRID, seeds=range(1, 21), progress=False))
    # A new axis value runs only its own points.
    wider = xlayer.sweep(small, {"link.bottleneck.rate": ["10Mbps", "20Mbps", "30Mbps"]}, seeds=range(1, 21),
                         store=tmp_path / "st", progress=False)
    assert (wider.attrs["xlayer"]["computed"], wider.attrs["xlayer"]["cached"]) == (20, 40)


def test_store_refuses_a_folder_that_is_not_a_store(tmp_path: Path, small: dict[str, Any]) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(xlayer.OutputError, match="not an xlayer store"):
        xlayer.sweep(small, store=tmp_path / "mine", progress=False)
    assert os.listdir(tmp_path / "mine") == ["notes.txt"]


def test_a_crashed_commit_leaves_no_record(tmp_path: Path, small: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    st = Store(tmp_path / "st")

    def crash(*a: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "rename", crash)
    with pytest.raises(OSError, match="disk full"):
        xlayer.sweep(small, seeds=[1], store=st, progress=False)
    assert st.keys() == [] and st.failed() == []
    assert list((tmp_path / "st" / ".tmp").iterdir()) == [], "the staging folder is removed"


# --- C4: failures -----------------------------------------------------------------------


def _one_point_breaks_at_build(small: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Two grid points; in one, flow f1's receiver hangs off no link."""
    links = small["link"]
    cut = [link for link in links if link["name"] != "r1-d1"]
    return small, {"link": [links, cut]}


def test_c4_a_run_that_fails_at_build_is_recorded_and_the_rest_completes(
        tmp_path: Path, small: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # Validation finds every build error up front; to reach the build with one, skip it.
    monkeypatch.setattr(xlayer.sweep.__globals__["_core"], "validate", lambda *a: None)
    base, grid = _one_point_breaks_at_build(small)
    df = xlayer.sweep(base, grid, seeds=[1, 2], store=tmp_path / "st", progress=False)
    failed = df.attrs["xlayer"]["failed"]
    assert [(f["seed"], f["path"], f["message"]) for f in failed] == [
        (1, "flow[1].dst", "flow[1].dst: no path from `s1` to `d1`"),
        (2, "flow[1].dst", "flow[1].dst: no path from `s1` to `d1`")]
    assert df["seed"].tolist() == [1, 1, 2, 2] and df.attrs["xlayer"]["computed"] == 2
    st = Store(tmp_path / "st")
    docs = st.failed()
    assert len(docs) == 2 and all(d["status"] == "failed" and d["error"]["path"] == "flow[1].dst" for d in docs)
    assert list(st.points()["status"]) == ["ok", "ok", "failed", "failed"]


@pytest.mark.parametrize("workers", [1, 2])
def test_c4_a_run_that_stalls_is_recorded_with_its_grid_point(tmp_path: Path, small: dict[str, Any],
                                                             workers: int) -> None:
    grid = {"simulation.max_events_per_instant": [1, 10_000_000]}
    df = xlayer.sweep(small, grid, seeds=[1, 2, 3], store=tmp_path / "st", workers=workers, progress=False)
    failed = df.attrs["xlayer"]["failed"]
    assert [f["params"] for f in failed] == [{"simulation.max_events_per_instant": 1}] * 3
    assert all("simulated time stopped advancing" in f["message"] and f["type"] == "ScenarioError"
               and f["attempts"] == 1 for f in failed), failed
    assert set(df["simulation.max_events_per_instant"]) == {10_000_000} and df["seed"].nunique() == 3


def test_without_a_store_a_failure_still_stops_the_sweep(small: dict[str, Any]) -> None:
    with pytest.raises(xlayer.ScenarioError, match="grid point simulation.max_events_per_instant=1"):
        xlayer.sweep(small, {"simulation.max_events_per_instant": [1]}, progress=False)


# --- retries ----------------------------------------------------------------------------


def die_once(jobs: list[Job]) -> Any:
    """Kills its worker the first time it sees a job (module level: workers import it)."""
    mark = Path(os.environ["XLAYER_TEST_MARKS"], jobs[0].record)
    if not mark.exists():
        mark.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return executors.run_batch(jobs)


def always_die(jobs: list[Job]) -> Any:
    if jobs[0].seed == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return executors.run_batch(jobs)


def _jobs(small: dict[str, Any], seeds: list[int]) -> list[Job]:
    return [Job(key(small, s, 0), small, s, 0, {}) for s in seeds]


def test_a_dead_worker_is_retried_once(tmp_path: Path, small: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLAYER_TEST_MARKS", str(tmp_path))
    st = Store(tmp_path / "st")
    out = execute(st, _jobs(small, [1, 2, 3]), LocalPool(2), fn=die_once)
    assert (out.computed, out.failed) == (3, [])
    out = execute(Store(tmp_path / "st2"), _jobs(small, [1, 2, 3]), LocalPool(2), fn=always_die)
    assert out.computed == 2 and len(out.failed) == 1
    err = Store(tmp_path / "st2").failed()[0]
    assert err["seed"] == 2 and "was killed by signal 9" in err["error"]["message"]


def flaky(jobs: list[Job]) -> Any:
    raise RuntimeError("the batch could not start")


def test_a_failing_batch_is_retried_then_recorded(tmp_path: Path, small: dict[str, Any]) -> None:
    st = Store(tmp_path / "st")
    out = execute(st, _jobs(small, [1, 2]), Serial(), fn=flaky)
    assert out.computed == 0 and len(out.failed) == 2
    assert {f["error"]["message"] for f in st.failed()} == {"the batch could not start"}


# --- C1: a sweep killed midway resumes ---------------------------------------------------

C1_PLAN = '''
name = "c1"
scenario = "s.json"
seeds = "1-50"
[grid]
"link.bottleneck.rate" = ["10Mbps", "20Mbps"]
"link.bottleneck.queue" = ["50pkt", "100pkt"]
'''


def test_c1_a_sweep_killed_with_sigkill_resumes_to_the_same_tables(tmp_path: Path) -> None:
    doc = xlayer.scenarios.dumbbell(n_flows=2, duration="10s")
    (tmp_path / "s.json").write_text(json.dumps(doc))
    (tmp_path / "p.toml").write_text(C1_PLAN)
    store = tmp_path / "st"
    argv = [sys.executable, "-m", "xlayer.cli", "sweep", "p.toml", "--store", "st", "-j", "2", "-q"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if len(Store(store, create=False).keys()) >= 40 if (store / "xlayer-store.json").exists() else False:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the sweep ended before it could be killed: {proc.stderr.read()!r}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    st = Store(store, create=False)
    done = st.keys()
    assert 40 <= len(done) < 200
    for k in done:  # every record that exists is whole
        m = st.manifest(k)
        assert m["status"] == "ok" and m["key"] == k
        for name in ("flows", "links"):
            assert len(st.table(k, name)) > 0
    time.sleep(0.5)  # the workers notice their parent is gone
    resumed = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"200 runs ({200 - len(done)} computed, {len(done)} from the store, 0 failed)" in resumed.stdout
    assert list((store / ".tmp").iterdir()) == [], "the killed sweep's staging folders are gone"
    plan = load_plan(tmp_path / "p.toml")
    final = xlayer.sweep(plan, store=store, progress=False)
    assert final.attrs["xlayer"]["computed"] == 0
    serial = xlayer.sweep(Plan(doc, grid=plan.grid, seeds=plan.seeds), progress=False)
    pd.testing.assert_frame_equal(final, serial)


# --- the command line -------------------------------------------------------------------


def test_cli_plan_sweep_and_store_commands(run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps(xlayer.scenarios.dumbbell(n_flows=1, duration="1s")))
    (tmp_path / "p.toml").write_text('scenario = "s.json"\nseeds = "1-3"\n'
                                     '[grid]\n"simulation.max_events_per_instant" = [1, 1000]\n')
    code, out, err = run_cli("sweep", "p.toml", "--store", "st", "-q")
    assert code == 1, "a failed run makes the exit code 1"
    assert "p: 6 runs (3 computed, 0 from the store, 3 failed) in st" in out
    assert err.count("xlayer: failed: simulation.max_events_per_instant=1 seed") == 3
    code, out, _ = run_cli("store", "ls", "st")
    assert code == 0 and "6 records (3 failed, 3 ok); plans: p" in out
    code, out, _ = run_cli("store", "ls", "st", "--failed")
    assert out.count("simulated time stopped advancing") == 3
    code, out, _ = run_cli("store", "ls", "st", "--plan", "p")
    assert "6 points (3 failed, 3 ok)" in out
    k = Store("st").keys()[0]
    code, out, _ = run_cli("store", "show", "st", k[:8])
    assert code == 0 and f'"key": "{k}"' in out and "goodput_bps" in out
    code, _, err = run_cli("store", "show", "st", "zzzz")
    assert code == 2 and "no record" in err
    (tmp_path / "st" / ".tmp" / f"{k}.{'x'}.1.abc").mkdir(parents=True)
    code, out, _ = run_cli("store", "gc", "st", "--dry-run")
    assert "would remove 0 item(s)" in out, "another machine's staging folder is left alone"
    code, out, err = run_cli("sweep", "p.toml", "--store", "st", "--seeds", "1")
    assert code == 2 and "put --seeds in the plan file" in err
    code, out, err = run_cli("sweep", "p.toml", "--store", "s.json")
    assert code == 2 and "--store" in err and "not an xlayer store" in err
    code, out, err = run_cli("sweep", "p.toml", "--executor", "dask")
    assert code == 2 and "--scheduler" in err
    code, out, err = run_cli("store", "ls", "nowhere")
    assert code == 2 and "not an xlayer store" in err


# --- summaries and reports --------------------------------------------------------------


@pytest.fixture(scope="module")
def lossy_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    doc = xlayer.apply_overrides(xlayer.scenarios.dumbbell(n_flows=2, duration="3s"),
                                 {"link.bottleneck.loss": {"model": "bernoulli", "p": 0.005}})
    path = tmp_path_factory.mktemp("lossy") / "st"
    df = xlayer.sweep(doc, {"link.bottleneck.queue": ["20pkt", "100pkt"]}, seeds=range(1, 6), store=path,
                      progress=False)
    return path, df


def test_summarize_reads_a_store_like_the_sweep_table(lossy_store: tuple[Path, pd.DataFrame]) -> None:
    path, df = lossy_store
    from_store = xlayer.summarize(path, metrics=["goodput_bps", "delay_p95_s"])
    pd.testing.assert_frame_equal(from_store, xlayer.summarize(df, metrics=["goodput_bps", "delay_p95_s"]))
    assert list(from_store.columns[:2]) == ["link.bottleneck.queue", "name"] and (from_store["n"] == 5).all()
    assert (from_store["ci_half_width"] > 0).all()
    frame = Store(path).frame(columns=["goodput_bps"])
    assert list(frame.columns) == ["link.bottleneck.queue", "seed", "run", "record", "fingerprint", "goodput_bps"]


def test_report_writes_markdown_and_plots(run_cli: Any, lossy_store: tuple[Path, pd.DataFrame],
                                          tmp_path: Path) -> None:
    path, df = lossy_store
    code, out, err = run_cli("report", path, "--by", "link.bottleneck.queue", "--metric", "goodput_bps",
                             "--out", tmp_path / "rep", "--format", "svg")
    assert code == 0, err
    files = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert files == ["goodput_bps_vs_link_bottleneck_queue.svg", "manifest.json", "report.md", "summary.csv",
                     "throughput_vs_delay.svg"]
    text = (tmp_path / "rep" / "report.md").read_text()
    mean = df[(df["link.bottleneck.queue"] == "20pkt") & (df["name"] == "f0")]["goodput_bps"].mean()
    assert f"| 20pkt | f0 | 5 | {mean:.6g} |" in text
    assert "![throughput against delay](throughput_vs_delay.svg)" in text
    assert "<svg" in (tmp_path / "rep" / "throughput_vs_delay.svg").read_text()[:400]
    code, _, err = run_cli("report", path, "--by", "link.nope", "--metric", "goodput_bps", "--out", tmp_path / "r2")
    assert code == 2 and "--by link.nope: not an axis or a column" in err and "link.bottleneck.queue" in err
    assert not (tmp_path / "r2").exists()


def test_progress_counts_runs_failures_and_is_silent_when_quiet(
        small: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], run_cli: Any) -> None:
    grid = {"simulation.max_events_per_instant": [1, 10_000_000]}
    xlayer.sweep(small, grid, seeds=[1, 2], store=tmp_path / "st", workers=2, progress=True)
    err = capsys.readouterr().err  # not a terminal: a line at the start and one at the end
    assert "dumbbell-2: 4 runs to compute" in err and "dumbbell-2: 4/4 runs, 2 failed" in err
    xlayer.sweep(small, grid, seeds=[1, 2, 3], store=tmp_path / "st", progress=True)
    err = capsys.readouterr().err
    assert "4 runs to compute, 2 already in the store" in err and "4/4 runs, 3 failed" in err
    xlayer.sweep(small, grid, seeds=[4], store=tmp_path / "st", progress=False)
    assert capsys.readouterr().err == ""
    (tmp_path / "s.json").write_text(json.dumps(small))
    code, out, err = run_cli("sweep", tmp_path / "s.json", "--seeds", "5", "--store", tmp_path / "st", "-q")
    assert code == 0 and err == "" and out.count("\n") == 1

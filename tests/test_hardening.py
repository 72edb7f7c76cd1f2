"""Hardening: --out never destroys user data, errors cross process boundaries, scenario
dicts are canonical, and bad input exits 2 with one line instead of a traceback."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import LOSSY

import xlayer
from xlayer import _core
from xlayer.api import RUN_FILES
from xlayer.outdir import OutputError, own_files

SHORT_SET = ("--set", "simulation.duration=1s")
SWEEP_FILES = ["manifest.json", "sweep.csv", "sweep.parquet"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with a file of the user's in it; HOME is a folder beside it (so
    a test that went wrong could never touch the real home)."""
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "thesis.txt").write_text("precious")
    monkeypatch.setenv("HOME", str(home))
    cwd = tmp_path / "work" / "project"
    cwd.mkdir(parents=True)
    (cwd / "notes.txt").write_text("mine")
    monkeypatch.chdir(cwd)
    return cwd


def _one_line_error(code: int, stderr: str, *needles: str) -> None:
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xlayer: error:"), stderr
    assert "Traceback" not in stderr
    for n in needles:
        assert n in stderr, (n, stderr)


def _staging(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def _sweep_args(out: Path | str) -> list[Any]:
    return ["sweep", LOSSY, *SHORT_SET, "--seeds", "1-2", "--out", out, "-q"]


def _run_args(out: Path | str) -> list[Any]:
    return ["run", LOSSY, *SHORT_SET, "--out", out, "-q"]


# --- defect 1: --out -------------------------------------------------------------------


@pytest.mark.parametrize("args", [_run_args, _sweep_args], ids=["run", "sweep"])
def test_out_refuses_a_folder_that_is_not_an_xlayer_output(run_cli, work: Path, args) -> None:
    d = work / "d"
    d.mkdir()
    (d / "keep").write_text("x")
    code, _, err = run_cli(*args(d))
    _one_line_error(code, err, "--out", "not an xlayer output", "--overwrite")
    assert sorted(p.name for p in d.iterdir()) == ["keep"]
    assert (d / "keep").read_text() == "x"
    assert _staging(work) == []


@pytest.mark.parametrize("args", [_run_args, _sweep_args], ids=["run", "sweep"])
@pytest.mark.parametrize("which", ["dot", "empty", "cwd", "parent", "grandparent", "home",
                                   "root", "dot-dot-slash"])
def test_out_refuses_cwd_its_parents_home_and_root(run_cli, work: Path, args, which: str) -> None:
    out = {"dot": ".", "empty": "", "cwd": str(work), "parent": "..",
           "grandparent": str(work.parent.parent), "home": os.environ["HOME"], "root": "/",
           "dot-dot-slash": "../project/"}[which]
    before = sorted(p.name for p in work.iterdir())
    code, _, err = run_cli(*args(out))
    _one_line_error(code, err, "--out", "refusing" if which != "empty" else "empty path")
    assert sorted(p.name for p in work.iterdir()) == before
    assert (work / "notes.txt").read_text() == "mine"
    assert (Path(os.environ["HOME"]) / "docs" / "thesis.txt").read_text() == "precious"


def test_out_overwrite_replaces_only_xlayer_files(run_cli, work: Path) -> None:
    d = work / "d"
    (d / "sub").mkdir(parents=True)
    (d / "keep").write_text("x")
    (d / "sub" / "deep").write_text("y")
    (d / "flows.csv").write_text("an old file with xlayer's name")
    code, out, err = run_cli("run", LOSSY, *SHORT_SET, "--out", d, "-q", "--pcap", "--overwrite")
    assert code == 0, err
    names = {p.name for p in d.iterdir()}
    assert names == {*RUN_FILES, "pcap", "keep", "sub"}
    assert (d / "keep").read_text() == "x" and (d / "sub" / "deep").read_text() == "y"
    first = json.loads((d / "manifest.json").read_text())
    assert first["xlayer_output"]["kind"] == "run" and out.split()[0] == first["fingerprint"]
    assert own_files(d) == {*RUN_FILES, *(f"pcap/{p.name}" for p in (d / "pcap").iterdir())}
    # Now an xlayer output with the user's files in it: replaced without --overwrite, the
    # user's files kept, and xlayer's old files that are not written again (pcap) removed.
    code, _, err = run_cli("run", LOSSY, *SHORT_SET, "--out", d, "-q", "--seed", "2")
    assert code == 0, err
    assert {p.name for p in d.iterdir()} == {*RUN_FILES, "keep", "sub"}
    assert json.loads((d / "manifest.json").read_text())["seed"] == 2
    assert (d / "keep").read_text() == "x" and (d / "sub" / "deep").read_text() == "y"
    assert _staging(work) == []


@pytest.mark.parametrize("args", [_run_args, _sweep_args], ids=["run", "sweep"])
def test_out_previous_output_is_replaced_whole(run_cli, work: Path, args) -> None:
    d = work / "res"
    for _ in range(2):
        code, _, err = run_cli(*args(d))
        assert code == 0, err
        assert own_files(d) is not None
        assert _staging(work) == []
    if args is _run_args:
        run_cli("run", LOSSY, *SHORT_SET, "--out", d, "-q", "--pcap")
        assert (d / "pcap").is_dir()
        run_cli(*args(d))
        assert sorted(p.name for p in d.iterdir()) == sorted(RUN_FILES)  # old pcap/ gone
    else:
        assert sorted(p.name for p in d.iterdir()) == SWEEP_FILES


def test_out_that_is_a_file_is_refused(run_cli, work: Path) -> None:
    code, _, err = run_cli(*_run_args("notes.txt"))
    _one_line_error(code, err, "--out notes.txt", "not a folder")
    assert (work / "notes.txt").read_text() == "mine"


def test_stale_staging_folders_are_cleaned(run_cli, work: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    stale = work / f".res.tmp-{pid}-abcd1234"
    (stale / "pcap").mkdir(parents=True)
    (stale / "flows.csv").write_text("half")
    alive = work / f".res.tmp-{os.getppid()}-abcd1234"  # a live process: not ours to remove
    alive.mkdir()
    other = work / f".other.tmp-{pid}-abcd1234"  # another target's
    other.mkdir()
    user = work / ".res.tmp-mine"  # not our name pattern
    user.mkdir()
    code, _, err = run_cli(*_run_args(work / "res"))
    assert code == 0, err
    assert not stale.exists()
    assert alive.exists() and other.exists() and user.exists()


def test_stale_old_output_is_put_back_when_the_target_is_missing(work: Path) -> None:
    """A replacement killed between its two renames left the previous output aside."""
    res = xlayer.run(LOSSY, overrides={"simulation.duration": "1s"}, progress=False)
    prev = res.to_dir(work / "prev")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    aside = work / f".res.old-{int(dead.stdout)}-abcd1234"
    prev.rename(aside)
    from xlayer.outdir import clean_stale, target_path

    clean_stale(target_path(work / "res"))
    assert not aside.exists()
    assert json.loads((work / "res" / "manifest.json").read_text())["fingerprint"] == res.fingerprint


def test_to_dir_refuses_foreign_folder_and_overwrite_keeps_the_rest(
    work: Path, lossy_run: xlayer.RunResult
) -> None:
    d = work / "d"
    d.mkdir()
    (d / "keep").write_text("x")
    with pytest.raises(xlayer.OutputError, match="not an xlayer output"):
        lossy_run.to_dir(d)
    assert sorted(p.name for p in d.iterdir()) == ["keep"]
    lossy_run.to_dir(d, overwrite=True)
    assert {p.name for p in d.iterdir()} == {*RUN_FILES, "keep"}
    for bad in (".", "", work, work.parent):
        with pytest.raises(OutputError, match="refusing|empty path"):
            lossy_run.to_dir(bad)
    assert (work / "notes.txt").read_text() == "mine"


def test_unwritable_out_parent(run_cli, work: Path) -> None:
    if os.geteuid() != 0:
        locked = work / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        out = locked / "sub" / "o"
    else:  # root writes anywhere; sysfs refuses even root
        out = Path("/sys/xlayer-test-out/o")
        try:
            os.mkdir(out.parent)
        except PermissionError:
            pass
        else:  # pragma: no cover
            os.rmdir(out.parent)
            pytest.skip("no unwritable folder available")
    for args in (_run_args, _sweep_args):
        code, _, err = run_cli(*args(out))
        _one_line_error(code, err, "--out", "cannot create the folder")


# --- defect 3: errors cross process boundaries ------------------------------------------


def _disconnected() -> dict[str, Any]:
    """Valid field by field, but flow f1 has no path: validation finds it (with the build's
    own check), so a sweep refuses it before any worker starts. Errors raised inside
    workers are covered by test_run_guards.py (a run that stalls)."""
    doc = xlayer.scenarios.dumbbell(n_flows=2, duration="1s")
    doc["link"] = [link for link in doc["link"] if link["name"] != "r1-d1"]
    return doc


def test_scenario_error_pickles_with_path_and_message() -> None:
    with pytest.raises(xlayer.ScenarioError) as info:
        xlayer.run(_disconnected(), progress=False)
    e = info.value
    assert e.path == "flow[1].dst" and e.message == "no path from `s1` to `d1`"
    for err in (e, e.with_context("f.toml"), xlayer.ScenarioNotFoundError("nope.toml: x"),
                xlayer.OverrideError("override `a`: no")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and back.path == err.path
        assert isinstance(back, _core.ScenarioError)
    assert pickle.loads(pickle.dumps(e.with_context("f.toml"))).message == e.message
    o = pickle.loads(pickle.dumps(OutputError("d", "why")))
    assert (str(o), o.path, o.reason) == ("d: why", "d", "why")


def test_parallel_sweep_raises_the_same_scenario_error_as_serial() -> None:
    msgs = []
    for workers in (1, 2):
        with pytest.raises(xlayer.ScenarioError) as info:
            xlayer.sweep(_disconnected(), {"link.bottleneck.rate": ["5Mbps", "10Mbps"]},
                         seeds=[1, 2], workers=workers, progress=False)
        assert info.value.path == "flow[1].dst"
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    assert msgs[0] == "grid point link.bottleneck.rate='5Mbps': flow[1].dst: no path from `s1` to `d1`"


def test_cli_parallel_sweep_error_is_the_serial_message(run_cli, tmp_path: Path) -> None:
    scen = tmp_path / "disc.json"
    scen.write_text(json.dumps(_disconnected()))
    errs = []
    for j in ("1", "2"):
        code, _, err = run_cli("sweep", scen, "--seeds", "1-2", "-j", j, "--out", tmp_path / "o")
        _one_line_error(code, err, "flow[1].dst", "no path")
        errs.append(err)
    assert errs[0] == errs[1]
    assert not (tmp_path / "o").exists() and _staging(tmp_path) == []


def test_worker_exception_that_does_not_pickle_arrives_as_text() -> None:
    from xlayer.pool import WorkerError, portable

    class Local(Exception):  # not importable by name: cannot be pickled
        pass

    e = portable(Local("boom"))
    assert isinstance(e, WorkerError) and str(e) == "Local: boom"
    native = portable(_core.ScenarioError("link[0].rate: bad at line 1 column 9"))
    assert isinstance(native, xlayer.ScenarioError) and native.path == "link[0].rate"
    assert str(native) == "link[0].rate: bad"


# --- defect 4: canonical scenario dicts -------------------------------------------------


@pytest.mark.parametrize("value, path, needle", [
    ({"lossy", "bursty"}, "output.pcap_links", "set"),
    (frozenset({"lossy"}), "output.pcap_links", "set"),
    (b"lossy", "output.pcap_links", "bytes"),
    ([b"lossy"], "output.pcap_links[0]", "bytes"),
    (float("nan"), "output.pcap_links", "nan"),
    ([1.0, float("inf")], "output.pcap_links[1]", "inf"),
    (object(), "output.pcap_links", "object"),
    ({1: "a"}, "output.pcap_links", "key 1"),
])
def test_non_json_values_are_refused_with_their_path(value: Any, path: str, needle: str) -> None:
    doc = xlayer.load(LOSSY)
    doc["output"] = {"pcap_links": value}
    for call in (lambda: xlayer.run(doc, progress=False),
                 lambda: xlayer.sweep(doc, seeds=[1, 2], workers=2, progress=False),
                 lambda: xlayer.canonical_json(doc)):
        with pytest.raises(xlayer.ScenarioError) as info:
            call()
        assert info.value.path == path and str(info.value).startswith(f"{path}: ")
        assert needle in str(info.value)
    with pytest.raises(xlayer.ScenarioError, match=r"^simulation\.x(\[\d\])?: "):
        xlayer.resolve(LOSSY, {"simulation.x": value})


def test_canonical_values_are_plain_and_stable() -> None:
    doc = xlayer.load(LOSSY)
    doc["output"] = {"pcap_links": ("lossy", np.str_("bursty"))}
    doc["link"][0]["loss"]["p"] = np.float64(0.01)
    canon = xlayer.canonical_json(doc)
    assert '"pcap_links":["lossy","bursty"]' in canon and '"p":0.01' in canon
    a = xlayer.sweep(doc, seeds=[1, 2], workers=1, progress=False)
    b = xlayer.sweep(doc, seeds=[1, 2], workers=2, progress=False)
    assert a["fingerprint"].tolist() == b["fingerprint"].tolist()


# --- defect 5: exit 2 (or quiet) instead of tracebacks ---------------------------------


def test_non_utf8_scenario_file(run_cli, tmp_path: Path) -> None:
    p = tmp_path / "latin1.toml"
    p.write_bytes('name = "caf\u00e9"\n'.encode("latin-1"))
    for cmd in ("validate", "run"):
        code, _, err = run_cli(cmd, p, *(["--out", tmp_path / "o"] if cmd == "run" else []))
        _one_line_error(code, err, "latin1.toml", "UTF-8", "0xe9")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("suffix, text", [
    (".toml", "name = " + "[" * 5000 + "]" * 5000),
    (".toml", "name = " + "{a = " * 3000 + "1" + "}" * 3000),
    (".json", '{"name": ' + "[" * 5000 + "]" * 5000 + "}"),
    (".toml", "[simulation]\nduration = " + "[" * 200 + "]" * 200),  # parses; too deep for us
])
def test_deeply_nested_scenario(run_cli, tmp_path: Path, suffix: str, text: str) -> None:
    p = tmp_path / f"deep{suffix}"
    p.write_text(text)
    code, _, err = run_cli("run", p, "--out", tmp_path / "o")
    _one_line_error(code, err, "deep", "nested too deeply")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, needle", [
    (["run", "--seed", str(2**64)], "--seed"),
    (["run", "--run", str(2**64)], "--run"),
    (["run", "--seed", "-1"], "--seed"),
    (["run", "--run", "-3"], "--run"),
    (["sweep", "--seeds", str(2**64)], "--seeds"),
    (["sweep", "--seeds", f"1-{2**64}"], "--seeds"),
    (["sweep", "--runs", "-1"], "--runs"),
    (["sweep", "--seeds", "0-99999999999"], "--seeds"),  # would never finish
])
def test_seed_and_run_out_of_range(run_cli, tmp_path: Path, argv: list[str], needle: str) -> None:
    code, _, err = run_cli(argv[0], LOSSY, *argv[1:], "--out", tmp_path / "o")
    _one_line_error(code, err, needle)
    assert list(tmp_path.iterdir()) == []


def test_sweep_api_checks_seeds() -> None:
    with pytest.raises(ValueError, match="seed must be an integer"):
        xlayer.sweep(LOSSY, seeds=[2**64], progress=False)
    with pytest.raises(ValueError, match="run must be an integer"):
        xlayer.sweep(LOSSY, runs=[-1], progress=False)


@pytest.mark.parametrize("argv", [["schema"], ["schema", "--markdown"]])
def test_closed_stdout_is_quiet(argv: list[str]) -> None:
    """`xlayer schema | head -1`: the reader has gone before (or while) we write."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([sys.executable, "-m", "xlayer.cli", *argv], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(w)
    assert p.returncode in (0, 141), p.stderr
    assert p.stderr == ""


def test_head_of_schema_in_a_shell_pipeline() -> None:
    p = subprocess.run(f"{sys.executable} -m xlayer.cli schema --markdown | head -c 10",
                       shell=True, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout and p.stderr == ""

"""`xlayer plot RUN_DIR` and `RunResult.plot(out_dir)`: PNG and SVG figures of one run."""

from __future__ import annotations

import json
import sys
import xml.dom.minidom
from pathlib import Path

import pytest
from conftest import DUMBBELL, SCENARIOS

import xlayer

FIGURES = ["cwnd", "srtt", "queue", "goodput", "goodput_vs_delay"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plot") / "dumbbell"
    res = xlayer.run(DUMBBELL, overrides={"simulation.duration": "5s"}, progress=False)
    return res.to_dir(out)


def _check_figures(folder: Path, stems: list[str]) -> dict:
    for stem in stems:
        assert (folder / f"{stem}.png").read_bytes()[:8] == PNG_MAGIC, stem
        svg = xml.dom.minidom.parse(str(folder / f"{stem}.svg"))
        texts = " ".join(t.toxml() for t in svg.getElementsByTagName("text"))
        assert "dumbbell" in texts or "dbp_cdma" in texts, stem  # the title says which run
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["xlayer_output"]["kind"] == "plot"
    assert manifest["files"] == [f"{s}.{e}" for s in stems for e in ("png", "svg")] + ["manifest.json"]
    return manifest


def test_plot_a_run_folder(run_dir: Path, run_cli):
    code, out, err = run_cli("plot", run_dir)
    assert code == 0, err
    assert out.startswith(f"wrote {run_dir / 'plots'}/ (cwnd.png, cwnd.svg, srtt.png")
    m = _check_figures(run_dir / "plots", FIGURES)
    assert m["skipped"] == {} and m["scenario_name"] == "dumbbell"
    assert m["fingerprint"] == json.loads((run_dir / "manifest.json").read_text())["fingerprint"]
    # Again: the previous figures are replaced; the run's own files are untouched.
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    assert run_cli("plot", run_dir)[0] == 0
    assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()} == before


def test_run_result_plot(tmp_path: Path):
    res = xlayer.run(SCENARIOS / "dbp_cdma.toml", overrides={"simulation.duration": "20s"},
                     progress=False)
    out = res.plot(tmp_path / "figs")
    m = _check_figures(out, ["srtt", "queue", "goodput", "goodput_vs_delay"])
    assert m["skipped"] == {"cwnd": "no TCP flows in this run"}


def test_without_a_time_series_only_the_scatter_is_drawn(tmp_path: Path, run_cli):
    res = xlayer.run(DUMBBELL, overrides={"simulation.duration": "2s",
                                          "output.series_interval": "0s"}, progress=False)
    res.to_dir(tmp_path / "run")
    code, out, err = run_cli("plot", tmp_path / "run", "--out", tmp_path / "figs")
    assert code == 0, err
    m = _check_figures(tmp_path / "figs", ["goodput_vs_delay"])
    assert set(m["skipped"]) == {"cwnd", "srtt", "queue", "goodput"}
    assert "skipped cwnd: the run has no time series (output.series_interval = \"0s\")" in out


def test_refusals(run_dir: Path, tmp_path: Path, run_cli):
    code, out, err = run_cli("plot", tmp_path)
    assert code == 2 and "not a run's output folder: flows.parquet, series.parquet missing" in err
    code, out, err = run_cli("plot", run_dir, "--out", run_dir)
    assert code == 2 and "is the run's folder or contains it" in err
    code, out, err = run_cli("plot", run_dir, "--out", run_dir.parent)
    assert code == 2 and "is the run's folder or contains it" in err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    code, out, err = run_cli("plot", run_dir, "--out", tmp_path / "mine")
    assert code == 2 and "--overwrite" in err
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_without_matplotlib_the_error_names_the_extra(run_dir: Path, tmp_path: Path, run_cli,
                                                      monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    code, out, err = run_cli("plot", run_dir, "--out", tmp_path / "figs")
    assert code == 2
    assert "needs matplotlib, which is not installed; install it with pip install 'xlayer[plot]'" in err
    assert not (tmp_path / "figs").exists()
    code, out, err = run_cli("reproduce", "koga", "--quick", "--out", tmp_path / "k")
    assert code == 2 and "xlayer reproduce koga (its figures) needs matplotlib" in err
    with pytest.raises(ImportError, match=r"xlayer\[plot\]"):
        xlayer.run(DUMBBELL, overrides={"simulation.duration": "1s"}, progress=False).plot(tmp_path / "p")

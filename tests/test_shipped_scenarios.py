"""The ready-made scenarios ship inside the package (xlayer/scenarios_data, a link to the
repository's scenarios/ that pyproject.toml copies into the wheel) and are found from
any working folder: `xlayer scenarios list|show`, `xlayer run NAME`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SCENARIOS

from xlayer import catalog, scenario


def _xlayer(cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The installed command line, run in `cwd` (the package found through its install,
    not through the working folder)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "xlayer.cli", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_every_repository_scenario_is_shipped():
    files = sorted(SCENARIOS.iterdir())
    # pyproject.toml copies `*.toml` into the wheel: anything else here would be left out.
    assert [f.name for f in files if f.suffix != ".toml"] == []
    assert scenario.shipped_names() == [f.stem for f in files]
    for f in files:
        assert scenario.shipped(f.stem).read_bytes() == f.read_bytes()
        assert scenario.shipped(f.name) == scenario.shipped(f.stem)


def test_list_from_an_empty_folder(tmp_path: Path):
    p = _xlayer(tmp_path, "scenarios", "list")
    assert p.returncode == 0, p.stderr
    for name in scenario.shipped_names():
        assert f"\n{name} " in "\n" + p.stdout, name
        assert str(scenario.shipped(name)) in p.stdout
    assert "Dumbbell: 4 TCP NewReno bulk flows share a 10 Mb/s, 25 ms bottleneck." in p.stdout
    assert list(tmp_path.iterdir()) == []  # listing writes nothing


def test_run_a_shipped_scenario_by_name_from_an_empty_folder(tmp_path: Path):
    p = _xlayer(tmp_path, "run", "dumbbell", "--set", "simulation.duration=2s",
                "--out", "o", "-q")
    assert p.returncode == 0, p.stderr
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["scenario_file"] == str(scenario.shipped("dumbbell"))
    assert manifest["scenario"]["name"] == "dumbbell"


def test_a_local_file_wins_over_a_shipped_name(tmp_path: Path, run_cli, monkeypatch):
    doc = (SCENARIOS / "lossy_link.toml").read_text().replace('name = "lossy_link"',
                                                              'name = "mine"')
    (tmp_path / "dumbbell.toml").write_text(doc)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("validate", "dumbbell.toml")
    assert code == 0, err
    assert out.startswith("OK dumbbell.toml: mine,")
    code, out, err = run_cli("validate", "koga_fig1")
    assert code == 0, err
    assert "koga_fig1, 4 nodes" in out


def test_unknown_names_list_the_shipped_ones(tmp_path: Path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("run", "dumbel")
    assert code == 2
    assert "scenario file not found: dumbel (nor the name of a shipped scenario: " in err
    assert "dumbbell" in err and "xlayer scenarios list" in err
    code, out, err = run_cli("scenarios", "show", "dumbel")
    assert code == 2
    assert "no shipped scenario named `dumbel`; shipped scenarios: " in err
    assert all(name in err for name in ("clamp_fig2", "dumbbell", "koga_fig1"))
    assert list(tmp_path.iterdir()) == []


def test_show_prints_the_file(run_cli):
    code, out, err = run_cli("scenarios", "show", "koga_fig1")
    assert code == 0, err
    assert out == (SCENARIOS / "koga_fig1.toml").read_text()


def test_a_scenario_whose_data_is_absent_is_listed_with_what_is_missing(tmp_path, monkeypatch):
    # As installed from a wheel: lte_trace.toml's ../../shared/traces are not there.
    shutil.copy(SCENARIOS / "lte_trace.toml", tmp_path)
    shutil.copy(SCENARIOS / "dumbbell.toml", tmp_path)
    monkeypatch.setattr(scenario, "SHIPPED_DIR", tmp_path)
    items = {s.name: s for s in catalog.shipped_scenarios()}
    assert items["dumbbell"].missing is None
    missing = items["lte_trace"].missing
    assert missing is not None and missing.startswith("data missing: link[0].trace.a_to_b: ")
    assert "Verizon-LTE-short.down: cannot read trace" in missing
    assert "/../" not in missing  # the path is shown normalized
    assert items["lte_trace"].description.startswith("TCP over a real cellular link")


@pytest.mark.parametrize("text, expected", [
    ("# One. Two.\n", "One."),
    ("# CLAMP §V-A, Fig. 2: a link shared by flows that come\n# and go.\n#\n# More.\nname = 'x'\n",
     "CLAMP §V-A, Fig. 2: a link shared by flows that come and go."),
    ("\n# Only a comment after a blank line does not count.\n", ""),
    ("name = 'x'\n# late comment\n", ""),
    ("# " + "word " * 40 + "\n", ("word " * 21).strip() + "…"),
])
def test_description_is_the_first_sentence_of_the_leading_comment(text, expected):
    assert catalog.description(text) == expected


def test_the_package_folder_is_a_link_to_the_repository_folder():
    # One copy of every scenario: python/xlayer/scenarios_data -> ../../scenarios.
    link = ROOT / "python" / "xlayer" / "scenarios_data"
    assert link.is_symlink()
    assert link.resolve() == SCENARIOS.resolve()

"""Bad input: every mistake exits 2 with a message naming the field, and creates nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DUMBBELL

import xlayer


def _write(tmp_path: Path, edit: dict) -> Path:
    """The dumbbell scenario with `edit` applied, written as a JSON scenario file."""
    import json

    doc = xlayer.load(DUMBBELL)
    xlayer.apply_overrides(doc, edit)
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    return p


def _check(run_cli, tmp_path: Path, argv: list, *needles: str) -> str:
    out = tmp_path / "o" / "res"
    code, stdout, stderr = run_cli(*argv, "--out", out)
    msg = stderr.replace(str(tmp_path), "<tmp>")  # the message must name it, not the path
    assert code == 2, (stdout, stderr)
    assert msg.startswith("xlayer: error:"), msg
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"
    assert "Traceback" not in msg
    assert " at line 1 column" not in msg  # positions in the generated JSON mean nothing
    assert not (tmp_path / "o").exists()
    assert not Path("out").exists()
    return msg


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_unknown_field(run_cli, tmp_path: Path) -> None:
    p = _write(tmp_path, {"link.bottleneck.colour": "red"})
    _check(run_cli, tmp_path, ["run", p], "colour", "link")


def test_unknown_field_via_set(run_cli, tmp_path: Path) -> None:
    _check(run_cli, tmp_path, ["run", DUMBBELL, "--set", "flow.f0.tcp.delayd_ack=true"],
           "delayd_ack")


def test_wrong_unit(run_cli, tmp_path: Path) -> None:
    p = _write(tmp_path, {"link.bottleneck.rate": "10Mbit"})
    msg = _check(run_cli, tmp_path, ["run", p], "rate", "10Mbit")
    assert "Mbps" in msg  # says what is allowed


def test_negative_rate(run_cli, tmp_path: Path) -> None:
    p = _write(tmp_path, {"link.bottleneck.rate": "-5Mbps"})
    _check(run_cli, tmp_path, ["run", p], "rate", "-5Mbps")


def test_missing_file(run_cli, tmp_path: Path) -> None:
    _check(run_cli, tmp_path, ["run", tmp_path / "missing.toml"], "missing.toml", "not found")


def test_bad_set_path(run_cli, tmp_path: Path) -> None:
    msg = _check(run_cli, tmp_path, ["run", DUMBBELL, "--set", "link.nope.rate=1Mbps"],
                 "link.nope.rate", "bottleneck")
    assert "no link named" in msg


def test_bad_set_syntax(run_cli, tmp_path: Path) -> None:
    _check(run_cli, tmp_path, ["run", DUMBBELL, "--set", "link.bottleneck.rate"],
           "--set", "PATH=VALUE")


def test_bad_toml(run_cli, tmp_path: Path) -> None:
    p = tmp_path / "broken.toml"
    p.write_text("[simulation\nduration = 1")
    _check(run_cli, tmp_path, ["run", p], "broken.toml", "cannot parse")


def test_bad_sweep_grid(run_cli, tmp_path: Path) -> None:
    _check(run_cli, tmp_path,
           ["sweep", DUMBBELL, "--grid", "link.bottleneck.rate=10Mbps,10Mbit", "--seeds", "1"],
           "10Mbit", "rate")
    _check(run_cli, tmp_path, ["sweep", DUMBBELL, "--seeds", "3-1"], "--seeds")


def test_validate_reports_the_field(run_cli, tmp_path: Path) -> None:
    p = _write(tmp_path, {"link.bottleneck.delay": "25"})
    code, _, stderr = run_cli("validate", p)
    assert code == 2 and "delay" in stderr.replace(str(tmp_path), "")

"""`validate` runs every check that `run` does (issue 10, defect 9), and the run-time
guards surface as one-line scenario errors: the progress watchdog (simulated time must
advance) and the memory budget of the time series."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import xlayer
from conftest import DUMBBELL
from xlayer.scenario import resolve


def _one_line_error(code: int, stderr: str, *needles: str) -> None:
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xlayer: error:"), stderr
    for n in needles:
        assert n in stderr, (n, stderr)


def _disconnected(tmp_path: Path) -> Path:
    """Every field valid, but flow[1]'s receiver hangs off no link."""
    doc = xlayer.scenarios.dumbbell(n_flows=2, duration="1s")
    doc["link"] = [link for link in doc["link"] if link["name"] != "r1-d1"]
    path = tmp_path / "disconnected.json"
    path.write_text(json.dumps(doc))
    return path


def test_validate_refuses_what_run_would(run_cli: Any, tmp_path: Path) -> None:
    scen = _disconnected(tmp_path)
    code, out, err = run_cli("validate", scen)
    _one_line_error(code, err, "flow[1].dst", "no path from `s1` to `d1`")
    assert out == ""
    code, _, err2 = run_cli("run", scen, "--out", tmp_path / "o")
    assert code == 2 and err2 == err, "validate and run report the same error"
    assert not (tmp_path / "o").exists()


# Four flows start at t = 0 in the dumbbell (its random start offsets fixed to 0 here):
# more than three events at that instant.
STALL = ("--set", "simulation.max_events_per_instant=3",
         *(a for i in range(4) for a in ("--set", f"flow.f{i}.start=0s")))
ALL_AT_ZERO = {f"flow.f{i}.start": "0s" for i in range(4)}


def test_a_stalled_run_is_a_one_line_error_naming_the_component(run_cli: Any, tmp_path: Path) -> None:
    code, _, _ = run_cli("validate", DUMBBELL, *STALL)
    assert code == 0, "the limit is a run-time guard: the scenario itself is valid"
    code, _, err = run_cli("run", DUMBBELL, *STALL, "--out", tmp_path / "o")
    _one_line_error(code, err, "simulated time stopped advancing", "more than 3 events at t = 0.000000000 s",
                    "flow `")
    assert not (tmp_path / "o").exists(), "a failed run leaves no output"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stall_inside_sweep_workers_arrives_as_a_scenario_error(workers: int) -> None:
    with pytest.raises(xlayer.ScenarioError) as info:
        xlayer.sweep(resolve(DUMBBELL, ALL_AT_ZERO), {"simulation.max_events_per_instant": [3, 4]}, seeds=[1],
                     workers=workers, progress=False)
    # Both grid points stall; with two workers either may be reported first. The error
    # names the grid point it came from, and that point's limit.
    assert "simulated time stopped advancing" in str(info.value)
    assert re.search(r"grid point simulation\.max_events_per_instant=(\d+): .*more than \1 events", str(info.value))


def test_the_watchdog_limit_must_be_positive(run_cli: Any) -> None:
    code, _, err = run_cli("validate", DUMBBELL, "--set", "simulation.max_events_per_instant=0")
    _one_line_error(code, err, "simulation.max_events_per_instant", "at least 1")


def test_a_series_over_the_memory_budget_is_refused_before_running(run_cli: Any, tmp_path: Path) -> None:
    # The input: 1 µs samples of the shipped dumbbell (22 series for 100 s).
    code, _, err = run_cli("run", DUMBBELL, "--set", "output.series_interval=1us", "--out", tmp_path / "o")
    _one_line_error(code, err, "output.series_interval", "over the budget of 1.0 GiB", '"0s"',
                    "output.memory_budget")
    assert not (tmp_path / "o").exists()
    # The option named in the message lets it through.
    code, out, err = run_cli("validate", DUMBBELL, "--set", "output.series_interval=1us",
                             "--set", "output.memory_budget=1000GB")
    assert code == 0, err

"""The mypy gate: `mypy python/xlayer` passes with the configuration in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT


def test_mypy_passes() -> None:
    pytest.importorskip("mypy")
    p = subprocess.run([sys.executable, "-m", "mypy", "python/xlayer"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"mypy found errors:\n{p.stdout}\n{p.stderr}"

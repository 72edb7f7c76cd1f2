"""The hand-written stub python/xlayer/_core.pyi matches the compiled module (stubtest)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_stub_matches_native_module(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "xlayer._core"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    assert p.returncode == 0, f"stubtest found differences:\n{p.stdout}\n{p.stderr}"

"""`xlayer run` writes its files without pandas (importing it would cost more than a short
simulation), and what it writes reads back equal to `RunResult.write`'s files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

import xlayer

DUMBBELL = str(Path(__file__).resolve().parent.parent / "scenarios" / "dumbbell.toml")
SHORT = ["--set", "simulation.duration=2s"]


def test_run_never_imports_pandas(tmp_path: Path) -> None:
    code = ("import sys; from xlayer.cli import main; "
            f"code = main(['run', {DUMBBELL!r}, '--out', {str(tmp_path / 'o')!r}, '-q', *{SHORT!r}]); "
            "print(code, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[-2:] == ["0", "False"], out


def test_run_files_equal_the_dataframe_writers(tmp_path: Path) -> None:
    from xlayer.cli import main

    assert main(["run", DUMBBELL, "--out", str(tmp_path / "cli"), "-q", "--seed", "3", *SHORT]) == 0
    res = xlayer.run(DUMBBELL, seed=3, overrides={"simulation.duration": "2s"})
    res.to_dir(tmp_path / "api")
    for name in ("flows", "series", "links"):
        a = pd.read_parquet(tmp_path / "cli" / f"{name}.parquet")
        b = pd.read_parquet(tmp_path / "api" / f"{name}.parquet")
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
        assert [str(t) for t in a.dtypes] == [str(t) for t in b.dtypes], name
    assert (tmp_path / "cli" / "flows.csv").read_text() == (tmp_path / "api" / "flows.csv").read_text()

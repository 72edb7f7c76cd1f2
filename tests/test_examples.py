"""Every Python example in the README and docs/ runs as a script file (as a reader would
save and run it: spawned sweep workers import the script, so a missing `__main__` guard
fails here). The examples of one page run in order in one folder, so a later example
can read what an earlier one wrote. An example that starts with `# needs: MODULE` (a
cluster recipe) is compiled, and run only where that module and `sbatch` exist."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NEEDS = re.compile(r"^# needs: (\w+)")


def _pages_with_examples() -> list[Path]:
    return [p for p in PAGES if BLOCK.search(p.read_text(encoding="utf-8"))]


def test_the_readme_and_the_experiments_page_have_examples() -> None:
    assert {p.name for p in _pages_with_examples()} >= {"README.md", "experiments.md"}


@pytest.mark.parametrize("page", _pages_with_examples(), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run_as_scripts(page: Path, tmp_path: Path) -> None:
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")  # the README's relative paths
    for i, code in enumerate(BLOCK.findall(page.read_text(encoding="utf-8"))):
        script = tmp_path / f"example_{i}.py"
        script.write_text(code, encoding="utf-8")
        compile(code, str(script), "exec")
        need = NEEDS.match(code)
        if need and not (importlib.util.find_spec(need.group(1)) and shutil.which("sbatch")):
            continue  # a cluster recipe, here only compiled
        r = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, f"{page.name} example {i} failed:\n{code}\n{r.stderr[-3000:]}"

"""The ready-made scenarios shipped with the package (`xlayer scenarios list|show`).

The files are the repository's `scenarios/*.toml`, installed as `xlayer/scenarios_data/`
(pyproject.toml), so they are found from any working folder. Each one's description is
the first sentence of its leading comment. A scenario that reads data kept outside the
package (the GPL-3.0 Mahimahi traces of `lte_trace`) is listed with what is missing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .scenario import ScenarioError, shipped, shipped_names, validate


@dataclass(frozen=True)
class ShippedScenario:
    """One shipped scenario: `name` (what `xlayer run NAME` takes), a one-line
    `description`, its `path`, and `missing`: why it cannot run here (data it reads is
    absent), or None when it can."""

    name: str
    description: str
    path: Path
    missing: str | None


def shipped_scenarios(check_data: bool = True) -> list[ShippedScenario]:
    """Every shipped scenario, by name. With `check_data`, each is validated (which reads
    the trace files it names) to fill in `missing`."""
    out = []
    for name in shipped_names():
        path = shipped(name)
        text = path.read_text(encoding="utf-8")
        out.append(ShippedScenario(name, description(text), path,
                                   missing_data(path) if check_data else None))
    return out


def show(name: str) -> str:
    """The text of the shipped scenario `name` (with or without `.toml`)."""
    return shipped(name).read_text(encoding="utf-8")


# A sentence ends at a full stop followed by white space and a capital letter or an
# opening bracket ("Fig. 2" and "et al.," do not end one).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def description(text: str) -> str:
    """The first sentence of a scenario file's leading comment block (the `#` lines
    before the first blank comment line or the first statement), on one line."""
    words: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        body = stripped.lstrip("#").strip()
        if not body:
            if words:
                break
            continue
        words.append(body)
    paragraph = " ".join(" ".join(words).split())
    return _shorten(_SENTENCE_END.split(paragraph, maxsplit=1)[0]) if paragraph else ""


DESCRIPTION_CHARS = 110


def _shorten(sentence: str) -> str:
    """At most DESCRIPTION_CHARS characters: a long sentence is cut at its last clause
    boundary (or word) that fits, and ends with "…"."""
    if len(sentence) <= DESCRIPTION_CHARS:
        return sentence
    head = sentence[:DESCRIPTION_CHARS - 1]
    cut = max(head.rfind(sep) for sep in (" (", "; ", ", ", ": "))
    if cut < DESCRIPTION_CHARS // 2:
        cut = head.rfind(" ")
    return head[:cut].rstrip(" ,;:") + "…"


# A path with `..` in it (a relative trace path joined to the scenario's folder).
_UP_LEVEL_PATH = re.compile(r"[^\s:]*/\.\./[^\s:]*")


def missing_data(path: Path) -> str | None:
    """Why the scenario at `path` cannot run here: the validator's message for a data file
    it cannot read, or "invalid: ..." for any other error; None when it validates."""
    try:
        validate(path)
    except ScenarioError as e:
        msg = _UP_LEVEL_PATH.sub(lambda m: os.path.normpath(m.group(0)), str(e))
        if "cannot read" in msg:
            return f"data missing: {msg}"
        return f"invalid: {msg}"
    return None

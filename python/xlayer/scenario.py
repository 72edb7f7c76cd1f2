"""Loading scenarios (TOML/JSON files or dicts), dotted-path overrides, canonical JSON.

The scenario format itself is owned by the Rust core (`xlayer schema`); this module only
reads documents, edits them by path and serializes them. Validation happens in Rust.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Union

from . import _core

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ScenarioError = _core.ScenarioError

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

# TOML keys of the top-level arrays of tables; an element's default name when it has none.
_Namer = Callable[[int, dict[str, Any]], Optional[str]]
_LISTS: dict[str, _Namer] = {
    "node": lambda i, e: None,
    "link": lambda i, e: f"{e.get('a')}-{e.get('b')}" if "a" in e and "b" in e else None,
    "radio": lambda i, e: None,
    "flow": lambda i, e: f"flow{i}",
}


class ScenarioNotFoundError(ScenarioError, FileNotFoundError):
    """The scenario file does not exist (both a ScenarioError and a FileNotFoundError)."""


class OverrideError(ScenarioError):
    """An override path (`--set path=value`) does not address anything in the scenario."""


def load(scenario: ScenarioLike) -> dict[str, Any]:
    """Return the scenario as a fresh dict: from a .toml/.json path or (deep-copied) mapping."""
    if isinstance(scenario, Mapping):
        return copy.deepcopy(dict(scenario))
    if not isinstance(scenario, (str, os.PathLike)):
        raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")
    path = Path(scenario)
    if not path.is_file():
        what = "is a directory, not a scenario file" if path.is_dir() else "not found"
        raise ScenarioNotFoundError(f"scenario file {what}: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            doc = tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:  # JSONDecodeError is a ValueError
        raise ScenarioError(f"{path}: cannot parse: {e}") from None
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: the top level must be a table, not {type(doc).__name__}")
    return doc


def parse_value(text: str) -> Any:
    """Parse a CLI value as a TOML literal (`true`, `3`, `0.01`, `"x"`, `[1, 2]`,
    `{model = "bernoulli", p = 0.01}`); anything else (e.g. `20Mbps`) stays a string."""
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    value = parsed.get("v")
    if len(parsed) != 1 or not _plain(value):
        return text  # dates, inf/nan or extra keys: keep the text as written
    return value


def _plain(v: Any) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_plain(x) for x in v)
    if isinstance(v, dict):
        return all(_plain(x) for x in v.values())
    return isinstance(v, (bool, int, str))


def apply_overrides(doc: dict[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """Set values by dotted path, in place, and return `doc`.

    Arrays of tables are addressed by element name or index: `link.bottleneck.rate`,
    `flow.0.app.rate`, `flow.f0.tcp.delayed_ack`. Missing tables and leaf keys are created
    (the Rust validator rejects unknown fields); an unknown list element is an error.
    """
    for path, value in (overrides or {}).items():
        _set(doc, path, copy.deepcopy(value))
    return doc


def _set(doc: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    if not path or any(p == "" for p in parts):
        raise OverrideError(f"override `{path}`: not a dotted path such as link.bottleneck.rate")
    cur: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(cur, list):
            key: Any = _element(cur, parts[i - 1] if i else "", part, path)
            if last:
                cur[key] = value
                return
            cur = cur[key]
            continue
        if not isinstance(cur, dict):
            parent = ".".join(parts[:i])
            raise OverrideError(
                f"override `{path}`: `{parent}` is a {_kind(cur)} ({cur!r}), so it has no field `{part}`"
            )
        if last:
            cur[part] = value
            return
        if part not in cur:
            if part in _LISTS:
                raise OverrideError(f"override `{path}`: the scenario has no [[{part}]] entries")
            cur[part] = {}
        cur = cur[part]


def _element(items: list[Any], list_key: str, part: str, path: str) -> int:
    """Index of the element named `part` (or with index `part`) in a list of tables."""
    default: _Namer = _LISTS.get(list_key, lambda i, e: None)
    names = []
    for i, e in enumerate(items):
        name = (e.get("name") or default(i, e)) if isinstance(e, dict) else None
        names.append(name)
        if name == part:
            return i
    if part.isdigit() and int(part) < len(items):
        return int(part)
    known = ", ".join(str(n) for n in names if n is not None) or "none"
    raise OverrideError(
        f"override `{path}`: no {list_key or 'element'} named `{part}`; "
        f"known names: {known}; or an index 0..{len(items) - 1}"
    )


def _kind(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
        type(v), type(v).__name__
    )


def canonical_json(doc: Mapping[str, Any]) -> str:
    """The JSON sent to the Rust core: sorted keys, no whitespace, so equal scenarios
    give equal text (and equal scenario hashes)."""
    try:
        return json.dumps(
            doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
            allow_nan=False, default=_json_default,
        )
    except ValueError as e:  # NaN / infinity
        raise ScenarioError(f"scenario contains a value JSON cannot hold: {e}") from None


def _json_default(v: Any) -> Any:
    if hasattr(v, "item") and callable(v.item):  # numpy scalars from sweep grids
        return v.item()
    if isinstance(v, (tuple, set, frozenset)):
        return list(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    raise ScenarioError(f"scenario value {v!r} of type {type(v).__name__} is not allowed")


def resolve(
    scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`load` then `apply_overrides`: the scenario dict that will actually run."""
    return apply_overrides(load(scenario), overrides)


def validate(scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Resolve and validate in Rust; return the resolved dict or raise ScenarioError."""
    doc = resolve(scenario, overrides)
    with native_errors():
        _core.validate(canonical_json(doc))
    return doc


_JSON_POSITION = re.compile(r" at line \d+ column \d+$")


@contextmanager
def native_errors() -> Iterator[None]:
    """Drop serde's " at line 1 column N" from Rust errors: it points into the generated
    JSON, not the user's file; the field path in the message is what locates the error."""
    try:
        yield
    except ScenarioError as e:
        msg = _JSON_POSITION.sub("", str(e))
        if msg == str(e):
            raise
        raise type(e)(msg) from None


def schema() -> dict[str, Any]:
    """The JSON Schema of the scenario format (as exported by the Rust core)."""
    result: dict[str, Any] = json.loads(_core.schema())
    return result


def shipped(name: str) -> Path:
    """Path of a ready-made scenario from the repository's `scenarios/` folder, e.g.
    `shipped("koga_fig1.toml")`: beside the package in a checkout or editable install,
    else under the working directory (a wheel installed and run from the repository)."""
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        path = root / "scenarios" / name
        if path.exists():
            return path
    raise ScenarioNotFoundError(
        f"scenario file not found: scenarios/{name} (run from the xlayer repository, "
        "or install it with `pip install -e .`)"
    )

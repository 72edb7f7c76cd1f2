"""Loading scenarios (TOML/JSON files or dicts), dotted-path overrides, canonical JSON.

The scenario format itself is owned by the Rust core (`xlayer schema`); this module only
reads documents, edits them by path and serializes them. Validation happens in Rust.
"""

from __future__ import annotations

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


# The native class calls its module `_core`; pickle finds it only under its importable
# name. Pickling that carries an error's context along (tblib's, which Dask installs)
# meets the native error as the context of ours.
_core.ScenarioError.__module__ = "xlayer._core"


class ScenarioError(_core.ScenarioError):
    """A scenario is invalid. `str(e)` is the one-line message, which starts with the field
    path when there is one (`link[0].rate: ...`); `e.path` is that path (or None) and
    `e.message` the rest.

    A Python class (a subclass of the native `xlayer._core.ScenarioError`, which cannot be
    pickled): it crosses process boundaries intact, so a sweep worker's error reaches the
    parent with the same message as in a serial run.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path

    @property
    def message(self) -> str:
        text = str(self)
        at = text.find(f"{self.path}: ") if self.path else -1
        return text[at + len(self.path) + 2:] if self.path and at >= 0 else text

    def with_context(self, prefix: str) -> ScenarioError:
        """The same error (same class and path) with `prefix: ` before the message."""
        return _rebuild(type(self), f"{prefix}: {self}", self.path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), str(self), self.path))

    @classmethod
    def from_native(cls, e: BaseException) -> ScenarioError:
        """Convert the native exception: drop serde's " at line 1 column N" (it points into
        the generated JSON, not the user's file) and pick out the field path."""
        msg = _JSON_POSITION.sub("", str(e))
        m = _LEADING_PATH.match(msg)
        return cls(msg, path=m.group(1) if m else None)


def _rebuild(cls: type[ScenarioError], message: str, path: str | None) -> ScenarioError:
    """Unpickle (or re-wrap) a ScenarioError of class `cls`; path is keyword-only, which
    also keeps the OSError base of ScenarioNotFoundError from reading it as a strerror."""
    return cls(message, path=path)


# "link[0].rate: ..." or "flow[1].tcp.mss: ...": a field path then ": ".
_LEADING_PATH = re.compile(r"^([A-Za-z_][\w-]*(?:\[\d+\])*(?:\.[A-Za-z_][\w-]*(?:\[\d+\])*)*): ")
_JSON_POSITION = re.compile(r" at line \d+ column \d+$")

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
        return _table(scenario)
    if not isinstance(scenario, (str, os.PathLike)):
        raise TypeError(f"scenario must be a path or a dict, not {type(scenario).__name__}")
    path = Path(scenario)
    if not path.is_file():
        what = "is a directory, not a scenario file" if path.is_dir() else "not found"
        raise ScenarioNotFoundError(f"scenario file {what}: {path}")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror or e}") from None
    cached = _PARSED.get(os.fspath(path))
    if cached is not None and cached[0] == data:
        parsed: dict[str, Any] = json.loads(cached[1])
        return parsed
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(
            f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); "
            "save the scenario file as UTF-8"
        ) from None
    try:
        if path.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            doc = tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:  # JSONDecodeError is a ValueError
        raise ScenarioError(f"{path}: cannot parse: {_one_line(e)}") from None
    except RecursionError:
        raise ScenarioError(
            f"{path}: cannot parse: nested too deeply (at most {MAX_DEPTH} levels)"
        ) from None
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: the top level must be a table, not {type(doc).__name__}")
    try:
        out = _table(doc)
    except ScenarioError as e:
        raise e.with_context(str(path)) from None
    _remember(os.fspath(path), data, out)
    return out


# Files parsed before, by path: their bytes and the document as JSON. A sweep or a
# benchmark loads the same file for every run, and TOML parsing (in Python) is most of
# what `resolve` costs. A hit needs the file's bytes to equal those parsed, so an
# edited file is parsed again whatever its size and time stamps say; JSON gives back
# an equal document (canonical values are exactly JSON's), a fresh one a call, in 9 us
# against the TOML parser's 255 (Koga's scenario). Only documents that loaded without
# error are kept.
_PARSED: dict[str, tuple[bytes, str]] = {}
_PARSED_MAX = 32


def _remember(key: str, data: bytes, doc: dict[str, Any]) -> None:
    _PARSED.pop(key, None)
    kept = list(_PARSED)  # one step under the GIL, whatever other threads load
    for old in kept[:max(0, len(kept) - _PARSED_MAX + 1)]:
        _PARSED.pop(old, None)  # the least recently parsed
    _PARSED[key] = (data, json.dumps(doc, ensure_ascii=False))


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())


def parse_value(text: str) -> Any:
    """Parse a CLI value as a TOML literal (`true`, `3`, `0.01`, `"x"`, `[1, 2]`,
    `{model = "bernoulli", p = 0.01}`); anything else (e.g. `20Mbps`) stays a string."""
    try:
        parsed = tomllib.loads(f"v = {text}")
        value = parsed.get("v")
        if len(parsed) != 1 or not _plain(value):
            return text  # dates, inf/nan or extra keys: keep the text as written
    except (tomllib.TOMLDecodeError, RecursionError):
        return text
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
        _set(doc, path, canonical(value, str(path)))
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


MAX_DEPTH = 64  # nesting levels of tables and arrays; real scenarios use fewer than 6


def canonical(value: Any, path: str = "") -> Any:
    """A plain JSON-ready copy of a scenario (or of one value at `path`): dicts with string
    keys, lists, strings, finite numbers, booleans, None. Tuples become lists, numpy
    scalars and arrays become Python numbers and lists, path objects strings.

    Everything else raises ScenarioError naming the field: sets and frozensets (no order,
    so the scenario and its fingerprint would depend on PYTHONHASHSEED), bytes, NaN and
    infinities, other objects, and nesting deeper than MAX_DEPTH.
    """
    try:
        return _plain_copy(value, 0)
    except _Unusual:
        return _canonical(value, path, 0)


class _Unusual(Exception):
    """A value `_plain_copy` leaves to `_canonical`."""


def _plain_copy(v: Any, depth: int) -> Any:
    """`_canonical` of a value made only of dicts with string keys, lists, strings, ints,
    finite floats, booleans and None (of exactly these types), which is what a parsed
    file or an earlier `canonical` holds: the same copy without the field paths, which
    only an error needs, nor the abstract-class checks (three quarters of the cost).
    Raises _Unusual at anything else, for `_canonical` to convert or reject."""
    t = type(v)
    if t is dict:
        if depth >= MAX_DEPTH:
            raise _Unusual
        out = {}
        for k, x in v.items():
            if type(k) is not str:
                raise _Unusual
            out[k] = _plain_copy(x, depth + 1)
        return out
    if t is list:
        if depth >= MAX_DEPTH:
            raise _Unusual
        return [_plain_copy(x, depth + 1) for x in v]
    if t is str or t is int or t is bool or v is None or (t is float and math.isfinite(v)):
        return v
    raise _Unusual


def _table(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`canonical` of a whole scenario: always a dict."""
    out = canonical(doc)
    assert isinstance(out, dict)
    return out


def _canonical(v: Any, path: str, depth: int) -> Any:
    def bad(what: str) -> ScenarioError:
        return ScenarioError(f"{path or 'scenario'}: {what}", path=path or None)

    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise bad(f"{v} is not allowed: JSON and TOML have no NaN or infinity")
        return float(v)
    # numpy values can only exist if the caller imported numpy: no import here (it costs
    # the command line 0.1 s).
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, np.generic):
        return _canonical(v.item(), path, depth)
    if depth >= MAX_DEPTH:
        raise bad(f"nested too deeply (at most {MAX_DEPTH} levels)")
    if isinstance(v, Mapping):
        out: dict[str, Any] = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise bad(f"key {k!r} is not a string; table keys must be strings")
            out[k] = _canonical(x, f"{path}.{k}" if path else k, depth + 1)
        return out
    if isinstance(v, (list, tuple)) or (np is not None and isinstance(v, np.ndarray)):
        items = v if isinstance(v, (list, tuple)) else v.tolist()
        return [_canonical(x, f"{path}[{i}]", depth + 1) for i, x in enumerate(items)]
    if isinstance(v, (set, frozenset)):
        raise bad("a set is not allowed (its order depends on PYTHONHASHSEED, and so would "
                  "the scenario and its fingerprint); use a list")
    if isinstance(v, (bytes, bytearray, memoryview)):
        raise bad("bytes are not allowed; use a string")
    if isinstance(v, os.PathLike):
        p = os.fspath(v)
        if isinstance(p, str):
            return p
    text = repr(v)
    text = text if len(text) <= 40 else text[:37] + "..."
    raise bad(f"{text} of type {type(v).__name__} is not allowed; scenario values are "
              "strings, numbers, booleans, lists and tables")


def canonical_json(doc: Mapping[str, Any]) -> str:
    """The JSON sent to the Rust core: `canonical(doc)` with sorted keys and no
    whitespace, so equal scenarios give equal text (and equal scenario hashes) in every
    process, whatever PYTHONHASHSEED."""
    return resolved_json(canonical(doc))


def resolved_json(doc: Mapping[str, Any]) -> str:
    """`canonical_json` of a dict `resolve` returned, which is canonical already: without
    a second copy (70 ms of 116 at 10,000 flows)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def base_dir(scenario: ScenarioLike) -> str | None:
    """The folder that relative file paths in a scenario (link traces) are read from: the
    scenario file's folder, or None (the working folder) for a dict."""
    if isinstance(scenario, (str, os.PathLike)):
        return str(Path(scenario).resolve().parent)
    return None


def resolve(
    scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`load` then `apply_overrides`: the scenario dict that will actually run."""
    return apply_overrides(load(scenario), overrides)


def validate(scenario: ScenarioLike, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Resolve and validate in Rust; return the resolved dict or raise ScenarioError."""
    doc = resolve(scenario, overrides)
    with native_errors():
        _core.validate(resolved_json(doc), base_dir(scenario))
    return doc


@contextmanager
def native_errors() -> Iterator[None]:
    """Around every call into the Rust core: its ScenarioError becomes this module's
    (picklable, with `.path`) ScenarioError."""
    try:
        yield
    except ScenarioError:
        raise
    except _core.ScenarioError as e:
        raise ScenarioError.from_native(e) from None


def schema() -> dict[str, Any]:
    """The JSON Schema of the scenario format (as exported by the Rust core)."""
    result: dict[str, Any] = json.loads(_core.schema())
    return result


# The ready-made scenarios, inside the package: in a checkout (and an editable install) a
# symlink to the repository's scenarios/, in a wheel a copy of it (see pyproject.toml).
SHIPPED_DIR = Path(__file__).resolve().parent / "scenarios_data"


def shipped_names() -> list[str]:
    """Names (file stems) of the ready-made scenarios, sorted: `dumbbell`, `koga_fig1`, ..."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def shipped(name: str) -> Path:
    """Path of a ready-made scenario shipped with the package, by name with or without
    `.toml`: `shipped("koga_fig1")` or `shipped("koga_fig1.toml")`. Works from any
    working folder; `xlayer scenarios list` shows them all."""
    path = _shipped_file(name)
    if path is not None:
        return path
    known = ", ".join(shipped_names()) or f"none (no {SHIPPED_DIR})"
    raise ScenarioNotFoundError(
        f"no shipped scenario named `{name}`; shipped scenarios: {known}"
    )


def find(file: str | os.PathLike[str]) -> Path:
    """The scenario a command-line FILE names: that file if it exists, else a shipped
    scenario of that name (`xlayer run dumbbell`), else ScenarioNotFoundError."""
    path = Path(file)
    if path.exists():
        return path
    text = os.fspath(file)
    found = _shipped_file(text)
    if found is not None:
        return found
    hint = ""
    if path.name == text and path.suffix in ("", ".toml"):
        hint = (f" (nor the name of a shipped scenario: {', '.join(shipped_names())}; "
                "see `xlayer scenarios list`)")
    raise ScenarioNotFoundError(f"scenario file not found: {text}{hint}")


def _shipped_file(name: str) -> Path | None:
    """The shipped file `name` or `name.toml` (a bare name, no folders), if there is one."""
    stem = name[:-5] if name.endswith(".toml") else name
    if not stem or Path(stem).name != stem or stem in (".", ".."):
        return None
    path = SHIPPED_DIR / f"{stem}.toml"
    return path.resolve() if path.is_file() else None

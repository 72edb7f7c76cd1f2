"""Experiment plans: a base scenario, axes, seeds and runs, from a TOML file or Python.

Axes combine as a product: every `grid` axis (the first varies slowest), then every
`zip` group (lists varied together), then every `random` group (`samples` points drawn
from ranges with the group's own seed), then seeds, then runs.

    name = "queue-study"               # the plan's name in a store (default: file stem)
    scenario = "dumbbell.toml"         # relative to the plan file
    seeds = "1-10"                     # or [1, 2, 3]
    runs = [0]                         # or "0-4" (default [0])
    series = false                     # keep every run's time series in the store

    [set]                              # overrides applied to every point
    "simulation.duration" = "20s"

    [grid]
    "link.bottleneck.queue" = ["50pkt", "200pkt"]

    [[zip]]
    "link.bottleneck.rate" = ["10Mbps", "20Mbps"]
    "link.bottleneck.delay" = ["10ms", "5ms"]

    [[random]]
    samples = 8
    seed = 7
    "link.bottleneck.loss.p" = { low = 0.001, high = 0.05, log = true }
"""

from __future__ import annotations

import itertools
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .scenario import ScenarioError, ScenarioLike, canonical

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_INDEX = 2**64 - 1
MAX_POINTS = 10_000_000  # points one plan may expand to


class PlanError(ScenarioError):
    """A plan is malformed. `str(e)` starts with the plan field (`grid."x.y"`, `seeds`)."""


@dataclass(frozen=True)
class Sample:
    """`samples` points drawn from `ranges`, reproducibly from `seed`.

    `ranges` maps override paths to `{"low": a, "high": b}` with optional `log` (draw
    uniformly in log space), `integer` (round to an integer) and `unit` (a suffix such
    as "Mbps" or "ms", so the value is written `12.5Mbps`); `(a, b)` is short for
    `{"low": a, "high": b}`.
    """

    ranges: Mapping[str, Any]
    samples: int
    seed: int = 0

    def values(self, where: str = "random") -> list[dict[str, Any]]:
        if isinstance(self.samples, bool) or not isinstance(self.samples, int) or self.samples < 1:
            raise PlanError(f"{where}.samples: must be a positive integer, got {self.samples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_INDEX:
            raise PlanError(f"{where}.seed: must be an integer in [0, 2^64), got {self.seed!r}")
        if not self.ranges:
            raise PlanError(f"{where}: no ranges; add e.g. \"link.wan.loss.p\" = {{ low = 0.001, high = 0.05 }}")
        specs = {path: _range(path, spec, where) for path, spec in self.ranges.items()}
        rng = np.random.default_rng(self.seed)
        draws = {path: rng.uniform(0.0, 1.0, self.samples) for path in specs}  # one stream per path, in order
        return [{path: spec.value(float(draws[path][i])) for path, spec in specs.items()}
                for i in range(self.samples)]


@dataclass(frozen=True)
class _Range:
    low: float
    high: float
    log: bool
    integer: bool
    unit: str

    def value(self, u: float) -> Any:
        if self.log:
            x = math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        else:
            x = self.low + u * (self.high - self.low)
        v: float | int = round(x) if self.integer else x
        return f"{v!r}{self.unit}" if self.unit else v


def _range(path: str, spec: Any, where: str) -> _Range:
    at = f"{where}.{_q(path)}"
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        spec = {"low": spec[0], "high": spec[1]}
    if not isinstance(spec, Mapping):
        raise PlanError(f"{at}: must be a range {{ low = A, high = B }} (optional log, integer, unit)")
    unknown = set(spec) - {"low", "high", "log", "integer", "unit"}
    if unknown:
        raise PlanError(f"{at}: unknown field(s) {sorted(unknown)}; allowed: low, high, log, integer, unit")
    lo, hi = spec.get("low"), spec.get("high")
    for name, v in (("low", lo), ("high", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise PlanError(f"{at}.{name}: must be a finite number, got {v!r}")
    assert isinstance(lo, (int, float)) and isinstance(hi, (int, float))
    if not lo < hi:
        raise PlanError(f"{at}: low ({lo}) must be less than high ({hi})")
    log, integer, unit = spec.get("log", False), spec.get("integer", False), spec.get("unit", "")
    if not isinstance(log, bool) or not isinstance(integer, bool):
        raise PlanError(f"{at}: log and integer must be true or false")
    if log and lo <= 0:
        raise PlanError(f"{at}: a log range needs low > 0, got {lo}")
    if not isinstance(unit, str) or not re.fullmatch(r"[A-Za-z/]*", unit):
        raise PlanError(f"{at}.unit: must be a unit suffix such as \"Mbps\" or \"ms\", got {unit!r}")
    return _Range(float(lo), float(hi), log, integer, unit)


@dataclass(frozen=True)
class Point:
    """One run of a plan: the axis values (override path -> value), seed and run index."""

    params: dict[str, Any]
    seed: int
    run: int


@dataclass
class Plan:
    """A sweep: `scenario` (a path or dict) with `overrides`, axes, seeds and runs.

    `grid` maps paths to value lists (every combination); `zip` is a list of groups,
    each mapping paths to equally long lists varied together; `random` is a list of
    `Sample`s. `series` keeps every run's time series when the plan runs into a store.
    """

    scenario: ScenarioLike
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    zip: Sequence[Mapping[str, Sequence[Any]]] = ()
    random: Sequence[Sample] = ()
    seeds: Iterable[int] = (1,)
    runs: Iterable[int] = (0,)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    series: bool = False
    name: str = ""

    def axes(self) -> list[str]:
        """The override paths the plan varies, in column order."""
        out = list(self.grid)
        for group in self.zip:
            out += list(group)
        for s in self.random:
            out += list(s.ranges)
        dup = sorted({a for a in out if out.count(a) > 1})
        if dup:
            raise PlanError(f"axes: {dup} appear in more than one axis; vary each path once")
        return out

    def points(self) -> list[Point]:
        """Every (params, seed, run) of the plan, in order."""
        self.axes()
        seeds = _indices(self.seeds, "seeds")
        runs = _indices(self.runs, "runs")
        axes: list[list[dict[str, Any]]] = []
        for path, values in self.grid.items():
            axes.append([{path: v} for v in _values(values, f"grid.{_q(path)}")])
        for i, group in enumerate(self.zip):
            lists = {p: _values(v, f"zip[{i}].{_q(p)}") for p, v in group.items()}
            lengths = {len(v) for v in lists.values()}
            if len(lengths) > 1:
                sizes = ", ".join(f"{_q(p)}: {len(v)}" for p, v in lists.items())
                raise PlanError(f"zip[{i}]: lists of different lengths ({sizes}); zipped lists "
                                "must be equally long")
            n = lengths.pop() if lengths else 0
            axes.append([{p: lists[p][j] for p in lists} for j in range(n)])
        for i, s in enumerate(self.random):
            axes.append(s.values(f"random[{i}]"))
        total = math.prod(len(a) for a in axes) * len(seeds) * len(runs)
        if total > MAX_POINTS:
            raise PlanError(f"the plan expands to {total} runs, more than {MAX_POINTS}")
        combos = [dict(kv for part in combo for kv in part.items()) for combo in itertools.product(*axes)]
        return [Point(p, s, r) for p, s, r in itertools.product(combos, seeds, runs)]

    def describe(self) -> dict[str, Any]:
        """The plan as plain data (stored with its points in a store)."""
        scen = os.fspath(self.scenario) if isinstance(self.scenario, (str, os.PathLike)) else "<dict>"
        return {"name": self.name, "scenario": scen, "overrides": canonical(dict(self.overrides)),
                "grid": canonical({k: list(v) for k, v in self.grid.items()}),
                "zip": canonical([{k: list(v) for k, v in g.items()} for g in self.zip]),
                "random": [{"samples": s.samples, "seed": s.seed, "ranges": canonical(dict(s.ranges))}
                           for s in self.random],
                "seeds": _indices(self.seeds, "seeds"), "runs": _indices(self.runs, "runs"),
                "series": self.series}


def load_plan(path: str | os.PathLike[str]) -> Plan:
    """Read a plan TOML file (format in this module's docstring). The scenario path is
    relative to the plan file."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"plan file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PlanError(f"{p}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{p}: cannot parse: {' '.join(str(e).split())}") from None
    try:
        plan = plan_from_dict(doc, p.parent, p.stem)
        plan.points()  # every axis checked now, naming the file
        return plan
    except PlanError as e:
        raise PlanError(f"{p}: {e}") from None


def is_plan_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a plan (a TOML file with a top-level `scenario`), not a scenario."""
    p = Path(path)
    if p.suffix.lower() != ".toml" or not p.is_file():
        return False
    try:
        return "scenario" in tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False


PLAN_FIELDS = ("name", "scenario", "seeds", "runs", "series", "set", "grid", "zip", "random")


def plan_from_dict(doc: Mapping[str, Any], folder: Path, default_name: str) -> Plan:
    unknown = sorted(set(doc) - set(PLAN_FIELDS))
    if unknown:
        raise PlanError(f"unknown field(s) {unknown}; a plan has: {', '.join(PLAN_FIELDS)}")
    scen = doc.get("scenario")
    if isinstance(scen, str):
        scenario: ScenarioLike = str(folder / scen) if not Path(scen).is_absolute() else scen
    elif isinstance(scen, dict):
        scenario = scen
    else:
        raise PlanError("scenario: a scenario file path (relative to the plan) or an inline table")
    name = doc.get("name", default_name)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name):
        raise PlanError(f"name: letters, digits, '_', '.', '-' (at most 100), got {name!r}")
    series = doc.get("series", False)
    if not isinstance(series, bool):
        raise PlanError(f"series: true or false, got {series!r}")
    grid = _table(doc.get("grid", {}), "grid")
    zips = doc.get("zip", [])
    if not isinstance(zips, list):
        raise PlanError("zip: an array of tables ([[zip]])")
    randoms = doc.get("random", [])
    if not isinstance(randoms, list):
        raise PlanError("random: an array of tables ([[random]])")
    samples = []
    for i, r in enumerate(randoms):
        r = _table(r, f"random[{i}]")
        ranges = {k: v for k, v in r.items() if k not in ("samples", "seed")}
        samples.append(Sample(ranges, r.get("samples", 0), r.get("seed", 0)))
    return Plan(scenario=scenario, grid=grid,
                zip=[_table(z, f"zip[{i}]") for i, z in enumerate(zips)], random=samples,
                seeds=_index_spec(doc.get("seeds", [1]), "seeds"),
                runs=_index_spec(doc.get("runs", [0]), "runs"),
                overrides=_table(doc.get("set", {}), "set"), series=series, name=name)


def parse_indices(text: str, what: str) -> list[int]:
    """`1,2,3`, `1-20` or a mix (`1-3,7`) to a list of integers in [0, 2^64)."""
    spans: list[range] = []
    try:
        for part in text.split(","):
            lo, dash, hi = part.strip().partition("-")
            a, b = int(lo), int(hi) if dash else int(lo)
            if a < 0 or b < a or b > MAX_INDEX:
                raise ValueError
            spans.append(range(a, b + 1))
    except ValueError:
        raise PlanError(f"{what}: expected integers in [0, 2^64) like 1,2,3 or a range like "
                        f"1-20, got {text!r}") from None
    if sum(len(r) for r in spans) > MAX_POINTS:
        raise PlanError(f"{what}: more than {MAX_POINTS} values")
    return [i for r in spans for i in r]


def _index_spec(v: Any, what: str) -> list[int]:
    if isinstance(v, str):
        return parse_indices(v, what)
    return _indices(v, what)


def _indices(v: Any, what: str) -> list[int]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    try:
        out = list(v)
    except TypeError:
        raise PlanError(f"{what}: a list of integers, got {v!r}") from None
    for i in out:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i <= MAX_INDEX:
            raise PlanError(f"{what}: integers in [0, 2^64), got {i!r}")
    if not out:
        raise PlanError(f"{what}: empty; give at least one")
    return [int(i) for i in out]


def _values(v: Any, where: str) -> list[Any]:
    if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
        raise PlanError(f"{where}: must be a list of values, not {v!r}")
    out = list(v)
    if not out:
        raise PlanError(f"{where}: empty list; give at least one value")
    return out


def _table(v: Any, where: str) -> dict[str, Any]:
    if not isinstance(v, Mapping):
        raise PlanError(f"{where}: must be a table, not {type(v).__name__}")
    return dict(v)


def _q(path: str) -> str:
    return f'"{path}"' if "." in path else path

"""The Python front's shortcuts give what the long way gives: the parsed-file cache, the
canonical copy of plain documents, and the result tables built from number arrays."""

from __future__ import annotations

import enum
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import DUMBBELL, LOSSY, SCENARIOS, SHORT

import xlayer
from xlayer import api, native, scenario as sc


def _typed(v: Any) -> Any:
    """`v` with each value's type beside it: 1, 1.0 and True compare equal in Python."""
    if isinstance(v, dict):
        return {k: _typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_typed(x) for x in v]
    return (type(v).__name__, v)


# --- canonical: the plain copy and the long way ------------------------------------------


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    pass


@pytest.mark.parametrize("value", [
    {"a": 1, "b": [1.5, True, None, "x"], "c": {"d": [[]], "e": {}}},
    {"a": (1, 2), "b": [np.int64(3), np.float64(0.5), np.str_("s"), np.bool_(True)]},
    {"a": np.arange(3), "b": Path("x/y"), "c": OrderedDict(z=1)},
    {"a": Level.HIGH, "b": Ratio(0.25), "c": [Level.HIGH]},
    [[[[1]]]],
    "text",
    -0.0,
])
def test_canonical_plain_copy_equals_the_long_way(value: Any) -> None:
    assert _typed(sc.canonical(value)) == _typed(sc._canonical(value, "", 0))


def _nested(depth: int) -> Any:
    """`depth` levels of tables and lists, alternating, around a number."""
    v: Any = 1
    for i in range(depth):
        v = {"a": v} if i % 2 else [v]
    return v


@pytest.mark.parametrize("value", [
    {"a": {"b": [1.0, float("nan")]}},
    {"a": [{1: "x"}]},
    {"a": {"b": {"x", "y"}}},
    {"a": [b"x"]},
    {"a": [object()]},
    _nested(sc.MAX_DEPTH + 1),
    _nested(sc.MAX_DEPTH + 2),
])
def test_canonical_errors_are_the_long_way_s(value: Any) -> None:
    with pytest.raises(xlayer.ScenarioError) as short:
        sc.canonical(value, "doc")
    with pytest.raises(xlayer.ScenarioError) as long:
        sc._canonical(value, "doc", 0)
    assert str(short.value) == str(long.value) and short.value.path == long.value.path


def test_canonical_at_the_depth_limit() -> None:
    for depth in (sc.MAX_DEPTH - 1, sc.MAX_DEPTH):
        v = _nested(depth)
        assert sc.canonical(v) == v == sc._canonical(v, "", 0)

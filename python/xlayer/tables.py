"""The core's result columns as pandas DataFrames, typed as pandas types the lists."""

from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import native


def frame(cols: Mapping[str, Any]) -> pd.DataFrame:
    """One result table from the core's columns (name → values)."""
    columns = {c: column(v) for c, v in cols.items()}
    if all(isinstance(v, list) and not v for v in columns.values()):
        return _empty(tuple(columns)).copy()  # a run without series: a seventh of the cost
    return pd.DataFrame(columns)


@functools.lru_cache(maxsize=8)
def _empty(names: tuple[str, ...]) -> pd.DataFrame:
    """The frame of these columns without rows, as pandas types empty lists (callers copy it)."""
    return pd.DataFrame({c: [] for c in names})


def column(values: Any) -> Any:
    """A native column for pandas, with the dtype pandas gives the same values as a list:
    a list of numbers as an array (`numbers`), a float buffer as a float64 array, a
    coded one (`native.arrow_array`) decoded in Arrow; an empty one as an empty list.
    The float array is a read-only view of the buffer: `pd.DataFrame` copies a dict's
    arrays (into one block with the other float columns), so copying it here first would
    copy it twice."""
    if isinstance(values, list):
        return numbers(values)
    if not isinstance(values, Mapping):
        return values
    if "float64" in values:
        return np.frombuffer(values["float64"], dtype=np.float64) if values["float64"] else []
    return pd.Series(native.arrow_array(values), dtype="str") if values["codes"] else []


def numbers(values: list[Any]) -> Any:
    """A list of ints (floats) as the int64 (float64) array pandas makes of it, else the
    list itself: pandas types a list through its Python objects, a few microseconds a
    column however short (a fifth of Koga's tables), against about half a microsecond
    for numpy's conversion. The core's columns hold one type each
    (`xlayer_sim::stats::Column`: u64, f64, optional f64, string), so the first value
    tells which; what numpy would type otherwise than pandas stays a list: None among
    floats (an object array), ints beyond int64 (pandas makes those uint64), ints mixed
    with floats."""
    kind = type(values[0]) if values else None
    if kind is not int and kind is not float:
        return values
    array = np.array(values)
    return array if array.dtype == (np.int64 if kind is int else np.float64) else values

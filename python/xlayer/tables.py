"""The core's result columns as pandas DataFrames, typed as pandas types the lists."""

from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np
import pandas as pd

from . import native

try:  # pandas 3
    from pandas.api.internals import create_dataframe_from_blocks
except ImportError:  # pragma: no cover - older pandas build every table from a dict
    create_dataframe_from_blocks = None


def frame(cols: Mapping[str, Any]) -> pd.DataFrame:
    """One result table from the core's columns (name → values)."""
    built = by_blocks(cols)
    if built is not None:
        return built
    columns = {c: column(v) for c, v in cols.items()}
    if all(isinstance(v, list) and not v for v in columns.values()):
        return _empty(tuple(columns)).copy()  # a run without series: a seventh of the cost
    return pd.DataFrame(columns)


def by_blocks(columns: Mapping[str, Any]) -> pd.DataFrame | None:
    """The frame `pd.DataFrame` gives of the columns (`column`'s, or the core's own),
    with its blocks made here: a 2-D block a numpy dtype (int64, float64, object) and an
    array a string column, as pandas lays them out. pandas' constructor inspects every
    column on its way (about 10 µs each, 53 in Koga's two small tables: more than half
    of what a run costs outside the core); here each column's kind is known from the
    core's typing, and the lists of ints (floats) become their block in one numpy call.
    None when this pandas has no block constructor or types strings as objects (an
    option pandas 3 deprecates), the table has no rows, or a column is of a kind the
    core does not make: then pandas' constructor types them."""
    text = _text_dtype()
    if create_dataframe_from_blocks is None or not isinstance(text, pd.api.extensions.ExtensionDtype):
        return None
    items = list(columns.values())
    # A numpy dtype's columns (places and arrays, 1-D or stacked): one block each.
    stacks: dict[np.dtype, tuple[list[int], list[np.ndarray]]] = {
        block.dtype: (place, [block]) for block, place in _stacks(items)}
    blocks: list[tuple[Any, np.ndarray]] = []
    rows = {arrays[0].shape[1] for _, arrays in stacks.values()}
    done = {i for place, _ in stacks.values() for i in place}
    for i, values in enumerate(items):
        if i in done:
            continue
        array = _typed(column(values), text)
        if array is None:
            return None
        rows.add(len(array))
        if isinstance(array, np.ndarray):
            place, arrays = stacks.setdefault(array.dtype, ([], []))
            place.append(i)
            arrays.append(array)
        else:
            blocks.append((array, np.array([i])))
    if len(rows) != 1:
        return None  # pandas' constructor says what is wrong
    blocks += [(arrays[0] if len(arrays) == 1 and arrays[0].ndim == 2 else np.vstack(arrays), np.array(place))
               for place, arrays in stacks.values()]
    names = _names(tuple(columns)).copy()  # a frame's own: its `name` can be set in place
    return create_dataframe_from_blocks(blocks, index=pd.RangeIndex(rows.pop()), columns=names)


def _stacks(items: list[Any]) -> list[tuple[np.ndarray, list[int]]]:
    """The lists of ints and those of floats (by their first value, as in `numbers`),
    each kind as one 2-D block made in one numpy call, with the columns' places: about
    3 µs a column less than an array each. Lists holding None (optional floats) are
    left to `column`, and so is a kind whose block numpy types otherwise (ints beyond
    int64, ints mixed with floats, lists of different lengths)."""
    places: dict[type, list[int]] = {int: [], float: []}
    for i, values in enumerate(items):
        if isinstance(values, list) and values and type(values[0]) in places and None not in values:
            places[type(values[0])].append(i)
    stacked = []
    for kind, place in places.items():
        if not place:
            continue
        try:
            block = np.array([items[i] for i in place])
        except (ValueError, OverflowError):
            continue
        if block.dtype == (np.int64 if kind is int else np.float64) and block.ndim == 2:
            stacked.append((block, place))
    return stacked


@functools.lru_cache(maxsize=1)
def _text_dtype() -> Any:
    """The dtype pandas gives a list of strings (20 µs to look up, so once a process: a
    process that turns pandas 3's deprecated `future.infer_string` off after its first
    run keeps the first run's string dtype)."""
    return pd.api.types.pandas_dtype("str")


@functools.lru_cache(maxsize=8)
def _names(names: tuple[str, ...]) -> pd.Index:
    """A table's column labels as pandas types them (callers copy it)."""
    return pd.Index(names)


def _typed(values: Any, text: Any) -> Any:
    """A column (`column`'s) as the array pandas makes of it, or None for a kind the
    core does not make (`xlayer_sim::stats::Column`: u64, f64, optional f64, string;
    the first value tells which, as in `numbers`)."""
    if isinstance(values, np.ndarray):
        return values if values.dtype in (np.int64, np.float64) else None
    if isinstance(values, pd.Series):  # text when pandas' text dtype is not Arrow's
        return values.array if values.dtype == text else None
    if isinstance(values, pd.api.extensions.ExtensionArray):
        return values if values.dtype == text else None
    if not isinstance(values, list) or not values:
        return None
    if type(values[0]) is str:
        return strings(values) if all(type(x) is str for x in values) else None
    if all(x is None for x in values):
        return np.array(values, dtype=object)
    if all(x is None or type(x) is float for x in values):  # optional floats: NaN for None
        return np.array([np.nan if x is None else x for x in values])
    return None


@functools.lru_cache(maxsize=8)
def _empty(names: tuple[str, ...]) -> pd.DataFrame:
    """The frame of these columns without rows, as pandas types empty lists (callers copy it)."""
    return pd.DataFrame({c: [] for c in names})


def column(values: Any) -> Any:
    """A native column for pandas, with the dtype pandas gives the same values as a list:
    a list of numbers as an array (`numbers`), a float buffer as a float64 array, a
    text one on the core's buffers (`native.text_array`); an empty one as an empty list.
    The float array is a read-only view of the buffer: `pd.DataFrame` copies a dict's
    arrays (into one block with the other float columns), so copying it here first would
    copy it twice."""
    if isinstance(values, list):
        return numbers(values)
    if not isinstance(values, Mapping):
        return values
    if "float64" in values:
        return np.frombuffer(values["float64"], dtype=np.float64) if values["float64"] else []
    return strings(native.text_array(values)) if values["offsets"] else []


def strings(values: Any) -> Any:
    """Strings (a list, or a `large_string` Arrow array) as the array pandas makes of a
    list of them. pandas' Arrow-backed text dtype wraps the Arrow array as it is:
    `pd.array` checks each value on its way, 45 µs for a column of two against 8, and a
    run's tables have seven such columns."""
    text = _text_dtype()
    if getattr(text, "storage", None) == "pyarrow":
        import pyarrow as pa

        array = pa.array(values, type=pa.large_string()) if isinstance(values, list) else values
        return pd.arrays.ArrowStringArray(array, dtype=text)
    return pd.array(values, dtype=text) if isinstance(values, list) else pd.Series(values, dtype="str")


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

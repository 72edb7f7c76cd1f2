"""The Python front's shortcuts give what the long way gives: the parsed-file cache, the
canonical copy of plain documents, and the result tables built from number arrays."""

from __future__ import annotations

import enum
import os
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import DUMBBELL, LOSSY, SCENARIOS, SHORT

import xlayer
from xlayer import api, native, scenario as sc, tables


def _typed(v: Any) -> Any:
    """`v` with each value's type beside it: 1, 1.0 and True compare equal in Python."""
    if isinstance(v, dict):
        return {k: _typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_typed(x) for x in v]
    return (type(v).__name__, v)


# --- the parsed-file cache ---------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_a_cached_document_equals_a_fresh_parse(path: Path) -> None:
    sc._PARSED.clear()
    fresh = sc.load(path)
    again = sc.load(path)
    assert os.fspath(path) in sc._PARSED
    assert again == fresh and _typed(again) == _typed(fresh)
    assert list(again) == list(fresh)  # key order too


def test_the_cache_hands_out_copies(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_bytes(DUMBBELL.read_bytes())
    first = sc.load(p)
    first["link"][0]["rate"] = "1kbps"
    first["simulation"].clear()
    second = sc.load(p)
    assert second == xlayer.load(DUMBBELL) and second["link"][0]["rate"] != "1kbps"
    second["flow"].pop()
    assert sc.load(p) == xlayer.load(DUMBBELL)


def test_an_edited_file_is_parsed_again_whatever_its_size_and_time(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text('name = "aaaa"\n')
    assert sc.load(p)["name"] == "aaaa"
    stamp = p.stat()
    p.write_text('name = "bbbb"\n')  # same size
    os.utime(p, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # and same time stamps
    assert p.stat().st_size == stamp.st_size and p.stat().st_mtime_ns == stamp.st_mtime_ns
    assert sc.load(p)["name"] == "bbbb"


def test_errors_are_not_cached(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text('name = "ok"\n')
    assert sc.load(p) == {"name": "ok"}
    p.write_text('name = "ok\n')
    with pytest.raises(xlayer.ScenarioError, match="cannot parse"):
        sc.load(p)
    with pytest.raises(xlayer.ScenarioError, match="cannot parse"):
        sc.load(p)
    p.write_text('name = "ok"\nwhen = 1979-05-27\n')
    with pytest.raises(xlayer.ScenarioError, match=r"s\.toml: when: .* of type date is not allowed"):
        sc.load(p)
    p.write_text('name = "ok"\n')
    assert sc.load(p) == {"name": "ok"}
    p.unlink()
    with pytest.raises(xlayer.ScenarioNotFoundError):
        sc.load(p)


def test_json_and_toml_files_of_one_path_name(tmp_path: Path) -> None:
    toml, js = tmp_path / "s.toml", tmp_path / "s.json"
    toml.write_text("x = 1.0\ny = -0.0\nz = 12345678901234567890\n")
    js.write_text('{"x": 1, "y": 0.0}')
    for _ in range(2):
        assert _typed(sc.load(toml)) == {"x": ("float", 1.0), "y": ("float", -0.0),
                                         "z": ("int", 12345678901234567890)}
        assert str(sc.load(toml)["y"]) == "-0.0"
        assert _typed(sc.load(js)) == {"x": ("int", 1), "y": ("float", 0.0)}


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    sc._PARSED.clear()
    for i in range(sc._PARSED_MAX + 5):
        p = tmp_path / f"s{i}.toml"
        p.write_text(f"n = {i}\n")
        assert sc.load(p) == {"n": i}
    assert len(sc._PARSED) == sc._PARSED_MAX
    assert os.fspath(tmp_path / "s0.toml") not in sc._PARSED


def test_threads_loading_more_files_than_are_kept(tmp_path: Path) -> None:
    paths = []
    for i in range(sc._PARSED_MAX + 8):
        paths.append(tmp_path / f"s{i}.toml")
        paths[-1].write_text(f"n = {i}\n")

    def load_all(start: int) -> list[Any]:
        return [sc.load(paths[(start + k) % len(paths)])["n"] for k in range(300)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(load_all, range(4)))
    for start, got in enumerate(results):
        assert got == [(start + k) % len(paths) for k in range(300)]
    assert len(sc._PARSED) <= sc._PARSED_MAX


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


# --- result tables from number arrays and blocks -----------------------------------------

BLOCKS = pytest.mark.skipif(tables.create_dataframe_from_blocks is None, reason="pandas without a block constructor")


def _by_lists(raw: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The flow and link tables as pandas types the core's lists."""
    return pd.DataFrame(raw.get("flows") or {}), pd.DataFrame(raw.get("links") or {})


def _same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Equal values, dtypes, labels and block layout (pandas consolidates one block a
    numpy dtype)."""
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.equals(want) and list(got.dtypes) == list(want.dtypes)
    assert got.columns.dtype == want.columns.dtype and type(got.index) is type(want.index)
    assert got._mgr.nblocks == want._mgr.nblocks


@pytest.mark.parametrize("name, overrides", [
    ("dumbbell", SHORT),
    ("clamp_short_flows", {"simulation.duration": "3s"}),  # columns of None and of floats with None
    ("koga_fig1", SHORT),  # no series
    ("multicast_table1", {"simulation.duration": "1s"}),
])
def test_tables_equal_pandas_own_typing_of_the_lists(name: str, overrides: dict[str, Any]) -> None:
    path = sc.shipped(name)
    doc = sc.resolve(path, overrides)
    raw = native.simulate(doc, 1, 0, sc.base_dir(path))
    res = api._result(raw, doc, 1, 0)
    for got, want in zip((res.flows, res.links), _by_lists(raw)):
        _same_frame(got, want)
    series = {c: tables.column(v) for c, v in (raw.get("series") or {}).items()}
    if series and len(series["time_s"]):
        _same_frame(res.series, pd.DataFrame(series))


@BLOCKS
def test_the_core_s_tables_are_built_by_blocks() -> None:
    """The block path is taken for every kind of column the core makes (else the test
    above would pass through pandas' constructor alone)."""
    path = sc.shipped("clamp_short_flows")
    raw = native.simulate(sc.resolve(path, {"simulation.duration": "3s"}), 1, 0, sc.base_dir(path))
    for table in ("flows", "links", "series"):
        columns = {c: tables.column(v) for c, v in raw[table].items()}
        assert tables.by_blocks(columns) is not None, table


@BLOCKS
@pytest.mark.parametrize("values", [[True, False], [1, 2.5], [2**63, 1], [None, 1], ["a", 1], [1.0, "a"], [b"x", b"y"]])
def test_columns_the_core_does_not_make_are_typed_by_pandas(values: list[Any]) -> None:
    columns = {"n": tables.column([1, 2]), "c": tables.column(values)}
    assert tables.by_blocks(columns) is None
    _same_frame(tables.frame({"n": [1, 2], "c": values}), pd.DataFrame({"n": [1, 2], "c": values}))


def test_number_lists_become_one_block_a_kind() -> None:
    cols = {"a": [1, 2], "b": [0.5, 1.5], "c": [3, 4], "d": ["x", "y"], "e": [1.0, None], "f": [2.5, 3]}
    stacked = tables._stacks(list(cols.values()))
    assert [(block.dtype, block.shape, place) for block, place in stacked] == [
        (np.int64, (2, 2), [0, 2]), (np.float64, (2, 2), [1, 5])]
    assert stacked[0][0].tolist() == [[1, 2], [3, 4]] and stacked[1][0].tolist() == [[0.5, 1.5], [2.5, 3.0]]
    _same_frame(tables.frame(cols), pd.DataFrame(cols))
    # A kind numpy would type otherwise is left to the columns one by one.
    for odd in ([2**63, 1], [1, 2.5]):
        assert [place for _, place in tables._stacks([[1, 2], odd])] == []
        _same_frame(tables.frame({"n": [1, 2], "c": odd}), pd.DataFrame({"n": [1, 2], "c": odd}))
    assert tables._stacks([[1, 2], [3]]) == []
    with pytest.raises(ValueError):
        tables.frame({"a": [1, 2], "b": [3]})


def test_tables_are_their_own() -> None:
    """Each result's tables can be changed without touching another's, or the labels
    the next result gets."""
    a, b = (xlayer.run(DUMBBELL, overrides=SHORT, progress=False) for _ in range(2))
    want = b.flows.copy()
    a.flows.loc[0, "tx_packets"] = -1
    a.flows.loc[0, "name"] = "changed"
    a.flows.columns.name = "renamed"
    a.links.iloc[0, 2] = -1
    pd.testing.assert_frame_equal(b.flows, want, check_exact=True)
    assert b.flows.columns.name is None
    assert xlayer.run(DUMBBELL, overrides=SHORT, progress=False).flows.columns.name is None


def test_number_columns() -> None:
    ints, floats = tables.numbers([1, 2]), tables.numbers([0.5, float("nan")])
    assert isinstance(ints, np.ndarray) and ints.dtype == np.int64
    assert isinstance(floats, np.ndarray) and floats.dtype == np.float64
    for kept in ([], [None, 1.0], [1.0, None], [2**63], ["a"], [1, 2.5]):
        assert tables.numbers(kept) is kept
    for values in ([1, 2], [0.5, float("nan")], [None, 1.0], [1.0, None], [2**63], [1, 2.5], [2**64]):
        got = pd.DataFrame({"c": tables.column(values)})
        pd.testing.assert_frame_equal(got, pd.DataFrame({"c": values}), check_exact=True)


def test_runs_without_series_get_their_own_empty_table() -> None:
    a = xlayer.run(LOSSY, overrides={**SHORT, "output.series_interval": "0s"}, progress=False)
    b = xlayer.run(LOSSY, overrides={**SHORT, "output.series_interval": "0s"}, progress=False)
    want = pd.DataFrame({c: [] for c in native.SERIES_COLUMNS})
    pd.testing.assert_frame_equal(a.series, want, check_exact=True)
    assert a.series is not b.series
    a.series["extra"] = 1.0
    a.series.loc[0] = 1.0
    pd.testing.assert_frame_equal(b.series, want, check_exact=True)
    pd.testing.assert_frame_equal(tables._empty(tuple(native.SERIES_COLUMNS)), want, check_exact=True)

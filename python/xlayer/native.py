"""The pandas-free core of a run: drive the native simulation, its provenance, and its
files written straight from the native columns. `xlayer run` on the command line uses
only this (importing pandas would cost it more than a short simulation); `xlayer.api`
builds DataFrames on top of it."""

from __future__ import annotations

import csv
import datetime as _dt
import functools
import json
import math
import os
import platform
import subprocess
import sys
import time
from array import array
from contextlib import nullcontext
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any, Callable, Mapping

from . import _core, progress as _progress
from .scenario import native_errors, resolved_json

RNG: str = getattr(
    _core, "RNG_ALGORITHM", "xoshiro256++ seeded via SplitMix64 from (seed, run, stream name)"
)
RUN_FILES = ("flows.parquet", "series.parquet", "links.parquet", "flows.csv", "manifest.json")
SERIES_COLUMNS = ["time_s", "entity", "metric", "value"]

def simulate(doc: Mapping[str, Any], seed: int, run: int, base_dir: str | None = None, *,
             pcap_dir: str | None = None, progress: bool = False, label: str = "") -> dict[str, Any]:
    """Run a resolved scenario dict and return the native result as plain columns
    (what `run` turns into DataFrames; a results store writes it as Arrow directly)."""
    with native_errors():
        sim = _core.Simulation(resolved_json(doc), seed, run, pcap_dir, base_dir)
    with native_errors():  # a run that stalls is the scenario's error too
        return _drive(sim, progress, label)


def conserved(c: Mapping[str, int]) -> bool:
    """Whether conservation counters balance: sent + group copies = delivered + dropped
    + in flight."""
    sent = c["sent"] + c.get("replicated", 0)
    return bool(sent == c["delivered"] + c["dropped"] + c["in_flight"])


def check_index(what: str, v: Any) -> None:
    """ValueError unless `v` is a valid seed or run index: an integer in [0, 2^64)."""
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**64:
        raise ValueError(f"{what} must be an integer in [0, 2^64), got {v!r}")


CHUNK_WALL_S = 0.05  # wall time of one native call: how long a Ctrl-C may wait


def _drive(sim: Any, show: bool, label: str) -> dict[str, Any]:
    """Run to the end in native calls of about CHUNK_WALL_S wall time each (so that
    KeyboardInterrupt and other signal handlers run between them), updating the bar."""
    dur = float(sim.duration_s)
    bar = _progress.sim_bar(dur, label) if show else nullcontext(None)
    with bar as update:
        _advance_in_chunks(sim, dur, update)
    result: dict[str, Any] = sim.finish()
    return result


def _advance_in_chunks(
    sim: Any, dur: float, update: Callable[[float, int], None] | None
) -> None:
    """Where a chunk ends does not change the run: events are ordered by time alone."""
    now, step = 0.0, min(dur, 1e-3)
    while now < dur:
        until = min(dur, now + step)
        t0 = time.perf_counter()
        sim.advance(until)
        wall = time.perf_counter() - t0
        now = until
        if update is not None:
            update(sim.now_s, sim.events)
        step *= min(4.0, max(0.25, CHUNK_WALL_S / wall)) if wall > 0 else 4.0
        step = max(step, 1e-6)  # always make progress


def metadata(raw: Mapping[str, Any], doc: Mapping[str, Any], seed: int, run: int) -> dict[str, Any]:
    """A run's provenance: version, commit, seed, run, RNG, scenario name and hash, events, times."""
    return {
        "version": version(),
        "commit": commit(),
        "seed": seed,
        "run": run,
        "rng": RNG,
        "scenario_name": doc.get("name", ""),
        "scenario_hash": raw.get("scenario_hash"),
        "events": raw.get("events"),
        "sim_time_s": raw.get("sim_time_s"),
        "wall_time_s": raw.get("wall_time_s"),
    }


# --- provenance -------------------------------------------------------------------------


def version() -> str:
    return str(getattr(_core, "__version__", "unknown"))


@functools.lru_cache(maxsize=1)
def commit() -> str | None:
    """Git commit of this build: recorded in the native module when it was built from a
    checkout (`-dirty` for local changes, see crates/xlayer-py/build.rs), else by the
    installer, else `git rev-parse HEAD` of the checkout the package lives in, else None."""
    built = getattr(_core, "__commit__", None)
    if built:
        return str(built)
    try:
        info = json.loads(distribution("xlayer").read_text("direct_url.json") or "{}")
        vcs = info.get("vcs_info", {}).get("commit_id")
        if vcs:
            return str(vcs)
    except (PackageNotFoundError, ValueError, OSError):
        pass
    return _git_head(Path(__file__).resolve().parent)


def _git_head(where: Path) -> str | None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(where), *args], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "") if head else None



def conservation(raw: Mapping[str, Any]) -> dict[str, int]:
    return {k: int(v) for k, v in dict(raw.get("conservation") or {}).items()}


def manifest(meta: Mapping[str, Any], fingerprint: str, conservation: Mapping[str, int],
             scenario: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """Everything needed to reproduce and identify a run (its manifest.json): `meta` is
    `metadata(...)`, `extra` goes in before the scenario."""
    return {
        **meta,
        "fingerprint": fingerprint,
        "conservation": dict(conservation),
        "command": list(sys.argv),
        "cwd": os.getcwd(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        **extra,
        "scenario": scenario,
    }


def write_run(raw: Mapping[str, Any], manifest: Mapping[str, Any], folder: Path) -> None:
    """A run's files (RUN_FILES) from the native columns, without pandas: Parquet (zstd,
    the manifest less the scenario in each file's key-value metadata), flows.csv and
    manifest.json. Read back, they equal what `RunResult.write` writes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = json.dumps({k: v for k, v in manifest.items() if k != "scenario"}, sort_keys=True, default=str)
    for name in ("flows", "series", "links"):
        cols = raw.get(name) or ({c: [] for c in SERIES_COLUMNS} if name == "series" else {})
        table = pa.Table.from_arrays([arrow_array(v) for v in cols.values()], names=list(cols))
        pq.write_table(table.replace_schema_metadata({"xlayer": meta}), folder / f"{name}.parquet",
                       compression="zstd")
    write_csv(raw.get("flows") or {}, folder / "flows.csv")
    write_json(manifest, folder / "manifest.json")


def arrow_array(values: list[Any] | Mapping[str, Any]) -> Any:
    """A native column as an Arrow array, built from buffers: converting Python lists the
    usual way (`pa.array`) makes pyarrow import pandas, which would cost `xlayer run`
    more than its simulation. Types as pandas would give them: int64, float64 with
    None and NaN as nulls, string, bool; a column of only None has the null type. The
    series' buffer columns: `{"float64"}` as float64 (NaN as nulls), a text column
    (`{"offsets", "utf8"}`) as string."""
    import numpy as np
    import pyarrow as pa

    if isinstance(values, Mapping) and not (values.get("float64") or values.get("offsets")):
        return pa.nulls(0)  # as an empty list gives
    if isinstance(values, Mapping) and "float64" in values:
        floats = np.frombuffer(values["float64"], dtype=np.float64)
        nan = np.isnan(floats)
        valid = pa.py_buffer(np.packbits(~nan, bitorder="little")) if nan.any() else None
        return pa.Array.from_buffers(pa.float64(), len(floats), [valid, pa.py_buffer(floats)])
    if isinstance(values, Mapping):
        return text_array(values).cast(pa.string())  # the type files have always had
    n = len(values)
    first = next((v for v in values if v is not None), None)
    if first is None:
        return pa.nulls(n)
    missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in values]
    validity = _bits(missing, invert=True) if any(missing) else None
    if isinstance(first, bool):
        return pa.Array.from_buffers(pa.bool_(), n, [validity, _bits([bool(v) for v in values])])
    if isinstance(first, int):
        data = pa.py_buffer(array("q", [0 if m else v for v, m in zip(values, missing)]))
        return pa.Array.from_buffers(pa.int64(), n, [validity, data])
    if isinstance(first, float):
        data = pa.py_buffer(array("d", [0.0 if m else v for v, m in zip(values, missing)]))
        return pa.Array.from_buffers(pa.float64(), n, [validity, data])
    encoded = [b"" if m else str(v).encode() for v, m in zip(values, missing)]
    offsets = array("i", [0])
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    return pa.Array.from_buffers(pa.string(), n, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def text_array(values: Mapping[str, bytes]) -> Any:
    """A text column of the series (entity, metric) as the core lays it out: the
    `large_string` array pandas keeps its strings in, on the core's buffers."""
    import pyarrow as pa

    offsets = values["offsets"]
    return pa.Array.from_buffers(pa.large_string(), len(offsets) // 8 - 1,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(values["utf8"])])


def _bits(flags: list[bool], invert: bool = False) -> Any:
    """LSB-first bitmap of `flags` (of their negation with `invert`), as Arrow wants it."""
    import pyarrow as pa

    out = bytearray((len(flags) + 7) // 8)
    for i, f in enumerate(flags):
        if f != invert:
            out[i >> 3] |= 1 << (i & 7)
    return pa.py_buffer(bytes(out))


def write_csv(cols: Mapping[str, list[Any]], path: Path) -> None:
    """Columns as CSV the way pandas writes them: missing values (None, NaN) empty."""
    def cell(v: Any) -> Any:
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else v

    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(list(cols))
        w.writerows([cell(v) for v in row] for row in zip(*cols.values()))


def write_json(obj: Any, path: Path) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")


"""A results store: a directory of run records, keyed by content, that sweeps fill in.

    STORE/
      xlayer-store.json             marks the directory as a store (format version)
      records/ab/<key>/             one finished run: flows.parquet, links.parquet,
                                    series.parquet (when the plan keeps series), manifest.json
      failed/<key>.json             a run that failed: its error (message, field path)
      plans/<name>.json             a plan and its points (params, seed, run, key)

A record's key is a hash of the resolved scenario, seed, run and xlayer version, so a
record is reused by any plan that asks for the same run, and a new xlayer version
computes afresh. A record is staged in `.tmp/` and renamed into place: a record folder
that exists is complete (a crash leaves only a staging folder, which is never read and
is removed later). Every table carries the columns `record`, `seed`, `run` and
`fingerprint` first, so `Store.dataset("flows")` reads the flows of all records lazily
with pyarrow and joins with `Store.points()` on `record`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from .api import SERIES_COLUMNS, metadata, version
from .native import arrow_array
from .outdir import OutputError, process_alive, target_path
from .scenario import canonical_json

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.dataset as pads

MARKER_FILE = "xlayer-store.json"
FORMAT = 1
TABLES = ("flows", "links", "series")
HEAD = ("record", "seed", "run", "fingerprint")
KEY_CHARS = 32


def key(doc: Mapping[str, Any], seed: int, run: int, xlayer_version: str | None = None) -> str:
    """The record key: sha256 of the canonical scenario, seed, run and xlayer version."""
    text = canonical_json({"scenario": doc, "seed": seed, "run": run,
                           "version": xlayer_version or version()})
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_CHARS]


def encode(raw: Mapping[str, Any], doc: Mapping[str, Any], seed: int, run: int, record: str,
           params: Mapping[str, Any], series: bool) -> dict[str, bytes]:
    """A finished run (`xlayer.api.simulate`'s columns) as the files of its record:
    Parquet and manifest bytes, made in the worker, so the process that commits the
    record only writes bytes. Tables go to Arrow straight from the columns (a pandas
    detour costs several times more); read back, they equal `xlayer.run`'s DataFrames."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fingerprint = str(raw["fingerprint"])
    manifest = {"xlayer_record": {"format": FORMAT}, "key": record, "status": "ok",
                **metadata(raw, doc, seed, run), "fingerprint": fingerprint,
                "conservation": {k: int(v) for k, v in dict(raw.get("conservation") or {}).items()},
                "params": dict(params), "created_utc": _now(), "scenario": doc}
    out: dict[str, bytes] = {}
    for name in ("flows", "links", *(("series",) if series else ())):
        cols = raw.get(name) or ({c: [] for c in SERIES_COLUMNS} if name == "series" else {})
        t = pa.table({c: _arrow(v) for c, v in cols.items()})
        n = t.num_rows
        for i, (col, val) in enumerate(zip(HEAD, (record, seed, run, fingerprint))):
            t = t.add_column(i, col, pa.array([val] * n, type=pa.uint64() if col in ("seed", "run") else pa.string()))
        sink = pa.BufferOutputStream()
        pq.write_table(t, sink, compression="zstd")
        out[f"{name}.parquet"] = sink.getvalue().to_pybytes()
    manifest["files"] = [*out, "manifest.json"]
    out["manifest.json"] = (json.dumps(manifest, indent=1, default=str) + "\n").encode()
    return out


class Store:
    """A results store at `path`: created when absent or empty; an existing non-empty
    folder must be a store (OutputError otherwise, naming the folder)."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.shown = os.fspath(path)
        self.root = target_path(path)
        marker = self.root / MARKER_FILE
        if not marker.exists():
            if not create:
                raise OutputError(self.shown, f"not an xlayer store (no {MARKER_FILE})")
            if self.root.exists() and (not self.root.is_dir() or any(self.root.iterdir())):
                raise OutputError(self.shown, "exists and is not an xlayer store (no "
                                              f"{MARKER_FILE}); name a new or empty folder")
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                _write_atomic(marker, json.dumps({"xlayer_store": {"format": FORMAT},
                                                  "created_utc": _now()}, indent=1).encode())
            except OSError as e:
                raise OutputError(self.shown, f"cannot create the store: {e.strerror or e}") from None
        else:
            try:
                fmt = json.loads(marker.read_text())["xlayer_store"]["format"]
            except (OSError, ValueError, KeyError, TypeError):
                raise OutputError(self.shown, f"{MARKER_FILE} is unreadable") from None
            if fmt != FORMAT:
                raise OutputError(self.shown, f"store format {fmt}; this xlayer reads format {FORMAT}")

    # --- records ------------------------------------------------------------------------

    def path(self, record: str) -> Path:
        return self.root / "records" / record[:2] / record

    def has(self, record: str, series: bool = False) -> bool:
        """Whether a complete record exists (with its time series, if `series`)."""
        p = self.path(record)
        return (p / "series.parquet").exists() if series else p.is_dir()

    def commit(self, record: str, files: Mapping[str, bytes]) -> None:
        """Write a record atomically: staged, then renamed into place. A record that is
        already there is kept unless the new one adds the time series."""
        dest = self.path(record)
        if dest.is_dir() and ("series.parquet" not in files or (dest / "series.parquet").exists()):
            return  # deterministic: the same key has the same content
        stage = self._stage(record)
        try:
            for name, data in files.items():
                (stage / name).write_bytes(data)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.is_dir():  # replacing a record without series: swap it
                aside = self._stage(record)
                os.rename(dest, aside / "old")
                os.rename(stage, dest)
                shutil.rmtree(aside, ignore_errors=True)
            else:
                try:
                    os.rename(stage, dest)
                except OSError:
                    if not dest.is_dir():
                        raise
                    shutil.rmtree(stage)  # another sweep wrote the same record meanwhile
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        failed = self.root / "failed" / f"{record}.json"
        if failed.exists():
            failed.unlink(missing_ok=True)

    def fail(self, record: str, info: Mapping[str, Any]) -> None:
        """Record a failed run: its error message, field path, grid point, seed, run."""
        (self.root / "failed").mkdir(exist_ok=True)
        body = {"xlayer_record": {"format": FORMAT}, "key": record, "status": "failed",
                "version": version(), "created_utc": _now(), **info}
        _write_atomic(self.root / "failed" / f"{record}.json",
                      json.dumps(body, indent=1, default=str).encode())

    def manifest(self, record: str) -> dict[str, Any]:
        """The manifest of a record, or the error of a failed one (KeyError if neither)."""
        for p in (self.path(record) / "manifest.json", self.root / "failed" / f"{record}.json"):
            try:
                doc: dict[str, Any] = json.loads(p.read_text())
                return doc
            except FileNotFoundError:
                continue
        raise KeyError(f"no record {record} in {self.shown}")

    def table(self, record: str, name: str = "flows") -> pd.DataFrame:
        """One record's table, without the leading record/seed/run/fingerprint columns."""
        return self.arrow(record, name).to_pandas()

    def arrow(self, record: str, name: str = "flows") -> pa.Table:
        """`table` as an Arrow table."""
        import pyarrow.parquet as pq

        return pq.ParquetFile(self.path(record) / f"{name}.parquet").read().drop_columns(list(HEAD))

    def keys(self) -> list[str]:
        """Keys of the complete records."""
        out = []
        base = self.root / "records"
        for shard in sorted(os.scandir(base), key=lambda e: e.name) if base.is_dir() else []:
            out += sorted(e.name for e in os.scandir(shard.path) if e.is_dir())
        return out

    def failed(self) -> list[dict[str, Any]]:
        """The failed records' error documents."""
        base = self.root / "failed"
        docs = []
        for p in sorted(base.glob("*.json")) if base.is_dir() else []:
            try:
                docs.append(json.loads(p.read_text()))
            except (OSError, ValueError):
                continue  # removed meanwhile (the run succeeded on a retry)
        return docs

    def records(self) -> pd.DataFrame:
        """One row per record (complete and failed): key, status, scenario name, seed,
        run, fingerprint, version, wall time, params (as JSON), error."""
        import pandas as pd

        rows = []
        for k in self.keys():
            m = self.manifest(k)
            rows.append({"key": k, "status": "ok", "scenario": m.get("scenario_name"),
                         "seed": m.get("seed"), "run": m.get("run"), "fingerprint": m.get("fingerprint"),
                         "version": m.get("version"), "wall_time_s": m.get("wall_time_s"),
                         "series": (self.path(k) / "series.parquet").exists(),
                         "params": json.dumps(m.get("params", {}), sort_keys=True), "error": None})
        for f in self.failed():
            rows.append({"key": f.get("key"), "status": "failed", "scenario": f.get("scenario_name"),
                         "seed": f.get("seed"), "run": f.get("run"), "fingerprint": None,
                         "version": f.get("version"), "wall_time_s": None, "series": False,
                         "params": json.dumps(f.get("params", {}), sort_keys=True),
                         "error": f.get("error")})
        return pd.DataFrame(rows, columns=["key", "status", "scenario", "seed", "run", "fingerprint",
                                           "version", "wall_time_s", "series", "params", "error"])

    def dataset(self, name: str = "flows", records: Iterable[str] | None = None) -> pads.Dataset:
        """A lazy pyarrow dataset over one table of the given (default: all) records."""
        import pyarrow as pa
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        if name not in TABLES:
            raise ValueError(f"table must be one of {TABLES}, got {name!r}")
        keys = self.keys() if records is None else list(records)
        files = [str(self.path(k) / f"{name}.parquet") for k in keys]
        files = [f for f in files if os.path.exists(f)]
        if not files:
            return ds.dataset(pa.table({c: pa.array([], pa.string()) for c in HEAD}))
        # Columns that are all null in one record (no file transfer finished, say) are
        # typed by the records that have values.
        schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
        return ds.dataset(files, schema=schema, format="parquet")

    # --- plans --------------------------------------------------------------------------

    def save_plan(self, name: str, plan: Mapping[str, Any], points: list[dict[str, Any]]) -> None:
        """Store a plan's description and its points (`params`, `seed`, `run`, `key`)."""
        (self.root / "plans").mkdir(exist_ok=True)
        body = {"plan": plan, "saved_utc": _now(), "points": points}
        _write_atomic(self.root / "plans" / f"{name}.json", json.dumps(body, default=str).encode())

    def plans(self) -> list[str]:
        base = self.root / "plans"
        return sorted(p.stem for p in base.glob("*.json")) if base.is_dir() else []

    def plan(self, name: str) -> dict[str, Any]:
        try:
            doc: dict[str, Any] = json.loads((self.root / "plans" / f"{name}.json").read_text())
        except FileNotFoundError:
            raise KeyError(f"no plan {name!r} in {self.shown}; plans: {', '.join(self.plans()) or 'none'}") from None
        return doc

    def points(self, plan: str | None = None) -> pd.DataFrame:
        """The points of one plan (default: every plan), one row each: the plan's axis
        columns, seed, run, record key, and status (ok, failed or missing)."""
        import pandas as pd

        names = [plan] if plan is not None else self.plans()
        rows, axes = [], []
        for n in names:
            doc = self.plan(n)
            for p in doc["points"]:
                rows.append({**p["params"], "seed": p["seed"], "run": p["run"], "record": p["key"],
                             "plan": n})
                axes += [a for a in p["params"] if a not in axes]
        df = pd.DataFrame(rows, columns=[*axes, "seed", "run", "record", "plan"])
        ok = set(self.keys())
        bad = {f.get("key") for f in self.failed()}
        df["status"] = ["ok" if k in ok else "failed" if k in bad else "missing" for k in df["record"]]
        df.attrs["xlayer"] = {"params": axes}
        return df

    def frame(self, plan: str | None = None, table: str = "flows",
              columns: Iterable[str] | None = None) -> pd.DataFrame:
        """One plan's (default: every plan's) finished points joined with a table of their
        records: the axis columns, seed, run, record, then the table's `columns`
        (default all). Only those columns are read from disk."""
        pts = self.points(plan)
        axes = pts.attrs["xlayer"]["params"]
        ok = pts[pts["status"] == "ok"].drop(columns=["plan", "status"])
        ok = ok.loc[~ok.astype(str).duplicated()]  # a point that two plans share, once
        ds = self.dataset(table, records=list(dict.fromkeys(ok["record"])))
        have = set(ds.schema.names) - {*axes, "seed", "run"}
        want = None if columns is None else [c for c in dict.fromkeys(["record", "fingerprint", *columns])
                                             if c in have]
        data = ds.to_table(columns=want or sorted(have)).to_pandas()
        data = data.drop(columns=[c for c in ("seed", "run") if c in data])
        out = ok.merge(data, on="record", how="inner", sort=False).reset_index(drop=True)
        out.attrs["xlayer"] = {"params": axes, "store": str(self.root), "plan": plan}
        return out

    # --- housekeeping -------------------------------------------------------------------

    def gc(self, *, other_versions: bool = False, dry_run: bool = False) -> dict[str, list[str]]:
        """Remove staging folders left by dead processes, failed records that a later
        run replaced, and (with `other_versions`) records of other xlayer versions.
        Returns what was (or, with `dry_run`, would be) removed."""
        removed: dict[str, list[str]] = {"staging": [], "superseded_failures": [], "other_versions": []}
        tmp = self.root / ".tmp"
        for e in os.scandir(tmp) if tmp.is_dir() else []:
            if not _stage_is_live(e.name):
                removed["staging"].append(e.path)
        for f in self.failed():
            k = str(f.get("key"))
            if self.path(k).is_dir():
                removed["superseded_failures"].append(str(self.root / "failed" / f"{k}.json"))
        if other_versions:
            mine = version()
            for k in self.keys():
                if self.manifest(k).get("version") != mine:
                    removed["other_versions"].append(str(self.path(k)))
            for f in self.failed():
                if f.get("version") != mine:
                    removed["other_versions"].append(str(self.root / "failed" / f"{f.get('key')}.json"))
        if not dry_run:
            for paths in removed.values():
                for p in paths:
                    if os.path.isdir(p):
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        Path(p).unlink(missing_ok=True)
        return removed

    def _stage(self, record: str) -> Path:
        tmp = self.root / ".tmp"
        tmp.mkdir(exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{record}.{_HOST}.{os.getpid()}.", dir=tmp))


_HOST = socket.gethostname().replace(".", "_")[:40] or "host"



def _arrow(values: Any) -> Any:
    """A native column as `pa.table` takes it: lists as they are, the series' buffer
    columns as Arrow arrays (floats keep NaN as a value, as from a list; empty ones as
    an empty list, so their type stays the one an empty list gives)."""
    import numpy as np
    import pyarrow as pa

    if not isinstance(values, Mapping):
        return values
    if "float64" in values:
        return pa.array(np.frombuffer(values["float64"], dtype=np.float64)) if values["float64"] else []
    return arrow_array(values) if values["offsets"] else []


def _stage_is_live(name: str) -> bool:
    """A staging folder `<key>.<host>.<pid>.<random>` is live if its process runs here."""
    parts = name.split(".")
    if len(parts) != 4 or not parts[2].isdigit():
        return False
    if parts[1] != _HOST:
        return True  # another machine's: only it knows
    return int(parts[2]) == os.getpid() or process_alive(int(parts[2]))


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")

"""`xlayer.run`: one simulation run, returned as pandas DataFrames plus provenance."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import _core, native, progress as _progress
from .native import (RNG, RUN_FILES, SERIES_COLUMNS, check_index, commit, conserved, metadata, simulate, version,
                     write_json)
from .outdir import MARKER, atomic_dir, mark
from .scenario import ScenarioLike, base_dir as _base_dir, native_errors, resolve, resolved_json
from .tables import frame

__all__ = ["RNG", "RUN_FILES", "SERIES_COLUMNS", "RunResult", "check_determinism", "check_index", "commit",
           "conserved", "metadata", "run", "simulate", "version", "write_json", "write_parquet"]


@dataclass(repr=False)
class RunResult:
    """Results of one run. Tables are tidy: one row per flow / link direction / sample."""

    flows: pd.DataFrame
    links: pd.DataFrame
    series: pd.DataFrame
    fingerprint: str
    metadata: dict[str, Any]
    conservation: dict[str, int]
    scenario: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        m = self.metadata
        return (
            f"RunResult(name={m.get('scenario_name')!r}, seed={m.get('seed')}, run={m.get('run')}, "
            f"fingerprint={self.fingerprint!r}, flows={len(self.flows)}, links={len(self.links)}, "
            f"series_rows={len(self.series)}, events={m.get('events')})"
        )

    @property
    def conserved(self) -> bool:
        """Every packet sent (and every copy group forwarding made) is delivered, dropped or
        still in flight."""
        return conserved(self.conservation)

    def series_wide(self, metric: str | None = None) -> pd.DataFrame:
        """Pivot the long series to one row per time: columns are entities for one
        `metric`, else an (entity, metric) MultiIndex."""
        s = self.series
        if metric is not None:
            s = s[s["metric"] == metric]
            return s.pivot(index="time_s", columns="entity", values="value")
        return s.pivot(index="time_s", columns=["entity", "metric"], values="value")

    def manifest(self, **extra: Any) -> dict[str, Any]:
        """Everything needed to reproduce and identify this run (written as manifest.json)."""
        return native.manifest(self.metadata, self.fingerprint, self.conservation, self.scenario, **extra)

    def write(self, directory: str | os.PathLike[str], **extra: Any) -> Path:
        """Write the result files into an existing directory (not atomic; see `to_dir`)."""
        d = Path(directory)
        manifest = self.manifest(**{MARKER: mark("run"), "files": list(RUN_FILES), **extra})
        meta = {k: v for k, v in manifest.items() if k != "scenario"}
        write_parquet(self.flows, d / "flows.parquet", meta)
        write_parquet(self.series, d / "series.parquet", meta)
        write_parquet(self.links, d / "links.parquet", meta)
        self.flows.to_csv(d / "flows.csv", index=False)
        write_json(manifest, d / "manifest.json")
        return d

    def plot(self, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Draw this run's figures into `out_dir` as PNG and SVG (as `xlayer plot`):
        congestion window, smoothed RTT and goodput per flow and queue per link direction
        over time, and goodput against 95th-percentile delay per flow. Written atomically,
        by the rules of `to_dir`; figures without data (say, no TCP flow) are skipped and
        listed in the folder's manifest.json. Needs matplotlib: `pip install 'xlayer[plot]'`.
        Returns `out_dir`."""
        from .plot import draw

        manifest = {**self.metadata, "fingerprint": self.fingerprint}
        return draw(self.flows, self.series, manifest, out_dir, overwrite=overwrite).out

    def to_dir(self, out: str | os.PathLike[str], *, overwrite: bool = False,
               **extra: Any) -> Path:
        """Write flows/series/links Parquet, flows.csv and manifest.json into `out`,
        atomically: either the complete directory appears or nothing changes.

        `out` may be new, empty or a previous xlayer output (replaced; files in it that
        are not xlayer's are kept). A non-empty folder that is not an xlayer output raises
        `xlayer.OutputError` unless `overwrite`, and then only xlayer's files in it are
        replaced. The working folder, its parents, home and root are always refused.
        `extra` items are added to manifest.json.
        """
        with atomic_dir(out, overwrite=overwrite) as stage:
            self.write(stage, **extra)
        return Path(out)


def run(
    scenario: ScenarioLike,
    seed: int = 1,
    run: int = 0,
    *,
    overrides: Mapping[str, Any] | None = None,
    pcap_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    base_dir: str | None = None,
) -> RunResult:
    """Run `scenario` (path to .toml/.json, or dict) once with (`seed`, `run`).

    `overrides` maps dotted paths to values (see `xlayer.scenario.apply_overrides`).
    `pcap_dir` enables captures into that directory. Relative file paths in the scenario
    (link traces) are read from `base_dir`, by default the scenario file's folder (the
    working folder for a dict). `progress` shows a bar on stderr
    (default: only when stderr is a terminal). Raises `xlayer.ScenarioError` for an
    invalid scenario.
    """
    check_index("seed", seed)
    check_index("run", run)
    doc = resolve(scenario, overrides)
    if pcap_dir is not None:
        Path(pcap_dir).mkdir(parents=True, exist_ok=True)
        pcap_dir = os.fspath(pcap_dir)
    folder = base_dir if base_dir is not None else _base_dir(scenario)
    label = doc.get("name") or (Path(scenario).stem if isinstance(scenario, (str, os.PathLike)) else "run")
    raw = simulate(doc, seed, run, folder, pcap_dir=pcap_dir, progress=_progress.enabled(progress),
                   label=f"{label} seed={seed} run={run}")
    return _result(raw, doc, seed, run)


def check_determinism(
    scenario: ScenarioLike,
    seed: int = 1,
    run: int = 0,
    *,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Run `scenario` twice in this process and compare the event streams.

    Returns None when both runs processed identical events, else the index of the first
    diverging event and a description of that event in each run.
    """
    check_index("seed", seed)
    check_index("run", run)
    doc = resolve(scenario, overrides)
    with native_errors():
        return _core.check_determinism(resolved_json(doc), seed, run, _base_dir(scenario))


def _result(raw: Mapping[str, Any], doc: dict[str, Any], seed: int, run: int) -> RunResult:
    cols = raw.get("series") or {c: [] for c in SERIES_COLUMNS}
    series = frame(cols)
    return RunResult(
        flows=frame(raw.get("flows") or {}),
        links=frame(raw.get("links") or {}),
        series=series,
        fingerprint=str(raw["fingerprint"]),
        metadata=metadata(raw, doc, seed, run),
        conservation=native.conservation(raw),
        scenario=doc,
    )


# --- files ------------------------------------------------------------------------------


def write_parquet(df: pd.DataFrame, path: Path, meta: Mapping[str, Any]) -> None:
    """Parquet (zstd) with the run metadata in the file's key-value metadata."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    kv = dict(table.schema.metadata or {})
    kv[b"xlayer"] = json.dumps(meta, sort_keys=True, default=str).encode()
    pq.write_table(table.replace_schema_metadata(kv), path, compression="zstd")



"""Parameter sweeps: grid x seeds x runs (or an `xlayer.Plan`), serially, on a process
pool or on a Dask cluster, in memory or into a results store (`xlayer.store`).

The result is one tidy DataFrame of per-flow rows, ordered by (grid point, seed, run)
whatever order the workers finish in, so a parallel sweep equals a serial one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from . import _core, progress as _progress
from .api import check_index, commit, run as _run, version
from .executors import Job, execute, executor_for
from .plan import Plan
from .pool import run_jobs
from .scenario import (
    ScenarioError,
    ScenarioLike,
    apply_overrides,
    base_dir,
    canonical,
    canonical_json,
    load,
    native_errors,
    resolve,
)
from .store import Store, key as record_key

SWEEP_COLUMNS = ("seed", "run", "fingerprint")


def sweep(
    scenario: ScenarioLike | Plan,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: Iterable[int] | None = None,
    runs: Iterable[int] | int | None = None,
    workers: int | None = 1,
    *,
    progress: bool | None = None,
    store: str | os.PathLike[str] | Store | None = None,
    client: Any = None,
    series: bool = False,
) -> pd.DataFrame:
    """Run `scenario` for every grid point x seed x run and return the per-flow tables
    concatenated, with one column per grid path plus `seed`, `run` and `fingerprint`.

    `scenario` is a scenario (path or dict) with `grid`, `seeds` and `runs`, or an
    `xlayer.Plan` (which has its own axes, seeds and runs). `grid` maps dotted override
    paths to value lists, e.g. `{"link.bottleneck.rate": ["10Mbps", "20Mbps"]}`. `runs`
    is a list of run indices, an int n (runs 0..n-1) or None (run 0). `workers` > 1
    uses that many processes (None or 0: one per CPU); `client`, a
    `dask.distributed.Client`, runs on its cluster instead. Every grid point is
    validated before anything runs. Run metadata is in `df.attrs["xlayer"]`.

    With `store` (a folder, see `xlayer.store`), every run becomes a record there and
    only the runs not yet in the store are computed; `series=True` keeps the time
    series. A run that fails is recorded as failed (message, field path) and the rest
    goes on: the table then has the runs that succeeded, and `df.attrs["xlayer"]
    ["failed"]` lists the others. Without a store an error in any run stops the sweep
    with the same message serially and in parallel; so does KeyboardInterrupt, and no
    worker process outlives the sweep.
    """
    plan = _as_plan(scenario, grid, seeds, runs, series)
    pts = plan.points()
    jobs = [(p.params, p.seed, p.run) for p in pts]
    folder = base_dir(plan.scenario)
    docs = _resolve_points(resolve(plan.scenario, plan.overrides), jobs, folder)
    workers = workers or os.cpu_count() or 1
    show = _progress.enabled(progress)
    axes = plan.axes()
    if store is not None or client is not None:
        return _sweep_into_store(plan, jobs, docs, folder, axes, store, executor_for(workers, client), show)

    args = [(docs[i], seed, r, _where(params), folder) for i, (params, seed, r) in enumerate(jobs)]
    with _maybe_bar(show, len(jobs)) as advance:
        if workers > 1 and len(jobs) > 1:
            results = run_jobs(_job, args, workers, advance)
        else:
            results = []
            for a in args:
                results.append(_job(*a))
                advance()
    return _assemble(jobs, results, axes)


def _as_plan(scenario: ScenarioLike | Plan, grid: Mapping[str, Sequence[Any]] | None,
             seeds: Iterable[int] | None, runs: Iterable[int] | int | None, series: bool) -> Plan:
    if isinstance(scenario, Plan):
        given = [n for n, v in (("grid", grid), ("seeds", seeds), ("runs", runs)) if v is not None]
        if given or series:
            raise TypeError(f"a Plan carries its own grid, seeds, runs and series; do not pass "
                            f"{', '.join(given) or 'series'} with it")
        return scenario
    run_list = [0] if runs is None else list(range(runs)) if isinstance(runs, int) else list(runs)
    seed_list = [1] if seeds is None else list(seeds)
    for s in seed_list:
        check_index("seed", s)
    for r in run_list:
        check_index("run", r)
    for path, values in dict(grid or {}).items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise TypeError(f"grid[{path!r}] must be a list of values, not {values!r}")
    doc = load(scenario)
    return Plan(scenario, grid=dict(grid or {}), seeds=seed_list, runs=run_list, series=series,
                name=str(doc.get("name") or "sweep"))


def _sweep_into_store(plan: Plan, jobs: list[tuple[dict[str, Any], int, int]], docs: list[dict[str, Any]],
                      folder: str | None, axes: list[str], store: str | os.PathLike[str] | Store | None,
                      executor: Any, show: bool) -> pd.DataFrame:
    with tempfile.TemporaryDirectory(prefix="xlayer-sweep-") as scratch:
        st = store if isinstance(store, Store) else Store(store if store is not None else Path(scratch, "store"))
        st.gc()  # staging folders a killed sweep left
        work = [Job(record_key(doc, seed, r), doc, seed, r, params, folder, plan.series)
                for doc, (params, seed, r) in zip(docs, jobs)]
        st.save_plan(plan.name or "sweep", plan.describe(),
                     [{"params": j.params, "seed": j.seed, "run": j.run, "key": j.record} for j in work])
        outcome = execute(st, work, executor, progress=show, label=plan.name or "sweep")
        failed = set(outcome.failed)
        if store is None and failed:  # no store to keep them: fail as without one
            first = next(j for j in work if j.record in failed)
            err = st.manifest(first.record)["error"]
            raise ScenarioError(f"grid point {_where(first.params)}: {err['message']}" if first.params
                                else err["message"], path=err.get("path"))
        ok = [(j, i) for i, j in enumerate(work) if j.record not in failed]
        df = _assemble_stored(st, [jobs[i] for _, i in ok], [j.record for j, _ in ok], axes)
        df.attrs["xlayer"].update({
            "store": str(st.root) if store is not None else None, "plan": plan.name,
            "computed": outcome.computed, "cached": outcome.cached,
            "failed": [{"params": j.params, "seed": j.seed, "run": j.run, "record": j.record,
                        **st.manifest(j.record)["error"]} for j in work if j.record in failed],
        })
        return df


def _assemble_stored(st: Store, jobs: list[tuple[dict[str, Any], int, int]], records: list[str],
                     axes: list[str]) -> pd.DataFrame:
    """`_assemble` of stored records: when every record's flow table has the same schema
    (the usual case), the tables are joined in Arrow and converted to pandas once."""
    import pyarrow as pa

    tables = {r: st.arrow(r) for r in dict.fromkeys(records)}
    metas = {r: st.manifest(r) for r in tables}
    first = next(iter(tables.values()), None)
    if first is None or any(not t.schema.equals(first.schema) for t in tables.values()):
        results = [(st.table(r), str(metas[r]["fingerprint"]), metas[r]) for r in records]
        return _assemble(jobs, results, axes)
    flows = pa.concat_tables([tables[r] for r in records]).to_pandas()
    counts = [tables[r].num_rows for r in records]
    heads = [{**params, "seed": seed, "run": r, "fingerprint": metas[rec]["fingerprint"]}
             for (params, seed, r), rec in zip(jobs, records)]
    for pos, col in enumerate(heads[0]):
        if col in flows.columns:  # a grid path named like a flow column: keep both
            flows = flows.rename(columns={col: f"flow.{col}"})
        flows.insert(pos, col, [h[col] for h, n in zip(heads, counts) for _ in range(n)])
    return _with_attrs(flows, heads, [metas[r] for r in records], axes)


def validate_grid(scenario: ScenarioLike, grid: Mapping[str, Sequence[Any]] | None) -> None:
    """Raise ScenarioError if any grid point is invalid; runs nothing."""
    pts = Plan(scenario, grid=dict(grid or {}), seeds=[0], runs=[0]).points()
    _resolve_points(load(scenario), [(p.params, p.seed, p.run) for p in pts], base_dir(scenario))


def _resolve_points(
    base: dict[str, Any], jobs: list[tuple[dict[str, Any], int, int]], folder: str | None
) -> list[dict[str, Any]]:
    """Scenario dict of every job; each distinct grid point validated once, in Rust."""
    cache: dict[str, dict[str, Any]] = {}
    docs = []
    for params, _, _ in jobs:
        key = canonical_json({"p": [[k, canonical(v, k)] for k, v in params.items()]})
        if key not in cache:
            doc = apply_overrides(canonical(base), params)
            try:
                with native_errors():
                    _core.validate(canonical_json(doc), folder)
            except ScenarioError as e:
                where = _where(params)
                raise (e.with_context(f"grid point {where}") if where else e) from None
            cache[key] = doc
        docs.append(cache[key])
    return docs


def _where(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _job(
    doc: dict[str, Any], seed: int, run: int, where: str = "", folder: str | None = None
) -> tuple[pd.DataFrame, str, dict[str, Any]]:
    """One run, in this process or a worker (top level, so spawn can import it). A
    scenario error names the grid point, exactly as in `_resolve_points`."""
    try:
        res = _run(doc, seed, run, progress=False, base_dir=folder)
    except ScenarioError as e:
        raise (e.with_context(f"grid point {where}") if where else e) from None
    return res.flows, res.fingerprint, res.metadata


def _assemble(
    jobs: list[tuple[dict[str, Any], int, int]], results: list[Any], axes: list[str]
) -> pd.DataFrame:
    frames, heads = [], []
    for (params, seed, r), (flows, fp, md) in zip(jobs, results):
        head = {**params, "seed": seed, "run": r, "fingerprint": fp}
        f = flows.copy()
        for pos, (col, val) in enumerate(head.items()):
            if col in f.columns:  # a grid path named like a flow column: keep both
                f = f.rename(columns={col: f"flow.{col}"})
            f.insert(pos, col, [val] * len(f))
        frames.append(f)
        heads.append(head)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return _with_attrs(df, heads, [md for _, _, md in results], axes)


def _with_attrs(df: pd.DataFrame, heads: list[dict[str, Any]], metas: list[dict[str, Any]],
                axes: list[str]) -> pd.DataFrame:
    runs = [{**h, **{k: md.get(k) for k in ("scenario_hash", "events", "wall_time_s")}}
            for h, md in zip(heads, metas)]
    df.attrs["xlayer"] = {"version": version(), "commit": commit(), "params": axes, "runs": runs}
    return df


class _NoBar:
    def __enter__(self) -> Any:
        return lambda: None

    def __exit__(self, *exc: object) -> None:
        return None


def _maybe_bar(show: bool, total: int) -> Any:
    return _progress.count_bar(total, "sweep") if show else _NoBar()

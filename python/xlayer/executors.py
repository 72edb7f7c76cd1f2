"""Running a sweep's missing runs into a store, on this process, a local process pool or
a Dask cluster, with the same records (and fingerprints) on each.

Runs travel in batches: a batch is sized so that it takes about BATCH_S of work, from
the run times seen so far (one run per batch until the first come back), so short runs
pay a worker's start-up and a task's overhead once per batch, and long runs still
spread over the workers. A scenario error is deterministic and recorded as a failed
record at once; any other error is retried once in the worker, and a batch whose
worker died (or whose Dask task failed) is run again one run per task; what fails
again is recorded as failed with its error. Records are encoded in the worker and
written by this process, so a cluster needs no shared filesystem.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from . import progress as _progress
from .native import simulate
from .pool import stream
from .scenario import ScenarioError
from .store import Store, encode

BATCH_S = 0.5  # wall time of one batch, once run times are known
MAX_BATCH = 256


@dataclass(frozen=True)
class Job:
    """One run to compute: the resolved scenario and where its record goes."""

    record: str
    doc: dict[str, Any]
    seed: int
    run: int
    params: dict[str, Any]
    folder: str | None = None
    series: bool = False


@dataclass
class Batch:
    jobs: list[Job]
    retry: bool = False

    def __str__(self) -> str:  # named in a dead worker's message
        return f"of {len(self.jobs)} run(s) from seed {self.jobs[0].seed} run {self.jobs[0].run}"


def run_batch(jobs: list[Job]) -> list[tuple[str, str, Any, float]]:
    """Run jobs in a worker: `(status, record, files or error, wall seconds)` for each."""
    out = []
    for j in jobs:
        t0 = time.perf_counter()
        for attempt in (1, 2):
            try:
                raw = simulate(j.doc, j.seed, j.run, j.folder)
                out.append(("ok", j.record, encode(raw, j.doc, j.seed, j.run, j.record, j.params, j.series),
                            time.perf_counter() - t0))
                break
            except ScenarioError as e:
                out.append(("failed", j.record, _error(e, attempt), time.perf_counter() - t0))
                break
            except Exception as e:
                if attempt == 2:
                    out.append(("failed", j.record, _error(e, attempt), time.perf_counter() - t0))
    return out


def _error(e: BaseException, attempts: int) -> dict[str, Any]:
    return {"type": type(e).__name__, "message": " ".join(str(e).split()),
            "path": getattr(e, "path", None), "attempts": attempts}


class Executor(Protocol):
    """Runs `fn(batch.jobs)` for each batch `next_batch()` gives, until it gives None."""

    workers: int

    def run(self, fn: Callable[[list[Job]], Any], next_batch: Callable[[], Batch | None],
            done: Callable[[Batch, Any], None], failed: Callable[[Batch, BaseException], None]) -> None: ...


class Serial:
    workers = 1

    def run(self, fn: Callable[[list[Job]], Any], next_batch: Callable[[], Batch | None],
            done: Callable[[Batch, Any], None], failed: Callable[[Batch, BaseException], None]) -> None:
        while (b := next_batch()) is not None:
            try:
                result = fn(b.jobs)
            except Exception as e:
                failed(b, e)
                continue
            done(b, result)


class LocalPool:
    """Spawned worker processes (xlayer.pool): stopped at once on Ctrl-C or an error."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, fn: Callable[[list[Job]], Any], next_batch: Callable[[], Batch | None],
            done: Callable[[Batch, Any], None], failed: Callable[[Batch, BaseException], None]) -> None:
        def job() -> tuple[Batch, tuple[Any, ...]] | None:
            b = next_batch()
            return None if b is None else (b, (b.jobs,))

        stream(fn, job, self.workers, done, failed)


class Dask:
    """A `dask.distributed.Client`'s cluster: a few batches queued per worker thread; on
    Ctrl-C or an error the batches not yet finished are cancelled."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.workers = max(1, sum(client.nthreads().values()))

    @classmethod
    def connect(cls, address: str) -> Dask:
        try:
            from distributed import Client
        except ImportError:
            raise ImportError('the Dask executor needs dask.distributed: pip install "xlayer[dask]"') from None
        try:
            return cls(Client(address, timeout="20s"))
        except (OSError, TimeoutError, ValueError) as e:  # refused, timed out, malformed
            raise OSError(f"cannot reach the Dask scheduler at {address}: {e}") from None

    def run(self, fn: Callable[[list[Job]], Any], next_batch: Callable[[], Batch | None],
            done: Callable[[Batch, Any], None], failed: Callable[[Batch, BaseException], None]) -> None:
        from distributed import as_completed

        pending: dict[Any, Batch] = {}
        flow = as_completed()

        def submit() -> bool:
            b = next_batch()
            if b is None:
                return False
            fut = self.client.submit(fn, b.jobs, pure=False)
            pending[fut] = b
            flow.add(fut)
            return True

        try:
            while len(pending) < 2 * self.workers and submit():
                pass
            for fut in flow:
                b = pending.pop(fut)
                try:
                    result = fut.result()
                except Exception as e:
                    failed(b, e)
                else:
                    done(b, result)
                while len(pending) < 2 * self.workers and submit():
                    pass
        finally:
            if pending:
                self.client.cancel(list(pending))


def executor_for(workers: int | None, client: Any = None) -> Executor:
    if client is not None:
        return Dask(client)
    if workers is not None and workers > 1:
        return LocalPool(workers)
    return Serial()


@dataclass
class Outcome:
    """What a sweep did: runs in the plan, found in the store, computed, failed."""

    total: int
    cached: int
    computed: int = 0
    failed: list[str] = field(default_factory=list)


def execute(store: Store, jobs: list[Job], executor: Executor, *, progress: bool = False,
            label: str = "sweep", fn: Callable[[list[Job]], Any] = run_batch) -> Outcome:
    """Compute every job whose record is not in `store` (a failed record is tried again).
    `fn` runs a batch in a worker (importable by name; `run_batch` unless testing)."""
    todo: dict[str, Job] = {}
    for j in jobs:
        if j.record not in todo and not store.has(j.record, j.series):
            todo[j.record] = j
    out = Outcome(total=len({j.record for j in jobs}), cached=0)
    out.cached = out.total - len(todo)
    queue, retries = deque(todo.values()), deque[Job]()
    seen = {"runs": 0, "wall": 0.0}

    def size() -> int:
        if not seen["runs"]:
            return 1
        per_run = max(seen["wall"] / seen["runs"], 1e-6)
        spread = math.ceil(len(queue) / (2 * executor.workers))
        return max(1, min(MAX_BATCH, round(BATCH_S / per_run), spread))

    def next_batch() -> Batch | None:
        if retries:
            return Batch([retries.popleft()], retry=True)
        if not queue:
            return None
        return Batch([queue.popleft() for _ in range(min(size(), len(queue)))])

    with _progress.run_counter(len(todo), label, progress, cached=out.cached) as count:
        def done(b: Batch, results: list[tuple[str, str, Any, float]]) -> None:
            for (status, record, payload, wall), job in zip(results, b.jobs):
                seen["runs"] += 1
                seen["wall"] += wall
                if status == "ok":
                    store.commit(record, payload)
                    out.computed += 1
                else:
                    _record_failure(store, job, payload)
                    out.failed.append(record)
                count(failed=status != "ok")

        def failed(b: Batch, e: BaseException) -> None:
            if not b.retry:
                retries.extend(b.jobs)  # once more, one run per task
                return
            for job in b.jobs:
                _record_failure(store, job, _error(e, 2))
                out.failed.append(job.record)
                count(failed=True)

        executor.run(fn, next_batch, done, failed)
    return out


def _record_failure(store: Store, job: Job, error: dict[str, Any]) -> None:
    store.fail(job.record, {"seed": job.seed, "run": job.run, "params": job.params,
                            "scenario_name": job.doc.get("name", ""), "error": error})

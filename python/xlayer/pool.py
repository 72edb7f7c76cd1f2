"""A small process pool for sweeps, built to be interrupted.

- Jobs stay in the parent until a worker is idle, so stopping starts no queued job.
- Workers ignore SIGINT from their first instruction on (a terminal's Ctrl-C reaches the
  whole process group; the parent decides), and are terminated, then killed, whenever the parent stops early: an error,
  KeyboardInterrupt, or any exception a SIGTERM handler raises.
- Workers watch their parent and exit within a fraction of a second when it is gone
  (killed with SIGKILL, say), so nothing is left running.
- An exception crosses back as itself when it pickles (xlayer's ScenarioError does, with
  its message and field path), else as a WorkerError with the same one-line text.
- A worker that dies (a crash, the OOM killer) fails the pool with WorkerError instead of
  leaving it waiting forever; or, when the caller handles failures (`stream(failed=...)`),
  is reported to it and replaced.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import threading
import time
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Iterator, Sequence

from . import _core
from .outdir import deferred_signals
from .scenario import ScenarioError

PARENT_POLL_S = 0.1


class WorkerError(RuntimeError):
    """A worker failed in a way that cannot cross the process boundary as it was: an
    exception that does not pickle (message `<Type>: <text>`), or the worker died."""


def portable(e: BaseException) -> BaseException:
    """`e` if it survives pickling, else an equivalent that does."""
    if isinstance(e, _core.ScenarioError) and not isinstance(e, ScenarioError):
        return ScenarioError.from_native(e)
    try:
        pickle.loads(pickle.dumps(e))
    except Exception:
        return WorkerError(f"{type(e).__name__}: {e}")
    return e


def run_jobs(
    fn: Callable[..., Any],
    jobs: Sequence[tuple[Any, ...]],
    workers: int,
    done: Callable[[], None] = lambda: None,
) -> list[Any]:
    """`[fn(*args) for args in jobs]` on `workers` spawned processes, in job order.

    `fn` must be importable by name (a module-level function). `done()` is called in this
    process after each job. The first failure is raised after the workers are stopped.
    """
    results: list[Any] = [None] * len(jobs)
    order = iter(range(len(jobs)))

    def next_job() -> tuple[int, tuple[Any, ...]] | None:
        i = next(order, None)
        return None if i is None else (i, jobs[i])

    def finished(i: int, result: Any) -> None:
        results[i] = result
        done()

    stream(fn, next_job, workers, finished)
    return results


def stream(
    fn: Callable[..., Any],
    next_job: Callable[[], tuple[Any, tuple[Any, ...]] | None],
    workers: int,
    done: Callable[[Any, Any], None],
    failed: Callable[[Any, BaseException], None] | None = None,
) -> None:
    """Run jobs on up to `workers` spawned processes until `next_job()` returns None.

    `next_job()` gives `(token, args)`; it is called only when a worker is idle, so a job
    is made (and can be sized) at the last moment. `done(token, fn(*args))` is called in
    this process as each job finishes. A job that raises, or whose worker dies, stops
    the pool with that error; with `failed`, `failed(token, error)` is called instead, a
    dead worker is replaced, and the pool goes on.
    """
    ctx = multiprocessing.get_context("spawn")
    procs: list[tuple[BaseProcess, Connection]] = []
    busy: dict[Connection, tuple[BaseProcess, Any]] = {}
    finished = False

    def give(proc: BaseProcess, conn: Connection, job: tuple[Any, tuple[Any, ...]] | None) -> None:
        if job is None:
            return
        token, args = job
        try:
            conn.send((id(token), args))
        except OSError:
            raise _died(proc, token) from None
        busy[conn] = (proc, token)

    def start() -> tuple[BaseProcess, Connection]:
        here, there = ctx.Pipe()
        new = ctx.Process(target=_worker, args=(there, os.getpid(), fn), daemon=True,
                          name="xlayer-sweep-worker")
        with _signals_blocked():  # the worker inherits the mask: no Ctrl-C while it imports
            new.start()
            procs.append((new, here))
        there.close()
        return new, here

    def fail(proc: BaseProcess, conn: Connection, token: Any, e: BaseException) -> None:
        if failed is None:
            raise e
        failed(token, e)
        if not proc.is_alive():  # replace it if there is more to do
            conn.close()
            job = next_job()
            if job is not None:
                give(*start(), job)
        else:
            give(proc, conn, next_job())

    if os.name == "posix":
        # Start multiprocessing's helper now: starting it unblocks SIGINT and SIGTERM in
        # this thread, which would undo _signals_blocked around the first worker.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    try:
        while len(procs) < max(1, workers):
            job = next_job()
            if job is None:
                break
            give(*start(), job)
        while busy:
            ready = wait([*busy, *(p.sentinel for p, _ in busy.values())])
            for conn in [r for r in ready if isinstance(r, Connection)]:
                proc, token = busy.pop(conn)
                try:
                    _, ok, payload = conn.recv()
                except (EOFError, OSError):
                    fail(proc, conn, token, _died(proc, token))
                    continue
                if not ok:
                    fail(proc, conn, token, payload)
                    continue
                done(token, payload)
                give(proc, conn, next_job())
            for conn, (proc, token) in list(busy.items()):
                if proc.sentinel in ready and not conn.poll():
                    del busy[conn]
                    fail(proc, conn, token, _died(proc, token))
        finished = True
    finally:
        with deferred_signals():
            _stop(procs, graceful=finished)


_BLOCKED = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Block SIGINT and SIGTERM in this thread for the block, as the standard library's
    resource tracker does when it spawns: one that arrives meanwhile is delivered
    afterwards (not lost), once the new worker is in the list of those to stop."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _died(proc: BaseProcess, job: Any) -> WorkerError:
    proc.join(0.5)
    code = proc.exitcode
    how = (f"was killed by signal {-code}" if code is not None and code < 0
           else f"exited with code {code}" if code is not None else "stopped answering")
    return WorkerError(f"a sweep worker (pid {proc.pid}) {how} while running job {job}")


def _stop(procs: list[tuple[BaseProcess, Connection]], graceful: bool) -> None:
    """Ask idle workers to exit (graceful), or terminate them; kill what remains."""
    for proc, conn in procs:
        if graceful:
            try:
                conn.send(None)
            except OSError:
                pass
        elif proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + (2.0 if graceful else 1.0)
    for proc, conn in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join(1.0)
        conn.close()  # closing twice is harmless


def _worker(conn: Connection, parent: int, fn: Callable[..., Any]) -> None:
    """A worker's main loop: `(index, args)` in, `(index, ok, result or exception)` out,
    None to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # blocked by the parent while it spawned us
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _BLOCKED)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True,
                     name="xlayer-parent-watch").start()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        i, args = msg
        try:
            reply: tuple[int, bool, Any] = (i, True, fn(*args))
        except Exception as e:
            reply = (i, False, portable(e))
        try:
            conn.send(reply)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            conn.send((i, False, WorkerError(f"cannot send the result back: {e}")))


def _watch_parent(parent: int) -> None:
    """Exit as soon as the parent is gone (this process is then re-parented)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)

"""Output folders (`--out`, `RunResult.to_dir`): complete or absent, and never at the cost
of anything that is not xlayer's.

Results are written into a fresh staging folder next to the target,
`.<name>.tmp-<pid>-<random>`, and moved into place only when complete:

- a target that does not exist, or is an empty folder, is replaced by one rename;
- a previous xlayer output (its manifest.json carries the `xlayer_output` marker) that
  holds nothing but its own files is renamed aside (`.<name>.old-<pid>-<random>`), the
  new folder is renamed into place and the old one deleted: at every moment the target is
  the previous complete output, absent, or the new complete output;
- a previous xlayer output that also holds other files, or (only with `overwrite`) a
  non-empty folder that is not an xlayer output, keeps everything that is not xlayer's:
  the old manifest is removed first, xlayer's files are replaced one by one (each by a
  rename), and the new manifest is written last; a folder without a manifest is unfinished.

Refused outright: an empty path, the working folder or any of its parents, the home
folder or any of its parents, the root, and anything that exists and is not a folder.
Staging folders left by a process that died (SIGKILL, power loss) are removed by the next
write next to them; an `.old-` folder whose target is missing is put back in its place.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

MARKER = "xlayer_output"
FORMAT = 1
MANIFEST = "manifest.json"

_STAGE = re.compile(r"^\.(?P<stem>.*)\.(?P<kind>tmp|old)-(?P<pid>\d+)-[A-Za-z0-9_]+$")


class OutputError(OSError):
    """The output folder cannot be used: refused, or it cannot be created or replaced.
    `str(e)` is `<path>: <reason>` on one line."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.reason))


def mark(kind: str) -> dict[str, Any]:
    """The manifest entry (under MARKER) that makes a folder recognisable as xlayer's."""
    return {"format": FORMAT, "kind": kind}


def own_files(folder: Path) -> set[str] | None:
    """xlayer's own files in `folder` (relative POSIX paths: manifest.json and those its
    "files" lists) if it is an xlayer output, else None. Recognised: a manifest.json with
    the MARKER entry, or one written before the marker existed (it has "version", "rng"
    and a "files" list that names manifest.json)."""
    try:
        m = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict):
        return None
    files = m.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    marked = isinstance(m.get(MARKER), dict)
    legacy = MANIFEST in files and isinstance(m.get("rng"), str) and "version" in m
    if not (marked or legacy):
        return None
    own = {MANIFEST}
    for f in files:
        p = PurePosixPath(f)
        if f and not p.is_absolute() and all(part not in ("", ".", "..") for part in p.parts):
            own.add(p.as_posix())
    return own


def target_path(out: str | os.PathLike[str]) -> Path:
    """The absolute, symlink-free target of `out`; OutputError for the folders that are
    never an output folder."""
    shown = os.fspath(out)
    if shown.strip() == "":
        raise OutputError(repr(shown), "an empty path would mean the working folder; "
                                       "name a new folder, e.g. out/run1")
    target = Path(os.path.realpath(os.path.abspath(shown)))
    cwd = Path.cwd().resolve()
    forbidden = [(Path(target.anchor), "the root folder"), (cwd, f"the working folder ({cwd})")]
    forbidden += [(p, f"a parent of the working folder ({cwd})") for p in cwd.parents]
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):  # no home directory known
        home = None
    if home is not None:
        forbidden.append((home, f"your home folder ({home})"))
        forbidden += [(p, f"a parent of your home folder ({home})") for p in home.parents]
    for path, what in forbidden:
        if target == path:
            raise OutputError(shown, f"refusing to use {what} as the output folder; "
                                     "name a new folder, e.g. out/run1")
    return target


@contextmanager
def atomic_dir(out: str | os.PathLike[str], *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a staging folder; when the block succeeds its content becomes `out` as the
    module docstring describes, when it fails (or is interrupted) nothing changes.

    Raises OutputError before yielding when `out` is refused, is a non-empty folder that
    is not an xlayer output (unless `overwrite`), or cannot be created.
    """
    shown = os.fspath(out)
    target = target_path(out)
    _plan(target, overwrite, shown)  # refuse before any work is done
    created = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
    stage: Path | None = None
    try:
        with deferred_signals():  # a staging folder exists only inside the try
            stage = _make_stage(target, shown)
        yield stage
        with deferred_signals():
            _commit(stage, target, overwrite, shown)
    except BaseException:
        with deferred_signals():
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
            _remove_empty(created)
        raise


def _make_stage(target: Path, shown: str) -> Path:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_stale(target)
        stage = Path(tempfile.mkdtemp(prefix=f".{_stem(target)}.tmp-{os.getpid()}-",
                                      dir=target.parent))
    except OSError as e:
        raise OutputError(shown, f"cannot create the folder: {_reason(e)}") from None
    umask = os.umask(0)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)  # mkdtemp makes it private; the result should not be
    return stage


def clean_stale(target: Path) -> None:
    """Remove the staging folders of `target` whose owning process is gone; put a
    previous output that was renamed aside back if the target is missing."""
    stem = _stem(target)
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for e in entries:
        m = _STAGE.match(e.name)
        if not m or m["stem"] != stem or not e.is_dir(follow_symlinks=False):
            continue
        pid = int(m["pid"])
        if pid == os.getpid() or process_alive(pid):
            continue
        path = Path(e.path)
        try:
            if m["kind"] == "old" and not os.path.lexists(target) and own_files(path):
                os.rename(path, target)  # died between its two renames: undo the first
            else:
                shutil.rmtree(path)
        except OSError:
            pass  # best effort: another process may be cleaning too


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the block (main thread only), so renames and clean-ups
    finish; the signal is then re-raised and handled as usual."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    saved: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old = signal.getsignal(sig)
            if old is None:  # a handler installed outside Python: leave it alone
                continue
            saved[sig] = old
            signal.signal(sig, lambda s, _frame: pending.append(s))
        yield
    finally:
        for saved_sig, handler in saved.items():
            signal.signal(saved_sig, handler)
        for num in dict.fromkeys(pending):
            signal.raise_signal(num)


# --- internals --------------------------------------------------------------------------


def _plan(target: Path, overwrite: bool, shown: str) -> tuple[str, set[str]]:
    """How the staging folder will become `target`: "new" (absent), "empty", "swap" (a
    previous output with only its own files) or "merge"; and xlayer's old files there."""
    if not os.path.lexists(target):
        return "new", set()
    if not target.is_dir():
        raise OutputError(shown, "exists and is not a folder")
    try:
        empty = not os.listdir(target)
    except OSError as e:
        raise OutputError(shown, f"cannot read the folder: {_reason(e)}") from None
    if empty:
        return "empty", set()
    own = own_files(target)
    if own is not None:
        return ("swap" if _only(target, own) else "merge"), own
    if overwrite:
        return "merge", set()
    raise OutputError(shown, "the folder is not empty and is not an xlayer output (no xlayer "
                             "manifest.json); name a new folder, or overwrite (--overwrite) to "
                             "replace only xlayer's result files in it")


def _commit(stage: Path, target: Path, overwrite: bool, shown: str) -> None:
    mode, old = _plan(target, overwrite, shown)  # again: the folder may have changed
    try:
        if mode == "new":
            os.rename(stage, target)
        elif mode == "empty":
            try:
                os.rename(stage, target)  # POSIX: a folder replaces an empty folder
            except OSError:
                os.rmdir(target)
                os.rename(stage, target)
        elif mode == "swap":
            _swap(stage, target)
        else:
            _merge(stage, target, old, shown)
    except OutputError:
        raise
    except OSError as e:
        raise OutputError(shown, f"cannot move the results into place: {_reason(e)}") from None


def _swap(stage: Path, target: Path) -> None:
    aside = Path(tempfile.mkdtemp(prefix=f".{_stem(target)}.old-{os.getpid()}-",
                                  dir=target.parent))
    os.rename(target, aside)  # replaces the empty folder mkdtemp made
    try:
        os.rename(stage, target)
    except BaseException:
        os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _merge(stage: Path, target: Path, old: set[str], shown: str) -> None:
    """Replace xlayer's files in `target` one by one, keeping everything else."""
    new = _files(stage)
    for rel in sorted(new):
        parts = PurePosixPath(rel).parts
        for i in range(1, len(parts)):
            d = target.joinpath(*parts[:i])
            if os.path.lexists(d) and not d.is_dir():
                raise OutputError(shown, f"{'/'.join(parts[:i])} exists and is not a folder")
        dst = target / rel
        if dst.is_dir() and not dst.is_symlink():
            raise OutputError(shown, f"{rel} is a folder; it cannot be replaced by a file")
    manifest = target / MANIFEST
    if os.path.lexists(manifest):
        os.unlink(manifest)  # from here until the new manifest the folder is unfinished
    for rel in sorted(new - {MANIFEST}):
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage / rel, dst)
    for rel in sorted(old - new, key=lambda r: -len(PurePosixPath(r).parts)):
        path = target / rel
        if os.path.lexists(path) and (path.is_symlink() or not path.is_dir()):
            os.unlink(path)
    for rel in old - new:  # folders of old files (pcap/) that are now empty
        for parent in PurePosixPath(rel).parents:
            if parent.parts:
                try:
                    (target / parent).rmdir()
                except OSError:
                    pass
    if MANIFEST in new:
        os.replace(stage / MANIFEST, manifest)
    shutil.rmtree(stage, ignore_errors=True)


def _only(target: Path, own: set[str]) -> bool:
    """Whether `target` holds nothing but `own` files (and their folders)."""
    dirs = {p.as_posix() for f in own for p in PurePosixPath(f).parents if p.parts}
    for root, subdirs, names in os.walk(target):
        rel_root = Path(root).relative_to(target)
        for d in subdirs:
            rel = (rel_root / d).as_posix()
            if rel not in dirs or (Path(root) / d).is_symlink():
                return False
        for n in names:
            if (rel_root / n).as_posix() not in own:
                return False
    return True


def _files(folder: Path) -> set[str]:
    out: set[str] = set()
    for root, _, names in os.walk(folder):
        rel_root = Path(root).relative_to(folder)
        out.update((rel_root / n).as_posix() for n in names)
    return out


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs on this machine (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists (e.g. another user's)
    try:  # a zombie has finished; only its exit status is left
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _stem(target: Path) -> str:
    return target.name[:100]  # room for ".tmp-<pid>-<random>" within NAME_MAX


def _reason(e: OSError) -> str:
    text = e.strerror or str(e)
    if e.filename:
        text += f": {e.filename}"
    return " ".join(text.split())


def _remove_empty(created: list[Path]) -> None:
    for p in created:  # innermost first
        try:
            p.rmdir()
        except OSError:
            break

"""The `xlayer` command: run, validate, schema, outputs, plot, sweep, store, reproduce, scenarios.

Exit codes: 0 success, 1 a reproduction's check failed, 2 bad input (scenario error, missing file, bad option,
an --out folder that is refused or cannot be written) with a one-line message on stderr and no output directory,
130 interrupted (Ctrl-C), 141 stdout closed early (`xlayer schema | head`), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

from rich.console import Console
from rich.table import Table

from . import _core, cli_scenarios, cli_store, native, outputs_doc, papers, progress, schema_doc
from .extras import MissingExtraError, require
from .outdir import MARKER, OutputError, atomic_dir, mark
from .scenario import (OverrideError, ScenarioError, base_dir, find, parse_value, resolved_json, schema,
                       validate)

if TYPE_CHECKING:
    import pandas as pd

# pandas, the sweep machinery and `xlayer.api` are imported where a command needs them:
# `xlayer run` writes its files straight from the native columns (xlayer.native), and
# importing pandas would cost it more than a short simulation.

MAX_INDEX = 2**64 - 1  # seeds and run indices are unsigned 64-bit integers
MAX_RUNS = 1_000_000  # values one --seeds or --runs option may expand to


class UsageError(Exception):
    """A malformed command-line value (exit code 2)."""


class Terminated(BaseException):
    """Raised by the SIGTERM handler of `main`, so clean-ups run as for Ctrl-C."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = list(sys.argv) if argv is None else ["xlayer", *argv]
    try:
        with _sigterm_raises():
            if getattr(args, "file", None) is not None and not Path(args.file).exists():
                args.file = str(find(args.file))  # `xlayer run dumbbell`: a shipped scenario
            code = int(args.func(args, command))
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            return code
    except OutputError as e:
        return _fail(f"--out {e}")
    except (ScenarioError, UsageError, MissingExtraError, FileNotFoundError, FileExistsError) as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        _note("xlayer: interrupted")
        return 130
    except Terminated:
        _note("xlayer: terminated")
        return 143
    except BrokenPipeError:  # the reader went away (`xlayer schema | head -1`): stop quietly
        _discard_stdout()
        return 141
    except OSError as e:  # writing results failed (disk full, ...): a message, not a traceback
        if (stopped := _interrupted(e)) is not None:
            return stopped
        return _fail(" ".join(str(e).split()))
    except Exception as e:
        # Third-party code can fail while a Ctrl-C unwinds it (an import cut short, then
        # an `except` naming what it did not import): still an interruption.
        if (stopped := _interrupted(e)) is not None:
            return stopped
        raise


def _interrupted(e: BaseException) -> int | None:
    """130 or 143 if `e` was raised while a Ctrl-C or SIGTERM was being handled."""
    seen: set[int] = set()
    cause: BaseException | None = e
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, (KeyboardInterrupt, Terminated)):
            _note("xlayer: interrupted" if isinstance(cause, KeyboardInterrupt)
                  else "xlayer: terminated")
            return 130 if isinstance(cause, KeyboardInterrupt) else 143
        cause = cause.__context__
    return None


def _fail(msg: str) -> int:
    _note(f"xlayer: error: {msg}")
    return 2


def _note(msg: str) -> None:
    try:
        print(msg, file=sys.stderr)
    except OSError:
        pass


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises Terminated (exit 143) instead of killing the process at once, so the
    staging folder is removed and sweep workers are stopped, as for Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


_OVERWRITE_HELP = ("allow an --out folder that is not empty and not an xlayer output: only "
                   "xlayer's result files in it are replaced, nothing else is deleted")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="xlayer", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"xlayer {_core.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("file", metavar="FILE", help="scenario file (.toml or .json), or the "
                                                    "name of a shipped one (`xlayer scenarios list`)")
        sp.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="override a scenario value, e.g. link.bottleneck.rate=20Mbps, "
                             "flow.f0.tcp.delayed_ack=true, flow.0.app.rate=64kbps")

    r = sub.add_parser("run", help="run one scenario and write its results")
    common(r)
    r.add_argument("--seed", type=int, default=1, help="master seed (default 1)")
    r.add_argument("--run", type=int, default=0, help="replication index (default 0)")
    r.add_argument("--out", help="output directory (default out/<scenario stem>); a new or "
                                 "empty folder, or a previous xlayer output (replaced)")
    r.add_argument("--overwrite", action="store_true", help=_OVERWRITE_HELP)
    r.add_argument("--pcap", action="store_true", help="write packet captures into OUT/pcap/")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table")
    r.set_defaults(func=_cmd_run)

    v = sub.add_parser("validate", help="check a scenario without running it")
    common(v)
    v.set_defaults(func=_cmd_validate)

    s = sub.add_parser("schema", help="print the JSON Schema of the scenario format")
    s.add_argument("--markdown", action="store_true", help="print the Markdown reference instead")
    s.set_defaults(func=_cmd_schema)

    pl = sub.add_parser("plot", help="draw a run's figures (PNG and SVG): cwnd, srtt, queue and "
                                     "goodput over time, goodput against p95 delay")
    pl.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of an `xlayer run`")
    pl.add_argument("--out", help="where the figures go (default RUN_DIR/plots); a new or empty "
                                  "folder, or a previous plot folder (replaced)")
    pl.add_argument("--overwrite", action="store_true", help=_OVERWRITE_HELP)
    pl.set_defaults(func=_cmd_plot)

    o = sub.add_parser("outputs", help="print the reference of the output files: every column, "
                                       "series metric and manifest field (docs/outputs.md)")
    o.set_defaults(func=_cmd_outputs)

    rp = sub.add_parser("reproduce", help="reproduce a paper's experiments and check them")
    rp.add_argument("paper", choices=papers.available(), help="which paper")
    rp.add_argument("--quick", action="store_true", help="a reduced version (minutes, for CI)")
    rp.add_argument("--out", type=Path, help="output directory (default out/reproduce-<paper>)")
    rp.add_argument("--workers", "-j", type=int, default=2, help="parallel processes (default 2)")
    rp.set_defaults(func=_cmd_reproduce)

    w = sub.add_parser("sweep", help="run a plan, or a grid of parameters x seeds")
    common(w)
    w.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2,...",
                   help="a sweep axis, e.g. link.bottleneck.rate=10Mbps,20Mbps (repeatable)")
    w.add_argument("--seeds", help="seeds: 1,2,3 or 1-20 (default 1)")
    w.add_argument("--runs", help="run indices: 0,1 or 0-9 (default 0)")
    w.add_argument("--workers", "-j", type=int, default=1,
                   help="parallel processes (0 = one per CPU; default 1)")
    w.add_argument("--out", help="output directory (default out/<stem>-sweep); a new or "
                                 "empty folder, or a previous xlayer output (replaced)")
    w.add_argument("--overwrite", action="store_true", help=_OVERWRITE_HELP)
    w.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table")
    cli_store.add_sweep_options(w)
    w.set_defaults(func=_cmd_sweep)
    cli_store.add_commands(sub)
    cli_scenarios.add_commands(sub)
    return p


# --- option parsing ---------------------------------------------------------------------


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """`PATH=VALUE` strings to an overrides dict; values parsed as TOML literals."""
    out: dict[str, Any] = {}
    for item in items:
        path, sep, value = item.partition("=")
        if not sep or not path.strip() or not value.strip():
            raise UsageError(f"bad --set `{item}`: expected PATH=VALUE, "
                             "e.g. --set link.bottleneck.rate=20Mbps")
        out[path.strip()] = parse_value(value.strip())
    return out


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """`PATH=V1,V2` strings to a sweep grid."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        path, sep, values = item.partition("=")
        vals = [v.strip() for v in values.split(",")]
        if not sep or not path.strip() or not all(vals):
            raise UsageError(f"bad --grid `{item}`: expected PATH=V1,V2,..., "
                             "e.g. --grid link.bottleneck.rate=10Mbps,20Mbps")
        grid[path.strip()] = [parse_value(v) for v in vals]
    return grid


def parse_ints(text: str, what: str) -> list[int]:
    """`1,2,3`, `1-20` or a mix (`1-3,7`) to a list of non-negative integers."""
    spans: list[range] = []
    try:
        for part in text.split(","):
            lo, dash, hi = part.strip().partition("-")
            a, b = int(lo), int(hi) if dash else int(lo)
            if a < 0 or b < a or b > MAX_INDEX:
                raise ValueError
            spans.append(range(a, b + 1))
    except ValueError:
        raise UsageError(f"bad --{what} `{text}`: expected integers in [0, 2^64) like "
                         "1,2,3 or a range like 1-20") from None
    if sum(len(r) for r in spans) > MAX_RUNS:
        raise UsageError(f"bad --{what} `{text}`: more than {MAX_RUNS} values")
    return [i for r in spans for i in r]


# --- commands ---------------------------------------------------------------------------


def _cmd_validate(args: argparse.Namespace, command: list[str]) -> int:
    doc = _validated(args)
    print(f"OK {args.file}: {_describe(doc)}")
    return 0


def _cmd_schema(args: argparse.Namespace, command: list[str]) -> int:
    print(schema_doc.render() if args.markdown else json.dumps(schema(), indent=2), end="\n" * (not args.markdown))
    return 0


def _cmd_plot(args: argparse.Namespace, command: list[str]) -> int:
    from .plot import PlotError, plot_run

    try:
        done = plot_run(args.run_dir, args.out, overwrite=args.overwrite)
    except PlotError as e:
        raise UsageError(str(e)) from None
    print(f"wrote {done.out}/ ({', '.join(done.files)}, manifest.json)")
    for stem, why in done.skipped.items():
        print(f"skipped {stem}: {why}")
    return 0


def _cmd_outputs(args: argparse.Namespace, command: list[str]) -> int:
    print(outputs_doc.render(), end="")
    return 0


def _cmd_reproduce(args: argparse.Namespace, command: list[str]) -> int:
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    require("matplotlib", f"xlayer reproduce {args.paper} (its figures)")
    out = args.out or Path("out") / f"reproduce-{args.paper}"
    failed = papers.reproduce(args.paper, out, quick=args.quick, workers=args.workers)
    print(f"{args.paper}: {failed} check(s) failed; report in {out}/report.md")
    return 0 if failed == 0 else 1


def _cmd_run(args: argparse.Namespace, command: list[str]) -> int:
    for what in ("seed", "run"):
        v = getattr(args, what)
        if not 0 <= v <= MAX_INDEX:
            raise UsageError(f"--{what} must be an integer in [0, 2^64), got {v}")
    doc = _validated(args)  # errors exit here, before any directory exists
    out = Path("out") / Path(args.file).stem if args.out is None else args.out
    show = not args.quiet and progress.enabled(None)
    with atomic_dir(out, overwrite=args.overwrite) as stage:
        pcap = stage / "pcap" if args.pcap else None
        if pcap is not None:
            pcap.mkdir()
        label = f"{doc.get('name') or Path(args.file).stem} seed={args.seed} run={args.run}"
        try:
            raw = native.simulate(doc, args.seed, args.run, base_dir(args.file),
                                  pcap_dir=None if pcap is None else str(pcap), progress=show, label=label)
        except ScenarioError as e:  # found only when building the world
            raise _in_file(e, args.file) from None
        files = list(native.RUN_FILES)
        if pcap is not None:
            files += [f"pcap/{p.name}" for p in sorted(pcap.iterdir())]
        meta = native.metadata(raw, doc, args.seed, args.run)
        fingerprint = str(raw["fingerprint"])
        manifest = native.manifest(meta, fingerprint, native.conservation(raw), doc, **{
            MARKER: mark("run"), "files": files, "command": command, "scenario_file": str(args.file),
            "overrides": parse_sets(args.set)})
        native.write_run(raw, manifest, stage)
    if args.quiet:
        print(f"{fingerprint} {out}")
        return 0
    console = Console(highlight=False)
    console.print(_flow_table(raw.get("flows") or {}, meta))
    eps = (meta["events"] or 0) / max(meta["wall_time_s"] or 0.0, 1e-9)
    console.print(f"fingerprint {fingerprint}  seed {meta['seed']} run {meta['run']}  "
                  f"{meta['events']} events in {meta['wall_time_s'] or 0:.2f} s "
                  f"({eps / 1e6:.2f} M events/s)", soft_wrap=True)
    console.print(f"wrote {out}/ ({', '.join(native.RUN_FILES)}{', pcap/' if args.pcap else ''})",
                  soft_wrap=True)
    return 0


def _cmd_sweep(args: argparse.Namespace, command: list[str]) -> int:
    from . import api
    from .sweeps import sweep, validate_grid

    _notice_if_deterministic(args)
    if cli_store.wants_store(args):
        return cli_store.cmd_sweep(args, command)
    grid = parse_grid(args.grid)
    seeds, runs = parse_ints(args.seeds or "1", "seeds"), parse_ints(args.runs or "0", "runs")
    if args.workers < 0:
        raise UsageError(f"--workers must be zero or more, got {args.workers}")
    doc = _validated(args)
    try:
        validate_grid(doc, grid)
    except ScenarioError as e:
        if isinstance(e, OverrideError):
            raise
        raise e.with_context(str(args.file)) from None
    out = Path("out") / f"{Path(args.file).stem}-sweep" if args.out is None else args.out
    show = not args.quiet and progress.enabled(None)
    with atomic_dir(out, overwrite=args.overwrite) as stage:
        try:
            df = sweep(doc, grid, seeds, runs, workers=args.workers, progress=show)
        except ScenarioError as e:  # found only when building the world
            raise _in_file(e, args.file) from None
        info = df.attrs.get("xlayer", {})
        manifest = {
            MARKER: mark("sweep"), "version": info.get("version"), "commit": info.get("commit"), "command": command,
            "cwd": str(Path.cwd()), "scenario_file": str(args.file),
            "overrides": parse_sets(args.set), "grid": grid, "seeds": seeds, "runs": runs,
            "workers": args.workers, "rng": api.RNG, "python": sys.version.split()[0],
            "platform": platform.platform(), "files": ["sweep.parquet", "sweep.csv", "manifest.json"],
            "n_runs": len(info.get("runs", [])), "run_list": info.get("runs", []), "scenario": doc,
        }
        api.write_parquet(df, stage / "sweep.parquet",
                          {k: v for k, v in manifest.items() if k not in ("scenario", "run_list")})
        df.to_csv(stage / "sweep.csv", index=False)
        api.write_json(manifest, stage / "manifest.json")
    if args.quiet:
        print(f"{manifest['n_runs']} runs -> {out}")
        return 0
    console = Console(highlight=False)
    console.print(_sweep_table(df))
    console.print(f"{manifest['n_runs']} runs; wrote {out}/ (sweep.parquet, sweep.csv, "
                  "manifest.json)", soft_wrap=True)
    return 0


def _notice_if_deterministic(args: argparse.Namespace) -> None:
    """One line on stderr when several seeds were asked for but no run of the sweep draws
    a random number, so every seed gives the same result. A run draws one if its
    scenario does with the --set overrides and any one --grid value applied."""
    try:
        seeds = parse_ints(args.seeds or "1", "seeds")
        if len(seeds) < 2:
            return
        sets = parse_sets(args.set)
        variants = [sets] + [{**sets, path: v} for path, values in parse_grid(args.grid).items()
                             for v in values]
        for overrides in variants:
            doc = validate(args.file, overrides)
            if _core.uses_randomness(resolved_json(doc), base_dir(args.file)):
                return
    except Exception:  # the command itself reports what is wrong with its input
        return
    _note(f"xlayer: note: {args.file} draws no random number (no lossy link, fading radio or "
          f"random start/size/period/arrival), so its {len(seeds)} seeds give identical runs")


def _validated(args: argparse.Namespace) -> dict[str, Any]:
    try:
        return validate(args.file, parse_sets(args.set))
    except OverrideError:
        raise
    except ScenarioError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise _in_file(e, args.file) from None


def _in_file(e: ScenarioError, file: str) -> ScenarioError:
    """`e` with the scenario file's name in front, unless it is there already."""
    return e if str(e).startswith(str(file)) else e.with_context(str(file))


def _describe(doc: dict[str, Any]) -> str:
    n = {k: len(doc.get(k, [])) for k in ("node", "link", "flow")}
    return (f"{doc.get('name') or 'unnamed'}, {n['node']} nodes, {n['link']} links, "
            f"{n['flow']} flows, duration {doc.get('simulation', {}).get('duration')}")


# --- output -----------------------------------------------------------------------------


def _num(row: Mapping[str, Any], col: str, scale: float = 1.0, fmt: str = "{:.0f}") -> str:
    v = row.get(col)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return fmt.format(v * scale)


def _flow_table(flows: Mapping[str, list[Any]], meta: Mapping[str, Any]) -> Table:
    """The run's flows, from the native columns."""
    t = Table(title=f"flows ({meta.get('scenario_name') or 'scenario'})")
    names = [str(n) for n in flows.get("name", flows.get("flow", []))]
    t.add_column("flow", no_wrap=True, min_width=max([4, *map(len, names)]))
    t.add_column("protocol", no_wrap=True)
    for head in ("goodput Mb/s", "rx pkts", "lost", "retx", "timeouts", "delay p95 ms"):
        t.add_column(head, justify="right")
    rows = [dict(zip(flows, values)) for values in zip(*flows.values())]
    for name, row in zip(names, rows):
        t.add_row(
            name, str(row.get("protocol", "")),
            _num(row, "goodput_bps", 1e-6, "{:.3f}"), _num(row, "rx_packets"),
            _num(row, "lost_packets"), _num(row, "retransmissions"), _num(row, "timeouts"),
            _num(row, "delay_p95_s", 1e3, "{:.1f}"),
        )
    return t


def _sweep_table(df: pd.DataFrame) -> Table:
    from .stats import summarize

    metrics = [m for m in ("goodput_bps", "delay_p95_s") if m in df.columns]
    s = summarize(df, metrics=metrics)
    by = [c for c in s.columns if c not in ("metric", "n", "mean", "std", "ci_low", "ci_high",
                                            "ci_half_width")]
    t = Table(title="sweep summary (mean ± 95% CI over seeds x runs)")
    for c in by:
        t.add_column(c, overflow="fold")
    t.add_column("n", justify="right")
    scale = {"goodput_bps": (1e-6, "goodput Mb/s", "{:.3f}"), "delay_p95_s": (1e3, "delay p95 ms", "{:.1f}")}
    for m in metrics:
        t.add_column(scale[m][1], justify="right")
    for key, g in s.groupby(by, sort=False, dropna=False) if by else [((), s)]:
        key = key if isinstance(key, tuple) else (key,)
        cells = []
        for m in metrics:
            r = g[g["metric"] == m].iloc[0]
            k, _, f = scale[m]
            hw = "" if math.isnan(r["ci_half_width"]) else f" ± {f.format(r['ci_half_width'] * k)}"
            cells.append(f.format(r["mean"] * k) + hw)
        n = int(g["n"].max()) if len(g) else 0
        t.add_row(*[str(x) for x in key], str(n), *cells)
    return t


if __name__ == "__main__":
    sys.exit(main())

"""The command line of plans and stores: `xlayer sweep PLAN.toml|FILE --store DIR`,
`xlayer store ls|show|gc DIR` and `xlayer report STORE`. Heavy modules are imported
inside the commands, so `xlayer --help` stays fast."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from .outdir import OutputError

MAX_FAILURES_SHOWN = 10


def add_sweep_options(w: argparse.ArgumentParser) -> None:
    w.add_argument("--store", metavar="DIR",
                   help="keep every run as a record in this results store and compute only "
                        "the runs it lacks (default for a plan file: out/<plan name>-store)")
    w.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local: this machine's processes (-j); dask: a Dask cluster (--scheduler)")
    w.add_argument("--scheduler", metavar="ADDR",
                   help="address of the Dask scheduler, e.g. tcp://10.0.0.5:8786")


def add_commands(sub: Any) -> None:
    st = sub.add_parser("store", help="list, show and clean a results store")
    ss = st.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    ls = ss.add_parser("ls", help="one line per record (or per point of a plan)")
    ls.add_argument("dir", metavar="DIR")
    ls.add_argument("--plan", help="the points of this plan with their status instead")
    ls.add_argument("--failed", action="store_true", help="only failed records, with their errors")
    ls.set_defaults(func=_cmd_ls)
    show = ss.add_parser("show", help="a record's manifest and flow table")
    show.add_argument("dir", metavar="DIR")
    show.add_argument("key", metavar="KEY", help="a record key or a unique prefix of one (≥ 4 characters)")
    show.add_argument("--scenario", action="store_true", help="print the resolved scenario too")
    show.set_defaults(func=_cmd_show)
    gc = ss.add_parser("gc", help="remove leftovers: staging folders of dead processes, "
                                  "failures a later run replaced, other versions' records")
    gc.add_argument("dir", metavar="DIR")
    gc.add_argument("--other-versions", action="store_true",
                    help="also remove the records of other xlayer versions")
    gc.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    gc.set_defaults(func=_cmd_gc)

    rp = sub.add_parser("report", help="a Markdown report with plots of a results store")
    rp.add_argument("store", metavar="STORE")
    rp.add_argument("--by", required=True, metavar="AXIS", help="the x axis: a plan axis, e.g. link.bottleneck.queue")
    rp.add_argument("--metric", required=True, metavar="COLUMN", help="a flow-table column, e.g. goodput_bps")
    rp.add_argument("--scheme", default="name", metavar="COLUMN",
                    help="what the curves compare: a flow column or an axis (default: name, the flow)")
    rp.add_argument("--plan", help="one plan of the store (default: all)")
    rp.add_argument("--format", choices=("png", "svg"), default="png", help="plot format (default png)")
    rp.add_argument("--out", help="output directory (default out/<store name>-report)")
    rp.add_argument("--overwrite", action="store_true",
                    help="allow an --out folder that is not empty and not an xlayer output")
    rp.set_defaults(func=_cmd_report)


def wants_store(args: argparse.Namespace) -> bool:
    from .plan import is_plan_file

    return bool(args.store) or args.executor == "dask" or is_plan_file(args.file)


def cmd_sweep(args: argparse.Namespace, command: list[str]) -> int:
    """A sweep into a store: a plan file, or a scenario with --grid/--seeds/--runs/--set."""
    from .cli import UsageError, parse_grid, parse_ints, parse_sets
    from .executors import Dask
    from .plan import Plan, is_plan_file, load_plan
    from .sweeps import sweep

    if args.out is not None or args.overwrite:
        raise UsageError("--out is for sweeps held in memory; with a store the results are the "
                         "store's records (xlayer store ls, xlayer report)")
    if args.workers < 0:
        raise UsageError(f"--workers must be zero or more, got {args.workers}")
    if is_plan_file(args.file):
        given = [f"--{n}" for n in ("grid", "set", "seeds", "runs") if getattr(args, n)]
        if given:
            raise UsageError(f"{args.file} is a plan: put {', '.join(given)} in the plan file")
        plan = load_plan(args.file)
    else:
        plan = Plan(args.file, grid=parse_grid(args.grid), overrides=parse_sets(args.set),
                    seeds=parse_ints(args.seeds or "1", "seeds"), runs=parse_ints(args.runs or "0", "runs"),
                    name=Path(args.file).stem)
    store = args.store or os.path.join("out", f"{plan.name}-store")
    client = None
    if args.executor == "dask":
        if not args.scheduler:
            raise UsageError("--executor dask needs --scheduler ADDR (the address the Dask "
                             "scheduler prints, e.g. tcp://10.0.0.5:8786)")
        client = Dask.connect(args.scheduler).client
    elif args.scheduler:
        raise UsageError("--scheduler is for --executor dask")
    try:
        df = sweep(plan, workers=args.workers, progress=not args.quiet, store=_store(store),
                   client=client)
    finally:
        if client is not None:
            client.close()
    info = df.attrs["xlayer"]
    failed = info["failed"]
    total = info["computed"] + info["cached"] + len(failed)
    if not args.quiet and len(df):
        from rich.console import Console

        from .cli import _sweep_table

        Console(highlight=False).print(_sweep_table(df))
    print(f"{plan.name}: {total} runs ({info['computed']} computed, {info['cached']} from the store, "
          f"{len(failed)} failed) in {store}")
    for f in failed[:MAX_FAILURES_SHOWN]:
        where = ", ".join(f"{k}={v!r}" for k, v in f["params"].items())
        print(f"xlayer: failed: {where + ' ' if where else ''}seed {f['seed']} run {f['run']}: "
              f"{f['message']}", file=sys.stderr)
    if len(failed) > MAX_FAILURES_SHOWN:
        print(f"xlayer: ... and {len(failed) - MAX_FAILURES_SHOWN} more (xlayer store ls {store} --failed)",
              file=sys.stderr)
    return 1 if failed else 0


def _store(path: str, create: bool = True) -> Any:
    from .cli import UsageError
    from .store import Store

    try:
        return Store(path, create=create)
    except OutputError as e:
        raise UsageError(f"--store {e}" if create else str(e)) from None


def _cmd_ls(args: argparse.Namespace, command: list[str]) -> int:
    import pandas as pd

    st = _store(args.dir, create=False)
    if args.plan:
        try:
            df = st.points(args.plan)
        except KeyError as e:
            from .cli import UsageError

            raise UsageError(str(e.args[0])) from None
        df["record"] = df["record"].str[:12]
        df = df.drop(columns=["plan"])
    else:
        df = st.records()
        df["key"] = df["key"].str[:12]
        df = df.drop(columns=["error" if not args.failed else "fingerprint"])
    if args.failed:
        df = df[df["status"] == "failed"]
        if "error" in df:
            df["error"] = [f"{e.get('path') or ''}{': ' if e.get('path') else ''}{e.get('message')}"
                           if isinstance(e, dict) else e for e in df["error"]]
    with pd.option_context("display.max_rows", None, "display.max_columns", None,
                           "display.width", 250, "display.max_colwidth", 80):
        if len(df):
            print(df.to_string(index=False))
    counts = df["status"].value_counts().to_dict() if len(df) else {}
    plans = ", ".join(st.plans()) or "none"
    print(f"{len(df)} {'points' if args.plan else 'records'} ("
          + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f"); plans: {plans}")
    return 0


def _cmd_show(args: argparse.Namespace, command: list[str]) -> int:
    import pandas as pd

    from .cli import UsageError

    st = _store(args.dir, create=False)
    if len(args.key) < 4:
        raise UsageError("KEY: give at least 4 characters of a record key")
    keys = [k for k in st.keys() if k.startswith(args.key)]
    keys += [str(f["key"]) for f in st.failed() if str(f.get("key", "")).startswith(args.key)]
    keys = sorted(set(keys))
    if len(keys) != 1:
        raise UsageError(f"KEY {args.key}: {'no record' if not keys else f'{len(keys)} records'} "
                         f"match{'es' if len(keys) == 1 else ''} in {args.dir}"
                         + (f": {', '.join(k[:12] for k in keys[:5])}" if keys else ""))
    m = st.manifest(keys[0])
    scenario = m.pop("scenario", None)
    print(json.dumps(m, indent=2, default=str))
    if args.scenario and scenario is not None:
        print(json.dumps(scenario, indent=2))
    if m.get("status") == "ok":
        with pd.option_context("display.max_columns", None, "display.width", 250):
            print(st.table(keys[0]).to_string(index=False))
    return 0


def _cmd_gc(args: argparse.Namespace, command: list[str]) -> int:
    st = _store(args.dir, create=False)
    removed = st.gc(other_versions=args.other_versions, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    for what, paths in removed.items():
        for p in paths:
            print(f"{verb} {what.replace('_', ' ')}: {p}")
    print(f"{verb} {sum(map(len, removed.values()))} item(s) from {args.dir}")
    return 0


def _cmd_report(args: argparse.Namespace, command: list[str]) -> int:
    from .cli import UsageError
    from .report import ReportError, report

    st = _store(args.store, create=False)
    out = args.out or os.path.join("out", f"{Path(args.store).resolve().name}-report")
    try:
        path = report(st, out, args.by, args.metric, plan=args.plan, scheme=args.scheme, fmt=args.format,
                      overwrite=args.overwrite)
    except (ReportError, KeyError) as e:
        raise UsageError(str(e.args[0])) from None
    print(f"wrote {path}")
    return 0

"""`xlayer scenarios list|show`: the ready-made scenarios shipped with the package."""

from __future__ import annotations

import argparse
from typing import Any



def add_commands(sub: Any) -> None:
    sc = sub.add_parser("scenarios", help="list or print the ready-made scenarios shipped "
                                          "with xlayer (run one with `xlayer run NAME`)")
    ss = sc.add_subparsers(dest="scenarios_command", required=True, metavar="ACTION")
    ls = ss.add_parser("list", help="name, description and path of each, and whether the "
                                    "data it reads is here")
    ls.set_defaults(func=_cmd_list)
    show = ss.add_parser("show", help="print a shipped scenario's TOML (to copy and edit)")
    show.add_argument("name", metavar="NAME", help="a name from `xlayer scenarios list`")
    show.set_defaults(func=_cmd_show)


def _cmd_list(args: argparse.Namespace, command: list[str]) -> int:
    """Plain text, one block per scenario (paths stay whole, for copying):

        dumbbell     Dumbbell: 4 TCP NewReno bulk flows share a 10 Mb/s, 25 ms bottleneck.
                     /.../xlayer/scenarios_data/dumbbell.toml
    """
    from .catalog import shipped_scenarios

    items = shipped_scenarios()
    width = max((len(s.name) for s in items), default=0) + 2
    pad = " " * width
    for s in items:
        print(f"{s.name:<{width}}{s.description}")
        print(f"{pad}{s.path}")
        if s.missing:
            print(f"{pad}cannot run here, {s.missing}")
    print(f"\n{len(items)} scenarios; `xlayer run NAME` runs one, `xlayer scenarios show NAME` "
          "prints it")
    return 0


def _cmd_show(args: argparse.Namespace, command: list[str]) -> int:
    from .catalog import show

    text = show(args.name)
    print(text, end="" if text.endswith("\n") else "\n")
    return 0

"""Core cost per delivered packet of two shipped scenarios (docs/performance.md).

    python benches/bench_per_packet.py atm         # atm_fig4.toml, 60 s, over AAL5 and AAL-X at CER 1e-3
    python benches/bench_per_packet.py multicast   # multicast_table1.toml, 100 s
    python benches/bench_per_packet.py multicast --no-series   # ... without the 100 ms time series
    python benches/bench_per_packet.py multicast --once   # one run, e.g. under callgrind

"Core" is the manifest's wall_time_s: the simulation's run and finish, without building
the world or converting the results. A delivered packet is a flow-table row's rx_packets;
for multicast groups only the per-member rows count (their "*" row is the group's
aggregate), so each copy to a member is one packet.
"""

from __future__ import annotations

import argparse
import pathlib
from typing import Any

import xlayer

SCENARIOS = pathlib.Path(__file__).resolve().parent.parent / "scenarios"
# Akyildiz & Joe's Configuration 2: AAL-X with TCP's retransmission timer off.
ATM = {"aal5": {}, "aalx": {"radio.air.model.aal": "aalx", "flow.ftp.tcp.rto": "off"}}


def measure(path: pathlib.Path, overrides: dict[str, Any], repeats: int, label: str) -> None:
    core, events, delivered = [], 0, 0
    for _ in range(repeats):
        res = xlayer.run(path, seed=1, overrides=overrides, progress=False)
        core.append(float(res.metadata["wall_time_s"]))
        flows = res.flows
        if "receiver" in flows.columns:
            flows = flows[flows.receiver != "*"]
        delivered, events = int(flows.rx_packets.sum()), int(res.metadata["events"])
    best = min(core)
    print(f"{label}: core {best * 1e3:.1f} ms (best of {repeats}; all {', '.join(f'{c * 1e3:.1f}' for c in core)}); "
          f"{delivered:,} packets delivered, {events:,} events ({events / delivered:.2f} per packet): "
          f"{best / delivered * 1e9:,.0f} ns per delivered packet")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["atm", "multicast"])
    ap.add_argument("--once", action="store_true", help="one run of each (for a profiler)")
    ap.add_argument("--aal", choices=list(ATM), help="atm: only this AAL")
    ap.add_argument("--no-series", action="store_true", help="multicast: time series off (flow table kept)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    repeats = 1 if args.once else args.repeats
    if args.which == "atm":
        for aal, over in ATM.items():
            if args.aal in (None, aal):
                cer = {"radio.air.model.channel.cer": 1e-3}
                measure(SCENARIOS / "atm_fig4.toml", {**cer, **over}, repeats, f"atm_fig4 60 s, {aal}, CER 1e-3")
    else:
        over = {"output.series_interval": "0s"} if args.no_series else {}
        label = "multicast_table1 100 s" + (", series off" if args.no_series else "")
        measure(SCENARIOS / "multicast_table1.toml", over, repeats, label)


if __name__ == "__main__":
    main()

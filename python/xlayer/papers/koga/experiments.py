"""Every experiment of Koga et al. §5 as overrides of `scenarios/koga_fig1.toml`, a process
pool that runs them, and the per-run metrics (the paper's loss definitions)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from ... import scenario as _scenario
from ...api import conserved
from ...executors import Job, execute, executor_for
from ...progress import enabled
from ...scenario import apply_overrides, load
from ...store import Store, key
from .paper import DEADLINE_S, RATES_KBPS

SCENARIO = _scenario.shipped("koga_fig1.toml")

WT_GRID = (0, 30, 60, 90, 120, 150, 200, 300, 400, 500)
RETX_GRID = (0, 1, 2, 3, 4, 5)
AWND_GRID = tuple(range(2, 15))
QUICK_WT_GRID = (0, 60, 150, 500)
QUICK_RETX_GRID = (0, 1, 2, 5)
QUICK_AWND_GRID = (2, 3, 4, 5, 6, 7, 8, 9, 14)  # every value near the optima, so C6 matches the full grid

TABLE5_AWND = {32: 6, 64: 5, 128: 4}  # §5.3 optimum
FIG6_AWND = {32: 5, 64: 5, 128: 4}  # §5.3 "five packets for 32 and 64 kb/s, four for 128"


@dataclass(frozen=True)
class Setting:
    """One configuration of the Fig. 1 scenario (paper defaults: §4)."""

    qos: str = "none"  # "none" or "priority" (§3.1)
    buffer: int = 10  # BS buffer in SDUs; §5.1 "10 packets ... optimum value in this scenario"
    wt_ms: int = 500
    udp_retx: int = 5
    tcp_retx: int = 5  # §4: five for TCP throughout
    awnd: int | None = None  # receiver-based control with a fixed awnd (packets)
    adaptive: bool = False  # receiver-based control with eqs. (1)-(3) computed live
    buffer_counts: str = "unsent"
    late_sdus: str = "deliver"
    rcv_buffer: str | None = None  # TCP receive buffer override (default 20 packets)
    pdus_per_tti: int = 24  # 24 x 40 payload bytes per 20 ms = 384 kb/s; 22 whole 42-B PDUs fit 7680 bits
    status_delay_ms: int | None = None  # status (NACK) delay; None: the link delay (30 ms)

    def overrides(self, rate_kbps: int) -> dict[str, Any]:
        o: dict[str, Any] = {
            "flow.udp.app.rate": f"{rate_kbps}kbps",
            "flow.udp.app.deadline": f"{round(DEADLINE_S * 1000)}ms",
            "radio.dch.model.qos": self.qos,
            "radio.dch.model.buffer": self.buffer,
            "radio.dch.model.buffer_counts": self.buffer_counts,
            "radio.dch.model.wt": f"{self.wt_ms}ms",
            "radio.dch.model.max_retx": self.tcp_retx,
            "radio.dch.model.udp": {"max_retx": self.udp_retx},
            "radio.dch.model.late_sdus": self.late_sdus,
        }
        if self.awnd is not None:
            o["flow.tcp.tcp.agent"] = {"kind": "koga", "awnd": self.awnd}
        elif self.adaptive:
            o["flow.tcp.tcp.agent"] = {"kind": "koga"}
        if self.rcv_buffer is not None:
            o["flow.tcp.tcp.rcv_buffer"] = self.rcv_buffer
        # Only set when they differ from the scenario, so records of the primary reading
        # keep their store keys.
        if self.pdus_per_tti != 24:
            o["radio.dch.model.pdus_per_tti"] = self.pdus_per_tti
        if self.status_delay_ms is not None:
            o["radio.dch.model.status_delay"] = f"{self.status_delay_ms}ms"
        return o


@dataclass(frozen=True)
class Experiment:
    key: str
    title: str
    x_label: str  # "" for tables
    xs: tuple[Any, ...]  # x values (tables: the single value None)
    setting: Callable[[int, Any], Setting]
    extra: bool = False  # a sensitivity study, not one of the paper's tables/figures
    section: str = ""  # "" or the reading it varies ("pdus", "timing", "window"): reported by sensitivity.py


def experiments(quick: bool) -> list[Experiment]:
    wt = QUICK_WT_GRID if quick else WT_GRID
    retx = QUICK_RETX_GRID if quick else RETX_GRID
    awnd = QUICK_AWND_GRID if quick else AWND_GRID
    prio = Setting(qos="priority")
    t3 = Setting(wt_ms=60, udp_retx=1)
    exps = [
        Experiment("table2", "Table 2", "", (None,), lambda r, x: Setting(buffer=50, wt_ms=500)),
        Experiment("table3", "Table 3", "", (None,), lambda r, x: t3),
        Experiment("table4", "Table 4", "", (None,), lambda r, x: replace(prio, wt_ms=150, udp_retx=2)),
        Experiment("table5", "Table 5", "", (None,),
                   lambda r, x: Setting(wt_ms=90, udp_retx=2, awnd=TABLE5_AWND[r])),
        Experiment("fig2", "Fig. 2: WT, no QoS", "WT [ms]", wt, lambda r, x: Setting(wt_ms=x)),
        Experiment("fig3", "Fig. 3: UDP max retransmissions, no QoS (WT 60 ms)", "UDP max retransmissions",
                   retx, lambda r, x: Setting(wt_ms=60, udp_retx=x)),
        Experiment("fig4", "Fig. 4: WT, priority scheduling", "WT [ms]", wt, lambda r, x: replace(prio, wt_ms=x)),
        Experiment("fig5", "Fig. 5: UDP max retransmissions, priority (WT 150 ms)", "UDP max retransmissions",
                   retx, lambda r, x: replace(prio, wt_ms=150, udp_retx=x)),
        Experiment("fig6", "Fig. 6: WT, receiver-based control (awnd 5/5/4)", "WT [ms]", wt,
                   lambda r, x: Setting(wt_ms=x, awnd=FIG6_AWND[r])),
        Experiment("fig7", "Fig. 7: UDP max retransmissions, receiver-based (WT 90 ms)", "UDP max retransmissions",
                   retx, lambda r, x: Setting(wt_ms=90, udp_retx=x, awnd=FIG6_AWND[r])),
        Experiment("fig8", "Fig. 8: awnd, receiver-based (WT 90 ms, UDP max retx 2)", "awnd [packets]", awnd,
                   lambda r, x: Setting(wt_ms=90, udp_retx=2, awnd=x)),
    ]
    exps += reading_experiments(exps)
    if not quick:
        exps += [
            Experiment("s_buffer_unacked", "Table 3 with SDUs holding the buffer until acknowledged", "",
                       (None,), lambda r, x: replace(t3, buffer_counts="unacked"), extra=True),
            Experiment("s_window_unlimited", "Table 2 with a 1 MiB receive window instead of 20 packets", "",
                       (None,), lambda r, x: Setting(buffer=50, wt_ms=500, rcv_buffer="1MiB"), extra=True),
            Experiment("s_fig2_udp_retx1", "Fig. 2 read with UDP max retransmissions 1", "WT [ms]", wt,
                       lambda r, x: Setting(wt_ms=x, udp_retx=1), extra=True),
            Experiment("s_adaptive", "Table 5 with awnd computed live from eqs. (1)-(3)", "", (None,),
                       lambda r, x: Setting(wt_ms=90, udp_retx=2, adaptive=True), extra=True),
            Experiment("s_late_discard", "Fig. 2 with strict in-sequence delivery (given-up SDUs dropped)",
                       "WT [ms]", wt, lambda r, x: Setting(wt_ms=x, late_sdus="discard"), extra=True),
        ]
    return exps


# The open readings (docs/reproductions/koga.md, "Primary readings"); the primary one of
# each is the paper experiment itself, these are the alternatives.
PDUS_ALT = 22  # whole 42-B PDUs in a 7680-bit transport block
PDUS_ALT_OF = ("table2", "table3", "table4", "table5", "fig2", "fig8")
STATUS_DELAYS_MS = (31, 50)  # link delay 30 ms + one tick (1 ms) / + one TTI (20 ms)
STATUS_DELAY_OF = ("fig2", "fig6", "table3")
TABLE2_WINDOWS_PKTS = (30, 50)  # receive windows between ns-2's 20 packets and 1 MiB
MSS_BYTES = 1460


def reading_experiments(paper_exps: list[Experiment]) -> list[Experiment]:
    """The paper's experiments re-run under the alternative readings (quick mode uses the
    quick grids)."""
    by_key = {e.key: e for e in paper_exps}
    out = []
    for k in PDUS_ALT_OF:
        e = by_key[k]
        out.append(replace(e, key=f"p{PDUS_ALT}_{k}", title=f"{e.title}, {PDUS_ALT} PDUs per TTI", extra=True,
                           section="pdus", setting=_with(e.setting, pdus_per_tti=PDUS_ALT)))
    for k in STATUS_DELAY_OF:
        e = by_key[k]
        for d in STATUS_DELAYS_MS:
            out.append(replace(e, key=f"sd{d}_{k}", title=f"{e.title}, status delay {d} ms", extra=True,
                               section="timing", setting=_with(e.setting, status_delay_ms=d)))
    for k in ("fig2", "fig6"):  # the other tie: a hole filled exactly at WT 60 ms is in time; at 59 ms it is not
        e = by_key[k]
        out.append(replace(e, key=f"wt59_{k}", title=f"{e.title}, WT 59 ms", xs=(59,), extra=True, section="tie"))
    e = by_key["table2"]
    for w in TABLE2_WINDOWS_PKTS:
        out.append(replace(e, key=f"w{w}_table2", title=f"{e.title}, TCP receive window {w} packets", extra=True,
                           section="window", setting=_with(e.setting, rcv_buffer=f"{w * MSS_BYTES}B")))
    return out


def _with(f: Callable[[int, Any], Setting], **changes: Any) -> Callable[[int, Any], Setting]:
    """`f`'s settings with `changes` applied."""
    def setting(rate: int, x: Any) -> Setting:
        return replace(f(rate, x), **changes)
    return setting


def metrics(flows: pd.DataFrame) -> dict[str, float]:
    """The paper's loss measures for one run, in percent of UDP packets whose fate is
    known (sent minus still in flight at the end):
    transport = buffer overflow + ARQ discard (+ any other L2 drop);
    application = delivered out of order or later than 300 ms (the "or" reading),
    with the "and" reading kept alongside; TCP throughput = TCP goodput."""
    tcp = flows.set_index("name").loc["tcp"]
    udp = flows.set_index("name").loc["udp"]
    known = float(udp.tx_packets - udp.in_flight_packets)
    pct = 100.0 / known
    transport = (udp.lost_queue_overflow + udp.lost_arq_discard + udp.lost_reorder_timeout
                 + udp.lost_channel) * pct
    app_or = (udp.late_packets + udp.reordered_packets - udp.late_reordered_packets) * pct
    app_and = udp.late_reordered_packets * pct
    return {
        "transport": transport,
        "app": app_or,
        "total": transport + app_or,
        "app_and": app_and,
        "total_and": transport + app_and,
        "overflow": udp.lost_queue_overflow * pct,
        "arq_discard": udp.lost_arq_discard * pct,
        "reordered": udp.reordered_packets * pct,
        "late": udp.late_packets * pct,
        "udp_delay_mean_ms": float(udp.delay_mean_s or 0.0) * 1e3,
        "tcp_kbps": float(tcp.goodput_bps) / 1e3,
        "tcp_timeouts": float(tcp.timeouts),
    }


def run_all(exps: Iterable[Experiment], seeds: Iterable[int], workers: int,
            scenario: Path = SCENARIO, store: Path | None = None) -> pd.DataFrame:
    """One row per (experiment, rate, x, seed). Identical settings are run once and
    shared between experiments (e.g. Table 3 is a point of Fig. 3). Runs are records of
    `store` (a temporary one if None): those already there are not run again."""
    base = load(scenario)
    seeds = list(seeds)
    settings: dict[tuple[Setting, int], list[tuple[str, int, Any]]] = {}
    for e in exps:
        for rate in RATES_KBPS:
            for x in e.xs:
                settings.setdefault((e.setting(rate, x), rate), []).append((e.key, rate, x))
    jobs, owners = [], []
    for (s, rate), users in settings.items():
        doc = apply_overrides(load(base), s.overrides(rate))
        for seed in seeds:
            jobs.append(Job(key(doc, seed, 0), doc, seed, 0, {"rate_kbps": rate, **asdict(s)}))
            owners.append((users, seed))
    with tempfile.TemporaryDirectory(prefix="xlayer-koga-") as scratch:
        st = Store(store if store is not None else Path(scratch, "store"))
        st.gc()  # staging folders an interrupted reproduction left
        st.save_plan("koga", {"name": "koga", "scenario": str(scenario)},
                     [{"params": j.params, "seed": j.seed, "run": 0, "key": j.record} for j in jobs])
        out = execute(st, jobs, executor_for(workers), progress=enabled(None), label="koga")
        if out.failed:
            err = st.manifest(out.failed[0])["error"]
            raise RuntimeError(f"{len(out.failed)} Koga run(s) failed, the first with: {err['message']}")
        rows = []
        for job, (users, seed) in zip(jobs, owners):
            m = st.manifest(job.record)
            if not conserved(m["conservation"]):
                raise RuntimeError(f"packet conservation violated: {m['conservation']}")
            row = {**metrics(st.table(job.record)), "fingerprint": m["fingerprint"],
                   "wall_s": float(m.get("wall_time_s") or 0.0)}
            for k, rate, x in users:
                rows.append({"experiment": k, "rate_kbps": rate, "x": x, "seed": seed, **row})
    return pd.DataFrame(rows)


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))

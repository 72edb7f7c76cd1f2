"""The experiments of Alexiou, Bouras & Papazois §5 on a UMTS path built as scenario
documents: servers → GGSN (with the BM-SC) → SGSN → RNC → Node B → UEs, the Iu link
(SGSN → RNC) as the bottleneck of §5.1-5.2, and the `mbms` bearer from the Node B.

The paper names no rates or delays. The choices below are stated in
docs/reproductions/multicast.md with their reasons; each is a module constant."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...store import Store
from .._shared import run_points
from . import paper

PACKET = "1000B"  # UDP payload of TFMCC and PGMCC data (their headers included); TCP: MSS 1000 B
TCP_MSS = "1000B"
CORE = {"rate": "100Mbps", "delay": "5ms"}  # server access, Gn, Iub: never the bottleneck
IU = {"rate": "1Mbps", "delay": "10ms", "queue": "60pkt"}  # §5.1's bottleneck: Iu
# The radio's one-way delay: WCDMA R99 packet data has round trips of about 150-200 ms
# (Holma & Toskala, the paper's ref. [12]), most of it in the radio's interleaving and
# RLC; 70 ms each way over the air plus the core's 25 ms gives about 190 ms.
RADIO_DELAY = "70ms"
FAST_RADIO = {"rate": "2Mbps", "delay": RADIO_DELAY, "buffer": 100}  # §5.1-5.2: not the bottleneck
BEARER = {"rate": "256kbps", "delay": RADIO_DELAY, "buffer": 40}  # §5.3-5.4: an MBMS p-t-m bearer
UPLINK = {"uplink_rate": "64kbps", "uplink_delay": RADIO_DELAY}
SERIES = "500ms"
# §5.2: the three loss levels of the Iu link (the paper gives none) and when they start.
LOSS_STEPS = ((0.0, 0.005), (50.0, 0.03), (100.0, 0.01))
WARMUP_S = 20.0


@dataclass(frozen=True)
class Point:
    """One configuration: its experiment, variant, x value and scenario document."""

    experiment: str
    variant: str
    x: float
    doc: dict[str, Any] = field(hash=False, compare=False)
    trials: int = 1

    @property
    def params(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "variant": self.variant, "x": self.x}


def multicast_flow(name: str, protocol: str, group: str, modified: bool = True,
                   start: Any = "0s") -> dict[str, Any]:
    """A bulk TFMCC or PGMCC session from server `name` to `group`; MOD reads the Node-B
    loss indication, LEG ignores it (Alexiou, Bouras, Papazois §4)."""
    return {"name": name, "protocol": protocol, "src": name, "dst": group, "app": {"kind": "bulk"},
            "start": start, protocol: {"packet_size": PACKET, "loss_indication": modified}}


def tcp_flow(name: str, dst: str, start: Any = "0s") -> dict[str, Any]:
    return {"name": name, "protocol": "tcp", "src": name, "dst": dst, "app": {"kind": "bulk"}, "start": start,
            "tcp": {"mss": TCP_MSS, "rcv_buffer": "64KiB"}}


def umts_doc(name: str, flows: list[dict[str, Any]], groups: dict[str, list[str]], ues: list[str],
             duration_s: float, radio: dict[str, Any], iu: dict[str, Any] | None = None,
             server_delay_ms: dict[str, float] | None = None, uplink_delay: str | None = None) -> dict[str, Any]:
    """One branch of the UMTS tree: a server per flow, the core, one RNC and one Node B
    whose bearer reaches `ues`."""
    servers = [f["src"] for f in flows]
    nodes = [{"name": s} for s in servers] + [{"name": n, "kind": "router"} for n in ("ggsn", "sgsn", "rnc", "nodeb")]
    nodes += [{"name": u} for u in ues]
    delays = server_delay_ms or {}
    links = [{"name": f"gi_{s}", "a": s, "b": "ggsn", "rate": CORE["rate"],
              "delay": f"{delays.get(s, 5.0)}ms"} for s in servers]
    links += [{"name": "gn", "a": "ggsn", "b": "sgsn", **CORE},
              {"name": "iu", "a": "sgsn", "b": "rnc", **(iu or IU)},
              {"name": "iub", "a": "rnc", "b": "nodeb", **CORE}]
    model = {"kind": "mbms", "loss_indication": True, **radio}
    return {"name": name, "simulation": {"duration": f"{duration_s}s"}, "output": {"series_interval": SERIES},
            "node": nodes, "link": links,
            "group": [{"name": g, "members": [{"node": m} for m in members]} for g, members in groups.items()],
            "radio": [{"name": "uu", "from": "nodeb", "to": ues, **UPLINK,
                       **({"uplink_delay": uplink_delay} if uplink_delay else {}), "model": model}],
            "flow": flows}


def _random_start() -> dict[str, str]:
    return {"dist": "uniform", "low": "0s", "high": "1s"}


def fairness_points(seeds: int, duration_s: float) -> list[Point]:
    """§5.1: two modified TFMCC (or PGMCC) sessions to groups that both hold UEx, sharing
    the Iu bottleneck; then TFMCC, PGMCC and TCP to UEx together, with the servers'
    delays drawn per trial (randomized RTTs, C2)."""
    pts = []
    for proto in ("tfmcc", "pgmcc"):
        flows = [multicast_flow(f"{proto}1", proto, "g1", start=_random_start()),
                 multicast_flow(f"{proto}2", proto, "g2", start=_random_start())]
        doc = umts_doc(f"mc_pair_{proto}", flows, {"g1": ["uex"], "g2": ["uex"]}, ["uex"], duration_s, FAST_RADIO)
        pts.append(Point("pair", proto, 0, doc, seeds))
    rng = np.random.default_rng(2009)
    for trial in range(seeds):
        flows = [multicast_flow("tfmcc", "tfmcc", "g1", start=_random_start()),
                 multicast_flow("pgmcc", "pgmcc", "g2", start=_random_start()),
                 tcp_flow("tcp", "uex", start=_random_start())]
        delays = {f["src"]: float(rng.uniform(2.0, 40.0)) for f in flows}
        doc = umts_doc("mc_mixed", flows, {"g1": ["uex"], "g2": ["uex"]}, ["uex"], duration_s, FAST_RADIO,
                       server_delay_ms=delays)
        pts.append(Point("mixed", "random_rtt", trial, doc, 1))
    return pts


def responsiveness_points(seeds: int) -> list[Point]:
    """§5.2: TFMCC, PGMCC and TCP share the Iu link, whose loss rate changes twice in
    150 s; the Iu rate is high enough that loss, not capacity, sets the rates."""
    iu = {**IU, "rate": "4Mbps", "queue": "200pkt",
          "loss": {"model": "steps", "steps": [{"at": f"{t}s", "p": p} for t, p in LOSS_STEPS]},
          "loss_direction": "a_to_b"}
    flows = [multicast_flow("tfmcc", "tfmcc", "g1"), multicast_flow("pgmcc", "pgmcc", "g2"), tcp_flow("tcp", "uex")]
    doc = umts_doc("mc_respond", flows, {"g1": ["uex"], "g2": ["uex"]}, ["uex"], paper.RESPONSIVENESS_S,
                   {**FAST_RADIO, "rate": "8Mbps"}, iu=iu)
    return [Point("respond", "all", 0, doc, seeds)]


TABLE2_SCHEMES = {"MOD_TFMCC": ("tfmcc", True), "LEG_TFMCC": ("tfmcc", False),
                  "MOD_PGMCC": ("pgmcc", True), "LEG_PGMCC": ("pgmcc", False)}
# C0: how TCP, the normalization baseline of Table II, meets the radio (the primary
# reading first). In every reading TCP runs alone on the same bearer, to one UE with the
# same degradation process, in its own run ("executed five times, once for each of
# examined schemes, with exactly the same parameters", §5.3).
TCP_BASELINES = {"primary: no link-layer repair of TCP's radio losses": 1,
                 "TCP's radio losses repaired by link-layer ARQ (4 attempts)": 4}


# Readings of the radio delay the paper leaves open, for Table II (primary first).
DELAY_READINGS = {"primary: 70 ms each way over the air": RADIO_DELAY, "20 ms each way over the air": "20ms"}


def degradation_points(seeds: int, sizes: tuple[int, ...], duration_s: float,
                       readings: tuple[str, ...] = tuple(DELAY_READINGS)) -> list[Point]:
    """§5.3 (Table II): every scheme alone on the bearer, every UE's radio loss rate
    drawn in [0, 5%] every 5 s; under each radio-delay reading (experiment `table2` for
    the primary one, `table2:<reading>` for the others)."""
    temporary = {"temporary": {"max": paper.TEMP_MAX_LOSS, "period": f"{paper.TEMP_PERIOD_S}s"}}
    pts = []
    for reading in readings:
        delay = DELAY_READINGS[reading]
        exp = "table2" if delay == RADIO_DELAY else f"table2:{reading}"
        radio = {**BEARER, "delay": delay, "loss": temporary}
        for n in sizes:
            ues = [f"ue{k}" for k in range(1, n + 1)]
            for scheme, (proto, modified) in TABLE2_SCHEMES.items():
                doc = umts_doc(f"mc_table2_{scheme.lower()}_{n}", [multicast_flow(scheme.lower(), proto, "g", modified)],
                               {"g": ues}, ues, duration_s, radio, uplink_delay=delay)
                pts.append(Point(exp, scheme, n, doc, seeds))
        for tcp_reading, attempts in TCP_BASELINES.items():
            doc = umts_doc("mc_table2_tcp", [tcp_flow("tcp", "ue1")], {}, ["ue1"], duration_s,
                           {**radio, "unicast_attempts": attempts}, uplink_delay=delay)
            pts.append(Point(f"{exp}_tcp", tcp_reading, 1, doc, seeds))
    return pts


def permanent_points(seeds: int) -> list[Point]:
    """§5.4: from t = 50 s the radio link to UEx loses 20% of packets; each modified
    scheme, and TCP, alone."""
    loss = {"permanent": [{"ues": ["uex"], "rate": paper.PERMANENT_LOSS, "at": f"{paper.PERMANENT_AT_S}s"}]}
    pts = []
    for proto in ("tfmcc", "pgmcc"):
        doc = umts_doc(f"mc_permanent_{proto}", [multicast_flow(proto, proto, "g")], {"g": ["uex"]}, ["uex"],
                       paper.PERMANENT_END_S, {**BEARER, "loss": loss, "group_attempts": 4})
        pts.append(Point("permanent", proto, 0, doc, seeds))
    doc = umts_doc("mc_permanent_tcp", [tcp_flow("tcp", "uex")], {}, ["uex"], paper.PERMANENT_END_S,
                   {**BEARER, "loss": loss, "unicast_attempts": 4})
    pts.append(Point("permanent", "tcp", 0, doc, seeds))
    return pts


def points(quick: bool) -> list[Point]:
    seeds = 2 if quick else 10
    sizes = (1, 10, 100) if quick else paper.TABLE2_UES
    return (fairness_points(seeds, 100.0 if quick else 200.0) + responsiveness_points(seeds)
            + degradation_points(seeds, sizes, 100.0 if quick else 200.0,
                                 tuple(DELAY_READINGS)[:1] if quick else tuple(DELAY_READINGS))
            + permanent_points(seeds))


def _series(series: pd.DataFrame, entity: str, metric: str) -> pd.Series:
    s = series[(series.entity == entity) & (series.metric == metric)]
    return pd.Series(s.value.to_numpy(), index=s.time_s.to_numpy())


def flow_metrics(flows: pd.DataFrame, series: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per flow and receiving node (a group flow's members, not its session row):
    its goodput over the run, and the coefficient of variation, in 1 s bins after the
    warm-up, of the flow's goodput series (C2 runs one receiver per flow)."""
    rows = []
    for f in flows.itertuples():
        if f.receiver == "*":
            continue
        g = _series(series, f.name, "goodput_bps")
        after = g[g.index > WARMUP_S]
        bins = after.groupby(np.floor(after.index.to_numpy() - 1e-9)).mean()
        rows.append({"flow": f.name, "protocol": f.protocol, "receiver": f.receiver,
                     "goodput_kbps": float(f.goodput_bps) / 1e3,
                     "cov": float(bins.std() / bins.mean()) if len(bins) > 1 and bins.mean() > 0 else np.nan,
                     "timeouts": int(f.timeouts)})
    return rows


@dataclass
class Results:
    runs: pd.DataFrame  # one row per (point, seed, flow, receiver)
    store: Path
    records: dict[tuple[str, str, float, int], str]

    def series(self, experiment: str, variant: str, x: float, seed: int = 1) -> pd.DataFrame:
        return Store(self.store).table(self.records[(experiment, variant, x, seed)], "series")


def run_all(pts: list[Point], workers: int, store: Path | None = None) -> Results:
    """Run every point's seeds (those already in `store` are not run again) and collect
    the per-receiver metrics."""
    st, ran = run_points("multicast", "python/xlayer/papers/multicast", pts, workers, store, series=True)
    rows, records = [], {}
    for r in ran:
        p = r.point
        records[(p.experiment, p.variant, p.x, r.seed)] = r.record
        for m in flow_metrics(st.table(r.record), st.table(r.record, "series")):
            rows.append({**p.params, "seed": r.seed, "fingerprint": r.manifest["fingerprint"], **m})
    return Results(pd.DataFrame(rows), st.root, records)


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))

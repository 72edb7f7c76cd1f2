"""Every experiment of Jayaram & Rhee §IV-V as flows on `scenarios/dbp_cdma.toml` (and on
the Mahimahi traces), run through the results store, with the per-run metrics."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import scenario as _scenario
from ...scenario import load
from ...store import Store
from .._shared import run_points
from . import paper

SCENARIO = _scenario.shipped("dbp_cdma.toml")
STARTUP_S = 30.0  # C2 ignores the first 30 s (DBP's first climb)
EPISODE_RECOVERY_S = 30.0  # ... and an episode with the 30 s after it
EPISODE_AT_S = 300.0  # Fig. 4's episode in the 50 kb/s probe
EPISODE_S = 20.0


@dataclass(frozen=True)
class Point:
    """One configuration: its experiment, variant, x value and scenario document."""

    experiment: str
    variant: str
    x: float
    doc: dict[str, Any] = field(hash=False, compare=False)
    trials: int = 1  # seeds to run

    @property
    def params(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "variant": self.variant, "x": self.x}


def _flow(name: str, protocol: str, app: dict[str, Any] | None = None, start_s: float = 0.0,
          **rudp: Any) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "protocol": protocol, "src": "server", "dst": "handset",
                         "app": app or {"kind": "bulk"}, "start": f"{start_s}s"}
    if protocol == "rudp":
        f["rudp"] = rudp or {"control": "dbp"}
    return f


def probe(rate_kbps: float) -> dict[str, Any]:
    """§III: 512-byte datagrams at a constant rate, each acknowledged, never resent."""
    return _flow("probe", "rudp", control="constant", rate=f"{rate_kbps}kbps", reliable=False)


def dbp(name: str = "dbp", app: dict[str, Any] | None = None, start_s: float = 0.0,
        **rule: Any) -> dict[str, Any]:
    return _flow(name, "rudp", app, start_s, control="dbp", **rule)


# Readings of the step rule the paper omits (§V-A): the primary one first.
STEP_RULES: dict[str, dict[str, Any]] = {
    "primary: approach 0.5, probe 0.5 packet/RTT": {},
    "approach 0.25": {"approach": 0.25},
    "approach 1 (jump to the smoothed peak)": {"approach": 1.0},
    "probe 1 packet/RTT (TCP's additive increase)": {"probe_packets": 1.0},
    "probe 0.25 packet/RTT": {"probe_packets": 0.25},
    "no smoothing of RTT samples (gain 1)": {"rtt_gain": 1.0},
}


def tcp(name: str = "tcp", app: dict[str, Any] | None = None, start_s: float = 0.0,
        mss: str | None = None) -> dict[str, Any]:
    f = _flow(name, "tcp", app, start_s)
    if mss is not None:
        f["tcp"] = {"mss": mss}
    return f


# Readings of what the paper leaves open about TCP's conditions (§III names no segment
# size; §IV measures loss on 512-byte datagrams only): (TCP MSS, bearer overrides).
TCP_READINGS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "primary: MSS 1460 B, 4% loss per 540 B scaled by size": (None, {}),
    "MSS 1460 B, 4% loss per packet whatever its size": (None, {"loss_size": None}),
    "MSS 536 B (RFC 879's default), loss scaled by size": ("536B", {}),
    "MSS 536 B, 4% loss per packet": ("536B", {"loss_size": None}),
}


def cdma_doc(flows: list[dict[str, Any]], duration_s: float, radio: dict[str, Any] | None = None,
             interval: str = "100ms") -> dict[str, Any]:
    doc = copy.deepcopy(load(SCENARIO))
    doc["flow"] = flows
    doc["simulation"]["duration"] = f"{duration_s}s"
    doc["output"] = {"series_interval": interval}
    model = doc["radio"][0]["model"]
    for k, v in (radio or {}).items():
        if v is None:
            model.pop(k, None)  # back to the model's default
        else:
            model[k] = v
    return doc


def traces_dir() -> Path | None:
    """The Mahimahi traces (GPL-3.0 data kept outside the repository): XLAYER_TRACES, or
    `../shared/traces/mahimahi` beside the checkout."""
    env = os.environ.get("XLAYER_TRACES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[4] / ".." / "shared" / "traces" / "mahimahi")
    return next((p.resolve() for p in candidates if p.is_dir()), None)


def trace_doc(down: Path, flows: list[dict[str, Any]], duration_s: float) -> dict[str, Any]:
    """The shipped LTE-trace topology (scenarios/lte_trace.toml): one trace-driven link,
    20 ms each way, a 200-packet drop-tail queue."""
    up = down.with_suffix(".up")
    tcp_opts = {"mss": "1448B", "initial_window": 10, "delayed_ack": True, "rcv_buffer": "4MiB"}
    for f in flows:
        f["dst"] = "phone"
        if f["protocol"] == "tcp":
            f["tcp"] = tcp_opts
    return {"name": f"dbp_trace_{down.stem}", "simulation": {"duration": f"{duration_s}s"},
            "output": {"series_interval": "100ms"},
            "node": [{"name": "server"}, {"name": "phone"}],
            "link": [{"name": "cell", "a": "server", "b": "phone", "delay": "20ms", "queue": "200pkt",
                      "trace": {"a_to_b": str(down), "b_to_a": str(up)}}],
            "flow": flows}


def points(quick: bool) -> list[Point]:
    seeds = 3 if quick else 10
    trials = 10 if quick else 40
    dur = 600.0
    pts = [Point("probe", "probe", r, cdma_doc([probe(r)], dur, {"deallocation": {"model": "none"}},
                                               interval="50ms"), seeds)
           for r in paper.PROBE_RATES_KBPS]
    episode = {"deallocation": {"model": "none"},
               "episodes": [{"at": f"{EPISODE_AT_S}s", "duration": f"{EPISODE_S}s"}]}
    pts.append(Point("episode", "probe", 50, cdma_doc([probe(50)], dur, episode, interval="50ms"), seeds))
    alone = {"dbp": [dbp()], "tcp": [tcp()], "dbp2": [dbp("dbp1"), dbp("dbp2")], "mixed": [dbp(), tcp()]}
    for variant, flows in alone.items():
        pts.append(Point("share", variant, 0, cdma_doc(flows, dur), seeds))
        pts.append(Point("noloss", variant, 0, cdma_doc(copy.deepcopy(flows), dur, {"loss": 0.0}), seeds))
    for name, (mss, radio) in TCP_READINGS.items():
        for x, flows in enumerate(([dbp()], [tcp(mss=mss)], [dbp(), tcp(mss=mss)])):
            pts.append(Point("reading", name, x, cdma_doc(flows, dur, radio), seeds))
    for name, rule in STEP_RULES.items():
        pts.append(Point("sens", name, 0, cdma_doc([dbp(**rule)], dur), seeds))
        pts.append(Point("sens", name, 1, cdma_doc([dbp(**rule), tcp()], dur), seeds))
    for kb in paper.FILE_SIZES_KB:
        app = {"kind": "file", "size": f"{kb}KB"}
        for name, make in (("tcp", tcp), ("dbp", dbp)):
            pts.append(Point("file", name, kb, cdma_doc([make(name, app, 10.0)], 300.0), trials))
    folder = traces_dir()
    for down in sorted(folder.glob("*.down")) if folder else []:
        for name, make in (("tcp", tcp), ("dbp", dbp)):
            pts.append(Point(f"trace:{down.stem}", name, 0, trace_doc(down, [make(name)], 600.0 if not quick else 120.0)))
            starts = (10.0, 70.0, 130.0) if quick else tuple(10.0 + 60.0 * k for k in range(8))
            for s in starts:
                app = {"kind": "file", "size": "100KB"}
                pts.append(Point(f"tracefile:{down.stem}", name, s, trace_doc(down, [make(name, app, s)], s + 120.0)))
    return pts


def _last(series: pd.DataFrame, flow: str, metric: str) -> pd.Series:
    s = series[(series.entity == flow) & (series.metric == metric)]
    return pd.Series(s.value.to_numpy(), index=s.time_s.to_numpy())


def episode_mask(series: pd.DataFrame, times: np.ndarray) -> np.ndarray:
    """True at the times inside a de-allocation episode of the radio (its capacity series
    at zero) or within EPISODE_RECOVERY_S after one."""
    cap = series[series.metric == "capacity_bps"]
    cap = cap[cap.entity.str.startswith("air")]
    if cap.empty:
        return np.zeros(len(times), dtype=bool)
    dead = cap.time_s.to_numpy()[cap.value.to_numpy() <= 0.0]
    mask = np.zeros(len(times), dtype=bool)
    for t in dead:
        mask |= (times >= t - 0.5) & (times <= t + EPISODE_RECOVERY_S)
    return mask


def flow_metrics(point: Point, flows: pd.DataFrame, series: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per flow of a run."""
    rows = []
    for f in flows.itertuples():
        known = max(1, int(f.tx_packets) - int(f.in_flight_packets))
        lost = int(f.lost_packets)
        row: dict[str, Any] = {
            "flow": f.name, "protocol": f.protocol, "goodput_kbps": float(f.goodput_bps) / 1e3,
            "loss_pct": 100.0 * lost / known, "retransmissions": int(f.retransmissions),
            "timeouts": int(f.timeouts),
            "completion_s": float(f.completion_time_s) if pd.notna(f.completion_time_s) else np.nan,
        }
        rtt = _last(series, f.name, "rtt_s").dropna()
        if len(rtt):
            v = rtt.to_numpy()
            lo, hi = paper.GOOD_RTT_S
            row.update(rtt_good_frac=float(np.mean((v >= lo) & (v <= hi))),
                       rtt_over1_frac=float(np.mean(v > paper.OVERLOAD_RTT_S)), rtt_max_s=float(v.max()),
                       rtt_median_s=float(np.median(v)))
        run = _last(series, f.name, "longest_loss_run")
        if len(run):
            row["loss_run"] = float(run.max())
        srtt = _last(series, f.name, "srtt_s").dropna()
        if len(srtt):
            t, v = srtt.index.to_numpy(), srtt.to_numpy()
            keep = (t >= STARTUP_S) & ~episode_mask(series, t)
            bound = 1.2 * paper.R2_S
            row.update(srtt_p95_s=float(np.percentile(v, 95)),
                       srtt_bounded_frac=float(np.mean(v[keep] < bound)) if keep.any() else np.nan,
                       episode_time_frac=float(1.0 - keep[t >= STARTUP_S].mean()) if (t >= STARTUP_S).any() else 0.0)
        rows.append(row)
    return rows


@dataclass
class Results:
    runs: pd.DataFrame  # one row per (point, seed, flow)
    store: Path
    records: dict[tuple[str, str, float, int], str]  # (experiment, variant, x, seed) -> record

    def series(self, experiment: str, variant: str, x: float, seed: int = 1) -> pd.DataFrame:
        return Store(self.store).table(self.records[(experiment, variant, x, seed)], "series")


def run_all(pts: list[Point], workers: int, store: Path | None = None) -> Results:
    """Run every point's seeds (those already in `store` are not run again) and collect
    the per-flow metrics."""
    st, ran = run_points("dbp", str(SCENARIO), pts, workers, store, series=True)
    rows, records = [], {}
    for r in ran:
        p = r.point
        records[(p.experiment, p.variant, p.x, r.seed)] = r.record
        for m in flow_metrics(p, st.table(r.record), st.table(r.record, "series")):
            rows.append({**p.params, "seed": r.seed, "fingerprint": r.manifest["fingerprint"],
                         "wall_s": float(r.manifest.get("wall_time_s") or 0.0), **m})
    return Results(pd.DataFrame(rows), st.root, records)


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))

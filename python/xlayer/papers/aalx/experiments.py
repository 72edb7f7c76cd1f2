"""Akyildiz & Joe §3 (Fig. 4) as variations of `scenarios/atm_fig4.toml`: TCP over AAL5
and over AAL-X against the cell error rate, under the primary reading and the readings
of the sensitivity section, and a CBR probe that measures S-ARQ's recovery delay; all
run through the results store, with the per-run metrics."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ... import scenario as _scenario
from ...scenario import load
from .._shared import run_points

SCENARIO = _scenario.shipped("atm_fig4.toml")
AALS = ("aal5", "aalx")
# Fig. 4's points (§3.2) and two beyond them to show the trend; 0 measures the offered load.
CERS = (0.0, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3)
SENS_CERS = (0.0, 1e-4, 5e-4, 1e-3, 2e-3)
QUICK_SENS_CERS = (0.0, 1e-3)
PROBE_CERS = (0.0, 1e-3, 5e-3)
PROBE_RATE = "1Mbps"
PROBE_PACKET_BYTES = 1460
PROBE_I = 1  # one-cell CP-ARQ PDUs (L = 44 B): a lost cell is a lost PDU

# The primary reading (docs/reproductions/aalx.md, "Readings"): the Ethernet MSS, RFC
# 6298 §2.4's 1 s floor under §3.1's 1 s initial timer, independent cell errors.
PRIMARY_TCP: dict[str, Any] = {"mss": "1460B", "rcv_buffer": "65535B", "congestion_control": "newreno",
                               "min_rto": "1s", "initial_rto": "1s"}
RAYLEIGH_SLOW_HZ = 8.0  # 1 m/s at 2.4 GHz (lambda = 12.5 cm): pedestrian
RAYLEIGH_FAST_HZ = 111.0  # 50 km/h at 2.4 GHz


@dataclass(frozen=True)
class Reading:
    """One reading of what §3 leaves open: TCP options, the error process, the source."""

    tcp: dict[str, Any] = field(default_factory=dict)
    doppler_hz: float | None = None  # None: independent (Bernoulli) cell errors
    on_off: dict[str, Any] | None = None
    radio: dict[str, Any] = field(default_factory=dict)  # overrides of the hop's model


# The first is the primary reading (Fig. 4 proper); "rayleigh" is Fig. 4 with bursty
# errors. The others change one thing each (the sensitivity section).
READINGS: dict[str, Reading] = {
    "primary": Reading(),
    "rayleigh": Reading(doppler_hz=RAYLEIGH_SLOW_HZ),
    "MSS 536 B (RFC 879's default)": Reading(tcp={"mss": "536B"}),
    "MSS 9140 B (MTU 9180, RFC 1626)": Reading(tcp={"mss": "9140B"}),
    "min RTO 200 ms": Reading(tcp={"min_rto": "200ms"}),
    "Rayleigh 111 Hz (50 km/h)": Reading(doppler_hz=RAYLEIGH_FAST_HZ),
    "SACK (RFC 2018, 6675)": Reading(tcp={"sack": True}),
    "on/off FTP, exp. 2 s on / 2 s off": Reading(on_off={"on": {"dist": "exponential", "mean": "2s"},
                                                         "off": {"dist": "exponential", "mean": "2s"}}),
    # §2: "the ATM network management can give a congestion notification to the TCP
    # layer ... by monitoring RM cells": EFCI at the base-station port, backward RM cells
    # with CI = 1, TCP halving its window once per window on each (docs/wireless-atm.md).
    "RM-cell congestion notices to TCP (EFCI above 500 cells)": Reading(tcp={"congestion_notice": True},
                                                                        radio={"abr": {}}),
}
FIG4 = ("primary", "rayleigh")


@dataclass(frozen=True)
class Point:
    """One configuration: its experiment, reading (variant), AAL, CER and scenario."""

    experiment: str
    variant: str
    aal: str
    x: float  # CER
    doc: dict[str, Any] = field(hash=False, compare=False)
    trials: int = 1

    @property
    def params(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "variant": self.variant, "aal": self.aal, "x": self.x}


def _channel(cer: float, doppler_hz: float | None) -> dict[str, Any]:
    if cer == 0.0:
        return {"model": "none"}
    if doppler_hz is None:
        return {"model": "bernoulli", "cer": cer}
    return {"model": "rayleigh", "cer": cer, "doppler_hz": doppler_hz}


def fig4_doc(aal: str, cer: float, reading: Reading, duration_s: float) -> dict[str, Any]:
    """The shipped scenario with this AAL, CER and reading. AAL-X runs TCP with its
    retransmission timer off (§3.1, Configuration 2)."""
    doc = copy.deepcopy(load(SCENARIO))
    doc["simulation"]["duration"] = f"{duration_s}s"
    model = doc["radio"][0]["model"]
    model["aal"] = aal
    model["channel"] = _channel(cer, reading.doppler_hz)
    model.update(copy.deepcopy(reading.radio))
    flow = doc["flow"][0]
    flow["tcp"] = {**PRIMARY_TCP, **reading.tcp}
    if aal == "aalx":
        flow["tcp"]["rto"] = "off"
    if reading.on_off is not None:
        flow["on_off"] = reading.on_off
    return doc


def probe_doc(cer: float, duration_s: float) -> dict[str, Any]:
    """C3's probe: CBR UDP over AAL-X with one-cell PDUs, below the line rate, so a
    packet's delay above its CER-0 value is S-ARQ's recovery."""
    doc = fig4_doc("aalx", cer, READINGS["primary"], duration_s)
    doc["radio"][0]["model"]["aalx"] = {"pdu_len": PROBE_I}
    doc["flow"] = [{"name": "probe", "protocol": "udp", "src": "server", "dst": "mobile",
                    "app": {"kind": "cbr", "rate": PROBE_RATE, "packet_size": f"{PROBE_PACKET_BYTES}B"}}]
    return doc


def points(quick: bool) -> list[Point]:
    seeds = 3 if quick else 10
    dur = 60.0 if quick else 120.0
    pts = []
    for name, reading in READINGS.items():
        fig4 = name in FIG4
        cers = CERS if fig4 else (QUICK_SENS_CERS if quick else SENS_CERS)
        for aal in AALS:
            for cer in cers:
                if cer < 1e-4 and cer != 0.0 and reading.doppler_hz is not None:
                    continue  # the Rayleigh calibration covers CER >= 1e-4
                pts.append(Point("fig4" if fig4 else "sens", name, aal, cer, fig4_doc(aal, cer, reading, dur), seeds))
    for cer in PROBE_CERS:
        pts.append(Point("probe", "cbr", "aalx", cer, probe_doc(cer, dur), seeds))
    return pts


def flow_metrics(flows: pd.DataFrame) -> dict[str, Any]:
    f = flows.iloc[0]
    return {"goodput_bps": float(f.goodput_bps), "app_rx_bytes": int(f.app_rx_bytes),
            "delay_mean_s": float(f.delay_mean_s) if pd.notna(f.delay_mean_s) else float("nan"),
            "delay_p99_s": float(f.delay_p99_s) if pd.notna(f.delay_p99_s) else float("nan"),
            "delay_max_s": float(f.delay_max_s) if pd.notna(f.delay_max_s) else float("nan"),
            "rx_packets": int(f.rx_packets), "tx_packets": int(f.tx_packets),
            "retransmissions": int(f.retransmissions), "timeouts": int(f.timeouts),
            "fast_retransmits": int(f.fast_retransmits), "lost_channel": int(f.lost_channel),
            "lost_queue_overflow": int(f.lost_queue_overflow)}


@dataclass
class Results:
    runs: pd.DataFrame  # one row per (point, seed)
    store: Path


def run_all(pts: list[Point], workers: int, store: Path | None = None) -> Results:
    """Run every point's seeds (those already in `store`, or shared by two points, run
    once) and collect the per-run metrics."""
    st, ran = run_points("aalx", str(SCENARIO), pts, workers, store)
    rows = [{**r.point.params, "seed": r.seed, "fingerprint": r.manifest["fingerprint"],
             "wall_s": float(r.manifest.get("wall_time_s") or 0.0), **flow_metrics(st.table(r.record))} for r in ran]
    return Results(normalize(pd.DataFrame(rows)), st.root)


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Add `offered_bps` and `norm`: C0's offered load is the goodput the same
    configuration (experiment, reading, AAL) reaches at CER 0, averaged over its seeds."""
    df = df.copy()
    base = df[df.x == 0.0].groupby(["experiment", "variant", "aal"]).goodput_bps.mean()
    df["offered_bps"] = [base.get((e, v, a), float("nan")) for e, v, a in zip(df.experiment, df.variant, df.aal)]
    df["norm"] = df.goodput_bps / df.offered_bps
    return df


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))

"""Scenario dicts for the CLAMP reproduction (Andrew & Hanly), built from the TOML files in
`scenarios/` so that the files stay the single description of each topology."""

from __future__ import annotations

import copy
import math
import random
from typing import Any

from ... import scenario as _scenario

SCENARIOS = _scenario.shipped("clamp_fig2.toml").parent

# Table II: propagation (round-trip) delays d_i; S_i-X carries d_i / 2 each way.
FLOW_DELAYS_S = {"f30": 0.030, "f130": 0.130, "f10": 0.010, "f180": 0.180}
# Which AP queue (receiver) each flow uses: R3 and R4 share one device (§V-D).
FLOW_QUEUE = {"f30": "R1", "f130": "R2", "f10": "R34", "f180": "R34"}
QUEUES = ("R1", "R2", "R34")
PACKET_BYTES = 1500
BACKHAUL_BPS = 100e6
AIR_DELAY_S = 0.001
TAU_BYTES = 500.0

FADING_FILES = {"slow": "clamp_fig3_slow.toml", "fast": "clamp_fig3_fast.toml", "low_rate": "clamp_low_rate.toml"}


def load(name: str) -> dict[str, Any]:
    return _scenario.load(SCENARIOS / name)


def _radio(doc: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in doc["radio"] if r["name"] == "ap")


def as_newreno(doc: dict[str, Any], buffer_bytes: float | None = None) -> dict[str, Any]:
    """The NewReno experiment of a CLAMP scenario: no receiver agents, no AP price, and
    (optionally) the per-queue AP buffer set to `buffer_bytes`."""
    d = copy.deepcopy(doc)
    model = _radio(d)["model"]
    model.pop("clamp", None)
    if buffer_bytes is not None:
        model["queue"] = f"{int(buffer_bytes)}B"
    for f in d["flow"]:
        tcp = f.get("tcp")
        if tcp is not None:
            tcp.pop("agent", None)
    return d


def with_clamp_a(doc: dict[str, Any], a_bytes: float) -> dict[str, Any]:
    d = copy.deepcopy(doc)
    _radio(d)["model"].setdefault("clamp", {})["a"] = f"{int(a_bytes)}B"
    return d


def with_model(doc: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """`doc` with the downlink model's `settings` (e.g. a margin reading) applied."""
    d = copy.deepcopy(doc)
    _merge(_radio(d)["model"], settings)
    return d


def _merge(into: dict[str, Any], settings: dict[str, Any]) -> None:
    for k, v in settings.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = copy.deepcopy(v)


def with_duration(doc: dict[str, Any], seconds: float) -> dict[str, Any]:
    d = copy.deepcopy(doc)
    d["simulation"]["duration"] = f"{seconds:g}s"
    return d


def fig3(fading: str, protocol: str, value: float, duration_s: float) -> dict[str, Any]:
    """Fig. 3 topology with `fading` in slow/fast/low_rate; `value` is CLAMP's a or
    NewReno's per-queue buffer (bytes)."""
    base = load(FADING_FILES[fading])
    d = with_clamp_a(base, value) if protocol == "clamp" else as_newreno(base, value)
    return with_duration(d, duration_s)


def base_delay_s(flow: str) -> float:
    """Fixed part of a data packet's one-way delay: d_i/2, the 100 Mb/s backhaul
    serialization and the 1 ms air delay; the rest is time at the AP (queueing plus
    slot transmission), our 'queueing delay'."""
    return FLOW_DELAYS_S[flow] / 2 + PACKET_BYTES * 8 / BACKHAUL_BPS + AIR_DELAY_S


# --- Section V-H: one long flow plus successive short flows --------------------------

SHORT_FLOW_BYTES = 4000
SHORT_FLOW_SEED = 4  # the schedule below is drawn once; the TOML file holds its result
SHORT_FLOW_ALLOWANCE_S = 0.5  # time allowed for one 4000-byte transfer
SHORT_FLOW_MEAN_IDLE_S = 1.0


def short_flow_starts(duration_s: float = 300.0) -> list[float]:
    """Start times of the short flows: each starts `SHORT_FLOW_ALLOWANCE_S` plus an
    exponential idle time (mean `SHORT_FLOW_MEAN_IDLE_S`) after the previous one."""
    rng = random.Random(SHORT_FLOW_SEED)
    t = 5.0
    starts: list[float] = []
    while True:
        t += SHORT_FLOW_ALLOWANCE_S + rng.expovariate(1.0 / SHORT_FLOW_MEAN_IDLE_S)
        if t >= duration_s - 1.0:
            return starts
        starts.append(round(t, 3))


def short_flows_toml(duration_s: float = 300.0) -> str:
    """Text of scenarios/clamp_short_flows.toml (a test checks the file matches)."""
    starts = short_flow_starts(duration_s)
    head = f'''# CLAMP Andrew & Hanly §V-H: flow dynamics with fading. One mobile R, one AP queue: a
# long-lived bulk flow (d = 30 ms) and {len(starts)} successive short flows of {SHORT_FLOW_BYTES} bytes
# (d = 30 ms), each starting {SHORT_FLOW_ALLOWANCE_S} s plus an exponential idle time (mean
# {SHORT_FLOW_MEAN_IDLE_S} s) after the previous one (drawn once by
# xlayer.papers.clamp.scenarios.short_flow_starts, Python random seed {SHORT_FLOW_SEED}).
# Fast fading (10 m/s, n = 15), as in Fig. 4(c). The paper gives neither the delays
# nor the idle-time law; these are our choices (docs/reproductions/clamp.md).
#
# This file runs CLAMP (AP buffer 6 MB, a set by the reproduction to match the NewReno
# run's mean queue); NewReno runs it without agents and price, with a 60 kB buffer.
#
# Run:   xlayer run scenarios/clamp_short_flows.toml

name = "clamp_short_flows"

[simulation]
duration = "{duration_s:g}s"

[output]
series_interval = "100ms"

[[node]]
name = "S1"
[[node]]
name = "S2"
[[node]]
name = "X"
kind = "router"
[[node]]
name = "R"

[[link]]
name = "s1x"
a = "S1"
b = "X"
rate = "100Mbps"
delay = "15ms"

[[link]]
name = "s2x"
a = "S2"
b = "X"
rate = "100Mbps"
delay = "15ms"

[[radio]]
name = "ap"
from = "X"
to = ["R"]
uplink_rate = "100Mbps"
uplink_delay = "1ms"
model = {{ kind = "shared_downlink", fading = {{ kind = "jakes", doppler_hz = 60.0, generators = 20 }}, slot = "3ms", max_rate = "10Mbps", mean_snr = 4.0, max_attempts = 15, target_loss = 0.001, air_delay = "1ms", queue = "6MB", clamp = {{ a = "20000B" }} }}

[[flow]]
name = "long"
protocol = "tcp"
src = "S1"
dst = "R"
app = {{ kind = "bulk" }}
tcp = {{ mss = "1460B", agent = {{ kind = "clamp", tau = "500B" }} }}
'''
    flows = [
        f'''
[[flow]]
name = "short{i:03d}"
protocol = "tcp"
src = "S2"
dst = "R"
app = {{ kind = "file", size = "{SHORT_FLOW_BYTES}B" }}
start = "{t:g}s"
tcp = {{ mss = "1460B", agent = {{ kind = "clamp", tau = "500B" }} }}
'''
        for i, t in enumerate(starts)
    ]
    return head + "".join(flows)


def jain(x: list[float] | Any) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2)."""
    xs = [float(v) for v in x]
    s, sq = sum(xs), sum(v * v for v in xs)
    return s * s / (len(xs) * sq) if sq > 0 else math.nan

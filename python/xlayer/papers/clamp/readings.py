"""The readings Andrew & Hanly leave open, run by the reproduction itself: four readings
of the backoff margin's loss target on the 10 m/s channel (§V-B, Table I) and the time
constant of the AP's queue average (§IV-A). Each alternative re-runs the 10 m/s sweeps
it touches; everything else is the primary run. The primary readings and the evidence
both ways: docs/reproductions/clamp.md, "Primary readings"."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import checks, dynamics
from . import experiments as ex
from .experiments import Sweep


@dataclass(frozen=True)
class Reading:
    key: str
    label: str
    model: tuple[tuple[str, Any], ...]  # settings of the 10 m/s downlink
    protocols: tuple[str, ...]  # whose 10 m/s sweeps it re-runs


PRIMARY = Reading("literal", "residual loss 10⁻³ after n = 15 (primary)", (), ())
READINGS = (
    PRIMARY,
    Reading("binding", "residual loss 10⁻³ after n = 5", (("max_attempts", 5),), ("clamp", "newreno")),
    Reading("slot5", "5% of slots failing", (("target_slot_failure", 0.05),), ("clamp", "newreno")),
    Reading("fixed3", "fixed 3 dB margin", (("margin_db", 3.0),), ("clamp", "newreno")),
    Reading("T0.5ms", "queue average T = 0.5 ms (margin primary)", (("clamp", {"time_constant": "0.5ms"}),),
            ("clamp",)),
)
TARGET_S = 0.050


@dataclass
class Outcome:
    reading: Reading
    sweeps: dict[tuple[str, str], pd.DataFrame]  # the primary's, with the re-run 10 m/s curves
    fig6: dict[str, Any]  # the 10 m/s CLAMP/NewReno series runs at 50 ms
    checks: list[checks.Check]  # C3-C6 and C6m


def run(s: Any, sweeps: dict[tuple[str, str], pd.DataFrame], fig6_primary: dict[float, dict[str, Any]],
        slow_state: dict[str, Any], workers: int, store: Path | None, seeds: tuple[int, ...]) -> list[Outcome]:
    """Every reading's sweeps, its 50 ms series runs and its checks. `slow_state`: the
    0.1 m/s CLAMP series run at 50 ms (C6m's reference, the same under every reading)."""
    out = []
    for r in READINGS:
        sw = dict(sweeps)
        for proto in r.protocols:
            values = s.a_values if proto == "clamp" else s.buffers
            sw[("fast", proto)] = ex.run_sweep(Sweep("fast", proto, values, seeds, s.duration_s, s.warm_s,
                                                     r.key, r.model), workers, store)
        if r.protocols:
            f6 = dynamics.fig6("fast", sw[("fast", "clamp")], sw[("fast", "newreno")], (TARGET_S,), s.duration_s,
                               dict(r.model), s.warm_s)[TARGET_S]
        else:
            f6 = fig6_primary[TARGET_S]
        out.append(Outcome(r, sw, f6, checks_for(sw, f6, slow_state)))
    return out


def checks_for(sw: dict[tuple[str, str], pd.DataFrame], fast: dict[str, Any], slow: dict[str, Any]) -> list[checks.Check]:
    fc, fr = sw[("fast", "clamp")], sw[("fast", "newreno")]
    slots = {f: ex.summary_at(sw[(f, "clamp")], "slot_failure", TARGET_S)["mean"] for f in ("slow", "fast")}
    return [checks.c3(fc, fr), checks.c4(sw), checks.c5(fc, fr), checks.c6(sw),
            checks.c6_mechanism({"slow": slow["margin_db"], "fast": fast["margin_db"]}, slots)]


def flips(outcomes: list[Outcome]) -> list[tuple[str, str, bool | None, bool | None]]:
    """(reading, check, primary outcome, outcome under the reading) where they differ."""
    base = {c.name: c.passed for c in outcomes[0].checks}
    return [(o.reading.key, c.name, base[c.name], c.passed) for o in outcomes[1:] for c in o.checks
            if c.passed != base[c.name]]


def row(o: Outcome) -> dict[str, Any]:
    """The sensitivity table's numbers for one reading (10 m/s, at 50 ms)."""
    fc, fr = o.sweeps[("fast", "clamp")], o.sweeps[("fast", "newreno")]
    at = {k: ex.summary_at(df, c, TARGET_S) for k, df, c in (
        ("loss_c", fc, "radio_loss"), ("loss_r", fr, "radio_loss"), ("slots", fc, "slot_failure"),
        ("total_c", fc, "total"), ("total_r", fr, "total"), ("to_c", fc, "timeouts"), ("to_r", fr, "timeouts"),
        ("to10_c", fc, "timeouts_f10"))}
    return {"reading": o.reading.label, "capacity_bps": o.fig6["capacity_bps"], "margin_db": o.fig6["margin_db"],
            **at, "awnd_below_cwnd": o.fig6["awnd_below_cwnd"],
            "checks": {c.name: c.passed for c in o.checks}}

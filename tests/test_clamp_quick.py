"""CLAMP (Andrew & Hanly), fast checks: the fluid model (C1), the scenario files, a short
run of the packet model, and that the paper checks can fail."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from xlayer.papers import clamp_fluid as fluid
from xlayer.papers.clamp import checks, experiments, readings, report_sensitivity, scenarios


def test_theorem1_boundary_is_half_pi():
    b = fluid.stability_boundary(tol=1e-3)
    assert abs(b - math.pi / 2) <= 0.05
    assert fluid.is_stable(1.5) and not fluid.is_stable(1.65)
    assert fluid.growth_rate(1.0) < fluid.growth_rate(1.5) < 0 < fluid.growth_rate(1.6)


@pytest.mark.parametrize("delays", [[0.05], [0.05, 0.05, 0.05], [0.01, 0.18], [0.03, 0.13, 0.01, 0.18]])
def test_k_flow_equilibrium_is_eq_11_and_fair(delays):
    run = fluid.integrate_flows(delays, duration_s=40.0, step_s=1e-3, sample_every=10)
    k = len(delays)
    assert run.q_star == pytest.approx((k * 500 + 5500) / 1.0)
    q_err, mu_err = run.final_errors()
    assert q_err < 0.01 and mu_err < 0.01
    assert run.settling_time(0.01) < 35.0


def test_equal_delays_reduce_to_eq_12():
    # With equal delays the queue obeys dq/dt = (k tau + a - b q(t - d))/d whatever the
    # shares: check it along the trajectory (finite differences, away from q = 0).
    run = fluid.integrate_flows([0.05] * 3, duration_s=5.0, step_s=1e-3)
    lag = 50
    dq = np.gradient(run.q, run.t)[lag + 1 : -1]
    rhs = (3 * 500 + 5500 - run.q[1 : -lag - 1]) / 0.05
    assert np.max(np.abs(dq - rhs)) < 0.02 * np.max(np.abs(rhs))


def test_fifo_closure_matches_with_equal_delays():
    a = fluid.integrate_flows([0.05, 0.05], duration_s=30.0, closure="fifo", sample_every=10)
    assert max(a.final_errors()) < 0.01


def test_short_flow_scenario_file_matches_its_generator():
    text = (scenarios.SCENARIOS / "clamp_short_flows.toml").read_text()
    assert text == scenarios.short_flows_toml()


def test_packet_model_smoke():
    rows = {}
    for proto, value in (("clamp", 20_000), ("newreno", 40_000)):
        s = experiments.Sweep("fast", proto, (value,), (1,), 40.0, 10.0)
        rows[proto] = experiments.run_sweep(s, workers=1).iloc[0]
    for r in rows.values():
        assert 2e6 < r["total"] < 7e6, r["total"]  # 10 Mb/s peak, ~44% slot failures
        assert 0.005 < r["qdelay"] < 1.0
    # CLAMP keeps the three queues' shares even; NewReno starves the 180 ms flow.
    assert rows["clamp"]["jain_queues"] > 0.9
    assert rows["newreno"]["thr_f10"] > 2 * rows["newreno"]["thr_f180"]
    assert rows["clamp"]["lost_f30"] == 0


def _synthetic(protocol: str, equal: bool) -> pd.DataFrame:
    rows = []
    for seed in (1, 2, 3):
        for d in (0.02, 0.06, 0.12, 0.2):
            thr = [1.0, 1.0, 0.5, 0.5] if equal else [2.0, 1.0, 2.0, 0.05]
            f = 1 + d
            m = {f"thr_{n}": t * 1e6 * f for n, t in zip(scenarios.FLOW_DELAYS_S, thr)}
            rows.append({"seed": seed, "value": d, "qdelay": d, **m, "total": sum(m.values()),
                         "jain4": scenarios.jain(list(m.values())),
                         "jain_queues": scenarios.jain([m["thr_f30"], m["thr_f130"], m["thr_f10"] + m["thr_f180"]]),
                         "download_s": float(np.mean([8e6 / x for x in m.values()])), "protocol": protocol,
                         "radio_loss": 1e-3 * (1 + d), "slot_failure": 0.05, "timeouts": 2.0, "timeouts_f10": 1.0,
                         **{f"timeouts_{n}": 0.5 for n in ("f30", "f130", "f180")}})
    return pd.DataFrame(rows)


def test_checks_fail_when_the_data_say_so():
    fair, unfair = _synthetic("clamp", True), _synthetic("newreno", False)
    assert checks.c3(fair, unfair).passed
    assert not checks.c3(unfair, fair).passed  # swapped: "CLAMP" unfair, "NewReno" fair
    assert checks.c5(fair, unfair).passed and not checks.c5(unfair, fair).passed
    sweeps = {(f, p): d for f in ("slow", "fast") for p, d in (("clamp", fair), ("newreno", unfair))}
    assert not checks.c4(sweeps).passed  # totals differ by far more than 15%
    assert not checks.c6(sweeps).passed  # fast equals slow here


def test_c7_fading_statistics_are_computed_from_the_generator():
    from xlayer.papers.clamp import checks

    c = checks.c7(realisations=300)
    assert c.passed, c.summary
    for v in c.numbers.values():
        assert abs(v["mean_power"] - 1) <= 0.02 and v["ks"] <= 0.02


def test_readings_section_has_a_row_per_reading_and_names_flips(tmp_path):
    fair, unfair = _synthetic("clamp", True), _synthetic("newreno", False)
    sweeps = {(f, p): d for f in ("slow", "fast", "low_rate") for p, d in (("clamp", fair), ("newreno", unfair))}
    slow = {"margin_db": 0.2}
    outcomes = []
    for i, r in enumerate(readings.READINGS):
        sw = dict(sweeps)
        if r.key == "binding":  # an alternative under which CLAMP's shared queue is unfair
            sw[("fast", "clamp")] = unfair
        f6 = {"capacity_bps": 5e6 + i, "margin_db": 0.0 if i == 0 else 3.0, "awnd_below_cwnd": 0.9}
        outcomes.append(readings.Outcome(r, sw, f6, readings.checks_for(sw, f6, slow)))
    lines, fig = report_sensitivity.section(tmp_path, outcomes, True, 2, None, None)
    text = "\n".join(lines)
    assert fig.exists() and fig.with_suffix(".svg").exists()
    for r in readings.READINGS:
        assert f"| {r.label} |" in text
    c6m = {o.reading.key: next(c for c in o.checks if c.name == "C6m").passed for o in outcomes}
    assert c6m == {"literal": False, "binding": True, "slot5": True, "fixed3": True, "T0.5ms": True}
    assert "C3 PASS → **FAIL** under binding" in text
    assert "C6m **FAIL** → PASS under slot5" in text


def test_every_reading_is_a_valid_scenario():
    from xlayer import scenario

    for r in readings.READINGS:
        for proto in r.protocols:  # the runs each reading makes
            doc = scenarios.with_model(scenarios.fig3("fast", proto, 20_000, 10.0), dict(r.model))
            scenario.validate(doc)

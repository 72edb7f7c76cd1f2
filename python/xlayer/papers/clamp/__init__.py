"""CLAMP (Andrew & Hanly: Andrew & Hanly, "Active queue management for fair resource
allocation in wireless networks"): experiments, the paper's numbers, checks C1-C7.

    from xlayer.papers import clamp
    failed = clamp.reproduce(pathlib.Path("out/clamp"), quick=True)

writes report.md and figures (PNG and SVG: Figs. 2, 4, 5, 6, 7, 8, the §V-H dynamics and
the margin readings) and returns the number of failed checks under the primary readings.
The readings the paper leaves open are run too (`readings.py`; quick versions in quick
mode). The fluid model is `xlayer.papers.clamp_fluid`.
"""

from __future__ import annotations

import pathlib
import time
from dataclasses import dataclass

from ...api import commit, version
from ...native import _git_head
from . import checks, dynamics, experiments, figures, readings, report, report_sensitivity, reported, scenarios, sensitivity
from .experiments import Sweep
from .report import PAPER

__all__ = ["PAPER", "Settings", "reproduce", "settings", "checks", "dynamics", "experiments", "figures",
           "readings", "report", "report_sensitivity", "reported", "scenarios", "sensitivity"]


@dataclass(frozen=True)
class Settings:
    quick: bool
    seeds: tuple[int, ...]
    duration_s: float
    warm_s: float
    a_values: tuple[float, ...]
    buffers: tuple[float, ...]
    low_a_values: tuple[float, ...]
    low_buffers: tuple[float, ...]
    low_seeds: tuple[int, ...]
    vh_a_values: tuple[float, ...]
    c7_realisations: int
    reading_seeds: tuple[int, ...]  # seeds of the alternative readings' sweeps


def settings(quick: bool) -> Settings:
    """Sweep points chosen to span about 20-400 ms of mean queueing delay (AP buffer
    per receiver queue for NewReno, a for CLAMP with a 6 MB buffer)."""
    if quick:
        return Settings(True, (1, 2), 150.0, 15.0,
                        (1500, 5000, 15_000, 45_000, 90_000), (10_000, 20_000, 40_000, 90_000),
                        (0, 3000, 12_000), (3000, 9000, 24_000), (1,),
                        (10_000, 30_000, 60_000), 500, (1, 2))
    return Settings(False, (1, 2, 3, 4, 5, 6), 300.0, 20.0,
                    (1000, 2500, 5000, 10_000, 20_000, 40_000, 80_000),
                    (8000, 12_000, 18_000, 27_000, 40_000, 60_000, 90_000, 135_000),
                    (0, 1500, 3000, 6000, 12_000, 24_000), (3000, 4500, 6000, 9000, 15_000, 24_000, 36_000),
                    (1, 2, 3), (5000, 10_000, 20_000, 30_000, 45_000, 60_000), 2000, (1, 2, 3))


def reproduce(out_dir: pathlib.Path, quick: bool = False, workers: int = 2) -> int:
    """Run the reproduction into `out_dir` (report.md, PNG + SVG figures, sweep CSVs);
    return the number of failed checks under the primary readings (checks that could
    not run are reported, not counted)."""
    start = time.monotonic()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = settings(quick)
    store = out / "store"  # every sweep's runs: an interrupted reproduction resumes from it
    sweeps = {}
    for fading in ("slow", "fast"):
        sweeps[(fading, "clamp")] = experiments.run_sweep(
            Sweep(fading, "clamp", s.a_values, s.seeds, s.duration_s, s.warm_s), workers, store)
        sweeps[(fading, "newreno")] = experiments.run_sweep(
            Sweep(fading, "newreno", s.buffers, s.seeds, s.duration_s, s.warm_s), workers, store)
    sweeps[("low_rate", "clamp")] = experiments.run_sweep(
        Sweep("low_rate", "clamp", s.low_a_values, s.low_seeds, s.duration_s, s.warm_s), workers, store)
    sweeps[("low_rate", "newreno")] = experiments.run_sweep(
        Sweep("low_rate", "newreno", s.low_buffers, s.low_seeds, s.duration_s, s.warm_s), workers, store)
    fig2 = dynamics.fig2()
    fig6 = dynamics.fig6("fast", sweeps[("fast", "clamp")], sweeps[("fast", "newreno")], (0.050, 0.180), s.duration_s,
                         warm_s=s.warm_s)
    slow50 = dynamics.fig6("slow", sweeps[("slow", "clamp")], sweeps[("slow", "newreno")], (readings.TARGET_S,),
                           s.duration_s, warm_s=s.warm_s)[readings.TARGET_S]
    vh = dynamics.short_flows(s.duration_s, s.vh_a_values)
    outcomes = readings.run(s, sweeps, fig6, slow50, workers, store, s.reading_seeds)
    # C3, C4, C5, C6 and C6m under the primary readings
    results = [checks.c1(quick), checks.c2(fig2), *outcomes[0].checks, checks.c7(s.c7_realisations)]
    figs = figures.all_figures(out, fig2, sweeps, fig6, vh)
    fig2_t = fig3_t = None
    if not quick:
        fig2_t = sensitivity.fig2_queue_errors()
        fig3_t = sensitivity.fig3_shared_queue((5000, 10_000, 20_000), s.seeds[:3], s.duration_s, s.warm_s, workers, store)
    extra, sens_fig = report_sensitivity.section(out, outcomes, quick, len(s.reading_seeds), fig2_t, fig3_t)
    extra = report_sensitivity.radio_loss_lines(sweeps) + extra
    figs.append(sens_fig)
    info = {"quick": quick, "seeds": len(s.seeds), "duration_s": s.duration_s, "warm_s": s.warm_s,
            "version": version(), "commit": commit(), "source_commit": _git_head(pathlib.Path(__file__).resolve().parent)}
    for key, df in sweeps.items():
        df.to_csv(out / f"sweep_{key[0]}_{key[1]}.csv", index=False)
    for o in outcomes[1:]:
        for proto in o.reading.protocols:
            o.sweeps[("fast", proto)].to_csv(out / f"sweep_fast_{proto}_{o.reading.key}.csv", index=False)
    report.write(out, results, figs, sweeps, fig2, fig6, vh, info, time.monotonic() - start, extra,
                 reported.rows(sweeps, fig6, vh))
    return sum(c.passed is False for c in results)

"""Koga, Iida, Oie, "Receiver-based flow control mechanism with interlayer collaboration
for real-time communication quality in W-CDMA networks" (Koga et al.): Tables 2-5 and
Figs. 2-8 regenerated on `scenarios/koga_fig1.toml`, with checks C1-C7 of issue 3.

    from xlayer.papers import koga
    failed = koga.reproduce(Path("out/koga"), quick=True)

Modelling choices: docs/reproductions/koga.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...api import commit, version
from ...native import _git_head
from . import checks, experiments, paper, sensitivity
from .report import write
from .report_sensitivity import checks_with_sim

__all__ = ["reproduce", "checks", "experiments", "paper", "sensitivity", "SEEDS_FULL", "SEEDS_QUICK"]

SEEDS_FULL = 20
SEEDS_QUICK = 4


def reproduce(out_dir: Path, quick: bool = False, workers: int = 2) -> int:
    """Run the experiments, write report.md, the figures and results.csv into `out_dir`,
    print the check outcomes, and return the number of failed checks. Every run is a
    record of the store `out_dir/store`: started again after an interruption, the
    reproduction computes only the runs it lacks."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    exps = experiments.experiments(quick)
    seeds = range(1, (SEEDS_QUICK if quick else SEEDS_FULL) + 1)
    t0 = time.perf_counter()
    df = experiments.run_all(exps, seeds, workers or experiments.default_workers(), store=out_dir / "store")
    df.to_csv(out_dir / "results.csv", index=False)
    c1_runs = sensitivity.c1_sim_runs(seeds, workers or experiments.default_workers())
    c1_runs.to_csv(out_dir / "c1_sim.csv", index=False)
    wall = time.perf_counter() - t0
    results = checks_with_sim(checks.all_checks(df), c1_runs)
    meta = {"quick": quick, "seeds": len(seeds), "runs": int(df.fingerprint.nunique()),
            "points": int(df.groupby(["experiment", "rate_kbps", "x"], dropna=False).ngroups),
            "wall_s": wall, "workers": workers, "version": version(), "commit": commit(),
            # An editable install runs this checkout's Python over an extension built earlier.
            "source_commit": _git_head(Path(__file__).resolve().parent)}
    path = write(out_dir, df, exps, results, meta, c1_runs)
    for c in results:
        print(f"{c.name} {'PASS' if c.passed else 'FAIL'}: {c.detail}")
    print(f"report: {path} ({wall:.0f} s)")
    return sum(not c.passed for c in results)

"""Sensitivity of the reproduction to the one unit the paper leaves open that moves
results most: the time constant T of the AP's queue average (e^{−2I}: T = 0.5 s with I
in seconds, our default; 0.5 ms with I in milliseconds). Full mode only."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import dynamics
from . import experiments as ex
from . import scenarios as sc

TIME_CONSTANTS = ("500ms", "0.5ms")


def _with_tc(doc: dict[str, Any], tc: str) -> dict[str, Any]:
    d = copy.deepcopy(doc)
    sc._radio(d)["model"]["clamp"]["time_constant"] = tc
    return d


def fig2_queue_errors() -> pd.DataFrame:
    rows = []
    for tc in TIME_CONSTANTS:
        res = ex.run_series(_with_tc(sc.load("clamp_fig2.toml"), tc))
        q = ex.metric_series(res, "ap", "queue_bytes")
        for t0, t1, active in dynamics.FIG2_PHASES:
            w = q[(q.index >= t0 + dynamics.FIG2_SKIP_S) & (q.index < t1)]
            q_star = len(active) * dynamics.FIG2_TAU + dynamics.FIG2_A
            rows.append({"T": tc, "phase": f"{t0:g}-{t1:g}", "queue_err": w.mean() / q_star - 1,
                         "queue_sd": w.std(), "lost": int(res.flows.lost_packets.sum())})
    return pd.DataFrame(rows)


def fig3_shared_queue(a_values: tuple[float, ...], seeds: tuple[int, ...], duration_s: float, warm_s: float,
                      workers: int, store: Path | None = None) -> pd.DataFrame:
    """Mean over seeds of delay, queue Jain index and the shared-queue ratio f10/f180."""
    rows = []
    for fading in ("fast", "slow"):
        for tc in TIME_CONSTANTS:
            base = _with_tc(sc.fig3(fading, "clamp", a_values[0], duration_s), tc)
            grid = {"radio.ap.model.clamp.a": [f"{int(a)}B" for a in a_values],
                    "simulation.duration": [f"{warm_s:g}s", f"{duration_s:g}s"]}
            df = ex.stored_sweep(base, grid, seeds, workers, store, f"sensitivity-{fading}-T{tc}")
            for (a, seed), g in df.groupby(["radio.ap.model.clamp.a", "seed"]):
                w = g[g["simulation.duration"] == f"{warm_s:g}s"].set_index("name")
                e = g[g["simulation.duration"] == f"{duration_s:g}s"].set_index("name")
                m = ex.window_metrics(w, e, duration_s - warm_s)
                rows.append({"fading": fading, "T": tc, "a": int(str(a).rstrip("B")), "seed": seed,
                             "qdelay_ms": 1e3 * m["qdelay"], "jain_queues": m["jain_queues"],
                             "f10_over_f180": m["thr_f10"] / m["thr_f180"], "total_mbps": m["total"] / 1e6})
    out = pd.DataFrame(rows)
    means = out.groupby(["fading", "T", "a"], sort=False)[["qdelay_ms", "jain_queues", "f10_over_f180", "total_mbps"]]
    return means.mean().reset_index().sort_values(["fading", "T", "a"], ascending=[True, False, True], kind="stable")


def markdown(fig2: pd.DataFrame, fig3: pd.DataFrame) -> list[str]:
    lines = ["## Sensitivity: the queue-average time constant T", "",
             "Fig. 2, mean queue error per phase (and packets lost):", ""]
    for tc, g in fig2.groupby("T", sort=False):
        errs = ", ".join(f"{x:+.1%}" for x in g["queue_err"])
        lines.append(f"- T = {tc}: {errs}; queue SD {np.mean(g['queue_sd']):.0f} B; lost {g['lost'].iloc[0]}")
    lines += ["", "Fig. 3, CLAMP (means over seeds):", "", "| channel | T | a (B) | delay (ms) | queue Jain | f10/f180 | total (Mb/s) |",
              "|---|---|---|---|---|---|---|"]
    for _, r in fig3.iterrows():
        lines.append(f"| {r.fading} | {r['T']} | {r.a} | {r.qdelay_ms:.0f} | {r.jain_queues:.3f} | {r.f10_over_f180:.2f} | {r.total_mbps:.2f} |")
    return lines + [""]

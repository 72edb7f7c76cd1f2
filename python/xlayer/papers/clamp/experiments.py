"""Running the CLAMP experiments and turning per-flow tables into the paper's metrics.

Statistics exclude a warm-up: every run is made twice, cut at `warm_s` and at the end
(the shorter run is an exact prefix of the longer one with the same seed), and
counters are differenced. The radio's margins, PF averages and mu_c are already
settled at t = 0 (the model's own channel warm-up); the warm-up here covers TCP and
CLAMP slow start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ...api import RunResult
from ...plan import Plan
from ...api import run as _run
from ...sweeps import sweep as _xsweep
from ...stats import mean_ci
from . import scenarios as sc

FILE_BYTES = 1_000_000  # Fig. 5(b): "a file of size 1 Mbyte"


@dataclass(frozen=True)
class Sweep:
    """One curve of Figs. 4, 5, 7, 8: a protocol on a channel, over a parameter."""

    fading: str  # slow | fast | low_rate
    protocol: str  # clamp | newreno
    values: tuple[float, ...]  # CLAMP a or NewReno per-queue buffer, bytes
    seeds: tuple[int, ...]
    duration_s: float
    warm_s: float
    reading: str = ""  # a reading's key (readings.py); "" for the primary
    model: tuple[tuple[str, Any], ...] = ()  # the reading's settings of the downlink model

    @property
    def path(self) -> str:
        return "radio.ap.model.clamp.a" if self.protocol == "clamp" else "radio.ap.model.queue"

    @property
    def name(self) -> str:
        return f"{self.fading}-{self.protocol}" + (f"-{self.reading}" if self.reading else "")


def stored_sweep(base: dict[str, Any], grid: dict[str, list[Any]], seeds: Sequence[int], workers: int,
                 store: Path | None, name: str) -> pd.DataFrame:
    """`xlayer.sweep` in memory, or into `store` as plan `name` (runs already there are
    not run again); a failed run stops the reproduction either way."""
    if store is None:
        return _xsweep(base, grid=grid, seeds=list(seeds), workers=workers, progress=False)
    df = _xsweep(Plan(base, grid=grid, seeds=list(seeds), name=name), workers=workers, progress=False,
                 store=store)
    failed = df.attrs["xlayer"]["failed"]
    if failed:
        f = failed[0]
        raise RuntimeError(f"{len(failed)} CLAMP run(s) of {name} failed, the first ({f['params']}, "
                           f"seed {f['seed']}): {f['message']}")
    return df


def run_sweep(s: Sweep, workers: int, store: Path | None = None) -> pd.DataFrame:
    """Per (value, seed): mean queueing delay, per-flow and total goodput, fairness,
    mean 1 MB download time, timeouts, achieved radio loss; with a store also the
    fraction of failed slots. One row per run pair."""
    base = sc.with_model(sc.fig3(s.fading, s.protocol, s.values[0], s.duration_s), dict(s.model))
    cuts = [f"{s.warm_s:g}s", f"{s.duration_s:g}s"]
    grid = {s.path: [f"{int(v)}B" for v in s.values], "simulation.duration": cuts}
    df = stored_sweep(base, grid, s.seeds, workers, store, s.name)
    slots = _slot_failures(store, s.name, s.path, cuts) if store is not None else {}
    rows = []
    for (value, seed), g in df.groupby([s.path, "seed"], sort=False):
        w = g[g["simulation.duration"] == cuts[0]].set_index("name")
        e = g[g["simulation.duration"] == cuts[1]].set_index("name")
        rows.append({"value": float(str(value).rstrip("B")), "seed": int(seed),
                     **window_metrics(w, e, s.duration_s - s.warm_s),
                     "slot_failure": slots.get((str(value), int(seed)), math.nan)})
    out = pd.DataFrame(rows)
    out.insert(0, "protocol", s.protocol)
    out.insert(0, "fading", s.fading)
    return out.sort_values(["value", "seed"]).reset_index(drop=True)


def window_metrics(warm: pd.DataFrame, end: pd.DataFrame, span_s: float) -> dict[str, float]:
    """Metrics over (warm, end] from the two cuts' flow tables (indexed by flow name)."""
    m: dict[str, float] = {}
    qdelay: dict[str, list[tuple[float, float]]] = {q: [] for q in sc.QUEUES}
    for f in sc.FLOW_DELAYS_S:
        thr = (end.at[f, "app_rx_bytes"] - warm.at[f, "app_rx_bytes"]) * 8 / span_s
        n1, n2 = float(warm.at[f, "rx_packets"]), float(end.at[f, "rx_packets"])
        d1 = float(warm.at[f, "delay_mean_s"]) if n1 else 0.0
        d2 = float(end.at[f, "delay_mean_s"])
        mean_delay = (d2 * n2 - d1 * n1) / (n2 - n1) if n2 > n1 else math.nan
        qd = mean_delay - sc.base_delay_s(f)
        qdelay[sc.FLOW_QUEUE[f]].append((qd, n2 - n1))
        m[f"thr_{f}"] = thr
        m[f"qdelay_{f}"] = qd
        m[f"timeouts_{f}"] = float(end.at[f, "timeouts"] - warm.at[f, "timeouts"])
        m[f"lost_{f}"] = float(end.at[f, "lost_packets"] - warm.at[f, "lost_packets"])
    per_queue = [sum(d * n for d, n in v) / sum(n for _, n in v) for v in qdelay.values()]
    m["qdelay"] = float(np.mean(per_queue))  # §V-D: "the average is taken across all queues"
    thr = [m[f"thr_{f}"] for f in sc.FLOW_DELAYS_S]
    m["total"] = float(sum(thr))
    m["jain4"] = sc.jain(thr)
    m["jain_queues"] = sc.jain([sum(m[f"thr_{f}"] for f in sc.FLOW_QUEUE if sc.FLOW_QUEUE[f] == q) for q in sc.QUEUES])
    m["download_s"] = float(np.mean([FILE_BYTES * 8 / x if x > 0 else math.inf for x in thr]))
    m["timeouts"] = float(sum(m[f"timeouts_{f}"] for f in sc.FLOW_DELAYS_S))
    # Achieved radio loss (Table I's "Pk loss rate" of X-R_i): data packets the downlink
    # dropped after n failed attempts over those it delivered or dropped so.
    arq = sum(float(end.at[f, "lost_arq_discard"] - warm.at[f, "lost_arq_discard"]) for f in sc.FLOW_DELAYS_S)
    rx = sum(float(end.at[f, "rx_packets"] - warm.at[f, "rx_packets"]) for f in sc.FLOW_DELAYS_S)
    m["radio_loss"] = arq / (arq + rx) if arq + rx > 0 else math.nan
    return m


def _slot_failures(store: Path, plan: str, path: str, cuts: list[str]) -> dict[tuple[str, int], float]:
    """Per (swept value, seed): failed ÷ scheduled slots of the downlink over (warm, end],
    from the link tables of the store's records."""
    from ...store import Store

    links = Store(store).frame(plan, table="links", columns=["link", "direction", "tx_units", "failed_units"])
    links = links[(links["link"] == "ap") & (links["direction"] == "downlink")]
    out = {}
    for (value, seed), g in links.groupby([path, "seed"], sort=False):
        w = g[g["simulation.duration"] == cuts[0]].iloc[0]
        e = g[g["simulation.duration"] == cuts[1]].iloc[0]
        units = float(e.tx_units - w.tx_units)
        out[(str(value), int(seed))] = float(e.failed_units - w.failed_units) / units if units else math.nan
    return out


def at_delay(df: pd.DataFrame, column: str, target_s: float) -> list[float]:
    """Per seed, `column` linearly interpolated at mean queueing delay `target_s` (seeds
    whose swept delays do not bracket the target are left out)."""
    out = []
    for _, g in df.groupby("seed"):
        g = g.sort_values("qdelay")
        x, y = g["qdelay"].to_numpy(), g[column].to_numpy()
        if len(x) >= 2 and x[0] <= target_s <= x[-1]:
            out.append(float(np.interp(target_s, x, y)))
    return out


def summary_at(df: pd.DataFrame, column: str, target_s: float) -> dict[str, float]:
    vals = at_delay(df, column, target_s)
    return mean_ci(vals) if vals else {"n": 0, "mean": math.nan, "ci_half_width": math.nan}


def curve(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """Mean and 95% CI of `column` and of the mean queueing delay per swept value."""
    rows = []
    for v, g in df.groupby("value"):
        y, x = mean_ci(g[column].to_numpy()), mean_ci(g["qdelay"].to_numpy())
        rows.append({"value": v, "qdelay": x["mean"], "qdelay_hw": x["ci_half_width"],
                     "mean": y["mean"], "hw": y["ci_half_width"]})
    return pd.DataFrame(rows).sort_values("qdelay")


def value_for_delay(df: pd.DataFrame, target_s: float) -> float:
    """The swept parameter (a or buffer) that gives mean queueing delay `target_s`,
    by log-linear interpolation of the mean curve (Fig. 7 read backwards)."""
    c = curve(df, "total")
    x, v = c["qdelay"].to_numpy(), np.log(c["value"].to_numpy())
    order = np.argsort(x)
    return float(np.exp(np.interp(target_s, x[order], v[order])))


# --- single runs with time series ------------------------------------------------------


def run_series(doc: dict[str, Any], seed: int = 1) -> RunResult:
    return _run(doc, seed=seed, run=0, progress=False)


def metric_series(res: RunResult, entity: str, metric: str) -> pd.Series:
    s = res.series
    sel = s[(s["entity"] == entity) & (s["metric"] == metric)]
    return pd.Series(sel["value"].to_numpy(), index=sel["time_s"].to_numpy())


def window_rates(doc: dict[str, Any], cuts: Sequence[float], seed: int = 1) -> pd.DataFrame:
    """IP-level received rate of every flow between consecutive `cuts` (seconds), from
    runs cut at each time (prefix differencing)."""
    tables = {}
    for t in cuts:
        r = _run(sc.with_duration(doc, t), seed=seed, run=0, progress=False)
        tables[t] = r.flows.set_index("name")["rx_bytes"]
    rows = []
    for t0, t1 in zip(cuts[:-1], cuts[1:]):
        for name, b in (tables[t1] - tables[t0]).items():
            rows.append({"t0": t0, "t1": t1, "flow": name, "rate_bps": b * 8 / (t1 - t0)})
    return pd.DataFrame(rows)


def matched_value(values: Iterable[float], measure: Any, target: float) -> tuple[float, float]:
    """The value whose `measure(value)` is closest to `target` (returns value, measure)."""
    best = min(((v, measure(v)) for v in values), key=lambda vm: abs(vm[1] - target))
    return best

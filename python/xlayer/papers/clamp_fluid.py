"""CLAMP fluid model (Andrew & Hanly, Section III-B), integrated numerically.

Two systems, both delay-differential equations solved by the method of steps (the
delayed terms over the next step are already known from the history, so each step is
an ordinary integration):

* eq. (2), one flow:  dq/dt = (tau - b q(t - d)) / d   (while q > 0).
  Theorem 1: q converges iff b < pi/2.  `stability_boundary` finds the boundary by
  bisection on the linearised equation x' = -(b/d) x(t - d), x = q - tau/b.

* eqs. (6)-(10), k flows sharing one queue of service rate mu_c:
      dw_i/dt = (tau - p(q(t)) mu_i(t)) / d_i,        p(q) = (b q - a) / mu_c   (7)
  The paper leaves mu_i(t) open.  We close it with a fluid FIFO queue that keeps each
  flow's content q_i (q = sum q_i):
      mu_i(t) = mu_c q_i / q                       (output shares = queue composition)
      arrivals_i(t) = mu_i(t - d_i) + dw_i/dt(t - d_i)   (self-clocking: each byte served
                                                     returns as an ACK d_i later, plus
                                                     the window change made then)
      dq_i/dt = arrivals_i - mu_i
  so w_i = bytes in flight + bytes queued, sum mu_i = mu_c (eq. 10) while q > 0, and
  with equal delays dq/dt reduces exactly to eq. (12).  The equilibrium is
  q* = (k tau + a)/b with mu_i = mu_c/k (eq. 11).

Units: bytes, seconds, bytes/s; the price p is in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

HALF_PI = math.pi / 2


# --- eq. (2): one flow, Theorem 1 -------------------------------------------------------


def integrate_linear(b: float, d: float = 1.0, periods: int = 2000, steps_per_delay: int = 200) -> np.ndarray:
    """x' = -(b/d) x(t-d) with history x = 1 on [-d, 0] (the deviation of eq. (2) from
    its equilibrium tau/b).  Method of steps: on [kd, (k+1)d] the right-hand side is the
    previous block, integrated with the trapezoid rule.  Returns x at the grid points,
    one row of `steps_per_delay` + 1 values per delay period."""
    n = steps_per_delay
    h = d / n
    prev = np.ones(n + 1)
    out = np.empty((periods, n + 1))
    gain = -(b / d) * h
    for k in range(periods):
        incr = gain * 0.5 * (prev[:-1] + prev[1:])
        cur = np.empty(n + 1)
        cur[0] = prev[-1]
        np.cumsum(incr, out=cur[1:])
        cur[1:] += prev[-1]
        out[k] = cur
        prev = cur
    return out


def growth_rate(b: float, d: float = 1.0, periods: int = 2000, steps_per_delay: int = 200) -> float:
    """Exponential growth rate (1/s) of the envelope of eq. (2)'s deviation: negative
    means q converges.  Measured between envelopes (max |x| over 20 delays) at the middle
    and at the end of the run, so the transient has died out."""
    x = np.abs(integrate_linear(b, d, periods, steps_per_delay))
    env = x.max(axis=1)
    w = 20
    mid, end = periods // 2, periods
    e1 = env[mid - w : mid].max()
    e2 = env[end - w : end].max()
    if e1 == 0.0 or e2 == 0.0:
        return -math.inf
    return math.log(e2 / e1) / ((end - mid) * d)


def is_stable(b: float, d: float = 1.0, **kw: int) -> bool:
    return growth_rate(b, d, **kw) < 0.0


def stability_boundary(lo: float = 1.0, hi: float = 2.0, tol: float = 1e-3, d: float = 1.0) -> float:
    """Bisection on b for the boundary between convergence and divergence of eq. (2)
    (Theorem 1 predicts pi/2).  `lo` must be stable and `hi` unstable."""
    if not is_stable(lo, d) or is_stable(hi, d):
        raise ValueError(f"bisection needs a stable lo={lo} and an unstable hi={hi}")
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if is_stable(mid, d):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# --- eqs. (6)-(12): k flows sharing one queue ---------------------------------------


@dataclass
class FluidRun:
    """Trajectories on a uniform grid: t (n,), q (n,), w (n, k), mu (n, k)."""

    t: np.ndarray
    q: np.ndarray
    w: np.ndarray
    mu: np.ndarray
    q_star: float
    mu_star: float

    def settling_time(self, tol: float = 0.01) -> float:
        """First time after which q stays within `tol` of q* and every mu_i within
        `tol` of mu_c/k until the end (inf if the end is not settled)."""
        ok = (np.abs(self.q - self.q_star) <= tol * self.q_star) & np.all(
            np.abs(self.mu - self.mu_star) <= tol * self.mu_star, axis=1
        )
        bad = np.nonzero(~ok)[0]
        if len(bad) == 0:
            return float(self.t[0])
        if bad[-1] == len(ok) - 1:
            return math.inf
        return float(self.t[bad[-1] + 1])

    def final_errors(self) -> tuple[float, float]:
        """Relative error of q and the worst relative error of mu_i at the end."""
        return (
            abs(self.q[-1] - self.q_star) / self.q_star,
            float(np.max(np.abs(self.mu[-1] - self.mu_star)) / self.mu_star),
        )


def equilibrium_queue(k: int, tau: float, a: float, b: float) -> float:
    """Eq. (11): q* = (k tau + a) / b."""
    return (k * tau + a) / b


def integrate_flows(
    delays_s: Sequence[float],
    tau: float = 500.0,
    a: float = 5500.0,
    b: float = 1.0,
    mu_c: float = 1.25e6,
    duration_s: float = 60.0,
    step_s: float = 0.5e-3,
    closure: str = "rtt",
    nonnegative_price: bool = False,
    sample_every: int = 1,
) -> FluidRun:
    """Integrate eqs. (6)-(10) for k = len(delays_s) flows sharing one queue, by the
    method of steps (Heun's RK2; the delayed terms come from the stored history, so
    delays must be multiples of `step_s`).

    closure="rtt" (the paper's system): mu_i = mu_c x_i / sum x_j with x_i =
      w_i / (d_i + q/mu_c) (window over RTT, normalised so that eq. (10) holds), and the
      queue follows eq. (8), dq/dt = sum_i dw_i/dt(t - d_i), projected at q = 0.
    closure="fifo" (a physically detailed check): per-flow queue contents q_i, output
      shares mu_i = mu_c q_i/q, arrivals_i = mu_i(t - d_i) + dw_i/dt(t - d_i) (ACK
      clocking), so w_i is exactly bytes in flight plus bytes queued.  Eq. (8) then
      holds only when the shares are steady: a shift of shares between flows with
      different delays also moves the total queue.

    Start (both closures): deliberately unfair and off equilibrium: q(0) = 2 q*, all of
    it and the whole rate belong to flow 0, the other windows are 5% of their fair
    bandwidth-delay product; the history before t = 0 is that constant state.
    `nonnegative_price` uses eq. (13)'s max(., 0) instead of eq. (7)."""
    if closure not in ("rtt", "fifo"):
        raise ValueError("closure must be 'rtt' or 'fifo'")
    k = len(delays_s)
    d = [float(x) for x in delays_s]
    lag = [int(round(x / step_s)) for x in d]
    if any(n < 1 or abs(n * step_s - x) > 1e-9 for n, x in zip(lag, d)):
        raise ValueError("every delay must be a positive multiple of step_s")
    q_star = equilibrium_queue(k, tau, a, b)
    mu_star = mu_c / k
    steps = int(round(duration_s / step_s))
    hist = max(lag) + 1
    base = hist - 1  # history index of t = 0
    # Stored per grid point: the window derivative (both closures) and the output rate
    # (fifo: it clocks later arrivals).
    wd_h = [[0.0] * k for _ in range(hist + steps + 1)]
    mu_h = [[0.0] * k for _ in range(hist + steps + 1)]
    mu0 = [mu_c] + [0.0] * (k - 1)
    for row in mu_h[:hist]:
        row[:] = mu0
    q0 = 2.0 * q_star
    w = [mu_c * d[0] + q0] + [0.05 * mu_star * d[i] for i in range(1, k)]
    qi = [q0] + [0.0] * (k - 1)  # fifo only

    def price(qtot: float) -> float:
        p = (b * qtot - a) / mu_c
        return max(p, 0.0) if nonnegative_price else p

    def rates(qv: list[float], wv: list[float], arr: list[float]) -> list[float]:
        qt = sum(qv)
        if closure == "rtt":
            x = [wv[i] / (d[i] + qt / mu_c) if wv[i] > 0 else 0.0 for i in range(k)]
            s = sum(x)
            return [mu_c * xi / s for xi in x] if s > 0 else [mu_star] * k
        if qt > 1e-9:
            return [mu_c * x / qt for x in qv]
        s = sum(arr)  # empty queue: arrivals pass straight through, up to mu_c
        return list(arr) if s <= mu_c else [mu_c * x / s for x in arr]

    def deriv(
        idx: int, qv: list[float], wv: list[float]
    ) -> tuple[list[float], list[float], list[float]]:
        """(dq_i/dt or [dq/dt], dw_i/dt, mu_i) at history index idx."""
        if closure == "fifo":
            arr = [max(mu_h[idx - lag[i]][i] + wd_h[idx - lag[i]][i], 0.0) for i in range(k)]
        else:
            arr = []
        mu = rates(qv, wv, arr)
        p = price(sum(qv))
        wdot = [(tau - p * mu[i]) / d[i] for i in range(k)]
        if closure == "fifo":
            qdot = [arr[i] - mu[i] for i in range(k)]
        else:  # eq. (8); the current step's own wdot is not needed (every lag >= 1)
            qdot = [sum(wd_h[idx - lag[i]][i] for i in range(k))]
        return qdot, wdot, mu

    qv = qi if closure == "fifo" else [q0]
    n_out = steps // sample_every + 1
    q_out = np.empty(n_out)
    w_out = np.empty((n_out, k))
    mu_out = np.empty((n_out, k))
    t_out = np.empty(n_out)
    j = 0
    for n in range(steps + 1):
        idx = base + n
        qdot, wdot, mu = deriv(idx, qv, w)
        mu_h[idx] = mu
        wd_h[idx] = wdot
        if n % sample_every == 0 and j < n_out:
            t_out[j], q_out[j] = n * step_s, sum(qv)
            w_out[j], mu_out[j] = w, mu
            j += 1
        if n == steps:
            break
        qp = [max(qv[i] + step_s * qdot[i], 0.0) for i in range(len(qv))]
        wp = [w[i] + step_s * wdot[i] for i in range(k)]
        # Predictor values at idx + 1 are provisional; the corrector overwrites them.
        qdot2, wdot2, _ = deriv(idx + 1, qp, wp)
        qv = [max(qv[i] + 0.5 * step_s * (qdot[i] + qdot2[i]), 0.0) for i in range(len(qv))]
        w = [w[i] + 0.5 * step_s * (wdot[i] + wdot2[i]) for i in range(k)]
    return FluidRun(t=t_out[:j], q=q_out[:j], w=w_out[:j], mu=mu_out[:j], q_star=q_star, mu_star=mu_star)


# --- the C1 check ---------------------------------------------------------------------

C1_CASES: dict[str, list[float]] = {
    **{f"equal_k{k}": [0.05] * k for k in (1, 2, 3, 4)},  # Fig. 2's 50 ms flows
    "unequal_k2": [0.01, 0.18],  # Fig. 3's shared queue (R3, R4)
    "unequal_k4": [0.03, 0.13, 0.01, 0.18],  # all four Fig. 3 delays in one queue
}


def check_c1(
    duration_s: float = 60.0, step_s: float = 1e-3, closures: Sequence[str] = ("rtt", "fifo")
) -> dict[str, float | bool]:
    """C1: the bisected stability boundary of eq. (2) is pi/2 +- 0.05, and for every
    case in C1_CASES the paper's system (closure "rtt") ends within 1% of
    q* = (k tau + a)/b and every rate within 1% of mu_c/k, settled (stays within 1%)
    before the end.  Parameters are Fig. 2's (tau 500 B, a 5500 B, b 1, 10 Mb/s).
    Also reports, for information, the physically detailed "fifo" closure."""
    res: dict[str, float | bool] = {}
    boundary = stability_boundary()
    res["boundary"] = boundary
    res["boundary_error"] = abs(boundary - HALF_PI)
    ok = res["boundary_error"] <= 0.05
    for closure in closures:
        for name, delays in C1_CASES.items():
            run = integrate_flows(delays, duration_s=duration_s, step_s=step_s, closure=closure, sample_every=10)
            eq, em = run.final_errors()
            key = f"{closure}_{name}"
            res[f"{key}_q_err"] = eq
            res[f"{key}_mu_err"] = em
            res[f"{key}_settle_s"] = run.settling_time(0.01)
            if closure == "rtt":
                ok = ok and eq <= 0.01 and em <= 0.01 and math.isfinite(res[f"{key}_settle_s"])
    res["passed"] = ok
    return res

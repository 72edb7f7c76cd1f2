"""Eq. (2) of Akyildiz & Joe (§2.2 A, after Schwartz): the CP-ARQ payload length that
maximizes selective-repeat efficiency eta(L) = L/(L+h)·(1−P_b)^(L+h), computed here
independently of the Rust `aalx::pdu_len` — the closed form as printed, and a numeric
maximizer — and the L = 48i − 4 octet grid (§2.2)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from . import paper

CELL_BITS = paper.CELL_BYTES * 8
MAX_I = 1366  # the largest i whose 48i − 4 fits the 16-bit Length (as the Rust grid)


def lopt_closed_form(p_b: float, h: float = paper.OVERHEAD_BITS) -> float:
    """Eq. (2) as printed, with 'ln(1 − P_b)²' read as [ln(1 − P_b)]² (bits)."""
    a = math.log1p(-p_b)
    return (-h * a - math.sqrt(-4.0 * h * a + h * h * a * a)) / (2.0 * a)


def ln_eta(l_bits: float, p_b: float, h: float = paper.OVERHEAD_BITS) -> float:
    return math.log(l_bits / (l_bits + h)) + (l_bits + h) * math.log1p(-p_b)


def lopt_numeric(p_b: float, h: float = paper.OVERHEAD_BITS) -> float:
    """The maximizer of ln eta over ln L in [0, 40] by Brent's bounded search."""
    r = minimize_scalar(lambda u: -ln_eta(math.exp(u), p_b, h), bounds=(0.0, 40.0), method="bounded",
                        options={"xatol": 1e-10})
    return math.exp(float(r.x))


def grid_choice_octets(p_b: float, h: float = paper.OVERHEAD_BITS) -> int:
    """§2.2's 'closest value to L_opt' on the grid, taken as the better of the two grid
    points around L_opt (eta is unimodal)."""
    lo = min(max(1, math.floor((lopt_closed_form(p_b, h) / 8 + 4) / 48)), MAX_I)
    hi = min(lo + 1, MAX_I)
    return max((lo, hi), key=lambda i: (ln_eta(8.0 * (48 * i - 4), p_b, h), -i)) * 48 - 4


def grid_argmax_octets(p_b: float, h: float = paper.OVERHEAD_BITS) -> int:
    i = np.arange(1, MAX_I + 1)
    l_bits = 8.0 * (48 * i - 4)
    e = np.log(l_bits / (l_bits + h)) + (l_bits + h) * math.log1p(-p_b)
    return int(48 * i[int(np.argmax(e))] - 4)


def ber_of_cer(cer: float) -> float:
    """The bit error rate at which a 424-bit cell is hit with probability `cer`
    (independent bit errors)."""
    return -math.expm1(math.log1p(-cer) / CELL_BITS)


def lopt_table(cers: tuple[float, ...] = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3)) -> pd.DataFrame:
    """Closed form vs numeric maximizer over P_b from 1e-9 to 0.1 (and at the BERs of
    Fig. 4's CERs), with the grid choice and the grid argmax."""
    bers = [(None, float(p)) for p in np.logspace(-9, -1, 33)] + [(c, ber_of_cer(c)) for c in cers]
    rows = []
    for cer, p in bers:
        lc, ln = lopt_closed_form(p), lopt_numeric(p)
        rows.append({"cer": cer, "ber": p, "lopt_bits": lc, "numeric_bits": ln, "rel_err": abs(lc - ln) / ln,
                     "grid_octets": grid_choice_octets(p), "grid_argmax_octets": grid_argmax_octets(p)})
    return pd.DataFrame(rows)

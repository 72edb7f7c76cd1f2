"""Checks C0-C5 of the AAL-X reproduction against its runs. Each Check carries the numbers
it decided on; thresholds are the brief's (sources beside each), never adjusted to the
results."""

from __future__ import annotations

import math

import pandas as pd

from .._shared import Check, ci
from .._shared import fmt as _fmt
from .._shared import rows as shared_rows
from . import experiments as ex
from . import paper
from .lopt import lopt_table


def fmt(c: dict[str, float], digits: int = 3) -> str:
    return _fmt(c, digits)


def rows(df: pd.DataFrame, experiment: str, variant: str | None = None, aal: str | None = None,
         x: float | None = None) -> pd.DataFrame:
    """`_shared.rows` with the AAL beside the variant, as the tables read them."""
    return shared_rows(df, experiment, variant, x, aal=aal)


def norm(df: pd.DataFrame, variant: str, aal: str, cer: float, experiment: str = "fig4") -> dict[str, float]:
    return ci(rows(df, experiment, variant, aal, cer).norm)


# C0: the cell tax. An MSS-byte segment is an IP packet of MSS + 40 bytes; AAL5 adds its
# 8-byte trailer and pads to whole 48-byte cell payloads; each cell is 53 bytes on the line.
def cell_tax_ceiling_bps(mss: int, rate_bps: float = paper.DS1_BPS) -> float:
    cells = math.ceil((mss + paper.IP_TCP_HEADER_BYTES + paper.AAL5_TRAILER_BYTES) / paper.CELL_PAYLOAD_BYTES)
    return rate_bps * mss / (cells * paper.CELL_BYTES)


def c0(df: pd.DataFrame) -> Check:
    ceiling = cell_tax_ceiling_bps(1460)
    parts, ok = [], True
    for aal in ex.AALS:
        g = ci(rows(df, "fig4", "primary", aal, 0.0).goodput_bps)
        frac = g["mean"] / ceiling
        ok &= bool(frac >= 0.98)
        parts.append(f"{aal.upper()} offered {g['mean'] / 1e6:.4f} Mb/s = {frac:.3f} of the ceiling")
    return Check("C0", "Fig. 4's setup: greedy FTP (bulk TCP NewReno, 64 KB receive window), MSS 1460 B, "
                 "min RTO 1 s (initial 1 s), independent cell errors (Rayleigh 8 Hz as the bursty case); "
                 "offered load = the goodput the same configuration reaches at CER 0 (measured, per AAL), "
                 "normalized throughput = goodput ÷ offered",
                 ">= 0.98 of the DS1 cell-tax ceiling 1.544 Mb/s · 1460 / (32 · 53) = "
                 f"{ceiling / 1e6:.4f} Mb/s (closed form; the rest is slow start and the 1000-cell buffer's "
                 "overflow under a 64 KB window)", ok, "; ".join(parts),
                 {"ceiling_bps": ceiling})


def c1(df: pd.DataFrame) -> Check:
    parts, worst = [], math.inf
    for variant in ex.FIG4:
        for cer in (x for x in ex.CERS if 0.0 < x <= paper.CER_OF_INTEREST):
            d = rows(df, "fig4", variant, "aalx", cer)
            if d.empty:
                continue
            n = ci(d.norm)
            worst = min(worst, n["mean"])
            parts.append(f"{variant} {cer:g}: {fmt(n)}")
    return Check("C1", "AAL-X (TCP's timer off) keeps normalized throughput >= 0.98 for CER <= 1e-3, with "
                 "independent and with bursty (Rayleigh) cell errors",
                 "mean over seeds >= 0.98 at every CER <= 1e-3 (brief; paper: 'a perfect normalized "
                 "throughput 1.0 until CER of 10^-3', §3.2)", bool(worst >= 0.98),
                 f"lowest {worst:.3f}; " + ", ".join(parts), {"worst": worst})


def c2(df: pd.DataFrame) -> Check:
    cers = [x for x in ex.CERS if x > 0.0]
    means = [norm(df, "primary", "aal5", x)["mean"] for x in cers]
    falls = bool(all(b < a for a, b in zip(means, means[1:])))
    near, parts = True, []
    for cer, ref in paper.AAL5_NORM.items():
        n = norm(df, "primary", "aal5", cer)
        this = abs(n["mean"] - ref) <= 0.15
        near &= this
        parts.append(f"{cer:g}: {fmt(n)} (paper {ref}){'' if this else ' MISS'}")
    gap = norm(df, "primary", "aalx", 1e-3)["mean"] - norm(df, "primary", "aal5", 1e-3)["mean"]
    ok = bool(falls and near and gap >= 0.15)
    return Check("C2", "TCP/AAL5's normalized throughput falls with CER and is near the paper's 1.0 / 0.9 / "
                 "0.7; AAL-X beats it at 1e-3 (primary reading)",
                 "strictly falling over CER 1e-4…5e-3; within ±0.15 of 1.0 / 0.9 / 0.7 at 1e-4 / 5e-4 / 1e-3; "
                 "AAL-X − AAL5 >= 0.15 at 1e-3 (brief; paper §3.2)", ok,
                 "; ".join(parts) + f"; falling: {'yes' if falls else 'no'} ("
                 + ", ".join(f"{m:.3f}" for m in means) + f"); AAL-X − AAL5 at 1e-3: {gap:.3f}",
                 {"gap": gap, "falls": falls, "near": near})


def link_rtt_s(rate_bps: float = paper.DS1_BPS, delay_s: float = 1e-3) -> float:
    """The hop's bare round trip: a cell and the one-way delay each way (also S-ARQ's
    starting srt, `radio::atm::spec`)."""
    return 2.0 * (paper.CELL_BYTES * 8 / rate_bps + delay_s)


def probe_added_delay(df: pd.DataFrame, cer: float) -> dict[str, float]:
    """S-ARQ's mean added delay per lost PDU, from the CBR probe: the rise of the mean
    packet delay over CER 0, times packets, over the expected lost PDUs (one-cell PDUs:
    P(PDU lost) = CER; a packet is ceil((1460 + 4) / 44) PDUs, the CPCS adding 4 octets)."""
    base = rows(df, "probe", "cbr", "aalx", 0.0).delay_mean_s.mean()
    pdus = math.ceil((ex.PROBE_PACKET_BYTES + 4) / (48 * ex.PROBE_I - 4))
    d = rows(df, "probe", "cbr", "aalx", cer)
    per = (d.delay_mean_s - base) / (pdus * cer)
    return {**ci(per), "max_added_s": float((d.delay_max_s - base).max()), "base_s": float(base)}


def c3(df: pd.DataFrame) -> Check:
    rtt = link_rtt_s()
    period = rtt / 4  # srt / m with m = 4 and srt at the link's round trip
    bound = rtt + period
    added = probe_added_delay(df, 1e-3)
    d5, dx = (ci(rows(df, "fig4", "primary", a, paper.DELAY_CER).delay_mean_s) for a in ("aal5", "aalx"))
    order = dx["mean"] > d5["mean"]
    ok = bool(added["mean"] + added["ci_half_width"] <= bound and order)
    return Check("C3", "mean end-to-end delay = the flow table's `delay_mean_s` (each received TCP segment, "
                 "from its hand-off by TCP to the network to its arrival at the mobile's TCP); AAL-X's delay "
                 "exceeds AAL5's at CER 1e-3 (paper 1.7 vs 1.5 s), and S-ARQ adds at most a link round trip "
                 "plus a status period per lost PDU",
                 f"added delay per lost PDU (upper 95% CI) <= link RTT {1e3 * rtt:.2f} ms + status period "
                 f"srt/m {1e3 * period:.2f} ms = {1e3 * bound:.2f} ms (brief; S-ARQ §2.2 A), and AAL-X's mean "
                 "delay above AAL5's at 1e-3 (paper §3.2)", ok,
                 f"per lost PDU (CBR probe, one-cell PDUs, CER 1e-3): {fmt({k: 1e3 * v for k, v in added.items()}, 2)}"
                 f" ms, largest packet delay rise {1e3 * added['max_added_s']:.1f} ms; mean delay at 1e-3: "
                 f"AAL5 {fmt(d5)} s, AAL-X {fmt(dx)} s (paper 1.5 / 1.7 s: see 'Delay')",
                 {"added_s": added["mean"], "bound_s": bound, "aal5_s": d5["mean"], "aalx_s": dx["mean"]})


def c4() -> Check:
    t = lopt_table()
    worst = float(t.rel_err.max())
    grid_ok = bool((t.grid_octets == t.grid_argmax_octets).all())
    at = t[t.cer.notna()]
    return Check("C4", "eq. (2)'s L_opt is the maximizer of (L/(L+h))(1−P_b)^(L+h) (reading 'ln(1−P_b)²' as "
                 "[ln(1−P_b)]²), and the 48i − 4 grid choice is the grid's best",
                 "relative difference <= 1e-6 over P_b 1e-9…0.1, and the grid choice = the grid argmax at every "
                 "P_b (eq. (2), §2.2)", bool(worst <= 1e-6 and grid_ok),
                 f"largest relative difference {worst:.1e} over {len(t)} BERs; grid choice = argmax: "
                 f"{'yes' if grid_ok else 'no'}; at the Fig. 4 CERs (BER = 1 − (1 − CER)^(1/424)): "
                 + ", ".join(f"CER {r.cer:g} → L_opt {r.lopt_bits / 8:.0f} B, L = {r.grid_octets} B"
                             for r in at.itertuples()),
                 {"rel_err": worst})


RUST_TESTS = ("xlayer-proto `l2::atm::crc::tests::catalogue_check_values` (CRC-32/BZIP2 0xFC891918, "
              "CRC-16/IBM-SDLC (X-25) 0x906E, HEC CRC-8/I-432-1 0xA1 for \"123456789\"); "
              "`tests/sarq_scenarios.rs`: scenario_1_first_or_middle_cell_lost, scenario_2_last_cell_damaged, "
              "scenario_3_last_cell_lost, scenario_4_all_cells_of_a_pdu_lost, "
              "scenario_5_payload_octets_equal_to_the_tags, scenario_6_crc_failure_caught_by_the_cpcs_length")


def c5() -> Check:
    return Check("C5", "the CRCs match the standard catalogue and the six §2.4 robustness scenarios recover",
                 "exact check values; every scenario delivers every SDU once, in order (Rust tests; run by "
                 "tests/slow/test_aalx_full.py where cargo is available)", None,
                 "not reachable from Python; checked by " + RUST_TESTS)


def all_checks(df: pd.DataFrame) -> list[Check]:
    return [c0(df), c1(df), c2(df), c3(df), c4(), c5()]

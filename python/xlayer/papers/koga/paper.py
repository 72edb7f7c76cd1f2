"""What Koga, Iida and Oie publish: Tables 2-5, the optima their figures
show (the figure images are not in the text; §5 states where each curve bottoms out),
and the ideal-awnd formula, eqs. (1)-(3)."""

from __future__ import annotations

RATES_KBPS = (32, 64, 128)

# Table -> UDP rate (kb/s) -> (transport %, application %, total %, TCP throughput kb/s).
TABLES: dict[str, dict[int, tuple[float, float, float, float]]] = {
    # §5.1 Table 2: no QoS, TCP-optimal parameters (max retx 5, WT 500 ms, buffer 50).
    "table2": {32: (0.35, 93.22, 93.57, 293.29), 64: (0.37, 91.72, 92.09, 258.98),
               128: (1.32, 87.16, 88.48, 194.75)},
    # §5.1 Table 3: no QoS, UDP-optimal parameters (UDP max retx 1, WT 60 ms, buffer 10).
    "table3": {32: (3.14, 14.72, 17.86, 277.53), 64: (3.49, 3.24, 6.73, 241.89),
               128: (5.38, 0.36, 5.74, 185.18)},
    # §5.2 Table 4: L2 priority scheduling (UDP max retx 2, WT 150 ms).
    "table4": {32: (0.10, 0.00, 0.10, 294.13), 64: (0.07, 0.14, 0.21, 261.86),
               128: (0.05, 0.18, 0.23, 196.55)},
    # §5.3 Table 5: receiver-based flow control (UDP max retx 2, WT 90 ms, awnd 6/5/4).
    "table5": {32: (0.02, 0.54, 0.56, 273.98), 64: (0.07, 0.29, 0.36, 238.74),
               128: (0.11, 0.38, 0.49, 190.29)},
}

TABLE_TITLES = {
    "table2": "Table 2: no QoS, parameters optimal for TCP",
    "table3": "Table 3: no QoS, parameters optimal for UDP",
    "table4": "Table 4: L2 priority scheduling",
    "table5": "Table 5: receiver-based flow control",
}

# What §5 says each figure shows.
FIGURE_STATEMENTS = {
    "fig2": "UDP loss is minimal at WT ~ 60 ms for 64 and 128 kb/s; WT does not affect it at 32 kb/s",
    "fig3": "L2 ARQ improves UDP loss; with WT 60 ms the optimum UDP max retransmissions is 1",
    "fig4": "UDP loss is greatly reduced at WT = 150 ms",
    "fig5": "two maximum retransmissions minimise UDP loss (WT 150 ms)",
    "fig6": "UDP loss is reduced at WT ~ 90 ms (awnd 5/5/4)",
    "fig7": "UDP loss reaches its minimum when max retransmissions > 1 (WT 90 ms)",
    "fig8": "considering loss and throughput, the optimum awnd is 6, 5 and 4 packets",
}
PAPER_OPTIMA = {
    "fig2": {64: 60, 128: 60},
    "fig3": {32: 1, 64: 1, 128: 1},
    "fig4": {32: 150, 64: 150, 128: 150},
    "fig5": {32: 2, 64: 2, 128: 2},
    "fig6": {32: 90, 64: 90, 128: 90},
    "fig8": {32: 6, 64: 5, 128: 4},
}

# §5.3: the ideal awnd values the paper computes, and its inputs.
IDEAL_AWND = {32: 5.52, 64: 5.20, 128: 4.56}
LINK_BPS = 384e3
TCP_PACKET_BYTES = 1500
PROP_DELAY_S = 0.030
RETRANSMISSIONS = 2
DEADLINE_S = 0.300


def ideal_awnd(udp_bps: float, link_bps: float = LINK_BPS, packet_bytes: int = TCP_PACKET_BYTES,
               prop_delay_s: float = PROP_DELAY_S, retransmissions: int = RETRANSMISSIONS) -> float:
    """Eqs. (1)-(3); the Rust agent (`xlayer_proto::agents::ideal_awnd_packets`) is the
    same formula, unit-tested against the same three values."""
    available = link_bps - udp_bps  # (2)
    if available <= 0:
        return 0.0
    bits = packet_bytes * 8.0
    t = (bits / available + 2.0 * prop_delay_s) * retransmissions  # (1)
    return available * t / bits  # (3)

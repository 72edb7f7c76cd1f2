"""What Akyildiz & Joe publish about Fig. 4 (§3) and the constants of their setup. The
paper gives no table: Fig. 4's values are the ones its §3.2 text states, which are the
only numbers it prints (the figure's curves are not legible beyond them)."""

from __future__ import annotations

# §3.2: "AAL 5 provides lower normalized throughput of 1.0, 0.9, and 0.7 for CER of
# 10^-4, 5x10^-4, and 10^-3 each"; "the AAL-X keeps a perfect normalized throughput 1.0
# until CER of 10^-3".
AAL5_NORM = {1e-4: 1.0, 5e-4: 0.9, 1e-3: 0.7}
AALX_NORM = {1e-4: 1.0, 5e-4: 1.0, 1e-3: 1.0}
# §3.2: "the average TCP end-to-end delay in AAL-X is about 1.7 seconds at the CER of
# 10^-3, a little longer than 1.5 seconds in AAL 5".
DELAY_S = {"aalx": 1.7, "aal5": 1.5}
DELAY_CER = 1e-3
CER_OF_INTEREST = 1e-3  # "until CER of 10^-3 which is the range of our interest"

DS1_BPS = 1_544_000  # §3.2: "the data rate is DS1 (1.544 Mbits/s)"
CELL_BYTES = 53
CELL_PAYLOAD_BYTES = 48
RCV_WINDOW_BYTES = 65_535  # §3.1: "The receiver buffer size in TCP is 64 Kbytes" (the 16-bit window)
BUFFER_CELLS = 1000  # §3.1: "the buffer size of 1000 cells is reserved for class D traffic"
INITIAL_RTO_S = 1.0  # §3.1: "the initial retransmission timer value is set to 1 sec"
AAL5_TRAILER_BYTES = 8  # I.363.5 CPCS-PDU trailer
IP_TCP_HEADER_BYTES = 40  # §2.4: "a 20 byte TCP header, a 20 byte IP header"
OVERHEAD_BITS = 32  # §2.2: h = 4 octets per CP-ARQ PDU (SN + CRC-16)

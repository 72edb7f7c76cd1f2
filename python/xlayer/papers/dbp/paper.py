"""What Jayaram & Rhee publish: the regimes of the UDP probes (§IV, Figs. 1-4), the
throughputs of §V-B (Figs. 6-9) and the parameters of DBP (§V-A). The paper gives no
tables; every number here is quoted from its text."""

from __future__ import annotations

R1_S = 0.8  # §V-A
R2_S = 1.2
PACKET_BYTES = 512  # §III: UDP payload of a probe / data packet
IP_PACKET_BYTES = PACKET_BYTES + 28

# §IV: probes at these constant rates (Figs. 1-4); Fig. 4's is the 50 kb/s run in which
# the network took the channel away.
PROBE_RATES_KBPS = (30, 50, 60, 80)
GOOD_RTT_S = (0.5, 0.8)  # "RTTs are between 500-800ms most of the time" (30 and 60 kb/s)
GOOD_LOSS_PCT = (3.0, 5.0)  # "loss rate of around 3-5% is common"
OVERLOAD_RTT_S = 1.0  # 80 kb/s: "RTTs are above 1 second most of the time"
OVERLOAD_LOSS_PCT = 10.0  # "the packet loss rate increases beyond 10%"
EPISODE_RTT_S = 17.0  # Fig. 4: "RTTs increase continually up to 17 seconds"
EPISODE_LOSS_RUN = 100  # "more than 100 packets being lost in a row"

# §V-B: mean throughputs (kb/s) as the text states them.
DBP_ALONE_KBPS = 40.0  # Fig. 6 "about 40kbps"
TCP_ALONE_KBPS = 30.0  # Fig. 7 "about 30kbps"
# Fig. 8: "the aggregate throughput obtained by the flows is just over 20kbps, which can be
# considered to be the fair-share because a single DBP flow ... achieves ... 40kbps". The
# paper's "aggregate rate" is a flow's mean over the transfer (its Fig. 7 text), so each
# of the two flows got just over 20 kb/s.
TWO_DBP_PER_FLOW_KBPS = 20.0
DBP_WITH_TCP_KBPS = 25.0  # Fig. 9
TCP_WITH_DBP_KBPS = 16.0

# Figs. 10-11: file sizes of the bulk transfers.
FILE_SIZES_KB = (20, 100)

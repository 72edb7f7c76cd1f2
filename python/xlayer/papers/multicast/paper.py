"""What Alexiou, Bouras & Papazois publish ("A study of multicast congestion control for
UMTS", 2009): the network of Table I, the ratios of §5.1, the response times of §5.2,
Table II (§5.3) and the adaptation times of §5.4. Every number is quoted from the text;
the paper prints no error bars and names no link rates or delays."""

from __future__ import annotations

# Table I: simulation parameters.
SGSNS = 3
RNCS = 20
NODE_BS = 80
TFMCC_GROUPS = 5
PGMCC_GROUPS = 5
TCP_SERVERS = 50
UES = 500
GROUP_SIZE = (10, 100)  # "varies from 10 to 100"
GROUPS_PER_UE = (0, 2)  # "varies from 0 to 2"

# §5.1: "The average throughput of TFMCC1 flow is about 98.6% of the average TFMCC2
# throughput"; "The average throughput of TFMCC is 89% and that of PGMCC is 94% of the
# average throughput of TCP".
TFMCC_PAIR_RATIO = 0.986
TFMCC_OVER_TCP = 0.89
PGMCC_OVER_TCP = 0.94

# §5.2: 150 s, three loss rates on the Iu link. Adaptation after a change: PGMCC
# 1.2-2.0 s, TCP about 1.0-1.5 s, TFMCC 1.5-2.5 s.
RESPONSIVENESS_S = 150.0
ADAPT_S = {"pgmcc": (1.2, 2.0), "tcp": (1.0, 1.5), "tfmcc": (1.5, 2.5)}

# §5.3: each UE's radio loss rate drawn in [0, 5%] every 5 s; Table II, throughput
# normalized by TCP's, against the number of UEs in the group.
TEMP_MAX_LOSS = 0.05
TEMP_PERIOD_S = 5.0
TABLE2_UES = (1, 3, 6, 10, 15, 20, 30, 50, 70, 100)
TABLE2 = {
    "MOD_TFMCC": (1.14, 1.08, 1.1, 1.07, 1.12, 1.08, 1.05, 1.06, 1.07, 1.05),
    "MOD_PGMCC": (1.02, 1.05, 1.03, 1.0, 1.04, 1.01, 1.04, 1.03, 1.01, 1.0),
    "LEG_TFMCC": (0.96, 0.7, 0.585, 0.587, 0.562, 0.502, 0.484, 0.462, 0.456, 0.452),
    "LEG_PGMCC": (0.94, 0.76, 0.705, 0.637, 0.63, 0.602, 0.557, 0.538, 0.528, 0.522),
}

# §5.4: 20% loss on one UE's radio link from t = 50 s, monitored for 100 s; "about 5 s
# for PGMCC and 6 for TFMCC to fully adapt"; TCP "less than 2 s".
PERMANENT_LOSS = 0.2
PERMANENT_AT_S = 50.0
PERMANENT_END_S = 150.0
PERMANENT_ADAPT_S = {"pgmcc": 5.0, "tfmcc": 6.0, "tcp": 2.0}

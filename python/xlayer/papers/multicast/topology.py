"""The UMTS network of Alexiou, Bouras & Papazois, Table I, as an xlayer scenario dict.

Table I gives the counts: 3 SGSNs, 20 RNCs, 80 Node Bs (cells), 500 UEs, 5 multicast
servers/groups for TFMCC and 5 for PGMCC, 50 servers for TCP traffic, 10 to 100 UEs per
group, each UE in 0 to 2 groups; the BM-SC is folded into the GGSN (§3.2.2). The
wiring is the tree of their Fig. 1: servers → GGSN (Gi) → SGSNs (Gn) → RNCs (Iu) →
Node Bs (Iub) → UEs over an MBMS point-to-multipoint bearer per cell (`kind = "mbms"`,
docs/mbms.md), RNCs and Node Bs spread evenly over their parents, UEs over the cells.

Table I as printed gives no link rates or delays: `Links` holds them; its defaults are
the reproduction's readings (docs/reproductions/multicast.md): the radio's 70 ms each
way as in `experiments.RADIO_DELAY`, a 256 kb/s bearer, core links that are not the
bottleneck.
Which UEs join which group, and which UE each TCP server serves, is drawn from `seed`
(Python's `random.Random`, so the same arguments give the same scenario).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

MULTICAST_PROTOCOLS = ("tfmcc", "pgmcc", "udp")

SGSNS, RNCS, NODE_BS, UES = 3, 20, 80, 500
GROUPS_PER_FAMILY, TCP_SERVERS = 5, 50
GROUP_SIZE = (10, 100)
MAX_GROUPS_PER_UE = 2


@dataclass(frozen=True)
class Hop:
    rate: str
    delay: str


@dataclass(frozen=True)
class Links:
    """Rates and delays per interface (illustrative defaults, see the module note)."""

    gi: Hop = Hop("100Mbps", "5ms")
    gn: Hop = Hop("10Mbps", "5ms")
    iu: Hop = Hop("10Mbps", "10ms")
    iub: Hop = Hop("2Mbps", "10ms")
    bearer: Hop = Hop("256kbps", "70ms")
    uplink: Hop = Hop("64kbps", "70ms")
    node_b_buffer: int = 30
    radio_loss: dict[str, Any] = field(default_factory=dict)


def _check_protocol(name: str, value: str) -> None:
    if value not in MULTICAST_PROTOCOLS:
        raise ValueError(f"{name}: `{value}` is not a multicast protocol; expected one of {', '.join(MULTICAST_PROTOCOLS)}")


def _group_flow(protocol: str, group: str, server: str, cbr_rate: str, loss_indication: bool) -> dict[str, Any]:
    flow: dict[str, Any] = {"name": f"mc-{group}", "protocol": protocol, "src": server, "dst": group}
    if protocol == "udp":
        flow["app"] = {"kind": "cbr", "rate": cbr_rate, "packet_size": "500B"}
    else:
        flow["app"] = {"kind": "bulk"}
        flow[protocol] = {"loss_indication": loss_indication}
    return flow


def table1(
    protocol: str = "udp",
    second_protocol: str | None = None,
    *,
    seed: int = 1,
    duration: str = "150s",
    links: Links | None = None,
    loss_indication: bool = True,
    cbr_rate: str = "32kbps",
) -> dict[str, Any]:
    """The Table I scenario. The five "TFMCC" groups' servers run `protocol`, the five
    "PGMCC" groups' servers `second_protocol` (default: `protocol`); each is "tfmcc",
    "pgmcc" or "udp" (a CBR stream at `cbr_rate`). The 50 TCP servers each run a bulk
    NewReno flow to a distinct UE.
    """
    _check_protocol("protocol", protocol)
    second = protocol if second_protocol is None else second_protocol
    _check_protocol("second_protocol", second)
    lk = links or Links()
    rng = random.Random(seed)
    nodes: list[dict[str, Any]] = [{"name": "ggsn", "kind": "router"}]
    wired: list[dict[str, Any]] = []

    def link(a: str, b: str, hop: Hop) -> None:
        wired.append({"name": f"{a}-{b}", "a": a, "b": b, "rate": hop.rate, "delay": hop.delay})

    for s in range(SGSNS):
        nodes.append({"name": f"sgsn{s}", "kind": "router"})
        link("ggsn", f"sgsn{s}", lk.gn)
    for r in range(RNCS):
        nodes.append({"name": f"rnc{r}", "kind": "router"})
        link(f"sgsn{r * SGSNS // RNCS}", f"rnc{r}", lk.iu)
    cells: list[list[str]] = [[] for _ in range(NODE_BS)]
    for u in range(UES):
        cells[u * NODE_BS // UES].append(f"ue{u}")
        nodes.append({"name": f"ue{u}"})
    radios = []
    for b in range(NODE_BS):
        nodes.append({"name": f"nodeb{b}", "kind": "router"})
        link(f"rnc{b * RNCS // NODE_BS}", f"nodeb{b}", lk.iub)
        model: dict[str, Any] = {
            "kind": "mbms",
            "rate": lk.bearer.rate,
            "delay": lk.bearer.delay,
            "buffer": lk.node_b_buffer,
            "loss_indication": loss_indication,
        }
        if lk.radio_loss:
            model["loss"] = dict(lk.radio_loss)
        radios.append({
            "name": f"cell{b}",
            "from": f"nodeb{b}",
            "to": cells[b],
            "uplink_rate": lk.uplink.rate,
            "uplink_delay": lk.uplink.delay,
            "model": model,
        })

    groups, flows = [], []
    memberships = [0] * UES
    for g in range(2 * GROUPS_PER_FAMILY):
        size = rng.randint(*GROUP_SIZE)
        free = [u for u in range(UES) if memberships[u] < MAX_GROUPS_PER_UE]
        members = sorted(rng.sample(free, size))
        for u in members:
            memberships[u] += 1
        name = f"g{g}"
        groups.append({"name": name, "members": [{"node": f"ue{u}"} for u in members]})
        server = f"mcs{g}"
        nodes.append({"name": server})
        link(server, "ggsn", lk.gi)
        flows.append(_group_flow(protocol if g < GROUPS_PER_FAMILY else second, name, server, cbr_rate,
                                 loss_indication))
    for t, u in enumerate(sorted(rng.sample(range(UES), TCP_SERVERS))):
        server = f"tcps{t}"
        nodes.append({"name": server})
        link(server, "ggsn", lk.gi)
        flows.append({"name": f"tcp{t}", "protocol": "tcp", "src": server, "dst": f"ue{u}", "app": {"kind": "bulk"}})

    return {
        "name": f"multicast_table1_{protocol}" + ("" if second == protocol else f"_{second}"),
        "simulation": {"duration": duration},
        "node": nodes,
        "link": wired,
        "radio": radios,
        "group": groups,
        "flow": flows,
    }


# The saved scenario (scenarios/multicast_table1.toml): TFMCC and PGMCC families with the
# loss indication, every UE's radio under §5.3's temporary degradation, 100 s.
SAVED = {"protocol": "tfmcc", "second_protocol": "pgmcc", "duration": "100s"}
SAVED_LOSS = {"temporary": {"max": 0.05, "period": "5s"}}


def saved() -> dict[str, Any]:
    """The network of the shipped `multicast_table1.toml`."""
    doc = table1(SAVED["protocol"], SAVED["second_protocol"], duration=SAVED["duration"],
                 links=Links(radio_loss=dict(SAVED_LOSS)))
    return {**doc, "name": "multicast_table1"}


def to_toml(doc: dict[str, Any]) -> str:
    """The scenario as TOML text (needs the `tomli-w` package: the `test` extra)."""
    import tomli_w

    head = ("# Alexiou, Bouras & Papazois, Table I: servers -> GGSN/BM-SC -> 3 SGSNs -> 20 RNCs -> 80 Node Bs\n"
            "# -> 500 UEs over MBMS bearers; 5 TFMCC and 5 PGMCC groups (10-100 UEs each, each UE in\n"
            "# at most 2), 50 TCP servers. Generated by python/xlayer/papers/multicast/topology.py\n"
            "# (`python -m xlayer.papers.multicast.topology > scenarios/multicast_table1.toml`);\n"
            "# link rates and delays are the reproduction's readings (docs/reproductions/multicast.md).\n\n")
    return head + tomli_w.dumps(doc)


if __name__ == "__main__":
    print(to_toml(saved()), end="")

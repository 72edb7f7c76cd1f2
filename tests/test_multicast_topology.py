"""Alexiou, Bouras & Papazois Table I: the generated network has the table's counts, and
with UDP in place of the multicast transports it runs 10 simulated seconds with every
packet accounted for and a flow row for every group member."""

from __future__ import annotations

from collections import Counter

import pytest

import xlayer
from xlayer.papers.multicast import topology as t1


def test_the_generated_network_has_table_1s_counts() -> None:
    doc = t1.table1("udp", seed=3)
    kinds = Counter(n["name"].rstrip("0123456789") for n in doc["node"])
    assert kinds == {"ggsn": 1, "sgsn": 3, "rnc": 20, "nodeb": 80, "ue": 500, "mcs": 10, "tcps": 50}
    assert len(doc["radio"]) == 80 and sum(len(r["to"]) for r in doc["radio"]) == 500
    assert all(r["model"]["kind"] == "mbms" for r in doc["radio"])
    sizes = [len(g["members"]) for g in doc["group"]]
    assert len(sizes) == 10 and all(10 <= s <= 100 for s in sizes)
    per_ue = Counter(m["node"] for g in doc["group"] for m in g["members"])
    assert max(per_ue.values()) <= 2
    tcp_dsts = [f["dst"] for f in doc["flow"] if f["protocol"] == "tcp"]
    assert len(tcp_dsts) == 50 == len(set(tcp_dsts))
    assert t1.table1("udp", seed=3) == doc, "the same arguments give the same scenario"
    assert t1.table1("udp", seed=4) != doc


def test_protocols_are_named_per_family_and_checked() -> None:
    doc = t1.table1("tfmcc", "pgmcc")
    protos = [f["protocol"] for f in doc["flow"] if f["name"].startswith("mc-")]
    assert protos == ["tfmcc"] * 5 + ["pgmcc"] * 5
    with pytest.raises(ValueError, match="second_protocol: `tcp` is not a multicast protocol"):
        t1.table1("udp", "tcp")


def test_the_udp_network_runs_ten_seconds_with_a_row_per_member() -> None:
    doc = t1.table1("udp", seed=1, duration="10s")
    res = xlayer.run(doc, seed=1)
    assert res.conserved, res.conservation
    flows = res.flows
    for g in doc["group"]:
        rows = flows[flows["name"] == f"mc-{g['name']}"]
        members = {m["node"] for m in g["members"]}
        assert set(rows["receiver"]) == members | {"*"}
        assert (rows[rows["receiver"] != "*"]["rx_packets"] > 0).all(), g["name"]
    tcp = flows[flows["protocol"] == "tcp"]
    assert len(tcp) == 50 and (tcp["rx_packets"] > 0).all()

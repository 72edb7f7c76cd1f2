"""Builders for common topologies, returning scenario dicts (the same shape as the TOML
files; pass them to `xlayer.run` or edit them first), and the ready-made scenario files
shipped with the package: `shipped("dumbbell")` is its path, `shipped_scenarios()` lists
them all with a description."""

from __future__ import annotations

from typing import Any, Mapping

from .catalog import ShippedScenario, shipped_scenarios
from .scenario import shipped

__all__ = ["ShippedScenario", "dumbbell", "shipped", "shipped_scenarios"]


def dumbbell(
    n_flows: int = 2,
    bottleneck_rate: str = "10Mbps",
    bottleneck_delay: str = "25ms",
    access_rate: str = "100Mbps",
    access_delay: str = "1ms",
    queue: str = "100pkt",
    duration: str = "100s",
    tcp: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    start_jitter: str | None = None,
) -> dict[str, Any]:
    """A dumbbell: senders s0..s{n-1} -> router r0 -> link "bottleneck" -> r1 -> receivers
    d0..d{n-1}, with one TCP bulk flow f{i} from s{i} to d{i}.

    `queue` is the drop-tail limit of the bottleneck (access links keep the default);
    `tcp` is a [flow.tcp] table applied to every flow, e.g. {"delayed_ack": True}.
    `start_jitter` (e.g. "100ms") starts each flow at a uniformly random instant in
    [0, start_jitter] instead of at 0 (the shipped scenarios/dumbbell.toml uses "100ms").
    """
    if n_flows < 1:
        raise ValueError(f"n_flows must be at least 1, got {n_flows}")
    hosts = [f"s{i}" for i in range(n_flows)] + [f"d{i}" for i in range(n_flows)]
    nodes = [{"name": h, "kind": "host"} for h in hosts]
    nodes += [{"name": "r0", "kind": "router"}, {"name": "r1", "kind": "router"}]
    access = {"rate": access_rate, "delay": access_delay}
    links = [{"name": f"s{i}-r0", "a": f"s{i}", "b": "r0", **access} for i in range(n_flows)]
    links.append({"name": "bottleneck", "a": "r0", "b": "r1", "rate": bottleneck_rate,
                  "delay": bottleneck_delay, "queue": queue})
    links += [{"name": f"r1-d{i}", "a": "r1", "b": f"d{i}", **access} for i in range(n_flows)]
    flows = []
    for i in range(n_flows):
        flow: dict[str, Any] = {"name": f"f{i}", "protocol": "tcp", "src": f"s{i}",
                                "dst": f"d{i}", "app": {"kind": "bulk"}}
        if start_jitter is not None:
            flow["start"] = {"dist": "uniform", "low": "0s", "high": start_jitter}
        if tcp:
            flow["tcp"] = dict(tcp)
        flows.append(flow)
    return {
        "name": name or f"dumbbell-{n_flows}",
        "simulation": {"duration": duration},
        "node": nodes,
        "link": links,
        "flow": flows,
    }

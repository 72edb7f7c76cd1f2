"""The reference of a run's output files (`docs/outputs.md`, printed by `xlayer outputs`).

The flow and link columns and their definitions come from the Rust core, from the same
list that builds the tables (`xlayer._core.output_columns()`, defined in
crates/xlayer-sim/src/stats/report.rs). The time-series metrics are named by the models
that report them (the endpoints' `gauges`, the link sampler), and the manifest is built
here in Python: both are described below, and tests/test_docs.py checks that every
metric and manifest field a run produces is described and nothing else is.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _core


class Metric(NamedTuple):
    """A time-series metric: its `entity` kind, unit, where it appears, what it is."""

    name: str
    entity: str
    unit: str
    applies_to: str
    meaning: str


_INTERVAL = ("over the sampling interval that ends at `time_s` (`output.series_interval`; "
             "0 at `time_s` = 0)")

# In the order a run reports them: per flow (sender gauges, then goodput), per link
# direction. Gauges are the sender's state at `time_s`.
SERIES_METRICS: tuple[Metric, ...] = (
    Metric("cwnd_bytes", "flow", "bytes", "tcp",
           "Congestion window of the sender at `time_s`."),
    Metric("ssthresh_bytes", "flow", "bytes", "tcp",
           "Slow-start threshold at `time_s`; null until the first loss sets it (RFC 5681 §3.1: "
           "initially arbitrarily high)."),
    Metric("rwnd_bytes", "flow", "bytes", "tcp",
           "The receiver's advertised window as the sender last saw it (what window agents such "
           "as Koga's and CLAMP's rewrite)."),
    Metric("srtt_s", "flow", "s", "tcp, rudp",
           "Smoothed round-trip time at `time_s` (TCP: RFC 6298; RUDP/DBP: the rate "
           "controller's smoothed RTT); null until the first RTT sample."),
    Metric("rto_s", "flow", "s", "tcp, rudp",
           "Retransmission timeout the sender would arm at `time_s`: RFC 6298's RTO with the "
           "current exponential back-off, capped at the maximum."),
    Metric("bytes_in_flight", "flow", "bytes", "tcp",
           "FlightSize at `time_s`: `snd_nxt − snd_una`, bytes sent and not yet cumulatively "
           "acknowledged (SACKed bytes included)."),
    Metric("rate_bps", "flow", "bit/s", "rudp, tfmcc",
           "The sender's pacing rate at `time_s`: DBP's controlled rate or the constant rate; "
           "TFMCC's sending rate at the IP layer (RFC 4654 §4)."),
    Metric("rtt_s", "flow", "s", "rudp",
           "The most recent round-trip time sample; null until the first acknowledgement."),
    Metric("longest_loss_run", "flow", "packets", "rudp",
           "Longest run of consecutive packets found lost so far (a gap in the acknowledged "
           "sequence numbers)."),
    Metric("rtt_max_s", "flow", "s", "tfmcc",
           "The largest round-trip time the sender knows among its receivers (R_max, RFC 4654 §3.2), "
           "which sets the length of a feedback round."),
    Metric("x_supp_bps", "flow", "bit/s", "tfmcc",
           "The current feedback round's suppression rate (the lowest rate reported in it, echoed to "
           "the receivers, RFC 4654 §4.3); null before the round's first report."),
    Metric("slowstart", "flow", "–", "tfmcc",
           "1 while the sender is in slowstart (before the first loss any receiver reports), else 0."),
    Metric("window_pkts", "flow", "packets", "pgmcc",
           "PGMCC's window W (draft-ietf-rmt-bb-pgmcc-03 §3: +1/W per ACK, halved on a loss)."),
    Metric("tokens_pkts", "flow", "packets", "pgmcc",
           "PGMCC's tokens T: packets the sender may send now (one spent per packet; per ACK 1 + 1/W "
           "gained, 2 in slow start); may fall below 0 after a halving."),
    Metric("acker", "flow", "node", "pgmcc",
           "The node index of the current acker; null while none is elected."),
    Metric("acker_loss_rate", "flow", "–", "pgmcc",
           "The loss rate the acker last reported (its receiver-side EWMA); null without an acker."),
    Metric("acker_srtt_s", "flow", "s", "pgmcc",
           "The sender's smoothed round-trip time to the acker; null without an acker or a sample."),
    Metric("goodput_bps", "flow", "bit/s", "all",
           "Application bytes the flow's receivers got (as `app_rx_bytes` counts them) "
           f"{_INTERVAL}, · 8 ÷ the interval's length."),
    Metric("queue_bytes", "link direction", "bytes", "all",
           "Bytes waiting in the direction's buffers at `time_s` (not yet being sent)."),
    Metric("queue_packets", "link direction", "packets", "all",
           "Packets waiting in the direction's buffers at `time_s`."),
    Metric("throughput_bps", "link direction", "bit/s", "all",
           "Bytes (IP layer, every flow) that came out of the direction at its far end "
           f"{_INTERVAL}, · 8 ÷ the interval's length."),
    Metric("capacity_bps", "link direction", "bit/s",
           "trace-driven directions, cdma1x downlinks, shared (proportional-fair) downlinks",
           f"Bytes the direction could have carried {_INTERVAL}, · 8 ÷ the interval's length; for a "
           "shared downlink, what the cell would have got through with every receiver backlogged (its "
           "saturated shadow scheduler on the real channels); absent where the capacity is fixed."),
    Metric("margin_db", "link direction", "dB", "shared (proportional-fair) downlinks",
           "The backoff margin m of the rate rule at `time_s`, as an SNR backoff in dB, averaged over the "
           "receivers (adapted to `target_loss` or `target_slot_failure`, or fixed by `margin_db`)."),
)

# manifest.json of `xlayer run` and `RunResult.to_dir` (api.RunResult.manifest).
MANIFEST_FIELDS: tuple[tuple[str, str], ...] = (
    ("version", "xlayer's version."),
    ("commit", "Git commit the package was built from (`-dirty` with local changes); null "
               "when unknown."),
    ("seed", "The master seed."),
    ("run", "The replication index: with `seed`, it seeds every component's random stream."),
    ("rng", "The random number generator and how its streams are derived."),
    ("scenario_name", "The scenario's `name`."),
    ("scenario_hash", "Hash of the resolved scenario (after overrides), as the core computed it."),
    ("events", "Events the run processed."),
    ("sim_time_s", "Simulated time at the end, in seconds."),
    ("wall_time_s", "Wall-clock time the simulation took, in seconds."),
    ("fingerprint", "64-bit fingerprint of the event stream, as hex: the same scenario, seed "
                    "and run give the same fingerprint everywhere."),
    ("conservation", "Packet accounting: `sent`, `replicated` (extra copies group forwarding "
                     "made), `delivered`, `dropped`, `in_flight`, with sent + replicated = "
                     "delivered + dropped + in_flight."),
    ("command", "The command line (argv) that made the run."),
    ("cwd", "The working folder it ran in."),
    ("python", "Python version."),
    ("platform", "Operating system and machine."),
    ("created_utc", "When the files were written (UTC, ISO 8601)."),
    ("xlayer_output", "`{format, kind}`: marks the folder as xlayer's output (kind `run`), so a "
                      "later run may replace it."),
    ("files", "The result files in the folder."),
    ("scenario_file", "`xlayer run` only: the scenario file it read."),
    ("overrides", "`xlayer run` only: the `--set` values, by path."),
    ("scenario", "The resolved scenario that ran (overrides applied), as a table."),
)

HEADER = """# Output reference

`xlayer run` (and `RunResult.to_dir`) writes these files into its output folder. This
page is generated (`xlayer outputs > docs/outputs.md`): the flow and link columns and their
definitions come from the Rust core's column list (crates/xlayer-sim/src/stats/report.rs,
`xlayer._core.output_columns()`), the series metrics and manifest fields from
python/xlayer/outputs_doc.py; tests/test_docs.py checks that every column, metric and
field a run produces is described here.

Units: seconds (`_s`), bytes, packets, bits per second (`_bps`). Times are seconds since
the start of the run. *Applies to* names the flow protocols (`tcp`, `udp`, `rudp`) for
which a column carries information; elsewhere it is 0 (counts) or null (times).
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _unit(unit: str) -> str:
    return unit or "–"


def _columns_table(columns: list[dict[str, str]]) -> list[str]:
    rows = ["| column | type | unit | applies to | definition |", "|---|---|---|---|---|"]
    for c in columns:
        rows.append(f"| `{c['name']}` | {c['type']} | {_unit(c['unit'])} | "
                    f"{_cell(c['applies_to'])} | {_cell(c['meaning'])} |")
    return rows


def render() -> str:
    """The whole reference as Markdown (what docs/outputs.md holds)."""
    cols = _core.output_columns()
    out = [HEADER]
    out += ["## flows.parquet, flows.csv", "",
            "One row per flow and receiving node (a unicast flow: one row; a group flow: a "
            "session row with `receiver` = `*` and one row per member). Counts are of the "
            "data (forward) direction unless the name starts with `ack_`. Names follow ns-3 "
            "FlowMonitor's in snake_case. flows.csv holds the same table.", ""]
    out += _columns_table(cols["flows"]) + [""]
    out += ["## links.parquet", "",
            "One row per link direction: both directions of each `[[link]]`, and for each "
            "`[[radio]]` its shared downlink and one uplink per receiver.", ""]
    out += _columns_table(cols["links"]) + [""]
    out += ["## series.parquet", "",
            "The time series in long form, one row per (`time_s`, `entity`, `metric`): "
            "`time_s` (float, s) the sampling instant, 0 and then every "
            "`output.series_interval` up to the end of the run; `entity` (string) a flow's "
            "name, or a link direction as `<link>:<from>-><to>` (a radio's downlink: the "
            "radio's name); `metric` (string) one of the names below; `value` (float or "
            "null). `RunResult.series_wide(metric)` pivots one metric to a column per "
            "entity.", "",
            "| metric | entity | unit | applies to | definition |", "|---|---|---|---|---|"]
    for m in SERIES_METRICS:
        out.append(f"| `{m.name}` | {m.entity} | {m.unit} | {_cell(m.applies_to)} | "
                   f"{_cell(m.meaning)} |")
    out += ["", "## manifest.json", "",
            "Everything needed to identify and repeat the run. The Parquet files carry the "
            "same fields but `scenario` in their key-value metadata under `xlayer`.", "",
            "| field | definition |", "|---|---|"]
    out += [f"| `{name}` | {_cell(text)} |" for name, text in MANIFEST_FIELDS]
    out += ["", "## pcap/<link>.pcap", "",
            "With `--pcap`: one classic pcap file per `[[link]]` (both directions), nanosecond "
            "timestamps, LINKTYPE_RAW (101): real IPv4/TCP/UDP headers with valid checksums "
            "and no payload bytes. `output.pcap_links` picks the links (empty: all)."]
    return "\n".join(out).rstrip() + "\n"

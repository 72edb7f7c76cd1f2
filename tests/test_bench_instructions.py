"""The instruction-count benchmark's reading of callgrind, cargo and the benchmarks'
outputs (`benches/instructions.py`; its runs, minutes under valgrind, are the slow test
`tests/slow/test_instruction_targets.py`)."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, bench_module

instructions = bench_module("instructions")


def test_totals_reads_the_collected_count_and_prefers_totals_to_summary():
    head = "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 695983794\n"
    assert instructions.totals(head + "fn=(1) main\n0 12\ntotals: 695983795\n") == 695983795
    assert instructions.totals(head) == 695983794
    with pytest.raises(ValueError, match="no totals"):
        instructions.totals("events: Ir\nfn=(1) main\n0 12\n")


@pytest.mark.parametrize("case, output, expected", [
    ("dumbbell-16", "16 flow(s), probes off: 0.0251 s, 344212 events, 83240 packets\n", 83240),
    ("scale-10000", "10000 flow(s), 3 s: build 0.103 s, run 4.093 s, report 0.059 s, 4916667 events, "
                    "2365331 packets\n",
     2365331),
    ("cdma1x-50", "           model    UEs     run_s       events     segments ns/ev_best  ns/ev_med ns/seg_best"
                  " ns/seg_med finish_ms       fingerprint\n"
                  "          cdma1x     50     0.003         5852         2024      543.0      552.9      1570.0"
                  "     1598.5      0.12  17894a58386bde20\n",
     5852),
    ("koga-table2", "table2 (no QoS, 64 kb/s): median 8.5 ms wall per 60 s run (5.8 ms in the core, 12663 "
                    "events) [target < 200 ms]; 1438 TCP segments delivered: 5.94 us wall per segment\n", 1438),
])
def test_units_reads_what_each_benchmark_delivers(case, output, expected):
    assert instructions.units(output, instructions.CASES[case].unit_pattern) == expected


def test_units_names_the_output_it_could_not_read():
    with pytest.raises(ValueError, match="no match"):
        instructions.units("model UEs run_s events\n", instructions.EVENTS)


def test_bench_executables_keeps_only_built_benchmarks():
    lines = [
        json.dumps({"reason": "compiler-artifact", "target": {"name": "xlayer_sim", "kind": ["lib"]},
                    "executable": None}),
        json.dumps({"reason": "compiler-artifact", "target": {"name": "scale", "kind": ["bench"]},
                    "executable": "/t/release/deps/scale-1"}),
        json.dumps({"reason": "build-finished", "success": True}),
        "   Compiling xlayer-sim v0.1.0",
    ]
    assert instructions.bench_executables("\n".join(lines)) == {"scale": "/t/release/deps/scale-1"}


def test_every_target_compares_cases_that_exist():
    for _, num, den, bound in instructions.TARGETS:
        assert num in instructions.CASES and (den is None or den in instructions.CASES)
        assert bound > 0
    # Every Rust case names a benchmark of the crate.
    benches = {p.stem for p in (ROOT / "crates" / "xlayer-sim" / "benches").glob("*.rs")}
    assert {c.argv[0] for c in instructions.CASES.values()} - {"python"} <= benches


def test_checks_divide_a_unit_by_a_unit_and_skip_targets_whose_cases_did_not_run():
    def row(case: str, instr: int, count: int):
        return instructions.Row(case, case, "run", instr, "packet", count)
    rows = {"scale-16": row("scale-16", 2_900_000, 1_000), "scale-10000": row("scale-10000", 3_480_000, 1_000),
            "dumbbell-16": row("dumbbell-16", 3_010_000, 1_000)}
    found = {c.target: c for c in instructions.checks(rows)}
    assert len(found) == 2  # the radio targets' cases did not run
    assert found["10,000 flows within 1.5x of 16, a pair each"].value == pytest.approx(1.2)
    assert found["10,000 flows within 1.5x of 16, a pair each"].met
    assert not found["<= 3,000 instructions a packet, 16-flow dumbbell"].met

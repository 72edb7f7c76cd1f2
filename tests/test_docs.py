"""The scenario reference is generated from the Rust-owned schema; keep it in step."""

import json
from pathlib import Path

import pytest
from conftest import DUMBBELL, SCENARIOS

import xlayer
from xlayer import _core, outputs_doc, schema_doc

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"


def test_scenario_reference_matches_the_schema():
    assert DOC.read_text() == schema_doc.render(), (
        "docs/scenarios.md is stale: regenerate it with `xlayer schema --markdown > docs/scenarios.md`"
    )


def test_every_schema_field_is_documented():
    # Every property of every definition carries a description (with its default).
    schema = schema_doc.schema()
    missing = []
    for name, d in schema["definitions"].items():
        for variant in [d, *d.get("oneOf", []), *d.get("anyOf", [])]:
            for field, prop in variant.get("properties", {}).items():
                if "enum" in prop and len(prop["enum"]) == 1:
                    continue  # a variant tag
                if not prop.get("description"):
                    missing.append(f"{name}.{field}")
    assert not missing, f"undocumented fields: {missing}"


# --- docs/outputs.md: every output column, series metric and manifest field ------------

OUTPUTS = DOC.parent / "outputs.md"


def test_outputs_reference_matches_the_code():
    assert OUTPUTS.read_text() == outputs_doc.render(), (
        "docs/outputs.md is stale: regenerate it with `xlayer outputs > docs/outputs.md`"
    )


@pytest.fixture(scope="module")
def variety() -> list[xlayer.RunResult]:
    """Short runs that between them produce every flow kind and series metric: TCP over
    wired links, UDP CBR and TCP over lossy links, DBP on RUDP over a cdma1x downlink
    (whose capacity varies), CLAMP over a shared fading downlink (its margin), and a UDP
    CBR group flow with a deadline."""
    short = {"simulation.duration": "3s"}
    runs = [xlayer.run(SCENARIOS / name, overrides=short, progress=False)
            for name in ("dumbbell.toml", "dbp_cdma.toml", "clamp_fig3_fast.toml")]
    runs.append(xlayer.run(_udp_group(), progress=False))
    return runs


def _udp_group() -> dict:
    doc = xlayer.load(SCENARIOS / "lossy_link.toml")
    doc["simulation"]["duration"] = "2s"
    doc["group"] = [{"name": "g", "members": [{"node": "h1"}, {"node": "h3"}]}]
    doc["flow"] = [{"name": "cast", "protocol": "udp", "src": "h0", "dst": "g",
                    "app": {"kind": "cbr", "rate": "64kbps", "packet_size": "200B",
                            "deadline": "100ms"}},
                   {"name": "tf", "protocol": "tfmcc", "src": "h0", "dst": "g", "app": {"kind": "bulk"}},
                   {"name": "pg", "protocol": "pgmcc", "src": "h0", "dst": "g", "app": {"kind": "bulk"}}]
    doc["link"].append({"name": "h0-h2", "a": "h0", "b": "h2", "rate": "10Mbps", "delay": "5ms"})
    return doc


def test_every_table_column_a_run_produces_is_documented(variety):
    cols = _core.output_columns()
    for res in variety:
        assert list(res.flows.columns) == [c["name"] for c in cols["flows"]]
        assert list(res.links.columns) == [c["name"] for c in cols["links"]]
    text = OUTPUTS.read_text()
    for c in cols["flows"] + cols["links"]:
        assert f"| `{c['name']}` |" in text
        assert c["meaning"] and c["applies_to"], c


def test_every_series_metric_is_documented_and_none_is_made_up(variety):
    produced = set().union(*(set(r.series["metric"]) for r in variety))
    documented = {m.name for m in outputs_doc.SERIES_METRICS}
    assert produced - documented == set(), "series metrics missing from outputs_doc.SERIES_METRICS"
    assert documented - produced == set(), "documented metrics that no run produces"
    assert set(variety[0].series["metric"]) >= {"cwnd_bytes", "srtt_s", "queue_bytes"}


def test_every_manifest_field_is_documented(tmp_path, run_cli):
    code, out, err = run_cli("run", DUMBBELL, "--set", "simulation.duration=1s",
                             "--out", tmp_path / "o", "-q")
    assert code == 0, err
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert list(manifest) == [name for name, _ in outputs_doc.MANIFEST_FIELDS]


def test_xlayer_outputs_prints_the_reference(run_cli):
    code, out, err = run_cli("outputs")
    assert code == 0, err
    assert out == OUTPUTS.read_text()

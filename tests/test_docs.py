"""The scenario reference is generated from the Rust-owned schema; keep it in step."""

from pathlib import Path

from xlayer import schema_doc

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

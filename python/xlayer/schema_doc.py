"""Render the scenario JSON Schema (owned by the Rust core) as a Markdown reference.

`docs/scenarios.md` is this output; a test keeps the two in step, so the reference can
never drift from what the parser accepts.
"""

from __future__ import annotations

from typing import Any

from .scenario import schema

HEADER = """# Scenario reference

Scenarios are TOML files (or Python dicts with the same shape). Unknown fields are
errors; quantities with units are strings: rates `"10Mbps"`, `"64kbps"`, `"1.5Mb/s"`;
durations `"25ms"`, `"1.5s"`, `"100us"`; sizes `"1500B"`, `"64KiB"`, `"1MB"`; queue limits
`"100pkt"` or a size. Arrays of tables are written `[[node]]`, `[[link]]`, `[[radio]]`,
`[[flow]]`; `--set` and sweep grids address their elements by name or index
(`link.bottleneck.rate`, `flow.0.app.rate`).

This page is generated from the schema (`xlayer schema --markdown`); the JSON Schema
itself is `xlayer schema`.
"""


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        name = _ref_name(prop["$ref"])
        return f"[{name}](#{name.lower()})"
    for key in ("allOf", "anyOf", "oneOf"):
        if key in prop:
            parts = [_type(p) for p in prop[key] if p.get("type") != "null"]
            return " or ".join(parts)
    t = prop.get("type")
    if t == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if isinstance(t, list):
        return " or ".join(x for x in t if x != "null")
    if "enum" in prop:
        return _quoted(prop["enum"])
    return str(t or "any")


def _quoted(values: list[Any]) -> str:
    return ", ".join(f'`"{v}"`' for v in values)


def _clean(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _table(obj: dict[str, Any], skip: str | None = None) -> list[str]:
    required = set(obj.get("required", []))
    rows = ["| field | type | description |", "|---|---|---|"]
    for name, prop in sorted(obj.get("properties", {}).items()):
        if name == skip:
            continue
        desc = _clean(prop.get("description", ""))
        if name in required and "Required" not in desc:
            desc = (desc + " Required.").strip()
        rows.append(f"| `{name}` | {_type(prop)} | {desc} |")
    return rows


def _tag(variant: dict[str, Any]) -> tuple[str, str] | None:
    for key, prop in variant.get("properties", {}).items():
        values = prop.get("enum")
        if values and len(values) == 1:
            return key, values[0]
    return None


def _definition(name: str, d: dict[str, Any]) -> list[str]:
    out = [f"## {name}", ""]
    if d.get("description"):
        out += [_clean(d["description"]), ""]
    if "properties" in d:
        out += _table(d) + [""]
    for variant in d.get("oneOf", []) + d.get("anyOf", []):
        tag = _tag(variant)
        if tag:
            out += [f'### `{tag[0]} = "{tag[1]}"`', ""]
            if variant.get("description"):
                out += [_clean(variant["description"]), ""]
            rows = _table(variant, skip=tag[0])
            out += (rows if len(rows) > 2 else ["No further fields."]) + [""]
        elif "enum" in variant:
            desc = _clean(variant.get("description", ""))
            out += [f"- {_quoted(variant['enum'])}: {desc}"]
    if "enum" in d:
        out += [f"One of {_quoted(d['enum'])}.", ""]
    if d.get("type") == "string" and "pattern" in d:
        out += [f"A string matching `{d['pattern']}`.", ""]
    if out[-1] != "":
        out.append("")
    return out


def render() -> str:
    doc = schema()
    lines = [HEADER, "## Scenario (top level)", ""] + _table(doc) + [""]
    for name, d in sorted(doc.get("definitions", {}).items()):
        lines += _definition(name, d)
    return "\n".join(lines).rstrip() + "\n"

//! Convert a run report into dicts of columns: lists, which pandas takes directly, and
//! the series' columns as buffers (`coded` names, `floats`), which are long.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use xlayer_sim::stats::{Column, FlowRow, LinkRow};
use xlayer_sim::{Divergence, RunReport};

/// A table as a dict of columns, from the one column definition in `xlayer_sim::stats`.
fn table<'py>(py: Python<'py>, columns: Vec<(String, Column)>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, column) in columns {
        match column {
            Column::U64(v) => d.set_item(name, v)?,
            Column::F64(v) => d.set_item(name, v)?,
            Column::OptF64(v) => d.set_item(name, v)?,
            Column::Str(v) => d.set_item(name, v)?,
        }
    }
    Ok(d)
}

/// A column of names given by index, as `{"names": [str], "codes": bytes}` with one
/// native-endian `u32` index a row (as Arrow lays it out): a Python string per row cost an allocation and a
/// UTF-8 decode each, and pandas then converted every one again (`native.arrow_array`
/// decodes the column in Arrow instead).
fn coded<'a, 'py>(
    py: Python<'py>,
    names: impl Iterator<Item = &'a str>,
    rows: impl ExactSizeIterator<Item = u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("names", names.collect::<Vec<_>>())?;
    let codes: Vec<u8> = rows.flat_map(u32::to_ne_bytes).collect();
    d.set_item("codes", PyBytes::new(py, &codes))?;
    Ok(d)
}

/// A float column as `{"float64": bytes}`, native-endian as Arrow and numpy lay it out:
/// a Python float a row cost an allocation each, and pandas then read every one back.
fn floats<'py>(py: Python<'py>, values: &[f64]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    d.set_item("float64", PyBytes::new(py, &bytes))?;
    Ok(d)
}

pub fn to_dict<'py>(py: Python<'py>, r: &RunReport, wall_time_s: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", table(py, FlowRow::columns(&r.flows))?)?;
    d.set_item("links", table(py, LinkRow::columns(&r.links))?)?;
    let s = PyDict::new(py);
    s.set_item("time_s", floats(py, &r.series.time_s)?)?;
    let entities = r.entities.iter().map(String::as_str);
    s.set_item("entity", coded(py, entities, r.series.entity.iter().copied())?)?;
    let metrics = r.series.metric_names.iter().copied();
    s.set_item("metric", coded(py, metrics, r.series.metric.iter().map(|&m| u32::from(m)))?)?;
    s.set_item("value", floats(py, &r.series.value)?)?;
    d.set_item("series", s)?;
    d.set_item("fingerprint", format!("0x{:016x}", r.fingerprint))?;
    d.set_item("events", r.events)?;
    d.set_item("sim_time_s", r.sim_time_s)?;
    d.set_item("scenario_hash", &r.scenario_hash)?;
    d.set_item("wall_time_s", wall_time_s)?;
    let c = PyDict::new(py);
    c.set_item("sent", r.conservation.sent)?;
    c.set_item("replicated", r.conservation.replicated)?;
    c.set_item("delivered", r.conservation.delivered)?;
    c.set_item("dropped", r.conservation.dropped)?;
    c.set_item("in_flight", r.conservation.in_flight)?;
    d.set_item("conservation", c)?;
    Ok(d)
}

/// The flow and link tables' columns with their definitions, from the same list that
/// builds the tables: {"flows": [...], "links": [...]}, each column a dict with `name`,
/// `type`, `unit`, `applies_to` and `meaning` (docs/outputs.md is generated from it).
pub fn column_docs(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (table, docs) in [("flows", FlowRow::column_docs()), ("links", LinkRow::column_docs())] {
        let columns = docs
            .into_iter()
            .map(|(name, type_name, doc)| {
                let d = PyDict::new(py);
                d.set_item("name", name)?;
                d.set_item("type", type_name)?;
                d.set_item("unit", doc.unit)?;
                d.set_item("applies_to", doc.applies_to)?;
                d.set_item("meaning", doc.meaning)?;
                Ok(d)
            })
            .collect::<PyResult<Vec<_>>>()?;
        out.set_item(table, columns)?;
    }
    Ok(out)
}

pub fn divergence_to_dict<'py>(py: Python<'py>, d: &Divergence) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("index", d.index)?;
    for (key, e) in [("first", d.first), ("second", d.second)] {
        let v = e.map(|e| format!("t={} {} component={} packet={}", e.time, e.kind, e.component, e.packet));
        out.set_item(key, v)?;
    }
    Ok(out)
}

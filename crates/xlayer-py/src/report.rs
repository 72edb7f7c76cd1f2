//! Convert a run report into dicts of columns: lists, which pandas takes directly, and
//! the series' columns as buffers (`text`, `floats`), which are long.

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

/// A column of names given by index, as Arrow lays out a `large_string` array:
/// `{"offsets": bytes, "utf8": bytes}`, n + 1 native-endian `i64` offsets into the rows'
/// UTF-8 text (both empty without rows). A Python string a row cost an allocation and a
/// UTF-8 decode each, and pandas then converted every one again; names passed once with
/// a code a row left Arrow a decode of 7 ns a row. Here the bytes are written straight
/// into the Python objects, and pandas keeps its strings as `large_string`
/// (`native.text_array` wraps the buffers as they are).
fn text<'py>(
    py: Python<'py>,
    names: &[&str],
    rows: impl ExactSizeIterator<Item = u32> + Clone,
) -> PyResult<Bound<'py, PyDict>> {
    let n = rows.len();
    let mut end = 0;
    let offsets = PyBytes::new_with(py, if n > 0 { 8 * (n + 1) } else { 0 }, |buf| {
        for (offset, row) in buf.chunks_exact_mut(8).skip(1).zip(rows.clone()) {
            end += names[row as usize].len();
            offset.copy_from_slice(&(end as i64).to_ne_bytes());
        }
        Ok(())
    })?;
    let utf8 = PyBytes::new_with(py, end, |buf| {
        copy_names(names, rows, buf);
        Ok(())
    })?;
    let d = PyDict::new(py);
    d.set_item("offsets", offsets)?;
    d.set_item("utf8", utf8)?;
    Ok(d)
}

/// The rows' names one after another into `buf` (exactly their length). Names of at most
/// `PAD` bytes (the metrics', and most entities') go in as one fixed-size copy each, the
/// next row writing over the padding: a copy of a name's own length is a call to
/// `memcpy` a row, which took most of the time.
fn copy_names(names: &[&str], rows: impl Iterator<Item = u32>, buf: &mut [u8]) {
    const PAD: usize = 16;
    let mut at = 0;
    if names.iter().all(|s| s.len() <= PAD) {
        let padded: Vec<[u8; PAD]> = names
            .iter()
            .map(|s| {
                let mut p = [0; PAD];
                p[..s.len()].copy_from_slice(s.as_bytes());
                p
            })
            .collect();
        for row in rows {
            let len = names[row as usize].len();
            match buf.get_mut(at..at + PAD) {
                Some(room) => room.copy_from_slice(&padded[row as usize]),
                None => buf[at..at + len].copy_from_slice(&padded[row as usize][..len]),
            }
            at += len;
        }
    } else {
        for row in rows {
            let name = names[row as usize].as_bytes();
            buf[at..at + name.len()].copy_from_slice(name);
            at += name.len();
        }
    }
}

/// A float column as `{"float64": bytes}`, native-endian as Arrow and numpy lay it out:
/// a Python float a row cost an allocation each, and pandas then read every one back.
/// Written straight into the Python object: a buffer between them cost as much again,
/// in fresh pages (docs/performance.md, "The Python front's cost per run").
fn floats<'py>(py: Python<'py>, values: &[f64]) -> PyResult<Bound<'py, PyDict>> {
    let bytes = PyBytes::new_with(py, 8 * values.len(), |buf| {
        for (b, v) in buf.chunks_exact_mut(8).zip(values) {
            b.copy_from_slice(&v.to_ne_bytes());
        }
        Ok(())
    })?;
    let d = PyDict::new(py);
    d.set_item("float64", bytes)?;
    Ok(d)
}

pub fn to_dict<'py>(py: Python<'py>, r: &RunReport, wall_time_s: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", table(py, FlowRow::columns(&r.flows))?)?;
    d.set_item("links", table(py, LinkRow::columns(&r.links))?)?;
    let s = PyDict::new(py);
    s.set_item("time_s", floats(py, &r.series.time_s)?)?;
    let entities: Vec<&str> = r.entities.iter().map(String::as_str).collect();
    s.set_item("entity", text(py, &entities, r.series.entity.iter().copied())?)?;
    s.set_item("metric", text(py, &r.series.metric_names, r.series.metric.iter().map(|&m| u32::from(m)))?)?;
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

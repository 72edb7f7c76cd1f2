//! Convert a run report into dicts of columns (lists), which pandas takes directly.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use xlayer_sim::stats::{FlowRow, LinkRow};
use xlayer_sim::{Divergence, RunReport};

macro_rules! columns {
    ($py:expr, $rows:expr, $($field:ident),+ $(,)?) => {{
        let d = PyDict::new($py);
        $( d.set_item(stringify!($field), $rows.iter().map(|r| r.$field.clone()).collect::<Vec<_>>())?; )+
        d
    }};
}

fn flows<'py>(py: Python<'py>, rows: &[FlowRow]) -> PyResult<Bound<'py, PyDict>> {
    Ok(columns!(py, rows,
        flow, name, protocol, src, dst, tx_packets, tx_bytes, rx_packets, rx_bytes,
        lost_packets, lost_queue_overflow, lost_channel, lost_arq_discard, lost_reorder_timeout,
        in_flight_packets,
        ack_tx_packets, ack_rx_packets, ack_lost_packets,
        first_tx_s, last_tx_s, first_rx_s, last_rx_s,
        delay_mean_s, delay_p50_s, delay_p95_s, delay_p99_s, delay_max_s, jitter_mean_s,
        app_rx_bytes, goodput_bps, retransmissions, timeouts, fast_retransmits, completion_time_s,
        reordered_packets, late_packets, late_reordered_packets,
    ))
}

fn links<'py>(py: Python<'py>, rows: &[LinkRow]) -> PyResult<Bound<'py, PyDict>> {
    Ok(columns!(py, rows,
        link, direction, rate_bps, tx_packets, tx_bytes, utilization,
        drops_queue_overflow, drops_channel, drops_arq_discard, drops_reorder_timeout,
        queue_packets_at_end,
    ))
}

pub fn to_dict<'py>(py: Python<'py>, r: &RunReport, wall_time_s: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", flows(py, &r.flows)?)?;
    d.set_item("links", links(py, &r.links)?)?;
    let s = PyDict::new(py);
    s.set_item("time_s", &r.series.time_s)?;
    s.set_item("entity", r.series.entity.iter().map(|&e| r.entities[e as usize].as_str()).collect::<Vec<_>>())?;
    s.set_item("metric", r.series.metric.iter().map(|m| m.name()).collect::<Vec<_>>())?;
    s.set_item("value", &r.series.value)?;
    d.set_item("series", s)?;
    d.set_item("fingerprint", format!("0x{:016x}", r.fingerprint))?;
    d.set_item("events", r.events)?;
    d.set_item("sim_time_s", r.sim_time_s)?;
    d.set_item("scenario_hash", &r.scenario_hash)?;
    d.set_item("wall_time_s", wall_time_s)?;
    let c = PyDict::new(py);
    c.set_item("sent", r.conservation.sent)?;
    c.set_item("delivered", r.conservation.delivered)?;
    c.set_item("dropped", r.conservation.dropped)?;
    c.set_item("in_flight", r.conservation.in_flight)?;
    d.set_item("conservation", c)?;
    Ok(d)
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

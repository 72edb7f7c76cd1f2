//! Memory the run will need for what grows with the scenario's size and length, estimated
//! before anything is allocated, so that a scenario that would exhaust memory is refused
//! with the estimate and the option that lowers it instead of being killed mid-run.
//!
//! Two things grow: the time series (one sample per series per `output.series_interval`
//! for the whole duration) and the route table (one row per node that is not a stub
//! host, one column per node). Everything else is bounded per flow or link: the flow
//! table's delays are a sketch (`stats::delay`), captures stream to disk, trace files
//! are read once.

use super::schema::Scenario;
use super::topology;
use super::ScenarioError;
use std::collections::HashMap;

/// Default of `output.memory_budget`: 1 GiB. The Python tables built from the series
/// take about six times the core's bytes again (boxed floats and a DataFrame), so the
/// default keeps a run within a few GiB end to end.
pub const DEFAULT_MEMORY_BUDGET_BYTES: u64 = 1 << 30;

/// One series sample in the core: time (f64), entity (u32), metric (u16), value (f64).
const SAMPLE_BYTES: u128 = 8 + 4 + 2 + 8;
/// Series of a flow: its goodput and at most TCP's six sender gauges (cwnd, ssthresh,
/// rwnd, srtt, rto, bytes in flight).
const GAUGES_PER_FLOW: u128 = 7;
/// Metrics of each link direction: queue bytes, queue packets, throughput (and the
/// capacity of a trace-driven direction).
const METRICS_PER_LINK: u128 = 3;
/// One route table entry: next link and next node (two u32).
const ROUTE_BYTES: u128 = 8;

/// Bytes of the time series over the whole run (0 with series off).
pub(crate) fn series_bytes(s: &Scenario) -> u128 {
    let interval = s.output.series_interval.0 .0 as u128;
    if interval == 0 {
        return 0;
    }
    let samples = s.simulation.duration.0 .0 as u128 / interval + 1;
    let traced: usize = s
        .links
        .iter()
        .filter_map(|l| l.trace.as_ref())
        .map(|t| t.a_to_b.is_some() as usize + t.b_to_a.is_some() as usize)
        .sum();
    let series = s.flows.iter().map(|f| f.instances() as u128).sum::<u128>() * GAUGES_PER_FLOW
        + topology::hop_count(s) as u128 * METRICS_PER_LINK
        + traced as u128;
    samples * series * SAMPLE_BYTES
}

/// Bytes of the route table (an upper bound: rows for every node that is not a host
/// hanging off a single neighbour that has others).
pub(crate) fn route_bytes(s: &Scenario, nodes: &HashMap<&str, u32>) -> u128 {
    let n = s.nodes.len();
    let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); n];
    for e in topology::edges(s, nodes) {
        for (a, b) in [(e.from, e.to), (e.to, e.from)] {
            let list = &mut neighbours[a as usize];
            if !list.contains(&b) && list.len() < 2 {
                list.push(b);
            }
        }
    }
    let stub = |v: usize| neighbours[v].len() == 1 && neighbours[neighbours[v][0] as usize].len() > 1;
    let rows = (0..n).filter(|&v| !stub(v)).count() as u128;
    rows * n as u128 * ROUTE_BYTES
}

fn human(bytes: u128) -> String {
    let b = bytes as f64;
    match bytes {
        0..=1_048_575 => format!("{:.0} KiB", b / 1024.0),
        1_048_576..=1_073_741_823 => format!("{:.0} MiB", b / 1_048_576.0),
        _ => format!("{:.1} GiB", b / 1_073_741_824.0),
    }
}

/// Refuse a scenario whose series or route table would exceed `output.memory_budget`.
pub(crate) fn check(s: &Scenario, nodes: &HashMap<&str, u32>) -> Result<(), ScenarioError> {
    let budget = s.output.memory_budget.map_or(DEFAULT_MEMORY_BUDGET_BYTES, |b| b.0) as u128;
    let over = |what: String, bytes: u128, lower: &str| {
        format!(
            "{what} would take about {} of memory, over the budget of {} (output.memory_budget); {lower}, \
             or raise output.memory_budget",
            human(bytes),
            human(budget)
        )
    };
    let series = series_bytes(s);
    if series > budget {
        let what = format!(
            "the time series ({} flows and {} link directions, every {} for {})",
            s.flows.iter().map(|f| f.instances()).sum::<usize>(),
            topology::hop_count(s),
            s.output.series_interval,
            s.simulation.duration
        );
        let lower = "raise output.series_interval, or set it to \"0s\" to record no series";
        return Err(ScenarioError::at("output.series_interval", over(what, series, lower)));
    }
    let routes = route_bytes(s, nodes);
    if routes > budget {
        let what = format!("the route table ({} nodes, one row per router)", s.nodes.len());
        let lower = "use fewer routers (hosts with a single link need no row)";
        return Err(ScenarioError::at("node", over(what, routes, lower)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumbbell(flows: usize, interval: &str, duration: &str) -> Scenario {
        let mut t = format!(
            "[simulation]\nduration = \"{duration}\"\n[output]\nseries_interval = \"{interval}\"\n\
             [[node]]\nname = \"r0\"\nkind = \"router\"\n[[node]]\nname = \"r1\"\nkind = \"router\"\n\
             [[link]]\na = \"r0\"\nb = \"r1\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n"
        );
        for i in 0..flows {
            t += &format!(
                "[[node]]\nname = \"s{i}\"\n[[node]]\nname = \"d{i}\"\n\
                 [[link]]\na = \"s{i}\"\nb = \"r0\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
                 [[link]]\na = \"r1\"\nb = \"d{i}\"\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
                 [[flow]]\nprotocol = \"tcp\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\napp = {{ kind = \"bulk\" }}\n"
            );
        }
        toml::from_str(&t).expect("schema")
    }

    #[test]
    fn series_estimate_counts_samples_series_and_bytes() {
        // 2 flows · 7 series + 10 link directions · 3 metrics = 44 series; 11 samples.
        assert_eq!(series_bytes(&dumbbell(2, "100ms", "1s")), 11 * 44 * 22);
        assert_eq!(series_bytes(&dumbbell(2, "0s", "1s")), 0);
    }

    #[test]
    fn a_series_over_the_budget_is_refused_with_the_option_that_lowers_it() {
        let s = dumbbell(1, "1us", "100s");
        let e = s.validate().expect_err("100 s of 1 µs samples of 25 series is 55 GB");
        assert_eq!(e.path, "output.series_interval");
        assert!(e.message.contains("about 51.2 GiB") && e.message.contains("\"0s\""), "{e}");
        let mut raised = s.clone();
        raised.output.memory_budget = Some(super::super::units::Bytes(60 << 30));
        raised.validate().expect("a raised budget lets it run");
    }

    #[test]
    fn stubs_need_no_route_rows() {
        let s = dumbbell(100, "0s", "1s");
        let nodes = s.node_index();
        // Only the two routers get rows; the 200 hosts hang off them.
        assert_eq!(route_bytes(&s, &nodes), 2 * 202 * 8);
    }
}

//! From a flow spec to the flows the world runs, with everything the spec leaves to
//! chance drawn here, at build time: the start, the file size, the on/off periods (as
//! draw functions the source calls), and an arrival process's flows.
//!
//! Every draw comes from a stream named after the flow (`flow:<name>:start`, `:size`,
//! `:arrivals`, `:on`, `:off`, `:feedback`), so adding, removing or reordering flows never changes
//! another flow's draws.

use super::dist::{Cdf, TimeSpec};
use super::registry::FlowPlace;
use super::schema::*;
use super::topology;
use super::ScenarioError;
use crate::engine::{stream, Rng};
use rand::RngCore;
use std::collections::HashMap;
use xlayer_proto::app::PeriodFn;
use xlayer_proto::{Addr, SimDur, SimTime};

/// The flows one flow spec makes (one, or `count` for an arrival process), and whether
/// making them drew any random number.
pub(crate) struct Expanded {
    pub places: Vec<FlowPlace>,
    pub random: bool,
}

pub(crate) fn expand(
    s: &Scenario,
    nodes: &HashMap<&str, u32>,
    f: &FlowSpec,
    index: usize,
    seed: u64,
    run: u64,
) -> Result<Expanded, ScenarioError> {
    let name = f.resolved_name(index);
    let rng = |purpose: &str| stream(seed, run, &format!("flow:{name}:{purpose}"));
    let index_of = |n: &str| nodes[n];
    let dst = match s.group(&f.dst) {
        Some(g) => Addr::group(g as u32),
        None => Addr(index_of(&f.dst)),
    };
    let receivers: Vec<u32> = topology::receiver_names(s, f).into_iter().map(index_of).collect();
    let stop = f.stop.map_or(SimTime::MAX, |d| SimTime::ZERO + d.0);
    let start = SimTime::ZERO + f.start.as_ref().map_or(SimDur::ZERO, |t| t.draw(&mut rng("start")));
    let size = f.file_size();
    let cdf: Option<Cdf> = match size.and_then(|z| z.file()) {
        Some(file) => Some(s.load_cdf(file).map_err(|e| ScenarioError::at(format!("flow[{index}].app.size.file"), e))?),
        None => None,
    };
    let mut size_rng = rng("size");
    let mut file_bytes = || size.map(|z| z.draw(&mut size_rng, cdf.as_ref()));
    let place = |name: String, start: SimTime, file_bytes: Option<u64>| FlowPlace {
        feedback_seed: stream(seed, run, &format!("flow:{name}:feedback")).next_u64(),
        name,
        src: index_of(&f.src),
        dst,
        receivers: receivers.clone(),
        start,
        stop,
        file_bytes,
        on_off: None,
    };
    let random_start = f.start.as_ref().is_some_and(TimeSpec::is_random);
    let random_size = size.is_some_and(|z| z.is_random());
    // TFMCC and PGMCC receivers draw their feedback timers (stream `flow:<name>:feedback`).
    let random_feedback = matches!(f.protocol, Protocol::Tfmcc | Protocol::Pgmcc);
    let Some(arrivals) = &f.arrivals else {
        let mut p = place(name.clone(), start, file_bytes());
        let mut random = random_start || random_size || random_feedback;
        if let Some(o) = &f.on_off {
            p.on_off = Some((period(&o.on, rng("on")), period(&o.off, rng("off"))));
            random |= o.on.is_random() || o.off.is_random();
        }
        return Ok(Expanded { places: vec![p], random });
    };
    let mut gaps = rng("arrivals");
    let mut at = start;
    let places = (0..f.instances())
        .map(|k| {
            at += arrivals.draw(&mut gaps);
            place(format!("{name}#{k}"), at, file_bytes())
        })
        .collect();
    Ok(Expanded { places, random: random_start || random_size || random_feedback || arrivals.is_random() })
}

/// A draw function over the period's own stream.
fn period(spec: &TimeSpec, mut rng: Rng) -> PeriodFn {
    let spec = spec.clone();
    Box::new(move || spec.draw(&mut rng))
}

//! Checks serde cannot express: names resolve, values are in range, protocol and
//! application agree.

use super::dist::{SizeSpec, TimeDist, TimeSpec};
use super::schema::*;
use super::units::{Duration, QueueLimit};
use super::ScenarioError;
use super::{budget, topology};
use crate::net::Routes;
use std::collections::{BTreeSet, HashMap};
use xlayer_proto::packet::{IPV4_HEADER_BYTES, TCP_HEADER_BYTES, UDP_HEADER_BYTES};
use xlayer_proto::SimDur;

type R = Result<(), ScenarioError>;

const MAX_DURATION: xlayer_proto::SimDur = xlayer_proto::SimDur::from_secs(100 * 365 * 86_400);

fn probability(path: String, p: f64) -> R {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(ScenarioError::at(path, format!("{p} is not a probability: it must be in [0, 1]")))
    }
}

/// Names become file names (captures are `<link>.pcap`) and table keys, so they keep to
/// a portable alphabet: letters, digits, '.', '_' and '-', starting with a letter or digit.
pub(crate) fn safe_name(n: &str) -> bool {
    n.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn unique<'a>(what: &str, names: impl Iterator<Item = (usize, &'a str)>) -> R {
    let mut seen = BTreeSet::new();
    for (i, n) in names {
        if n.is_empty() {
            return Err(ScenarioError::at(format!("{what}[{i}].name"), "must not be empty"));
        }
        if !safe_name(n) {
            return Err(ScenarioError::at(
                format!("{what}[{i}].name"),
                format!("`{n}` may use only letters, digits, '.', '_' and '-', and must start with a letter or digit"),
            ));
        }
        if !seen.insert(n) {
            return Err(ScenarioError::at(
                format!("{what}[{i}].name"),
                format!("`{n}` is used twice; names must be unique"),
            ));
        }
    }
    Ok(())
}

impl LinkSpec {
    pub fn resolved_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| format!("{}-{}", self.a, self.b))
    }
}

impl FlowSpec {
    pub fn resolved_name(&self, index: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("flow{index}"))
    }

    /// Flows it expands into: `count` with an arrival process, else 1.
    pub fn instances(&self) -> usize {
        match self.arrivals {
            Some(_) => self.count.unwrap_or(1) as usize,
            None => 1,
        }
    }

    /// A file application's size.
    pub fn file_size(&self) -> Option<&SizeSpec> {
        match &self.app {
            AppSpec::File { size } => Some(size),
            _ => None,
        }
    }
}

/// Most flows an arrival process may expand into.
pub const MAX_ARRIVALS: u32 = 100_000;

impl Scenario {
    /// Every check the build relies on: passing means `build` starts (short of I/O
    /// errors writing captures).
    pub fn validate(&self) -> R {
        self.checked().map(|_| ())
    }

    /// `validate`, returning the routes so that the build does not search them again.
    pub(crate) fn checked(&self) -> Result<Routes, ScenarioError> {
        self.validate_fields()?;
        let nodes = self.node_index();
        budget::check(self, &nodes)?;
        let routes = topology::routes(self, &nodes);
        topology::check_paths(self, &nodes, &routes)?;
        Ok(routes)
    }

    /// Names resolve and values are in range.
    fn validate_fields(&self) -> R {
        if self.simulation.duration.0 .0 == 0 {
            return Err(ScenarioError::at("simulation.duration", "must be greater than 0s"));
        }
        // Simulated time is u64 nanoseconds (584 years); keep every deadline far from it.
        if self.simulation.duration.0 > MAX_DURATION {
            return Err(ScenarioError::at("simulation.duration", "must be at most 100 years (3153600000s)"));
        }
        if self.simulation.max_events_per_instant == Some(0) {
            return Err(ScenarioError::at("simulation.max_events_per_instant", "must be at least 1"));
        }
        if self.output.memory_budget.is_some_and(|b| b.0 == 0) {
            return Err(ScenarioError::at("output.memory_budget", "must be at least 1B"));
        }
        if self.output.warmup.is_some_and(|w| w.0 >= self.simulation.duration.0) {
            return Err(ScenarioError::at(
                "output.warmup",
                format!("must be shorter than simulation.duration ({})", self.simulation.duration),
            ));
        }
        if self.nodes.is_empty() {
            return Err(ScenarioError::at("node", "a scenario needs at least one node"));
        }
        unique("node", self.nodes.iter().enumerate().map(|(i, n)| (i, n.name.as_str())))?;
        let nodes = &self.node_index();
        let link_names: Vec<String> = self.links.iter().map(|l| l.resolved_name()).collect();
        unique("link", link_names.iter().enumerate().map(|(i, n)| (i, n.as_str())))?;
        for (i, r) in self.radios.iter().enumerate() {
            if !safe_name(&r.name) {
                return Err(ScenarioError::at(
                    format!("radio[{i}].name"),
                    format!(
                        "`{}` may use only letters, digits, '.', '_' and '-', and must start with a letter or digit",
                        r.name
                    ),
                ));
            }
            if link_names.contains(&r.name) || self.radios[..i].iter().any(|o| o.name == r.name) {
                return Err(ScenarioError::at(
                    format!("radio[{i}].name"),
                    format!("`{}` is used twice; link and radio names must be unique", r.name),
                ));
            }
            self.node(nodes, || format!("radio[{i}].from"), &r.from)?;
            if r.to.is_empty() {
                return Err(ScenarioError::at(format!("radio[{i}].to"), "needs at least one receiver node"));
            }
            let mut listed = BTreeSet::new();
            for (j, to) in r.to.iter().enumerate() {
                self.node(nodes, || format!("radio[{i}].to[{j}]"), to)?;
                if *to == r.from || !listed.insert(to) {
                    return Err(ScenarioError::at(
                        format!("radio[{i}].to[{j}]"),
                        format!("`{to}` must be listed once and differ from `from`"),
                    ));
                }
            }
            let model_path = format!("radio[{i}].model");
            r.model.validate(&model_path)?;
            r.model.validate_receivers(&format!("radio[{i}].to"), &model_path, &r.to)?;
        }
        for (i, l) in self.links.iter().enumerate() {
            self.node(nodes, || format!("link[{i}].a"), &l.a)?;
            self.node(nodes, || format!("link[{i}].b"), &l.b)?;
            if l.a == l.b {
                return Err(ScenarioError::at(format!("link[{i}].b"), "a link must join two different nodes"));
            }
            match l.queue {
                QueueLimit::Packets(0) | QueueLimit::Bytes(0) => {
                    return Err(ScenarioError::at(format!("link[{i}].queue"), "must be at least 1 packet or 1 byte"))
                }
                _ => {}
            }
            self.validate_link_rate_and_traces(i, l)?;
            match l.loss {
                Some(LossSpec::Bernoulli { p }) => probability(format!("link[{i}].loss.p"), p)?,
                Some(LossSpec::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad }) => {
                    probability(format!("link[{i}].loss.p_good_to_bad"), p_good_to_bad)?;
                    probability(format!("link[{i}].loss.p_bad_to_good"), p_bad_to_good)?;
                    probability(format!("link[{i}].loss.loss_good"), loss_good)?;
                    probability(format!("link[{i}].loss.loss_bad"), loss_bad)?;
                }
                Some(LossSpec::Steps { ref steps }) => {
                    if steps.first().is_none_or(|s| s.at.0 != SimDur::ZERO) {
                        return Err(ScenarioError::at(
                            format!("link[{i}].loss.steps"),
                            "needs at least one step, the first at \"0s\"",
                        ));
                    }
                    for (k, st) in steps.iter().enumerate() {
                        probability(format!("link[{i}].loss.steps[{k}].p"), st.p)?;
                        if k > 0 && st.at.0 <= steps[k - 1].at.0 {
                            return Err(ScenarioError::at(
                                format!("link[{i}].loss.steps[{k}].at"),
                                "must be later than the step before it",
                            ));
                        }
                    }
                }
                None => {}
            }
        }
        // Wired links, and the radio hops captured at the ATM layer.
        let capturable: Vec<&str> = link_names
            .iter()
            .map(String::as_str)
            .chain(self.radios.iter().filter(|r| r.model.atm_vc().is_some()).map(|r| r.name.as_str()))
            .collect();
        for (i, name) in self.output.pcap_links.iter().enumerate() {
            if !capturable.contains(&name.as_str()) {
                return Err(ScenarioError::at(
                    format!("output.pcap_links[{i}]"),
                    format!("no capturable link is named `{name}`; links are: {}", capturable.join(", ")),
                ));
            }
        }
        self.validate_groups(nodes)?;
        let flow_names: Vec<String> = self.flows.iter().enumerate().map(|(i, f)| f.resolved_name(i)).collect();
        unique("flow", flow_names.iter().enumerate().map(|(i, n)| (i, n.as_str())))?;
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(nodes, i, f)?;
        }
        Ok(())
    }

    /// Node ids by name.
    pub fn node_index(&self) -> HashMap<&str, u32> {
        self.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i as u32)).collect()
    }

    /// The node `name` names; `path` (made only for the error) is the field naming it.
    fn node(
        &self,
        nodes: &HashMap<&str, u32>,
        path: impl FnOnce() -> String,
        name: &str,
    ) -> Result<&NodeSpec, ScenarioError> {
        match nodes.get(name) {
            Some(&i) => Ok(&self.nodes[i as usize]),
            None => Err(ScenarioError::at(path(), format!("no node is named `{name}`"))),
        }
    }

    /// The group a flow's `dst` names, if it names one.
    pub fn group(&self, name: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.name == name)
    }

    fn validate_flow(&self, nodes: &HashMap<&str, u32>, i: usize, f: &FlowSpec) -> R {
        check_clamp_agent(i, f)?;
        let at = |field: &str| format!("flow[{i}].{field}");
        let mut ends = vec![("src", &f.src)];
        if let Some(g) = self.group(&f.dst) {
            if !matches!(f.protocol, Protocol::Udp | Protocol::Tfmcc | Protocol::Pgmcc) {
                return Err(ScenarioError::at(
                    at("dst"),
                    format!("`{}` is a group; only UDP, TFMCC and PGMCC flows go to groups", f.dst),
                ));
            }
            if self.groups[g].members.iter().any(|m| m.node == f.src) {
                return Err(ScenarioError::at(at("src"), format!("`{}` is a member of the group it sends to", f.src)));
            }
        } else {
            ends.push(("dst", &f.dst));
        }
        for (field, name) in ends {
            if self.node(nodes, || at(field), name)?.kind != NodeKind::Host {
                return Err(ScenarioError::at(at(field), format!("`{name}` is a router; flows run between hosts")));
            }
        }
        if f.src == f.dst {
            return Err(ScenarioError::at(at("dst"), "must differ from src"));
        }
        self.validate_draws(i, f)?;
        match (f.protocol, &f.app) {
            (Protocol::Tcp, AppSpec::Cbr { .. }) => {
                return Err(ScenarioError::at(
                    at("app.kind"),
                    "\"cbr\" runs over UDP; TCP flows take \"bulk\" or \"file\"",
                ))
            }
            (Protocol::Udp, AppSpec::Bulk {} | AppSpec::File { .. }) => {
                return Err(ScenarioError::at(
                    at("app.kind"),
                    "UDP flows take \"cbr\"; \"bulk\" and \"file\" need TCP or the reliable UDP (\"rudp\")",
                ))
            }
            (Protocol::Pgmcc, AppSpec::Cbr { .. }) => {
                return Err(ScenarioError::at(at("app.kind"), "PGMCC flows take \"bulk\" or \"file\""))
            }
            (Protocol::Rudp, AppSpec::Cbr { .. }) => return Err(ScenarioError::at(
                at("app.kind"),
                "reliable-UDP flows take \"bulk\" or \"file\" (a constant-rate probe is rudp.control = \"constant\")",
            )),
            (Protocol::Tfmcc, AppSpec::Cbr { .. }) => {
                return Err(ScenarioError::at(at("app.kind"), "TFMCC flows take \"bulk\" or \"file\""))
            }
            (_, AppSpec::Cbr { packet_size, .. }) => {
                let min = (IPV4_HEADER_BYTES + UDP_HEADER_BYTES) as u64;
                if packet_size.0 < min || packet_size.0 > 65535 {
                    return Err(ScenarioError::at(
                        at("app.packet_size"),
                        format!("must be between {min}B (IPv4 + UDP headers) and 65535B"),
                    ));
                }
            }
            _ => {}
        }
        if f.protocol != Protocol::Tcp && f.tcp.is_some() {
            return Err(ScenarioError::at(at("tcp"), "only TCP flows take TCP parameters"));
        }
        match (&f.rudp, f.protocol) {
            (Some(_), Protocol::Tcp | Protocol::Udp | Protocol::Tfmcc | Protocol::Pgmcc) => {
                return Err(ScenarioError::at(at("rudp"), "only reliable-UDP flows (protocol = \"rudp\") take it"))
            }
            (Some(r), Protocol::Rudp) => r.validate(&at("rudp"))?,
            _ => {}
        }
        match (&f.tfmcc, f.protocol) {
            (Some(t), Protocol::Tfmcc) => t.validate(&at("tfmcc"))?,
            (Some(_), _) => {
                return Err(ScenarioError::at(at("tfmcc"), "only TFMCC flows (protocol = \"tfmcc\") take it"))
            }
            _ => {}
        }
        match (&f.pgmcc, f.protocol) {
            (Some(p), Protocol::Pgmcc) => p.validate(&at("pgmcc"))?,
            (Some(_), _) => {
                return Err(ScenarioError::at(at("pgmcc"), "only PGMCC flows (protocol = \"pgmcc\") take it"))
            }
            _ => {}
        }
        if let Some(t) = &f.tcp {
            if let Some(mss) = t.mss {
                let max = (65535 - IPV4_HEADER_BYTES - TCP_HEADER_BYTES) as u64;
                if mss.0 == 0 || mss.0 > max {
                    return Err(ScenarioError::at(at("tcp.mss"), format!("must be between 1B and {max}B")));
                }
            }
            if t.initial_window == Some(0) {
                return Err(ScenarioError::at(at("tcp.initial_window"), "must be at least 1 segment"));
            }
            if let Some(b) = t.rcv_buffer {
                if b.0 == 0 || b.0 > u32::MAX as u64 {
                    return Err(ScenarioError::at(at("tcp.rcv_buffer"), "must be between 1B and 4GiB"));
                }
            }
            if t.min_rto.is_some_and(|d| d.0 .0 == 0) {
                return Err(ScenarioError::at(at("tcp.min_rto"), "must be greater than 0s"));
            }
            // A zero timer would fire at the instant it is armed, forever.
            if t.initial_rto.is_some_and(|d| d.0 .0 == 0) {
                return Err(ScenarioError::at(at("tcp.initial_rto"), "must be greater than 0s"));
            }
            if t.delack_timeout.is_some_and(|d| d.0 .0 == 0) {
                return Err(ScenarioError::at(at("tcp.delack_timeout"), "must be greater than 0s"));
            }
            if let Some(AgentSpec::Koga { awnd, min_retransmissions, .. }) = &t.agent {
                if awnd.is_some_and(|w| w == 0 || w > 65535) {
                    return Err(ScenarioError::at(at("tcp.agent.awnd"), "must be between 1 and 65535 segments"));
                }
                if min_retransmissions.is_some_and(|n| n > 100) {
                    return Err(ScenarioError::at(at("tcp.agent.min_retransmissions"), "must be between 0 and 100"));
                }
            }
            if let Some(AgentSpec::Fixed { window }) = &t.agent {
                if window.0 == 0 || window.0 > u32::MAX as u64 {
                    return Err(ScenarioError::at(at("tcp.agent.window"), "must be between 1B and 4GiB"));
                }
            }
        }
        Ok(())
    }
}

impl Scenario {
    /// What a flow draws at random (or fixes): start, file size, on/off periods,
    /// arrivals.
    fn validate_draws(&self, i: usize, f: &FlowSpec) -> R {
        let at = |field: &str| format!("flow[{i}].{field}");
        if let Some(start) = &f.start {
            start.validate(&at("start"))?;
        }
        let start = f.start.as_ref().map_or(xlayer_proto::SimDur::ZERO, TimeSpec::min);
        if f.stop.is_some_and(|stop| stop.0 <= start) {
            let what = if f.start.as_ref().is_some_and(TimeSpec::is_random) { "the smallest start" } else { "start" };
            return Err(ScenarioError::at(at("stop"), format!("must be after {what} ({})", Duration(start))));
        }
        if let Some(size) = f.file_size() {
            size.validate(&at("app.size"))?;
            if let Some(file) = size.file() {
                self.load_cdf(file).map_err(|e| ScenarioError::at(at("app.size.file"), e))?;
            }
        }
        if let Some(o) = &f.on_off {
            if !matches!(f.app, AppSpec::Bulk {} | AppSpec::Cbr { .. }) {
                return Err(ScenarioError::at(
                    at("on_off"),
                    "only \"bulk\" and \"cbr\" applications switch on and off",
                ));
            }
            for (field, period) in [("on_off.on", &o.on), ("on_off.off", &o.off)] {
                period.validate(&at(field))?;
                let never_positive = match period {
                    TimeSpec::Fixed(d) => d.0 .0 == 0,
                    TimeSpec::Random(TimeDist::Uniform { high, .. }) => high.0 .0 == 0,
                    TimeSpec::Random(_) => false,
                };
                if never_positive {
                    return Err(ScenarioError::at(at(field), "must be greater than 0s"));
                }
            }
        }
        match (&f.arrivals, f.count) {
            (Some(a), Some(n)) => {
                a.validate(&at("arrivals"))?;
                if f.file_size().is_none() {
                    return Err(ScenarioError::at(at("arrivals"), "only \"file\" applications arrive as a workload"));
                }
                if !(1..=MAX_ARRIVALS).contains(&n) {
                    return Err(ScenarioError::at(at("count"), format!("must be between 1 and {MAX_ARRIVALS}")));
                }
            }
            (Some(_), None) => return Err(ScenarioError::at(at("count"), "required with `arrivals`: how many flows")),
            (None, Some(_)) => {
                return Err(ScenarioError::at(
                    at("arrivals"),
                    "required with `count`: the gaps between the flows' starts",
                ))
            }
            (None, None) => {}
        }
        Ok(())
    }

    fn validate_link_rate_and_traces(&self, i: usize, l: &LinkSpec) -> R {
        let t = l.trace.clone().unwrap_or_default();
        if t.a_to_b.is_some() && t.b_to_a.is_some() {
            if l.rate.is_some() {
                return Err(ScenarioError::at(
                    format!("link[{i}].rate"),
                    "both directions follow a trace; drop `rate`",
                ));
            }
        } else {
            match l.rate {
                None => {
                    return Err(ScenarioError::at(
                        format!("link[{i}].rate"),
                        "required (a direction without a trace needs a rate)",
                    ))
                }
                Some(r) if r.0 == 0 => {
                    return Err(ScenarioError::at(format!("link[{i}].rate"), "must be greater than 0bps"))
                }
                _ => {}
            }
        }
        for (field, path) in [("a_to_b", &t.a_to_b), ("b_to_a", &t.b_to_a)] {
            if let Some(p) = path {
                self.load_trace(p).map_err(|e| ScenarioError::at(format!("link[{i}].trace.{field}"), e))?;
            }
        }
        Ok(())
    }

    fn validate_groups(&self, nodes: &HashMap<&str, u32>) -> R {
        unique("group", self.groups.iter().enumerate().map(|(i, g)| (i, g.name.as_str())))?;
        for (i, g) in self.groups.iter().enumerate() {
            let at = |field: String| format!("group[{i}].{field}");
            if self.nodes.iter().any(|n| n.name == g.name) {
                return Err(ScenarioError::at(at("name".into()), format!("`{}` is also a node's name", g.name)));
            }
            if g.members.is_empty() {
                return Err(ScenarioError::at(at("members".into()), "needs at least one member"));
            }
            let mut listed = BTreeSet::new();
            for (j, m) in g.members.iter().enumerate() {
                if self.node(nodes, || at(format!("members[{j}].node")), &m.node)?.kind != NodeKind::Host {
                    return Err(ScenarioError::at(
                        at(format!("members[{j}].node")),
                        format!("`{}` is a router; members are hosts", m.node),
                    ));
                }
                if !listed.insert(&m.node) {
                    return Err(ScenarioError::at(
                        at(format!("members[{j}].node")),
                        format!("`{}` is listed twice", m.node),
                    ));
                }
                let join = m.join.map_or(0, |d| d.0 .0);
                if m.leave.is_some_and(|l| l.0 .0 <= join) {
                    return Err(ScenarioError::at(at(format!("members[{j}].leave")), "must be after join"));
                }
            }
        }
        Ok(())
    }
}

/// Range checks of the CLAMP agent's parameters (Andrew & Hanly eqs. (14)-(17)).
fn check_clamp_agent(i: usize, f: &FlowSpec) -> R {
    let Some(AgentSpec::Clamp { tau, alpha, beta, .. }) = f.tcp.as_ref().and_then(|t| t.agent.as_ref()) else {
        return Ok(());
    };
    let at = |field: &str| format!("flow[{i}].tcp.agent.{field}");
    if tau.is_some_and(|t| t.0 == 0) {
        return Err(ScenarioError::at(at("tau"), "must be at least 1B"));
    }
    if alpha == &Some(0) {
        return Err(ScenarioError::at(at("alpha"), "must be at least 1 packet"));
    }
    if beta.is_some_and(|b| !(b > 0.0 && b < 1.0)) {
        return Err(ScenarioError::at(at("beta"), "must be in (0, 1)"));
    }
    Ok(())
}

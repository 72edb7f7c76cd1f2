//! Fixed-interval time series in long (tidy) form: (time, entity, metric, value).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    CwndBytes,
    SsthreshBytes,
    RwndBytes,
    SrttS,
    RtoS,
    BytesInFlight,
    QueueBytes,
    QueuePackets,
    ThroughputBps,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::CwndBytes => "cwnd_bytes",
            Metric::SsthreshBytes => "ssthresh_bytes",
            Metric::RwndBytes => "rwnd_bytes",
            Metric::SrttS => "srtt_s",
            Metric::RtoS => "rto_s",
            Metric::BytesInFlight => "bytes_in_flight",
            Metric::QueueBytes => "queue_bytes",
            Metric::QueuePackets => "queue_packets",
            Metric::ThroughputBps => "throughput_bps",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Series {
    pub time_s: Vec<f64>,
    /// Index into the run's entity names (flows, then link directions).
    pub entity: Vec<u32>,
    pub metric: Vec<Metric>,
    pub value: Vec<f64>,
}

impl Series {
    pub fn push(&mut self, time_s: f64, entity: u32, metric: Metric, value: f64) {
        self.time_s.push(time_s);
        self.entity.push(entity);
        self.metric.push(metric);
        self.value.push(value);
    }
    pub fn len(&self) -> usize {
        self.time_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}

//! Fixed-interval time series in long (tidy) form: (time, entity, metric, value).
//! Metrics are named by the models that report them (endpoint gauges, link metrics);
//! the series stores each name once and an index per sample. The sampler writes the
//! values in row order during the run (`stats/log.rs`); the other columns are built at
//! the end.

#[derive(Clone, Debug, Default)]
pub struct Series {
    pub time_s: Vec<f64>,
    /// Index into the run's entity names (flows, then links).
    pub entity: Vec<u32>,
    /// Index into `metric_names`.
    pub metric: Vec<u16>,
    pub value: Vec<f64>,
    /// In the order the rows first name them.
    pub metric_names: Vec<&'static str>,
}

impl Series {
    pub fn metric_name(&self, i: usize) -> &'static str {
        self.metric_names[self.metric[i] as usize]
    }
    pub fn len(&self) -> usize {
        self.time_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time_s.is_empty()
    }
}

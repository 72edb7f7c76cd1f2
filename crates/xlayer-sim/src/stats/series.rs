//! Fixed-interval time series in long (tidy) form: (time, entity, metric, value).
//! Metrics are named by the models that report them (endpoint gauges, link metrics);
//! the series stores each name once and an index per sample.

#[derive(Clone, Debug, Default)]
pub struct Series {
    pub time_s: Vec<f64>,
    /// Index into the run's entity names (flows, then links).
    pub entity: Vec<u32>,
    /// Index into `metric_names`.
    pub metric: Vec<u16>,
    pub value: Vec<f64>,
    pub metric_names: Vec<&'static str>,
}

impl Series {
    pub fn push(&mut self, time_s: f64, entity: u32, metric: &'static str, value: f64) {
        let m = match self.metric_names.iter().position(|&n| n == metric) {
            Some(i) => i,
            None => {
                self.metric_names.push(metric);
                self.metric_names.len() - 1
            }
        };
        self.time_s.push(time_s);
        self.entity.push(entity);
        self.metric.push(m as u16);
        self.value.push(value);
    }
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

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
        let m = self.metric_index(metric);
        self.time_s.push(time_s);
        self.entity.push(entity);
        self.metric.push(m);
        self.value.push(value);
    }

    /// Names are `'static` and few, and the same name nearly always comes from the same
    /// literal: compare addresses first, text only when that fails.
    fn metric_index(&mut self, metric: &'static str) -> u16 {
        let names = &self.metric_names;
        let found =
            names.iter().position(|&n| std::ptr::eq(n, metric)).or_else(|| names.iter().position(|&n| n == metric));
        match found {
            Some(i) => i as u16,
            None => {
                self.metric_names.push(metric);
                (self.metric_names.len() - 1) as u16
            }
        }
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

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
    /// Where the next metric name is looked for first: the one after the last found.
    /// Samples report their metrics in the same order every interval.
    next_metric: usize,
    /// Rows the last sampling instant added (`World::sample` reserves that many).
    pub(crate) rows_per_instant: usize,
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
        let guess = names.get(self.next_metric).is_some_and(|&n| std::ptr::eq(n, metric));
        let found = if guess {
            Some(self.next_metric)
        } else {
            names.iter().position(|&n| std::ptr::eq(n, metric)).or_else(|| names.iter().position(|&n| n == metric))
        };
        let i = found.unwrap_or_else(|| {
            self.metric_names.push(metric);
            self.metric_names.len() - 1
        });
        self.next_metric = if i + 1 == self.metric_names.len() { 0 } else { i + 1 };
        i as u16
    }

    /// Room for `rows` more samples, so one sampling instant grows the columns once.
    pub fn reserve(&mut self, rows: usize) {
        self.time_s.reserve(rows);
        self.entity.reserve(rows);
        self.metric.reserve(rows);
        self.value.reserve(rows);
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

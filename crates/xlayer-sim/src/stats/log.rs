//! The time series as the sampler writes it during the run: the values in row order in
//! one buffer, and per entity the layout of its rows.
//!
//! An entity (a flow, a link direction) reports the same metrics in the same order at
//! nearly every instant, so each keeps the layout it reported at its first instant and
//! only checks that the next values follow it: a pointer compare and a push per value
//! (one compare for a row of names given as one slice), where a row of the long form
//! costs a name lookup and four column pushes. When an entity's set of metrics changes
//! (a gauge that is conditional, such as a radio's `capacity_bps` once its capacity
//! history no longer covers the interval), a new run starts with the new layout. The
//! sampler opens the entities in index order at every instant, so the values land in the
//! long form's row order: `into_series` moves the buffer into its value column and builds
//! the other three from the layouts.
//!
//! Memory: 8 bytes a sample during the run, reserved after the first instant for the
//! instants planned at its width; the long form's other 14 come at the end, sized exactly.

use super::Series;

#[derive(Debug, Default)]
pub(crate) struct SeriesLog {
    /// Each sampling instant, in seconds.
    times: Vec<f64>,
    /// Every value in the long form's row order.
    values: Vec<f64>,
    /// The buffer's length when the current instant began.
    instant_from: usize,
    /// The lowest entity index the current instant may still open (checked in debug
    /// builds: the sampler's loops open them in order).
    next_entity: usize,
    /// By entity index (flows, then link directions).
    entities: Vec<EntityLog>,
}

/// Instants `first..first + instants` of one entity, all with the same metrics.
#[derive(Debug, Default)]
struct Run {
    first: usize,
    instants: usize,
    /// The metric names in the order reported (compared by address on the hot path).
    layout: Vec<&'static str>,
}

#[derive(Debug, Default)]
pub(crate) struct EntityLog {
    /// The run being written.
    run: Run,
    /// Values written at the current instant (the next one is `run.layout[pos]`).
    pos: usize,
    /// A row of names (`row`) the run's layout holds from this position: the next call
    /// with the same slice at the same position follows the layout without comparing a
    /// name.
    known_row: Option<(usize, &'static [&'static str])>,
    done: Vec<Run>,
}

/// One entity's log open at the current instant, and the buffer its values go to.
pub(crate) struct EntityWriter<'a> {
    log: &'a mut EntityLog,
    values: &'a mut Vec<f64>,
}

impl SeriesLog {
    /// A sampling instant begins at `t_s` seconds; `remaining` counts it and those after.
    pub fn instant(&mut self, t_s: f64, remaining: usize) {
        let width = self.values.len() - self.instant_from;
        if self.times.len() == 1 {
            // The first instant's width for every instant planned: the whole series when
            // the entities keep their metrics.
            self.values.reserve_exact(width * remaining);
        } else if width * remaining > self.values.capacity() - self.values.len() {
            // Wider instants than planned for: amortised growth, not one step per instant.
            self.values.reserve(width * remaining);
        }
        self.instant_from = self.values.len();
        self.next_entity = 0;
        self.times.push(t_s);
    }

    /// Entity `e`'s log, open for the current instant; `EntityWriter::end` closes it.
    /// Entities open in increasing index order within an instant (the rows' order; the
    /// buffer's order is the long form's only so).
    /// Inlined into the sampler's loops: as a call, saving and restoring registers cost
    /// more than the few instructions of the common case.
    #[inline(always)]
    pub fn entity(&mut self, e: usize) -> EntityWriter<'_> {
        if cfg!(debug_assertions) {
            assert!(e >= self.next_entity, "entity {e} opened after a higher index at one instant");
            self.next_entity = e + 1;
        }
        if e >= self.entities.len() {
            self.grow(e);
        }
        let instant = self.times.len() - 1;
        let log = &mut self.entities[e];
        log.pos = 0;
        // (A new entity's empty run starts at instant 0 and reaches it.)
        if log.run.first + log.run.instants != instant {
            log.restart(instant);
        }
        EntityWriter { log, values: &mut self.values }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, e: usize) {
        self.entities.resize_with(e + 1, EntityLog::default);
    }

    /// Samples recorded so far.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// The long (tidy) form: instant by instant, entity by entity in index order, each
    /// entity's metrics in the order it reported them. Metric indices number the names
    /// in the order they first occur in those rows (names of equal text are one metric).
    /// The value column is the log's buffer, moved.
    pub fn into_series(self) -> Series {
        let rows = self.len();
        let mut s = Series {
            time_s: Vec::with_capacity(rows),
            entity: Vec::with_capacity(rows),
            metric: Vec::with_capacity(rows),
            value: Vec::new(),
            metric_names: Vec::new(),
        };
        let mut readers: Vec<Reader> = self.entities.into_iter().map(Reader::new).collect();
        let (mut t, end) = (0, self.times.len());
        // Stretches of instants in which no entity's run starts or ends: every instant
        // of one has the same entity and metric columns.
        while t < end {
            for r in readers.iter_mut().filter(|r| r.until == t) {
                r.reach(t, &mut s.metric_names);
            }
            let stop = readers.iter().map(|r| r.until).min().unwrap_or(end).min(end);
            let (mut entity, mut metric) = (Vec::new(), Vec::new());
            for (e, r) in readers.iter().enumerate() {
                entity.extend(r.ids.iter().map(|_| e as u32));
                metric.extend_from_slice(&r.ids);
            }
            for &at in &self.times[t..stop] {
                s.time_s.resize(s.time_s.len() + entity.len(), at);
                s.entity.extend_from_slice(&entity);
                s.metric.extend_from_slice(&metric);
            }
            t = stop;
        }
        assert_eq!(s.time_s.len(), rows, "every value has its row");
        s.value = self.values;
        s
    }
}

/// One entity's runs, read instant by instant.
struct Reader {
    runs: Vec<Run>,
    /// The run covering the current instant, or the next one.
    run: usize,
    /// The current instant's metric indices (empty while no run covers it).
    ids: Vec<u16>,
    /// The next instant at which the run changes.
    until: usize,
}

impl Reader {
    fn new(mut log: EntityLog) -> Self {
        log.done.push(log.run);
        Reader { runs: log.done, run: 0, ids: Vec::new(), until: 0 }
    }

    /// Instant `t` starts or ends a run (or a gap): move to what covers it.
    #[cold]
    fn reach(&mut self, t: usize, names: &mut Vec<&'static str>) {
        self.ids.clear();
        while let Some(run) = self.runs.get(self.run) {
            if t < run.first {
                self.until = run.first;
                return;
            }
            if t < run.first + run.instants {
                // Its first instant: the metric names are numbered as the rows first
                // name them, which is here.
                self.ids.extend(run.layout.iter().map(|&name| metric_index(names, name)));
                self.until = run.first + run.instants;
                return;
            }
            self.run += 1;
        }
        self.until = usize::MAX;
    }
}

/// Index of `name` among `names`, appended if new; equal text is the same metric.
fn metric_index(names: &mut Vec<&'static str>, name: &'static str) -> u16 {
    let i = names.iter().position(|&n| std::ptr::eq(n, name)).or_else(|| names.iter().position(|&n| n == name));
    let i = i.unwrap_or_else(|| {
        names.push(name);
        names.len() - 1
    });
    u16::try_from(i).expect("fewer than 65,536 metric names")
}

impl EntityLog {
    /// The current run does not reach `instant` (the first instant, or one the entity
    /// missed): start a new one there.
    #[cold]
    #[inline(never)]
    fn restart(&mut self, instant: usize) {
        if self.run.instants > 0 {
            let run = std::mem::take(&mut self.run);
            self.done.push(run);
        }
        self.run.first = instant;
        self.known_row = None;
    }

    /// A value that does not follow the layout: the run's first instant, a name of the
    /// same text from another literal, or a change of metrics.
    #[cold]
    #[inline(never)]
    fn push_new(&mut self, name: &'static str) {
        let first_instant = self.run.instants == 0;
        let same_text = self.run.layout.get(self.pos).is_some_and(|&n| n == name);
        if !first_instant && !same_text {
            self.split();
        }
        if self.pos == self.run.layout.len() {
            self.run.layout.push(name);
        }
        self.pos += 1;
    }

    /// The layout changed at the current instant: the run ends before it, and a new one
    /// starts there with the `pos` metrics written so far at this instant.
    #[cold]
    fn split(&mut self) {
        let old = &mut self.run;
        let new = Run { first: old.first + old.instants, instants: 0, layout: old.layout[..self.pos].to_vec() };
        let old = std::mem::replace(&mut self.run, new);
        self.known_row = None;
        if old.instants > 0 {
            self.done.push(old);
        }
    }
}

impl EntityWriter<'_> {
    /// One value of the current instant.
    #[inline]
    pub fn push(&mut self, name: &'static str, value: f64) {
        let log = &mut *self.log;
        if log.run.layout.get(log.pos).is_some_and(|&n| std::ptr::eq(n, name)) {
            log.pos += 1;
        } else {
            log.push_new(name);
        }
        self.values.push(value);
    }

    /// Several values in a row whose names are one fixed array (a link direction's queue
    /// and throughput), as `push` of each in turn: one compare of the array's address and
    /// one capacity check for them all.
    #[inline]
    pub fn push_all<const N: usize>(&mut self, names: &'static [&'static str; N], values: [f64; N]) {
        self.log.follow(names);
        self.values.extend_from_slice(&values);
    }

    /// Room for the values of a row of metrics whose names are one fixed slice (an
    /// endpoint's gauges), written as `push` of each name in turn would; the caller fills
    /// it. Following the layout costs one compare of the slice's address and length.
    #[inline]
    pub fn row(&mut self, names: &'static [&'static str]) -> &mut [f64] {
        self.log.follow(names);
        let len = self.values.len();
        self.values.resize(len + names.len(), 0.0);
        &mut self.values[len..]
    }

    /// The current instant has ended for this entity.
    #[inline]
    pub fn end(self) {
        let log = self.log;
        if log.pos != log.run.layout.len() {
            // Fewer metrics than the run's earlier instants.
            log.split();
        }
        log.run.instants += 1;
    }
}

impl EntityLog {
    /// The layout goes on with `names`: one compare when they are the row known here.
    #[inline]
    fn follow(&mut self, names: &'static [&'static str]) {
        if self.known_row.is_some_and(|(pos, known)| pos == self.pos && std::ptr::eq(known, names)) {
            self.pos += names.len();
        } else {
            self.row_new(names);
        }
    }

    /// A row not yet known at this position: each name in turn, then the row is known.
    #[cold]
    #[inline(never)]
    fn row_new(&mut self, names: &'static [&'static str]) {
        for &name in names {
            if self.run.layout.get(self.pos).is_some_and(|&n| std::ptr::eq(n, name)) {
                self.pos += 1;
            } else {
                self.push_new(name);
            }
        }
        self.known_row = Some((self.pos - names.len(), names));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per instant, each entity's (metric, value) pairs in the order reported.
    type Instants = Vec<Vec<(usize, Vec<(&'static str, f64)>)>>;

    /// The log's long form, and the rows written one by one as the sampler wrote them
    /// before the log: the reference it must reproduce row for row.
    fn both(instants: &Instants) -> (Series, Series) {
        let mut log = SeriesLog::default();
        let mut long = Series::default();
        for (t, entities) in instants.iter().enumerate() {
            let time_s = crate::stats::report_secs(t as u64 * 100_000_000);
            log.instant(time_s, instants.len() - t);
            for (e, metrics) in entities {
                let mut w = log.entity(*e);
                for &(name, v) in metrics {
                    w.push(name, v);
                    long.time_s.push(time_s);
                    long.entity.push(*e as u32);
                    long.metric.push(metric_index(&mut long.metric_names, name));
                    long.value.push(v);
                }
                w.end();
            }
        }
        (log.into_series(), long)
    }

    fn assert_same(instants: &Instants) -> Series {
        let (a, b) = both(instants);
        assert_eq!(a.time_s, b.time_s);
        assert_eq!(a.entity, b.entity);
        assert_eq!(a.metric, b.metric);
        let bits = |s: &Series| s.value.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
        assert_eq!(a.metric_names, b.metric_names);
        a
    }

    /// A flow (cwnd, srtt, goodput) and a link direction (queue, throughput), `n` instants.
    fn steady(n: usize) -> Instants {
        (0..n)
            .map(|t| {
                let t = t as f64;
                vec![
                    (0, vec![("cwnd_bytes", 1460.0 * t), ("srtt_s", f64::NAN), ("goodput_bps", 8e3 * t)]),
                    (1, vec![("queue_bytes", t), ("throughput_bps", -t)]),
                ]
            })
            .collect()
    }

    #[test]
    fn a_repeating_layout_gives_the_rows_in_order() {
        let s = assert_same(&steady(5));
        assert_eq!(s.len(), 25);
        assert_eq!(s.metric_names, ["cwnd_bytes", "srtt_s", "goodput_bps", "queue_bytes", "throughput_bps"]);
        assert_eq!(s.value.iter().filter(|v| v.is_nan()).count(), 5);
    }

    #[test]
    fn a_conditional_gauge_that_comes_and_goes_keeps_every_row() {
        // A radio's capacity_bps is missing while its history does not cover the
        // interval: absent, present, absent at the end of the layout and in its middle.
        let mut instants = steady(8);
        for (t, has) in [false, true, true, false, true, false, false, true].into_iter().enumerate() {
            let link = &mut instants[t][1].1;
            if has {
                link.insert(1, ("capacity_bps", 1e6 + t as f64));
            }
            if t % 3 == 2 {
                link.push(("margin_db", -(t as f64)));
            }
        }
        let s = assert_same(&instants);
        assert_eq!(s.metric_names[4..], ["throughput_bps", "capacity_bps", "margin_db"]);
    }

    #[test]
    fn metrics_that_change_order_or_vanish_are_written_as_reported() {
        let mut instants = steady(6);
        instants[2][0].1.reverse();
        instants[3][0].1.clear();
        instants[4][1].1.truncate(1);
        instants[5][0].1.push(("ssthresh_bytes", 7.0));
        assert_same(&instants);
    }

    #[test]
    fn a_name_of_equal_text_from_another_literal_is_the_same_metric() {
        let other: &'static str = Box::leak(String::from("srtt_s").into_boxed_str());
        let mut instants = steady(4);
        instants[2][0].1[1].0 = other;
        let s = assert_same(&instants);
        assert_eq!(s.metric_names.len(), 5);
    }

    #[test]
    fn an_entity_missing_at_an_instant_is_missing_from_its_rows() {
        let mut instants = steady(5);
        instants[1].remove(0);
        instants[3].remove(1);
        instants[4].push((3, vec![("queue_bytes", 1.0)]));
        assert_same(&instants);
    }

    #[test]
    fn an_entity_whose_metrics_keep_changing_holds_memory_for_its_values_only() {
        let mut log = SeriesLog::default();
        let n = 1000;
        for t in 0..n {
            log.instant(t as f64, n - t);
            let mut w = log.entity(0);
            w.push("queue_bytes", 1.0);
            if t % 2 == 1 {
                w.push("capacity_bps", 2.0);
            }
            w.end();
        }
        let e = &log.entities[0];
        let names: usize = e.done.iter().chain([&e.run]).map(|r| r.layout.capacity()).sum();
        assert_eq!((e.done.len() + 1, log.len()), (n, n + n / 2));
        assert!(log.values.capacity() <= 2 * log.len(), "{} values held for {}", log.values.capacity(), log.len());
        assert!(names <= 2 * log.len(), "{names} names held for {} values", log.len());
    }

    #[test]
    fn a_steady_series_holds_room_for_its_values_only() {
        let mut log = SeriesLog::default();
        for (t, entities) in steady(50).iter().enumerate() {
            log.instant(t as f64, 50 - t);
            for (e, metrics) in entities {
                let mut w = log.entity(*e);
                metrics.iter().for_each(|&(name, v)| w.push(name, v));
                w.end();
            }
        }
        assert_eq!((log.len(), log.values.capacity()), (250, 250));
    }

    // The order is checked by a debug assertion only (`entity`): a release build of the
    // tests has nothing to catch.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "opened after a higher index")]
    fn entities_open_in_index_order() {
        let mut log = SeriesLog::default();
        log.instant(0.0, 1);
        log.entity(1).end();
        log.entity(0).end();
    }

    #[test]
    fn values_in_a_row_are_written_as_pushed_one_by_one() {
        // The row's names follow the layout, start it, differ from it, and overrun it.
        static QUEUE: [&str; 2] = ["queue_bytes", "throughput_bps"];
        static CAPACITY: [&str; 2] = ["queue_bytes", "capacity_bps"];
        type Row = (&'static [(&'static str, f64)], &'static [&'static str; 2]);
        let rows: [Row; 4] = [(&[], &QUEUE), (&[], &QUEUE), (&[], &CAPACITY), (&[("margin_db", 1.0)], &QUEUE)];
        let (mut by_row, mut by_one) = (SeriesLog::default(), SeriesLog::default());
        for (t, &(before, names)) in rows.iter().enumerate() {
            for log in [&mut by_row, &mut by_one] {
                log.instant(t as f64, rows.len() - t);
            }
            let (mut a, mut b) = (by_row.entity(0), by_one.entity(0));
            for &(name, v) in before {
                a.push(name, v);
                b.push(name, v);
            }
            let values = [t as f64, -(t as f64)];
            a.push_all(names, values);
            names.iter().zip(values).for_each(|(&n, v)| b.push(n, v));
            a.end();
            b.end();
        }
        let (a, b) = (by_row.into_series(), by_one.into_series());
        assert_eq!((a.entity, a.metric, a.value), (b.entity, b.metric, b.value));
        assert_eq!(a.metric_names, ["queue_bytes", "throughput_bps", "capacity_bps", "margin_db"]);
    }

    #[test]
    fn a_row_of_fixed_names_is_written_as_pushed_one_by_one() {
        // Gauges as one slice, then a value after them: the slice known, a slice of equal
        // text at another address, a metric before it that comes and goes, a shorter slice.
        static GAUGES: [&str; 3] = ["cwnd_bytes", "srtt_s", "rto_s"];
        let other: &'static [&'static str] = Box::leak(Box::new(["cwnd_bytes", "srtt_s", "rto_s"]));
        let rows: [(bool, &'static [&'static str]); 6] = [
            (false, &GAUGES),
            (false, &GAUGES),
            (false, other),
            (true, &GAUGES),
            (false, &GAUGES),
            (false, &GAUGES[..2]),
        ];
        let (mut by_row, mut by_one) = (SeriesLog::default(), SeriesLog::default());
        for (t, &(before, names)) in rows.iter().enumerate() {
            for log in [&mut by_row, &mut by_one] {
                log.instant(t as f64, rows.len() - t);
            }
            let (mut a, mut b) = (by_row.entity(0), by_one.entity(0));
            if before {
                a.push("capacity_bps", 1.0);
                b.push("capacity_bps", 1.0);
            }
            let values: Vec<f64> = (0..names.len()).map(|i| (10 * t + i) as f64).collect();
            a.row(names).copy_from_slice(&values);
            names.iter().zip(&values).for_each(|(&n, &v)| b.push(n, v));
            a.push("goodput_bps", -(t as f64));
            b.push("goodput_bps", -(t as f64));
            a.end();
            b.end();
        }
        let (a, b) = (by_row.into_series(), by_one.into_series());
        assert_eq!((&a.time_s, &a.entity, &a.metric, &a.value), (&b.time_s, &b.entity, &b.metric, &b.value));
        assert_eq!(a.metric_names, ["cwnd_bytes", "srtt_s", "rto_s", "goodput_bps", "capacity_bps"]);
        assert_eq!(a.len(), 5 * 4 + 1 + 3);
    }

    #[test]
    fn no_instants_no_rows() {
        let s = SeriesLog::default().into_series();
        assert!(s.is_empty() && s.metric_names.is_empty());
    }
}

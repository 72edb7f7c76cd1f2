//! Proportional-fair scheduler (HDR / 1xEV-DO; Andrew & Hanly §V-C eq. (19); protocol-notes §7).
//!
//! Each slot: serve the backlogged user with the largest U_i = μ_i / r_i, then
//! r_i ← (1 − w) r_i + w·(rate served to i), w = 0.03 in Andrew & Hanly (a 100 ms time constant
//! at 3 ms slots). Andrew & Hanly does not say what happens to users it does not serve. Here
//! backlogged users that were not served decay (they obtained 0), and users with nothing
//! queued keep their average (the update runs over backlogged users; protocol-notes §7
//! decays every user instead). A user whose queue drained is neither penalised nor
//! favoured when its data returns.
//!
//! The cost of a slot does not grow with the number of users:
//!
//! - Every backlogged average decays by the same factor in a slot, so they are kept as
//!   r_i = s_i·D with one common D: a slot multiplies D, and only the served user's s_i
//!   changes. (D is folded back into the s_i before it underflows.)
//! - No rate exceeds a cap known before the slot (C_max), so U_i ≤ C_max / r_i: a search
//!   in increasing r_i can stop at the first user whose bound is at most the best
//!   utility found. Equal utilities go to the smaller average, then the lower index:
//!   the user the search met first. (Protocol-notes §7 proposes breaking ties at
//!   random; a rule that needs no draw keeps runs comparable.) In a cell of many users
//!   a few are near the cap in any slot, so a few users are asked their rate; from equal
//!   averages (the warm-up's start) the first user at the cap ends the search. Large
//!   cells keep the backlogged users in a heap by s_i (the order of the r_i, as D is
//!   common) and walk it; small ones scan every user. Both give the same user and the
//!   same averages, bit for bit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The smallest average used in U_i = μ_i / r_i, as a fraction of the rates' cap: a user
/// with r_i = 0 is served first, the one with the largest μ_i among several, without
/// dividing by zero; every U_i stays finite (μ_i ≤ cap), and every r_i above the floor
/// is used as it is. At w = 0.03 an average reaches it after about 23,000 slots
/// unserved, so eq. (19) holds exactly in cells of up to as many backlogged users.
const MIN_AVG_OF_CAP: f64 = f64::MIN_POSITIVE;

/// From this many users a cell walks a heap of its averages instead of scanning them
/// (a heap step costs about what a few users' rates do).
pub const WALK_FROM: usize = 16;

/// D is folded into the s_i when it falls below this (w = 0.03: every 11,000 slots).
const FOLD_BELOW: f64 = 1e-150;

/// Values kept as v_i = s_i·`scale`, all decaying by `keep` a slot: `scale` does, unless
/// it would fall below `FOLD_BELOW`; then it is 1 again and the caller multiplies every
/// s_i by the factor returned (their decayed scale).
pub(crate) fn decay_scale(scale: &mut f64, keep: f64) -> Option<f64> {
    let next = *scale * keep;
    if next >= FOLD_BELOW {
        *scale = next;
        return None;
    }
    *scale = 1.0;
    Some(next)
}

/// `r.max(floor)` for an average (never NaN): one compare, where `f64::max` also
/// handles a NaN the floor cannot be.
#[inline(always)]
fn at_least(r: f64, floor: f64) -> f64 {
    if r > floor {
        r
    } else {
        floor
    }
}

/// One proportional-fair scheduler's averages over `n` users.
#[derive(Clone, Debug)]
pub struct Pf {
    weight: f64,
    /// s_i while user i is backlogged (r_i = s_i·scale), r_i while it is idle.
    stored: Vec<f64>,
    backlogged: Vec<bool>,
    scale: f64,
    /// The backlogged users by (s_i, i), for large cells; entries whose s_i moved or
    /// whose user went idle are skipped when met (and dropped when the heap doubles).
    heap: Option<BinaryHeap<Reverse<(u64, u32)>>>,
    /// The key of the heap entry that stands for each user (`NONE`: none, or taken off
    /// in the walk under way): a second entry of the same key is skipped when met.
    heaped: Vec<u64>,
    /// Entries taken off the heap in a walk, put back after it.
    taken: Vec<(u64, u32)>,
    busy: usize,
}

/// No heap entry (not the bits of any s_i: a NaN).
const NONE: u64 = u64::MAX;

impl Pf {
    /// `averages`: each user's r_i to start from; every user starts idle. `walk`: keep
    /// the heap (see the module comment; `n >= WALK_FROM` is the cheaper choice).
    pub fn new(averages: &[f64], weight: f64, walk: bool) -> Self {
        let n = averages.len();
        Pf {
            weight,
            stored: averages.to_vec(),
            backlogged: vec![false; n],
            scale: 1.0,
            heap: walk.then(BinaryHeap::new),
            heaped: vec![NONE; n],
            taken: Vec::new(),
            busy: 0,
        }
    }

    /// Whether it walks a heap (a large cell) rather than scanning every user.
    pub fn walks(&self) -> bool {
        self.heap.is_some()
    }

    /// r_i.
    pub fn average(&self, i: usize) -> f64 {
        if self.backlogged[i] {
            self.stored[i] * self.scale
        } else {
            self.stored[i]
        }
    }

    /// Whether user `i` has data: only backlogged users are served, and only their
    /// averages decay.
    pub fn set_backlogged(&mut self, i: usize, on: bool) {
        if self.backlogged[i] == on {
            return;
        }
        self.backlogged[i] = on;
        if on {
            self.busy += 1;
            self.stored[i] /= self.scale;
            self.push(i);
        } else {
            self.busy -= 1;
            self.stored[i] *= self.scale;
            self.heaped[i] = NONE;
        }
    }

    /// One slot (eq. (19)): the backlogged user with the largest μ_i / r_i and its μ_i
    /// (ties: the smaller average, then the lower index; None if nobody is backlogged or
    /// every rate asked is 0),
    /// then every backlogged average decays and the served one moves towards μ_i.
    /// `rate(i)` is μ_i, asked at most once a user; `cap` bounds every μ_i.
    pub fn serve(&mut self, cap: f64, mut rate: impl FnMut(usize) -> f64) -> Option<(usize, f64)> {
        let floor = cap * MIN_AVG_OF_CAP;
        let best = if self.heap.is_some() { self.walk(cap, floor, &mut rate) } else { self.scan(floor, &mut rate) };
        let old = best.map(|(i, mu)| (i, mu, self.stored[i] * self.scale));
        self.decay();
        let (i, mu, old) = old?;
        self.stored[i] = ((1.0 - self.weight) * old + self.weight * mu) / self.scale;
        self.push(i);
        Some((i, mu))
    }

    /// U_i of a backlogged user with rate `mu`, its average at least `floor`.
    fn utility(&self, i: usize, mu: f64, floor: f64) -> f64 {
        mu / at_least(self.stored[i] * self.scale, floor)
    }

    fn scan(&self, floor: f64, rate: &mut impl FnMut(usize) -> f64) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64, f64)> = None;
        for i in (0..self.stored.len()).filter(|&i| self.backlogged[i]) {
            let mu = rate(i);
            if mu > 0.0 {
                let u = self.utility(i, mu, floor);
                if best.is_none_or(|(j, _, b)| u > b || (u == b && self.stored[i] < self.stored[j])) {
                    best = Some((i, mu, u));
                }
            }
        }
        best.map(|(i, mu, _)| (i, mu))
    }

    /// The scan's answer from the users in increasing (s_i, i), stopping where the bound
    /// `cap / r_i` reaches the best utility: a user after it can at most tie, and a tie
    /// goes to the smaller average, then the lower index, which the walk met first.
    fn walk(&mut self, cap: f64, floor: f64, rate: &mut impl FnMut(usize) -> f64) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64, f64)> = None;
        let mut heap = self.heap.take().expect("a walking scheduler");
        while let Some(&Reverse((key, i))) = heap.peek() {
            let i = i as usize;
            if !self.current(key, i) {
                heap.pop();
                continue;
            }
            let bound = cap / at_least(f64::from_bits(key) * self.scale, floor);
            if best.is_some_and(|(_, _, b)| bound <= b) {
                break;
            }
            heap.pop();
            self.heaped[i] = NONE;
            self.taken.push((key, i as u32));
            let mu = rate(i);
            debug_assert!(mu <= cap, "rate {mu} above its cap {cap}");
            if mu > 0.0 {
                let u = self.utility(i, mu, floor);
                if best.is_none_or(|(_, _, b)| u > b) {
                    best = Some((i, mu, u));
                }
            }
        }
        let served = best.map(|(i, _, _)| i);
        for (key, i) in self.taken.drain(..).filter(|&(_, i)| Some(i as usize) != served) {
            self.heaped[i as usize] = key;
            heap.push(Reverse((key, i)));
        }
        self.heap = Some(heap);
        best.map(|(i, mu, _)| (i, mu))
    }

    /// Whether a heap entry is the one that stands for user i.
    fn current(&self, key: u64, i: usize) -> bool {
        self.heaped[i] == key
    }

    /// Every backlogged average decays by (1 − w): D does, or, before it underflows,
    /// every s_i with D folded in.
    #[inline(always)]
    fn decay(&mut self) {
        if self.busy == 0 {
            self.scale = 1.0; // nothing is stored relative to it
            return;
        }
        if let Some(fold) = decay_scale(&mut self.scale, 1.0 - self.weight) {
            self.fold(fold);
        }
    }

    /// `decay` with D folded into the s_i (once in thousands of slots).
    #[cold]
    #[inline(never)]
    fn fold(&mut self, factor: f64) {
        for (s, _) in self.stored.iter_mut().zip(&self.backlogged).filter(|(_, &b)| b) {
            *s *= factor;
        }
        if let Some(mut heap) = self.heap.take() {
            heap.clear();
            self.heap = Some(heap);
            for i in 0..self.stored.len() {
                self.heaped[i] = NONE;
                if self.backlogged[i] {
                    self.push(i);
                }
            }
        }
    }

    /// Put backlogged user i in the heap at its s_i (a walking scheduler), rebuilding
    /// the heap without its stale entries when they make up half of it.
    #[inline(always)]
    fn push(&mut self, i: usize) {
        if self.heap.is_some() {
            self.push_heaped(i);
        }
    }

    fn push_heaped(&mut self, i: usize) {
        let Some(heap) = &mut self.heap else { return };
        let key = self.stored[i].to_bits();
        if self.heaped[i] == key {
            return;
        }
        self.heaped[i] = key;
        heap.push(Reverse((key, i as u32)));
        if heap.len() > 2 * self.busy + 64 {
            let heaped = &self.heaped;
            heap.retain(|&Reverse((key, i))| heaped[i as usize] == key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic uniform draw in [0, 1).
    fn uniforms(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    // The scheduler row by row, as Andrew & Hanly state it: the reference for `Pf`.
    /// One user as the scheduler sees it in a slot.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct PfUser {
        /// μ_i: rate the user's channel supports this slot (any unit, same as `avg`).
        rate: f64,
        /// r_i: exponentially smoothed served rate.
        avg: f64,
        /// Has data to send this slot (only backlogged users are eligible).
        backlogged: bool,
    }

    /// The user to serve: the eligible one with the largest μ_i / r_i (ties: the smaller
    /// r_i, then the lower index), or None if nobody is backlogged or every eligible rate
    /// is zero. Averages below the floor (`MIN_AVG_OF_CAP` of the largest rate) count as
    /// the floor.
    fn allocate(users: &[PfUser]) -> Option<usize> {
        let floor = users.iter().map(|u| u.rate).fold(0.0, f64::max) * MIN_AVG_OF_CAP;
        let mut best: Option<(usize, f64)> = None;
        for (i, u) in users.iter().enumerate() {
            if !u.backlogged || u.rate <= 0.0 {
                continue;
            }
            let utility = u.rate / u.avg.max(floor);
            match best {
                Some((j, b)) if utility < b || (utility == b && u.avg >= users[j].avg) => {}
                _ => best = Some((i, utility)),
            }
        }
        best.map(|(i, _)| i)
    }

    /// Update the averages after a slot: the served user's average moves towards its rate,
    /// the other backlogged users' averages decay towards zero (they got nothing), and
    /// users with empty queues keep theirs.
    fn update_averages(users: &mut [PfUser], served: Option<usize>, weight: f64) {
        for (i, u) in users.iter_mut().enumerate() {
            if !u.backlogged {
                continue;
            }
            let got = if Some(i) == served { u.rate } else { 0.0 };
            u.avg = (1.0 - weight) * u.avg + weight * got;
        }
    }

    /// A scheduler over `users` (their averages and backlogs), scanning or walking.
    fn pf_of(users: &[PfUser], weight: f64, walk: bool) -> Pf {
        let avg: Vec<f64> = users.iter().map(|u| u.avg).collect();
        let mut pf = Pf::new(&avg, weight, walk);
        for (i, u) in users.iter().enumerate() {
            pf.set_backlogged(i, u.backlogged);
        }
        pf
    }

    fn serve_rates(pf: &mut Pf, users: &[PfUser]) -> Option<usize> {
        let cap = users.iter().map(|u| u.rate).fold(0.0, f64::max);
        pf.serve(cap, |i| users[i].rate).map(|(i, _)| i)
    }

    #[test]
    fn scan_and_walk_serve_the_same_users_with_the_same_averages_bit_for_bit() {
        for n in [1, 5, 37, 300] {
            let mut next = uniforms(7 + n as u64);
            let start: Vec<PfUser> = (0..n).map(|_| PfUser { rate: 0.0, avg: 0.0, backlogged: true }).collect();
            let (mut scan, mut walk) = (pf_of(&start, 0.2, false), pf_of(&start, 0.2, true));
            let mut users = start;
            for slot in 0..6_000 {
                for (i, u) in users.iter_mut().enumerate() {
                    u.rate = if next() < 0.1 { 0.0 } else { (next() * 8.0).floor() };
                    if next() < 0.05 {
                        u.backlogged = !u.backlogged;
                        scan.set_backlogged(i, u.backlogged);
                        walk.set_backlogged(i, u.backlogged);
                    }
                }
                assert_eq!(serve_rates(&mut scan, &users), serve_rates(&mut walk, &users), "{n} users, slot {slot}");
                for i in 0..n {
                    assert_eq!(scan.average(i).to_bits(), walk.average(i).to_bits(), "{n} users, slot {slot}");
                }
            }
        }
    }

    #[test]
    fn both_searches_follow_the_row_wise_scheduler() {
        // Continuous rates (no exact ties, which rounding may break otherwise).
        for walk in [false, true] {
            let mut next = uniforms(3);
            let mut users: Vec<PfUser> = (0..40).map(|_| PfUser { rate: 0.0, avg: 0.0, backlogged: true }).collect();
            let mut pf = pf_of(&users, 0.2, walk);
            for slot in 0..6_000 {
                for (i, u) in users.iter_mut().enumerate() {
                    u.rate = next() * 8.0;
                    if next() < 0.05 {
                        u.backlogged = !u.backlogged;
                        pf.set_backlogged(i, u.backlogged);
                    }
                }
                let got = serve_rates(&mut pf, &users);
                let want = allocate(&users);
                update_averages(&mut users, want, 0.2);
                assert_eq!(got, want, "slot {slot}");
                for (i, u) in users.iter().enumerate() {
                    let close = (pf.average(i) - u.avg).abs() <= 1e-12 * u.avg.abs().max(1e-300);
                    assert!(close, "slot {slot}: {} against {}", pf.average(i), u.avg);
                }
            }
        }
    }

    #[test]
    fn a_large_cell_asks_few_rates() {
        // 1,000 users on i.i.d. Rayleigh channels at a mean SNR of 4, rates capped at
        // C_max = W0 log2(1 + 4) = 10 Mb/s as in Andrew & Hanly's (18): a walk asks a
        // handful of them a slot.
        let n = 1000;
        let (cap, w0) = (10e6, 10e6 / 5f64.log2());
        let mut next = uniforms(11);
        let users: Vec<PfUser> = (0..n).map(|_| PfUser { rate: 0.0, avg: 0.0, backlogged: true }).collect();
        let mut pf = pf_of(&users, 0.03, true);
        let (mut asked, slots) = (vec![0usize; 4_000], 4_000);
        for a in asked.iter_mut() {
            let gains: Vec<f64> = (0..n).map(|_| -(1.0 - next()).ln()).collect();
            pf.serve(cap, |i| {
                *a += 1;
                (w0 * (1.0 + 4.0 * gains[i]).log2()).min(cap)
            });
        }
        // From equal averages (the first n slots serve each user once) as afterwards.
        let early = asked[..n].iter().sum::<usize>() as f64 / n as f64;
        let late = asked[n + 1000..].iter().sum::<usize>() as f64 / (slots - n - 1000) as f64;
        println!("rates asked a slot: {early:.1} of {n} in the first {n} slots, {late:.1} later");
        assert!(early < 10.0 && late < 10.0, "{early} {late}");
    }

    #[test]
    fn serves_the_largest_rate_over_average() {
        let users = [user(10.0, 10.0), user(3.0, 1.0), user(8.0, 4.0)];
        assert_eq!(allocate(&users), Some(1));
        for walk in [false, true] {
            assert_eq!(serve_rates(&mut pf_of(&users, 0.03, walk), &users), Some(1));
        }
    }

    fn user(rate: f64, avg: f64) -> PfUser {
        PfUser { rate, avg, backlogged: true }
    }

    #[test]
    fn skips_empty_queues_and_returns_none_when_nobody_is_backlogged() {
        let mut users = [user(10.0, 1.0), user(1.0, 1.0)];
        users[0].backlogged = false;
        assert_eq!(serve_rates(&mut pf_of(&users, 0.03, true), &users), Some(1));
        users[1].backlogged = false;
        assert_eq!(serve_rates(&mut pf_of(&users, 0.03, true), &users), None);
        assert_eq!(serve_rates(&mut pf_of(&users, 0.03, false), &users), None);
    }

    #[test]
    fn zero_average_is_served_first_and_ties_go_to_the_smaller_average_then_the_lowest_index() {
        let cases: [(&[PfUser], usize); 4] = [
            (&[user(1.0, 1.0), user(0.1, 0.0)], 1),
            (&[user(2.0, 1.0), user(2.0, 1.0)], 0),
            (&[user(1.0, 0.0), user(2.0, 0.0), user(2.0, 0.0)], 1),
            (&[user(2.0, 2.0), user(1.0, 1.0), user(1.0, 1.0)], 1),
        ];
        for (users, want) in cases {
            assert_eq!(allocate(users), Some(want));
            for walk in [false, true] {
                assert_eq!(serve_rates(&mut pf_of(users, 0.03, walk), users), Some(want));
            }
        }
    }

    #[test]
    fn averages_update_only_for_backlogged_users() {
        let mut users = [user(10.0, 4.0), user(4.0, 2.0), PfUser { rate: 7.0, avg: 3.0, backlogged: false }];
        let mut pf = pf_of(&users, 0.03, false);
        assert_eq!(serve_rates(&mut pf, &users), Some(0));
        update_averages(&mut users, Some(0), 0.03);
        assert!((users[0].avg - (0.97 * 4.0 + 0.03 * 10.0)).abs() < 1e-12);
        assert!((users[1].avg - 0.97 * 2.0).abs() < 1e-12);
        assert_eq!(users[2].avg, 3.0);
        for (i, u) in users.iter().enumerate() {
            assert!((pf.average(i) - u.avg).abs() < 1e-12, "{i}");
        }
    }

    #[test]
    fn equal_constant_rates_are_served_round_robin() {
        for walk in [false, true] {
            let users = [user(1.0, 1.0), user(1.0, 1.0), user(1.0, 1.0)];
            let mut pf = pf_of(&users, 0.03, walk);
            let mut count = [0; 3];
            for _ in 0..300 {
                count[serve_rates(&mut pf, &users).unwrap()] += 1;
            }
            assert_eq!(count, [100, 100, 100]);
        }
    }

    #[test]
    fn a_cell_of_thousands_on_static_channels_is_served_round_robin() {
        // Constant rates: once every user has been served, U_i = 1 / (w (1 − w)^age), so
        // eq. (19) serves the longest unserved user: each one once in n slots, whatever
        // its rate. With 2,000 users at w = 0.03 an average falls to 1e-28 of the rate
        // before its turn comes, far below a floor of 1e-12 bit/s.
        let n = 2_000;
        let users: Vec<PfUser> = (0..n).map(|i| user(1e6 + 9e6 * ((i * 7919) % n) as f64 / n as f64, 0.0)).collect();
        for walk in [false, true] {
            let mut pf = pf_of(&users, 0.03, walk);
            let mut served = vec![0u32; n];
            for slot in 0..6 * n {
                let i = serve_rates(&mut pf, &users).expect("all backlogged");
                if slot >= n {
                    served[i] += 1;
                }
            }
            assert!(served.iter().all(|&k| k == 5), "walk {walk}: {:?}", (served.iter().min(), served.iter().max()));
        }
    }

    #[test]
    fn long_run_time_shares_are_equal_for_iid_channels_of_different_means() {
        // PF gives each user the same fraction of slots when the channels are i.i.d.
        // up to a scale (the scale cancels in μ_i / r_i).
        let mut users = [user(1.0, 1.0), user(1.0, 1.0)];
        let mut next = uniforms(12345);
        let mut pf = pf_of(&users, 0.03, true);
        let mut slots = [0u32; 2];
        for _ in 0..200_000 {
            users[0].rate = -next().max(1e-12).ln() * 10.0;
            users[1].rate = -next().max(1e-12).ln();
            slots[serve_rates(&mut pf, &users).unwrap()] += 1;
        }
        let share = f64::from(slots[0]) / 200_000.0;
        assert!((share - 0.5).abs() < 0.01, "{share}");
    }
}

//! Proportional-fair scheduler (HDR / 1xEV-DO; Andrew & Hanly §V-C eq. (19); protocol-notes §7).
//!
//! Each slot: serve the backlogged user with the largest U_i = μ_i / r_i, then
//! r_i ← (1 − w) r_i + w·(rate served to i), w = 0.03 in Andrew & Hanly (a 100 ms time constant
//! at 3 ms slots). Andrew & Hanly does not say what happens to users it does not serve. Here
//! backlogged users that were not served decay (they obtained 0), and users with nothing
//! queued keep their average (the update runs over backlogged users; protocol-notes §7
//! decays every user instead). A user whose queue drained is neither penalised nor
//! favoured when its data returns.

/// Smallest average used in U_i = μ_i / r_i, so that a user with r_i = 0 is served
/// first without dividing by zero.
const MIN_AVG: f64 = 1e-12;

/// One slot over users held as columns (μ_i in `rate`, r_i in `avg`, eligibility by
/// `backlogged(i)`): the user to serve, the eligible one with the largest μ_i / r_i (ties:
/// lowest index; None if nobody is eligible or every eligible rate is zero), and the
/// averages updated in the same pass: every eligible average decays as if it got nothing,
/// and the served one is then recomputed from its old value. The tests hold a row-wise
/// reference (`allocate`, then `update_averages`) that this matches bit for bit.
pub fn serve(rate: &[f64], avg: &mut [f64], backlogged: impl Fn(usize) -> bool, weight: f64) -> Option<usize> {
    debug_assert_eq!(rate.len(), avg.len());
    // (user, utility, its average before the update)
    let mut best: Option<(usize, f64, f64)> = None;
    for (i, (&mu, r)) in rate.iter().zip(avg.iter_mut()).enumerate() {
        if !backlogged(i) {
            continue;
        }
        let old = *r;
        if mu > 0.0 {
            let utility = mu / old.max(MIN_AVG);
            match best {
                Some((_, b, _)) if utility <= b => {}
                _ => best = Some((i, utility, old)),
            }
        }
        *r = (1.0 - weight) * old + weight * 0.0;
    }
    let (i, _, old) = best?;
    avg[i] = (1.0 - weight) * old + weight * rate[i];
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The scheduler row by row, as Andrew & Hanly state it: the reference for `serve`.
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

    /// The user to serve: the eligible one with the largest μ_i / r_i (ties: lowest index),
    /// or None if nobody is backlogged or every eligible rate is zero.
    fn allocate(users: &[PfUser]) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, u) in users.iter().enumerate() {
            if !u.backlogged || u.rate <= 0.0 {
                continue;
            }
            let utility = u.rate / u.avg.max(MIN_AVG);
            match best {
                Some((_, b)) if utility <= b => {}
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

    #[test]
    fn serve_matches_allocate_then_update_bit_for_bit() {
        let mut state = 99u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut users: Vec<PfUser> = (0..37).map(|_| PfUser { rate: 0.0, avg: 0.0, backlogged: true }).collect();
        let mut avg = vec![0.0; users.len()];
        for slot in 0..5_000 {
            for u in &mut users {
                // Some zero rates, some idle users, some exact ties.
                u.rate = if next() < 0.1 { 0.0 } else { (next() * 8.0).floor() };
                u.backlogged = next() < 0.8;
            }
            let rate: Vec<f64> = users.iter().map(|u| u.rate).collect();
            let want = allocate(&users);
            update_averages(&mut users, want, 0.03);
            let got = serve(&rate, &mut avg, |i| users[i].backlogged, 0.03);
            assert_eq!(got, want, "slot {slot}");
            for (u, a) in users.iter().zip(&avg) {
                assert_eq!(u.avg.to_bits(), a.to_bits(), "slot {slot}");
            }
        }
    }

    fn user(rate: f64, avg: f64) -> PfUser {
        PfUser { rate, avg, backlogged: true }
    }

    #[test]
    fn serves_the_largest_rate_over_average() {
        let users = [user(10.0, 10.0), user(3.0, 1.0), user(8.0, 4.0)];
        assert_eq!(allocate(&users), Some(1));
    }

    #[test]
    fn skips_empty_queues_and_returns_none_when_nobody_is_backlogged() {
        let mut users = [user(10.0, 1.0), user(1.0, 1.0)];
        users[0].backlogged = false;
        assert_eq!(allocate(&users), Some(1));
        users[1].backlogged = false;
        assert_eq!(allocate(&users), None);
    }

    #[test]
    fn zero_average_is_served_first_and_ties_go_to_the_lowest_index() {
        assert_eq!(allocate(&[user(1.0, 1.0), user(0.1, 0.0)]), Some(1));
        assert_eq!(allocate(&[user(2.0, 1.0), user(2.0, 1.0)]), Some(0));
    }

    #[test]
    fn averages_update_only_for_backlogged_users() {
        let mut users = [user(10.0, 5.0), user(4.0, 2.0), PfUser { rate: 7.0, avg: 3.0, backlogged: false }];
        update_averages(&mut users, Some(0), 0.03);
        assert!((users[0].avg - (0.97 * 5.0 + 0.03 * 10.0)).abs() < 1e-12);
        assert!((users[1].avg - 0.97 * 2.0).abs() < 1e-12);
        assert_eq!(users[2].avg, 3.0);
    }

    #[test]
    fn equal_constant_rates_are_served_round_robin() {
        let mut users = [user(1.0, 1.0), user(1.0, 1.0), user(1.0, 1.0)];
        let mut count = [0; 3];
        for _ in 0..300 {
            let i = allocate(&users).unwrap();
            count[i] += 1;
            update_averages(&mut users, Some(i), 0.03);
        }
        assert_eq!(count, [100, 100, 100]);
    }

    #[test]
    fn long_run_time_shares_are_equal_for_iid_channels_of_different_means() {
        // PF gives each user the same fraction of slots when the channels are i.i.d.
        // up to a scale (the scale cancels in μ_i / r_i).
        let mut users = [user(1.0, 1.0), user(1.0, 1.0)];
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64).max(1e-12)
        };
        let mut slots = [0u32; 2];
        for _ in 0..200_000 {
            users[0].rate = -next().ln() * 10.0;
            users[1].rate = -next().ln();
            let i = allocate(&users).unwrap();
            slots[i] += 1;
            update_averages(&mut users, Some(i), 0.03);
        }
        let share = f64::from(slots[0]) / 200_000.0;
        assert!((share - 0.5).abs() < 0.01, "{share}");
    }
}

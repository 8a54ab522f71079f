//! Data-migration mode selector (DMMS): copyback or off-chip copy, by how busy
//! the host is.
//!
//! Seed 000 §4.2 and seed 001 §4.3.2 (p. 64): copybacks are a scarce budget,
//! so spend them when the host needs bandwidth and let idle periods reset
//! quotas with off-chip copies. The signal is the write-buffer utilisation
//! `u`, smoothed by a "t-second moving average" with `t` = "an average block
//! write time" to filter out "abrupt noise-like changes"; above 50% the mode
//! is copyback, otherwise off-chip. Urgent work (foreground GC) always asks
//! for copyback; the decision is made once per victim block. The
//! [`Policy::Greedy`] variant always asks for copyback: the papers' `rcFTL-`.
//! Either way the EPM still has the last word ([`crate::tech::rcftl::epm::Epm::migrate`]).
//!
//! # The moving average
//!
//! The papers give a boxcar ("t-second moving") average, not an exponential
//! one, so this is a time-weighted boxcar over the last `window` ns of a
//! sample-and-hold signal: each [`Dmms::record`] says "utilisation is `u` from
//! now on". Memory is fixed: `K` buckets of `window / (K - 1)` ns each hold
//! the integral of `u` over their span; the window is `K - 1` buckets plus a
//! linearly weighted share of the oldest one, so the average is exact when
//! queried on a bucket boundary and within one bucket's weight otherwise.
//! Until a full window has been seen it averages over the time observed.
//! Timestamps come with the calls (u64 ns); the module reads no clock.

use crate::error::{Error, OrRare};

/// Utilisation 100% in the Q16 fixed point used here (`u * 65536`).
pub const UTIL_ONE: u32 = 1 << 16;

/// The papers' threshold: copyback when the average utilisation is *above* 50%.
pub const DEFAULT_THRESHOLD: u32 = UTIL_ONE / 2;

/// How one migration (one victim block) is to be done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Use copyback where the EPM allows it.
    Copyback,
    /// Copy through the controller (resets the data's copyback quota).
    OffChip,
}

/// Why the migration runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Urgency {
    /// The host is waiting for free space (foreground GC): always copyback.
    Foreground,
    /// Background GC or wear levelling: decided by utilisation.
    Background,
}

/// Selection policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// rcFTL: by the moving average of write-buffer utilisation.
    #[default]
    Selective,
    /// rcFTL-: copyback whenever the EPM allows.
    Greedy,
}

/// Utilisation of a buffer holding `used` of `capacity` units, in Q16
/// (clamped to [`UTIL_ONE`]; 0 when `capacity` is 0).
pub fn utilisation_q16(used: u32, capacity: u32) -> u32 {
    let q = u64::from(used)
        .saturating_mul(u64::from(UTIL_ONE))
        .checked_div(u64::from(capacity))
        .unwrap_or(0);
    u32::try_from(q.min(u64::from(UTIL_ONE))).unwrap_or(UTIL_ONE)
}

/// Nominal time to write one block: `pages_per_block` programs of `t_prog_ns`
/// each (seed 001 setup: 128 x 660 us = 84.48 ms; seed 000: 64 x 640 us =
/// 40.96 ms). An integrator that measures the real average fill time of its
/// active blocks can pass that to [`Dmms::set_window`] instead.
pub fn block_write_time_ns(pages_per_block: u32, t_prog_ns: u64) -> u64 {
    u64::from(pages_per_block).saturating_mul(t_prog_ns)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    /// `time / width` of the span this bucket holds (`u64::MAX`: none yet).
    epoch: u64,
    /// Integral of utilisation (Q16) over the covered time, in Q16 * ns.
    integral: u64,
    /// Nanoseconds of this span covered by samples.
    covered: u64,
}

/// Widest bucket span: keeps [`part`]'s products within 64 bits (a
/// window of 16 buckets can still span about a minute).
const MAX_WIDTH_NS: u64 = u32::MAX as u64;

const EMPTY: Bucket = Bucket {
    epoch: u64::MAX,
    integral: 0,
    covered: 0,
};

/// The mode selector with `K` averaging buckets (`K >= 2`; 16 is plenty).
/// Memory: `24 * K` bytes plus a few words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dmms<const K: usize> {
    policy: Policy,
    threshold: u32,
    width_ns: u64,
    buckets: [Bucket; K],
    /// Time of the last sample or query, and the utilisation held since.
    last: Option<(u64, u32)>,
}

impl<const K: usize> Dmms<K> {
    /// A selector averaging over `window_ns` (an average block write time),
    /// with the 50% threshold. Fails when `K < 2` or `window_ns < K - 1`.
    pub fn new(window_ns: u64, policy: Policy) -> Result<Self, Error> {
        let mut d = Dmms {
            policy,
            threshold: DEFAULT_THRESHOLD,
            width_ns: 1,
            buckets: [EMPTY; K],
            last: None,
        };
        d.set_window(window_ns)?;
        Ok(d)
    }

    /// Changes the averaging window (for example to a newly measured block
    /// write time). The history is dropped; the current utilisation is kept.
    pub fn set_window(&mut self, window_ns: u64) -> Result<(), Error> {
        let spans = u64::try_from(K)
            .ok()
            .and_then(|k| k.checked_sub(1))
            .filter(|&s| s >= 1)
            .or_rare(Error::InvalidConfig(&"dmms needs at least two buckets"))?;
        let width = window_ns.checked_div(spans).unwrap_or(0);
        if width == 0 {
            return Err(Error::InvalidConfig(
                &"dmms window shorter than its bucket count",
            ));
        }
        if width > MAX_WIDTH_NS {
            return Err(Error::InvalidConfig(
                &"dmms bucket width above 2^32 ns (window too long)",
            ));
        }
        self.width_ns = width;
        self.buckets = [EMPTY; K];
        Ok(())
    }

    /// The effective window: `(K - 1) * (window / (K - 1))` ns.
    pub fn window_ns(&self) -> u64 {
        let spans = u64::try_from(K.saturating_sub(1)).unwrap_or(0);
        self.width_ns.saturating_mul(spans)
    }

    /// Sets the copyback threshold (Q16; copyback when the average is above it).
    pub fn set_threshold_q16(&mut self, threshold: u32) {
        self.threshold = threshold;
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Records that the write buffer holds `used` of `capacity` units from
    /// `now_ns` on (call on every change, or periodically).
    pub fn record(&mut self, now_ns: u64, used: u32, capacity: u32) {
        self.record_q16(now_ns, utilisation_q16(used, capacity));
    }

    /// Records a utilisation given in Q16 (clamped to [`UTIL_ONE`]). A
    /// timestamp older than the previous one moves no time forward; its value
    /// still replaces the held one.
    pub fn record_q16(&mut self, now_ns: u64, u: u32) {
        self.advance(now_ns);
        let t = self.last.map_or(now_ns, |(t, _)| t.max(now_ns));
        self.last = Some((t, u.min(UTIL_ONE)));
    }

    /// The moving average of utilisation (Q16) over the window ending at
    /// `now_ns`; the held value if no time has been observed yet, 0 before
    /// any sample.
    pub fn average_q16(&mut self, now_ns: u64) -> u32 {
        self.advance(now_ns);
        let Some((t, held)) = self.last else {
            return 0;
        };
        let w = self.width_ns;
        let cur = t.checked_div(w).unwrap_or(0);
        let pos = t.checked_rem(w).unwrap_or(0);
        let spans = u64::try_from(K.saturating_sub(1)).unwrap_or(0);
        let oldest = cur.saturating_sub(spans);
        let (mut integral, mut covered) = (0u64, 0u64);
        for b in &self.buckets {
            if b.epoch > cur || b.epoch < oldest {
                continue;
            }
            let (mut i, mut c) = (b.integral, b.covered);
            if b.epoch == oldest && cur >= spans {
                // Only the last (w - pos) ns of the oldest span are in the window.
                let keep = w.saturating_sub(pos);
                i = part(b.integral, keep, w);
                c = part(b.covered, keep, w);
            }
            integral = integral.saturating_add(i);
            covered = covered.saturating_add(c);
        }
        match integral.checked_div(covered) {
            Some(avg) => u32::try_from(avg.min(u64::from(UTIL_ONE))).unwrap_or(UTIL_ONE),
            None => held,
        }
    }

    /// The mode for a migration decided at `now_ns`.
    pub fn select(&mut self, now_ns: u64, urgency: Urgency) -> Mode {
        match (self.policy, urgency) {
            (Policy::Greedy, _) | (_, Urgency::Foreground) => Mode::Copyback,
            (Policy::Selective, Urgency::Background) => {
                if self.average_q16(now_ns) > self.threshold {
                    Mode::Copyback
                } else {
                    Mode::OffChip
                }
            }
        }
    }

    /// Moves the held utilisation forward to `now_ns`.
    fn advance(&mut self, now_ns: u64) {
        let Some((t, u)) = self.last else {
            return;
        };
        if now_ns <= t {
            return;
        }
        self.accumulate(t, now_ns, u);
        self.last = Some((now_ns, u));
    }

    /// Adds utilisation `u` held over `[from, to)` to the buckets.
    fn accumulate(&mut self, from: u64, to: u64, u: u32) {
        let w = self.width_ns;
        let k = u64::try_from(K).unwrap_or(u64::MAX);
        // Only the last K spans can still be in the window.
        let mut from = from.max(to.saturating_sub(w.saturating_mul(k)));
        while from < to {
            let epoch = from.checked_div(w).unwrap_or(0);
            let end = epoch.saturating_add(1).saturating_mul(w).min(to);
            let Some(b) = usize::try_from(epoch.checked_rem(k).unwrap_or(0))
                .ok()
                .and_then(|i| self.buckets.get_mut(i))
            else {
                return;
            };
            if b.epoch != epoch {
                *b = Bucket {
                    epoch,
                    integral: 0,
                    covered: 0,
                };
            }
            let dt = end.saturating_sub(from);
            b.integral = b.integral.saturating_add(dt.saturating_mul(u64::from(u)));
            b.covered = b.covered.saturating_add(dt);
            if end <= from {
                return;
            }
            from = end;
        }
    }
}

/// `x * keep / w` exactly for `keep <= w <= MAX_WIDTH_NS`, 0 when `w` is
/// 0. With `x = q * w + r` it is `q * keep + r * keep / w`: `q * keep` is at
/// most `x` and `r * keep < 2^64`, so no 128-bit division (a long
/// instruction sequence on a 32-bit core) is needed.
fn part(x: u64, keep: u64, w: u64) -> u64 {
    let (Some(q), Some(r)) = (x.checked_div(w), x.checked_rem(w)) else {
        return 0;
    };
    q.saturating_mul(keep)
        .saturating_add(r.saturating_mul(keep).checked_div(w).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    const FULL: u32 = UTIL_ONE;

    #[test]
    fn switches_at_fifty_percent_over_the_window() {
        // Window 1000 ns in 10 spans of 100 ns.
        let mut d = Dmms::<11>::new(1000, Policy::Selective).unwrap();
        assert_eq!(d.window_ns(), 1000);
        d.record(0, 0, 100); // idle buffer
        d.record(1000, 100, 100); // full from t = 1000
        let bg = Urgency::Background;
        // Instantly full, but the average lags: 40% at 1400.
        assert_eq!(d.average_q16(1400), FULL * 4 / 10);
        assert_eq!(d.select(1400, bg), Mode::OffChip);
        // Exactly 50% at 1500: not above the threshold.
        assert_eq!(d.average_q16(1500), FULL / 2);
        assert_eq!(d.select(1500, bg), Mode::OffChip);
        // 51% at 1510 (oldest span weighted 0.9): copyback.
        assert_eq!(d.average_q16(1510), FULL * 51 / 100);
        assert_eq!(d.select(1510, bg), Mode::Copyback);
        assert_eq!(d.average_q16(2000), FULL);
        // Back to idle: copyback until the average falls to 50%.
        d.record(2000, 0, 100);
        assert_eq!(d.select(2490, bg), Mode::Copyback);
        assert_eq!(d.select(2500, bg), Mode::OffChip);
        assert_eq!(d.average_q16(3000), 0);
    }

    #[test]
    fn filters_short_spikes() {
        let mut d = Dmms::<17>::new(1_600_000, Policy::Selective).unwrap();
        d.record(0, 20, 100);
        // A spike to 100% for 30% of the window.
        d.record(10_000_000, 100, 100);
        assert_eq!(d.select(10_480_000, Urgency::Background), Mode::OffChip);
        let avg = d.average_q16(10_480_000);
        assert!(avg.abs_diff(FULL * 44 / 100) <= 1, "{avg}");
        d.record(10_480_000, 20, 100);
        assert_eq!(d.select(11_000_000, Urgency::Background), Mode::OffChip);
        // A sustained 90% burst crosses 50% after ~0.43 of a window.
        d.record(20_000_000, 90, 100);
        assert_eq!(d.select(20_500_000, Urgency::Background), Mode::OffChip);
        assert_eq!(d.select(20_700_000, Urgency::Background), Mode::Copyback);
    }

    #[test]
    fn urgency_and_policy() {
        let mut d = Dmms::<4>::new(300, Policy::Selective).unwrap();
        d.record(0, 0, 10);
        assert_eq!(d.select(1000, Urgency::Background), Mode::OffChip);
        assert_eq!(d.select(1000, Urgency::Foreground), Mode::Copyback);
        let mut g = Dmms::<4>::new(300, Policy::Greedy).unwrap();
        g.record(0, 0, 10);
        assert_eq!(g.select(1000, Urgency::Background), Mode::Copyback);
        assert_eq!(g.policy(), Policy::Greedy);
        d.set_threshold_q16(0);
        d.record(1000, 1, 10);
        assert_eq!(d.select(1100, Urgency::Background), Mode::Copyback);
    }

    #[test]
    fn edge_cases() {
        assert!(Dmms::<1>::new(1000, Policy::Selective).is_err());
        assert!(Dmms::<0>::new(1000, Policy::Selective).is_err());
        assert!(Dmms::<11>::new(9, Policy::Selective).is_err());
        let mut d = Dmms::<11>::new(1000, Policy::Selective).unwrap();
        // No sample yet: idle.
        assert_eq!(d.average_q16(5), 0);
        // A sample with no elapsed time: its own value.
        d.record(100, 3, 4);
        assert_eq!(d.average_q16(100), FULL * 3 / 4);
        // An idle gap of many windows: the held value fills the window.
        d.record(200, 4, 5);
        assert_eq!(d.average_q16(1_000_000_000_000), FULL * 4 / 5);
        // Timestamps going backwards move no time.
        d.record(500, 0, 5);
        assert_eq!(d.average_q16(1_000_000_000_000), FULL * 4 / 5);
        assert_eq!(d.average_q16(1_000_000_000_500), FULL * 2 / 5);
        // Near the end of time: no overflow.
        d.record(u64::MAX - 10, 5, 5);
        let _ = d.average_q16(u64::MAX);
        assert!(d.set_window(3).is_err());
        d.set_window(2000).unwrap();
        assert_eq!(d.window_ns(), 2000);
        assert_eq!(utilisation_q16(1, 0), 0);
        assert_eq!(utilisation_q16(7, 5), FULL);
        assert_eq!(block_write_time_ns(128, 660_000), 84_480_000);
        assert_eq!(block_write_time_ns(64, 640_000), 40_960_000);
    }

    /// Exact time-weighted average of a sample-and-hold signal over
    /// `[now - window, now]`, counting only time after the first sample.
    fn exact(samples: &[(u64, u32)], now: u64, window: u64) -> Option<f64> {
        let start = now.saturating_sub(window);
        let (mut integral, mut covered) = (0f64, 0f64);
        for (i, &(t, u)) in samples.iter().enumerate() {
            let end = samples.get(i + 1).map_or(now, |&(n, _)| n).min(now);
            let a = t.max(start);
            if end > a {
                integral += (end - a) as f64 * f64::from(u);
                covered += (end - a) as f64;
            }
        }
        (covered > 0.0).then(|| integral / covered)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn matches_exact_boxcar(
            gaps in proptest::collection::vec((0u64..400, 0u32..=FULL), 1..40),
            tail in 0u64..2000,
        ) {
            let mut d = Dmms::<11>::new(1000, Policy::Selective).unwrap();
            let mut t = 0u64;
            let mut samples: Vec<(u64, u32)> = Vec::new();
            for (gap, u) in gaps {
                t += gap;
                d.record_q16(t, u);
                match samples.last_mut() {
                    Some(last) if last.0 == t => last.1 = u,
                    _ => samples.push((t, u)),
                }
            }
            let now = t + tail;
            let got = f64::from(d.average_q16(now));
            match exact(&samples, now, 1000) {
                // On a bucket boundary the boxcar is exact (up to rounding).
                Some(want) if now.is_multiple_of(100) => prop_assert!((got - want).abs() <= 2.0, "{got} vs {want}"),
                // Elsewhere within one bucket's share of the range.
                Some(want) => prop_assert!((got - want).abs() <= f64::from(FULL) * 0.12, "{got} vs {want}"),
                None => prop_assert_eq!(got, f64::from(samples.last().unwrap().1)),
            }
        }

        /// The 64-bit split equals the exact 128-bit product and quotient
        /// over the whole accepted range (bucket integrals are at most
        /// `w * UTIL_ONE`).
        #[test]
        fn part_is_exact(w in 1u64..=MAX_WIDTH_NS, keep_f in 0.0f64..=1.0, x_f in 0.0f64..=1.0) {
            let keep = ((w as f64) * keep_f) as u64;
            let x = ((w as f64) * f64::from(UTIL_ONE) * x_f) as u64;
            let exact = u128::from(x) * u128::from(keep) / u128::from(w);
            prop_assert_eq!(u128::from(part(x, keep, w)), exact);
        }
    }

    #[test]
    fn rejects_buckets_wider_than_two_to_the_32_ns() {
        assert!(Dmms::<2>::new(MAX_WIDTH_NS, Policy::Selective).is_ok());
        assert!(Dmms::<2>::new(MAX_WIDTH_NS + 1, Policy::Selective).is_err());
        assert!(Dmms::<17>::new(16 * MAX_WIDTH_NS, Policy::Selective).is_ok());
    }
}

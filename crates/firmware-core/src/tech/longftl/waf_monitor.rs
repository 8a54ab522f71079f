//! The WAF monitor of longFTL (seed 001 §3.3.3): WAF per observation
//! interval, and whether it is stable enough for the gErase mode selector.
//!
//! An observation interval ends once GC has reclaimed a set number of
//! victims (the paper uses 5% of all blocks), so it measures the long-term
//! workload rather than bursts. The WAF of an interval is the units
//! programmed in it (host and GC) over the host units written in it. The
//! WAF is *stable* when each of the last [`STABLE_INTERVALS`] interval values
//! lies within ±2% of the newest one.
//!
//! On a drive much smaller than the paper's 14,576 blocks, 5% of the blocks
//! is a few dozen victims and an interval's WAF is noisy (±10% on the
//! scaled `longftl-mqsim` drive); [`WafMonitor::with_window`] makes each
//! interval's value the WAF over the last `window` intervals, the long-term
//! figure the selector wants.
//!
//! Values are fixed point in thousandths ([`Milli`]): no floating point in
//! the core.

use crate::error::Error;

/// Intervals a WAF must stay steady over to count as stable (the paper's 10).
pub const STABLE_INTERVALS: usize = 10;

/// A ratio in thousandths (WAF 2.66 is `Milli(2660)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Milli(pub u32);

/// Most intervals one value may span ([`WafMonitor::with_window`]).
pub const MAX_WINDOW: usize = 16;

/// Tolerance of a steady WAF: ±2%, in thousandths of the value.
const STEADY_MILLI: u64 = 20;

/// What one finished observation interval says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// WAF of the interval just closed.
    pub waf: Milli,
    /// Whether the last [`STABLE_INTERVALS`] intervals were all within ±2% of it.
    pub stable: bool,
}

/// The monitor's state: counters of the running interval and a ring of the
/// last interval WAFs.
#[derive(Clone, Debug)]
pub struct WafMonitor {
    interval_victims: u32,
    victims: u32,
    host_units: u64,
    programmed_units: u64,
    ring: [Milli; STABLE_INTERVALS],
    filled: usize,
    next: usize,
    /// (host, programmed) units of the last `window` intervals.
    counts: [(u64, u64); MAX_WINDOW],
    window: usize,
    counted: usize,
}

impl WafMonitor {
    /// A monitor whose intervals last `interval_victims` GC victims (>= 1);
    /// [`WafMonitor::for_blocks`] derives it from the drive.
    pub fn new(interval_victims: u32) -> Result<Self, Error> {
        if interval_victims == 0 {
            return Err(Error::InvalidConfig(&"WAF interval of zero GC victims"));
        }
        Ok(WafMonitor {
            interval_victims,
            victims: 0,
            host_units: 0,
            programmed_units: 0,
            ring: [Milli(0); STABLE_INTERVALS],
            filled: 0,
            next: 0,
            counts: [(0, 0); MAX_WINDOW],
            window: 1,
            counted: 0,
        })
    }

    /// A monitor whose interval values are the WAF over the last `window`
    /// intervals (1..=[`MAX_WINDOW`]; 1 is [`WafMonitor::new`]).
    pub fn with_window(interval_victims: u32, window: usize) -> Result<Self, Error> {
        if !(1..=MAX_WINDOW).contains(&window) {
            return Err(Error::InvalidConfig(&"WAF window of 1 to 16 intervals"));
        }
        let mut m = Self::new(interval_victims)?;
        m.window = window;
        Ok(m)
    }

    /// A monitor whose interval is the paper's: GC of 5% of `total_blocks`.
    pub fn for_blocks(total_blocks: u32) -> Result<Self, Error> {
        Self::new((total_blocks / 20).max(1))
    }

    /// Counts host units written.
    pub fn host_written(&mut self, units: u64) {
        self.host_units = self.host_units.saturating_add(units);
    }

    /// Counts units programmed (host data and relocations).
    pub fn programmed(&mut self, units: u64) {
        self.programmed_units = self.programmed_units.saturating_add(units);
    }

    /// Counts one GC victim; when that closes an interval, returns its WAF
    /// and the stability verdict. An interval without host writes yields no
    /// value (its WAF is undefined) and starts again.
    pub fn victim(&mut self) -> Option<Observation> {
        self.victims = self.victims.saturating_add(1);
        if self.victims < self.interval_victims {
            return None;
        }
        let host = self.host_units;
        let prog = self.programmed_units;
        self.victims = 0;
        self.host_units = 0;
        self.programmed_units = 0;
        if host == 0 {
            return None;
        }
        // Shift this interval's counts into the window and sum it.
        self.counts.copy_within(..MAX_WINDOW.saturating_sub(1), 1);
        if let Some(c) = self.counts.first_mut() {
            *c = (host, prog);
        }
        self.counted = self.counted.saturating_add(1).min(self.window);
        let (host, prog) = self
            .counts
            .iter()
            .take(self.counted)
            .fold((0u64, 0u64), |(h, p), &(a, b)| {
                (h.saturating_add(a), p.saturating_add(b))
            });
        let waf = prog.saturating_mul(1000).checked_div(host).unwrap_or(0);
        let waf = Milli(u32::try_from(waf).unwrap_or(u32::MAX));
        if let Some(slot) = self.ring.get_mut(self.next) {
            *slot = waf;
        }
        self.next = self
            .next
            .saturating_add(1)
            .checked_rem(STABLE_INTERVALS)
            .unwrap_or(0);
        self.filled = self.filled.saturating_add(1).min(STABLE_INTERVALS);
        Some(Observation {
            waf,
            stable: self.is_stable_around(waf),
        })
    }

    fn is_stable_around(&self, w: Milli) -> bool {
        if self.filled < STABLE_INTERVALS {
            return false;
        }
        let w = u64::from(w.0);
        let tol = w.saturating_mul(STEADY_MILLI) / 1000;
        self.ring.iter().all(|v| u64::from(v.0).abs_diff(w) <= tol)
    }

    /// Forgets the interval history (after a mode change the old values no
    /// longer describe the drive).
    pub fn restart(&mut self) {
        self.filled = 0;
        self.next = 0;
        self.counted = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds one interval of `victims` GC victims with the given WAF.
    fn interval(m: &mut WafMonitor, victims: u32, host: u64, prog: u64) -> Option<Observation> {
        m.host_written(host);
        m.programmed(prog);
        let mut out = None;
        for _ in 0..victims {
            out = m.victim();
        }
        out
    }

    #[test]
    fn interval_is_five_percent_of_blocks_and_waf_is_programmed_over_host() {
        let mut m = WafMonitor::for_blocks(2000).unwrap();
        m.host_written(1000);
        m.programmed(2660);
        for _ in 0..99 {
            assert_eq!(m.victim(), None);
        }
        let o = m.victim().unwrap();
        assert_eq!(o.waf, Milli(2660));
        assert!(!o.stable);
    }

    #[test]
    fn stable_after_ten_steady_intervals_only() {
        let mut m = WafMonitor::new(4).unwrap();
        for i in 0..9 {
            let o = interval(&mut m, 4, 1000, 2000 + (i % 3) * 10).unwrap();
            assert!(!o.stable, "interval {i}");
        }
        assert!(interval(&mut m, 4, 1000, 2010).unwrap().stable);
        // A 3% jump breaks it; it is stable again once the last ten
        // intervals (the jump's included) all sit at the new value.
        assert!(!interval(&mut m, 4, 1000, 2080).unwrap().stable);
        for _ in 0..8 {
            assert!(!interval(&mut m, 4, 1000, 2080).unwrap().stable);
        }
        assert!(interval(&mut m, 4, 1000, 2080).unwrap().stable);
        m.restart();
        assert!(!interval(&mut m, 4, 1000, 2080).unwrap().stable);
    }

    #[test]
    fn a_window_averages_noisy_intervals_into_a_stable_value() {
        // Intervals alternating 10% above and below 2.0: never steady
        // alone, steady as the WAF over 10 intervals.
        let mut plain = WafMonitor::new(2).unwrap();
        let mut wide = WafMonitor::with_window(2, 10).unwrap();
        let (mut p, mut w) = (None, None);
        for i in 0..30u64 {
            let prog = if i % 2 == 0 { 2200 } else { 1800 };
            p = interval(&mut plain, 2, 1000, prog);
            w = interval(&mut wide, 2, 1000, prog);
        }
        assert!(!p.unwrap().stable);
        let w = w.unwrap();
        assert!(w.stable);
        assert_eq!(w.waf, Milli(2000));
        assert!(WafMonitor::with_window(2, 0).is_err());
        assert!(WafMonitor::with_window(2, MAX_WINDOW + 1).is_err());
    }

    #[test]
    fn intervals_without_host_writes_give_no_value() {
        let mut m = WafMonitor::new(2).unwrap();
        assert_eq!(interval(&mut m, 2, 0, 500), None);
        assert!(WafMonitor::new(0).is_err());
    }
}

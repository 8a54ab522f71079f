//! The gErase mode selector of longFTL (seed 001 §3.3.4, Fig. 12, Table 4).
//!
//! On every stable WAF from the [`crate::tech::longftl::waf_monitor`], the selector records
//! it as the current mode's WAF and compares the expected lifetime writes,
//! TBW ∝ max P/E(mode) / WAF(mode), with the neighbouring modes only: it
//! moves one step at a time, tries a neighbour that has no WAF history yet,
//! moves to a neighbour with a larger expected TBW, and steps back when the
//! move it just made lost.

use crate::error::Error;
use crate::tech::longftl::waf_monitor::{Milli, Observation};

pub use crate::tech::longftl::config::MAX_MODES;

/// The selector's state.
#[derive(Clone, Debug)]
pub struct ModeSelector {
    max_pe: [u32; MAX_MODES],
    modes: usize,
    waf: [Option<Milli>; MAX_MODES],
    current: usize,
    /// The mode a trial move left, until the trial's WAF is known.
    came_from: Option<usize>,
}

impl ModeSelector {
    /// A selector over the modes whose maximum P/E counts are `max_pe`
    /// (gE(0) first), starting at gE(0).
    pub fn new(max_pe: &[u32]) -> Result<Self, Error> {
        if max_pe.is_empty() || max_pe.len() > MAX_MODES || max_pe.contains(&0) {
            return Err(Error::InvalidConfig(
                &"gErase modes: 1 to 10, each with max P/E > 0",
            ));
        }
        let mut table = [0u32; MAX_MODES];
        for (t, &p) in table.iter_mut().zip(max_pe) {
            *t = p;
        }
        Ok(ModeSelector {
            max_pe: table,
            modes: max_pe.len(),
            waf: [None; MAX_MODES],
            current: 0,
            came_from: None,
        })
    }

    /// The mode new host active blocks are erased with.
    pub fn mode(&self) -> usize {
        self.current
    }

    /// The WAF recorded for `mode`, if it has run with a stable WAF.
    pub fn history(&self, mode: usize) -> Option<Milli> {
        self.waf.get(mode).copied().flatten()
    }

    /// Whether `a` promises more lifetime writes than `b` (both recorded).
    fn better(&self, a: usize, b: usize) -> bool {
        let tbw = |m: usize| -> Option<(u64, u64)> {
            let pe = u64::from(*self.max_pe.get(m)?);
            let waf = u64::from(self.history(m)?.0.max(1));
            Some((pe, waf))
        };
        match (tbw(a), tbw(b)) {
            // pe_a / waf_a > pe_b / waf_b, cross-multiplied.
            (Some((pa, wa)), Some((pb, wb))) => pa.saturating_mul(wb) > pb.saturating_mul(wa),
            _ => false,
        }
    }

    /// Takes one observation interval's verdict; returns the mode to use
    /// from now on (changed only on a stable WAF).
    pub fn observe(&mut self, o: Observation) -> usize {
        if !o.stable {
            return self.current;
        }
        let c = self.current;
        if let Some(slot) = self.waf.get_mut(c) {
            *slot = Some(o.waf);
        }
        if let Some(prev) = self.came_from.take() {
            if self.better(prev, c) {
                // The move lost: go back.
                self.current = prev;
                return prev;
            }
        }
        let up = Some(c.saturating_add(1)).filter(|&m| m < self.modes);
        let down = c.checked_sub(1);
        for n in [up, down].into_iter().flatten() {
            if self.history(n).is_none() || self.better(n, c) {
                self.came_from = Some(c);
                self.current = n;
                return n;
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    fn stable(waf: u32) -> Observation {
        Observation {
            waf: Milli(waf),
            stable: true,
        }
    }

    /// Seed 001 Table 4: normalised max P/E 1.00, 1.19, 1.26, 1.30 and WAF
    /// 2.66, 2.78, 2.91, 3.05 for gE(0..3): the walk goes up to gE(3), finds
    /// it worse, and settles on gE(2) (+15% expected TBW).
    #[test]
    fn table4_walk_settles_on_ge2() {
        let max_pe = [10_000, 11_900, 12_600, 13_000];
        let waf = [2660, 2780, 2910, 3050];
        let mut s = ModeSelector::new(&max_pe).unwrap();
        let mut walk = vec![s.mode()];
        for _ in 0..8 {
            let m = s.observe(stable(waf[s.mode()]));
            walk.push(m);
        }
        assert_eq!(&walk[..5], &[0, 1, 2, 3, 2]);
        assert!(walk[5..].iter().all(|&m| m == 2), "{walk:?}");
        // Expected TBW of gE(2) over gE(0): (1.26 / 2.91) / (1.00 / 2.66) = 1.15.
        let gain = (12_600.0 / 2.91) / (10_000.0 / 2.66);
        assert!((gain - 1.15f64).abs() < 0.01);
    }

    #[test]
    fn unstable_intervals_change_nothing() {
        let mut s = ModeSelector::new(&[10_000, 11_000]).unwrap();
        let o = Observation {
            waf: Milli(2000),
            stable: false,
        };
        assert_eq!(s.observe(o), 0);
        assert_eq!(s.history(0), None);
        assert!(ModeSelector::new(&[]).is_err());
        assert!(ModeSelector::new(&[1, 0]).is_err());
    }

    #[test]
    fn a_neighbour_below_with_better_tbw_is_taken() {
        // gE(1) looks good at first, then the workload's WAF at gE(1) grows.
        let mut s = ModeSelector::new(&[10_000, 11_900, 12_600]).unwrap();
        assert_eq!(s.observe(stable(2000)), 1);
        assert_eq!(s.observe(stable(2100)), 2);
        assert_eq!(s.observe(stable(3500)), 1); // gE(2) lost: back
        assert_eq!(s.observe(stable(3000)), 0); // gE(1) now worse than gE(0)
        assert_eq!(s.observe(stable(2000)), 0);
    }
}

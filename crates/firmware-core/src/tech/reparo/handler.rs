//! Reparo CDR *Handler* arithmetic: per-core logical space adjustment and
//! selective LBA redirection after a single die failure (seed 001, Sec. 5.4.2,
//! Eqs. 5.3 and 5.4, Fig. 30, Tables 8 and 9).
//!
//! # Model
//!
//! An SSD has `N` flash cores and `D_ssd` dies, `D_ssd / N` per core, and a
//! host-visible logical space of `|LS|` LBAs. The master core stripes LBAs over
//! the cores statically: LBA `l` belongs to `core_(l % N)`, so every core owns
//! `|LS_i| = |LS| / N` LBAs. The space utilisation `U_i` of a core is its
//! logical capacity over its physical capacity (`D_i` dies of `die_capacity`
//! LBAs each).
//!
//! When one die of the victim core `core_v` fails, `reparo_IDR` leaves the
//! logical spaces alone, so only `U_v` grows, by `1 / (D_i - 1)` (Table 8).
//! `reparo_CDR` instead moves `alpha` LBAs of logical space from the victim to
//! each of the `N - 1` helpers so that all `U_i` stay equal (Eq. 5.3):
//!
//! ```text
//! (|LS_h| + alpha) / (D_ssd/N) = (|LS_v| - (N-1) alpha) / (D_ssd/N - 1)
//!  =>  alpha = |LS_h| / (D_ssd - 1)                                (5.4)
//! ```
//!
//! and every core's utilisation grows by `1 / (D_ssd - 1)` (Table 9).
//!
//! # Selective redirection
//!
//! LBAs move in whole units, so each helper receives `floor(alpha)` LBAs. The
//! victim's LBAs `l_j = j * N + v` are grouped into redirection units of
//! `D_ssd - 1` consecutive `j`; unit `p` covers
//! `(D_ssd - 1) p <= j < (D_ssd - 1)(p + 1)`. In every *complete* unit the
//! LBA with `k = j % (D_ssd - 1)` goes to `core_k` when `k < N` and `k != v`;
//! all other LBAs stay. A trailing partial unit redirects nothing, so exactly
//! `(N - 1) * floor(alpha)` LBAs move.
//!
//! A redirected LBA lands in the helper's hidden space `LS_redirect`. Hidden
//! LBAs continue the global numbering past `|LS|` with the same striping:
//! the LBA redirected from unit `p` to `core_k` is `_(|LS| + p N + k)`, which
//! again belongs to `core_k` (`(|LS| + p N + k) % N == k`) and is slot `p` of
//! that core's `LS_redirect`. In Fig. 30 (`N = 4`, `D_ssd = 16`, `|LS| = 60`,
//! victim `core_3`) LBAs 3, 7 and 11 become `_60`, `_61` and `_62` on cores 0,
//! 1 and 2.
//!
//! Data already written to a redirected LBA sits on the victim core, so the
//! redirected LBAs are reported to the host as *fake failures* alongside the
//! real failed LBAs; the host rebuilds them and the master core writes them to
//! their new home.
//!
//! The formulas assume one failed die and equal cores before it (the paper's
//! footnote 4); repeated failures reuse Eq. 5.4 as an approximation. The
//! exact utilisations of Tables 8 and 9 are evaluation arithmetic and live on
//! the host side (`sim_harness::reparo_space`).

use crate::error::{Error, OrRare};

/// Shape of the SSD before the die failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SsdShape {
    /// Flash cores `N` (at least 2: one victim and one helper).
    pub cores: u32,
    /// Dies `D_ssd` in the SSD, a multiple of `cores` with at least two per core.
    pub dies: u32,
    /// Host-visible logical space `|LS|` in LBAs, a multiple of `cores`.
    pub logical: u64,
    /// Physical capacity of one die, in LBAs (for the utilisations only).
    pub die_capacity: u64,
}

/// Where the master core sends a host LBA once CDR redirection is active.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// The LBA keeps its static home, `core`.
    Stays {
        /// `lba % N`.
        core: u32,
    },
    /// The LBA moved into a helper's hidden space.
    Redirected(HiddenLba),
}

/// A slot of a helper core's hidden `LS_redirect` space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HiddenLba {
    /// The helper core holding it.
    pub core: u32,
    /// Index in that core's `LS_redirect` (the redirection unit it came from).
    pub slot: u64,
    /// Global hidden number, `|LS| + slot * N + core` (`_60` in Fig. 30).
    pub lba: u64,
}

/// Logical space adjustment and LBA redirection of `reparo_CDR` for one die
/// failure on core `victim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cdr {
    shape: SsdShape,
    victim: u32,
    /// `|LS| / N`.
    per_core: u64,
    /// `D_ssd - 1`, LBAs of the victim per redirection unit.
    unit: u64,
    /// `floor(alpha)`: complete redirection units, LBAs each helper receives.
    units: u64,
}

impl Cdr {
    /// Checks `shape` and `victim` and precomputes the adjustment.
    pub fn new(shape: SsdShape, victim: u32) -> Result<Cdr, Error> {
        let n = u64::from(shape.cores);
        let d = u64::from(shape.dies);
        if shape.cores < 2 {
            return Err(Error::InvalidConfig(
                &"reparo: need at least two flash cores",
            ));
        }
        if victim >= shape.cores {
            return Err(Error::InvalidConfig(&"reparo: victim core out of range"));
        }
        d.checked_div(n)
            .filter(|&x| x >= 2 && d.checked_rem(n) == Some(0))
            .or_rare(Error::InvalidConfig(
                &"reparo: dies must be a multiple of cores, at least two per core",
            ))?;
        let per_core = shape
            .logical
            .checked_div(n)
            .filter(|_| shape.logical.checked_rem(n) == Some(0))
            .or_rare(Error::InvalidConfig(
                &"reparo: logical space must be a multiple of cores",
            ))?;
        if shape.die_capacity == 0 {
            return Err(Error::InvalidConfig(&"reparo: die capacity is zero"));
        }
        let unit = d.saturating_sub(1);
        let units = per_core.checked_div(unit).unwrap_or(0);
        // The hidden numbering must fit: |LS| + units * N.
        units
            .checked_mul(n)
            .and_then(|h| h.checked_add(shape.logical))
            .and_then(|_| d.checked_mul(shape.die_capacity))
            .or_rare(Error::InvalidConfig(&"reparo: sizes overflow"))?;
        Ok(Cdr {
            shape,
            victim,
            per_core,
            unit,
            units,
        })
    }

    /// The shape this adjustment was computed for.
    pub fn shape(&self) -> SsdShape {
        self.shape
    }

    /// The core that lost a die.
    pub fn victim(&self) -> u32 {
        self.victim
    }

    /// `|LS_i|`, every core's logical space before the failure.
    pub fn logical_per_core(&self) -> u64 {
        self.per_core
    }

    /// `floor(alpha)`: LBAs each helper receives, and the number of complete
    /// redirection units of the victim.
    pub fn alpha_floor(&self) -> u64 {
        self.units
    }

    /// A helper's logical space after the adjustment, `|LS_h| + floor(alpha)`.
    pub fn helper_logical_after(&self) -> u64 {
        self.per_core.wrapping_add(self.units)
    }

    /// The victim's logical space after the adjustment,
    /// `|LS_v| - (N - 1) floor(alpha)`.
    pub fn victim_logical_after(&self) -> u64 {
        self.per_core.saturating_sub(self.fake_failure_count())
    }

    /// LBAs redirected away from the victim (and reported as fake failures),
    /// `(N - 1) floor(alpha)`.
    pub fn fake_failure_count(&self) -> u64 {
        self.units
            .saturating_mul(u64::from(self.shape.cores.saturating_sub(1)))
    }

    /// Where host LBA `lba` goes once redirection is active; `None` beyond
    /// `|LS|`.
    pub fn route(&self, lba: u64) -> Option<Route> {
        if lba >= self.shape.logical {
            return None;
        }
        let n = u64::from(self.shape.cores);
        let core = u32::try_from(lba.checked_rem(n)?).ok()?;
        if core != self.victim {
            return Some(Route::Stays { core });
        }
        let j = lba.checked_div(n)?;
        let p = j.checked_div(self.unit)?;
        let k = j.checked_rem(self.unit)?;
        if p >= self.units || k >= n || k == u64::from(self.victim) {
            return Some(Route::Stays { core });
        }
        let hidden = self.hidden(p, k)?;
        Some(Route::Redirected(hidden))
    }

    /// The hidden slot of unit `p` on helper `k`.
    fn hidden(&self, p: u64, k: u64) -> Option<HiddenLba> {
        let n = u64::from(self.shape.cores);
        Some(HiddenLba {
            core: u32::try_from(k).ok()?,
            slot: p,
            lba: p
                .checked_mul(n)?
                .checked_add(k)?
                .checked_add(self.shape.logical)?,
        })
    }

    /// The victim LBA of unit `p` redirected to helper `k`.
    fn redirected_lba(&self, p: u64, k: u64) -> Option<u64> {
        let j = p.checked_mul(self.unit)?.checked_add(k)?;
        j.checked_mul(u64::from(self.shape.cores))?
            .checked_add(u64::from(self.victim))
    }

    /// Inverse of [`Cdr::route`]: the host LBA stored at global hidden number
    /// `hidden`, or `None` when that slot is unused (the victim's own column,
    /// or beyond the last unit) or `hidden` is not a hidden LBA.
    pub fn origin(&self, hidden: u64) -> Option<u64> {
        let n = u64::from(self.shape.cores);
        let off = hidden.checked_sub(self.shape.logical)?;
        let p = off.checked_div(n)?;
        let k = off.checked_rem(n)?;
        if p >= self.units || k == u64::from(self.victim) {
            return None;
        }
        self.redirected_lba(p, k)
    }

    /// Whether `lba` is a fake failure: readable on the victim but redirected,
    /// so the host must rebuild it and write it again.
    pub fn is_fake_failure(&self, lba: u64) -> bool {
        matches!(self.route(lba), Some(Route::Redirected(_)))
    }

    /// Every fake failure in increasing LBA order (no allocation).
    pub fn fake_failures(&self) -> impl Iterator<Item = u64> + '_ {
        let n = u64::from(self.shape.cores);
        let v = u64::from(self.victim);
        (0..self.units).flat_map(move |p| {
            (0..n)
                .filter(move |&k| k != v)
                .filter_map(move |k| self.redirected_lba(p, k))
        })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::BTreeSet;
    use std::vec::Vec;

    fn fig30() -> Cdr {
        let shape = SsdShape {
            cores: 4,
            dies: 16,
            logical: 60,
            die_capacity: 6,
        };
        Cdr::new(shape, 3).unwrap()
    }

    #[test]
    fn figure_30() {
        let c = fig30();
        assert_eq!(c.logical_per_core(), 15);
        assert_eq!(c.alpha_floor(), 1);
        assert_eq!(c.helper_logical_after(), 16);
        assert_eq!(c.victim_logical_after(), 12);
        for (lba, core, hidden) in [(3, 0, 60), (7, 1, 61), (11, 2, 62)] {
            let h = HiddenLba {
                core,
                slot: 0,
                lba: hidden,
            };
            assert_eq!(c.route(lba), Some(Route::Redirected(h)));
            assert_eq!(c.origin(hidden), Some(lba));
        }
        assert_eq!(c.origin(63), None);
        assert_eq!(c.route(15), Some(Route::Stays { core: 3 }));
        assert_eq!(c.route(59), Some(Route::Stays { core: 3 }));
        assert_eq!(c.route(5), Some(Route::Stays { core: 1 }));
        assert_eq!(c.route(60), None);
        assert_eq!(c.fake_failures().collect::<Vec<_>>(), [3, 7, 11]);
        assert_eq!(c.fake_failure_count(), 3);
        assert!(c.is_fake_failure(7) && !c.is_fake_failure(19));
    }

    #[test]
    fn rejects_bad_shapes() {
        let ok = fig30().shape();
        assert!(Cdr::new(ok, 4).is_err());
        assert!(Cdr::new(SsdShape { cores: 1, ..ok }, 0).is_err());
        assert!(Cdr::new(SsdShape { dies: 17, ..ok }, 0).is_err());
        assert!(Cdr::new(SsdShape { dies: 4, ..ok }, 0).is_err());
        assert!(Cdr::new(SsdShape { logical: 61, ..ok }, 0).is_err());
        assert!(Cdr::new(
            SsdShape {
                die_capacity: 0,
                ..ok
            },
            0
        )
        .is_err());
        let huge = SsdShape {
            logical: u64::MAX - 3,
            ..ok
        };
        assert!(Cdr::new(huge, 0).is_err());
    }

    proptest::proptest! {
        /// Redirection is a bijection between the redirected LBAs and the
        /// used hidden slots, gives each helper floor(alpha) slots, and leaves
        /// every other LBA at its static home.
        #[test]
        fn redirection_is_a_bijection(
            cores in 2u32..9,
            per_core_dies in 2u32..9,
            per_core in 0u64..300,
            victim_pick in 0u32..8,
            cap in 1u64..100,
        ) {
            let victim = victim_pick % cores;
            let shape = SsdShape {
                cores,
                dies: cores * per_core_dies,
                logical: per_core * u64::from(cores),
                die_capacity: cap,
            };
            let c = Cdr::new(shape, victim).unwrap();
            let n = u64::from(cores);
            let mut hidden = BTreeSet::new();
            let mut redirected = Vec::new();
            let mut per_helper = std::vec![0u64; cores as usize];
            for lba in 0..shape.logical {
                match c.route(lba).unwrap() {
                    Route::Stays { core } => {
                        proptest::prop_assert_eq!(u64::from(core), lba % n);
                    }
                    Route::Redirected(h) => {
                        proptest::prop_assert_eq!(lba % n, u64::from(victim));
                        proptest::prop_assert!(h.core != victim && h.core < cores);
                        proptest::prop_assert!(h.lba >= shape.logical);
                        proptest::prop_assert_eq!(h.lba % n, u64::from(h.core));
                        proptest::prop_assert_eq!(h.slot, (h.lba - shape.logical) / n);
                        proptest::prop_assert!(h.slot < c.alpha_floor());
                        proptest::prop_assert!(hidden.insert(h.lba), "slot used twice");
                        proptest::prop_assert_eq!(c.origin(h.lba), Some(lba));
                        per_helper[h.core as usize] += 1;
                        redirected.push(lba);
                    }
                }
            }
            proptest::prop_assert_eq!(redirected.len() as u64, c.fake_failure_count());
            proptest::prop_assert_eq!(c.fake_failures().collect::<Vec<_>>(), redirected);
            for (core, &got) in per_helper.iter().enumerate() {
                let want = if core as u32 == victim { 0 } else { c.alpha_floor() };
                proptest::prop_assert_eq!(got, want);
            }
            // Every hidden number maps back only onto a redirected LBA.
            for h in shape.logical..shape.logical + n * (c.alpha_floor() + 1) {
                proptest::prop_assert_eq!(c.origin(h).is_some(), hidden.contains(&h));
            }
            for lba in 0..shape.logical {
                proptest::prop_assert_eq!(c.origin(lba), None);
            }
        }
    }
}

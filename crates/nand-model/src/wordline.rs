//! Wordline endurance model of the 3D TLC chip of seed 001 §3.1-3.2, the
//! medium side of GuardedErase.
//!
//! A block has 48 layers of 4 wordlines (192 wordlines, 3 pages each). Each
//! wordline has its own normal-erase endurance ([`WlProfile`]): channel holes
//! are widest and most irregular at the ends of the stack, so the worst
//! wordlines sit in the top layers (layer 0 holds wordlines 0-3) and the
//! bottom layer, the best in the middle.
//!
//! Wear is counted per wordline ([`WlBlockState`]): a normal erase adds the
//! wordline's relative stress `s` (worst endurance over its own endurance, so
//! 1.0 for the weakest wordline); a low-stress erase adds `s x c`, with `c`
//! the low-stress coefficient (0.35). A low-stress erase leaves its wordlines
//! unusable until the next erase, and the block reaches end of life when a
//! usable wordline has worn past its endurance. A 10K-cycle wordline erased
//! low-stress 20 % of the time thus lasts 10K / (0.8 + 0.35 x 0.2) = 11.49K
//! cycles.
//!
//! The per-block state is fixed-size and heap-free, for the no_std build.

use crate::gerase_modes::{derive_modes, GEraseMode};

/// Layers of the paper's 48-layer chip.
pub const LAYERS: usize = 48;
/// Wordlines per layer.
pub const WLS_PER_LAYER: usize = 4;
/// Wordlines per block (48 x 4).
pub const WLS: usize = LAYERS * WLS_PER_LAYER;
/// Pages per wordline (TLC: LSB, CSB, MSB).
pub const PAGES_PER_WL: usize = 3;
/// Wordline groups used by the gE(n) derivation: one per layer, 4 wordlines
/// each, as in seed 001 Table 3.
pub const WGS: usize = LAYERS;
/// Relative stress of a low-stress erase over a normal one that seed 001
/// assumes for every wordline (measured 0.31-0.34 on weak wordlines).
pub const LOW_STRESS_COEFFICIENT: f64 = 0.35;

/// Table 3 groups that the profile takes as measured: (layer, endurance).
const TABLE3_LAYERS: [(usize, f64); 8] = [
    (0, 10_000.0),
    (1, 11_000.0),
    (2, 12_000.0),
    (3, 12_800.0),
    (44, 12_300.0),
    (45, 11_500.0),
    (46, 10_700.0),
    (47, 10_000.0),
];
/// Endurance the middle layers approach. With fresh BER proportional to
/// per-cycle stress it gives the ~60 % fresh BER spread of Figure 3(a).
const MIDDLE_ENDURANCE: f64 = 16_000.0;
/// Per-layer decay of the endurance deficit below the middle, from the top
/// (Table 3's WG 0-3 deficits 6, 5, 4, 3.2K shrink by about 0.8 a layer)...
const TOP_DECAY: f64 = 0.8;
/// ...and from the bottom (WG 47-44: 6, 5.3, 4.5, 3.7K, about 0.85).
const BOTTOM_DECAY: f64 = 0.85;

/// Why a wordline operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WlError {
    /// Wordline index outside the block.
    BadWordline(u16),
    /// The wordline was erased in low-stress mode and holds no data until the
    /// next erase.
    LowStressErased(u16),
}

/// Per-wordline normal-erase endurance and low-stress coefficient of a block
/// design; shared by all blocks' [`WlBlockState`].
#[derive(Clone, Debug, PartialEq)]
pub struct WlProfile {
    /// Normal-erase endurance of each wordline (max P/E cycles).
    pub endurance: [f64; WLS],
    /// Relative stress of a low-stress erase of each wordline.
    pub coefficient: [f64; WLS],
}

/// `x` to the power `n` with core arithmetic only (no_std has no `powi`).
fn pow(x: f64, n: usize) -> f64 {
    (0..n).fold(1.0, |acc, _| acc * x)
}

impl WlProfile {
    /// The paper's chip: Table 3's visible groups as given, the layers between
    /// rising smoothly toward 16K in the middle, the same endurance for the
    /// 4 wordlines of a layer and coefficient 0.35 everywhere.
    pub fn paper_chip() -> Self {
        let mut endurance = [0.0; WLS];
        for (wl, e) in endurance.iter_mut().enumerate() {
            let layer = wl / WLS_PER_LAYER;
            *e = match TABLE3_LAYERS.iter().find(|&&(l, _)| l == layer) {
                Some(&(_, measured)) => measured,
                None => {
                    let (top, bottom) = (TABLE3_LAYERS[3], TABLE3_LAYERS[4]);
                    MIDDLE_ENDURANCE
                        - (MIDDLE_ENDURANCE - top.1) * pow(TOP_DECAY, layer - top.0)
                        - (MIDDLE_ENDURANCE - bottom.1) * pow(BOTTOM_DECAY, bottom.0 - layer)
                }
            };
        }
        Self {
            endurance,
            coefficient: [LOW_STRESS_COEFFICIENT; WLS],
        }
    }

    /// Endurance of the weakest wordline: the block's life under normal
    /// erases only, and the unit of accumulated stress.
    pub fn worst(&self) -> f64 {
        self.endurance.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Normal-erase stress of `wl` relative to the weakest wordline (1.0 for
    /// the weakest, below 1 for stronger ones).
    pub fn relative_stress(&self, wl: usize) -> f64 {
        self.worst() / self.endurance[wl]
    }

    /// BER of `wl` at 0 P/E over the best wordline's, taking fresh BER as
    /// proportional to per-cycle stress (1.0 to about 1.6 on the paper chip).
    pub fn fresh_ber(&self, wl: usize) -> f64 {
        let best = self.endurance.iter().copied().fold(0.0, f64::max);
        best / self.endurance[wl]
    }

    /// Endurance of each group of 4 wordlines: its weakest wordline's.
    pub fn group_endurance(&self) -> [f64; WGS] {
        let mut groups = [f64::INFINITY; WGS];
        for (wl, &e) in self.endurance.iter().enumerate() {
            let g = &mut groups[wl / WLS_PER_LAYER];
            *g = g.min(e);
        }
        groups
    }

    /// The gE(0)..gE(9) modes derived from this profile (see
    /// [`derive_modes`]); the coefficient is the weakest wordline's. `None`
    /// if the derivation finds no preferred pair for some mode.
    pub fn gerase_modes(&self) -> Option<[GEraseMode; 10]> {
        let weakest = (0..WLS).fold(0, |w, k| {
            if self.endurance[k] < self.endurance[w] {
                k
            } else {
                w
            }
        });
        derive_modes(
            &self.group_endurance(),
            WLS_PER_LAYER as f64,
            self.coefficient[weakest],
        )
    }
}

/// One block's per-wordline wear and low-stress state. Fixed-size (192
/// wordlines) so firmware and the no_std build can hold one per block.
#[derive(Clone, Debug)]
pub struct WlBlockState<'p> {
    profile: &'p WlProfile,
    /// Accumulated stress per wordline, in normal erases of the weakest one.
    stress: [f64; WLS],
    /// Bit per wordline: erased in low-stress mode by the last erase.
    low_stress: [u64; WLS.div_ceil(64)],
    erases: u32,
}

impl<'p> WlBlockState<'p> {
    /// A fresh block of design `profile`: no wear, every wordline usable.
    pub fn new(profile: &'p WlProfile) -> Self {
        Self {
            profile,
            stress: [0.0; WLS],
            low_stress: [0; WLS.div_ceil(64)],
            erases: 0,
        }
    }

    /// Erase the block, `low_stress_wls` in low-stress mode (they become
    /// unusable until the next erase) and the rest normally. Refuses the
    /// whole erase, changing nothing, if an index is outside the block.
    pub fn erase(&mut self, low_stress_wls: &[u16]) -> Result<(), WlError> {
        if let Some(&bad) = low_stress_wls.iter().find(|&&wl| usize::from(wl) >= WLS) {
            return Err(WlError::BadWordline(bad));
        }
        self.low_stress = [0; WLS.div_ceil(64)];
        for &wl in low_stress_wls {
            self.low_stress[usize::from(wl) / 64] |= 1 << (wl % 64);
        }
        for wl in 0..WLS {
            let scale = if self.is_low_stress(wl) {
                self.profile.coefficient[wl]
            } else {
                1.0
            };
            self.stress[wl] += self.profile.relative_stress(wl) * scale;
        }
        self.erases = self.erases.saturating_add(1);
        Ok(())
    }

    fn is_low_stress(&self, wl: usize) -> bool {
        self.low_stress[wl / 64] & (1 << (wl % 64)) != 0
    }

    /// Whether `wl` can be programmed in this cycle: inside the block and not
    /// low-stress erased by the last erase.
    pub fn usable(&self, wl: u16) -> bool {
        usize::from(wl) < WLS && !self.is_low_stress(usize::from(wl))
    }

    /// Check a program of `page` (3 per wordline): refused on a wordline the
    /// last erase left unusable.
    pub fn program(&self, page: u32) -> Result<(), WlError> {
        let wl = u16::try_from(page / PAGES_PER_WL as u32).unwrap_or(u16::MAX);
        if usize::from(wl) >= WLS {
            Err(WlError::BadWordline(wl))
        } else if self.is_low_stress(usize::from(wl)) {
            Err(WlError::LowStressErased(wl))
        } else {
            Ok(())
        }
    }

    /// Accumulated stress of `wl` over its endurance: 1.0 at its limit.
    pub fn wear_fraction(&self, wl: u16) -> f64 {
        self.stress[usize::from(wl)] / self.profile.worst()
    }

    /// The block is worn out: some usable wordline is past its endurance.
    /// A worn wordline left unusable by a low-stress erase ends the block's
    /// life at the next erase that makes it usable again.
    pub fn end_of_life(&self) -> bool {
        (0..WLS as u16).any(|wl| self.usable(wl) && self.wear_fraction(wl) > 1.0)
    }

    /// Erases so far.
    pub fn erases(&self) -> u32 {
        self.erases
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Erase cycles until end of life, erasing `wls` low-stress on every
    /// erase whose index modulo `period` is in `low_slots`.
    fn lifetime(profile: &WlProfile, wls: &[u16], period: u32, low_slots: u32) -> u32 {
        let mut block = WlBlockState::new(profile);
        loop {
            let low = block.erases() % period < low_slots;
            block.erase(if low { wls } else { &[] }).unwrap();
            if block.end_of_life() {
                return block.erases() - 1;
            }
        }
    }

    #[test]
    fn profile_matches_table3_and_the_fresh_ber_spread() {
        let p = WlProfile::paper_chip();
        let g = p.group_endurance();
        for (layer, e) in TABLE3_LAYERS {
            assert_eq!(g[layer], e, "WG {layer}");
        }
        assert_eq!(p.worst(), 10_000.0);
        // Worst at the ends, best in the middle layers, smooth in between.
        let best = (0..WGS).fold(0, |b, k| if g[k] > g[b] { k } else { b });
        assert!((16..32).contains(&best), "best WG {best}");
        assert!(g[..=best].windows(2).all(|w| w[0] < w[1]));
        assert!(g[best..].windows(2).all(|w| w[0] > w[1]));
        let spread = (0..WLS).map(|wl| p.fresh_ber(wl)).fold(0.0, f64::max);
        assert!((1.55..1.65).contains(&spread), "{spread}");
        assert_eq!(p.relative_stress(0), 1.0);
        assert!((p.relative_stress(8) - 0.83).abs() < 0.005);
    }

    /// Seed 001 Table 2: protected wordlines, relief ratio (%), capacity
    /// reduction (%) and normalised max P/E of gE(1)..gE(9).
    const TABLE2: [(u32, f64, f64, f64); 9] = [
        (8, 25.0, 1.04, 1.19),
        (12, 33.0, 2.08, 1.26),
        (16, 38.0, 3.13, 1.30),
        (20, 40.0, 4.17, 1.33),
        (24, 42.0, 5.21, 1.37),
        (24, 50.0, 6.25, 1.39),
        (24, 50.0, 7.29, 1.41),
        (28, 50.0, 8.33, 1.43),
        (32, 50.0, 9.38, 1.45),
    ];

    #[test]
    fn gerase_modes_derived_from_the_profile_against_table2() {
        let modes = WlProfile::paper_chip().gerase_modes().unwrap();
        assert_eq!(modes[0].protected_wls, 0);
        assert_eq!(modes[0].max_pe_gain, 1.0);
        println!("mode   WLs (T2)   relief % (T2)   capacity % (T2)   max P/E (T2, diff)");
        for (m, t) in modes[1..].iter().zip(TABLE2) {
            // Table 2 rounds half up (3.125 % is 3.13).
            let pct = (m.capacity_reduction * 10_000.0).round() / 100.0;
            println!(
                "gE({}) {:>4} ({:>2})   {:>5.1} ({:>2})      {:>5.2} ({:>4.2})      {:.3} ({:.2}, {:+.3})",
                m.n,
                m.protected_wls,
                t.0,
                m.relief_ratio * 100.0,
                t.1,
                pct,
                t.2,
                m.max_pe_gain,
                t.3,
                m.max_pe_gain - t.3
            );
            assert_eq!(pct, t.2, "gE({}) capacity", m.n);
            assert!(
                (m.relief_ratio * f64::from(m.protected_wls) - 2.0 * f64::from(m.n)).abs() < 1e-9
            );
        }
        assert_eq!(modes[1].protected_wls, 8);
        assert_eq!(modes[1].relief_ratio, 0.25);
        for w in modes.windows(2) {
            assert!(w[0].protected_wls <= w[1].protected_wls, "{w:?}");
            assert!(w[0].max_pe_gain <= w[1].max_pe_gain, "{w:?}");
        }
    }

    #[test]
    fn ten_k_wordline_low_stress_20_percent_lasts_11_49k() {
        let mut p = WlProfile::paper_chip();
        p.endurance = [30_000.0; WLS];
        p.endurance[5] = 10_000.0;
        // One erase in five (20 %) is low-stress for wordline 5.
        let life = lifetime(&p, &[5], 5, 1);
        let expected = 10_000.0 / (0.8 + 0.35 * 0.2);
        assert!((f64::from(life) - expected).abs() <= 2.0, "{life}");
        assert_eq!((f64::from(life) / 10.0).round() / 100.0, 11.49);
    }

    #[test]
    fn paper_chip_lasts_its_worst_wordline_under_normal_erases() {
        let p = WlProfile::paper_chip();
        assert_eq!(lifetime(&p, &[], 1, 0), 10_000);
        let b = WlBlockState::new(&p);
        assert!(!b.end_of_life());
        assert_eq!(b.wear_fraction(0), 0.0);
    }

    #[test]
    fn low_stress_wordlines_refuse_programs_until_the_next_erase() {
        let p = WlProfile::paper_chip();
        let mut b = WlBlockState::new(&p);
        b.erase(&[0, 191]).unwrap();
        assert!(!b.usable(0) && !b.usable(191) && b.usable(1));
        assert_eq!(b.program(0), Err(WlError::LowStressErased(0)));
        assert_eq!(b.program(2), Err(WlError::LowStressErased(0)));
        assert_eq!(b.program(3), Ok(()));
        assert_eq!(b.program(573), Err(WlError::LowStressErased(191)));
        assert_eq!(b.program(576), Err(WlError::BadWordline(192)));
        // Stress: 0.35 for the low-stress wordlines, their relative stress
        // for the others (wordline 4 sits in WG 1, 11K).
        assert!((b.wear_fraction(0) - 0.35 / 10_000.0).abs() < 1e-15);
        assert!((b.wear_fraction(4) - 1.0 / 11_000.0).abs() < 1e-15);
        b.erase(&[]).unwrap();
        assert!(b.usable(0) && b.usable(191));
        // A bad index refuses the whole erase.
        assert_eq!(b.erase(&[3, 192]), Err(WlError::BadWordline(192)));
        assert_eq!(b.erases(), 2);
        assert!(b.usable(3));
    }

    #[test]
    fn a_worn_wordline_ends_life_only_when_usable() {
        let p = WlProfile::paper_chip();
        let mut b = WlBlockState::new(&p);
        for _ in 0..10_000 {
            b.erase(&[]).unwrap();
        }
        assert!(!b.end_of_life());
        b.erase(&[0, 1, 2, 3, 188, 189, 190, 191]).unwrap();
        assert!(b.wear_fraction(0) > 1.0);
        assert!(!b.end_of_life());
        b.erase(&[]).unwrap();
        assert!(b.end_of_life());
    }
}

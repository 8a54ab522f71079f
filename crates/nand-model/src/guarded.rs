//! The wordline endurance model of [`crate::wordline`] wired into a
//! simulated medium: per-wordline wear and bit errors, GuardedErase's
//! low-stress erase, and blocks that wear out wordline by wordline.
//!
//! [`GuardedMedium`] wraps a [`SimMedium`] or a [`FullDataMedium`] (which
//! still enforce every other rule) and keeps one [`WlBlockState`] per block
//! of the paper's 192-wordline TLC chip (3 pages per wordline):
//!
//! * **Erase.** Every erase adds each wordline's stress; a
//!   [`Nand::guarded_erase`] adds the low-stress share for the wordlines of
//!   its set and leaves them unusable until the next erase.
//! * **Program.** A program of an unusable wordline gives `ProgramOrder`; a
//!   program may jump forward over pages, which stay erased (the core skips
//!   the wordlines it protected or retired). A program of
//!   a wordline worn past its endurance fails with `ProgramFailed`: the
//!   block has reached its end of life.
//! * **Reads** report bit errors from the wordline's wear instead of the
//!   block's P/E count: `limit x (0.3 x fresh + 0.6 x wear)`, `fresh` the
//!   wordline's fresh BER over the worst one's (0.63..1), `wear` its
//!   accumulated stress over its endurance (at most 1 for any wordline that
//!   holds data), with ±5 % read noise, so reads stay correctable and the
//!   weak-wordline detector sees weak wordlines from the first cycle.
//!
//! Endurance is the profile's times [`WlModelConfig::endurance_scale`] (so a
//! whole life takes minutes), times a per-block, per-wordline jitter
//! (±[`WlModelConfig::jitter`]) so that blocks differ and the detector has
//! something to find.

use std::sync::OnceLock;

use firmware_core::{
    BlockId, Error, Geometry, Nand, NandError, NandResult, Ppn, Spare, UnitMask, WlSet,
};

use crate::full::FullDataMedium;
use crate::hash::{mix, unit21};
use crate::medium::SimMedium;
use crate::wordline::{WlBlockState, WlProfile, PAGES_PER_WL, WLS};

/// Share of the ECC limit a fresh wordline's errors take at the worst
/// wordline's fresh BER.
const FRESH_SHARE: f64 = 0.3;
/// Share of the ECC limit that wear adds at the end of a wordline's life.
const WEAR_SHARE: f64 = 0.6;
/// Relative read noise of the wordline bit-error model.
const READ_NOISE: f64 = 0.05;
const SALT_JITTER: u64 = 0x6E77_1177;
const SALT_NOISE: u64 = 0x6E77_2288;

/// Settings of the wordline model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WlModelConfig {
    /// Endurance multiplier (1.0 = the paper's 10K-cycle weakest wordline).
    pub endurance_scale: f64,
    /// Per-block, per-wordline endurance jitter (0.05 = ±5 %).
    pub jitter: f64,
    /// ECC limit in bit errors.
    pub ecc_limit: u16,
    /// Seed of the jitter and read noise.
    pub seed: u64,
}

/// Counters of the wordline model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WlStats {
    /// Wordlines erased in low-stress mode.
    pub low_stress_wls: u64,
    /// Programs refused because their wordline had worn out.
    pub worn_programs: u64,
    /// Erases refused because a wordline due to hold data had worn out.
    pub worn_blocks: u64,
}

/// A medium [`GuardedMedium`] can wrap: gives access to the stamp medium
/// that holds the program point and the fault hooks.
pub trait WlMedium: Nand {
    /// The stamp medium underneath.
    fn sim(&self) -> &SimMedium;
    /// The stamp medium underneath, mutably.
    fn sim_mut(&mut self) -> &mut SimMedium;
}

impl WlMedium for SimMedium {
    fn sim(&self) -> &SimMedium {
        self
    }
    fn sim_mut(&mut self) -> &mut SimMedium {
        self
    }
}

impl<const B: usize> WlMedium for FullDataMedium<B> {
    fn sim(&self) -> &SimMedium {
        self.inner()
    }
    fn sim_mut(&mut self) -> &mut SimMedium {
        self.inner_mut()
    }
}

/// The paper's chip profile, shared by every medium.
fn paper_profile() -> &'static WlProfile {
    static PROFILE: OnceLock<WlProfile> = OnceLock::new();
    PROFILE.get_or_init(WlProfile::paper_chip)
}

/// A medium with per-wordline wear (see the module documentation).
pub struct GuardedMedium<N> {
    inner: N,
    cfg: WlModelConfig,
    profile: &'static WlProfile,
    blocks: Vec<WlBlockState<'static>>,
    ppb: u32,
    samples: u64,
    stats: WlStats,
}

impl<N: WlMedium> GuardedMedium<N> {
    /// Wraps `inner`, built for `geo`, whose blocks must have 192 wordlines
    /// of 3 pages.
    pub fn new(inner: N, geo: &Geometry, cfg: WlModelConfig) -> Result<Self, Error> {
        if geo.pages_per_block as usize != WLS * PAGES_PER_WL
            || usize::from(geo.pages_per_wordline) != PAGES_PER_WL
        {
            return Err(Error::InvalidConfig(
                &"wordline model: blocks of 192 wordlines x 3 pages",
            ));
        }
        let scale_ok = cfg.endurance_scale.is_finite() && cfg.endurance_scale > 0.0;
        if !(scale_ok && (0.0..0.5).contains(&cfg.jitter)) {
            return Err(Error::InvalidConfig(
                &"wordline model: endurance scale > 0, jitter in [0, 0.5)",
            ));
        }
        let profile = paper_profile();
        Ok(GuardedMedium {
            inner,
            cfg,
            profile,
            blocks: vec![WlBlockState::new(profile); geo.total_blocks() as usize],
            ppb: geo.pages_per_block,
            samples: 0,
            stats: WlStats::default(),
        })
    }

    /// The wrapped medium.
    pub fn inner(&self) -> &N {
        &self.inner
    }

    /// Counters of the wordline model.
    pub fn wl_stats(&self) -> WlStats {
        self.stats
    }

    /// Endurance multiplier of wordline `wl` of block `b` (1 ± jitter).
    fn jitter(&self, b: u32, wl: u16) -> f64 {
        let h = mix(
            self.cfg.seed ^ SALT_JITTER,
            (u64::from(b) << 16) | u64::from(wl),
        );
        1.0 + self.cfg.jitter * (2.0 * f64::from(unit21(h, 0)) - 1.0)
    }

    /// Wear of wordline `wl` of block `b`: stress over its (scaled,
    /// jittered) endurance; above 1 the wordline is worn out.
    pub fn wear(&self, b: u32, wl: u16) -> f64 {
        self.blocks
            .get(b as usize)
            .map_or(0.0, |s| s.wear_fraction(wl))
            / self.cfg.endurance_scale
            / self.jitter(b, wl)
    }

    /// Mean bit errors of a read of wordline `wl` of block `b`.
    pub fn mean_errors(&self, b: u32, wl: u16) -> f64 {
        let worst = self.profile.fresh_ber(0).max(1.0);
        let fresh = self.profile.fresh_ber(usize::from(wl)) / worst / self.jitter(b, wl);
        f64::from(self.cfg.ecc_limit)
            * (FRESH_SHARE * fresh + WEAR_SHARE * self.wear(b, wl).min(1.2))
    }

    fn locate(&self, page: Ppn) -> (u32, u32, u16) {
        let b = page.0 / self.ppb;
        let pib = page.0 % self.ppb;
        (b, pib, (pib / PAGES_PER_WL as u32) as u16)
    }

    fn usable(&self, b: u32, wl: u16) -> bool {
        self.blocks.get(b as usize).is_some_and(|s| s.usable(wl))
    }

    /// Checks a program (or copyback destination) of `page` against the
    /// wordline state: skips the program point over unusable wordlines and
    /// arms a program failure on a worn wordline.
    fn prepare_program(&mut self, page: Ppn) -> Result<(), NandError> {
        let (b, pib, wl) = self.locate(page);
        if b as usize >= self.blocks.len() {
            return Err(NandError::BadAddress);
        }
        if !self.usable(b, wl) {
            return Err(NandError::ProgramOrder);
        }
        let next = self
            .inner
            .sim()
            .block_status(BlockId(b))
            .map_or(pib, |s| s.next_page);
        if pib > next {
            self.inner.sim_mut().skip_to(BlockId(b), pib)?;
        }
        if self.wear(b, wl) > 1.0 {
            self.stats.worn_programs += 1;
            self.inner.sim_mut().fail_next_program(BlockId(b))?;
        }
        Ok(())
    }
}

impl<N: WlMedium> Nand for GuardedMedium<N> {
    type Unit = N::Unit;

    /// Reads through the inner medium, then reports the wordline model's bit
    /// errors.
    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [N::Unit]) -> NandResult {
        let mut r = self.inner.read(page, units, out)?;
        let (b, _, wl) = self.locate(page);
        self.samples = self.samples.wrapping_add(1);
        let h = mix(self.cfg.seed ^ SALT_NOISE, self.samples);
        let t = 2.0 * f64::from(unit21(h, 0)) - 1.0;
        let errs = self.mean_errors(b, wl) * (1.0 + READ_NOISE * t);
        if errs > f64::from(self.cfg.ecc_limit) {
            return Err(NandError::Uncorrectable);
        }
        r.bit_errors = errs as u16;
        Ok(r)
    }

    fn program(&mut self, page: Ppn, data: &[N::Unit], spare: &Spare) -> NandResult {
        self.prepare_program(page)?;
        self.inner.program(page, data, spare)
    }

    fn erase(&mut self, block: BlockId) -> NandResult {
        self.guarded_erase(block, &WlSet::EMPTY, &WlSet::EMPTY)
    }

    /// Adds the wordlines' erase stress (low-stress for those of
    /// `low_stress`, which stay unusable until the next erase); if a
    /// wordline that will hold data next cycle (neither low-stress nor
    /// `retired`) is then worn out, the erase fails and the block is bad.
    /// Otherwise erases through the inner medium.
    fn guarded_erase(&mut self, block: BlockId, low_stress: &WlSet, retired: &WlSet) -> NandResult {
        let b = block.0;
        let mut wls = [0u16; WLS];
        let mut n = 0;
        for wl in low_stress.iter().filter(|&wl| usize::from(wl) < WLS) {
            wls[n] = wl;
            n += 1;
        }
        let Some(before) = self.blocks.get(b as usize).cloned() else {
            return self.inner.erase(block);
        };
        let mut after = before.clone();
        after.erase(&wls[..n]).map_err(|_| NandError::BadAddress)?;
        self.blocks[b as usize] = after;
        let worn = (0..WLS as u16)
            .any(|wl| self.usable(b, wl) && !retired.contains(wl) && self.wear(b, wl) > 1.0);
        if worn {
            self.blocks[b as usize] = before;
            self.stats.worn_blocks += 1;
            self.inner.sim_mut().fail_next_erase(block)?;
            return self.inner.erase(block);
        }
        match self.inner.erase(block) {
            Ok(r) => {
                self.stats.low_stress_wls += n as u64;
                Ok(r)
            }
            Err(e) => {
                self.blocks[b as usize] = before;
                Err(e)
            }
        }
    }

    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        self.inner.program_meta(page, bytes, spare)
    }

    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        self.inner.read_meta(page, out)
    }

    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        self.prepare_program(dst)?;
        self.inner.copyback(src, dst, spare)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FaultConfig, ReliabilityConfig};
    use firmware_core::{Lpn, PageKind};

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            dies_per_channel: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 576,
            pages_per_wordline: 3,
            page_bytes: 4096,
            units_per_page: 1,
        }
    }

    fn medium(scale: f64) -> GuardedMedium<SimMedium> {
        let g = geo();
        let m = SimMedium::new(g, ReliabilityConfig::default(), FaultConfig::default()).unwrap();
        let cfg = WlModelConfig {
            endurance_scale: scale,
            jitter: 0.0,
            ecc_limit: 40,
            seed: 7,
        };
        GuardedMedium::new(m, &g, cfg).unwrap()
    }

    fn spare(seq: u64) -> Spare {
        let mut s = Spare {
            seq,
            kind: PageKind::Data,
            ..Spare::default()
        };
        s.units.insert(0);
        s.lpns[0] = Lpn(seq as u32);
        s
    }

    #[test]
    fn low_stress_wordlines_are_skipped_and_refused() {
        let mut m = medium(1.0);
        let mut set = WlSet::EMPTY;
        set.insert(0);
        set.insert(2);
        m.guarded_erase(BlockId(0), &set, &WlSet::EMPTY).unwrap();
        // Wordline 0 (pages 0-2) is protected: page 0 is refused...
        assert_eq!(
            m.program(Ppn(0), &[1], &spare(1)),
            Err(NandError::ProgramOrder)
        );
        // ...page 3 (wordline 1) may skip it, then wordline 2 is skipped.
        m.program(Ppn(3), &[1], &spare(1)).unwrap();
        m.program(Ppn(4), &[2], &spare(2)).unwrap();
        m.program(Ppn(5), &[3], &spare(3)).unwrap();
        m.program(Ppn(9), &[4], &spare(4)).unwrap();
        // Skipping usable wordlines forward is allowed (BPM retires them);
        // going back is not.
        m.program(Ppn(13), &[5], &spare(5)).unwrap();
        assert_eq!(
            m.program(Ppn(12), &[6], &spare(6)),
            Err(NandError::ProgramOrder)
        );
        let mut out = [0u64];
        let r = m.read(Ppn(9), UnitMask(1), &mut out).unwrap();
        assert_eq!(out[0], 4);
        assert!(r.bit_errors < 40);
        assert_eq!(m.wl_stats().low_stress_wls, 2);
        // The next normal erase makes wordline 0 usable again.
        m.erase(BlockId(0)).unwrap();
        m.program(Ppn(0), &[1], &spare(6)).unwrap();
    }

    #[test]
    fn worn_wordline_fails_its_program_and_low_stress_delays_it() {
        // Endurance 10K x 0.001 = 10 cycles for the weakest wordline.
        let mut m = medium(0.001);
        for _ in 0..10 {
            m.erase(BlockId(0)).unwrap();
        }
        m.program(Ppn(0), &[1], &spare(1)).unwrap();
        // The 11th erase would leave wordline 0 past its endurance.
        assert_eq!(m.erase(BlockId(0)), Err(NandError::EraseFailed));
        assert_eq!(m.wl_stats().worn_blocks, 1);
        // Block 2: retiring the worn wordlines (BPM) lets the erase pass,
        // as does protecting them with a low-stress erase.
        for _ in 0..10 {
            m.erase(BlockId(2)).unwrap();
        }
        let mut weak = WlSet::EMPTY;
        // Layers 0, 46 and 47 (10K, 10.7K, 10K): 11 cycles wear them out.
        for wl in (0..4).chain(184..192) {
            weak.insert(wl);
        }
        m.guarded_erase(BlockId(2), &WlSet::EMPTY, &weak).unwrap();
        // Block 1: those layers erased low-stress every other cycle; its
        // 11th erase passes where block 0's failed.
        for i in 0..11 {
            if i % 2 == 0 {
                m.guarded_erase(BlockId(1), &weak, &WlSet::EMPTY).unwrap();
            } else {
                m.erase(BlockId(1)).unwrap();
            }
        }
        // 5 normal + 6 low-stress erases: (5 + 6 x 0.35) / 10 = 0.71.
        assert!((m.wear(1, 0) - 0.71).abs() < 1e-9, "{}", m.wear(1, 0));
        assert_eq!(m.wl_stats().low_stress_wls, 6 * 12);
    }

    #[test]
    fn bit_errors_grow_with_wear_and_rank_the_weak_wordlines() {
        let mut m = medium(0.001);
        let fresh_weak = m.mean_errors(0, 0);
        let fresh_strong = m.mean_errors(0, 96);
        assert!(fresh_weak >= 10.0 && fresh_strong < fresh_weak);
        for _ in 0..5 {
            m.erase(BlockId(0)).unwrap();
        }
        assert!(m.mean_errors(0, 0) > fresh_weak);
        assert!(m.mean_errors(0, 0) <= 0.9 * 40.0 + 1e-9);
    }
}

//! Error propagation management (EPM): may this page be moved by copyback,
//! and with what copyback budget does it arrive?
//!
//! Pure decision logic and bookkeeping types; the GC owns the data path.
//!
//! # Quota model (rcFTL, seed 001 §4.3.1, pp. 60-63)
//!
//! Errors grow almost linearly with successive copybacks out of one block, at
//! a block-dependent rate, so a copyback out of a block with threshold `CT`
//! spends `1 / CT` of the page's ECC budget. To keep this in integers every
//! piece of data carries a *quota* `Q`:
//!
//! * a host write starts at `Q_init`, the least common multiple of the
//!   thresholds in force ([`Epm::new`]; Fig. 20 ❶);
//! * a copyback out of block `b` deducts `dQ = Q_init / CT(b)` (❷-❹) and is
//!   allowed while the remainder stays `>= 0`;
//! * otherwise the data goes off-chip, through the ECC, and restarts at
//!   `Q_init` (❺). A block with `CT = 0` never sources a copyback.
//!
//! [`decide`] is exactly this rule. Along any chain of copybacks the carried
//! error is `sum 1/CT_i <= 1`, so a chain through blocks of one threshold `CT`
//! has at most `CT` copybacks (the tests check both: exhaustively for every
//! chain of up to seven moves, and by proptest through [`ActiveBlocks`]).
//!
//! # Per-block quota (seed 001 Fig. 21) vs per-page state
//!
//! Keeping `Q` per page costs memory ([`memory_bytes`]); rcFTL keeps it *per
//! block* ([`BlockEpm`]): every page of a block shares the block's quota, so a
//! copyback out of victim `b_v[Q, dQ]` must land in a block whose quota is
//! `Q - dQ`. Each plane therefore keeps one GC active block per quota value
//! ([`ActiveBlocks`], heapless, capacity chosen by the integrator; Fig. 21 has
//! five: 0, 2, 3, 4, 6 for `Q_init = 6`). The distinct values that can occur
//! are [`reachable_quotas`]. With fewer active blocks than values, data lands
//! in the block of the largest quota *not above* its own ([`ActiveBlocks::route`]):
//! it loses some budget but never gains any, so safety holds.
//!
//! # Counters (seed 000 §4.1, FastGC)
//!
//! Seed 000's rcFTL counts consecutive copybacks per block (`b(c)` moves to
//! `b(c + 1)`, `M_cpb + 1` active blocks); FastGC (and seed 000's strawman)
//! counts per page against one threshold. [`decide_counter`] is that rule.

use crate::error::{Error, OrRare};
use crate::medium::addr::{BlockId, Geometry};
use crate::tech::rcftl::ctt::{BerClass, CopybackConfig, ThresholdSet};
use crate::tech::rcftl::dmms::Mode;

/// A copyback quota, in units of `1 / Q_init` of the ECC budget.
///
/// One byte: the papers' tables give `Q_init <= 60`; configurations
/// whose LCM exceeds 255 are rejected by [`Epm::new`].
pub type Quota = u8;

/// Bits a block needs for its [`BerClass`] (three classes), which the quota
/// model must keep besides the P/E count (seed 001 §4.3.1, footnote 1).
pub const BER_CLASS_BITS: u32 = 2;

/// Outcome of one migration decision: how the data moves and the quota of the
/// block it must land in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Move by copyback; the destination block has quota `dst_quota`.
    Copyback {
        /// Quota left after the deduction.
        dst_quota: Quota,
    },
    /// Move through the controller (ECC corrects the carried errors); the
    /// destination has the full quota `Q_init`.
    OffChip {
        /// Always `Q_init`.
        dst_quota: Quota,
    },
}

impl Decision {
    /// Quota of the destination block.
    pub fn dst_quota(self) -> Quota {
        match self {
            Decision::Copyback { dst_quota } | Decision::OffChip { dst_quota } => dst_quota,
        }
    }

    /// Whether the move is a copyback.
    pub fn is_copyback(self) -> bool {
        matches!(self, Decision::Copyback { .. })
    }
}

/// Quota a copyback out of a block with threshold `ct` deducts:
/// `ceil(q_init / ct)`. Exact when `ct` divides `q_init` (as with the LCM);
/// rounded up otherwise, which only ever allows fewer copybacks. `None` when
/// `ct == 0` or `q_init == 0` (no copyback).
pub fn deduction(q_init: Quota, ct: u8) -> Option<Quota> {
    if ct == 0 || q_init == 0 {
        return None;
    }
    Some(q_init.div_ceil(ct))
}

/// The EPM rule (seed 001 §4.3.1): a copyback out of a block with threshold
/// `src_ct` is allowed when `src_quota - Q_init / src_ct >= 0`; the data then
/// lands with that remainder. Otherwise it goes off-chip and restarts at
/// `q_init`. A quota above `q_init` is corrupt and also sends the data
/// off-chip (always safe).
pub fn decide(q_init: Quota, src_quota: Quota, src_ct: u8) -> Decision {
    if src_quota <= q_init {
        if let Some(left) = deduction(q_init, src_ct).and_then(|d| src_quota.checked_sub(d)) {
            return Decision::Copyback { dst_quota: left };
        }
    }
    Decision::OffChip { dst_quota: q_init }
}

/// Every quota value data can carry when copybacks follow [`decide`] out of
/// blocks whose thresholds are in `cts`, starting from `q_init`: the number of
/// per-plane active blocks the per-block scheme needs to place every copyback
/// exactly.
pub fn reachable_quotas(q_init: Quota, cts: ThresholdSet) -> QuotaSet {
    let mut set = QuotaSet::EMPTY;
    set.insert(q_init);
    // Deductions are >= 1, so scanning downwards visits each value after every
    // value it can be reached from.
    for q in (0..=q_init).rev() {
        if !set.contains(q) {
            continue;
        }
        for ct in cts.iter() {
            if let Decision::Copyback { dst_quota } = decide(q_init, q, ct) {
                set.insert(dst_quota);
            }
        }
    }
    set
}

/// A set of quota values (a 256-bit map; 32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct QuotaSet([u64; 4]);

impl QuotaSet {
    /// The empty set.
    pub const EMPTY: QuotaSet = QuotaSet([0; 4]);

    fn word_bit(q: Quota) -> (usize, u64) {
        (usize::from(q >> 6), 1u64.wrapping_shl(u32::from(q & 63)))
    }

    /// Adds `q`.
    pub fn insert(&mut self, q: Quota) {
        let (w, bit) = Self::word_bit(q);
        if let Some(word) = self.0.get_mut(w) {
            *word |= bit;
        }
    }

    /// Whether `q` is a member.
    pub fn contains(&self, q: Quota) -> bool {
        let (w, bit) = Self::word_bit(q);
        self.0.get(w).is_some_and(|word| word & bit != 0)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Members, largest first.
    pub fn iter_desc(&self) -> impl Iterator<Item = Quota> + '_ {
        (0..=Quota::MAX).rev().filter(move |&q| self.contains(q))
    }
}

/// Per-block EPM state (one entry per physical block, in a slice the caller
/// lends, like [`crate::ftl::tables::BlockMeta`]). Two bytes; the default (quota 0,
/// worst class) never allows a copyback, so an unset entry is safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct BlockEpm {
    /// Quota every page of the block carries (set when the block is opened as
    /// an active block: `Q_init` for host writes and off-chip copies, the
    /// active block's level for copybacks).
    pub quota: Quota,
    /// BER class measured after the block's first program since erase.
    pub ber: BerClass,
}

/// The quota-based EPM of one drive: the threshold configuration and its `Q_init`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Epm {
    cfg: CopybackConfig,
    q_init: Quota,
}

impl Epm {
    /// The EPM with `Q_init` = LCM of the thresholds `cfg` can yield (1 when
    /// copyback is disabled). Fails when that LCM exceeds 255.
    pub fn new(cfg: CopybackConfig) -> Result<Self, Error> {
        let l = cfg.thresholds_in_force().lcm()?;
        let q_init = Quota::try_from(l)
            .map_err(|_| Error::InvalidConfig(&"copyback Q_init (LCM of thresholds) above 255"))?;
        Ok(Epm { cfg, q_init })
    }

    /// The EPM with an explicit `Q_init` (>= 1), as in the papers' worked
    /// examples. If a threshold does not divide it, deductions round up
    /// ([`deduction`]): still safe, possibly fewer copybacks.
    pub fn with_q_init(cfg: CopybackConfig, q_init: Quota) -> Result<Self, Error> {
        if q_init == 0 {
            return Err(Error::InvalidConfig(&"copyback Q_init must be at least 1"));
        }
        Ok(Epm { cfg, q_init })
    }

    /// The threshold configuration.
    pub fn config(&self) -> &CopybackConfig {
        &self.cfg
    }

    /// `Q_init`: the quota of freshly written or ECC-corrected data.
    pub fn q_init(&self) -> Quota {
        self.q_init
    }

    /// `CT` of a block with `pe` cycles and class `ber`.
    pub fn threshold(&self, pe: u32, ber: BerClass) -> u8 {
        self.cfg.threshold(pe, ber)
    }

    /// `dQ` of a copyback out of a block with threshold `ct` (see [`deduction`]).
    pub fn deduction(&self, ct: u8) -> Option<Quota> {
        deduction(self.q_init, ct)
    }

    /// The EPM rule for data of quota `src_quota` in a block of threshold
    /// `src_ct` (see [`decide`]).
    pub fn decide(&self, src_quota: Quota, src_ct: u8) -> Decision {
        decide(self.q_init, src_quota, src_ct)
    }

    /// The EPM rule for the pages of a victim block with state `src` and `pe`
    /// cycles (per-block quota: one decision serves the whole block). `pe` is
    /// the block's count now, which is the count its data was programmed at:
    /// a block holding data is not erased.
    pub fn decide_block(&self, src: BlockEpm, pe: u32) -> Decision {
        self.decide(src.quota, self.threshold(pe, src.ber))
    }

    /// The final migration decision: off-chip when the mode selector chose
    /// [`Mode::OffChip`], otherwise the EPM rule.
    pub fn migrate(&self, mode: Mode, src_quota: Quota, src_ct: u8) -> Decision {
        match mode {
            Mode::Copyback => self.decide(src_quota, src_ct),
            Mode::OffChip => Decision::OffChip {
                dst_quota: self.q_init,
            },
        }
    }

    /// State of a block opened for host writes (full quota).
    pub fn host_block(&self, ber: BerClass) -> BlockEpm {
        BlockEpm {
            quota: self.q_init,
            ber,
        }
    }

    /// Every quota value that can occur under this configuration (see
    /// [`reachable_quotas`]).
    pub fn reachable_quotas(&self) -> QuotaSet {
        reachable_quotas(self.q_init, self.cfg.thresholds_in_force())
    }
}

/// One per-plane active block of the per-block quota scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActiveSlot {
    /// Quota of every page programmed into this slot's block.
    pub quota: Quota,
    /// The open block, if any (the GC opens one from the free list on demand).
    pub block: Option<BlockId>,
}

/// Where [`ActiveBlocks::route`] sends a migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    /// Slot index in [`ActiveBlocks::slots`].
    pub slot: usize,
    /// The decision after placement: `dst_quota` is the slot's quota, which
    /// may be below the EPM's (rounded down to an existing level).
    pub decision: Decision,
}

/// The GC active blocks of one plane, one per quota level (seed 001 Fig. 21),
/// largest quota first: with levels {6, 4, 3, 2, 0} slot 0 is Fig. 21's
/// `b_a1` (quota 6) and slot 2 its `b_a3` (quota 3).
///
/// Fixed capacity `N` (a `heapless::Vec`, no lent memory: `N` is small and
/// per plane). Size `N` from [`Epm::reachable_quotas`] to place every copyback
/// exactly, or choose fewer levels (always including `Q_init`, and 0 to keep
/// the last copyback of every chain). Set the levels up once: slot indices
/// shift when a level is added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveBlocks<const N: usize> {
    slots: heapless::Vec<ActiveSlot, N>,
}

impl<const N: usize> Default for ActiveBlocks<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> ActiveBlocks<N> {
    /// A table with no level.
    pub const fn new() -> Self {
        ActiveBlocks {
            slots: heapless::Vec::new(),
        }
    }

    /// A table with one slot per member of `levels`, no block open.
    pub fn with_levels(levels: &QuotaSet) -> Result<Self, Error> {
        let mut t = Self::new();
        for q in levels.iter_desc() {
            t.add_level(q)?;
        }
        Ok(t)
    }

    /// A table with one slot per reachable quota of `epm`.
    pub fn for_epm(epm: &Epm) -> Result<Self, Error> {
        Self::with_levels(&epm.reachable_quotas())
    }

    /// Adds a level (no-op if present) and returns its slot index.
    pub fn add_level(&mut self, quota: Quota) -> Result<usize, Error> {
        let at = match self.slots.iter().position(|s| s.quota <= quota) {
            Some(i) if self.slots.get(i).is_some_and(|s| s.quota == quota) => return Ok(i),
            Some(i) => i,
            None => self.slots.len(),
        };
        self.slots
            .insert(at, ActiveSlot { quota, block: None })
            .map_err(|_| Error::TableTooSmall(&"copyback active-block slots"))?;
        Ok(at)
    }

    /// The slots, largest quota first.
    pub fn slots(&self) -> &[ActiveSlot] {
        &self.slots
    }

    /// Number of levels.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when no level is set up.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The slot of exactly `quota`.
    pub fn slot_of(&self, quota: Quota) -> Option<usize> {
        self.slots.iter().position(|s| s.quota == quota)
    }

    /// The slot of the largest level not above `quota` (safe placement).
    pub fn level_for(&self, quota: Quota) -> Option<usize> {
        self.slots.iter().position(|s| s.quota <= quota)
    }

    /// Places a decision of the EPM with `q_init`: a copyback goes to the
    /// largest level not above its quota, or off-chip to the `q_init` level
    /// when no such level exists; an off-chip copy goes to the `q_init` level
    /// (or the largest below it). `None` only when no level is at or below
    /// `q_init`.
    pub fn route(&self, d: Decision, q_init: Quota) -> Option<Route> {
        if let Decision::Copyback { dst_quota } = d {
            if let Some(slot) = self.level_for(dst_quota) {
                let quota = self.slots.get(slot)?.quota;
                return Some(Route {
                    slot,
                    decision: Decision::Copyback { dst_quota: quota },
                });
            }
        }
        let slot = self.level_for(q_init)?;
        let quota = self.slots.get(slot)?.quota;
        Some(Route {
            slot,
            decision: Decision::OffChip { dst_quota: quota },
        })
    }

    /// The block open in `slot`.
    pub fn block(&self, slot: usize) -> Option<BlockId> {
        self.slots.get(slot).and_then(|s| s.block)
    }

    /// Records `block` as the open block of `slot`; returns the one it replaces.
    pub fn open(&mut self, slot: usize, block: BlockId) -> Result<Option<BlockId>, Error> {
        let s = self
            .slots
            .get_mut(slot)
            .or_rare(Error::Corrupt(&"copyback active slot"))?;
        Ok(s.block.replace(block))
    }

    /// Forgets the open block of `slot` (it is full) and returns it.
    pub fn close(&mut self, slot: usize) -> Result<Option<BlockId>, Error> {
        let s = self
            .slots
            .get_mut(slot)
            .or_rare(Error::Corrupt(&"copyback active slot"))?;
        Ok(s.block.take())
    }

    /// The slot whose open block is `block`.
    pub fn find_block(&self, block: BlockId) -> Option<usize> {
        self.slots.iter().position(|s| s.block == Some(block))
    }
}

/// Outcome of a counter-based decision (seed 000 per-block counters, per-page
/// counters, FastGC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CounterDecision {
    /// Move by copyback; the data's consecutive-copyback count becomes `dst_count`.
    Copyback {
        /// Count after this copyback.
        dst_count: u8,
    },
    /// Move off-chip; the count restarts.
    OffChip {
        /// Always 0.
        dst_count: u8,
    },
}

/// Counter rule: data that has been copied back `count` times in a row may be
/// copied back again out of a block with threshold `src_ct` when
/// `count < src_ct`. Exact when all blocks on the way share one threshold
/// (FastGC within one P/E bucket, seed 000 within one bucket of Table 1);
/// across thresholds the quota rule is the exact one.
pub fn decide_counter(count: u8, src_ct: u8) -> CounterDecision {
    if count < src_ct {
        CounterDecision::Copyback {
            dst_count: count.wrapping_add(1),
        }
    } else {
        CounterDecision::OffChip { dst_count: 0 }
    }
}

/// Which EPM state is kept, and where, for [`memory_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EpmVariant {
    /// rcFTL of seed 001: a quota and a BER class per block.
    PerBlockQuota {
        /// `Q_init` (sets the quota's width).
        q_init: Quota,
    },
    /// Fig. 20 as drawn: a quota per mapping unit, plus the BER class per
    /// block that the CTT lookup needs.
    PerPageQuota {
        /// `Q_init` (sets the quota's width).
        q_init: Quota,
    },
    /// rcFTL of seed 000: a consecutive-copyback counter per block.
    PerBlockCounter {
        /// Largest threshold (`M_cpb`).
        max_ct: u8,
    },
    /// A counter per mapping unit (seed 000 §4.1 strawman; FastGC).
    PerPageCounter {
        /// Largest threshold.
        max_ct: u8,
    },
}

/// Bits to store any value in `0..=max`.
pub const fn bits_for(max: u32) -> u32 {
    u32::BITS.saturating_sub(max.leading_zeros())
}

/// Bytes to store `entries` values of `bits` bits each, tightly packed.
pub fn packed_bytes(entries: u64, bits: u32) -> u64 {
    entries.saturating_mul(u64::from(bits)).div_ceil(8)
}

fn blocks_u64(g: &Geometry) -> u64 {
    u64::from(g.channels)
        .saturating_mul(u64::from(g.dies_per_channel))
        .saturating_mul(u64::from(g.planes_per_die))
        .saturating_mul(u64::from(g.blocks_per_plane))
}

/// Memory the EPM state of `v` needs on geometry `g`, tightly packed.
///
/// "Page" is the mapping unit, as in both papers (4 KiB L2P entries: seed 001
/// footnote 2, seed 000 §4.1). Computed in `u64` from the dimensions, so
/// geometries beyond the core's 31-bit numbering (16 TB) can be costed.
/// Not included: the per-plane [`ActiveBlocks`] (a few bytes per level) and
/// the P/E counts every FTL keeps anyway.
pub fn memory_bytes(g: &Geometry, v: EpmVariant) -> u64 {
    let blocks = blocks_u64(g);
    let units = blocks
        .saturating_mul(u64::from(g.pages_per_block))
        .saturating_mul(u64::from(g.units_per_page));
    match v {
        EpmVariant::PerBlockQuota { q_init } => packed_bytes(
            blocks,
            bits_for(u32::from(q_init)).saturating_add(BER_CLASS_BITS),
        ),
        EpmVariant::PerPageQuota { q_init } => packed_bytes(units, bits_for(u32::from(q_init)))
            .saturating_add(packed_bytes(blocks, BER_CLASS_BITS)),
        EpmVariant::PerBlockCounter { max_ct } => packed_bytes(blocks, bits_for(u32::from(max_ct))),
        EpmVariant::PerPageCounter { max_ct } => packed_bytes(units, bits_for(u32::from(max_ct))),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::tech::rcftl::ctt::{rcopyback_ct, CtModel, Retention};
    use proptest::prelude::*;
    use std::vec::Vec;

    fn set(v: &[u8]) -> ThresholdSet {
        ThresholdSet::from_values(v).unwrap()
    }

    fn levels(v: &[Quota]) -> QuotaSet {
        let mut s = QuotaSet::EMPTY;
        v.iter().for_each(|&q| s.insert(q));
        s
    }

    /// Seed 001 Fig. 20, the quota transition of one page p_x, reconstructed
    /// from the text (the figure's drawing is not in the transcript): blocks
    /// of CT 3, 2 and 6, so Q_init = LCM(2, 3, 6) = 6.
    #[test]
    fn fig20_quota_transition() {
        let q_init = set(&[2, 3, 6]).lcm().unwrap() as Quota;
        assert_eq!(q_init, 6);
        // ❶ host write: Q(p_x) = Q_init.
        let q = q_init;
        // ❷ rCPB out of b_n with CT 3: Q -= Q_init / CT = 2.
        let d = decide(q_init, q, 3);
        assert_eq!(d, Decision::Copyback { dst_quota: 4 });
        // ❸ rCPB out of a CT-2 block: -3.
        let d = decide(q_init, d.dst_quota(), 2);
        assert_eq!(d, Decision::Copyback { dst_quota: 1 });
        // ❹ rCPB out of a CT-6 block: -1, Q = 0 is still allowed (Q >= 0).
        let d = decide(q_init, d.dst_quota(), 6);
        assert_eq!(d, Decision::Copyback { dst_quota: 0 });
        // ❺ the next source deducts 2 (CT 3): Q would be < 0, so off-chip and
        // Q(p_x) = Q_init again.
        let d = decide(q_init, d.dst_quota(), 3);
        assert_eq!(d, Decision::OffChip { dst_quota: 6 });
        // The chain spent exactly the budget: 1/3 + 1/2 + 1/6 = 1.
        // Without ❸/❹, a CT-3 chain allows exactly three in a row.
        let mut q = q_init;
        for want in [4, 2, 0] {
            q = match decide(q_init, q, 3) {
                Decision::Copyback { dst_quota } => dst_quota,
                other => panic!("{other:?}"),
            };
            assert_eq!(q, want);
        }
        assert!(!decide(q_init, q, 3).is_copyback());
    }

    /// Seed 001 Fig. 21: Q_init = 6, five active blocks of quota 0, 2, 3, 4, 6.
    #[test]
    fn fig21_per_block_migrations() {
        let q_init: Quota = 6;
        let cfg = CopybackConfig::RCFTL;
        let epm = Epm::with_q_init(cfg, q_init).unwrap();
        let mut ab = ActiveBlocks::<8>::with_levels(&levels(&[0, 2, 3, 4, 6])).unwrap();
        let qs: Vec<Quota> = ab.slots().iter().map(|s| s.quota).collect();
        assert_eq!(qs, [6, 4, 3, 2, 0]); // b_a1 .. b_a5
        for (i, b) in [10u32, 11, 12, 13, 14].into_iter().enumerate() {
            assert_eq!(ab.open(i, BlockId(b)).unwrap(), None);
        }
        // Victim b_v2[6, 3]: quota 6, deduction 3, i.e. CT = 6 / 3 = 2.
        let (q_v2, dq_v2) = (6, 3);
        let ct_v2 = q_init / dq_v2;
        assert_eq!(epm.deduction(ct_v2), Some(dq_v2));
        // Its valid pages C and D move by rCPB to b_a3, the active block of quota 3.
        for _page in ['C', 'D'] {
            let d = epm.decide(q_v2, ct_v2);
            assert_eq!(d, Decision::Copyback { dst_quota: 3 });
            let r = ab.route(d, q_init).unwrap();
            assert_eq!(r.slot, 2); // b_a3
            assert_eq!(ab.block(r.slot), Some(BlockId(12)));
            assert_eq!(r.decision, d);
        }
        // Victim b_vn[0, x]: whatever x, its pages go off-chip to b_a1 (quota 6).
        for ct in [1u8, 2, 3, 6] {
            let d = epm.decide(0, ct);
            assert_eq!(d, Decision::OffChip { dst_quota: 6 });
            let r = ab.route(d, q_init).unwrap();
            assert_eq!(r.slot, 0); // b_a1
            assert_eq!(ab.block(0), Some(BlockId(10)));
        }
        // The other levels of the figure: 6 -(CT 3)-> 4 -(CT 3)-> 2 -(CT 3)-> 0,
        // 6 -(CT 1)-> 0.
        assert_eq!(ab.route(epm.decide(6, 3), 6).unwrap().slot, 1);
        assert_eq!(ab.route(epm.decide(4, 3), 6).unwrap().slot, 3);
        assert_eq!(ab.route(epm.decide(2, 3), 6).unwrap().slot, 4);
        assert_eq!(ab.route(epm.decide(6, 1), 6).unwrap().slot, 4);
        // Mixed chains reach quota 1 (4 - 3), which the figure has no block
        // for: the data lands in the quota-0 block (rounded down, safe).
        let d = epm.decide(4, 2);
        assert_eq!(d, Decision::Copyback { dst_quota: 1 });
        let r = ab.route(d, q_init).unwrap();
        assert_eq!(
            (r.slot, r.decision),
            (4, Decision::Copyback { dst_quota: 0 })
        );
        // The figure's five levels are exactly the chains through blocks of a
        // single threshold (CT 1, 2 or 3) ...
        let mut uniform = QuotaSet::EMPTY;
        for ct in [1u8, 2, 3] {
            let mut q = q_init;
            uniform.insert(q);
            while let Decision::Copyback { dst_quota } = decide(q_init, q, ct) {
                q = dst_quota;
                uniform.insert(q);
            }
        }
        assert_eq!(uniform, levels(&[0, 2, 3, 4, 6]));
        // ... while mixing CT 2 and CT 3 reaches six values.
        let all = reachable_quotas(q_init, set(&[1, 2, 3]));
        assert_eq!(all.iter_desc().collect::<Vec<_>>(), [6, 4, 3, 2, 1, 0]);
        // A full table needs one more slot; a 5-slot table cannot hold it.
        assert!(ActiveBlocks::<6>::with_levels(&all).is_ok());
        assert_eq!(
            ActiveBlocks::<5>::with_levels(&all),
            Err(Error::TableTooSmall(&"copyback active-block slots"))
        );
        // Closing and reopening.
        assert_eq!(ab.close(2).unwrap(), Some(BlockId(12)));
        assert_eq!(ab.block(2), None);
        assert_eq!(ab.find_block(BlockId(13)), Some(3));
        assert!(ab.open(9, BlockId(1)).is_err());
    }

    #[test]
    fn reachable_quota_counts() {
        // rcFTL, Table 6, 1 year: Q_init = 60, deductions 60/{1..5}.
        let epm = Epm::new(CopybackConfig::RCFTL).unwrap();
        assert_eq!(epm.q_init(), 60);
        let r = epm.reachable_quotas();
        // Brute force: q reachable iff 60 - q is a sum of {12, 15, 20, 30, 60}.
        let mut bf = Vec::new();
        for q in (0..=60u32).rev() {
            let s = 60 - q;
            let mut ok = false;
            for a in 0..=5 {
                for b in 0..=4 {
                    for c in 0..=3 {
                        for d in 0..=2 {
                            for e in 0..=1 {
                                ok |= 12 * a + 15 * b + 20 * c + 30 * d + 60 * e == s;
                            }
                        }
                    }
                }
            }
            if ok {
                bf.push(q as Quota);
            }
        }
        assert_eq!(r.iter_desc().collect::<Vec<_>>(), bf);
        assert_eq!(r.len(), 26);
        let t = ActiveBlocks::<26>::for_epm(&epm).unwrap();
        assert_eq!(t.len(), 26);
        // 3-month retention: CTs 1..=6, Q_init 60.
        let e3 = Epm::new(CopybackConfig {
            retention: Retention::ThreeMonths,
            ..CopybackConfig::RCFTL
        })
        .unwrap();
        assert_eq!(e3.q_init(), 60);
        assert_eq!(e3.reachable_quotas().len(), 34);
        // Seed 000 Table 1 as quotas: Q_init 12, deductions {6, 4, 3}.
        let e1 = Epm::new(CopybackConfig {
            model: CtModel::Rcopyback,
            ..CopybackConfig::RCFTL
        })
        .unwrap();
        assert_eq!(e1.q_init(), 12);
        assert_eq!(
            e1.reachable_quotas().iter_desc().collect::<Vec<_>>(),
            [12, 9, 8, 6, 5, 4, 3, 2, 1, 0]
        );
        // Copyback disabled: Q_init 1, only the full quota exists.
        let e0 = Epm::new(CopybackConfig {
            max_threshold: 0,
            ..CopybackConfig::RCFTL
        })
        .unwrap();
        assert_eq!(e0.q_init(), 1);
        assert_eq!(e0.reachable_quotas().len(), 1);
        assert!(!e0.decide(1, 0).is_copyback());
    }

    #[test]
    fn decide_edges() {
        assert_eq!(decide(60, 60, 0), Decision::OffChip { dst_quota: 60 });
        assert_eq!(decide(60, 61, 5), Decision::OffChip { dst_quota: 60 }); // corrupt
        assert_eq!(decide(0, 0, 5), Decision::OffChip { dst_quota: 0 });
        assert_eq!(decide(60, 12, 5), Decision::Copyback { dst_quota: 0 });
        assert_eq!(decide(60, 11, 5), Decision::OffChip { dst_quota: 60 });
        assert_eq!(deduction(6, 4), Some(2)); // rounded up
        assert_eq!(deduction(6, 0), None);
        assert_eq!(deduction(0, 3), None);
        assert_eq!(deduction(255, 1), Some(255));
        assert!(Epm::with_q_init(CopybackConfig::RCFTL, 0).is_err());
        let epm = Epm::new(CopybackConfig::RCFTL).unwrap();
        // Young best block: CT 5, dQ 12.
        let b = epm.host_block(BerClass::Best);
        assert_eq!(epm.decide_block(b, 0), Decision::Copyback { dst_quota: 48 });
        // Worst block at 4.5K P/E: CT 0, never a copyback.
        let w = epm.host_block(BerClass::Worst);
        assert_eq!(
            epm.decide_block(w, 4500),
            Decision::OffChip { dst_quota: 60 }
        );
        // Default state is safe.
        assert!(!epm.decide_block(BlockEpm::default(), 0).is_copyback());
        // DMMS off-chip overrides; copyback mode defers to the EPM.
        assert_eq!(
            epm.migrate(Mode::OffChip, 60, 5),
            Decision::OffChip { dst_quota: 60 }
        );
        assert_eq!(
            epm.migrate(Mode::Copyback, 60, 5),
            Decision::Copyback { dst_quota: 48 }
        );
    }

    #[test]
    fn route_fallbacks() {
        // Without a level at or below the copyback's quota: off-chip to Q_init.
        let ab = ActiveBlocks::<4>::with_levels(&levels(&[60, 30])).unwrap();
        let r = ab.route(Decision::Copyback { dst_quota: 12 }, 60).unwrap();
        assert_eq!(
            (r.slot, r.decision),
            (0, Decision::OffChip { dst_quota: 60 })
        );
        let r = ab.route(Decision::Copyback { dst_quota: 45 }, 60).unwrap();
        assert_eq!(
            (r.slot, r.decision),
            (1, Decision::Copyback { dst_quota: 30 })
        );
        assert_eq!(
            ActiveBlocks::<4>::new().route(Decision::OffChip { dst_quota: 6 }, 6),
            None
        );
        let mut ab = ActiveBlocks::<4>::new();
        assert_eq!(ab.add_level(3), Ok(0));
        assert_eq!(ab.add_level(6), Ok(0));
        assert_eq!(ab.add_level(3), Ok(1));
        assert_eq!(ab.add_level(0), Ok(2));
        assert_eq!(ab.slot_of(0), Some(2));
        assert_eq!(ab.level_for(5), Some(1));
    }

    #[test]
    fn counters_seed000_and_fastgc() {
        // Seed 000 per-block counters with Table 1 at <= 1000 P/E (CT 4):
        // b(0) -> b(1) -> ... -> b(4), then off-chip back to b(0):
        // M_cpb + 1 = 5 active blocks.
        let ct = rcopyback_ct(500);
        let mut c = 0u8;
        let mut seen = Vec::from([c]);
        while let CounterDecision::Copyback { dst_count } = decide_counter(c, ct) {
            c = dst_count;
            seen.push(c);
        }
        assert_eq!(seen, [0, 1, 2, 3, 4]);
        assert_eq!(
            decide_counter(c, ct),
            CounterDecision::OffChip { dst_count: 0 }
        );
        // FastGC at 2.5K P/E, 1 year: one threshold (1) for every block.
        let f = crate::tech::rcftl::ctt::fastgc_ct(2500, Retention::OneYear);
        assert_eq!(
            decide_counter(0, f),
            CounterDecision::Copyback { dst_count: 1 }
        );
        assert_eq!(
            decide_counter(1, f),
            CounterDecision::OffChip { dst_count: 0 }
        );
        assert_eq!(
            decide_counter(0, 0),
            CounterDecision::OffChip { dst_count: 0 }
        );
    }

    /// 16 TiB of 16 KiB pages: 8 ch x 8 dies x 2 planes x 65536 blocks x 128
    /// pages, 4 KiB mapping units (2^32 units, 2^23 blocks).
    fn geo_16t() -> Geometry {
        Geometry {
            channels: 8,
            dies_per_channel: 8,
            planes_per_die: 2,
            blocks_per_plane: 65536,
            pages_per_block: 128,
            page_bytes: 16384,
            pages_per_wordline: 1,
            units_per_page: 4,
        }
    }

    #[test]
    fn memory_figures() {
        // Seed 001 footnote 2, verbatim: 5 bit x 16e12 B / 4e3 B = 2.5e9 B.
        assert_eq!(bits_for(30), 5);
        assert_eq!(packed_bytes(16_000_000_000_000 / 4_000, 5), 2_500_000_000);
        // Seed 000 §4.1: a 3-bit per-page counter on 16 TB needs "1.4 GB".
        assert_eq!(bits_for(4), 3);
        let b = packed_bytes(16_000_000_000_000 / 4096, 3);
        assert!((1_300_000_000..1_500_000_000).contains(&b), "{b}");

        let g = geo_16t();
        let bytes = |v| memory_bytes(&g, v);
        let page_q30 = bytes(EpmVariant::PerPageQuota { q_init: 30 });
        assert_eq!(page_q30, (1u64 << 32) * 5 / 8 + (1u64 << 23) * 2 / 8);
        assert!((2_500_000_000..3_000_000_000).contains(&page_q30)); // ~2.5 GB
                                                                     // rcFTL (Q_init 60: 6 bits + 2 class bits = 1 byte per block): 8 MiB.
        let q = Epm::new(CopybackConfig::RCFTL).unwrap().q_init();
        let block_q = bytes(EpmVariant::PerBlockQuota { q_init: q });
        assert_eq!(block_q, 1u64 << 23);
        let page_q = bytes(EpmVariant::PerPageQuota { q_init: q });
        assert!(page_q / block_q >= 100, "{page_q} vs {block_q}");
        assert!(page_q30 / block_q >= 100);
        // Counters: per-block (seed 000 rcFTL4, 3 bits) vs per-page (FastGC,
        // max threshold 3 -> 2 bits; seed 000's 3-bit per-page counter).
        let block_c = bytes(EpmVariant::PerBlockCounter { max_ct: 4 });
        assert_eq!(block_c, 3 << 20);
        let fastgc = bytes(EpmVariant::PerPageCounter { max_ct: 3 });
        assert_eq!(fastgc, 1 << 30);
        let page_c = bytes(EpmVariant::PerPageCounter { max_ct: 4 });
        assert_eq!(page_c, 3 << 29); // 1.5 GiB
        assert!(page_c / block_c >= 100);
    }

    /// Walks every chain of source thresholds of length <= `depth`, applying
    /// the EPM, and checks that no run of consecutive copybacks carries more
    /// than the ECC budget (sum 1/CT <= 1), hence never more than its
    /// thresholds allow.
    fn walk(q_init: Quota, cts: &[u8], q: Quota, run: &mut Vec<u8>, depth: usize) {
        if depth == 0 {
            return;
        }
        for &ct in cts {
            match decide(q_init, q, ct) {
                Decision::Copyback { dst_quota } => {
                    run.push(ct);
                    check_run(q_init, run, dst_quota);
                    walk(q_init, cts, dst_quota, run, depth - 1);
                    run.pop();
                }
                Decision::OffChip { dst_quota } => {
                    assert_eq!(dst_quota, q_init);
                    let mut fresh = Vec::new();
                    walk(q_init, cts, dst_quota, &mut fresh, depth - 1);
                }
            }
        }
    }

    fn check_run(q_init: Quota, run: &[u8], quota_left: Quota) {
        assert!(run.iter().all(|&c| c > 0), "copyback out of a CT-0 block");
        // Exact: sum 1/c_i <= 1  <=>  sum L/c_i <= L, L = LCM(1..=15).
        let l: u64 = 360_360;
        let spent: u64 = run.iter().map(|&c| l / u64::from(c)).sum();
        assert!(spent <= l, "budget exceeded: {run:?}");
        let max = *run.iter().max().unwrap();
        assert!(run.len() <= usize::from(max), "{run:?}");
        if run.iter().all(|&c| c == run[0]) {
            assert!(run.len() <= usize::from(run[0]), "{run:?}");
        }
        // The quota left is a lower bound on the budget left.
        assert!(u64::from(quota_left) * l <= (l - spent) * u64::from(q_init));
    }

    #[test]
    fn exhaustive_chains_never_exceed_threshold() {
        for (q_init, cts) in [
            (60, &[0u8, 1, 2, 3, 4, 5][..]), // Table 6, 1 year
            (60, &[1, 2, 3, 4, 5, 6][..]),   // Table 6, 3 months
            (12, &[0, 2, 3, 4][..]),         // Table 1
            (6, &[1, 2, 3, 6][..]),          // Fig. 20/21
            (7, &[2, 3, 4, 5][..]),          // Q_init not the LCM
        ] {
            walk(q_init, cts, q_init, &mut Vec::new(), 7);
        }
    }

    #[test]
    fn uniform_chains_are_tight() {
        // With Q_init = LCM, a chain through blocks of one CT gets exactly CT
        // copybacks: the EPM is safe without being conservative.
        let epm = Epm::new(CopybackConfig {
            retention: Retention::ThreeMonths,
            ..CopybackConfig::RCFTL
        })
        .unwrap();
        for ct in 1..=6u8 {
            let mut q = epm.q_init();
            let mut n = 0;
            while let Decision::Copyback { dst_quota } = epm.decide(q, ct) {
                q = dst_quota;
                n += 1;
            }
            assert_eq!(n, ct);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Per-block scheme end to end: random victims (P/E, BER class), the
        /// DMMS sometimes forcing off-chip, destinations rounded down to a
        /// random subset of active levels. The data's run of consecutive
        /// copybacks never carries more than its ECC budget.
        #[test]
        fn per_block_chains_stay_within_threshold(
            retention in prop_oneof![Just(Retention::OneYear), Just(Retention::ThreeMonths)],
            cap in 0u8..=7,
            extra_levels in proptest::collection::vec(0u8..=60, 0..6),
            steps in proptest::collection::vec((0u32..=5600, 0usize..3, any::<bool>()), 1..64),
        ) {
            let cfg = CopybackConfig { model: CtModel::Rcpb, retention, max_threshold: cap };
            let epm = Epm::new(cfg).unwrap();
            let q_init = epm.q_init();
            let mut lv = levels(&[q_init]);
            extra_levels.iter().filter(|&&q| q <= q_init).for_each(|&q| lv.insert(q));
            let ab = ActiveBlocks::<8>::with_levels(&lv).unwrap();
            let mut q = q_init;
            let mut run = Vec::new();
            for (pe, class, offchip) in steps {
                let ber = BerClass::ALL[class];
                let ct = epm.threshold(pe, ber);
                let mode = if offchip { Mode::OffChip } else { Mode::Copyback };
                let d = epm.migrate(mode, q, ct);
                let r = ab.route(d, q_init).unwrap();
                if r.decision.is_copyback() {
                    prop_assert!(r.decision.dst_quota() <= d.dst_quota());
                }
                q = r.decision.dst_quota();
                match r.decision {
                    Decision::Copyback { .. } => {
                        run.push(ct);
                        check_run(q_init, &run, q);
                    }
                    Decision::OffChip { .. } => run.clear(),
                }
            }
        }

        /// Per-page counters with one threshold (FastGC): never more than T in a row.
        #[test]
        fn counter_chains_stay_within_threshold(
            t in 0u8..=6,
            offchip in proptest::collection::vec(any::<bool>(), 1..64),
        ) {
            let mut c = 0u8;
            for off in offchip {
                c = if off { 0 } else {
                    match decide_counter(c, t) {
                        CounterDecision::Copyback { dst_count } => dst_count,
                        CounterDecision::OffChip { dst_count } => dst_count,
                    }
                };
                prop_assert!(c <= t);
            }
        }
    }
}

//! GC migration by copyback (rcFTL, seeds 000 and 001 ch. 4): which victim
//! pages move inside the plane without crossing the channel, into which of
//! the plane's GC active blocks, and what their completion does.
//!
//! A copyback moves a whole page through the plane's page register: no channel
//! or DRAM-bus transfer, but no ECC either, so the raw errors it picks up ride
//! along. The error propagation manager ([`crate::tech::rcftl::epm`]) bounds every chain of
//! copybacks by the copyback threshold table ([`crate::tech::rcftl::ctt`]); the data
//! migration mode selector ([`crate::tech::rcftl::dmms`]) picks copyback or off-chip copy
//! per victim block. The modes, each beside its baseline:
//!
//! | [`CopybackMode`] | copyback allowed when | state |
//! |---|---|---|
//! | `OffChip` | never (baseline: read, ECC, program) | none |
//! | `FastGc` | the page's counter is below one P/E-only threshold (worst-block row) | one counter per page |
//! | `RcftlPerPage` | the page's quota covers `Q_init / CT(block)` | one quota per page |
//! | `Rcftl` | the block's quota covers `Q_init / CT(block)` | one quota per block, one GC active block per quota level |
//! | `Unchecked` | always (no EPM: shows what the EPM prevents) | none |
//!
//! Per-block quota keeps every page of a block at the block's quota, so the
//! data of a victim with quota `Q` lands in the plane's active block of quota
//! `Q - dQ` (or the largest level below it when levels are capped); off-chip
//! data restarts at `Q_init` in the plane's ordinary GC active block.
//!
//! A block's BER class is measured by one read of its first page right after
//! that page is programmed from the controller (a page written by copyback
//! carries errors that are not the block's own); until the first measurement
//! the block counts as [`BerClass::Worst`] (the safe side). The class is the
//! block's process variation, so it is kept across erases and refreshed each
//! cycle. A copyback hop is costed at the lower threshold of its source and
//! its destination.

use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::mapping::Loc;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::{BlockId, PlaneId, Ppn, UnitMask};
use crate::medium::nand::{NandCmd, NandError, NandResult, Origin, PageKind, Slot, Spare};
use crate::tech::rcftl::ctt::{BerClass, BerClassifier, CopybackConfig};
use crate::tech::rcftl::dmms::{self, Mode, Urgency};
use crate::tech::rcftl::epm::{self, Decision, Quota};

/// Most quota levels (GC active blocks) a plane keeps in [`CopybackMode::Rcftl`],
/// the off-chip level `Q_init` included. Seed 001 Fig. 21 uses five.
pub const MAX_LEVELS: usize = 8;

/// How GC migrates valid pages (`copyback.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum CopybackMode {
    /// Every page through the controller (read, ECC, program): the baseline.
    #[default]
    OffChip,
    /// FastGC: per-page copyback counters against one P/E-only threshold.
    FastGc,
    /// rcFTL with per-page quota (the memory-hungry variant).
    RcftlPerPage,
    /// rcFTL with per-block quota and one GC active block per quota level.
    Rcftl,
    /// Copyback whenever the selector allows, with no error bound. For showing
    /// that the reliability model bites; never for real use.
    Unchecked,
}

impl CopybackMode {
    /// Whether this mode keeps one byte of state per flash page (lent table).
    pub const fn per_page(self) -> bool {
        matches!(self, CopybackMode::FastGc | CopybackMode::RcftlPerPage)
    }

    /// Whether this mode ever copies back.
    pub const fn copies_back(self) -> bool {
        !matches!(self, CopybackMode::OffChip)
    }

    /// Whether thresholds depend on the block's BER class (so blocks are classified).
    pub const fn uses_ber_class(self) -> bool {
        matches!(self, CopybackMode::RcftlPerPage | CopybackMode::Rcftl)
    }
}

/// How the migration mode of a victim is chosen (`copyback.selector`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Selector {
    /// Copyback whenever the EPM allows (the papers' `rcFTL-`).
    #[default]
    Greedy,
    /// DMMS: background GC copies back only while the moving average of
    /// write-buffer utilisation is above half; urgent GC always copies back.
    Dmms,
}

/// The copyback part of the core configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopybackPolicy {
    /// Migration mode.
    pub mode: CopybackMode,
    /// Mode selector.
    pub selector: Selector,
    /// Threshold table, retention and cap.
    pub thresholds: CopybackConfig,
    /// Boundaries of the block BER classes.
    pub classifier: BerClassifier,
    /// A page is copied back only if at least this many of its mapping units
    /// are live (a copyback moves the whole page; dead units stay dead space).
    /// 0 means all of them.
    pub min_live_units: u8,
    /// DMMS averaging window in ns: one average block-write time.
    pub dmms_window_ns: u64,
}

impl CopybackPolicy {
    /// The off-chip baseline.
    pub const OFF_CHIP: CopybackPolicy = CopybackPolicy {
        mode: CopybackMode::OffChip,
        selector: Selector::Greedy,
        thresholds: CopybackConfig::RCFTL,
        classifier: BerClassifier::DEFAULT,
        min_live_units: 0,
        dmms_window_ns: 64_000_000,
    };
}

impl Default for CopybackPolicy {
    fn default() -> Self {
        Self::OFF_CHIP
    }
}

/// Copybacks a plane keeps in flight at most. A copyback cannot be called
/// back once issued, so its units are programmed even if the host overwrites
/// them while it waits behind other work on the die; deciding each page just
/// in time keeps that waste small, and two keep the die busy.
pub const MAX_COPYBACKS_IN_FLIGHT: u16 = 2;

/// What became of one victim page offered to the copyback path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopybackStep {
    /// Issued as a copyback.
    Issued,
    /// Must go off-chip.
    OffChip,
    /// Would be copied back, but the plane has enough copybacks in flight.
    Wait,
}

/// Time buckets of the DMMS moving average.
pub(crate) const DMMS_BUCKETS: usize = 16;

/// The copyback state the core keeps besides the lent tables.
#[derive(Clone, Debug)]
pub(crate) struct CopybackState {
    pub(crate) epm: epm::Epm,
    /// Quota levels, highest (`Q_init`) first.
    pub(crate) levels: heapless::Vec<Quota, MAX_LEVELS>,
    pub(crate) dmms: dmms::Dmms<DMMS_BUCKETS>,
}

impl CopybackState {
    pub(crate) fn new(p: &CopybackPolicy) -> Result<Self, Error> {
        let epm = epm::Epm::new(p.thresholds)?;
        let mut levels: heapless::Vec<Quota, MAX_LEVELS> = heapless::Vec::new();
        if p.mode == CopybackMode::Rcftl {
            // A quota below the smallest deduction allows no further copyback,
            // so it is the same as 0: those values share level 0, which is
            // always kept (data for it would otherwise go off-chip).
            let smallest = epm
                .deduction(p.thresholds.thresholds_in_force().max())
                .unwrap_or(Quota::MAX);
            let q_init = epm.q_init();
            levels
                .push(q_init)
                .map_err(|_| Error::Corrupt("quota levels"))?;
            let room = MAX_LEVELS.saturating_sub(1);
            for q in epm.reachable_quotas().iter_desc() {
                if q == 0 || q == q_init || q < smallest || levels.len() >= room {
                    // Beyond the cap, data drops to the next level kept: safe.
                    continue;
                }
                levels.push(q).map_err(|_| Error::Corrupt("quota levels"))?;
            }
            if q_init != 0 {
                levels.push(0).map_err(|_| Error::Corrupt("quota levels"))?;
            }
        } else {
            levels
                .push(epm.q_init())
                .map_err(|_| Error::Corrupt("quota levels"))?;
        }
        let policy = match p.selector {
            Selector::Greedy => dmms::Policy::Greedy,
            Selector::Dmms => dmms::Policy::Selective,
        };
        let dmms = dmms::Dmms::new(p.dmms_window_ns, policy)?;
        Ok(CopybackState { epm, levels, dmms })
    }
}

/// Where one victim page goes.
enum PageMove {
    /// Off-chip, through GC slots.
    OffChip,
    /// Copyback into `dst`; the destination page's EPM byte becomes `page_state`.
    Copyback { dst: BlockId, page_state: u8 },
}

impl<H: Hooks> Ftl<'_, H> {
    /// The quota level (index into `levels`) a new GC block of plane `p`
    /// opened for `stream` belongs to, by the block's position.
    fn level_block(&self, p: PlaneId, level: usize) -> Result<u32, Error> {
        let pl = self.pl(p)?;
        if level == 0 {
            return Ok(pl.gc_active);
        }
        Ok(pl
            .cb_active
            .get(level.saturating_sub(1))
            .copied()
            .unwrap_or(NIL))
    }

    fn set_level_block(&mut self, p: PlaneId, level: usize, b: u32) -> Result<(), Error> {
        let pl = self.pl_mut(p)?;
        if level == 0 {
            pl.gc_active = b;
            return Ok(());
        }
        *pl.cb_active
            .get_mut(level.saturating_sub(1))
            .ok_or(Error::Corrupt("quota level"))? = b;
        self.refresh_ready(p)
    }

    /// GC active blocks open in plane `p` (every quota level).
    fn open_levels(&self, p: PlaneId) -> Result<u32, Error> {
        let pl = self.pl(p)?;
        let extra = pl.cb_active.iter().filter(|&&b| b != NIL).count() as u32;
        Ok(extra.saturating_add(u32::from(pl.gc_active != NIL)))
    }

    /// Where off-chip GC data goes in plane `p`: the full-quota GC active
    /// block, except when the plane is down to its GC reserve and a lower
    /// level has a block open: then that one (lowest level first), so space
    /// held in half-written level blocks is used rather than trapped. Data
    /// landing below its quota only loses copyback budget, which is safe.
    pub(crate) fn offchip_target(&mut self, p: PlaneId) -> Result<Option<BlockId>, Error> {
        let pl = self.pl(p)?;
        if pl.free_count <= self.cfg.gc_reserve_blocks {
            if let Some(&b) = pl.cb_active.iter().find(|&&b| b != NIL) {
                return Ok(Some(BlockId(b)));
            }
        }
        self.gc_level_target(p, 0, 0)
    }

    /// An open lower-level block of plane `p` to empty when GC finds no
    /// victim: it drops out of its level and becomes the victim, so the
    /// erased pages it pinned return to the plane (NAND erases partly
    /// written blocks). The one with the fewest valid units, once its
    /// programs finished.
    pub(crate) fn evict_level_block(&mut self, p: PlaneId) -> Result<Option<BlockId>, Error> {
        let mut best: Option<(u16, u32)> = None;
        for &b in self.pl(p)?.cb_active.iter() {
            if b == NIL {
                continue;
            }
            let m = self.blk(BlockId(b))?;
            if m.pending == 0 && best.is_none_or(|(v, _)| m.valid < v) {
                best = Some((m.valid, b));
            }
        }
        let Some((_, b)) = best else {
            return Ok(None);
        };
        self.drop_gc_active(p, BlockId(b))?;
        Ok(Some(BlockId(b)))
    }

    /// Forgets `b` as an active block of any GC level of plane `p` (it filled or went bad).
    pub(crate) fn drop_gc_active(&mut self, p: PlaneId, b: BlockId) -> Result<(), Error> {
        let pl = self.pl_mut(p)?;
        if pl.gc_active == b.0 {
            pl.gc_active = NIL;
        }
        for a in pl.cb_active.iter_mut() {
            if *a == b.0 {
                *a = NIL;
            }
        }
        self.refresh_ready(p)
    }

    /// The open GC block of quota level `level` of plane `p`, opening one if
    /// allowed (a free block with a copyback threshold of at least `min_ct`).
    /// Lower levels never take a plane's last free block, so the
    /// off-chip level can always take the rest of a victim's data.
    pub(crate) fn gc_level_target(
        &mut self,
        p: PlaneId,
        level: usize,
        min_ct: u8,
    ) -> Result<Option<BlockId>, Error> {
        let b = self.level_block(p, level)?;
        if b != NIL {
            return Ok(Some(BlockId(b)));
        }
        // A lower level opens only if a whole block of GC destination space
        // (free blocks and erased pages of other level blocks, which take
        // off-chip data when the plane is down to its reserve) stays beside
        // it, so a victim's remaining data (less than a block) always fits.
        // Nor may it open in a plane short of room (see `has_room`).
        if level > 0 {
            let free = self.pl(p)?.free_count;
            let others = self.level_erased_pages(p)?;
            let ppb = self.g.pages_per_block;
            let spare = free
                .saturating_sub(1)
                .saturating_mul(ppb)
                .saturating_add(others);
            if free == 0 || spare < ppb || !self.has_room(p)? {
                return Ok(None);
            }
        }
        let Some(b) = self.open_block_for(p, Stream::Gc, min_ct)? else {
            return Ok(None);
        };
        let quota = self.cb.levels.get(level).copied().unwrap_or(0);
        self.blk_mut(b)?.quota = quota;
        self.set_level_block(p, level, b.0)?;
        let open = self.open_levels(p)?;
        if open > self.stats.epm_active_blocks_max {
            self.stats.epm_active_blocks_max = open;
        }
        Ok(Some(b))
    }

    /// Chooses the migration mode of a new victim of plane `p` (DMMS or greedy).
    pub(crate) fn victim_mode(&mut self, p: PlaneId) -> bool {
        if !self.cfg.copyback.mode.copies_back() {
            return false;
        }
        let urgency = match self.gc_free(p) {
            Ok(f) if f > self.cfg.gc_reserve_blocks => Urgency::Background,
            _ => Urgency::Foreground,
        };
        let mode = self.cb.dmms.select(self.last_now, urgency);
        if mode == Mode::OffChip {
            self.stats.offchip_victims = self.stats.offchip_victims.saturating_add(1);
        }
        mode == Mode::Copyback
    }

    /// Feeds the DMMS moving average with the current write-buffer occupancy.
    pub(crate) fn note_buffer_use(&mut self) {
        if self.cfg.copyback.selector == Selector::Dmms {
            let cap = self.cfg.write_buffer_units;
            let used = cap.saturating_sub(self.wb_free_count);
            self.cb.dmms.record(self.last_now, used, cap);
        }
    }

    fn page_state(&self, page: Ppn) -> Result<u8, Error> {
        self.t
            .page_cb
            .get(page.0 as usize)
            .copied()
            .ok_or(Error::TableTooSmall("page_cb"))
    }

    /// Records the EPM byte of a freshly programmed page (per-page modes).
    pub(crate) fn set_page_state(&mut self, page: Ppn, v: u8) -> Result<(), Error> {
        if self.cfg.copyback.mode.per_page() {
            *self
                .t
                .page_cb
                .get_mut(page.0 as usize)
                .ok_or(Error::TableTooSmall("page_cb"))? = v;
        }
        Ok(())
    }

    /// The EPM byte of a page that has just been written from the controller
    /// (host data or off-chip GC data): a full quota, or a zero counter.
    pub(crate) fn fresh_page_state(&self) -> u8 {
        match self.cfg.copyback.mode {
            CopybackMode::FastGc => 0,
            _ => self.cb.epm.q_init(),
        }
    }

    /// Decides how one victim page with `live` units moves.
    fn page_move(
        &mut self,
        p: PlaneId,
        victim: BlockId,
        page: Ppn,
        live: u8,
    ) -> Result<PageMove, Error> {
        let cp = self.cfg.copyback;
        let upp = self.g.units_per_page;
        let need = if cp.min_live_units == 0 {
            upp
        } else {
            cp.min_live_units.min(upp)
        };
        if !self.pl(p)?.victim_copyback || live < need {
            return Ok(PageMove::OffChip);
        }
        let src_ct = self.block_ct(victim)?;
        let src_quota = self.blk(victim)?.quota;
        // The destination must take the chain too: a hop is costed at the
        // lower threshold of its two ends (a more worn or weaker destination
        // adds more fresh errors at the final read than the source would).
        let mut ct = src_ct;
        for _ in 0..3 {
            let (level, page_state) = match cp.mode {
                CopybackMode::OffChip => return Ok(PageMove::OffChip),
                CopybackMode::Unchecked => (0, 0),
                CopybackMode::FastGc => match epm::decide_counter(self.page_state(page)?, ct) {
                    epm::CounterDecision::Copyback { dst_count } => (0, dst_count),
                    epm::CounterDecision::OffChip { .. } => return Ok(self.epm_refused()),
                },
                CopybackMode::RcftlPerPage => {
                    match self.cb.epm.decide(self.page_state(page)?, ct) {
                        Decision::Copyback { dst_quota } => (0, dst_quota),
                        Decision::OffChip { .. } => return Ok(self.epm_refused()),
                    }
                }
                CopybackMode::Rcftl => match self.cb.epm.decide(src_quota, ct) {
                    // The largest level not above the quota left: never gains budget.
                    Decision::Copyback { dst_quota } => {
                        match self.cb.levels.iter().position(|&q| q <= dst_quota) {
                            Some(l) => (l, 0),
                            None => return Ok(self.epm_refused()),
                        }
                    }
                    Decision::OffChip { .. } => return Ok(self.epm_refused()),
                },
            };
            let unchecked = cp.mode == CopybackMode::Unchecked;
            let min_ct = if unchecked { 0 } else { ct };
            let Some(dst) = self.gc_level_target(p, level, min_ct)? else {
                self.stats.epm_no_block_pages = self.stats.epm_no_block_pages.saturating_add(1);
                return Ok(PageMove::OffChip);
            };
            let dst_ct = self.block_ct(dst)?;
            if unchecked || dst_ct >= ct {
                return Ok(PageMove::Copyback { dst, page_state });
            }
            // An open destination weaker than the source: cost the hop at its threshold.
            ct = dst_ct;
        }
        Ok(self.epm_refused())
    }

    /// Counts a page the EPM check sent off-chip.
    fn epm_refused(&mut self) -> PageMove {
        self.stats.epm_offchip_pages = self.stats.epm_offchip_pages.saturating_add(1);
        PageMove::OffChip
    }

    /// The copyback threshold of block `b` now: its P/E count and BER class
    /// (unmeasured: worst) in the configured table; FastGC's block-unaware
    /// threshold in that mode.
    pub(crate) fn block_ct(&self, b: BlockId) -> Result<u8, Error> {
        let cp = &self.cfg.copyback;
        let m = self.blk(b)?;
        let ber = match cp.mode {
            CopybackMode::FastGc => BerClass::Worst,
            _ => m.ber.unwrap_or(BerClass::Worst),
        };
        Ok(cp.thresholds.threshold(m.pe, ber))
    }

    /// Tries to move victim page `page` (live units `units`) by copyback.
    pub(crate) fn try_copyback(
        &mut self,
        p: PlaneId,
        victim: BlockId,
        page: Ppn,
        units: UnitMask,
    ) -> Result<CopybackStep, Error> {
        if !self.pl(p)?.victim_copyback {
            return Ok(CopybackStep::OffChip);
        }
        if self.pl(p)?.cb_inflight >= MAX_COPYBACKS_IN_FLIGHT {
            return Ok(CopybackStep::Wait);
        }
        if !self.map_room_for_page()? {
            return Ok(CopybackStep::Wait);
        }
        let live = units.count() as u8;
        // Other tags of shared units: a copyback moves the whole page, so
        // their translation pages must fit the budget now or the page goes
        // off-chip, where it can be split (`copy.rs`).
        let mut extra = 0u32;
        for off in 0..self.g.units_per_page {
            if units.contains(off) {
                extra = extra.saturating_add(self.cc_extra_tps(self.g.pun(page, off))?);
            }
        }
        if extra > 0xff_ffff || !self.cc_room_for(extra)? {
            return Ok(CopybackStep::OffChip);
        }
        let PageMove::Copyback { dst, page_state } = self.page_move(p, victim, page, live)? else {
            return Ok(CopybackStep::OffChip);
        };
        let mut spare = Spare {
            kind: PageKind::Data,
            units,
            ..Spare::default()
        };
        for off in 0..self.g.units_per_page {
            if units.contains(off) {
                let lpn = self
                    .p2l(self.g.pun(page, off))?
                    .ok_or(Error::Corrupt("copyback unit vanished"))?;
                if let Some(l) = spare.lpns.get_mut(usize::from(off)) {
                    *l = lpn;
                }
            }
        }
        let dst_page = self.next_page_of(dst, Stream::Gc)?;
        spare.seq = self.next_seq();
        self.map_reserve_page(&spare);
        self.cc_reserve(extra, true);
        let origin = self.pl(p)?.victim_origin;
        self.emit(
            OpKind::GcCopyback,
            NandCmd::Copyback {
                src: page,
                dst: dst_page,
                spare,
            },
            origin,
            live,
            u32::from(page_state) | extra.wrapping_shl(8),
        )?;
        self.emit_due_list_pages()?;
        let pl = self.pl_mut(p)?;
        pl.gc_reads = pl.gc_reads.saturating_add(1);
        pl.cb_inflight = pl.cb_inflight.saturating_add(1);
        Ok(CopybackStep::Issued)
    }

    /// A GC copyback finished: remap the units still current.
    pub(crate) fn gc_copyback_done(
        &mut self,
        cmd: &NandCmd,
        page_state: u32,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::Copyback { src, dst, spare } = cmd else {
            return Err(Error::Corrupt("gc copyback op is not a copyback"));
        };
        self.map_release_page(spare);
        // The op's tag packs the page state (low byte) and the translation
        // pages reserved for shared units' other tags.
        self.cc_reserve(page_state.wrapping_shr(8), false);
        let page_state = page_state & 0xff;
        let db = self.g.block_of(*dst);
        let sb = self.g.block_of(*src);
        let p = self.g.plane_of(db);
        {
            let m = self.blk_mut(db)?;
            m.pending = m.pending.saturating_sub(1);
        }
        {
            let pl = self.pl_mut(p)?;
            pl.gc_reads = pl.gc_reads.saturating_sub(1);
            pl.cb_inflight = pl.cb_inflight.saturating_sub(1);
        }
        match result {
            Ok(_) => {
                self.set_page_state(*dst, page_state as u8)?;
                for off in 0..self.g.units_per_page {
                    if !spare.units.contains(off) {
                        continue;
                    }
                    let Some(&lpn) = spare.lpns.get(usize::from(off)) else {
                        continue;
                    };
                    let from = self.g.pun(*src, off);
                    if let Some(t) = self.reloc_tag(lpn, from)? {
                        let to = self.g.pun(*dst, off);
                        self.move_unit(from, to, t)?;
                    } else {
                        self.stats.gc_stale_units = self.stats.gc_stale_units.saturating_add(1);
                    }
                }
            }
            Err(NandError::ProgramFailed) => {
                // The source is intact: scan the victim again to move what is left.
                self.stats.program_failures = self.stats.program_failures.saturating_add(1);
                self.retire_block(db)?;
                let pl = self.pl_mut(p)?;
                if pl.victim == sb.0 {
                    pl.victim_cursor = 0;
                }
            }
            Err(_) => {
                // The source could not be sensed: its live units are gone.
                for off in 0..self.g.units_per_page {
                    let from = self.g.pun(*src, off);
                    if let Some(lpn) = self.p2l(from)? {
                        if spare.units.contains(off) && self.loc(lpn)? == Loc::Flash(from) {
                            self.lose_unit(from, lpn)?;
                        }
                    }
                }
            }
        }
        self.block_settle(db)?;
        self.attend(p)
    }

    /// After page 0 of block `b` is programmed, reads it once to measure the
    /// block's BER class (modes whose thresholds depend on it).
    pub(crate) fn maybe_classify(&mut self, page: Ppn) -> Result<(), Error> {
        if !self.cfg.copyback.mode.uses_ber_class() || self.g.page_in_block(page) != 0 {
            return Ok(());
        }
        if self.ops_available() == 0 {
            return Ok(());
        }
        self.emit(
            OpKind::Classify,
            NandCmd::Read {
                page,
                units: UnitMask::default(),
                dst: [Slot(0); crate::medium::addr::MAX_UNITS_PER_PAGE],
            },
            Origin::Meta,
            0,
            0,
        )
    }

    /// The classification read finished: record the block's class.
    pub(crate) fn classify_done(&mut self, cmd: &NandCmd, result: NandResult) -> Result<(), Error> {
        let NandCmd::Read { page, .. } = cmd else {
            return Err(Error::Corrupt("classify op is not a read"));
        };
        let b = self.g.block_of(*page);
        if let Ok(r) = result {
            let m = *self.blk(b)?;
            if matches!(m.state, BlockState::Open | BlockState::Full) {
                let class = self.cfg.copyback.classifier.classify(m.pe, r.bit_errors);
                self.blk_mut(b)?.ber = Some(class);
                self.stats.classified_blocks = self.stats.classified_blocks.saturating_add(1);
            }
        }
        Ok(())
    }
}

/// Bytes of copyback state a drive of geometry `g` keeps in `mode` (the
/// `memory.epm_bytes` report key), from [`epm::memory_bytes`].
pub fn epm_bytes(g: &crate::medium::addr::Geometry, p: &CopybackPolicy) -> Result<u64, Error> {
    let st = CopybackState::new(p)?;
    let q = st.epm.q_init();
    let v = match p.mode {
        CopybackMode::OffChip | CopybackMode::Unchecked => return Ok(0),
        CopybackMode::FastGc => epm::EpmVariant::PerPageCounter {
            max_ct: p.thresholds.thresholds_in_force().max(),
        },
        CopybackMode::RcftlPerPage => epm::EpmVariant::PerPageQuota { q_init: q },
        CopybackMode::Rcftl => epm::EpmVariant::PerBlockQuota { q_init: q },
    };
    Ok(epm::memory_bytes(g, v))
}

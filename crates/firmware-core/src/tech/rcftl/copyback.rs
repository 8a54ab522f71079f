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

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::{Hooks, MigrateStep};
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::{Ftl, Stream};
use crate::map::loc::Loc;
use crate::medium::addr::{in_page, BlockId, PlaneId, Ppn, UnitMask};
use crate::medium::nand::{NandCmd, NandError, NandResult, Origin, PageKind, Slot, Spare};
use crate::tech::rcftl::ctt::BerClass;
use crate::tech::rcftl::dmms::{self, Mode, Urgency};
use crate::tech::rcftl::epm::{self, Decision, Quota};
pub use crate::tech::rcftl::policy::{
    CopybackMode, CopybackPolicy, Selector, MAX_COPYBACKS_IN_FLIGHT, MAX_LEVELS,
};
use crate::tech::rcftl::{HasRcftl, RcFtl};

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
                .map_err(|_| rare(Error::Corrupt(&"quota levels")))?;
            let room = MAX_LEVELS.saturating_sub(1);
            for q in epm.reachable_quotas().iter_desc() {
                if q == 0 || q == q_init || q < smallest || levels.len() >= room {
                    // Beyond the cap, data drops to the next level kept: safe.
                    continue;
                }
                levels
                    .push(q)
                    .map_err(|_| rare(Error::Corrupt(&"quota levels")))?;
            }
            if q_init != 0 {
                levels
                    .push(0)
                    .map_err(|_| rare(Error::Corrupt(&"quota levels")))?;
            }
        } else {
            levels
                .push(epm.q_init())
                .map_err(|_| rare(Error::Corrupt(&"quota levels")))?;
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

/// rcFTL's state, which every function here is only called with.
fn rc<'r, 'a, H: HasRcftl<'a>>(f: &'r Ftl<'_, H>) -> Result<&'r RcFtl<'a>, Error> {
    f.h.rcftl().or_rare(Error::Corrupt(&"rcftl state missing"))
}

fn rc_mut<'r, 'a, H: HasRcftl<'a>>(f: &'r mut Ftl<'_, H>) -> Result<&'r mut RcFtl<'a>, Error> {
    f.h.rcftl_mut()
        .or_rare(Error::Corrupt(&"rcftl state missing"))
}

/// The open GC block of quota level `level` of plane `p` (`NIL` if none):
/// level 0 is the core's GC active block.
fn level_block<'a, H: Hooks + HasRcftl<'a>>(
    f: &Ftl<'_, H>,
    p: PlaneId,
    level: usize,
) -> Result<u32, Error> {
    if level == 0 {
        return Ok(f.pl(p)?.gc_active);
    }
    Ok(rc(f)?
        .plane(p)?
        .levels
        .get(level.saturating_sub(1))
        .copied()
        .unwrap_or(NIL))
}

fn set_level_block<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    level: usize,
    b: u32,
) -> Result<(), Error> {
    if level == 0 {
        f.pl_mut(p)?.gc_active = b;
        return Ok(());
    }
    *rc_mut(f)?
        .plane_mut(p)?
        .levels
        .get_mut(level.saturating_sub(1))
        .or_rare(Error::Corrupt(&"quota level"))? = b;
    f.refresh_ready(p)
}

/// Open lower-level blocks of plane `p` (the [`Migration::held_blocks`] hook).
pub(crate) fn held_blocks<'a, H: Hooks + HasRcftl<'a>>(
    f: &Ftl<'_, H>,
    p: PlaneId,
) -> Result<u32, Error> {
    let Some(rc) = f.h.rcftl() else {
        return Ok(0);
    };
    Ok(rc.plane(p)?.levels.iter().filter(|&&b| b != NIL).count() as u32)
}

/// Erased pages left in the open lower-level blocks of plane `p`.
pub(crate) fn held_erased_pages<'a, H: Hooks + HasRcftl<'a>>(
    f: &Ftl<'_, H>,
    p: PlaneId,
) -> Result<u32, Error> {
    let Some(rc) = f.h.rcftl() else {
        return Ok(0);
    };
    let ppb = f.g.pages_per_block;
    let mut erased = 0u32;
    for &b in rc.plane(p)?.levels.iter() {
        if b != NIL {
            let next = u32::from(f.blk(BlockId(b))?.next_page);
            erased = erased.wrapping_add(ppb.saturating_sub(next));
        }
    }
    Ok(erased)
}

/// Whether `b` is an open lower-level block of plane `p`.
pub(crate) fn holds<'a, H: Hooks + HasRcftl<'a>>(
    f: &Ftl<'_, H>,
    p: PlaneId,
    b: BlockId,
) -> Result<bool, Error> {
    let Some(rc) = f.h.rcftl() else {
        return Ok(false);
    };
    Ok(rc.plane(p)?.levels.contains(&b.0))
}

/// Where off-chip GC data goes in plane `p`: the full-quota GC active
/// block, except when the plane is down to its GC reserve and a lower
/// level has a block open: then that one (lowest level first), so space
/// held in half-written level blocks is used rather than trapped. Data
/// landing below its quota only loses copyback budget, which is safe.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn offchip_target<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
) -> Result<Option<BlockId>, Error> {
    if let Some(rc) = f.h.rcftl() {
        if f.pl(p)?.free_count <= f.cfg.gc_reserve_blocks {
            if let Some(&b) = rc.plane(p)?.levels.iter().find(|&&b| b != NIL) {
                return Ok(Some(BlockId(b)));
            }
        }
    }
    f.gc_target(p)
}

/// An open lower-level block of plane `p` to empty when GC finds no
/// victim: it drops out of its level and becomes the victim, so the
/// erased pages it pinned return to the plane (NAND erases partly
/// written blocks). The one with the fewest valid units, once its
/// programs finished.
pub(crate) fn reclaim_open<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
) -> Result<Option<BlockId>, Error> {
    let Some(rc) = f.h.rcftl() else {
        return Ok(None);
    };
    let mut best: Option<(u16, u32)> = None;
    for &b in rc.plane(p)?.levels.iter() {
        if b == NIL {
            continue;
        }
        let m = f.blk(BlockId(b))?;
        if m.pending == 0 && best.is_none_or(|(v, _)| m.valid < v) {
            best = Some((m.valid, b));
        }
    }
    let Some((_, b)) = best else {
        return Ok(None);
    };
    f.gc_block_closed(p, BlockId(b))?;
    Ok(Some(BlockId(b)))
}

/// Forgets `b` as an open lower-level block of plane `p` (it filled or went bad).
pub(crate) fn gc_block_closed<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    b: BlockId,
) -> Result<(), Error> {
    if let Some(rc) = f.h.rcftl_mut() {
        for a in rc.plane_mut(p)?.levels.iter_mut() {
            if *a == b.0 {
                *a = NIL;
            }
        }
    }
    Ok(())
}

/// Every block of plane `p` was retired: no level block stays open.
pub(crate) fn plane_retired<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
) -> Result<(), Error> {
    if let Some(rc) = f.h.rcftl_mut() {
        rc.plane_mut(p)?.levels = [NIL; MAX_LEVELS - 1];
    }
    Ok(())
}

/// A block opened for writes starts at the full quota.
pub(crate) fn block_opened<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    b: BlockId,
) -> Result<(), Error> {
    if let Some(rc) = f.h.rcftl_mut() {
        let q = rc.st.epm.q_init();
        rc.block_mut(b)?.quota = q;
    }
    Ok(())
}

/// Whether free block `b` can take a copyback chain costed at `min_ct`.
pub(crate) fn block_fits<'a, H: Hooks + HasRcftl<'a>>(
    f: &Ftl<'_, H>,
    b: BlockId,
    min_ct: u8,
) -> Result<bool, Error> {
    Ok(block_ct(f, b)? >= min_ct)
}

/// The open GC block of quota level `level` of plane `p`, opening one if
/// allowed (a free block with a copyback threshold of at least `min_ct`).
/// Lower levels never take a plane's last free block, so the
/// off-chip level can always take the rest of a victim's data.
fn gc_level_target<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    level: usize,
    min_ct: u8,
) -> Result<Option<BlockId>, Error> {
    if level == 0 && min_ct == 0 {
        return f.gc_target(p);
    }
    let b = level_block(f, p, level)?;
    if b != NIL {
        return Ok(Some(BlockId(b)));
    }
    // A lower level opens only if a whole block of GC destination space
    // (free blocks and erased pages of other level blocks, which take
    // off-chip data when the plane is down to its reserve) stays beside
    // it, so a victim's remaining data (less than a block) always fits.
    // Nor may it open in a plane short of room (see `has_room`).
    if level > 0 {
        let free = f.pl(p)?.free_count;
        let others = held_erased_pages(f, p)?;
        let ppb = f.g.pages_per_block;
        let spare = free
            .saturating_sub(1)
            .saturating_mul(ppb)
            .wrapping_add(others);
        if free == 0 || spare < ppb {
            f.stats.epm_no_room_pages = f.stats.epm_no_room_pages.wrapping_add(1);
            return Ok(None);
        }
        if !f.has_room(p)? {
            f.stats.epm_full_plane_pages = f.stats.epm_full_plane_pages.wrapping_add(1);
            return Ok(None);
        }
    }
    let Some(b) = f.open_block_for(p, Stream::Gc, min_ct)? else {
        return Ok(None);
    };
    let r = rc_mut(f)?;
    let quota = r.st.levels.get(level).copied().unwrap_or(0);
    r.block_mut(b)?.quota = quota;
    set_level_block(f, p, level, b.0)?;
    f.note_gc_blocks(p)?;
    Ok(Some(b))
}

/// Chooses the migration mode of a new victim of plane `p` (DMMS or greedy).
pub(crate) fn victim_chosen<'a, H: Hooks + HasRcftl<'a>>(f: &mut Ftl<'_, H>, p: PlaneId) {
    let copyback = victim_mode(f, p);
    if let Some(Ok(pl)) = f.h.rcftl_mut().map(|rc| rc.plane_mut(p)) {
        pl.victim_copyback = copyback;
    }
}

fn victim_mode<'a, H: Hooks + HasRcftl<'a>>(f: &mut Ftl<'_, H>, p: PlaneId) -> bool {
    if !f.cfg.copyback.mode.copies_back() {
        return false;
    }
    let urgency = match f.gc_free(p) {
        Ok(free) if free > f.cfg.gc_reserve_blocks => Urgency::Background,
        _ => Urgency::Foreground,
    };
    let now = f.last_now;
    let Some(rc) = f.h.rcftl_mut() else {
        return false;
    };
    let mode = rc.st.dmms.select(now, urgency);
    if mode == Mode::OffChip {
        f.stats.offchip_victims = f.stats.offchip_victims.wrapping_add(1);
    }
    mode == Mode::Copyback
}

/// Feeds the DMMS moving average with the current write-buffer occupancy.
pub(crate) fn buffer_use<'a, H: Hooks + HasRcftl<'a>>(f: &mut Ftl<'_, H>) {
    if f.cfg.copyback.selector == Selector::Dmms {
        let cap = f.cfg.write_buffer_units;
        let used = cap.saturating_sub(f.wb_free_count);
        let now = f.last_now;
        if let Some(rc) = f.h.rcftl_mut() {
            rc.st.dmms.record(now, used, cap);
        }
    }
}

fn page_state<'a, H: Hooks + HasRcftl<'a>>(f: &Ftl<'_, H>, page: Ppn) -> Result<u8, Error> {
    rc(f)?
        .t
        .pages
        .get(page.0 as usize)
        .copied()
        .or_rare(Error::TableTooSmall(&"rcftl pages"))
}

/// Records the EPM byte of a freshly programmed page (per-page modes).
fn set_page_state<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    page: Ppn,
    v: u8,
) -> Result<(), Error> {
    if f.cfg.copyback.mode.per_page() {
        *rc_mut(f)?
            .t
            .pages
            .get_mut(page.0 as usize)
            .or_rare(Error::TableTooSmall(&"rcftl pages"))? = v;
    }
    Ok(())
}

/// Mount: how many copybacks a page's data went through is kept in DRAM
/// only, so after a power cut it is unknown. Every page's budget is taken
/// as spent (quota 0, or a counter at its top): the next move of data
/// written before the cut goes off-chip, through ECC, which gives it the
/// full budget again. Blocks opened after the mount start as usual.
pub(crate) fn mounting<'a, H: Hooks + HasRcftl<'a>>(f: &mut Ftl<'_, H>) -> Result<(), Error> {
    let spent = match f.cfg.copyback.mode {
        CopybackMode::FastGc => u8::MAX,
        _ => 0,
    };
    let Some(rc) = f.h.rcftl_mut() else {
        return Ok(());
    };
    for b in rc.t.blocks.iter_mut() {
        b.quota = 0;
    }
    rc.t.pages.fill(spent);
    Ok(())
}

/// A page was just written from the controller (host data or off-chip GC
/// data): its EPM byte is a full quota, or a zero counter; a block's first
/// page is read once to measure the block's BER class.
pub(crate) fn page_programmed<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    page: Ppn,
) -> Result<(), Error> {
    let Some(rc) = f.h.rcftl() else {
        return Ok(());
    };
    let fresh = match f.cfg.copyback.mode {
        CopybackMode::FastGc => 0,
        _ => rc.st.epm.q_init(),
    };
    set_page_state(f, page, fresh)?;
    maybe_classify(f, page)
}

/// Decides how one victim page with `live` units moves.
fn page_move<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    victim: BlockId,
    page: Ppn,
    live: u8,
) -> Result<PageMove, Error> {
    let cp = f.cfg.copyback;
    let upp = f.g.units_per_page;
    let need = if cp.min_live_units == 0 {
        upp
    } else {
        cp.min_live_units.min(upp)
    };
    if !rc(f)?.plane(p)?.victim_copyback || live < need {
        return Ok(PageMove::OffChip);
    }
    let src_ct = block_ct(f, victim)?;
    let src_quota = rc(f)?.block(victim)?.quota;
    // The destination must take the chain too: a hop is costed at the
    // lower threshold of its two ends (a more worn or weaker destination
    // adds more fresh errors at the final read than the source would).
    let mut ct = src_ct;
    for _ in 0..3 {
        let (level, page_state) = match cp.mode {
            CopybackMode::OffChip => return Ok(PageMove::OffChip),
            CopybackMode::Unchecked => (0, 0),
            CopybackMode::FastGc => match epm::decide_counter(page_state(f, page)?, ct) {
                epm::CounterDecision::Copyback { dst_count } => (0, dst_count),
                epm::CounterDecision::OffChip { .. } => return Ok(epm_refused(f)),
            },
            CopybackMode::RcftlPerPage => match rc(f)?.st.epm.decide(page_state(f, page)?, ct) {
                Decision::Copyback { dst_quota } => (0, dst_quota),
                Decision::OffChip { .. } => return Ok(epm_refused(f)),
            },
            CopybackMode::Rcftl => {
                let st = &rc(f)?.st;
                match st.epm.decide(src_quota, ct) {
                    // The largest level not above the quota left: never gains budget.
                    Decision::Copyback { dst_quota } => {
                        match st.levels.iter().position(|&q| q <= dst_quota) {
                            Some(l) => (l, 0),
                            None => return Ok(epm_refused(f)),
                        }
                    }
                    Decision::OffChip { .. } => return Ok(epm_refused(f)),
                }
            }
        };
        let unchecked = cp.mode == CopybackMode::Unchecked;
        let min_ct = if unchecked { 0 } else { ct };
        let Some(dst) = gc_level_target(f, p, level, min_ct)? else {
            f.stats.epm_no_block_pages = f.stats.epm_no_block_pages.wrapping_add(1);
            return Ok(PageMove::OffChip);
        };
        let dst_ct = block_ct(f, dst)?;
        if unchecked || dst_ct >= ct {
            return Ok(PageMove::Copyback { dst, page_state });
        }
        // An open destination weaker than the source: cost the hop at its threshold.
        ct = dst_ct;
    }
    Ok(epm_refused(f))
}

/// Counts a page the EPM check sent off-chip.
fn epm_refused<H: Hooks>(f: &mut Ftl<'_, H>) -> PageMove {
    f.stats.epm_offchip_pages = f.stats.epm_offchip_pages.wrapping_add(1);
    PageMove::OffChip
}

/// The copyback threshold of block `b` now: its P/E count and BER class
/// (unmeasured: worst) in the configured table; FastGC's block-unaware
/// threshold in that mode.
pub(crate) fn block_ct<'a, H: Hooks + HasRcftl<'a>>(
    f: &Ftl<'_, H>,
    b: BlockId,
) -> Result<u8, Error> {
    let cp = &f.cfg.copyback;
    let pe = f.blk(b)?.pe;
    let ber = match (cp.mode, f.h.rcftl()) {
        (CopybackMode::FastGc, _) | (_, None) => BerClass::Worst,
        (_, Some(rc)) => rc.block(b)?.ber.unwrap_or(BerClass::Worst),
    };
    Ok(cp.thresholds.threshold(pe, ber))
}

/// Tries to move victim page `page` (live units `units`) by copyback.
/// The victim's pages go off-chip unless rcFTL chose copyback for it:
/// that answer stays inline, the copyback path is a call.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn try_copyback<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    victim: BlockId,
    page: Ppn,
    units: UnitMask,
) -> Result<MigrateStep, Error> {
    match f.h.rcftl() {
        Some(rc) if rc.plane(p)?.victim_copyback => copyback_page(f, p, victim, page, units),
        _ => Ok(MigrateStep::OffChip),
    }
}

/// Whether plane `p`'s victim moves by copyback ([`try_copyback`] may
/// take its pages without GC slots).
#[inline(always)]
pub(crate) fn in_plane<'a, H: Hooks + HasRcftl<'a>>(f: &Ftl<'_, H>, p: PlaneId) -> bool {
    f.h.rcftl()
        .and_then(|rc| rc.plane(p).ok())
        .is_some_and(|pl| pl.victim_copyback)
}

/// [`try_copyback`] for a victim rcFTL moves by copyback.
fn copyback_page<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    victim: BlockId,
    page: Ppn,
    units: UnitMask,
) -> Result<MigrateStep, Error> {
    let Some(rc) = f.h.rcftl() else {
        return Ok(MigrateStep::OffChip);
    };
    let pl = rc.plane(p)?;
    if pl.inflight >= MAX_COPYBACKS_IN_FLIGHT {
        return Ok(MigrateStep::Wait);
    }
    if !f.map_room_for_page()? {
        return Ok(MigrateStep::Wait);
    }
    let live = units.count() as u8;
    // Other tags of shared units: a copyback moves the whole page, so
    // their translation pages must fit the budget now or the page goes
    // off-chip, where it can be split (`copy.rs`).
    let mut extra = 0u32;
    for off in 0..f.g.units_per_page {
        if units.contains(off) {
            extra = extra.wrapping_add(H::extra_tps(f, f.g.pun(page, off))?);
        }
    }
    if extra > 0xff_ffff || !H::room_for_extra(f, extra)? {
        return Ok(MigrateStep::OffChip);
    }
    let PageMove::Copyback { dst, page_state } = page_move(f, p, victim, page, live)? else {
        return Ok(MigrateStep::OffChip);
    };
    let mut spare = Spare {
        kind: PageKind::Data,
        units,
        ..Spare::default()
    };
    for off in 0..f.g.units_per_page {
        if units.contains(off) {
            let lpn = f
                .p2l(f.g.pun(page, off))?
                .or_rare(Error::Corrupt(&"copyback unit vanished"))?;
            if let Some(l) = spare.lpns.get_mut(in_page(usize::from(off))) {
                *l = lpn;
            }
        }
    }
    let (dst_page, pe) = f.claim_page(dst, Stream::Gc)?;
    spare.seq = f.next_seq();
    f.map_reserve_page(&spare);
    H::reserve_extra(f, extra, true);
    let origin = f.pl(p)?.victim_origin;
    f.emit_in(
        Some((dst, pe)),
        OpKind::Migrate,
        NandCmd::Copyback {
            src: page,
            dst: dst_page,
            spare,
        },
        origin,
        live,
        u32::from(page_state) | extra.wrapping_shl(8),
    )?;
    H::emit_due(f)?;
    let pl = f.pl_mut(p)?;
    pl.gc_reads = pl.gc_reads.wrapping_add(1);
    let rp = rc_mut(f)?.plane_mut(p)?;
    rp.inflight = rp.inflight.wrapping_add(1);
    Ok(MigrateStep::Issued)
}

/// A GC copyback finished: remap the units still current.
pub(crate) fn copyback_done<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    cmd: &NandCmd,
    page_state: u32,
    result: NandResult,
) -> Result<(), Error> {
    let NandCmd::Copyback { src, dst, spare } = cmd else {
        return Err(rare(Error::Corrupt(&"gc copyback op is not a copyback")));
    };
    f.map_release_page(spare);
    // The op's tag packs the page state (low byte) and the translation
    // pages reserved for shared units' other tags.
    H::reserve_extra(f, page_state.wrapping_shr(8), false);
    let page_state = page_state & 0xff;
    let db = f.g.block_of(*dst);
    let sb = f.g.block_of(*src);
    let p = f.g.plane_of(db);
    {
        let m = f.blk_mut(db)?;
        m.pending = m.pending.saturating_sub(1);
    }
    {
        let pl = f.pl_mut(p)?;
        pl.gc_reads = pl.gc_reads.saturating_sub(1);
        let rp = rc_mut(f)?.plane_mut(p)?;
        rp.inflight = rp.inflight.saturating_sub(1);
    }
    match result {
        Ok(_) => {
            set_page_state(f, *dst, page_state as u8)?;
            for off in 0..f.g.units_per_page {
                if !spare.units.contains(off) {
                    continue;
                }
                let Some(&lpn) = spare.lpns.get(in_page(usize::from(off))) else {
                    continue;
                };
                let from = f.g.pun(*src, off);
                if let Some(t) = f.reloc_tag(lpn, from)? {
                    let to = f.g.pun(*dst, off);
                    f.move_unit(from, p, to, (db, p), t)?;
                } else {
                    f.stats.gc_stale_units = f.stats.gc_stale_units.wrapping_add(1);
                }
            }
        }
        Err(NandError::ProgramFailed) => {
            // The source is intact: scan the victim again to move what is left.
            f.stats.program_failures = f.stats.program_failures.wrapping_add(1);
            f.retire_block(db)?;
            let pl = f.pl_mut(p)?;
            if pl.victim == sb.0 {
                pl.victim_cursor = 0;
            }
        }
        Err(_) => {
            // The source could not be sensed: its live units are gone.
            for off in 0..f.g.units_per_page {
                let from = f.g.pun(*src, off);
                if let Some(lpn) = f.p2l(from)? {
                    if spare.units.contains(off) && f.loc(lpn)? == Loc::Flash(from) {
                        f.lose_unit(from, lpn)?;
                    }
                }
            }
        }
    }
    f.block_settle(db)?;
    f.attend(p)
}

/// After page 0 of block `b` is programmed, reads it once to measure the
/// block's BER class (modes whose thresholds depend on it).
fn maybe_classify<'a, H: Hooks + HasRcftl<'a>>(f: &mut Ftl<'_, H>, page: Ppn) -> Result<(), Error> {
    if !f.cfg.copyback.mode.uses_ber_class() || f.g.page_in_block(page) != 0 {
        return Ok(());
    }
    if f.ops_available() == 0 {
        return Ok(());
    }
    f.emit(
        OpKind::Probe,
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
pub(crate) fn classify_done<'a, H: Hooks + HasRcftl<'a>>(
    f: &mut Ftl<'_, H>,
    cmd: &NandCmd,
    result: NandResult,
) -> Result<(), Error> {
    let NandCmd::Read { page, .. } = cmd else {
        return Err(rare(Error::Corrupt(&"classify op is not a read")));
    };
    let b = f.g.block_of(*page);
    if let Ok(r) = result {
        let m = *f.blk(b)?;
        if matches!(m.state, BlockState::Open | BlockState::Full) {
            let class = f.cfg.copyback.classifier.classify(m.pe, r.bit_errors);
            rc_mut(f)?.block_mut(b)?.ber = Some(class);
            f.stats.classified_blocks = f.stats.classified_blocks.wrapping_add(1);
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    //! rcFTL over the mechanism: a real core on the test medium.
    use super::*;
    use crate::config::Config;
    use crate::test_nand::{small_geometry, with_core};
    use crate::{Lpn, ReadValue};
    use std::vec;

    fn run(mode: CopybackMode) -> (crate::Stats, u32) {
        run_at(mode, 0.5)
    }

    fn run_at(mode: CopybackMode, op: f64) -> (crate::Stats, u32) {
        let mut cfg = Config::with_op_ratio(small_geometry(1), op).unwrap();
        cfg.write_buffer_units = 8;
        cfg.read_slots = 4;
        cfg.max_inflight = 32;
        cfg.copyback = CopybackPolicy {
            mode,
            ..CopybackPolicy::OFF_CHIP
        };
        with_core(cfg, |ftl, drv| {
            let n = cfg.logical_units;
            let mut oracle = vec![0u64; n as usize];
            let mut x = 7u32;
            for i in 1..=u64::from(n) * 8 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let l = (x >> 8) % n;
                drv.write(ftl, Lpn(l), i).unwrap();
                oracle[l as usize] = i;
            }
            drv.flush(ftl).unwrap();
            for (l, &v) in oracle.iter().enumerate() {
                let want = if v == 0 {
                    ReadValue::Unmapped
                } else {
                    ReadValue::Data(v)
                };
                assert_eq!(drv.read(ftl, Lpn(l as u32)).unwrap(), want, "lpn {l}");
            }
            ftl.audit().unwrap();
            let levels = ftl.hooks().rcftl().map_or(0, |r| r.st.levels.len() as u32);
            (*ftl.stats(), levels)
        })
    }

    #[test]
    fn per_block_quota_copies_back_into_quota_level_blocks() {
        let (s, levels) = run(CopybackMode::Rcftl);
        assert!(s.nand_copybacks > 0, "GC copied back: {s:?}");
        assert!(levels > 1, "quota levels below the full quota exist");
        assert!(
            s.epm_active_blocks_max > 1,
            "a plane held a lower-level GC block open beside its GC active block"
        );
    }

    #[test]
    fn tight_spare_refuses_level_blocks_for_room_and_says_so() {
        // Planes reach their GC reserve under sustained overwrites, so
        // lower quota levels sometimes cannot open a block beside the GC
        // active one.
        let (s, _) = run_at(CopybackMode::Rcftl, 0.5);
        assert!(s.epm_no_room_pages > 0, "{s:?}");
        assert!(
            s.epm_no_room_pages + s.epm_full_plane_pages <= s.epm_no_block_pages,
            "the causes split the refusals: {s:?}"
        );
        // The per-page variant writes every page into the GC active block.
        let (pp, _) = run_at(CopybackMode::RcftlPerPage, 0.5);
        assert_eq!(pp.epm_no_room_pages, 0, "{pp:?}");
    }

    #[test]
    fn off_chip_mode_keeps_no_rcftl_state_and_never_copies_back() {
        let (s, levels) = run(CopybackMode::OffChip);
        assert_eq!(s.nand_copybacks, 0);
        assert_eq!(levels, 0);
        assert!(s.gc_victims > 0);
    }
}

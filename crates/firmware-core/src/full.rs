//! The full build: every technique the enabled features compile, plugged
//! into the core's hooks and chosen at run time by the configuration.
//!
//! Each hook is forwarded to the technique that owns it; a technique the
//! configuration leaves off keeps no state and every hook it owns answers
//! as the baseline does.

use crate::config::Config;
use crate::error::Error;
use crate::ftl::hooks::{
    Build, EraseStrategy, FlushOrder, Hooks, MigrateStep, Migration, OpObserver, Ownership,
    Placement,
};
use crate::ftl::host::CopyStop;
use crate::ftl::lend::Lend;
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::{BlockId, Lpn, PlaneId, Ppn, Pun, UnitMask};
use crate::medium::nand::{NandCmd, NandResult, Slot};
use crate::persist::Tpn;
use crate::tech::copyless;
use crate::tech::copyless::copy::{self as cc, HasCopyless};
use crate::tech::copyless::refcount::{CopylessMap, CopylessTables};
use crate::tech::dawid::{self, HasLidf, LidfOrder, LidfOrderTables};
use crate::tech::longftl::gerase::{self as ge, Guard, GuardTables, HasLongftl};
use crate::tech::rcftl::{self, copyback as rc, HasRcftl, RcFtl};
use crate::tech::reparo::superblock::{self as sb, HasSuperblocks, Superblocks};

/// The techniques of the seed papers behind the core's hooks.
pub struct Techniques<'a> {
    rcftl: Option<RcFtl<'a>>,
    longftl: Option<Guard<'a>>,
    copyless: Option<CopylessMap<'a>>,
    superblocks: Option<Superblocks>,
    lidf: Option<LidfOrder<'a>>,
}

impl Techniques<'_> {
    /// The gErase modes used so far, oldest first (`[0]` when GuardedErase is off).
    pub fn gerase_mode_history(&self) -> &[u8] {
        self.longftl.as_ref().map_or(&[0], |g| g.mode_history())
    }

    /// The stable WAF (thousandths) recorded for gErase mode `mode`, if any.
    pub fn gerase_waf(&self, mode: usize) -> Option<u32> {
        self.longftl.as_ref()?.mode_waf(mode)
    }
}

/// The slices the techniques keep their state in.
pub struct TechTables<'a> {
    rcftl: rcftl::RcTables<'a>,
    longftl: GuardTables<'a>,
    copyless: CopylessTables<'a>,
    lidf: LidfOrderTables<'a>,
}

impl Hooks for Techniques<'_> {}

impl<'a> Build<'a> for Techniques<'a> {
    type Tables = TechTables<'a>;

    fn lend<L: Lend<'a>>(cfg: &Config, l: &mut L) -> Result<TechTables<'a>, Error> {
        Ok(TechTables {
            rcftl: rcftl::RcTables::lend(cfg, l)?,
            longftl: GuardTables::lend(cfg, l)?,
            copyless: copyless::lend(cfg, l)?,
            lidf: LidfOrder::lend(cfg, l)?,
        })
    }

    fn build(cfg: &Config, t: TechTables<'a>) -> Result<Self, Error> {
        Ok(Techniques {
            rcftl: RcFtl::new(cfg, t.rcftl)?,
            longftl: Guard::new(cfg, t.longftl)?,
            copyless: copyless::build(cfg, t.copyless)?,
            superblocks: Superblocks::new(cfg),
            lidf: LidfOrder::new(t.lidf)?,
        })
    }
}

impl<'a> HasRcftl<'a> for Techniques<'a> {
    fn rcftl(&self) -> Option<&RcFtl<'a>> {
        self.rcftl.as_ref()
    }
    fn rcftl_mut(&mut self) -> Option<&mut RcFtl<'a>> {
        self.rcftl.as_mut()
    }
}

impl<'a> HasLongftl<'a> for Techniques<'a> {
    fn longftl(&self) -> Option<&Guard<'a>> {
        self.longftl.as_ref()
    }
    fn longftl_mut(&mut self) -> Option<&mut Guard<'a>> {
        self.longftl.as_mut()
    }
}

impl Migration for Techniques<'_> {
    fn victim_chosen(f: &mut Ftl<'_, Self>, p: PlaneId) {
        rc::victim_chosen(f, p)
    }
    fn try_migrate(
        f: &mut Ftl<'_, Self>,
        p: PlaneId,
        victim: BlockId,
        page: Ppn,
        units: UnitMask,
    ) -> Result<MigrateStep, Error> {
        rc::try_copyback(f, p, victim, page, units)
    }
    fn migrate_done(
        f: &mut Ftl<'_, Self>,
        cmd: &NandCmd,
        tag: u32,
        result: NandResult,
    ) -> Result<(), Error> {
        rc::copyback_done(f, cmd, tag, result)
    }
    fn offchip_target(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error> {
        rc::offchip_target(f, p)
    }
    fn reclaim_open(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error> {
        rc::reclaim_open(f, p)
    }
    fn held_blocks(f: &Ftl<'_, Self>, p: PlaneId) -> Result<u32, Error> {
        rc::held_blocks(f, p)
    }
    fn held_erased_pages(f: &Ftl<'_, Self>, p: PlaneId) -> Result<u32, Error> {
        rc::held_erased_pages(f, p)
    }
    fn holds(f: &Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<bool, Error> {
        rc::holds(f, p, b)
    }
    fn gc_block_closed(f: &mut Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<(), Error> {
        rc::gc_block_closed(f, p, b)
    }
    fn plane_retired(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<(), Error> {
        rc::plane_retired(f, p)
    }
    fn block_opened(f: &mut Ftl<'_, Self>, b: BlockId) -> Result<(), Error> {
        rc::block_opened(f, b)
    }
    fn block_fits(f: &Ftl<'_, Self>, b: BlockId, need: u8) -> Result<bool, Error> {
        rc::block_fits(f, b, need)
    }
    fn page_programmed(f: &mut Ftl<'_, Self>, page: Ppn) -> Result<(), Error> {
        rc::page_programmed(f, page)
    }
    fn probe_done(f: &mut Ftl<'_, Self>, cmd: &NandCmd, result: NandResult) -> Result<(), Error> {
        rc::classify_done(f, cmd, result)
    }
    fn buffer_use(f: &mut Ftl<'_, Self>) {
        rc::buffer_use(f)
    }
}

impl EraseStrategy for Techniques<'_> {
    fn victim_erase(f: &mut Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<NandCmd, Error> {
        ge::victim_erase(f, p, b)
    }
    fn erased(f: &mut Ftl<'_, Self>, cmd: &NandCmd) -> Result<(), Error> {
        ge::guard_erased(f, cmd)
    }
    fn forget(f: &mut Ftl<'_, Self>, b: BlockId) -> Result<(), Error> {
        ge::guard_forget(f, b)
    }
    #[inline]
    fn skip_units(f: &Ftl<'_, Self>, b: BlockId) -> u16 {
        ge::skip_units(f, b)
    }
    fn usable_page(f: &Ftl<'_, Self>, b: BlockId, page: u32) -> u32 {
        ge::usable_page(f, b, page)
    }
    fn open_preference(f: &Ftl<'_, Self>, stream: Stream) -> Option<bool> {
        ge::guard_preference(f, stream)
    }
    fn free_rank(f: &Ftl<'_, Self>, b: BlockId, pref: Option<bool>) -> (bool, u16) {
        (
            pref.is_some_and(|g| g != ge::is_guarded(f, b)),
            ge::gerase_count(f, b),
        )
    }
    fn opened(f: &mut Ftl<'_, Self>, b: BlockId) {
        ge::guard_opened(f, b)
    }
}

impl OpObserver for Techniques<'_> {
    fn read_done(f: &mut Ftl<'_, Self>, page: Ppn, result: &NandResult) -> Result<(), Error> {
        ge::guard_read(f, page, result)
    }
}

impl<'a> HasCopyless<'a> for Techniques<'a> {
    fn copyless(&self) -> Option<&CopylessMap<'a>> {
        self.copyless.as_ref()
    }
    fn copyless_mut(&mut self) -> Option<&mut CopylessMap<'a>> {
        self.copyless.as_mut()
    }
}

impl Ownership for Techniques<'_> {
    fn shares(f: &Ftl<'_, Self>) -> bool {
        f.h.copyless.is_some()
    }
    fn copy_unit(f: &mut Ftl<'_, Self>, s: Lpn, d: Lpn) -> Result<Option<CopyStop>, Error> {
        cc::copy_unit(f, s, d)
    }
    fn release(f: &mut Ftl<'_, Self>, p: Pun, lpn: Lpn) -> Result<(), Error> {
        cc::release(f, p, lpn)
    }
    fn programmed_unit(f: &mut Ftl<'_, Self>, p: Pun) -> Result<(), Error> {
        cc::programmed_unit(f, p)
    }
    fn reloc_other(f: &Ftl<'_, Self>, from: Pun) -> Result<Option<Lpn>, Error> {
        cc::reloc_other(f, from)
    }
    fn unit_moved(f: &mut Ftl<'_, Self>, from: Pun, to: Pun, lpn: Lpn) -> Result<(), Error> {
        cc::unit_moved(f, from, to, lpn)
    }
    fn unit_lost(f: &mut Ftl<'_, Self>, from: Pun, lpn: Lpn) -> Result<(), Error> {
        cc::unit_lost(f, from, lpn)
    }
    fn mount_share(f: &mut Ftl<'_, Self>, p: Pun, first: Lpn, lpn: Lpn) -> Result<(), Error> {
        cc::mount_share(f, p, first, lpn)
    }
    fn audit(f: &Ftl<'_, Self>, p: Pun, lpn: Lpn) -> Result<bool, Error> {
        cc::audit(f, p, lpn)
    }
    fn extra_tps(f: &Ftl<'_, Self>, from: Pun) -> Result<u32, Error> {
        cc::extra_tps(f, from)
    }
    fn room_for_extra(f: &mut Ftl<'_, Self>, extra: u32) -> Result<bool, Error> {
        cc::room_for_extra(f, extra)
    }
    fn reserve_extra(f: &mut Ftl<'_, Self>, extra: u32, take: bool) {
        cc::reserve_extra(f, extra, take)
    }
}
impl<'a> HasLidf<'a> for Techniques<'a> {
    fn lidf(&self) -> Option<&LidfOrder<'a>> {
        self.lidf.as_ref()
    }
    fn lidf_mut(&mut self) -> Option<&mut LidfOrder<'a>> {
        self.lidf.as_mut()
    }
}

impl FlushOrder for Techniques<'_> {
    fn queue(f: &mut Ftl<'_, Self>, s: Slot, front: bool) -> Result<(), Error> {
        match (f.h.lidf.is_some(), front) {
            (true, _) => dawid::push(f, s),
            (false, true) => f.pending.push_front(f.t.slots, s.0),
            (false, false) => f.pending.push_back(f.t.slots, s.0),
        }
    }
    fn take(f: &mut Ftl<'_, Self>) -> Result<Option<u16>, Error> {
        if f.h.lidf.is_some() {
            dawid::pop(f)
        } else {
            f.pending.pop(f.t.slots)
        }
    }
    fn taken(f: &mut Ftl<'_, Self>, s: Slot) -> Result<(), Error> {
        if f.h.lidf.is_some() {
            dawid::taken(f, s)
        } else {
            Ok(())
        }
    }
    fn put_back(f: &mut Ftl<'_, Self>, s: Slot) -> Result<(), Error> {
        if f.h.lidf.is_some() {
            dawid::put_back(f, s)
        } else {
            f.pending.push_front(f.t.slots, s.0)
        }
    }
    fn queued(f: &Ftl<'_, Self>) -> u32 {
        if f.h.lidf.is_some() {
            dawid::queued(f)
        } else {
            u32::from(f.pending.len)
        }
    }
    fn tp_dirty(f: &mut Ftl<'_, Self>, tp: Tpn, dirty: bool) -> Result<(), Error> {
        dawid::tp_dirty(f, tp, dirty)
    }
}

impl HasSuperblocks for Techniques<'_> {
    fn superblocks_mut(&mut self) -> Option<&mut Superblocks> {
        self.superblocks.as_mut()
    }
}

impl Placement for Techniques<'_> {
    #[inline]
    fn data_end(f: &Ftl<'_, Self>) -> u32 {
        let ppb = f.g.pages_per_block;
        if f.cfg.superblock.list_pages {
            ppb.saturating_sub(1)
        } else {
            ppb
        }
    }
    fn host_target(f: &mut Ftl<'_, Self>) -> Result<Option<BlockId>, Error> {
        sb::host_target(f)
    }
    fn data_pages_claimed(
        f: &mut Ftl<'_, Self>,
        b: BlockId,
        stream: Stream,
    ) -> Result<bool, Error> {
        sb::data_pages_claimed(f, b, stream)
    }
    fn emit_due(f: &mut Ftl<'_, Self>) -> Result<(), Error> {
        sb::emit_due_list_pages(f)
    }
    fn host_page_done(f: &mut Ftl<'_, Self>) -> Result<(), Error> {
        sb::sb_emit_due_lists(f)
    }
}

/// The core with every compiled technique (selected by the configuration).
pub type FullFtl<'a> = Ftl<'a, Techniques<'a>>;

/// The core with no technique: the plain page-mapped FTL.
pub type BaselineFtl<'a> = Ftl<'a, crate::ftl::hooks::Baseline>;

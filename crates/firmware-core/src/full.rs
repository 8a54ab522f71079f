//! The full build: every technique the enabled features compile, plugged
//! into the core's hooks and chosen at run time by the configuration.
//!
//! Each hook is forwarded to the technique that owns it; a technique the
//! configuration leaves off keeps no state and every hook it owns answers
//! as the baseline does.

use core::marker::PhantomData;

use crate::config::Config;
use crate::error::Error;
use crate::ftl::hooks::{Build, Hooks};
use crate::ftl::lend::Lend;
use crate::ftl::Ftl;
#[cfg(feature = "copyless")]
use crate::tech::copyless::{
    self,
    refcount::{CopylessMap, CopylessTables},
};
#[cfg(feature = "dawid")]
use crate::tech::dawid::{LidfOrder, LidfOrderTables};
#[cfg(feature = "longftl")]
use crate::tech::longftl::gerase::{Guard, GuardTables};
#[cfg(feature = "placement")]
use crate::tech::placement::handles::{Placement, PlacementTables};
#[cfg(feature = "rcftl")]
use crate::tech::rcftl::{self, RcFtl};
#[cfg(feature = "reparo")]
use crate::tech::reparo::superblock::Superblocks;

/// The techniques of the seed papers behind the core's hooks.
pub struct Techniques<'a> {
    #[cfg(feature = "rcftl")]
    rcftl: Option<RcFtl<'a>>,
    #[cfg(feature = "longftl")]
    longftl: Option<Guard<'a>>,
    #[cfg(feature = "copyless")]
    copyless: Option<CopylessMap<'a>>,
    #[cfg(feature = "reparo")]
    superblocks: Option<Superblocks>,
    #[cfg(feature = "dawid")]
    lidf: Option<LidfOrder<'a>>,
    #[cfg(feature = "placement")]
    placement: Option<Placement<'a>>,
    #[cfg(feature = "crossway")]
    crossway: bool,
    /// No technique is on: every hook answers as the baseline does (host
    /// builds; see [`Techniques::plain`]).
    #[cfg(not(target_arch = "arm"))]
    plain: bool,
    _lent: PhantomData<&'a mut [u8]>,
}

impl<'a> Techniques<'a> {
    /// Whether the hot hooks may answer as the baseline does at once: no
    /// technique is on. One test stands in for one per technique, and the
    /// technique's own code stays out of the caller. Host builds only: the
    /// firmware keeps the smaller code, each technique testing its own state.
    #[cfg_attr(
        not(any(
            feature = "rcftl",
            feature = "longftl",
            feature = "copyless",
            feature = "reparo",
            feature = "dawid"
        )),
        allow(dead_code)
    )]
    #[inline(always)]
    fn plain(&self) -> bool {
        #[cfg(not(target_arch = "arm"))]
        return self.plain;
        #[cfg(target_arch = "arm")]
        return false;
    }

    /// Whether every technique is off (the state [`Techniques::plain`] caches).
    #[cfg(not(target_arch = "arm"))]
    fn none_on(&self) -> bool {
        let on = [
            #[cfg(feature = "rcftl")]
            self.rcftl.is_some(),
            #[cfg(feature = "longftl")]
            self.longftl.is_some(),
            #[cfg(feature = "copyless")]
            self.copyless.is_some(),
            #[cfg(feature = "reparo")]
            self.superblocks.is_some(),
            #[cfg(feature = "dawid")]
            self.lidf.is_some(),
            #[cfg(feature = "placement")]
            self.placement.is_some(),
            #[cfg(feature = "crossway")]
            self.crossway,
        ];
        !on.contains(&true)
    }

    /// Host-guided placement, when configured.
    #[cfg(feature = "placement")]
    pub fn placement(&self) -> Option<&Placement<'a>> {
        self.placement.as_ref()
    }

    /// The gErase modes used so far, oldest first (`[0]` when GuardedErase is off).
    pub fn gerase_mode_history(&self) -> &[u8] {
        #[cfg(feature = "longftl")]
        if let Some(g) = &self.longftl {
            return g.mode_history();
        }
        &[0]
    }

    /// The stable WAF (thousandths) recorded for gErase mode `mode`, if any.
    pub fn gerase_waf(&self, mode: usize) -> Option<u32> {
        #[cfg(feature = "longftl")]
        if let Some(g) = &self.longftl {
            return g.mode_waf(mode);
        }
        let _ = mode;
        None
    }
}

/// Refuses a configuration that turns on a technique this build leaves out.
fn built(cfg: &Config) -> Result<(), Error> {
    let wanted = [
        (
            cfg.copyback.mode != crate::tech::rcftl::policy::CopybackMode::OffChip,
            cfg!(feature = "rcftl"),
            &"copyback.mode other than off-chip needs the rcftl feature",
        ),
        (
            cfg.guard.enabled(),
            cfg!(feature = "longftl"),
            &"erase.mode gerase or bpm needs the longftl feature",
        ),
        (
            cfg.persist.flush_policy == crate::config::FlushPolicy::Lidf,
            cfg!(feature = "dawid"),
            &"buffer.flush_policy lidf needs the dawid feature",
        ),
        (
            cfg.copy.remap(),
            cfg!(feature = "copyless"),
            &"copy.mode remap needs the copyless feature",
        ),
        (
            cfg.superblock.enabled || cfg.superblock.list_pages,
            cfg!(feature = "reparo"),
            &"superblocks and list pages need the reparo feature",
        ),
        (
            cfg.placement.enabled(),
            cfg!(feature = "placement"),
            &"placement handles need the placement feature",
        ),
        (
            cfg.gc_destination != crate::tech::crossway::config::GcDestination::Plane,
            cfg!(feature = "crossway"),
            &"gc destination channel needs the crossway feature",
        ),
    ];
    for (on, have, why) in wanted {
        if on && !have {
            return Err(Error::InvalidConfig(why));
        }
    }
    if cfg.placement.enabled()
        && cfg.gc_destination != crate::tech::crossway::config::GcDestination::Plane
    {
        // Placement keeps GC inside each handle's blocks of the victim's plane.
        return Err(Error::InvalidConfig(
            &"gc destination channel cannot be combined with placement handles",
        ));
    }
    Ok(())
}

/// The slices the techniques keep their state in.
pub struct TechTables<'a> {
    #[cfg(feature = "rcftl")]
    rcftl: rcftl::RcTables<'a>,
    #[cfg(feature = "longftl")]
    longftl: GuardTables<'a>,
    #[cfg(feature = "copyless")]
    copyless: CopylessTables<'a>,
    #[cfg(feature = "dawid")]
    lidf: LidfOrderTables<'a>,
    #[cfg(feature = "placement")]
    placement: PlacementTables<'a>,
    _lent: PhantomData<&'a mut [u8]>,
}

impl Hooks for Techniques<'_> {}

impl<'a> Build<'a> for Techniques<'a> {
    type Tables = TechTables<'a>;

    fn lend(cfg: &Config, l: &mut Lend<'a>) -> Result<TechTables<'a>, Error> {
        built(cfg)?;
        let _ = &l;
        Ok(TechTables {
            #[cfg(feature = "rcftl")]
            rcftl: rcftl::RcTables::lend(cfg, l)?,
            #[cfg(feature = "longftl")]
            longftl: GuardTables::lend(cfg, l)?,
            #[cfg(feature = "copyless")]
            copyless: copyless::lend(cfg, l)?,
            #[cfg(feature = "dawid")]
            lidf: LidfOrder::lend(cfg, l)?,
            #[cfg(feature = "placement")]
            placement: PlacementTables::lend(cfg, l)?,
            _lent: PhantomData,
        })
    }

    fn build(cfg: &Config, t: TechTables<'a>) -> Result<Self, Error> {
        built(cfg)?;
        let _ = &t;
        let h = Techniques {
            #[cfg(feature = "rcftl")]
            rcftl: RcFtl::new(cfg, t.rcftl)?,
            #[cfg(feature = "longftl")]
            longftl: Guard::new(cfg, t.longftl)?,
            #[cfg(feature = "copyless")]
            copyless: copyless::build(cfg, t.copyless)?,
            #[cfg(feature = "reparo")]
            superblocks: Superblocks::new(cfg),
            #[cfg(feature = "dawid")]
            lidf: LidfOrder::new(t.lidf)?,
            #[cfg(feature = "placement")]
            placement: Placement::new(cfg, t.placement)?,
            #[cfg(feature = "crossway")]
            crossway: cfg.gc_destination == crate::tech::crossway::config::GcDestination::Channel,
            #[cfg(not(target_arch = "arm"))]
            plain: false,
            _lent: PhantomData,
        };
        #[cfg(not(target_arch = "arm"))]
        let h = Techniques {
            plain: h.none_on(),
            ..h
        };
        Ok(h)
    }
}

/// rcFTL behind the Migration hook.
#[cfg(feature = "rcftl")]
mod rcftl_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::hooks::{MigrateStep, Migration};
    use crate::ftl::Ftl;
    use crate::medium::addr::{BlockId, PlaneId, Ppn, UnitMask};
    use crate::medium::nand::{NandCmd, NandResult};
    use crate::tech::rcftl::{copyback as rc, HasRcftl, RcFtl};

    impl<'a> HasRcftl<'a> for Techniques<'a> {
        fn rcftl(&self) -> Option<&RcFtl<'a>> {
            self.rcftl.as_ref()
        }
        fn rcftl_mut(&mut self) -> Option<&mut RcFtl<'a>> {
            self.rcftl.as_mut()
        }
    }

    impl Migration for Techniques<'_> {
        fn mounting(f: &mut Ftl<'_, Self>) -> Result<(), Error> {
            rc::mounting(f)
        }
        fn victim_chosen(f: &mut Ftl<'_, Self>, p: PlaneId) {
            rc::victim_chosen(f, p)
        }
        #[inline(always)]
        fn in_plane(f: &Ftl<'_, Self>, p: PlaneId) -> bool {
            rc::in_plane(f, p)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn try_migrate(
            f: &mut Ftl<'_, Self>,
            p: PlaneId,
            victim: BlockId,
            page: Ppn,
            units: UnitMask,
        ) -> Result<MigrateStep, Error> {
            if f.h.plain() {
                return Ok(MigrateStep::OffChip);
            }
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
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn offchip_target(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error> {
            if f.h.plain() {
                return f.gc_target(p);
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::offchip_target(f, p);
            }
            #[cfg(feature = "crossway")]
            if f.h.rcftl.is_none() {
                if let Some(b) = super::crossway_hooks::target(f, p)? {
                    return Ok(Some(b));
                }
            }
            rc::offchip_target(f, p)
        }
        #[cfg(feature = "crossway")]
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn source_plane(
            f: &Ftl<'_, Self>,
            dest: PlaneId,
            s: crate::medium::nand::Slot,
        ) -> Result<PlaneId, Error> {
            if f.h.plain() {
                return Ok(dest);
            }
            super::crossway_hooks::source_plane(f, dest, s)
        }
        fn reclaim_open(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error> {
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::reclaim_open(f, p);
            }
            rc::reclaim_open(f, p)
        }
        fn held_blocks(f: &Ftl<'_, Self>, p: PlaneId) -> Result<u32, Error> {
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::held_blocks(f, p);
            }
            rc::held_blocks(f, p)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn held_erased_pages(f: &Ftl<'_, Self>, p: PlaneId) -> Result<u32, Error> {
            if f.h.plain() {
                return Ok(0);
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::held_erased_pages(f, p);
            }
            rc::held_erased_pages(f, p)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn holds(f: &Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<bool, Error> {
            if f.h.plain() {
                return Ok(false);
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::holds(f, p, b);
            }
            rc::holds(f, p, b)
        }
        fn gc_block_closed(f: &mut Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<(), Error> {
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::gc_block_closed(f, p, b);
            }
            rc::gc_block_closed(f, p, b)
        }
        fn plane_retired(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<(), Error> {
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::gc::plane_retired(f, p);
            }
            rc::plane_retired(f, p)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn block_opened(f: &mut Ftl<'_, Self>, b: BlockId) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
            rc::block_opened(f, b)
        }
        fn block_fits(f: &Ftl<'_, Self>, b: BlockId, need: u8) -> Result<bool, Error> {
            rc::block_fits(f, b, need)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn page_programmed(f: &mut Ftl<'_, Self>, page: Ppn) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
            rc::page_programmed(f, page)
        }
        fn probe_done(
            f: &mut Ftl<'_, Self>,
            cmd: &NandCmd,
            result: NandResult,
        ) -> Result<(), Error> {
            rc::classify_done(f, cmd, result)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn buffer_use(f: &mut Ftl<'_, Self>) {
            if f.h.plain() {
                return;
            }
            rc::buffer_use(f)
        }
    }
}

/// Cross-way GC destinations behind the Migration hook's off-chip target
/// (only while rcFTL's copyback is off: its copies stay in the plane).
#[cfg(feature = "crossway")]
mod crossway_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::Ftl;
    use crate::medium::addr::{BlockId, PlaneId};
    use crate::medium::nand::Slot;
    use crate::tech::crossway as cw;

    /// Another way's GC block when the policy is on and one qualifies.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(super) fn target(
        f: &mut Ftl<'_, Techniques<'_>>,
        p: PlaneId,
    ) -> Result<Option<BlockId>, Error> {
        if !f.h.crossway {
            return Ok(None);
        }
        cw::target(f, p)
    }

    /// The source plane of a GC slot when the policy is on.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(super) fn source_plane(
        f: &Ftl<'_, Techniques<'_>>,
        dest: PlaneId,
        s: Slot,
    ) -> Result<PlaneId, Error> {
        if !f.h.crossway {
            return Ok(dest);
        }
        cw::source_plane(f, s)
    }
}

#[cfg(all(
    not(feature = "rcftl"),
    not(feature = "placement"),
    not(feature = "crossway")
))]
impl crate::ftl::hooks::Migration for Techniques<'_> {}

/// GC by placement handle and cross-way destinations behind the Migration
/// hook (a build without rcFTL). With placement on, GC follows the victim's
/// handle and cross-way destinations are not used.
#[cfg(all(
    not(feature = "rcftl"),
    any(feature = "placement", feature = "crossway")
))]
mod migration_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::hooks::Migration;
    use crate::ftl::Ftl;
    use crate::medium::addr::{BlockId, PlaneId};
    #[cfg(feature = "placement")]
    use crate::tech::placement::gc as pg;

    impl Migration for Techniques<'_> {
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn offchip_target(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error> {
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return pg::offchip_target(f, p);
            }
            #[cfg(feature = "crossway")]
            if let Some(b) = super::crossway_hooks::target(f, p)? {
                return Ok(Some(b));
            }
            f.gc_target(p)
        }
        #[cfg(feature = "crossway")]
        fn source_plane(
            f: &Ftl<'_, Self>,
            dest: PlaneId,
            s: crate::medium::nand::Slot,
        ) -> Result<PlaneId, Error> {
            super::crossway_hooks::source_plane(f, dest, s)
        }
        #[cfg(feature = "placement")]
        fn reclaim_open(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error> {
            pg::reclaim_open(f, p)
        }
        #[cfg(feature = "placement")]
        fn held_blocks(f: &Ftl<'_, Self>, p: PlaneId) -> Result<u32, Error> {
            pg::held_blocks(f, p)
        }
        #[cfg(feature = "placement")]
        fn held_erased_pages(f: &Ftl<'_, Self>, p: PlaneId) -> Result<u32, Error> {
            pg::held_erased_pages(f, p)
        }
        #[cfg(feature = "placement")]
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn holds(f: &Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<bool, Error> {
            pg::holds(f, p, b)
        }
        #[cfg(feature = "placement")]
        fn gc_block_closed(f: &mut Ftl<'_, Self>, p: PlaneId, b: BlockId) -> Result<(), Error> {
            pg::gc_block_closed(f, p, b)
        }
        #[cfg(feature = "placement")]
        fn plane_retired(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<(), Error> {
            pg::plane_retired(f, p)
        }
    }
}

/// GuardedErase and BPM behind the EraseStrategy and OpObserver hooks.
#[cfg(feature = "longftl")]
mod longftl_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::hooks::{EraseStrategy, OpObserver};
    use crate::ftl::{Ftl, Stream};
    use crate::medium::addr::{BlockId, PlaneId, Ppn};
    use crate::medium::nand::{NandCmd, NandResult};
    use crate::tech::longftl::gerase::{self as ge, Guard, HasLongftl};

    impl<'a> HasLongftl<'a> for Techniques<'a> {
        fn longftl(&self) -> Option<&Guard<'a>> {
            self.longftl.as_ref()
        }
        fn longftl_mut(&mut self) -> Option<&mut Guard<'a>> {
            self.longftl.as_mut()
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
            if f.h.plain() {
                return 0;
            }
            ge::skip_units(f, b)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn usable_page(f: &Ftl<'_, Self>, b: BlockId, page: u32) -> u32 {
            if f.h.plain() {
                return page;
            }
            ge::usable_page(f, b, page)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn open_preference(f: &Ftl<'_, Self>, stream: Stream) -> Option<bool> {
            if f.h.plain() {
                return None;
            }
            ge::guard_preference(f, stream)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn free_rank(f: &Ftl<'_, Self>, b: BlockId, pref: Option<bool>) -> (bool, u16) {
            if f.h.plain() {
                return (false, 0);
            }
            (
                pref.is_some_and(|g| g != ge::is_guarded(f, b)),
                ge::gerase_count(f, b),
            )
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn opened(f: &mut Ftl<'_, Self>, b: BlockId) {
            if f.h.plain() {
                return;
            }
            ge::guard_opened(f, b)
        }
    }

    impl OpObserver for Techniques<'_> {
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn read_done(f: &mut Ftl<'_, Self>, page: Ppn, result: &NandResult) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
            ge::guard_read(f, page, result)
        }
    }
}

#[cfg(not(feature = "longftl"))]
impl crate::ftl::hooks::EraseStrategy for Techniques<'_> {}

#[cfg(not(feature = "longftl"))]
impl crate::ftl::hooks::OpObserver for Techniques<'_> {}

/// LIDF behind the FlushOrder hook.
#[cfg(feature = "dawid")]
mod dawid_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::hooks::FlushOrder;
    use crate::ftl::Ftl;
    use crate::medium::nand::Slot;
    use crate::persist::Tpn;
    use crate::tech::dawid::{self, HasLidf, LidfOrder};

    impl<'a> HasLidf<'a> for Techniques<'a> {
        fn lidf(&self) -> Option<&LidfOrder<'a>> {
            self.lidf.as_ref()
        }
        fn lidf_mut(&mut self) -> Option<&mut LidfOrder<'a>> {
            self.lidf.as_mut()
        }
    }

    impl FlushOrder for Techniques<'_> {
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn queue(f: &mut Ftl<'_, Self>, s: Slot, front: bool) -> Result<(), Error> {
            #[cfg(feature = "placement")]
            if !f.h.plain() && f.h.placement.is_some() {
                return crate::tech::placement::handles::queue(f, s, front);
            }
            match (f.h.lidf.is_some(), front) {
                (true, _) => dawid::push(f, s),
                (false, true) => f.pending.push_front(f.t.slots, s.0),
                (false, false) => f.pending.push_back(f.t.slots, s.0),
            }
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn take(f: &mut Ftl<'_, Self>) -> Result<Option<u16>, Error> {
            if f.h.plain() {
                return f.pending.pop(f.t.slots);
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::handles::take(f);
            }
            if f.h.lidf.is_some() {
                dawid::pop(f)
            } else {
                f.pending.pop(f.t.slots)
            }
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn taken(f: &mut Ftl<'_, Self>, s: Slot) -> Result<(), Error> {
            if f.h.lidf.is_some() {
                dawid::taken(f, s)
            } else {
                Ok(())
            }
        }
        fn put_back(f: &mut Ftl<'_, Self>, s: Slot) -> Result<(), Error> {
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::handles::put_back(f, s);
            }
            if f.h.lidf.is_some() {
                dawid::put_back(f, s)
            } else {
                f.pending.push_front(f.t.slots, s.0)
            }
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn queued(f: &Ftl<'_, Self>) -> u32 {
            if f.h.plain() {
                return u32::from(f.pending.len);
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::handles::queued(f);
            }
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
}

#[cfg(all(not(feature = "dawid"), not(feature = "placement")))]
impl crate::ftl::hooks::FlushOrder for Techniques<'_> {}

/// Placement handles behind the FlushOrder hook (a build without LIDF).
#[cfg(all(not(feature = "dawid"), feature = "placement"))]
impl crate::ftl::hooks::FlushOrder for Techniques<'_> {
    fn queue(
        f: &mut Ftl<'_, Self>,
        s: crate::medium::nand::Slot,
        front: bool,
    ) -> Result<(), Error> {
        if f.h.placement.is_some() {
            return crate::tech::placement::handles::queue(f, s, front);
        }
        if front {
            f.pending.push_front(f.t.slots, s.0)
        } else {
            f.pending.push_back(f.t.slots, s.0)
        }
    }
    fn take(f: &mut Ftl<'_, Self>) -> Result<Option<u16>, Error> {
        if f.h.placement.is_some() {
            return crate::tech::placement::handles::take(f);
        }
        f.pending.pop(f.t.slots)
    }
    fn put_back(f: &mut Ftl<'_, Self>, s: crate::medium::nand::Slot) -> Result<(), Error> {
        if f.h.placement.is_some() {
            return crate::tech::placement::handles::put_back(f, s);
        }
        f.pending.push_front(f.t.slots, s.0)
    }
    fn queued(f: &Ftl<'_, Self>) -> u32 {
        if f.h.placement.is_some() {
            return crate::tech::placement::handles::queued(f);
        }
        u32::from(f.pending.len)
    }
}

/// Placement handles: where a hook set keeps them.
#[cfg(feature = "placement")]
impl<'a> crate::tech::placement::handles::HasPlacement<'a> for Techniques<'a> {
    fn placement(&self) -> Option<&Placement<'a>> {
        self.placement.as_ref()
    }
    fn placement_mut(&mut self) -> Option<&mut Placement<'a>> {
        self.placement.as_mut()
    }
}

/// Copyless copy behind the Ownership hook.
#[cfg(feature = "copyless")]
mod copyless_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::hooks::Ownership;
    use crate::ftl::host::CopyStop;
    use crate::ftl::Ftl;
    use crate::medium::addr::{Lpn, Pun};
    use crate::tech::copyless::copy::{self as cc, HasCopyless};
    use crate::tech::copyless::refcount::CopylessMap;

    impl<'a> HasCopyless<'a> for Techniques<'a> {
        fn copyless(&self) -> Option<&CopylessMap<'a>> {
            self.copyless.as_ref()
        }
        fn copyless_mut(&mut self) -> Option<&mut CopylessMap<'a>> {
            self.copyless.as_mut()
        }
    }

    impl Ownership for Techniques<'_> {
        #[inline(always)]
        fn shares(f: &Ftl<'_, Self>) -> bool {
            f.h.copyless.is_some()
        }
        fn copy_unit(f: &mut Ftl<'_, Self>, s: Lpn, d: Lpn) -> Result<Option<CopyStop>, Error> {
            cc::copy_unit(f, s, d)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn release(f: &mut Ftl<'_, Self>, p: Pun, lpn: Lpn) -> Result<(), Error> {
            if f.h.plain() {
                return f.invalidate_unit(p);
            }
            cc::release(f, p, lpn)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn programmed_unit(f: &mut Ftl<'_, Self>, p: Pun) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
            cc::programmed_unit(f, p)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn reloc_other(f: &Ftl<'_, Self>, from: Pun) -> Result<Option<Lpn>, Error> {
            if f.h.plain() {
                return Ok(None);
            }
            cc::reloc_other(f, from)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn unit_moved(f: &mut Ftl<'_, Self>, from: Pun, to: Pun, lpn: Lpn) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
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
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn extra_tps(f: &Ftl<'_, Self>, from: Pun) -> Result<u32, Error> {
            if f.h.plain() {
                return Ok(0);
            }
            cc::extra_tps(f, from)
        }
        fn room_for_extra(f: &mut Ftl<'_, Self>, extra: u32) -> Result<bool, Error> {
            cc::room_for_extra(f, extra)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn reserve_extra(f: &mut Ftl<'_, Self>, extra: u32, take: bool) {
            if f.h.plain() {
                return;
            }
            cc::reserve_extra(f, extra, take)
        }
    }
}

#[cfg(not(feature = "copyless"))]
impl crate::ftl::hooks::Ownership for Techniques<'_> {}

/// Superblocks and list pages behind the Placement hook.
#[cfg(feature = "reparo")]
mod reparo_hooks {
    use super::Techniques;
    use crate::error::Error;
    use crate::ftl::hooks::Placement;
    use crate::ftl::{Ftl, Stream};
    use crate::medium::addr::BlockId;
    use crate::tech::reparo::superblock::{self as sb, HasSuperblocks, Superblocks};

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
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn host_target(f: &mut Ftl<'_, Self>) -> Result<Option<BlockId>, Error> {
            if f.h.plain() {
                return f.round_robin_target();
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                return crate::tech::placement::handles::host_target(f);
            }
            sb::host_target(f)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn data_pages_claimed(
            f: &mut Ftl<'_, Self>,
            b: BlockId,
            stream: Stream,
        ) -> Result<bool, Error> {
            if f.h.plain() {
                return Ok(false);
            }
            #[cfg(feature = "placement")]
            if f.h.placement.is_some() {
                crate::tech::placement::handles::block_claimed(f, b)?;
                return Ok(false);
            }
            sb::data_pages_claimed(f, b, stream)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn emit_due(f: &mut Ftl<'_, Self>) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
            sb::emit_due_list_pages(f)
        }
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn host_page_done(f: &mut Ftl<'_, Self>) -> Result<(), Error> {
            if f.h.plain() {
                return Ok(());
            }
            sb::sb_emit_due_lists(f)
        }
        #[cfg(feature = "placement")]
        #[cfg_attr(not(target_arch = "arm"), inline(always))]
        fn block_tag(f: &Ftl<'_, Self>, b: BlockId) -> u8 {
            if f.h.plain() {
                return 0;
            }
            crate::tech::placement::block_tag::block_tag(f, b)
        }
        #[cfg(feature = "placement")]
        fn block_tag_mounted(f: &mut Ftl<'_, Self>, b: BlockId, tag: u8) {
            crate::tech::placement::block_tag::block_tag_mounted(f, b, tag)
        }
    }
}

#[cfg(all(not(feature = "reparo"), not(feature = "placement")))]
impl crate::ftl::hooks::Placement for Techniques<'_> {}

/// Placement handles behind the Placement hook (a build without Reparo).
#[cfg(all(not(feature = "reparo"), feature = "placement"))]
impl crate::ftl::hooks::Placement for Techniques<'_> {
    fn host_target(f: &mut Ftl<'_, Self>) -> Result<Option<crate::medium::addr::BlockId>, Error> {
        if f.h.placement.is_some() {
            return crate::tech::placement::handles::host_target(f);
        }
        f.round_robin_target()
    }
    fn data_pages_claimed(
        f: &mut Ftl<'_, Self>,
        b: crate::medium::addr::BlockId,
        _stream: crate::ftl::Stream,
    ) -> Result<bool, Error> {
        if f.h.placement.is_some() {
            crate::tech::placement::handles::block_claimed(f, b)?;
        }
        Ok(false)
    }
    fn block_tag(f: &Ftl<'_, Self>, b: crate::medium::addr::BlockId) -> u8 {
        crate::tech::placement::block_tag::block_tag(f, b)
    }
    fn block_tag_mounted(f: &mut Ftl<'_, Self>, b: crate::medium::addr::BlockId, tag: u8) {
        crate::tech::placement::block_tag::block_tag_mounted(f, b, tag)
    }
}

/// The core with every compiled technique (selected by the configuration).
pub type FullFtl<'a> = Ftl<'a, Techniques<'a>>;

/// The core with no technique: the plain page-mapped FTL.
pub type BaselineFtl<'a> = Ftl<'a, crate::ftl::hooks::Baseline>;

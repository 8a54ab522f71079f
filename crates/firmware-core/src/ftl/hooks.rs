//! The hook traits: where a technique plugs into the mechanism.
//!
//! The mechanism (space, mapping, persistence, GC) calls these at fixed
//! points and knows nothing of the papers. Every method's default is the
//! baseline's behaviour, so [`Baseline`] is the plain page-mapped FTL.
//! [`crate::Techniques`] implements each hook by handing it, at run time, to
//! the technique the configuration selects among those the build enables.
//! Dispatch is static: the core is generic over its hook set.
//!
//! A hook receives the whole core (`f`) and finds its own state in `f.h`:
//! a technique owns its per-block and per-plane state in slices carved for
//! it ([`Build::lend`]), never in the base tables.
//!
//! | hook | decides | baseline | technique |
//! |---|---|---|---|
//! | [`Migration`] | how GC moves a victim's pages, into which GC blocks | off-chip copy (read, ECC, program) | rcFTL copyback (`tech::rcftl`) |
//! | [`EraseStrategy`] | how a victim is erased, which pages of a block hold data, which free block opens | normal erase, every page | GuardedErase / BPM (`tech::longftl`) |
//! | [`Placement`] | which plane and block a host page goes to, which pages are kept for metadata, a byte kept with each block on flash | round robin over planes, no byte | superblocks and list pages (`tech::reparo`); handles (`tech::placement`) |
//! | [`FlushOrder`] | the order buffered writes leave the write buffer | FIFO | LIDF (`tech::dawid`) |
//! | [`Ownership`] | who owns a physical unit, what an overwrite or a relocation does to it | one owner, the valid bit | reference counts and shadow OOB (`tech::copyless`) |
//! | [`OpObserver`] | what a technique learns from completions | nothing | the weak-wordline detector (`tech::longftl`) |

use crate::config::Config;
use crate::error::Error;
use crate::ftl::host::{CopyFallback, CopyStop};
use crate::ftl::lend::Lend;
use crate::ftl::state::{Ftl, Stream};
use crate::medium::addr::{BlockId, Lpn, PlaneId, Ppn, Pun, UnitMask};
use crate::medium::nand::{NandCmd, NandResult, Slot};
use crate::persist::Tpn;

/// Every hook of the core.
pub trait Hooks:
    Migration + EraseStrategy + Placement + FlushOrder + Ownership + OpObserver + Sized
{
}

/// Builds a hook set for a configuration over memory carved from the
/// caller's region (the one lending path, [`crate::ftl::lend`]).
pub trait Build<'a>: Hooks {
    /// The slices the hook set keeps its state in.
    type Tables;
    /// Carves the slices `cfg` needs (a counting [`Lend`] only counts them).
    fn lend(cfg: &Config, l: &mut Lend<'a>) -> Result<Self::Tables, Error>;
    /// The hook set for `cfg` over its slices.
    fn build(cfg: &Config, t: Self::Tables) -> Result<Self, Error>;
}

/// What a migration hook did with one victim page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateStep {
    /// It issued an in-plane copy ([`crate::ftl::tables::OpKind::Migrate`]).
    Issued,
    /// The page goes off-chip, through GC slots.
    OffChip,
    /// The page would move in-plane, but not now: GC waits.
    Wait,
}

/// How GC migrates a victim's pages (rcFTL: copyback).
pub trait Migration: Sized {
    /// Mount starts: nothing the hook kept in DRAM survived the power cut,
    /// and its tables are as [`crate::Ftl::new`] left them (as for a
    /// fresh format). The hook puts in them what it may assume of data
    /// written before the cut.
    fn mounting(_f: &mut Ftl<'_, Self>) -> Result<(), Error> {
        Ok(())
    }

    /// A new victim of plane `p` was chosen: decide how its pages move.
    fn victim_chosen(_f: &mut Ftl<'_, Self>, _p: PlaneId) {}

    /// Whether plane `p`'s victim may move pages in-plane, without GC
    /// slots ([`Self::try_migrate`] may answer other than `OffChip`): when
    /// not, and no slot is free, GC has nothing to start there.
    #[inline(always)]
    fn in_plane(_f: &Ftl<'_, Self>, _p: PlaneId) -> bool {
        false
    }

    /// Offers victim page `page` with live units `units` to the in-plane path.
    fn try_migrate(
        _f: &mut Ftl<'_, Self>,
        _p: PlaneId,
        _victim: BlockId,
        _page: Ppn,
        _units: UnitMask,
    ) -> Result<MigrateStep, Error> {
        Ok(MigrateStep::OffChip)
    }

    /// An in-plane copy this hook emitted finished.
    fn migrate_done(
        _f: &mut Ftl<'_, Self>,
        _cmd: &NandCmd,
        _tag: u32,
        _result: NandResult,
    ) -> Result<(), Error> {
        Err(Error::Corrupt(
            &"migration op without a migration technique",
        ))
    }

    /// Where off-chip GC data of plane `p` goes; the default is the
    /// plane's GC active block ([`Ftl::gc_target`]).
    fn offchip_target(f: &mut Ftl<'_, Self>, p: PlaneId) -> Result<Option<BlockId>, Error>
    where
        Self: Hooks,
    {
        f.gc_target(p)
    }

    /// The plane whose GC slot `s` a finished GC program of plane `dest`
    /// returns (it came from there); the default: GC stays in its plane.
    #[inline]
    fn source_plane(_f: &Ftl<'_, Self>, dest: PlaneId, _s: Slot) -> Result<PlaneId, Error> {
        Ok(dest)
    }

    /// An open block the hook holds besides the GC active block, to empty
    /// when GC finds no victim in plane `p` (it stops holding it).
    fn reclaim_open(_f: &mut Ftl<'_, Self>, _p: PlaneId) -> Result<Option<BlockId>, Error> {
        Ok(None)
    }

    /// Open GC blocks the hook holds in plane `p` besides the GC active block.
    fn held_blocks(_f: &Ftl<'_, Self>, _p: PlaneId) -> Result<u32, Error> {
        Ok(0)
    }

    /// Erased pages left in those blocks: GC space beside the free blocks.
    fn held_erased_pages(_f: &Ftl<'_, Self>, _p: PlaneId) -> Result<u32, Error> {
        Ok(0)
    }

    /// Whether `b` is one of those blocks.
    fn holds(_f: &Ftl<'_, Self>, _p: PlaneId, _b: BlockId) -> Result<bool, Error> {
        Ok(false)
    }

    /// GC block `b` of plane `p` filled or went bad: stop holding it.
    fn gc_block_closed(_f: &mut Ftl<'_, Self>, _p: PlaneId, _b: BlockId) -> Result<(), Error> {
        Ok(())
    }

    /// Every block of plane `p` was retired (a failed die).
    fn plane_retired(_f: &mut Ftl<'_, Self>, _p: PlaneId) -> Result<(), Error> {
        Ok(())
    }

    /// Block `b` was opened for writes.
    fn block_opened(_f: &mut Ftl<'_, Self>, _b: BlockId) -> Result<(), Error> {
        Ok(())
    }

    /// Whether free block `b` meets requirement `need` (non-zero) of the
    /// hook's own `Ftl::open_block_for` calls.
    fn block_fits(_f: &Ftl<'_, Self>, _b: BlockId, _need: u8) -> Result<bool, Error> {
        Ok(true)
    }

    /// A page was programmed from the controller (host or off-chip GC data).
    fn page_programmed(_f: &mut Ftl<'_, Self>, _page: Ppn) -> Result<(), Error> {
        Ok(())
    }

    /// A probe read this hook emitted finished.
    fn probe_done(
        _f: &mut Ftl<'_, Self>,
        _cmd: &NandCmd,
        _result: NandResult,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The write buffer's occupancy changed.
    fn buffer_use(_f: &mut Ftl<'_, Self>) {}
}

/// How a victim is erased and which pages of a block may hold data
/// (longFTL: GuardedErase and BPM).
pub trait EraseStrategy: Sized {
    /// The erase command for victim `b` of plane `p`.
    fn victim_erase(_f: &mut Ftl<'_, Self>, _p: PlaneId, b: BlockId) -> Result<NandCmd, Error> {
        Ok(NandCmd::Erase { block: b })
    }

    /// A victim erase (`cmd`) succeeded.
    fn erased(_f: &mut Ftl<'_, Self>, _cmd: &NandCmd) -> Result<(), Error> {
        Ok(())
    }

    /// Block `b` left service (bad, or retiring with data to move).
    fn forget(_f: &mut Ftl<'_, Self>, _b: BlockId) -> Result<(), Error> {
        Ok(())
    }

    /// Mapping units block `b` cannot hold this cycle (skipped wordlines);
    /// they count as dead units in its valid-count bucket.
    fn skip_units(_f: &Ftl<'_, Self>, _b: BlockId) -> u16 {
        0
    }

    /// The first page at or after `page` that block `b` may hold data in.
    fn usable_page(_f: &Ftl<'_, Self>, _b: BlockId, page: u32) -> u32 {
        page
    }

    /// Which free blocks `stream` prefers by the strategy's flag (`None`:
    /// the flag does not matter).
    fn open_preference(_f: &Ftl<'_, Self>, _stream: Stream) -> Option<bool> {
        None
    }

    /// How free block `b` ranks for an allocation with preference `pref`:
    /// (its flag misses the preference, its strategy count); lower first,
    /// after the P/E count.
    fn free_rank(_f: &Ftl<'_, Self>, _b: BlockId, _pref: Option<bool>) -> (bool, u16) {
        (false, 0)
    }

    /// Free block `b` was opened for writes.
    fn opened(_f: &mut Ftl<'_, Self>, _b: BlockId) {}
}

/// The order buffered writes leave the write buffer (Dawid: LIDF). The
/// default is FIFO over the core's pending queue.
pub trait FlushOrder: Sized {
    /// Queues write-buffer slot `s` (`front`: back at the head, after a
    /// failed program).
    fn queue(f: &mut Ftl<'_, Self>, s: Slot, front: bool) -> Result<(), Error>
    where
        Self: Hooks,
    {
        if front {
            f.pending.push_front(f.t.slots, s.0)
        } else {
            f.pending.push_back(f.t.slots, s.0)
        }
    }

    /// Takes the next queued slot (live or trimmed).
    fn take(f: &mut Ftl<'_, Self>) -> Result<Option<u16>, Error>
    where
        Self: Hooks,
    {
        f.pending.pop(f.t.slots)
    }

    /// Live slot `s` left the queue for a program.
    fn taken(_f: &mut Ftl<'_, Self>, _s: Slot) -> Result<(), Error> {
        Ok(())
    }

    /// Slot `s`, taken for a page that is not programmed after all, goes back.
    fn put_back(f: &mut Ftl<'_, Self>, s: Slot) -> Result<(), Error>
    where
        Self: Hooks,
    {
        f.pending.push_front(f.t.slots, s.0)
    }

    /// Slots queued (live or trimmed).
    fn queued(f: &Ftl<'_, Self>) -> u32 {
        u32::from(f.pending.len)
    }

    /// Translation page `tp` turned dirty, or was taken for a write-back.
    fn tp_dirty(_f: &mut Ftl<'_, Self>, _tp: Tpn, _dirty: bool) -> Result<(), Error> {
        Ok(())
    }
}

/// What techniques learn from completions.
pub trait OpObserver: Sized {
    /// A host or GC read of `page` finished with `result` (its ECC report).
    fn read_done(_f: &mut Ftl<'_, Self>, _page: Ppn, _result: &NandResult) -> Result<(), Error> {
        Ok(())
    }
}

/// Who owns a physical unit and what an overwrite, a copy or a relocation
/// does to it (copyless copy: reference counts and the shadow OOB). The
/// baseline: one owner per unit, the P2L entry doubling as the valid bit.
pub trait Ownership: Sized {
    /// Whether a unit may have several owners (tags).
    fn shares(_f: &Ftl<'_, Self>) -> bool {
        false
    }

    /// One unit of the host copy command ([`Ftl::copy`]): `None` when it
    /// was served without a NAND operation, else why the command stops.
    fn copy_unit(_f: &mut Ftl<'_, Self>, _s: Lpn, _d: Lpn) -> Result<Option<CopyStop>, Error> {
        Ok(Some(CopyStop::Physical(CopyFallback::Mode)))
    }

    /// Owner `lpn` of physical unit `p` overwrote or trimmed it.
    fn release(f: &mut Ftl<'_, Self>, p: Pun, _lpn: Lpn) -> Result<(), Error>
    where
        Self: Hooks,
    {
        f.invalidate_unit(p)
    }

    /// Unit `p` was programmed with new data for one logical unit.
    fn programmed_unit(_f: &mut Ftl<'_, Self>, _p: Pun) -> Result<(), Error> {
        Ok(())
    }

    /// The owner a relocation of `from` must follow when the one it was
    /// read for no longer maps there (`None`: the unit is dead).
    fn reloc_other(_f: &Ftl<'_, Self>, _from: Pun) -> Result<Option<Lpn>, Error> {
        Ok(None)
    }

    /// Live unit `from` (owner `lpn`) moved to `to`.
    fn unit_moved(_f: &mut Ftl<'_, Self>, _from: Pun, _to: Pun, _lpn: Lpn) -> Result<(), Error> {
        Ok(())
    }

    /// Live unit `from` (owner `lpn`) could not be read during relocation.
    fn unit_lost(_f: &mut Ftl<'_, Self>, _from: Pun, _lpn: Lpn) -> Result<(), Error> {
        Ok(())
    }

    /// Mount: `lpn` maps to `p`, which owner `first` already claimed.
    fn mount_share(_f: &mut Ftl<'_, Self>, _p: Pun, _first: Lpn, _lpn: Lpn) -> Result<(), Error> {
        Err(Error::Corrupt(&"unit validated twice"))
    }

    /// Audit of one L2P entry `lpn -> p`: whether the ownership records agree.
    fn audit(f: &Ftl<'_, Self>, p: Pun, lpn: Lpn) -> Result<bool, Error>
    where
        Self: Hooks,
    {
        Ok(f.p2l(p)? == Some(lpn))
    }

    /// Translation pages a relocation of unit `from` dirties besides its
    /// own owner's (its other owners', under partial protection).
    fn extra_tps(_f: &Ftl<'_, Self>, _from: Pun) -> Result<u32, Error> {
        Ok(0)
    }

    /// Whether the translation-page budget has room for `extra` more.
    fn room_for_extra(_f: &mut Ftl<'_, Self>, _extra: u32) -> Result<bool, Error> {
        Ok(true)
    }

    /// Reserves (`take`) or releases `extra` translation pages of budget.
    fn reserve_extra(_f: &mut Ftl<'_, Self>, _extra: u32, _take: bool) {}
}

/// Where host pages go and which pages of a block are kept out of the
/// data stream (Reparo: superblocks and list pages).
pub trait Placement: Sized {
    /// Pages of a block that hold data, from its first page on; the rest
    /// are the hook's (a list page).
    fn data_end(f: &Ftl<'_, Self>) -> u32 {
        f.g.pages_per_block
    }

    /// The open host block the next page goes to (`None`: none can take
    /// one now); the default is [`Ftl::round_robin_target`].
    fn host_target(f: &mut Ftl<'_, Self>) -> Result<Option<BlockId>, Error>
    where
        Self: Hooks,
    {
        f.round_robin_target()
    }

    /// Block `b` of `stream` has all its data pages claimed. Returns whether
    /// it stays its plane's active block for now.
    fn data_pages_claimed(
        _f: &mut Ftl<'_, Self>,
        _b: BlockId,
        _stream: Stream,
    ) -> Result<bool, Error> {
        Ok(false)
    }

    /// Emits the hook's pages now due (list pages of filled blocks).
    fn emit_due(_f: &mut Ftl<'_, Self>) -> Result<(), Error> {
        Ok(())
    }

    /// A host page was emitted, or the core had a turn: emits the pages
    /// due for the current host placement (a superblock's list pages).
    fn host_page_done(_f: &mut Ftl<'_, Self>) -> Result<(), Error> {
        Ok(())
    }

    /// An opaque byte the hook keeps for block `b` (placement: the handle
    /// whose data it holds). The core puts it on flash, in the spare area
    /// of every page programmed into `b` and in `b`'s checkpoint entry, and
    /// mount gives it back ([`Placement::block_tag_mounted`]).
    #[inline]
    fn block_tag(_f: &Ftl<'_, Self>, _b: BlockId) -> u8 {
        0
    }

    /// Mount read block `b`'s tag back: from the checkpoint's block table,
    /// or from its first page's spare area when mount reads every block's.
    #[inline]
    fn block_tag_mounted(_f: &mut Ftl<'_, Self>, _b: BlockId, _tag: u8) {}
}

/// The baseline: no technique, every hook at its default.
#[derive(Clone, Copy, Debug, Default)]
pub struct Baseline;

impl Migration for Baseline {}
impl FlushOrder for Baseline {}
impl EraseStrategy for Baseline {}
impl OpObserver for Baseline {}
impl Ownership for Baseline {}
impl Placement for Baseline {}
impl Hooks for Baseline {}

impl<'a> Build<'a> for Baseline {
    type Tables = ();
    fn lend(_cfg: &Config, _l: &mut Lend<'a>) -> Result<(), Error> {
        Ok(())
    }
    fn build(_cfg: &Config, _t: ()) -> Result<Self, Error> {
        Ok(Baseline)
    }
}

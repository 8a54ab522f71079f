//! Superblocks and reserved list pages (seed 001, Sec. 5.5, Figs. 31-32).
//!
//! With [`SuperblockConfig::enabled`], the host stream writes superblocks:
//! one open block in every plane that has room, opened together, filled
//! superpage by superpage (page `i` of every member, in plane order, then
//! page `i + 1`). The members therefore share their page offsets, which is
//! what lets a page's metadata sit on another die in the same superpage. A
//! member whose plane runs out of room (see `Ftl::has_room`) is skipped for
//! the rest of the superblock ([`crate::Stats::superpage_skips`]); a plane
//! that only lacks a free block makes the superblock wait for its GC.
//!
//! With [`SuperblockConfig::list_pages`], the last page of every block (host
//! and GC streams alike) is kept out of the data stream: when a block's data
//! pages are all claimed, the core programs that page empty, as a
//! [`PageKind::Meta`] page. A Reparo flash core ([`crate::tech::reparo::controller`])
//! fills it with the LBA lists of its neighbour die's blocks (block-level P2L
//! entrustment). In superblock order the host members' list pages are the
//! last superpage: the cursor reaches them after every member's last data
//! page, so each holds the list of its neighbour member in the same
//! superblock, as in Fig. 32. GC blocks fill at their own pace: their list
//! pages go out as soon as their data pages are claimed, and their lists
//! wait in the controller's RAM for the next list page on the neighbour
//! die.
//!
//! List pages do not survive power-loss recovery (a mount would take a block
//! ending in one for open), so the configuration rejects them together with
//! mapping persistence.

use crate::config::Config;
use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::MAX_UNITS_PER_PAGE;
use crate::medium::addr::{BlockId, PlaneId, Ppn};
use crate::medium::nand::{NandCmd, Origin, PageKind, Slot, Spare};

pub use crate::tech::reparo::config::SuperblockConfig;

/// List pages a core can have due at once.
pub(crate) const LIST_DUE: usize = 64;

/// The open host superblock's write cursor.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SbCursor {
    /// A superblock is open (its members are the planes' host blocks).
    formed: bool,
    /// Plane the next host page goes to.
    next: u32,
}

/// Superblock placement's run-time state.
#[derive(Debug, Default)]
pub struct Superblocks {
    cursor: SbCursor,
    /// Blocks whose data pages are claimed and whose list page is due.
    due: heapless::Deque<u32, LIST_DUE>,
}

impl Superblocks {
    /// The state for `cfg`, or `None` with superblocks and list pages off.
    pub fn new(cfg: &Config) -> Option<Self> {
        (cfg.superblock.enabled || cfg.superblock.list_pages).then(Superblocks::default)
    }
}

/// A hook set that carries superblock placement (the assembly implements it).
pub trait HasSuperblocks {
    /// The placement state, if superblocks or list pages are on.
    fn superblocks_mut(&mut self) -> Option<&mut Superblocks>;
}

fn sb_mut<'f, H: Hooks + HasSuperblocks>(
    f: &'f mut Ftl<'_, H>,
) -> Result<&'f mut Superblocks, Error> {
    f.h.superblocks_mut()
        .or_rare(Error::Corrupt(&"superblock state missing"))
}

/// The host block of the next page: in superblock order when superblocks
/// are on, else the core's round robin over planes.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn host_target<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
) -> Result<Option<BlockId>, Error> {
    if f.cfg.superblock.enabled {
        return sb_host_target(f);
    }
    f.round_robin_target()
}

/// Block `b` of `stream` has all its data pages claimed: with list pages,
/// a block outside a superblock gets its list page queued. Returns whether
/// the block stays its plane's host block (a superblock member with list
/// pages stays until the cursor comes back for its list page).
pub(crate) fn data_pages_claimed<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
    b: BlockId,
    stream: Stream,
) -> Result<bool, Error> {
    let sb_member = stream == Stream::Host && f.cfg.superblock.enabled;
    if f.cfg.superblock.list_pages && !sb_member {
        list_page_due(f, b)?;
    }
    Ok(sb_member && f.cfg.superblock.list_pages)
}

/// The host block the next page goes to in superblock order, forming a
/// new superblock when the last one is complete; `None` when it must
/// wait (a plane's GC has to free a block first, or no operation is
/// free for a list page). With list pages, a member whose data pages
/// are all claimed gets its list page when the cursor comes back to it,
/// after every member's last data page, and leaves the superblock.
pub(crate) fn sb_host_target<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
) -> Result<Option<BlockId>, Error> {
    let planes = f.g.planes();
    for _ in 0..2 {
        if !sb_mut(f)?.cursor.formed && !sb_form(f)? {
            return Ok(None);
        }
        let mut members = false;
        // A list page does not move the cursor: twice round at most.
        for _ in 0..planes.saturating_mul(2) {
            let p = PlaneId(sb_mut(f)?.cursor.next);
            let active = f.pl(p)?.host_active;
            if active != NIL && sb_list_page_now(f, BlockId(active))? {
                if f.ops_available() == 0 {
                    return Ok(None);
                }
                sb_close_member(f, p, BlockId(active))?;
                continue;
            }
            sb_advance(f)?;
            if active == NIL {
                continue;
            }
            members = true;
            if !f.has_room(p)? {
                f.stats.superpage_skips = f.stats.superpage_skips.wrapping_add(1);
                continue;
            }
            return Ok(Some(BlockId(active)));
        }
        if members {
            // Members left, none with room: overwrites must free some.
            return Ok(None);
        }
        sb_mut(f)?.cursor.formed = false;
    }
    Ok(None)
}

/// Programs the list pages of the superblock's last superpage as soon
/// as the cursor reaches a member whose data pages are all claimed, so
/// they do not wait for the next host write.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn sb_emit_due_lists<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
) -> Result<(), Error> {
    if !(f.cfg.superblock.enabled && f.cfg.superblock.list_pages && sb_mut(f)?.cursor.formed) {
        return Ok(());
    }
    let planes = f.g.planes();
    for _ in 0..planes {
        let p = PlaneId(sb_mut(f)?.cursor.next);
        let active = f.pl(p)?.host_active;
        if active != NIL {
            if !sb_list_page_now(f, BlockId(active))? || f.ops_available() == 0 {
                return Ok(());
            }
            sb_close_member(f, p, BlockId(active))?;
        }
        sb_advance(f)?;
    }
    Ok(())
}

/// Programs member `b`'s list page; the member leaves the superblock.
fn sb_close_member<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    b: BlockId,
) -> Result<(), Error> {
    emit_list_page(f, b)?;
    f.pl_mut(p)?.host_active = NIL;
    f.refresh_ready(p)
}

/// Moves the cursor to the next plane.
fn sb_advance<H: Hooks + HasSuperblocks>(f: &mut Ftl<'_, H>) -> Result<(), Error> {
    let planes = f.g.planes();
    let c = &mut sb_mut(f)?.cursor;
    c.next = c.next.wrapping_add(1);
    if c.next >= planes {
        c.next = 0;
    }
    Ok(())
}

/// Whether host member `b` is due its list page: its data pages are all
/// claimed.
fn sb_list_page_now<H: Hooks + HasSuperblocks>(f: &Ftl<'_, H>, b: BlockId) -> Result<bool, Error> {
    Ok(f.cfg.superblock.list_pages && u32::from(f.blk(b)?.next_page) >= f.data_end())
}

/// Opens a block in every plane with room that has none open. Returns
/// false while some plane must first free a block (its GC is queued).
fn sb_form<H: Hooks + HasSuperblocks>(f: &mut Ftl<'_, H>) -> Result<bool, Error> {
    let mut members = 0u32;
    for i in 0..f.g.planes() {
        let p = PlaneId(i);
        if !f.has_room(p)? {
            continue;
        }
        if f.pl(p)?.host_active != NIL {
            members = members.wrapping_add(1);
            continue;
        }
        if !f.host_may_open(p)? {
            f.attend(p)?;
            return Ok(false);
        }
        let Some(b) = f.open_block(p, Stream::Host)? else {
            return Ok(false);
        };
        f.pl_mut(p)?.host_active = b.0;
        f.refresh_ready(p)?;
        members = members.wrapping_add(1);
    }
    if members == 0 {
        return Ok(false);
    }
    sb_mut(f)?.cursor = SbCursor {
        formed: true,
        next: 0,
    };
    f.stats.superblocks = f.stats.superblocks.wrapping_add(1);
    Ok(true)
}

/// Queues block `b`, whose data pages are all claimed, for its list page.
pub(crate) fn list_page_due<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
    b: BlockId,
) -> Result<(), Error> {
    sb_mut(f)?
        .due
        .push_back(b.0)
        .map_err(|_| rare(Error::Corrupt(&"list pages due overflow")))
}

/// Programs the list pages due (GC blocks, and host blocks outside
/// superblocks) while operations are free.
#[cfg_attr(not(target_arch = "arm"), inline(always))]
pub(crate) fn emit_due_list_pages<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
) -> Result<(), Error> {
    while f.h.superblocks_mut().is_some_and(|s| !s.due.is_empty()) && f.ops_available() > 0 {
        let Some(b) = sb_mut(f)?.due.pop_front() else {
            return Ok(());
        };
        let b = BlockId(b);
        let m = *f.blk(b)?;
        if m.state == BlockState::Open && u32::from(m.next_page) == f.data_end() {
            emit_list_page(f, b)?;
        }
        // Otherwise it was retired meanwhile: nothing to close.
    }
    Ok(())
}

/// Claims and programs (empty) the list page of `b`.
fn emit_list_page<H: Hooks + HasSuperblocks>(f: &mut Ftl<'_, H>, b: BlockId) -> Result<(), Error> {
    let page = claim_list_page(f, b)?;
    let spare = Spare {
        kind: PageKind::Meta,
        seq: f.next_seq(),
        ..Spare::default()
    };
    f.emit(
        OpKind::HostProgram,
        NandCmd::Program {
            page,
            src: [Slot(0); MAX_UNITS_PER_PAGE],
            spare,
        },
        Origin::Meta,
        0,
        0,
    )?;
    f.stats.list_pages = f.stats.list_pages.wrapping_add(1);
    Ok(())
}

/// Claims the list page (the last page) of `b`.
fn claim_list_page<H: Hooks + HasSuperblocks>(
    f: &mut Ftl<'_, H>,
    b: BlockId,
) -> Result<Ppn, Error> {
    let ppb = f.g.pages_per_block;
    let m = f.blk_mut(b)?;
    let page = u32::from(m.next_page);
    m.pending = m.pending.wrapping_add(1);
    m.next_page = u16::try_from(ppb).unwrap_or(u16::MAX);
    Ok(f.g.ppn(b, page))
}

#[cfg(test)]
mod tests {
    //! Superblock placement over the mechanism: a real core on the test
    //! medium, the program order read back from the medium's log.
    use super::*;
    use crate::test_nand::{small_geometry, with_core};
    use crate::Lpn;
    use std::vec::Vec;

    fn host_program_planes(enabled: bool) -> Vec<u32> {
        let mut cfg = Config::with_op_ratio(small_geometry(1), 0.5).unwrap();
        cfg.write_buffer_units = 8;
        cfg.read_slots = 4;
        cfg.max_inflight = 32;
        cfg.superblock = SuperblockConfig {
            enabled,
            list_pages: false,
        };
        with_core(cfg, |ftl, drv| {
            for l in 0..24 {
                drv.write(ftl, Lpn(l), u64::from(l)).unwrap();
            }
            drv.flush(ftl).unwrap();
            let g = cfg.geometry;
            drv.nand
                .log
                .iter()
                .filter(|(_, s)| s.kind == crate::medium::nand::PageKind::Data)
                .map(|(page, _)| g.plane_of(g.block_of(*page)).0)
                .collect()
        })
    }

    #[test]
    fn host_pages_fill_superpages_plane_by_plane() {
        let planes = host_program_planes(true);
        assert!(planes.len() >= 8);
        for (i, &p) in planes.iter().enumerate() {
            assert_eq!(p, i as u32 % 4, "superpage order: {planes:?}");
        }
        // The default placement goes channel first, so it differs.
        let rr = host_program_planes(false);
        assert!(rr.iter().enumerate().any(|(i, &p)| p != i as u32 % 4));
    }
}

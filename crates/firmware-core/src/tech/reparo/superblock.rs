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
use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::MAX_UNITS_PER_PAGE;
use crate::medium::addr::{BlockId, PlaneId, Ppn};
use crate::medium::nand::{NandCmd, Origin, PageKind, Slot, Spare};

/// Superblock settings (off by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SuperblockConfig {
    /// The host stream fills superblocks superpage by superpage instead of
    /// taking planes round-robin with independent open blocks.
    pub enabled: bool,
    /// The last page of every block is a list page, programmed empty by the
    /// core once the block's data pages are claimed.
    pub list_pages: bool,
}

impl SuperblockConfig {
    /// Round-robin planes, no list pages.
    pub const OFF: SuperblockConfig = SuperblockConfig {
        enabled: false,
        list_pages: false,
    };

    /// Checks the settings against the rest of the configuration.
    pub(crate) fn check(&self, cfg: &Config) -> Result<(), Error> {
        if !self.list_pages {
            return Ok(());
        }
        if cfg.geometry.pages_per_block < 2 {
            return Err(Error::InvalidConfig(
                "list pages need at least two pages per block",
            ));
        }
        if cfg.persist.map_entries_per_page != 0 {
            return Err(Error::InvalidConfig(
                "list pages are not recovered after a power cut: turn persistence off",
            ));
        }
        if cfg.guard.enabled() || cfg.copy.remap() {
            return Err(Error::InvalidConfig(
                "list pages need every page of a block usable and no copyless copy",
            ));
        }
        Ok(())
    }
}

/// Blocks whose list page may wait for its turn at once.
pub(crate) const LIST_DUE: usize = 64;

/// The open host superblock's write cursor.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SbCursor {
    /// A superblock is open (its members are the planes' host blocks).
    formed: bool,
    /// Plane the next host page goes to.
    next: u32,
}

impl<H: Hooks> Ftl<'_, H> {
    /// Data pages of a block: all but the list page when list pages are on.
    pub(crate) fn data_end(&self) -> u32 {
        let ppb = self.g.pages_per_block;
        if self.cfg.superblock.list_pages {
            ppb.saturating_sub(1)
        } else {
            ppb
        }
    }

    /// Data units a block holds: [`Self::data_end`] pages of units.
    pub(crate) fn data_units_per_block(&self) -> u32 {
        self.data_end()
            .saturating_mul(u32::from(self.g.units_per_page))
    }

    /// The host block the next page goes to in superblock order, forming a
    /// new superblock when the last one is complete; `None` when it must
    /// wait (a plane's GC has to free a block first, or no operation is
    /// free for a list page). With list pages, a member whose data pages
    /// are all claimed gets its list page when the cursor comes back to it,
    /// after every member's last data page, and leaves the superblock.
    pub(crate) fn sb_host_target(&mut self) -> Result<Option<BlockId>, Error> {
        let planes = self.g.planes();
        for _ in 0..2 {
            if !self.sb.formed && !self.sb_form()? {
                return Ok(None);
            }
            let mut members = false;
            // A list page does not move the cursor: twice round at most.
            for _ in 0..planes.saturating_mul(2) {
                let p = PlaneId(self.sb.next);
                let active = self.pl(p)?.host_active;
                if active != NIL && self.sb_list_page_now(BlockId(active))? {
                    if self.ops_available() == 0 {
                        return Ok(None);
                    }
                    self.sb_close_member(p, BlockId(active))?;
                    continue;
                }
                self.sb_advance();
                if active == NIL {
                    continue;
                }
                members = true;
                if !self.has_room(p)? {
                    self.stats.superpage_skips = self.stats.superpage_skips.saturating_add(1);
                    continue;
                }
                return Ok(Some(BlockId(active)));
            }
            if members {
                // Members left, none with room: overwrites must free some.
                return Ok(None);
            }
            self.sb.formed = false;
        }
        Ok(None)
    }

    /// Programs the list pages of the superblock's last superpage as soon
    /// as the cursor reaches a member whose data pages are all claimed, so
    /// they do not wait for the next host write.
    pub(crate) fn sb_emit_due_lists(&mut self) -> Result<(), Error> {
        if !(self.cfg.superblock.enabled && self.cfg.superblock.list_pages && self.sb.formed) {
            return Ok(());
        }
        let planes = self.g.planes();
        for _ in 0..planes {
            let p = PlaneId(self.sb.next);
            let active = self.pl(p)?.host_active;
            if active != NIL {
                if !self.sb_list_page_now(BlockId(active))? || self.ops_available() == 0 {
                    return Ok(());
                }
                self.sb_close_member(p, BlockId(active))?;
            }
            self.sb_advance();
        }
        Ok(())
    }

    /// Programs member `b`'s list page; the member leaves the superblock.
    fn sb_close_member(&mut self, p: PlaneId, b: BlockId) -> Result<(), Error> {
        self.emit_list_page(b)?;
        self.pl_mut(p)?.host_active = NIL;
        self.refresh_ready(p)
    }

    /// Moves the cursor to the next plane.
    fn sb_advance(&mut self) {
        self.sb.next = self.sb.next.saturating_add(1);
        if self.sb.next >= self.g.planes() {
            self.sb.next = 0;
        }
    }

    /// Whether host member `b` is due its list page: its data pages are all
    /// claimed.
    fn sb_list_page_now(&self, b: BlockId) -> Result<bool, Error> {
        Ok(self.cfg.superblock.list_pages && u32::from(self.blk(b)?.next_page) >= self.data_end())
    }

    /// Opens a block in every plane with room that has none open. Returns
    /// false while some plane must first free a block (its GC is queued).
    fn sb_form(&mut self) -> Result<bool, Error> {
        let mut members = 0u32;
        for i in 0..self.g.planes() {
            let p = PlaneId(i);
            if !self.has_room(p)? {
                continue;
            }
            if self.pl(p)?.host_active != NIL {
                members = members.saturating_add(1);
                continue;
            }
            if !self.host_may_open(p)? {
                self.attend(p)?;
                return Ok(false);
            }
            let Some(b) = self.open_block(p, Stream::Host)? else {
                return Ok(false);
            };
            self.pl_mut(p)?.host_active = b.0;
            self.refresh_ready(p)?;
            members = members.saturating_add(1);
        }
        if members == 0 {
            return Ok(false);
        }
        self.sb = SbCursor {
            formed: true,
            next: 0,
        };
        self.stats.superblocks = self.stats.superblocks.saturating_add(1);
        Ok(true)
    }

    /// Queues block `b`, whose data pages are all claimed, for its list page.
    pub(crate) fn list_page_due(&mut self, b: BlockId) -> Result<(), Error> {
        self.list_due
            .push_back(b.0)
            .map_err(|_| Error::Corrupt("list pages due overflow"))
    }

    /// Programs the list pages due (GC blocks, and host blocks outside
    /// superblocks) while operations are free.
    pub(crate) fn emit_due_list_pages(&mut self) -> Result<(), Error> {
        while !self.list_due.is_empty() && self.ops_available() > 0 {
            let Some(b) = self.list_due.pop_front() else {
                return Ok(());
            };
            let b = BlockId(b);
            let m = *self.blk(b)?;
            if m.state == BlockState::Open && u32::from(m.next_page) == self.data_end() {
                self.emit_list_page(b)?;
            }
            // Otherwise it was retired meanwhile: nothing to close.
        }
        Ok(())
    }

    /// Claims and programs (empty) the list page of `b`.
    fn emit_list_page(&mut self, b: BlockId) -> Result<(), Error> {
        let page = self.claim_list_page(b)?;
        let spare = Spare {
            kind: PageKind::Meta,
            seq: self.next_seq(),
            ..Spare::default()
        };
        self.emit(
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
        self.stats.list_pages = self.stats.list_pages.saturating_add(1);
        Ok(())
    }

    /// Claims the list page (the last page) of `b`.
    fn claim_list_page(&mut self, b: BlockId) -> Result<Ppn, Error> {
        let ppb = self.g.pages_per_block;
        let m = self.blk_mut(b)?;
        let page = u32::from(m.next_page);
        m.pending = m.pending.saturating_add(1);
        m.next_page = u16::try_from(ppb).unwrap_or(u16::MAX);
        Ok(self.g.ppn(b, page))
    }
}

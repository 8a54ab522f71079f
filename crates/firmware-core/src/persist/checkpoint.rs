//! The checkpoint as data: the block table and anchor page formats, and
//! the anchor state the core keeps. The core writes and reads them
//! (`ftl::checkpoint`).

use crate::list::NIL;
use crate::medium::nand::MetaBuf;

/// Magic of an anchor page.
pub(crate) const MAGIC_ANCHOR: u32 = 0x3148_434E; // "NCH1"
/// Magic of a block-table page.
pub(crate) const MAGIC_TABLE: u32 = 0x3154_4B42; // "BKT1"
/// Anchor page kinds.
pub(crate) const KIND_DIRTY: u32 = 0;

pub(crate) const KIND_CHECKPOINT: u32 = 1;

/// Spare-area tag of anchor pages (first LPN slot).
pub(crate) const ANCHOR_TAG: u32 = 0xA4C0_0000;

/// Block-table classes (top four bits of an entry; below them the block's
/// tag, then its erase count).
pub(crate) const C_FREE: u32 = 0;

pub(crate) const C_DATA: u32 = 1;

pub(crate) const C_META: u32 = 2;

pub(crate) const C_BAD: u32 = 3;

pub(crate) const C_ANCHOR: u32 = 4;

/// Where a block-table entry keeps the block's tag (eight bits,
/// [`crate::ftl::hooks::Placement::block_tag`]).
pub(crate) const TAG_SHIFT: u32 = 20;

/// The erase count of a block-table entry (the low 20 bits: a count above
/// it, twenty times an SLC block's endurance, is recorded as this).
pub(crate) const PE_MASK: u32 = 0x000f_ffff;

/// Anchor state: where the next anchor page goes, and what mount found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AnchorState {
    /// Which anchor block takes the next page (0 or 1).
    pub(crate) active: u8,
    /// Next page to program in the active block.
    pub(crate) next_page: u32,
    /// Anchor block unusable (bad).
    pub(crate) bad: [bool; 2],
    /// Mount: first page that read erased in each block (pages written).
    pub(crate) written: [u32; 2],
    /// Mount: newest readable anchor page (sequence, page, kind, buffer).
    pub(crate) newest_seq: u64,
    pub(crate) newest_kind: u32,
    pub(crate) newest_block: u8,
    pub(crate) newest_buf: Option<MetaBuf>,
    /// Mount: a block-table page failed to read or check.
    pub(crate) table_failed: bool,
    /// Mount: the seal erased the other block and now programs it.
    pub(crate) seal_switched: bool,
    /// Mount: the seal program in flight failed.
    pub(crate) seal_failed: bool,
}

impl Default for AnchorState {
    fn default() -> Self {
        AnchorState {
            active: 0,
            next_page: 0,
            bad: [false; 2],
            written: [0; 2],
            newest_seq: 0,
            newest_kind: NIL,
            newest_block: 0,
            newest_buf: None,
            table_failed: false,
            seal_switched: false,
            seal_failed: false,
        }
    }
}

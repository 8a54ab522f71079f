//! The power-cut flush as data: the cut record's format and the state the
//! core keeps while the capacitor drains. The flush itself is the core's
//! (`ftl::power`).

use crate::medium::nand::MetaBuf;

/// Flag on a record's erase entry: erase the block only if its first page
/// reads erased (a first-page program was in flight at the cut).
pub(crate) const IF_ERASED: u32 = 0x8000_0000;

/// Spare-area tag of power-cut records (first LPN slot), so mount knows a
/// record whose content fails its check for one.
pub(crate) const CUT_TAG: u32 = 0xC07C_0000;

/// Translation-page directory entry, during mount, of a TP whose newest
/// copy so far failed its check: older copies are not taken for it.
pub(crate) const TP_DAMAGED: u32 = u32::MAX - 1;

/// Most blocks one power-cut flush writes data to: a full write buffer of
/// 128 MiB in 4 KiB pages of 256-page blocks (128 blocks), plus the one a
/// flush may leave partly written. Larger buffers are refused at start.
pub(crate) const MAX_CUT_BLOCKS: usize = 130;

/// Phases of the power-cut flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum CutPhase {
    /// Not dying.
    #[default]
    Idle,
    /// Writing the write buffer.
    Data,
    /// Writing dirty translation pages.
    Tps,
    /// Writing the record.
    Record,
    /// Writing the block table (`checkpoint.rs`).
    Table,
    /// Writing the anchor page once everything else has completed.
    Anchor,
    /// Everything emitted.
    Done,
}

/// State of the power-cut flush.
#[derive(Clone, Debug, Default)]
pub(crate) struct CutState {
    pub(crate) phase: CutPhase,
    pub(crate) slot_cursor: u32,
    pub(crate) data_block: u32,
    pub(crate) meta_block: u32,
    pub(crate) regions: heapless::Vec<u32, MAX_CUT_BLOCKS>,
    pub(crate) record: MetaBuf,
    pub(crate) n_erase: u32,
    pub(crate) emitted: u32,
    pub(crate) outstanding: u32,
    /// Cut while settling after a mount: no translation pages, the
    /// replayed blocks go into the record again.
    pub(crate) settling: bool,
    /// Pages of the block table, all taken before the first is encoded
    /// (so the table describes the blocks its own pages went to).
    pub(crate) table: heapless::Vec<u32, MAX_TABLE_PAGES>,
    /// Block-table pages emitted so far.
    pub(crate) table_emitted: u32,
    /// A data page of the flush is being programmed: the next waits for
    /// it, so a program failure (after which the block refuses every
    /// program) costs one retry, not one per page queued behind it.
    pub(crate) data_busy: bool,
    /// Likewise for the metadata pages (translation pages, record, table).
    pub(crate) meta_busy: bool,
    /// A block-table page failed: the checkpoint is incomplete, so no
    /// anchor names it and the next mount reads every block's first page.
    pub(crate) table_failed: bool,
}

/// Most block-table pages a checkpoint names (one anchor page lists them).
pub(crate) const MAX_TABLE_PAGES: usize = 256;

//! Mount as data: its steps and the state the core keeps while it reads
//! the drive back. The steps themselves are the core's (`ftl::mount`).

use crate::medium::nand::MetaBuf;
use crate::persist::cut::MAX_CUT_BLOCKS;

/// Erase count of a block whose count mount has not learnt (yet).
pub(crate) const PE_UNKNOWN: u32 = u32::MAX;

/// The steps of mount, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MountStep {
    /// Not mounting.
    #[default]
    Idle,
    /// Reading the anchor blocks for the newest checkpoint.
    Anchor,
    /// Reading the checkpoint's block table.
    Table,
    /// Reading every block's first page (no usable checkpoint).
    Heads,
    /// Reading the metadata region.
    Region,
    /// Reading the newest power-cut record.
    Record,
    /// Reading the pages the last power-cut flush wrote.
    Replay,
    /// Erasing blocks whose erase was torn.
    Erase,
    /// Marking the checkpoint stale before anything else is written.
    Seal,
}

/// Progress of a mount.
#[derive(Clone, Debug, Default)]
pub(crate) struct MountState {
    pub(crate) step: MountStep,
    pub(crate) cursor: u32,
    pub(crate) inflight: u32,
    pub(crate) max_seq: u64,
    pub(crate) best_cut: u32,
    pub(crate) best_cut_seq: u64,
    pub(crate) record: Option<MetaBuf>,
    pub(crate) n_erase: u32,
    pub(crate) n_regions: u32,
    pub(crate) n_free: u32,
    /// Erased blocks the record does not name wore less than this.
    pub(crate) pe_below: u32,
    /// The replayed blocks, kept until the core settles: a cut before then
    /// writes them into its record again instead of the translation pages
    /// the replay dirtied (see [`Ftl::power_fail`]).
    pub(crate) carried: heapless::Vec<u32, MAX_CUT_BLOCKS>,
    /// Settling, the replayed blocks are no longer carried: a cut writes
    /// its dirty translation pages as a running core's does, and GC may
    /// run to give a starved metadata region blocks
    /// ([`crate::Ftl::settle_release`]).
    pub(crate) released: bool,
    /// The seal's dirty marker is on flash.
    pub(crate) sealed: bool,
    /// Newest anchor page whose content failed its check (0: none): an
    /// older checkpoint is not taken over it.
    pub(crate) anchor_damaged_seq: u64,
    /// Newest power-cut record whose content failed its check (0: none).
    pub(crate) cut_damaged_seq: u64,
}

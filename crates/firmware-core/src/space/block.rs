//! The space layer's data: per-block and per-plane state.

use crate::list::{Fifo, NIL, NIL16};
use crate::medium::nand::Origin;

/// Per-block state kept by the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum BlockState {
    /// Not yet seen by format.
    #[default]
    Unknown = 0,
    /// Erased and on its plane's free list.
    Free,
    /// Open for writes (an active block of some stream).
    Open,
    /// Fully written; candidate for GC (on a valid-count bucket list).
    Full,
    /// Chosen as a GC or wear-levelling victim; its data is being moved.
    Victim,
    /// Gone bad with live data still in it; being emptied, never erased again.
    Retiring,
    /// Retired for good (factory or grown bad).
    Bad,
    /// In the metadata region (translation pages, recovery records).
    Meta,
    /// An anchor block of the checkpoint (see `checkpoint.rs`).
    Anchor,
}

/// Per-block metadata (one entry per physical block, lent by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockMeta {
    /// Program/erase cycles completed.
    pub pe: u32,
    /// Intrusive list link (free list or valid-count bucket), `NIL` when unlinked.
    pub next: u32,
    /// Intrusive back link for bucket lists.
    pub prev: u32,
    /// Valid mapping units in the block.
    pub valid: u16,
    /// Next page to program.
    pub next_page: u16,
    /// Programs emitted but not yet completed.
    pub pending: u16,
    /// Lifecycle state.
    pub state: BlockState,
    /// Write stream that opened the block (see [`crate::Stream`]).
    pub stream: u8,
}

/// Per-plane state: free list, active blocks, GC progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaneState {
    /// Head of the free-block list.
    pub free_head: u32,
    /// Blocks on the free list.
    pub free_count: u32,
    /// Open block of the host stream (`NIL` if none).
    pub host_active: u32,
    /// Open block of the GC stream (`NIL` if none).
    pub gc_active: u32,
    /// Block being emptied by GC, wear levelling or retirement (`NIL` if none).
    pub victim: u32,
    /// Why the victim was chosen.
    pub victim_origin: Origin,
    /// Next page of the victim to scan.
    pub victim_cursor: u32,
    /// GC reads in flight for the victim.
    pub gc_reads: u16,
    /// Victim erases in flight (bounded: a cut record lists them all).
    pub erasing: u16,
    /// GC slots holding relocated data, oldest first.
    pub hold: Fifo,
    /// Head of this plane's free GC slot stack.
    pub gc_free_head: u16,
    /// Slots on that stack (kept beside it, so GC need not walk it).
    pub gc_free_count: u16,
    /// Erases since the last static wear-levelling check.
    pub erases_since_wl: u32,
    /// Block chosen by the wear-levelling check, waiting to be moved.
    pub wl_candidate: u32,
    /// Blocks that went bad with data in them, waiting to be emptied (list head).
    pub retire_head: u32,
    /// Link in the core's "plane needs attention" queue.
    pub attn_next: u32,
    /// Whether the plane is on that queue.
    pub in_attn: bool,
    /// Lowest non-empty valid-count bucket may be at or above this.
    pub min_bucket_hint: u16,
    /// Whether the host stream can take a page here now (counted in the core).
    pub host_ready: bool,
    /// Valid units in the plane's blocks.
    pub valid_units: u32,
    /// Blocks lost to failures (bad, or retiring with data still to move)
    /// or set aside for the metadata region.
    pub lost_blocks: u32,
    /// Open metadata-region block (`NIL` if none).
    pub meta_active: u32,
    /// Mapping units the plane's blocks cannot hold this cycle: wordlines
    /// a GuardedErase protected or BPM retired.
    pub skipped_units: u32,
}

impl PlaneState {
    /// Whether the victim has been read to its end (`ppb` pages a block):
    /// the cursor is past its last page and no GC read of it is in flight.
    /// What is left is to program what it held and erase it.
    #[inline(always)]
    pub fn victim_read_out(&self, ppb: u32) -> bool {
        self.victim_cursor >= ppb && self.gc_reads == 0
    }
}

impl Default for PlaneState {
    fn default() -> Self {
        PlaneState {
            free_head: NIL,
            free_count: 0,
            host_active: NIL,
            gc_active: NIL,
            victim: NIL,
            victim_origin: Origin::Gc,
            victim_cursor: 0,
            gc_reads: 0,
            erasing: 0,
            hold: Fifo::EMPTY,
            gc_free_head: NIL16,
            gc_free_count: 0,
            erases_since_wl: 0,
            wl_candidate: NIL,
            retire_head: NIL,
            attn_next: NIL,
            in_attn: false,
            min_bucket_hint: 0,
            host_ready: false,
            valid_units: 0,
            lost_blocks: 0,
            meta_active: NIL,
            skipped_units: 0,
        }
    }
}

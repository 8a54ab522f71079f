//! Buffer slots: what each one holds and its intrusive link.

use crate::list::Linked;

/// What a buffer slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum SlotState {
    /// On a free stack.
    #[default]
    Free = 0,
    /// Host data waiting in the write buffer.
    WbPending,
    /// Host data trimmed while waiting; freed when it reaches the queue head.
    WbDead,
    /// Host data being programmed.
    WbProgramming,
    /// Target of a host read in flight.
    Reading,
    /// A host read finished; waiting to be polled.
    ReadDone,
    /// A host read failed; waiting to be polled.
    ReadFailed,
    /// Handed to the host by a completion; freed on the next call into the core.
    ReadHandedOut,
    /// Target of a GC read in flight.
    GcReading,
    /// Relocated data waiting for a GC program.
    GcHolding,
    /// Relocated data being programmed.
    GcProgramming,
}

/// Per-slot metadata (one entry per buffer slot, lent by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SlotMeta {
    /// Logical unit held (or host tag for reads).
    pub lpn: u32,
    /// Source physical unit for GC data; admission sequence for write-buffer data.
    pub aux: u32,
    /// Intrusive link (free stack, pending FIFO, holding FIFO, completion FIFO).
    pub next: u16,
    /// What the slot holds.
    pub state: SlotState,
}

impl Linked for SlotMeta {
    #[inline]
    fn next(&self) -> u16 {
        self.next
    }
    #[inline]
    fn set_next(&mut self, n: u16) {
        self.next = n;
    }
}

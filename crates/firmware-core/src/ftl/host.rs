//! Host-side vocabulary: command tags and completions.

use crate::medium::nand::Slot;

/// A host-chosen tag that comes back with the completion of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Tag(pub u32);

/// How a read was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadStart {
    /// The unit is in the write buffer: its data is in this slot until the next call into the core.
    Buffered(Slot),
    /// The unit was never written or was trimmed: it reads as zeros.
    Unmapped,
    /// A NAND read was issued; a [`HostCompletion::Read`] will follow.
    Issued,
    /// The unit's data was lost (uncorrectable during relocation, or on a failed die).
    Lost,
}

/// Outcome of a read completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadStatus {
    /// Data is in the slot.
    Ok,
    /// The medium could not return the data.
    MediaError,
}

/// A host command that finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCompletion {
    /// A NAND read for the host finished; on `Ok` the data is in `slot`
    /// until the next call into the core.
    Read {
        /// Tag given to [`crate::Ftl::read`].
        tag: Tag,
        /// Slot holding the data.
        slot: Slot,
        /// Whether the data is valid.
        status: ReadStatus,
    },
    /// Everything buffered before the flush is on flash.
    Flush {
        /// Tag given to [`crate::Ftl::flush`].
        tag: Tag,
    },
}

/// Why a unit of a copy must be copied physically by the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFallback {
    /// Copies are configured physical.
    Mode,
    /// The source unit's reference count is at its maximum.
    CountOverflow,
    /// The shadow OOB has no free record.
    ShadowFull,
    /// The source is still in the write buffer (not on flash yet).
    SourceBuffered,
    /// With partial mapping protection: the source unit is being relocated
    /// (its block is a GC, wear-levelling or retirement victim), whose
    /// translation-page reservation counted its tags when it started.
    Relocating,
}

/// Where a copy command stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyStop {
    /// Every unit is done.
    Done,
    /// The unit after the remapped ones must be copied physically; then call
    /// [`Ftl::copy`] again for the units after it.
    Physical(CopyFallback),
    /// The translation-page budget is full: retry the rest after a completion.
    Busy,
}

/// Result of [`Ftl::copy`]: units `0..remapped` are done, then `stop` says
/// what happens with unit `remapped`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyProgress {
    /// Leading units served without NAND operations (remapped, or copied
    /// from an unmapped or lost source).
    pub remapped: u32,
    /// Why the command stopped.
    pub stop: CopyStop,
}

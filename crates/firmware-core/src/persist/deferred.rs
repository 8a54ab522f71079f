//! Deferred victim erases as data: GC relocations outside the capacitor
//! budget, and the sweep that makes their victims erasable.
//!
//! Any write of a stale page (a sweep's, a budget write-back, a region
//! move) clears its mark and carries the obligation until it completes:
//! the sweep waits for every such write of its generation, so pages the
//! write-backs already wrote are not written twice.
//!
//! Under partial protection a GC relocation need not take capacitor
//! budget: the relocated unit's old copy is the same data and stays
//! readable until its victim is erased, so the translation page on flash
//! still maps the unit right after a power cut. Its page is only marked
//! stale ([`crate::persist::tp::F_LAZY`]). The victim, once empty, waits
//! unerased on a FIFO linked through the blocks' list links. A sweep then
//! writes every stale page (scanning the page flags once), waits until
//! those writes are on flash, and erases the victims that were waiting
//! when it started. A mount after a cut rebuilds the mapping from the
//! pages on flash: a unit whose page was still stale maps to its old copy
//! in an unerased victim, and the relocated copy is garbage.
//!
//! The logic is the core's (`ftl::deferred`).

use crate::list::NIL;

/// Where the sweep is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SweepPhase {
    /// No sweep: victims gather.
    #[default]
    Idle,
    /// Writing every stale translation page from `cursor` on.
    Scanning,
    /// Every stale page emitted; waiting for the writes to complete.
    Draining,
    /// Erasing the victims the sweep covers.
    Erasing,
}

/// Waiting victims and the sweep's progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deferred {
    /// Relocations stay outside the budget (config and partial protection).
    pub on: bool,
    /// Set while GC completions remap units: a mapping change marks its
    /// page stale instead of dirty.
    pub touching: bool,
    /// Translation pages marked stale.
    pub stale: u32,
    /// Oldest and newest waiting victim (`NIL`: none), linked through
    /// their blocks' `next` fields.
    pub head: u32,
    /// Newest waiting victim.
    pub tail: u32,
    /// Victims waiting.
    pub waiting: u32,
    /// A plane ran low on free blocks with victims waiting.
    pub wanted: bool,
    /// Sweep phase.
    pub phase: SweepPhase,
    /// Next translation page the scan looks at.
    pub cursor: u32,
    /// Victims (from the head) the current sweep will erase.
    pub victims: u32,
    /// Translation-page writes in flight that cleared a stale mark, per
    /// generation (the sweep flips the generation when its scan ends and
    /// waits for the old one to drain).
    pub inflight: [u32; 2],
    /// Generation of writes emitted now.
    pub gen: u8,
    /// A sweep write failed: scan again before erasing.
    pub rescan: bool,
}

impl Default for Deferred {
    fn default() -> Self {
        Deferred {
            on: false,
            touching: false,
            stale: 0,
            head: NIL,
            tail: NIL,
            waiting: 0,
            wanted: false,
            phase: SweepPhase::Idle,
            cursor: 0,
            victims: 0,
            inflight: [0; 2],
            gen: 0,
            rescan: false,
        }
    }
}

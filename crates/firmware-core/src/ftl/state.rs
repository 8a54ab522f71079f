//! The core's state: the `Ftl` struct (mechanism state, lent tables and
//! the hook set), its counters and its write streams.

use crate::config::Config;
use crate::ftl::host::Tag;
use crate::ftl::tables::{Fifo, Tables};

/// The core's lifecycle. Host commands are taken only while `Running`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Erasing every block (also the state of a core fresh from `new`).
    Formatting,
    /// Reading the drive back after a power cut or shutdown
    /// ([`crate::persist::mount::MountStep`] says which step).
    Mounting,
    /// Mounted, but the metadata region lacks the cut reserve or the dirty
    /// translation pages exceed the budget: write-backs run, host commands
    /// and GC wait.
    Settling,
    /// Serving host commands.
    Running,
    /// The power went: only the capacitor flush runs.
    Dying,
}

impl Phase {
    /// Formatted or mounted: settling or running.
    pub fn ready(self) -> bool {
        matches!(self, Phase::Settling | Phase::Running)
    }
}

/// Write streams; each plane keeps one open block per stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Stream {
    /// Host writes (write-buffer flushes).
    Host = 0,
    /// Relocated data (GC, wear levelling, retirement).
    Gc = 1,
}

/// Counters the core keeps; the harness turns them into reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Mapping units written by the host.
    pub host_write_units: u64,
    /// Mapping units read by the host.
    pub host_read_units: u64,
    /// Units programmed from the write buffer.
    pub host_program_units: u64,
    /// Units programmed by GC, wear levelling and retirement.
    pub gc_program_units: u64,
    /// Pages relocated through the controller (read, ECC, program: off-chip copies).
    pub offchip_copy_pages: u64,
    /// Units of padding in partly filled pages.
    pub pad_units: u64,
    /// NAND reads emitted.
    pub nand_reads: u64,
    /// NAND programs emitted.
    pub nand_programs: u64,
    /// NAND erases emitted.
    pub nand_erases: u64,
    /// NAND copybacks emitted.
    pub nand_copybacks: u64,
    /// Units read for relocation.
    pub gc_read_units: u64,
    /// Victims reclaimed by GC.
    pub gc_victims: u64,
    /// Victims moved by static wear levelling.
    pub wl_moves: u64,
    /// Relocated units found overwritten when their program finished.
    pub gc_stale_units: u64,
    /// Units lost to uncorrectable reads during relocation.
    pub lost_units: u64,
    /// Program failures reported by the medium.
    pub program_failures: u64,
    /// Erase failures reported by the medium.
    pub erase_failures: u64,
    /// Blocks that went bad in service.
    pub grown_bad_blocks: u64,
    /// Blocks retired for good (factory and grown).
    pub bad_blocks: u64,
    /// Host reads that failed on the medium.
    pub host_read_errors: u64,
    /// Victims the migration mode selector sent off-chip.
    pub offchip_victims: u64,
    /// Blocks whose BER class was measured.
    pub classified_blocks: u64,
    /// Most GC active blocks (copyback quota levels) open at once in one plane.
    pub epm_active_blocks_max: u32,
    /// Victim pages of copyback victims sent off-chip because the EPM check
    /// failed (quota or counter used up, threshold 0).
    pub epm_offchip_pages: u64,
    /// Victim pages of copyback victims sent off-chip because no destination
    /// block of their quota level was open or could be opened.
    pub epm_no_block_pages: u64,
    /// Of `epm_no_block_pages`, those refused because the plane lacked the
    /// spare space to open another quota-level block (free blocks beyond
    /// one plus the erased pages of its level blocks below a block).
    pub epm_no_room_pages: u64,
    /// Of `epm_no_block_pages`, those refused because the plane's valid
    /// data was at its limit (`Ftl::has_room`); the rest of
    /// `epm_no_block_pages` found no free block with a high enough threshold.
    pub epm_full_plane_pages: u64,
    /// Translation pages written while running (write-backs and region moves).
    pub map_programs: u64,
    /// Batches of translation-page write-backs the dirty budget forced.
    pub map_flushes: u64,
    /// Sweeps that wrote the pages GC relocations outside the budget made
    /// stale, then erased their victims (`persist::deferred`).
    pub map_sweeps: u64,
    /// Translation pages those sweeps wrote (also in `map_programs`).
    pub map_sweep_programs: u64,
    /// Programs the power-cut flushes emitted.
    pub cut_programs: u64,
    /// Operations mount emitted.
    pub mount_ops: u64,
    /// Mount reads of blocks' first pages (every block, when no checkpoint
    /// describes the drive).
    pub mount_head_reads: u64,
    /// Mount reads of the pages the last power-cut flush wrote (the data
    /// written since the checkpoint).
    pub mount_replay_reads: u64,
    /// Mounts that took the block table from a checkpoint.
    pub checkpoint_mounts: u64,
    /// Wordlines erased in low-stress mode (GuardedErase).
    pub low_stress_wls: u64,
    /// Erases done with a gErase mode.
    pub guarded_erases: u64,
    /// Copy units served without a NAND operation (remapped, or already the
    /// same, or from an unmapped or lost source).
    pub copy_remapped_units: u64,
    /// Copy units handed back to the driver for a physical copy.
    pub copy_fallback_units: u64,
    /// Host superblocks opened ([`crate::tech::reparo::superblock`]).
    pub superblocks: u64,
    /// Superpage slots skipped because the member's plane had no room.
    pub superpage_skips: u64,
    /// List pages programmed (the last page of each block, for a Reparo
    /// controller's block-level P2L lists).
    pub list_pages: u64,
}

/// The FTL core. See the crate documentation.
pub struct Ftl<'a, H> {
    /// The techniques plugged into the mechanism (see [`hooks`]).
    pub(crate) h: H,
    pub(crate) cfg: Config,
    pub(crate) g: crate::medium::shift::Geo,
    /// Data pages of a block ([`crate::ftl::hooks::Placement::data_end`],
    /// fixed by the configuration): asked on every page claimed and every
    /// valid-count change, so it is computed once.
    pub(crate) data_pages: u32,
    /// Data units of a block: `data_pages` pages of units.
    pub(crate) data_units: u32,
    /// Blocks of a plane that may hold valid data before any is lost:
    /// all but the GC reserve and the open margin (`Ftl::room_for`).
    pub(crate) room_blocks: u32,
    pub(crate) t: Tables<'a>,
    pub(crate) stats: Stats,
    pub(crate) wb_free: u16,
    pub(crate) wb_free_count: u32,
    pub(crate) read_free: u16,
    pub(crate) op_free: u16,
    pub(crate) op_free_count: u32,
    pub(crate) outbound: Fifo,
    pub(crate) pending: Fifo,
    pub(crate) pending_dead: u32,
    pub(crate) done: Fifo,
    pub(crate) handed_out: u16,
    pub(crate) attn_head: u32,
    pub(crate) attn_tail: u32,
    pub(crate) seq: u64,
    /// Round-robin position of the next host page's plane (see
    /// [`Ftl::round_robin_target`]).
    pub(crate) cursor_v: u32,
    pub(crate) ready_planes: u32,
    /// Host-ready planes by round-robin position, bit `v` for position `v`
    /// (kept for drives of at most [`READY_BITS`] planes): the round robin
    /// jumps to the next ready plane instead of visiting each busy one.
    pub(crate) ready_bits: [u32; READY_BITS / 32],
    pub(crate) format_cursor: u32,
    pub(crate) format_pending: u32,
    /// Where the core is in its life.
    pub(crate) phase: Phase,
    pub(crate) admit_seq: u32,
    pub(crate) flushes: heapless::Vec<(Tag, u32), 8>,
    pub(crate) flush_done: heapless::Deque<Tag, 8>,
    pub(crate) force_flush: bool,
    /// The completion being handled arrived while operations were still
    /// queued: the pump at its end passes, once (`Ftl::complete`).
    pub(crate) defer_pump: bool,
    /// A pass was put off that way and none has run since (`Ftl::schedule`).
    pub(crate) pump_owed: bool,
    pub(crate) last_now: u64,
    pub(crate) format_pe: u32,
    pub(crate) ps: crate::persist::tp::Persist<'a>,
    pub(crate) cut: crate::persist::cut::CutState,
    pub(crate) mnt: crate::persist::mount::MountState,
    pub(crate) anc: crate::persist::checkpoint::AnchorState,
}

/// Planes the host-ready bitmap covers (`Ftl::ready_bits`, kept by
/// `ftl::round_robin`).
pub(crate) const READY_BITS: usize = 256;

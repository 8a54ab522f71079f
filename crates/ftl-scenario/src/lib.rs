//! One end-to-end FTL scenario, shared by the host tests and the bare-metal
//! QEMU firmware (`firmware/qemu-m4`), so both targets run the very same code.
//!
//! [`run`] takes every byte it needs from the caller ([`Memory`]): the core's
//! tables (mapping persistence included), the medium's record arrays and its
//! metadata-page room, the data pool and a compact oracle. It formats a small
//! medium ([`GEOMETRY`], [`CONFIG`]), fills it, churns it with a deterministic
//! workload of [`Options::write_factor`] times the logical capacity (hot/cold
//! overwrites, trims, read checks, the odd flush), remounts from flash, audits
//! the core's tables and reads every logical unit back against the oracle. It
//! prints nothing: the caller prints the returned [`Report`].
//!
//! During the churn the power is cut at the points of [`Options::cuts`] the
//! way the host crash harness (`sim-harness` `crash.rs`) does it: the first
//! operation of the planned kind (a host or GC data program, a
//! translation-page write, an erase) is torn on the medium, the core is told
//! ([`Ftl::power_fail`]) and its capacitor flush runs (never more programs
//! than [`Ftl::cut_capacity`]), then the core is rebuilt over the same lent
//! tables and mounted from flash. Every logical unit is then read back:
//! acknowledged data must be exact, the write in flight at the cut may read
//! old or new. Then the workload goes on.
//!
//! The oracle holds one `u32` version per logical unit (0 = never written or
//! trimmed); the data stamp of a unit is `lpn << 32 | version`, so a misdirected
//! read and a stale read are both caught.
//!
//! With [`Corruption::UnreadableBlock`] the scenario damages the medium after the
//! workload, and verification must then report failures.
//!
//! [`multicore`] is the second scenario: four Reparo flash cores behind the
//! master core's striping, a die failure detected and identified from the
//! block-level LBA lists on flash, and the failed LBAs rewritten.
#![no_std]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
#![warn(missing_docs)]

pub mod multicore;

use core::fmt;

use firmware_core::driver::execute;
use firmware_core::ftl::tables::BlockState;
use firmware_core::medium::addr::MAX_UNITS_PER_PAGE;
use firmware_core::persist::mount::MountStep;
use firmware_core::{
    BlockId, Config, CopybackPolicy, Error, FlushPolicy, FullFtl, Geometry, Lpn, NandCmd,
    NandError, NandOp, Origin, PersistConfig, ReadValue, Stats, SyncDriver,
};
use nand_model::{
    BlockRec, FaultConfig, LentMedium, LentMeta, LentStorage, PageRec, ReliabilityConfig,
    TornProgram, UnitRec,
};
use test_kit::rng::XorShift64Star;

/// The medium the scenario formats: 1 channel x 2 dies x 1 plane x 64 blocks x
/// 32 pages of 16 KiB (MLC wordlines), four 4 KiB mapping units per page:
/// 16,384 physical units, 64 MiB of simulated flash.
pub const GEOMETRY: Geometry = Geometry {
    channels: 1,
    dies_per_channel: 2,
    planes_per_die: 1,
    blocks_per_plane: 64,
    pages_per_block: 32,
    page_bytes: 16 * 1024,
    pages_per_wordline: 2,
    units_per_page: 4,
};

/// Exported capacity in mapping units (12,288 x 4 KiB = 48 MiB; 33 % over-provisioning,
/// about 25 % once the GC reserve and the open blocks are set aside).
pub const LOGICAL_UNITS: u32 = 12 * 1024;

/// Mapping entries per translation page: 48 translation pages of 1,040 bytes
/// (header and entries), small enough to keep the lent metadata room modest.
pub const MAP_ENTRIES_PER_PAGE: u32 = 256;

/// Mapping persistence: three quarters of the translation pages may be dirty
/// at once (the capacitor writes at most that many at a cut). The hot quarter
/// of the space stays dirty; the rest is written back while the workload
/// runs, so a cut can tear a translation-page write.
pub const PERSIST: PersistConfig = PersistConfig {
    map_entries_per_page: MAP_ENTRIES_PER_PAGE,
    protect_permille: 750,
    flush_policy: FlushPolicy::Fifo,
    flush_start_permille: 0,
    meta_blocks_per_plane: 0,
    gc_outside_budget: false,
    cut_retries: 0,
};

/// The core configuration: small buffers and queues, as a microcontroller would
/// have, with static wear levelling on so its code runs too, and mapping
/// persistence on so the drive survives power cuts and remounts from flash.
pub const CONFIG: Config = Config {
    geometry: GEOMETRY,
    logical_units: LOGICAL_UNITS,
    write_buffer_units: 64,
    read_slots: 8,
    gc_slots_per_plane: 8,
    gc_reserve_blocks: 2,
    gc_trigger_blocks: 3,
    wl_threshold: 6,
    wl_check_interval: 16,
    max_inflight: 64,
    copyback: CopybackPolicy::OFF_CHIP,
    persist: PERSIST,
    guard: firmware_core::tech::longftl::gerase::GuardConfig::OFF,
    copy: firmware_core::CopyConfig::PHYSICAL,
    superblock: firmware_core::tech::reparo::superblock::SuperblockConfig::OFF,
    placement: firmware_core::tech::placement::config::PlacementConfig::OFF,
    gc_destination: firmware_core::tech::crossway::config::GcDestination::Plane,
};

/// Lengths of every lent slice, as constants so bare-metal code can size
/// `static` arrays. [`check_sizes`] proves they equal what the core and the
/// medium compute at run time.
pub mod sizes {
    use super::{CONFIG, GEOMETRY, MAP_ENTRIES_PER_PAGE};
    use firmware_core::persist::tp::META_HEADER;

    const PLANES_U: usize = GEOMETRY.channels as usize
        * GEOMETRY.dies_per_channel as usize
        * GEOMETRY.planes_per_die as usize;
    const PPB: usize = GEOMETRY.pages_per_block as usize;
    const UNITS_PER_BLOCK: usize = PPB * GEOMETRY.units_per_page as usize;

    /// Core: bytes of the one region the core carves its tables from
    /// (`FullFtl::lend_bytes`, persistence tables included).
    pub const CORE_LENT_BYTES: usize = 161_783;
    /// Core: logical units (the oracle's length).
    pub const L2P: usize = CONFIG.logical_units as usize;
    /// Core: buffer slot entries (and data pool units).
    pub const SLOTS: usize = CONFIG.write_buffer_units as usize
        + CONFIG.read_slots as usize
        + CONFIG.gc_slots_per_plane as usize * PLANES_U;
    /// Core: translation pages.
    pub const TPS: usize = L2P.div_ceil(MAP_ENTRIES_PER_PAGE as usize);
    /// Bytes of one metadata page (translation page or power-cut record).
    pub const META_PAGE_BYTES: usize = META_HEADER + 4 * MAP_ENTRIES_PER_PAGE as usize;
    /// Medium: unit records.
    pub const MEDIUM_UNITS: usize = BLOCKS * UNITS_PER_BLOCK;
    /// Medium: block records.
    pub const MEDIUM_BLOCKS: usize = BLOCKS;
    const BLOCKS: usize = PLANES_U * GEOMETRY.blocks_per_plane as usize;
    /// Driver: data pool, one `u64` stamp per buffer slot.
    pub const DATA: usize = SLOTS;
    /// Medium: page records.
    pub const MEDIUM_PAGES: usize = BLOCKS * PPB;
    /// Medium: metadata page slots. The core's metadata region at its
    /// largest (as `firmware_core::ftl::persist` bounds it: written pages at the
    /// cleaning limit, the pages kept erased for a cut, an open block and a
    /// spare block per plane), with the whole table as the cut budget, plus
    /// one block per plane of margin: every page of those blocks.
    pub const MEDIUM_META_SLOTS: usize = {
        let written = 2 * TPS + PLANES_U * PPB;
        let wb_pages =
            (CONFIG.write_buffer_units as usize).div_ceil(GEOMETRY.units_per_page as usize);
        let reserve = TPS + 1 + wb_pages;
        let pages = written + reserve + 2 * PPB;
        (pages.div_ceil(PPB) + 2 * PLANES_U) * PPB
    };
    /// Medium: bytes of the metadata page slots.
    pub const MEDIUM_META_BYTES: usize = MEDIUM_META_SLOTS * META_PAGE_BYTES;
    /// Oracle: one version per logical unit.
    pub const ORACLE: usize = L2P;
}

/// Checks the [`sizes`] constants against what the core
/// ([`FullFtl::lend_bytes`], [`firmware_core::persist::tp::meta_page_bytes`])
/// and the medium ([`nand_model::StorageSizes::for_geometry`]) compute at
/// run time; returns the core's lent bytes.
pub fn check_sizes() -> Result<usize, ScenarioError> {
    let core = FullFtl::lend_bytes(&CONFIG).map_err(|error| ScenarioError::Core {
        step: Step::Setup,
        error,
    })?;
    let m = nand_model::StorageSizes::for_geometry(&GEOMETRY);
    let same = core == sizes::CORE_LENT_BYTES
        && firmware_core::persist::tp::meta_page_bytes(&CONFIG.persist) == sizes::META_PAGE_BYTES
        && m.blocks == sizes::MEDIUM_BLOCKS
        && m.pages == sizes::MEDIUM_PAGES
        && m.units == sizes::MEDIUM_UNITS;
    if same {
        Ok(core)
    } else {
        Err(ScenarioError::Memory(
            "size constants disagree with the core or the medium",
        ))
    }
}

/// Everything the scenario works in, lent by the caller (Vecs on a host, static
/// arrays on the microcontroller). Contents on entry do not matter. Lengths must
/// be at least the [`sizes`] constants.
pub struct Memory<'a> {
    /// The region the core carves its tables from, persistence tables
    /// included ([`sizes::CORE_LENT_BYTES`]); the scenario builds the core
    /// over it again at every remount.
    pub core: &'a mut [u8],
    /// The driver's data pool: one stamp per buffer slot.
    pub data: &'a mut [u64],
    /// The medium's block records.
    pub medium_blocks: &'a mut [BlockRec],
    /// The medium's page records.
    pub medium_pages: &'a mut [PageRec],
    /// The medium's unit records.
    pub medium_units: &'a mut [UnitRec],
    /// The medium's metadata page bytes ([`sizes::MEDIUM_META_BYTES`]).
    pub medium_meta: &'a mut [u8],
    /// The page each metadata slot holds ([`sizes::MEDIUM_META_SLOTS`]).
    pub medium_meta_pages: &'a mut [u32],
    /// The oracle: one version per logical unit.
    pub oracle: &'a mut [u32],
}

/// Damage done to the medium after the workload, to prove verification catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// Leave the medium alone: every check must pass.
    None,
    /// Age the full block holding the most live units to an absurd P/E count
    /// (`nand_model::Medium::set_pe`), so every read of it is uncorrectable. The
    /// medium has no way to damage a single programmed page at rest, so a whole
    /// block goes; exactly its live units must then fail verification.
    UnreadableBlock,
}

/// P/E count that makes every read of a block uncorrectable in the default
/// reliability model (wear errors grow with the square of P/E over rated).
const ABSURD_PE: u32 = 1_000_000;

/// What operation a power cut tears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutKind {
    /// A write-buffer flush program (host data).
    HostProgram,
    /// A garbage-collection program (relocated data).
    GcProgram,
    /// A translation-page write while running (a write-back, or a move
    /// when the metadata region is cleaned).
    MapProgram,
    /// A block erase.
    Erase,
}

impl CutKind {
    /// Whether `op` is an operation of this kind.
    fn matches(self, op: &NandOp) -> bool {
        match self {
            CutKind::HostProgram => {
                matches!(op.cmd, NandCmd::Program { .. }) && op.origin == Origin::Host
            }
            CutKind::GcProgram => {
                matches!(op.cmd, NandCmd::Program { .. }) && op.origin == Origin::Gc
            }
            CutKind::MapProgram => matches!(op.cmd, NandCmd::ProgramMeta { .. }),
            CutKind::Erase => {
                matches!(op.cmd, NandCmd::Erase { .. } | NandCmd::GuardedErase { .. })
            }
        }
    }
}

/// One planned power cut: once [`PlannedCut::at_permille`] of the run's host
/// writes are done, the next host write that makes the core emit an
/// operation of [`PlannedCut::kind`] loses the power while that operation
/// runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedCut {
    /// Host writes done, in thousandths of the run's total, before the cut is armed.
    pub at_permille: u32,
    /// The operation torn.
    pub kind: CutKind,
    /// How a torn program leaves its page (ignored for an erase: the
    /// medium leaves a torn erase's pages erased or unreadable).
    pub outcome: TornProgram,
}

/// Most cuts one run makes (the size of [`Report::cut_log`]).
pub const MAX_CUTS: usize = 8;

/// The default cuts: a torn host program, a torn GC program, a torn
/// translation-page write, a torn erase.
pub const CUT_PLAN: [PlannedCut; 4] = [
    PlannedCut {
        at_permille: 250,
        kind: CutKind::HostProgram,
        outcome: TornProgram::Uncorrectable,
    },
    PlannedCut {
        at_permille: 450,
        kind: CutKind::GcProgram,
        outcome: TornProgram::Unprogrammed,
    },
    PlannedCut {
        at_permille: 650,
        kind: CutKind::MapProgram,
        outcome: TornProgram::Uncorrectable,
    },
    PlannedCut {
        at_permille: 850,
        kind: CutKind::Erase,
        outcome: TornProgram::Uncorrectable,
    },
];

/// How the scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Seed of the workload generator.
    pub seed: u64,
    /// Host writes, in multiples of the logical capacity (the first pass fills
    /// the drive in order; the rest are random hot/cold overwrites).
    pub write_factor: u32,
    /// Damage to inject before the remount.
    pub corruption: Corruption,
    /// Power cuts during the churn, in order of `at_permille` (at most [`MAX_CUTS`]).
    pub cuts: &'static [PlannedCut],
}

impl Options {
    /// Six times the capacity, fixed seed, no corruption, the [`CUT_PLAN`] cuts.
    pub const DEFAULT: Options = Options {
        seed: 0x5EED_F7A1_2024,
        write_factor: 6,
        corruption: Corruption::None,
        cuts: &CUT_PLAN,
    };
}

impl Default for Options {
    fn default() -> Self {
        Options::DEFAULT
    }
}

/// Phases of the scenario, named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Checking lent memory and building the core and the medium.
    Setup,
    /// Low-level format.
    Format,
    /// Sequential fill of the logical space.
    Fill,
    /// Random overwrites, trims, read checks and flushes.
    Churn,
    /// A power cut: the torn operation and the capacitor flush.
    Cut,
    /// Mounting from flash after a power cut, and the read-back that follows.
    Mount,
    /// Injecting the requested corruption.
    Corrupt,
    /// Remount (see [`Remount`]).
    Remount,
    /// Reading everything back.
    Verify,
}

/// How the scenario remounted at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remount {
    /// Flush the write buffer, power off (the capacitor flush writes the
    /// dirty translation pages and a record), drop the core, rebuild it over
    /// the same lent tables and mount it from the medium.
    FromFlash,
}

/// Why the scenario stopped before finishing (as opposed to checks failing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioError {
    /// The core returned an error.
    Core {
        /// Phase it happened in.
        step: Step,
        /// The error.
        error: Error,
    },
    /// The medium refused a test hook.
    Medium {
        /// Phase it happened in.
        step: Step,
        /// The error.
        error: NandError,
    },
    /// A power-cut flush needed more programs than the capacitor pays for.
    CapacitorOverrun {
        /// Programs the flush asked for (at least).
        programs: u32,
        /// Programs the capacitor pays for ([`Ftl::cut_capacity`]).
        capacity: u32,
    },
    /// Lent memory is missing or too small; the text says which.
    Memory(&'static str),
    /// The options ask for something the scenario cannot do; the text says what.
    Options(&'static str),
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Core { step, error } => write!(f, "core error during {step:?}: {error}"),
            ScenarioError::Medium { step, error } => {
                write!(f, "medium error during {step:?}: {error:?}")
            }
            ScenarioError::CapacitorOverrun { programs, capacity } => write!(
                f,
                "power-cut flush needed more than {capacity} programs ({programs})"
            ),
            ScenarioError::Memory(s) => write!(f, "lent memory: {s}"),
            ScenarioError::Options(s) => write!(f, "options: {s}"),
        }
    }
}

/// The first check that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A read returned something other than the oracle's value.
    Read {
        /// Logical unit read.
        lpn: u32,
        /// What the oracle expected.
        expected: ReadValue<u64>,
        /// What the core returned.
        got: ReadValue<u64>,
    },
    /// The core's cross-table audit failed.
    Audit(Error),
}

/// The block [`Corruption::UnreadableBlock`] damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupted {
    /// Flat block number.
    pub block: u32,
    /// Live units the core had in it when it was damaged.
    pub live_units: u16,
}

/// The mount steps one mount went through (a set of [`MountStep`]s), so a
/// report shows whether the replay and the re-erase ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MountSteps(u8);

impl MountSteps {
    const ALL: [(MountStep, &'static str); 8] = [
        (MountStep::Anchor, "anchor"),
        (MountStep::Table, "table"),
        (MountStep::Heads, "heads"),
        (MountStep::Region, "region"),
        (MountStep::Record, "record"),
        (MountStep::Replay, "replay"),
        (MountStep::Erase, "erase"),
        (MountStep::Seal, "seal"),
    ];

    fn bit(step: MountStep) -> u8 {
        match step {
            MountStep::Idle => 0,
            MountStep::Heads => 1,
            MountStep::Region => 2,
            MountStep::Record => 4,
            MountStep::Replay => 8,
            MountStep::Erase => 16,
            MountStep::Anchor => 32,
            MountStep::Table => 64,
            MountStep::Seal => 128,
        }
    }

    fn note(&mut self, step: MountStep) {
        self.0 |= Self::bit(step);
    }

    /// Whether the mount went through `step`.
    pub fn contains(&self, step: MountStep) -> bool {
        self.0 & Self::bit(step) != 0
    }
}

impl fmt::Display for MountSteps {
    /// The steps' names in mount order, separated by `+`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (step, name) in Self::ALL {
            if self.contains(step) {
                if !first {
                    f.write_str("+")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

/// What one power cut did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutReport {
    /// The planned cut.
    pub plan: PlannedCut,
    /// Host writes issued when the power went.
    pub at_host_writes: u64,
    /// Whether the medium took the torn operation (false: it refused it,
    /// and the cut came with nothing torn).
    pub torn: bool,
    /// Programs the capacitor flush made.
    pub flush_programs: u32,
    /// Operations the mount after the cut emitted.
    pub mount_ops: u64,
    /// The steps that mount went through.
    pub mount_steps: MountSteps,
    /// The host write in flight read back new (true) or old (false).
    pub in_flight_new: bool,
}

/// What happened. Every read of a logical unit against the oracle, and every
/// table audit (after each mount), is one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// Exported capacity in mapping units.
    pub logical_units: u32,
    /// Host writes issued (fill included).
    pub host_writes: u64,
    /// Trims issued.
    pub trims: u64,
    /// Flushes issued during the churn (the remount's not counted).
    pub flushes: u64,
    /// Checks that matched.
    pub checks_passed: u64,
    /// Checks that did not.
    pub checks_failed: u64,
    /// Checks done during the churn (the rest follow the cuts and the final remount).
    pub churn_checks: u64,
    /// Checks done after the power cuts (audits and read-backs).
    pub cut_checks: u64,
    /// Power cuts made during the churn.
    pub cuts: u32,
    /// Mounts from flash (one per cut, plus the final remount).
    pub mounts: u32,
    /// Operations all those mounts emitted.
    pub mount_ops: u64,
    /// Reads after a cut that returned older data, zeros or an error where
    /// acknowledged data was due.
    pub lost_acknowledged: u64,
    /// Reads after a cut that returned data never written to that unit.
    pub invalid_reads: u64,
    /// Programs the capacitor pays for ([`Ftl::cut_capacity`]).
    pub cut_capacity: u32,
    /// Most programs one power-cut flush made (the final power-off included).
    pub cut_programs_max: u32,
    /// Most metadata pages the medium held at once (of [`sizes::MEDIUM_META_SLOTS`]).
    pub meta_slots_peak: u32,
    /// Each cut, in order.
    pub cut_log: [Option<CutReport>; MAX_CUTS],
    /// The first failed check.
    pub first_failure: Option<Failure>,
    /// The damaged block, if corruption was requested.
    pub corrupted: Option<Corrupted>,
    /// How the remount was done.
    pub remount: Remount,
    /// Lowest and highest P/E count of a good block, as the core tracks them.
    pub pe_range: (u32, u32),
    /// The core's counters, summed over every mount of the run.
    pub core: Stats,
    /// The medium's counters.
    pub medium: nand_model::Stats,
}

impl Report {
    /// All checks passed (and there were some).
    pub fn ok(&self) -> bool {
        self.checks_failed == 0 && self.checks_passed > 0
    }

    /// Total checks.
    pub fn checks(&self) -> u64 {
        self.checks_passed.saturating_add(self.checks_failed)
    }

    /// The cuts made, in order.
    pub fn cut_reports(&self) -> impl Iterator<Item = &CutReport> {
        self.cut_log.iter().flatten()
    }
}

/// The scenarios' generator: xorshift64* from an odd seed, drawing with
/// [`XorShift64Star::below_u32`].
fn rng(seed: u64) -> XorShift64Star {
    XorShift64Star(seed | 1)
}

/// The data stamp of version `v` of unit `lpn`.
pub fn stamp(lpn: u32, version: u32) -> u64 {
    (u64::from(lpn) << 32) | u64::from(version)
}

/// What a read of `lpn` must return when the oracle holds `version`.
fn expected(lpn: u32, version: u32) -> ReadValue<u64> {
    if version == 0 {
        ReadValue::Unmapped
    } else {
        ReadValue::Data(stamp(lpn, version))
    }
}

/// Sums the counters of `s` into `total` (maxima keep the larger).
fn add_stats(total: &mut Stats, s: &Stats) {
    let Stats {
        host_write_units,
        host_read_units,
        host_program_units,
        gc_program_units,
        offchip_copy_pages,
        pad_units,
        nand_reads,
        nand_programs,
        nand_erases,
        nand_copybacks,
        gc_read_units,
        gc_victims,
        wl_moves,
        gc_stale_units,
        lost_units,
        program_failures,
        erase_failures,
        grown_bad_blocks,
        bad_blocks,
        host_read_errors,
        offchip_victims,
        classified_blocks,
        epm_active_blocks_max,
        epm_offchip_pages,
        epm_no_block_pages,
        epm_no_room_pages,
        epm_full_plane_pages,
        map_programs,
        map_flushes,
        map_sweeps,
        map_sweep_programs,
        cut_programs,
        mount_ops,
        mount_head_reads,
        mount_replay_reads,
        checkpoint_mounts,
        low_stress_wls,
        guarded_erases,
        copy_remapped_units,
        copy_fallback_units,
        superblocks,
        superpage_skips,
        list_pages,
    } = *s;
    let t = total;
    t.host_write_units = t.host_write_units.saturating_add(host_write_units);
    t.host_read_units = t.host_read_units.saturating_add(host_read_units);
    t.host_program_units = t.host_program_units.saturating_add(host_program_units);
    t.gc_program_units = t.gc_program_units.saturating_add(gc_program_units);
    t.offchip_copy_pages = t.offchip_copy_pages.saturating_add(offchip_copy_pages);
    t.pad_units = t.pad_units.saturating_add(pad_units);
    t.nand_reads = t.nand_reads.saturating_add(nand_reads);
    t.nand_programs = t.nand_programs.saturating_add(nand_programs);
    t.nand_erases = t.nand_erases.saturating_add(nand_erases);
    t.nand_copybacks = t.nand_copybacks.saturating_add(nand_copybacks);
    t.gc_read_units = t.gc_read_units.saturating_add(gc_read_units);
    t.gc_victims = t.gc_victims.saturating_add(gc_victims);
    t.wl_moves = t.wl_moves.saturating_add(wl_moves);
    t.gc_stale_units = t.gc_stale_units.saturating_add(gc_stale_units);
    t.lost_units = t.lost_units.saturating_add(lost_units);
    t.program_failures = t.program_failures.saturating_add(program_failures);
    t.erase_failures = t.erase_failures.saturating_add(erase_failures);
    t.grown_bad_blocks = t.grown_bad_blocks.saturating_add(grown_bad_blocks);
    // Retired blocks, which every core learns again from the medium: the most.
    t.bad_blocks = t.bad_blocks.max(bad_blocks);
    t.host_read_errors = t.host_read_errors.saturating_add(host_read_errors);
    t.offchip_victims = t.offchip_victims.saturating_add(offchip_victims);
    t.classified_blocks = t.classified_blocks.saturating_add(classified_blocks);
    t.epm_active_blocks_max = t.epm_active_blocks_max.max(epm_active_blocks_max);
    t.epm_offchip_pages = t.epm_offchip_pages.saturating_add(epm_offchip_pages);
    t.epm_no_block_pages = t.epm_no_block_pages.saturating_add(epm_no_block_pages);
    t.epm_no_room_pages = t.epm_no_room_pages.saturating_add(epm_no_room_pages);
    t.epm_full_plane_pages = t.epm_full_plane_pages.saturating_add(epm_full_plane_pages);
    t.map_programs = t.map_programs.saturating_add(map_programs);
    t.map_flushes = t.map_flushes.saturating_add(map_flushes);
    t.map_sweeps = t.map_sweeps.saturating_add(map_sweeps);
    t.map_sweep_programs = t.map_sweep_programs.saturating_add(map_sweep_programs);
    t.cut_programs = t.cut_programs.saturating_add(cut_programs);
    t.mount_ops = t.mount_ops.saturating_add(mount_ops);
    t.mount_head_reads = t.mount_head_reads.saturating_add(mount_head_reads);
    t.mount_replay_reads = t.mount_replay_reads.saturating_add(mount_replay_reads);
    t.checkpoint_mounts = t.checkpoint_mounts.saturating_add(checkpoint_mounts);
    t.low_stress_wls = t.low_stress_wls.saturating_add(low_stress_wls);
    t.guarded_erases = t.guarded_erases.saturating_add(guarded_erases);
    t.copy_remapped_units = t.copy_remapped_units.saturating_add(copy_remapped_units);
    t.copy_fallback_units = t.copy_fallback_units.saturating_add(copy_fallback_units);
    t.superblocks = t.superblocks.saturating_add(superblocks);
    t.superpage_skips = t.superpage_skips.saturating_add(superpage_skips);
    t.list_pages = t.list_pages.saturating_add(list_pages);
}

/// The host write in progress when the power went: the unit may read back
/// either version.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    lpn: u32,
    new: u32,
}

/// How a churn ended.
enum Churned {
    /// Every host write of the run was issued.
    Done,
    /// The power was cut (and the capacitor flush ran); the core must be
    /// rebuilt and mounted.
    Cut(InFlight),
}

/// Workload state: oracle, generator and tallies.
struct Run<'o> {
    oracle: &'o mut [u32],
    version: u32,
    rng: XorShift64Star,
    report: Report,
}

type Driver<'n, 'm> = SyncDriver<'n, LentMedium<'m>>;

fn core_err(step: Step) -> impl Fn(Error) -> ScenarioError + Copy {
    move |error| ScenarioError::Core { step, error }
}

impl Run<'_> {
    fn slot(&mut self, lpn: u32) -> Result<&mut u32, ScenarioError> {
        self.oracle
            .get_mut(lpn as usize)
            .ok_or(ScenarioError::Memory("oracle index"))
    }

    /// The next version (unique per run, never 0: 0 means unmapped).
    fn next_version(&mut self) -> u32 {
        self.version = self.version.wrapping_add(1).max(1);
        self.version
    }

    fn write(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        lpn: u32,
        step: Step,
    ) -> Result<(), ScenarioError> {
        let v = self.next_version();
        drv.write(ftl, Lpn(lpn), stamp(lpn, v))
            .map_err(core_err(step))?;
        *self.slot(lpn)? = v;
        self.report.host_writes = self.report.host_writes.saturating_add(1);
        Ok(())
    }

    /// A host write during which the power goes at the first operation
    /// `cut` names (if the write makes the core emit one). Returns the
    /// write in flight when the power went.
    fn write_cut(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        lpn: u32,
        cut: PlannedCut,
    ) -> Result<Option<InFlight>, ScenarioError> {
        let v = self.next_version();
        let flight = InFlight { lpn, new: v };
        let err = core_err(Step::Churn);
        self.report.host_writes = self.report.host_writes.saturating_add(1);
        loop {
            match ftl.write(Lpn(lpn), drv.now) {
                Ok(s) => {
                    *drv.data
                        .get_mut(usize::from(s.0))
                        .ok_or(ScenarioError::Memory("slot outside the data pool"))? =
                        stamp(lpn, v);
                    break;
                }
                Err(Error::Busy) => {
                    if ftl.ops_queued() == 0 {
                        return Err(err(Error::OutOfSpace));
                    }
                    if self.run_until(drv, ftl, cut)? {
                        return Ok(Some(flight));
                    }
                }
                Err(e) => return Err(err(e)),
            }
        }
        if self.run_until(drv, ftl, cut)? {
            return Ok(Some(flight));
        }
        *self.slot(lpn)? = v;
        Ok(None)
    }

    /// Runs the core's operations like [`SyncDriver::run`], except that the
    /// first one of the kind `cut` names is torn and the power goes (the
    /// capacitor flush then runs). True if the power went.
    fn run_until(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        cut: PlannedCut,
    ) -> Result<bool, ScenarioError> {
        let stop = run_ops(drv, ftl, Step::Churn, |op| Ok(cut.kind.matches(op)), |_| {})?;
        let Some(op) = stop else {
            return Ok(false);
        };
        let torn = tear(drv, ftl, &op, cut.outcome);
        let flush_programs = self.power_off(drv, ftl)?;
        let entry = self
            .report
            .cut_log
            .get_mut(self.report.cuts as usize)
            .ok_or(ScenarioError::Options("more cuts than MAX_CUTS"))?;
        *entry = Some(CutReport {
            plan: cut,
            at_host_writes: self.report.host_writes,
            torn,
            flush_programs,
            mount_ops: 0,
            mount_steps: MountSteps::default(),
            in_flight_new: false,
        });
        self.report.cuts = self.report.cuts.saturating_add(1);
        Ok(true)
    }

    /// The supply fails: the core abandons what is in flight and emits its
    /// capacitor flush, which runs here, held to [`Ftl::cut_capacity`]
    /// programs. Returns the programs it made.
    fn power_off(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
    ) -> Result<u32, ScenarioError> {
        let err = core_err(Step::Cut);
        ftl.power_fail(drv.now).map_err(err)?;
        let capacity = ftl.cut_capacity();
        self.report.cut_capacity = capacity;
        let mut programs = 0u32;
        let count = |op: &NandOp| {
            if matches!(
                op.cmd,
                NandCmd::Program { .. } | NandCmd::ProgramMeta { .. }
            ) {
                programs = programs.saturating_add(1);
                if programs > capacity {
                    return Err(ScenarioError::CapacitorOverrun { programs, capacity });
                }
            }
            Ok(false)
        };
        run_ops(drv, ftl, Step::Cut, count, |_| {})?;
        if !ftl.cut_finished() {
            return Err(err(Error::Corrupt(&"power-cut flush did not finish")));
        }
        self.report.cut_programs_max = self.report.cut_programs_max.max(programs);
        // The drive stays off a while.
        drv.now = drv.now.wrapping_add(1_000_000);
        Ok(programs)
    }

    /// Mounts a core fresh from [`FullFtl::new`] from the medium, step by step,
    /// and audits its tables (one check). Returns the mount's operations and
    /// the steps it went through.
    fn mount(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        step: Step,
    ) -> Result<(u64, MountSteps), ScenarioError> {
        let err = core_err(step);
        ftl.mount(drv.now).map_err(err)?;
        let mut steps = MountSteps::default();
        steps.note(ftl.mount_step());
        run_ops(
            drv,
            ftl,
            step,
            |_| Ok(false),
            |f| steps.note(f.mount_step()),
        )?;
        if !ftl.is_ready() {
            return Err(err(Error::NotReady));
        }
        let ops = ftl.stats().mount_ops;
        self.report.mounts = self.report.mounts.saturating_add(1);
        self.report.mount_ops = self.report.mount_ops.saturating_add(ops);
        let audit = ftl.audit().err().map(Failure::Audit);
        self.tally(audit);
        Ok((ops, steps))
    }

    /// After a cut and a mount: reads every logical unit back. Acknowledged
    /// data must be exact; the write in flight may read old or new (the
    /// oracle takes what it read).
    fn check_after_cut(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        flight: InFlight,
    ) -> Result<bool, ScenarioError> {
        let mut in_flight_new = false;
        for lpn in 0..self.report.logical_units {
            let have = *self.slot(lpn)?;
            let want = expected(lpn, have);
            let got = drv.read(ftl, Lpn(lpn)).map_err(core_err(Step::Mount))?;
            self.report.cut_checks = self.report.cut_checks.saturating_add(1);
            if got == want {
                self.tally(None);
                continue;
            }
            if lpn == flight.lpn && got == expected(lpn, flight.new) {
                *self.slot(lpn)? = flight.new;
                in_flight_new = true;
                self.tally(None);
                continue;
            }
            if self.is_older(lpn, have, got) {
                self.report.lost_acknowledged = self.report.lost_acknowledged.saturating_add(1);
            } else {
                self.report.invalid_reads = self.report.invalid_reads.saturating_add(1);
            }
            self.tally(Some(Failure::Read {
                lpn,
                expected: want,
                got,
            }));
        }
        Ok(in_flight_new)
    }

    /// Whether `got`, read from `lpn` where version `have` was due, is
    /// acknowledged data lost (older data of the unit, zeros or an error) as
    /// opposed to data never written there.
    fn is_older(&self, lpn: u32, have: u32, got: ReadValue<u64>) -> bool {
        match got {
            ReadValue::Data(s) => {
                let (owner, v) = ((s >> 32) as u32, s as u32);
                let bound = if have == 0 { self.version } else { have };
                owner == lpn && v != 0 && v <= bound
            }
            ReadValue::Unmapped | ReadValue::Error => true,
        }
    }

    fn trim(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        lpn: u32,
    ) -> Result<(), ScenarioError> {
        // A trim dirties a translation page: with the budget full the core
        // writes some back first and answers Busy meanwhile (the driver waits).
        drv.trim(ftl, Lpn(lpn)).map_err(core_err(Step::Churn))?;
        *self.slot(lpn)? = 0;
        self.report.trims = self.report.trims.saturating_add(1);
        Ok(())
    }

    fn tally(&mut self, failure: Option<Failure>) {
        match failure {
            None => self.report.checks_passed = self.report.checks_passed.saturating_add(1),
            Some(f) => {
                self.report.checks_failed = self.report.checks_failed.saturating_add(1);
                if self.report.first_failure.is_none() {
                    self.report.first_failure = Some(f);
                }
            }
        }
    }

    fn check(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        lpn: u32,
        step: Step,
    ) -> Result<(), ScenarioError> {
        let want = expected(lpn, *self.slot(lpn)?);
        let got = drv.read(ftl, Lpn(lpn)).map_err(core_err(step))?;
        let failure = (got != want).then_some(Failure::Read {
            lpn,
            expected: want,
            got,
        });
        self.tally(failure);
        Ok(())
    }

    /// Random hot/cold overwrites with trims, read checks and the odd flush,
    /// until `target` host writes have been issued, or until the power goes
    /// at `cut` (armed once `cut`'s host-write count is reached).
    fn churn(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut FullFtl<'_>,
        target: u64,
        cut: Option<(u64, PlannedCut)>,
    ) -> Result<Churned, ScenarioError> {
        let n = self.report.logical_units;
        // A quarter of the space takes three quarters of the traffic.
        let hot = (n / 4).max(1);
        while self.report.host_writes < target {
            drv.now = drv.now.wrapping_add(1);
            let lpn = if self.rng.below_u32(4) < 3 {
                self.rng.below_u32(hot)
            } else {
                self.rng.below_u32(n)
            };
            match self.rng.below_u32(512) {
                0..=7 => self.trim(drv, ftl, lpn)?,
                8..=23 => {
                    self.check(drv, ftl, lpn, Step::Churn)?;
                    self.report.churn_checks = self.report.churn_checks.saturating_add(1);
                }
                24 => {
                    drv.flush(ftl).map_err(core_err(Step::Churn))?;
                    self.report.flushes = self.report.flushes.saturating_add(1);
                }
                _ => match cut {
                    Some((at, plan)) if self.report.host_writes >= at => {
                        if let Some(flight) = self.write_cut(drv, ftl, lpn, plan)? {
                            return Ok(Churned::Cut(flight));
                        }
                    }
                    _ => self.write(drv, ftl, lpn, Step::Churn)?,
                },
            }
        }
        Ok(Churned::Done)
    }
}

/// Runs the core's operations one at a time in emission order, as
/// [`SyncDriver::run`] does. `stop` sees each operation first: true leaves it
/// unrun and returns it (the power goes while it runs). `after` sees the core
/// after each completion.
fn run_ops(
    drv: &mut Driver<'_, '_>,
    ftl: &mut FullFtl<'_>,
    step: Step,
    mut stop: impl FnMut(&NandOp) -> Result<bool, ScenarioError>,
    mut after: impl FnMut(&FullFtl<'_>),
) -> Result<Option<NandOp>, ScenarioError> {
    while let Some(op) = ftl.poll_op() {
        if stop(&op)? {
            return Ok(Some(op));
        }
        let r = execute(drv.nand, drv.data, ftl.meta_for(&op), &op);
        ftl.complete(op.id, r, drv.now).map_err(core_err(step))?;
        after(ftl);
    }
    Ok(None)
}

/// Tears `op` on the medium the way a power cut mid-operation leaves it: a
/// program as `outcome` says, an erase half done. False if the medium
/// refused (the cut then tore nothing).
fn tear(
    drv: &mut Driver<'_, '_>,
    ftl: &mut FullFtl<'_>,
    op: &NandOp,
    outcome: TornProgram,
) -> bool {
    let r = match op.cmd {
        NandCmd::Program { page, src, spare } => {
            let n = (spare.units.count() as usize).min(MAX_UNITS_PER_PAGE);
            let mut stamps = [0u64; MAX_UNITS_PER_PAGE];
            for (s, slot) in stamps.iter_mut().zip(src.iter()).take(n) {
                *s = drv.data.get(usize::from(slot.0)).copied().unwrap_or(0);
            }
            let stamps = stamps.get(..n).unwrap_or(&[]);
            drv.nand.tear_program(page, stamps, &spare, outcome)
        }
        NandCmd::ProgramMeta { page, spare, .. } => {
            drv.nand
                .tear_program_meta(page, ftl.meta_for(op), &spare, outcome)
        }
        NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. } => {
            drv.nand.tear_erase(block)
        }
        NandCmd::Read { .. } | NandCmd::ReadMeta { .. } | NandCmd::Copyback { .. } => return false,
    };
    r.is_ok()
}

/// Damages the medium as `c` says; returns what was damaged.
fn corrupt(
    drv: &mut Driver<'_, '_>,
    ftl: &FullFtl<'_>,
    c: Corruption,
) -> Result<Option<Corrupted>, ScenarioError> {
    if c == Corruption::None {
        return Ok(None);
    }
    let core = core_err(Step::Corrupt);
    let mut best: Option<Corrupted> = None;
    for b in 0..GEOMETRY.total_blocks() {
        let (_, state, valid) = ftl.block_info(BlockId(b)).map_err(&core)?;
        if state == BlockState::Full && valid > best.map_or(0, |c| c.live_units) {
            best = Some(Corrupted {
                block: b,
                live_units: valid,
            });
        }
    }
    let Some(target) = best else {
        return Err(core(Error::Corrupt(
            &"no full block with live data to damage",
        )));
    };
    drv.nand
        .set_pe(BlockId(target.block), ABSURD_PE)
        .map_err(|error| ScenarioError::Medium {
            step: Step::Corrupt,
            error,
        })?;
    Ok(Some(target))
}

/// Lowest and highest P/E count of a good block.
fn pe_range(ftl: &FullFtl<'_>) -> Result<(u32, u32), ScenarioError> {
    let mut lo = u32::MAX;
    let mut hi = 0;
    for b in 0..GEOMETRY.total_blocks() {
        let (pe, state, _) = ftl.block_info(BlockId(b)).map_err(core_err(Step::Verify))?;
        if state != BlockState::Bad {
            lo = lo.min(pe);
            hi = hi.max(pe);
        }
    }
    Ok((lo.min(hi), hi))
}

/// Host writes after which cut `i` of `cuts` is armed (`None`: no more cuts).
fn cut_point(cuts: &[PlannedCut], i: usize, target: u64) -> Option<(u64, PlannedCut)> {
    let c = *cuts.get(i)?;
    let at = target.saturating_mul(u64::from(c.at_permille.min(1000))) / 1000;
    Some((at, c))
}

/// Runs the whole scenario over lent memory. Failed checks are counted in the
/// report; an `Err` means the scenario could not run to the end.
pub fn run(mem: Memory<'_>, opts: &Options) -> Result<Report, ScenarioError> {
    check_sizes()?;
    if opts.cuts.len() > MAX_CUTS {
        return Err(ScenarioError::Options("more cuts than MAX_CUTS"));
    }
    let Memory {
        core,
        data,
        medium_blocks,
        medium_pages,
        medium_units,
        medium_meta,
        medium_meta_pages,
        oracle,
    } = mem;
    let n = CONFIG.logical_units;
    let oracle = oracle.get_mut(..n as usize).ok_or(ScenarioError::Memory(
        "oracle shorter than the logical capacity",
    ))?;
    oracle.fill(0);
    if data.len() < sizes::DATA {
        return Err(ScenarioError::Memory(
            "data pool shorter than the buffer slots",
        ));
    }
    let setup = core_err(Step::Setup);
    let meta_pages = medium_meta_pages
        .get_mut(..sizes::MEDIUM_META_SLOTS)
        .ok_or(ScenarioError::Memory(
            "fewer metadata page slots than MEDIUM_META_SLOTS",
        ))?;
    let meta = LentMeta::new(medium_meta, meta_pages, sizes::META_PAGE_BYTES).map_err(&setup)?;
    let store = LentStorage::new(medium_blocks, medium_pages, medium_units).with_meta(meta);
    let mut nand = LentMedium::with_storage(
        GEOMETRY,
        ReliabilityConfig::default(),
        FaultConfig::default(),
        store,
    )
    .map_err(&setup)?;
    let mut drv = SyncDriver::new(&mut nand, data);

    let mut r = Run {
        oracle,
        version: 0,
        rng: rng(opts.seed),
        report: Report {
            logical_units: n,
            host_writes: 0,
            trims: 0,
            flushes: 0,
            checks_passed: 0,
            checks_failed: 0,
            churn_checks: 0,
            cut_checks: 0,
            cuts: 0,
            mounts: 0,
            mount_ops: 0,
            lost_acknowledged: 0,
            invalid_reads: 0,
            cut_capacity: 0,
            cut_programs_max: 0,
            meta_slots_peak: 0,
            cut_log: [None; MAX_CUTS],
            first_failure: None,
            corrupted: None,
            remount: Remount::FromFlash,
            pe_range: (0, 0),
            core: Stats::default(),
            medium: nand_model::Stats::default(),
        },
    };
    let target = u64::from(n).saturating_mul(u64::from(opts.write_factor.max(1)));
    let mut total = Stats::default();
    // One core per power-on: format and fill on the first, mount and check
    // on the others; each churns until the next cut or the end of the run.
    let mut after_cut: Option<InFlight> = None;
    loop {
        let mut ftl = FullFtl::new(CONFIG, &mut *core).map_err(&setup)?;
        match after_cut {
            None => {
                drv.format(&mut ftl).map_err(core_err(Step::Format))?;
                for lpn in 0..n {
                    r.write(&mut drv, &mut ftl, lpn, Step::Fill)?;
                }
            }
            Some(flight) => {
                let (ops, steps) = r.mount(&mut drv, &mut ftl, Step::Mount)?;
                let new = r.check_after_cut(&mut drv, &mut ftl, flight)?;
                let i = (r.report.cuts as usize).saturating_sub(1);
                if let Some(Some(c)) = r.report.cut_log.get_mut(i) {
                    c.mount_ops = ops;
                    c.mount_steps = steps;
                    c.in_flight_new = new;
                }
            }
        }
        let cut = cut_point(opts.cuts, r.report.cuts as usize, target);
        match r.churn(&mut drv, &mut ftl, target, cut)? {
            Churned::Cut(flight) => {
                add_stats(&mut total, ftl.stats());
                after_cut = Some(flight);
            }
            Churned::Done => {
                r.report.corrupted = corrupt(&mut drv, &ftl, opts.corruption)?;
                // Orderly power-off: flush the write buffer, then the supply
                // goes with nothing in flight.
                drv.flush(&mut ftl).map_err(core_err(Step::Remount))?;
                r.power_off(&mut drv, &mut ftl)?;
                add_stats(&mut total, ftl.stats());
                break;
            }
        }
    }

    let mut ftl = FullFtl::new(CONFIG, &mut *core).map_err(&setup)?;
    r.mount(&mut drv, &mut ftl, Step::Remount)?;
    r.report.remount = Remount::FromFlash;
    for lpn in 0..n {
        r.check(&mut drv, &mut ftl, lpn, Step::Verify)?;
    }

    r.report.pe_range = pe_range(&ftl)?;
    add_stats(&mut total, ftl.stats());
    r.report.core = total;
    r.report.medium = *drv.nand.stats();
    r.report.meta_slots_peak =
        u32::try_from(drv.nand.storage().meta_store().peak()).unwrap_or(u32::MAX);
    Ok(r.report)
}

/// Bytes of lent memory [`run`] needs: core tables, data pool, medium records, oracle.
pub fn lent_bytes() -> Result<LentBytes, ScenarioError> {
    let t = check_sizes()?;
    Ok(LentBytes {
        core_tables: t,
        data_pool: sizes::DATA.saturating_mul(core::mem::size_of::<u64>()),
        medium: nand_model::StorageSizes::for_geometry(&GEOMETRY).bytes(),
        medium_meta: sizes::MEDIUM_META_BYTES
            .saturating_add(sizes::MEDIUM_META_SLOTS.saturating_mul(core::mem::size_of::<u32>())),
        oracle: sizes::ORACLE.saturating_mul(core::mem::size_of::<u32>()),
    })
}

/// Lent memory by owner, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LentBytes {
    /// The core's tables ([`FullFtl::lend_bytes`]), persistence tables included.
    pub core_tables: usize,
    /// The driver's data pool.
    pub data_pool: usize,
    /// The simulated medium's records.
    pub medium: usize,
    /// The simulated medium's metadata page slots and their page numbers.
    pub medium_meta: usize,
    /// The oracle.
    pub oracle: usize,
}

impl LentBytes {
    /// Everything together.
    pub fn total(&self) -> usize {
        self.core_tables
            .saturating_add(self.data_pool)
            .saturating_add(self.medium)
            .saturating_add(self.medium_meta)
            .saturating_add(self.oracle)
    }
}

//! One end-to-end FTL scenario, shared by the host tests and the bare-metal
//! QEMU firmware (`firmware/qemu-m4`), so both targets run the very same code.
//!
//! [`run`] takes every byte it needs from the caller ([`Memory`]): the core's
//! tables, the medium's record arrays, the data pool and a compact oracle. It
//! formats a small medium ([`GEOMETRY`], [`CONFIG`]), fills it, churns it with a
//! deterministic workload of [`Options::write_factor`] times the logical
//! capacity (hot/cold overwrites, trims, read checks, the odd flush), remounts,
//! audits the core's tables and reads every logical unit back against the
//! oracle. It prints nothing: the caller prints the returned [`Report`].
//!
//! The oracle holds one `u32` version per logical unit (0 = never written or
//! trimmed); the data stamp of a unit is `lpn << 32 | version`, so a misdirected
//! read and a stale read are both caught.
//!
//! With [`Corruption::UnreadableBlock`] the scenario damages the medium after the
//! workload, and verification must then report failures.
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

use core::fmt;

use firmware_core::tables::BlockState;
use firmware_core::{
    BlockId, Config, CopybackPolicy, Error, Ftl, Geometry, Lpn, NandError, ReadValue, Stats,
    SyncDriver, TableSizes, Tables,
};
use nand_model::{BlockRec, FaultConfig, LentMedium, PageRec, ReliabilityConfig, UnitRec};

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

/// The core configuration: small buffers and queues, as a microcontroller would
/// have, with static wear levelling on so its code runs too.
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
    persist: firmware_core::PersistConfig::OFF,
    guard: firmware_core::gerase::GuardConfig::OFF,
    copy: firmware_core::CopyConfig::PHYSICAL,
};

/// Lengths of every lent slice, as constants so bare-metal code can size
/// `static` arrays. [`check_sizes`] proves they equal what the core and the
/// medium compute at run time.
pub mod sizes {
    use super::{CONFIG, GEOMETRY};

    const PLANES_U: usize = GEOMETRY.channels as usize
        * GEOMETRY.dies_per_channel as usize
        * GEOMETRY.planes_per_die as usize;
    const UNITS_PER_BLOCK: usize =
        GEOMETRY.pages_per_block as usize * GEOMETRY.units_per_page as usize;

    /// Core: logical-to-physical map entries.
    pub const L2P: usize = CONFIG.logical_units as usize;
    /// Core: physical-to-logical map entries.
    pub const P2L: usize = BLOCKS * UNITS_PER_BLOCK;
    /// Core: block metadata entries.
    pub const BLOCKS: usize = PLANES_U * GEOMETRY.blocks_per_plane as usize;
    /// Core: valid-count bucket heads.
    pub const BUCKETS: usize = PLANES_U * (UNITS_PER_BLOCK + 1);
    /// Core: plane states.
    pub const PLANES: usize = PLANES_U;
    /// Core: buffer slot entries (and data pool units).
    pub const SLOTS: usize = CONFIG.write_buffer_units as usize
        + CONFIG.read_slots as usize
        + CONFIG.gc_slots_per_plane as usize * PLANES_U;
    /// Core: in-flight operation entries.
    pub const OPS: usize = CONFIG.max_inflight as usize;
    /// Core: per-page copyback state (none: the scenario's mode keeps it per block).
    pub const PAGE_CB: usize = 0;
    /// Driver: data pool, one `u64` stamp per buffer slot.
    pub const DATA: usize = SLOTS;
    /// Medium: block records.
    pub const MEDIUM_BLOCKS: usize = BLOCKS;
    /// Medium: page records.
    pub const MEDIUM_PAGES: usize = BLOCKS * GEOMETRY.pages_per_block as usize;
    /// Medium: unit records.
    pub const MEDIUM_UNITS: usize = P2L;
    /// Oracle: one version per logical unit.
    pub const ORACLE: usize = L2P;
}

/// Checks the [`sizes`] constants against [`TableSizes::for_config`] and
/// [`nand_model::StorageSizes::for_geometry`].
pub fn check_sizes() -> Result<TableSizes, ScenarioError> {
    let t = TableSizes::for_config(&CONFIG).map_err(|error| ScenarioError::Core {
        step: Step::Setup,
        error,
    })?;
    let m = nand_model::StorageSizes::for_geometry(&GEOMETRY);
    let same = t.l2p == sizes::L2P
        && t.p2l == sizes::P2L
        && t.blocks == sizes::BLOCKS
        && t.buckets == sizes::BUCKETS
        && t.planes == sizes::PLANES
        && t.slots == sizes::SLOTS
        && t.ops == sizes::OPS
        && t.page_cb == sizes::PAGE_CB
        && m.blocks == sizes::MEDIUM_BLOCKS
        && m.pages == sizes::MEDIUM_PAGES
        && m.units == sizes::MEDIUM_UNITS;
    if same {
        Ok(t)
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
    /// The core's tables.
    pub tables: Tables<'a>,
    /// The driver's data pool: one stamp per buffer slot.
    pub data: &'a mut [u64],
    /// The medium's block records.
    pub medium_blocks: &'a mut [BlockRec],
    /// The medium's page records.
    pub medium_pages: &'a mut [PageRec],
    /// The medium's unit records.
    pub medium_units: &'a mut [UnitRec],
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
}

impl Options {
    /// Six times the capacity, fixed seed, no corruption.
    pub const DEFAULT: Options = Options {
        seed: 0x5EED_F7A1_2024,
        write_factor: 6,
        corruption: Corruption::None,
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
    /// Injecting the requested corruption.
    Corrupt,
    /// Remount (see [`Remount`]).
    Remount,
    /// Reading everything back.
    Verify,
}

/// How the scenario remounted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remount {
    /// The core has no mount-from-flash yet: "remount" flushes the write buffer
    /// and keeps the in-RAM tables. When mount lands, a `FromFlash` variant
    /// (drop the core, rebuild it over the same lent tables, mount from the
    /// medium) replaces this in [`remount`].
    FlushOnly,
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
    /// Lent memory is missing or too small; the text says which.
    Memory(&'static str),
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Core { step, error } => write!(f, "core error during {step:?}: {error}"),
            ScenarioError::Medium { step, error } => {
                write!(f, "medium error during {step:?}: {error:?}")
            }
            ScenarioError::Memory(s) => write!(f, "lent memory: {s}"),
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

/// What happened. Every read of a logical unit against the oracle, and the
/// final table audit, is one check.
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
    /// Checks done during the churn (the rest are the final audit and read-back).
    pub churn_checks: u64,
    /// The first failed check.
    pub first_failure: Option<Failure>,
    /// The damaged block, if corruption was requested.
    pub corrupted: Option<Corrupted>,
    /// How the remount was done.
    pub remount: Remount,
    /// Lowest and highest P/E count of a good block, as the core tracks them.
    pub pe_range: (u32, u32),
    /// The core's counters.
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
}

/// xorshift64*: tiny, deterministic, good enough to spread a workload.
#[derive(Clone, Copy, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n` > 0), by multiply-shift.
    fn below(&mut self, n: u32) -> u32 {
        let hi = self.next() >> 32;
        // hi < 2^32 and n < 2^32, so the product fits; the shift leaves < n.
        (hi.wrapping_mul(u64::from(n)) >> 32) as u32
    }
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

/// Workload state: oracle, generator and tallies.
struct Run<'o> {
    oracle: &'o mut [u32],
    version: u32,
    rng: Rng,
    report: Report,
}

type Driver<'n, 'm> = SyncDriver<'n, LentMedium<'m>>;

impl Run<'_> {
    fn slot(&mut self, lpn: u32) -> Result<&mut u32, ScenarioError> {
        self.oracle
            .get_mut(lpn as usize)
            .ok_or(ScenarioError::Memory("oracle index"))
    }

    fn write(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut Ftl<'_>,
        lpn: u32,
        step: Step,
    ) -> Result<(), ScenarioError> {
        // Versions start at 1 (0 means unmapped) and stay unique per run.
        self.version = self.version.wrapping_add(1).max(1);
        let v = self.version;
        drv.write(ftl, Lpn(lpn), stamp(lpn, v))
            .map_err(|error| ScenarioError::Core { step, error })?;
        *self.slot(lpn)? = v;
        self.report.host_writes = self.report.host_writes.saturating_add(1);
        Ok(())
    }

    fn trim(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut Ftl<'_>,
        lpn: u32,
    ) -> Result<(), ScenarioError> {
        drv.trim(ftl, Lpn(lpn))
            .map_err(|error| ScenarioError::Core {
                step: Step::Churn,
                error,
            })?;
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
        ftl: &mut Ftl<'_>,
        lpn: u32,
        step: Step,
    ) -> Result<(), ScenarioError> {
        let want = expected(lpn, *self.slot(lpn)?);
        let got = drv
            .read(ftl, Lpn(lpn))
            .map_err(|error| ScenarioError::Core { step, error })?;
        let failure = (got != want).then_some(Failure::Read {
            lpn,
            expected: want,
            got,
        });
        self.tally(failure);
        Ok(())
    }

    /// Random hot/cold overwrites with trims, read checks and the odd flush,
    /// until `target` host writes have been issued.
    fn churn(
        &mut self,
        drv: &mut Driver<'_, '_>,
        ftl: &mut Ftl<'_>,
        target: u64,
    ) -> Result<(), ScenarioError> {
        let n = self.report.logical_units;
        // A quarter of the space takes three quarters of the traffic.
        let hot = (n / 4).max(1);
        while self.report.host_writes < target {
            drv.now = drv.now.wrapping_add(1);
            let lpn = if self.rng.below(4) < 3 {
                self.rng.below(hot)
            } else {
                self.rng.below(n)
            };
            match self.rng.below(512) {
                0..=7 => self.trim(drv, ftl, lpn)?,
                8..=23 => {
                    self.check(drv, ftl, lpn, Step::Churn)?;
                    self.report.churn_checks = self.report.churn_checks.saturating_add(1);
                }
                24 => {
                    drv.flush(ftl).map_err(|error| ScenarioError::Core {
                        step: Step::Churn,
                        error,
                    })?;
                    self.report.flushes = self.report.flushes.saturating_add(1);
                }
                _ => self.write(drv, ftl, lpn, Step::Churn)?,
            }
        }
        Ok(())
    }
}

/// Damages the medium as `c` says; returns what was damaged.
fn corrupt(
    drv: &mut Driver<'_, '_>,
    ftl: &Ftl<'_>,
    c: Corruption,
) -> Result<Option<Corrupted>, ScenarioError> {
    if c == Corruption::None {
        return Ok(None);
    }
    let core = |error| ScenarioError::Core {
        step: Step::Corrupt,
        error,
    };
    let mut best: Option<Corrupted> = None;
    for b in 0..GEOMETRY.total_blocks() {
        let (_, state, valid) = ftl.block_info(BlockId(b)).map_err(core)?;
        if state == BlockState::Full && valid > best.map_or(0, |c| c.live_units) {
            best = Some(Corrupted {
                block: b,
                live_units: valid,
            });
        }
    }
    let Some(target) = best else {
        return Err(core(Error::Corrupt(
            "no full block with live data to damage",
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

/// The remount step. Today a stand-in: the core cannot mount from flash yet, so
/// this only flushes the write buffer and the in-RAM tables carry over.
///
/// TODO(mount): once the core has mount-from-flash, drop the `Ftl`, rebuild it
/// over the same lent tables and mount it from the medium here, and report
/// `Remount::FromFlash`.
fn remount(drv: &mut Driver<'_, '_>, ftl: &mut Ftl<'_>) -> Result<Remount, ScenarioError> {
    drv.flush(ftl).map_err(|error| ScenarioError::Core {
        step: Step::Remount,
        error,
    })?;
    Ok(Remount::FlushOnly)
}

/// Lowest and highest P/E count of a good block.
fn pe_range(ftl: &Ftl<'_>) -> Result<(u32, u32), ScenarioError> {
    let mut lo = u32::MAX;
    let mut hi = 0;
    for b in 0..GEOMETRY.total_blocks() {
        let (pe, state, _) = ftl
            .block_info(BlockId(b))
            .map_err(|error| ScenarioError::Core {
                step: Step::Verify,
                error,
            })?;
        if state != BlockState::Bad {
            lo = lo.min(pe);
            hi = hi.max(pe);
        }
    }
    Ok((lo.min(hi), hi))
}

/// Runs the whole scenario over lent memory. Failed checks are counted in the
/// report; an `Err` means the scenario could not run to the end.
pub fn run(mem: Memory<'_>, opts: &Options) -> Result<Report, ScenarioError> {
    check_sizes()?;
    let Memory {
        tables,
        data,
        medium_blocks,
        medium_pages,
        medium_units,
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
    let setup = |error| ScenarioError::Core {
        step: Step::Setup,
        error,
    };
    let mut ftl = Ftl::new(CONFIG, tables).map_err(setup)?;
    let mut nand = LentMedium::from_slices(
        GEOMETRY,
        ReliabilityConfig::default(),
        FaultConfig::default(),
        medium_blocks,
        medium_pages,
        medium_units,
    )
    .map_err(setup)?;
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).map_err(|error| ScenarioError::Core {
        step: Step::Format,
        error,
    })?;

    let mut r = Run {
        oracle,
        version: 0,
        rng: Rng::new(opts.seed),
        report: Report {
            logical_units: n,
            host_writes: 0,
            trims: 0,
            flushes: 0,
            checks_passed: 0,
            checks_failed: 0,
            churn_checks: 0,
            first_failure: None,
            corrupted: None,
            remount: Remount::FlushOnly,
            pe_range: (0, 0),
            core: Stats::default(),
            medium: nand_model::Stats::default(),
        },
    };
    for lpn in 0..n {
        r.write(&mut drv, &mut ftl, lpn, Step::Fill)?;
    }
    let target = u64::from(n).saturating_mul(u64::from(opts.write_factor.max(1)));
    r.churn(&mut drv, &mut ftl, target)?;

    r.report.corrupted = corrupt(&mut drv, &ftl, opts.corruption)?;
    r.report.remount = remount(&mut drv, &mut ftl)?;

    let audit = ftl.audit().err().map(Failure::Audit);
    r.tally(audit);
    for lpn in 0..n {
        r.check(&mut drv, &mut ftl, lpn, Step::Verify)?;
    }

    r.report.pe_range = pe_range(&ftl)?;
    r.report.core = *ftl.stats();
    r.report.medium = *drv.nand.stats();
    Ok(r.report)
}

/// Bytes of lent memory [`run`] needs: core tables, data pool, medium records, oracle.
pub fn lent_bytes() -> Result<LentBytes, ScenarioError> {
    let t = check_sizes()?;
    Ok(LentBytes {
        core_tables: t.bytes(),
        data_pool: sizes::DATA.saturating_mul(core::mem::size_of::<u64>()),
        medium: nand_model::StorageSizes::for_geometry(&GEOMETRY).bytes(),
        oracle: sizes::ORACLE.saturating_mul(core::mem::size_of::<u32>()),
    })
}

/// Lent memory by owner, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LentBytes {
    /// The core's tables ([`TableSizes::bytes`]).
    pub core_tables: usize,
    /// The driver's data pool.
    pub data_pool: usize,
    /// The simulated medium's records.
    pub medium: usize,
    /// The oracle.
    pub oracle: usize,
}

//! The multi-core Reparo scenario: [`CORES`] flash cores in one image, run
//! unchanged by the host tests and by the bare-metal QEMU firmware.
//!
//! Each flash core ([`FlashCore`]) is an unmodified [`Ftl`] over its own
//! share of the dies ([`GEOMETRY`]) with its own simulated medium, behind
//! the master core's striping ([`Master`]: LBA `l` goes to core `l % 4` as
//! local LPN `l / 4`). The cores write superblocks and keep the last page of
//! every block for the neighbour die's LBA lists (block-level P2L
//! entrustment, [`firmware_core::tech::reparo::p2l_list`]), so CDR* can identify the LBAs
//! a failed die held by reading a few list pages instead of scanning the
//! L2P table.
//!
//! [`run`] formats every core, fills the drive, overwrites it at random
//! ([`McOptions::write_factor`] times the capacity, enough for GC and list
//! pages on every core) and reads it all back against an oracle. Then it
//! takes the ground truth (the LBAs whose live data sits on die
//! [`FAILED_DIE`] of core [`VICTIM`], read from the medium's spare areas),
//! kills that die on the medium, keeps writing other LBAs until the core's
//! detector retires the die, runs the block-level identification and
//! compares what it reports with the truth, both ways. The host then
//! rewrites every reported LBA from the oracle (the RAID rebuild's stand-in,
//! as IDR recovers) and every LBA of the drive must read back exact; every
//! core's tables are audited.
//!
//! All memory is lent by the caller ([`McMemory`], [`sizes`]): one flat
//! slice per table holding every core's share, split here. The cores
//! themselves (a few KiB each) live in caller-lent slots too, so a small
//! stack holds at most one under construction.

use core::fmt;

use firmware_core::driver::execute;
use firmware_core::ftl::die_fail::L2pEntry;
use firmware_core::tech::reparo::controller::{CoreLend, FlashCore, Master, PROBE_ID};
use firmware_core::tech::reparo::p2l_list::ListLend;
use firmware_core::tech::reparo::superblock::SuperblockConfig;
use firmware_core::{
    BlockId, Config, CopybackPolicy, DieId, Error, FullFtl, Geometry, Lpn, PersistConfig,
    ReadValue, Slot, Tag,
};
use nand_model::{
    BlockRec, FaultConfig, LentMedium, LentMeta, LentStorage, PageRec, ReliabilityConfig, UnitRec,
};

use crate::{expected, rng, stamp, ScenarioError, Step};
use test_kit::read::SyncCore;
use test_kit::rng::XorShift64Star;

/// Flash cores behind the master core.
pub const CORES: usize = 4;

/// The core whose die fails.
pub const VICTIM: u32 = 2;

/// The die of [`VICTIM`] that fails.
pub const FAILED_DIE: u32 = 1;

/// One core's share of the dies: 1 channel x 4 dies x 1 plane x 24 blocks x
/// 16 pages of 8 KiB, two 4 KiB mapping units per page (3,072 physical
/// units, 24 MiB of simulated flash per core). A block's list (15 data
/// pages, 30 entries plus 4 header words) fits a page many times over.
pub const GEOMETRY: Geometry = Geometry {
    channels: 1,
    dies_per_channel: 4,
    planes_per_die: 1,
    blocks_per_plane: 24,
    pages_per_block: 16,
    page_bytes: 8 * 1024,
    pages_per_wordline: 1,
    units_per_page: 2,
};

/// Logical units of one core: half the physical units. The list pages take
/// 1/16 of every block, the GC reserve 4 blocks per plane, and after a die
/// fails the three left still hold it with GC room to spare.
pub const CORE_LOGICAL: u32 = 1536;

/// Host-visible LBAs of the drive.
pub const LOGICAL: u32 = CORE_LOGICAL * CORES as u32;

/// Bad blocks past which the detector declares a die failed.
pub const N_BAD_DIE: u32 = 4;

/// One core's configuration: persistence off (list pages are not recovered
/// after a power cut), off-chip GC copies, superblocks with list pages.
pub const CONFIG: Config = Config {
    geometry: GEOMETRY,
    logical_units: CORE_LOGICAL,
    write_buffer_units: 32,
    read_slots: 8,
    gc_slots_per_plane: 4,
    gc_reserve_blocks: 2,
    gc_trigger_blocks: 3,
    wl_threshold: 0,
    wl_check_interval: 64,
    max_inflight: 64,
    copyback: CopybackPolicy::OFF_CHIP,
    persist: PersistConfig::OFF,
    guard: firmware_core::tech::longftl::gerase::GuardConfig::OFF,
    copy: firmware_core::CopyConfig::PHYSICAL,
    superblock: SuperblockConfig {
        enabled: true,
        list_pages: true,
    },
    placement: firmware_core::tech::placement::config::PlacementConfig::OFF,
    gc_destination: firmware_core::tech::crossway::config::GcDestination::Plane,
};

/// Lengths of every lent slice, per core (multiply by [`CORES`] for the
/// flat slices of [`McMemory`]), as constants so bare-metal code can size
/// `static` arrays. [`check_sizes`] proves they equal what the core and the
/// medium compute at run time.
pub mod sizes {
    use super::{CONFIG, CORES, GEOMETRY, LOGICAL};
    use core::mem::size_of;
    use nand_model::{BlockRec, PageRec, UnitRec};

    const PLANES_U: usize = GEOMETRY.channels as usize
        * GEOMETRY.dies_per_channel as usize
        * GEOMETRY.planes_per_die as usize;
    const PPB: usize = GEOMETRY.pages_per_block as usize;
    const UNITS_PER_BLOCK: usize = PPB * GEOMETRY.units_per_page as usize;

    /// Core: logical-to-physical map entries.
    pub const L2P: usize = CONFIG.logical_units as usize;
    /// Core: block metadata entries.
    pub const BLOCKS: usize = PLANES_U * GEOMETRY.blocks_per_plane as usize;
    /// Core: physical-to-logical map entries (one per physical unit).
    pub const P2L: usize = BLOCKS * UNITS_PER_BLOCK;
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
    /// Driver: data pool, one `u64` stamp per buffer slot.
    pub const DATA: usize = SLOTS;
    /// Medium: block records.
    pub const MEDIUM_BLOCKS: usize = BLOCKS;
    /// Medium: page records.
    pub const MEDIUM_PAGES: usize = BLOCKS * PPB;
    /// Medium: unit records.
    pub const MEDIUM_UNITS: usize = P2L;
    /// Bytes of one metadata page: a list page is a whole flash page.
    pub const META_PAGE_BYTES: usize = GEOMETRY.page_bytes as usize;
    /// Medium: metadata page slots. Only list pages are metadata pages
    /// (persistence is off), at most one per block.
    pub const MEDIUM_META_SLOTS: usize = BLOCKS;
    /// Medium: bytes of the metadata page slots.
    pub const MEDIUM_META_BYTES: usize = MEDIUM_META_SLOTS * META_PAGE_BYTES;
    /// Flash core: entrusted P2L, one word per physical unit.
    pub const ENTRUST: usize = P2L;
    /// Flash core: failed-LBA marks, one bit per logical unit.
    pub const MARKS: usize = L2P.div_ceil(32);
    /// Flash core: list holders (one word per block) and the per-plane
    /// queues of lists waiting for a list page.
    pub const HOLDERS: usize =
        firmware_core::tech::reparo::p2l_list::holder_words(BLOCKS, PLANES_U);
    /// Flash core: list page buffers.
    pub const LIST_BUF_BYTES: usize =
        firmware_core::tech::reparo::p2l_list::LIST_BUFS * META_PAGE_BYTES;
    /// Drive: the oracle, one version per host LBA (not per core).
    pub const ORACLE: usize = LOGICAL as usize;
    /// Drive: the ground-truth bitmap, one bit per host LBA (not per core).
    pub const TRUTH: usize = ORACLE.div_ceil(32);
    /// Bytes of one core's FTL tables (`FullFtl::lend_bytes`; persistence
    /// and copyless tables are empty).
    pub const CORE_TABLES_BYTES: usize = 29_561;
    /// Bytes of one core's medium: records and metadata page slots.
    pub const MEDIUM_BYTES: usize = MEDIUM_BLOCKS * size_of::<BlockRec>()
        + MEDIUM_PAGES * size_of::<PageRec>()
        + MEDIUM_UNITS * size_of::<UnitRec>()
        + MEDIUM_META_BYTES
        + MEDIUM_META_SLOTS * size_of::<u32>();
    /// Bytes of one core's Reparo state: entrusted P2L, marks, list holders
    /// and list page buffers.
    pub const REPARO_BYTES: usize = (ENTRUST + MARKS + HOLDERS) * size_of::<u32>() + LIST_BUF_BYTES;
    /// Bytes of every lent slice of [`super::McMemory`] together (the core
    /// slots excluded: `size_of::<CoreSlot>()` each).
    pub const LENT_BYTES: usize = CORES
        * (CORE_TABLES_BYTES + DATA * size_of::<u64>() + MEDIUM_BYTES + REPARO_BYTES)
        + (ORACLE + TRUTH) * size_of::<u32>();
}

/// Checks the [`sizes`] constants against [`FullFtl::lend_bytes`] and
/// [`nand_model::StorageSizes`], and the configuration against
/// [`Config::validate`].
pub fn check_sizes() -> Result<usize, ScenarioError> {
    let setup = |error| ScenarioError::Core {
        step: Step::Setup,
        error,
    };
    CONFIG.validate().map_err(setup)?;
    let core = FullFtl::lend_bytes(&CONFIG).map_err(setup)?;
    let m = nand_model::StorageSizes::for_geometry(&GEOMETRY);
    let same = core == sizes::CORE_TABLES_BYTES
        && m.blocks == sizes::MEDIUM_BLOCKS
        && m.pages == sizes::MEDIUM_PAGES
        && m.units == sizes::MEDIUM_UNITS
        && GEOMETRY.total_units() as usize == sizes::ENTRUST
        && m.bytes()
            .checked_add(sizes::MEDIUM_META_BYTES)
            .and_then(|b| b.checked_add(sizes::MEDIUM_META_SLOTS.checked_mul(4)?))
            == Some(sizes::MEDIUM_BYTES);
    if same {
        Ok(core)
    } else {
        Err(ScenarioError::Memory(
            "multicore size constants disagree with the core or the medium",
        ))
    }
}

/// Everything the multi-core scenario works in, lent by the caller. Each
/// per-core slice is [`CORES`] times its [`sizes`] constant long (core `i`
/// takes the `i`-th share); the oracle and the truth bitmap cover the drive.
/// Contents on entry do not matter.
pub struct McMemory<'a> {
    /// FTL: the regions the cores carve their tables from.
    pub core: &'a mut [u8],
    /// Driver: data pools.
    pub data: &'a mut [u64],
    /// Medium: block records.
    pub medium_blocks: &'a mut [BlockRec],
    /// Medium: page records.
    pub medium_pages: &'a mut [PageRec],
    /// Medium: unit records.
    pub medium_units: &'a mut [UnitRec],
    /// Medium: metadata (list) page bytes.
    pub medium_meta: &'a mut [u8],
    /// Medium: the page each metadata slot holds.
    pub medium_meta_pages: &'a mut [u32],
    /// Flash core: entrusted P2L.
    pub entrust: &'a mut [u32],
    /// Flash core: failed-LBA marks.
    pub marks: &'a mut [u32],
    /// Flash core: list holders.
    pub holders: &'a mut [u32],
    /// Flash core: list page buffers.
    pub list_bufs: &'a mut [u8],
    /// Drive: one version per host LBA.
    pub oracle: &'a mut [u32],
    /// Drive: ground-truth bitmap of the LBAs on the failed die.
    pub truth: &'a mut [u32],
}

/// A caller-lent slot [`run`] builds one flash core in (a few KiB each,
/// so a small stack never holds them).
pub type CoreSlot<'a> = Option<FlashCore<'a, firmware_core::Techniques<'a>>>;

/// One flash core (in its lent slot) with its medium and data pool.
struct McCore<'c, 'a> {
    fc: &'c mut FlashCore<'a, firmware_core::Techniques<'a>>,
    nand: LentMedium<'a>,
    data: &'a mut [u64],
}

/// Damage done to the scenario on purpose, to prove its checks catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McFault {
    /// Nothing: every check must pass.
    None,
    /// The identification's answer loses its first LBA before the host sees
    /// it (a buggy *Identifier*): that LBA is missed, never rewritten, and
    /// reads back as a media error.
    DropIdentified,
}

/// How the multi-core scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McOptions {
    /// Seed of the workload generator.
    pub seed: u64,
    /// Host writes before the die fails, in multiples of the drive's
    /// capacity (the first pass fills it in order, the rest overwrite at
    /// random).
    pub write_factor: u32,
    /// Damage done on purpose.
    pub fault: McFault,
}

impl McOptions {
    /// Three times the capacity (a fill and two random passes), fixed seed,
    /// no fault.
    pub const DEFAULT: McOptions = McOptions {
        seed: 0x4D43_5245_5041_524F,
        write_factor: 3,
        fault: McFault::None,
    };
}

impl Default for McOptions {
    fn default() -> Self {
        McOptions::DEFAULT
    }
}

/// What the multi-core scenario did. Every read against the oracle, every
/// audit, every local LPN of the victim compared between identification and
/// truth, and each of the detection and truth checks is one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McReport {
    /// Flash cores.
    pub cores: u32,
    /// Dies per core.
    pub dies_per_core: u32,
    /// Host-visible LBAs.
    pub logical: u32,
    /// Host writes issued through the master (fill, overwrites, writes
    /// while the detector works, recovery rewrites).
    pub host_writes: u64,
    /// Superblocks opened, all cores.
    pub superblocks: u64,
    /// List pages programmed, all cores.
    pub list_pages: u64,
    /// List pages programmed by each core.
    pub list_pages_per_core: [u64; CORES],
    /// GC victims, all cores.
    pub gc_victims: u64,
    /// Whether the victim core's detector retired the failed die.
    pub failed_die_detected: bool,
    /// Host writes issued between the die failure and its detection.
    pub detect_writes: u64,
    /// LBAs whose live data was on the failed die (ground truth).
    pub truth_lbas: u64,
    /// LBAs the block-level identification reported.
    pub identified_lbas: u64,
    /// Truth LBAs the identification did not report.
    pub missed: u64,
    /// Reported LBAs not in the truth.
    pub extra: u64,
    /// List pages the identification read from flash.
    pub ident_page_reads: u64,
    /// Failed blocks whose lists the identification took from RAM.
    pub ident_ram_blocks: u64,
    /// LBAs rewritten from the oracle after identification.
    pub rewritten: u64,
    /// LBAs the victim still reports failed after the rewrite.
    pub still_failed: u64,
    /// Reads that did not match the oracle before the die failed.
    pub mismatches_before: u64,
    /// Reads that did not match the oracle after the recovery.
    pub mismatches_after: u64,
    /// Core audits that failed.
    pub audits_failed: u32,
    /// Checks that passed.
    pub checks_passed: u64,
    /// Checks that failed.
    pub checks_failed: u64,
}

impl McReport {
    /// Every check passed (and there were some), the die was detected, the
    /// truth was not empty and the identification matched it exactly.
    pub fn ok(&self) -> bool {
        self.checks_failed == 0
            && self.checks_passed > 0
            && self.failed_die_detected
            && self.truth_lbas > 0
            && self.identified_lbas == self.truth_lbas
            && self.missed == 0
            && self.extra == 0
            && self.mismatches_before == 0
            && self.mismatches_after == 0
            && self.audits_failed == 0
    }

    /// Total checks.
    pub fn checks(&self) -> u64 {
        self.checks_passed.saturating_add(self.checks_failed)
    }

    fn tally(&mut self, pass: bool) {
        if pass {
            self.checks_passed = self.checks_passed.saturating_add(1);
        } else {
            self.checks_failed = self.checks_failed.saturating_add(1);
        }
    }
}

impl fmt::Display for McReport {
    /// The report lines the firmware prints (and `cargo xtask qemu` checks).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "multicore drive: {} flash cores x {} dies, {} LBAs striped by the master core",
            self.cores, self.dies_per_core, self.logical
        )?;
        writeln!(
            f,
            "multicore writes: {} host writes, {} superblocks, {} list pages ({} {} {} {} per core), {} gc victims",
            self.host_writes,
            self.superblocks,
            self.list_pages,
            self.list_pages_per_core[0],
            self.list_pages_per_core[1],
            self.list_pages_per_core[2],
            self.list_pages_per_core[3],
            self.gc_victims
        )?;
        writeln!(
            f,
            "multicore failed die: core {VICTIM} die {FAILED_DIE} {} after {} writes",
            if self.failed_die_detected {
                "detected and retired"
            } else {
                "NOT detected"
            },
            self.detect_writes
        )?;
        writeln!(
            f,
            "multicore: identified {} of {} ({} missed, {} extra), {} list-page reads, {} blocks from RAM",
            self.identified_lbas,
            self.truth_lbas,
            self.missed,
            self.extra,
            self.ident_page_reads,
            self.ident_ram_blocks
        )?;
        writeln!(
            f,
            "multicore recovery: {} LBAs rewritten, {} still failed",
            self.rewritten, self.still_failed
        )?;
        writeln!(f, "multicore mismatches before: {}", self.mismatches_before)?;
        writeln!(f, "multicore mismatches after: {}", self.mismatches_after)?;
        writeln!(f, "multicore audits failed: {}", self.audits_failed)?;
        write!(
            f,
            "multicore checks: {} passed, {} failed",
            self.checks_passed, self.checks_failed
        )
    }
}

/// Operations one host command may cause before the core is taken to be
/// livelocked (GC of a plane with no reclaimable space).
const OP_LIMIT: u64 = 1_000_000;

fn err(step: Step) -> impl Fn(Error) -> ScenarioError + Copy {
    move |error| ScenarioError::Core { step, error }
}

/// Takes the first `n` elements off `rest`.
fn take<'a, T>(
    rest: &mut &'a mut [T],
    n: usize,
    what: &'static str,
) -> Result<&'a mut [T], ScenarioError> {
    if rest.len() < n {
        return Err(ScenarioError::Memory(what));
    }
    let (a, b) = core::mem::take(rest).split_at_mut(n);
    *rest = b;
    Ok(a)
}

impl McCore<'_, '_> {
    /// Runs one operation from [`FlashCore::poll_op`].
    fn exec(&mut self, op: &firmware_core::NandOp, step: Step) -> Result<(), ScenarioError> {
        let meta = if op.id == PROBE_ID {
            &mut [][..]
        } else {
            self.fc.meta_for(op)
        };
        let r = execute(&mut self.nand, self.data, meta, op);
        self.fc.complete(op.id, r, 0).map_err(err(step))
    }

    /// Runs queued operations, probes and identification reads to the end,
    /// retiring failed dies as soon as the FTL is idle.
    fn run(&mut self, step: Step) -> Result<(), ScenarioError> {
        let mut ops = 0u64;
        loop {
            while let Some(op) = self.fc.poll_op() {
                ops = ops.saturating_add(1);
                if ops > OP_LIMIT {
                    return Err(err(step)(Error::OutOfSpace));
                }
                self.exec(&op, step)?;
            }
            self.fc.maintain().map_err(err(step))?;
            if self.fc.ftl.ops_queued() == 0 {
                match self.fc.poll_op() {
                    None => return Ok(()),
                    Some(op) => self.exec(&op, step)?,
                }
            }
        }
    }

    fn write(&mut self, lpn: Lpn, v: u64, step: Step) -> Result<(), ScenarioError> {
        loop {
            match self.fc.ftl.write(lpn, 0) {
                Ok(s) => {
                    *self
                        .data
                        .get_mut(usize::from(s.0))
                        .ok_or(ScenarioError::Memory("slot outside the data pool"))? = v;
                    return self.run(step);
                }
                Err(Error::Busy) => {
                    if self.fc.ftl.ops_queued() == 0 {
                        return Err(err(step)(Error::OutOfSpace));
                    }
                    self.run(step)?;
                }
                Err(e) => return Err(err(step)(e)),
            }
        }
    }

    fn read(&mut self, lpn: Lpn, step: Step) -> Result<ReadValue<u64>, ScenarioError> {
        test_kit::read::read(&mut AtStep { core: self, step }, lpn)
    }

    fn flush(&mut self, step: Step) -> Result<(), ScenarioError> {
        self.fc.ftl.flush(Tag(u32::MAX), 0).map_err(err(step))?;
        self.run(step)?;
        while self.fc.ftl.poll_completion().is_some() {}
        Ok(())
    }
}

/// A flash core seen by the kit's read loop, its errors labelled with the
/// scenario step.
struct AtStep<'m, 'c, 'a> {
    core: &'m mut McCore<'c, 'a>,
    step: Step,
}

impl<'a> SyncCore<'a> for AtStep<'_, '_, 'a> {
    type Hooks = firmware_core::Techniques<'a>;
    type Unit = u64;
    type Error = ScenarioError;

    fn ftl(&mut self) -> &mut FullFtl<'a> {
        &mut self.core.fc.ftl
    }

    fn run(&mut self) -> Result<(), ScenarioError> {
        self.core.run(self.step)
    }

    fn unit(&self, slot: Slot) -> Result<u64, ScenarioError> {
        self.core
            .data
            .get(usize::from(slot.0))
            .copied()
            .ok_or(ScenarioError::Memory("slot outside the data pool"))
    }

    fn core_error(&self, e: Error) -> ScenarioError {
        err(self.step)(e)
    }
}

/// The drive: the master core, the flash cores, the oracle and the tallies.
struct Drive<'c, 'a> {
    master: Master,
    cores: [Option<McCore<'c, 'a>>; CORES],
    oracle: &'a mut [u32],
    truth: &'a mut [u32],
    version: u32,
    rng: XorShift64Star,
    report: McReport,
}

/// Calls `each` with the host LBA of every failed LBA the victim core's
/// marks report, in order; `drop_first` leaves the first one out (the
/// fault that proves the checks can fail).
fn reported_lbas(
    cores: &mut [Option<McCore<'_, '_>>; CORES],
    drop_first: bool,
    mut each: impl FnMut(u32),
) -> Result<(), ScenarioError> {
    let n = CORES as u32;
    let victim = cores
        .get_mut(VICTIM as usize)
        .and_then(Option::as_mut)
        .ok_or(ScenarioError::Memory("core slot empty"))?;
    let mut skip = drop_first;
    victim
        .fc
        .scan_marks(0, CORE_LOGICAL, |l| {
            if skip {
                skip = false;
                return;
            }
            each(l.0.saturating_mul(n).saturating_add(VICTIM));
        })
        .map_err(err(Step::Verify))
}

fn bit(bits: &[u32], i: u32) -> bool {
    bits.get((i / 32) as usize)
        .is_some_and(|w| w & (1u32 << (i % 32)) != 0)
}

fn set_bit(bits: &mut [u32], i: u32) {
    if let Some(w) = bits.get_mut((i / 32) as usize) {
        *w |= 1u32 << (i % 32);
    }
}

impl<'c, 'a> Drive<'c, 'a> {
    fn core(&mut self, c: u32) -> Result<&mut McCore<'c, 'a>, ScenarioError> {
        self.cores
            .get_mut(c as usize)
            .and_then(Option::as_mut)
            .ok_or(ScenarioError::Memory("core slot empty"))
    }

    fn version_of(&self, lba: u32) -> Result<u32, ScenarioError> {
        self.oracle
            .get(lba as usize)
            .copied()
            .ok_or(ScenarioError::Memory("oracle index"))
    }

    /// Writes version `v` of `lba` through the master.
    fn write_version(&mut self, lba: u32, v: u32, step: Step) -> Result<(), ScenarioError> {
        let t = self.master.route(u64::from(lba)).map_err(err(step))?;
        self.core(t.core)?.write(t.lpn, stamp(lba, v), step)?;
        *self
            .oracle
            .get_mut(lba as usize)
            .ok_or(ScenarioError::Memory("oracle index"))? = v;
        self.report.host_writes = self.report.host_writes.saturating_add(1);
        Ok(())
    }

    /// Writes a new version of `lba`.
    fn write(&mut self, lba: u32, step: Step) -> Result<(), ScenarioError> {
        self.version = self.version.wrapping_add(1).max(1);
        self.write_version(lba, self.version, step)
    }

    /// Reads every LBA against the oracle (one check each); returns the
    /// mismatches.
    fn verify_all(&mut self, step: Step) -> Result<u64, ScenarioError> {
        let mut bad = 0u64;
        for lba in 0..LOGICAL {
            let want = expected(lba, self.version_of(lba)?);
            let t = self.master.route(u64::from(lba)).map_err(err(step))?;
            let got = self.core(t.core)?.read(t.lpn, step)?;
            let pass = got == want;
            if !pass {
                bad = bad.saturating_add(1);
            }
            self.report.tally(pass);
        }
        Ok(bad)
    }

    fn flush_all(&mut self, step: Step) -> Result<(), ScenarioError> {
        for c in 0..CORES as u32 {
            self.core(c)?.flush(step)?;
        }
        Ok(())
    }

    fn audit_all(&mut self) -> Result<(), ScenarioError> {
        for c in 0..CORES as u32 {
            let pass = self.core(c)?.fc.ftl.audit().is_ok();
            if !pass {
                self.report.audits_failed = self.report.audits_failed.saturating_add(1);
            }
            self.report.tally(pass);
        }
        Ok(())
    }

    /// The ground truth: the LBAs whose live data is on die `die` of core
    /// `core`, from the medium's spare areas (a live unit is one the L2P
    /// still names), into the truth bitmap. Returns how many.
    fn take_truth(&mut self, core: u32, die: u32) -> Result<u64, ScenarioError> {
        self.truth.fill(0);
        let g = GEOMETRY;
        let per_die = u32::from(g.planes_per_die).saturating_mul(g.blocks_per_plane);
        let first = die.saturating_mul(per_die);
        let n = CORES as u32;
        let c = self
            .cores
            .get(core as usize)
            .and_then(Option::as_ref)
            .ok_or(ScenarioError::Memory("core slot empty"))?;
        let mut count = 0u64;
        for b in first..first.saturating_add(per_die) {
            for page in 0..g.pages_per_block {
                let ppn = g.ppn(BlockId(b), page);
                let Some(spare) = c.nand.peek_spare(ppn) else {
                    continue;
                };
                for off in 0..g.units_per_page {
                    if !spare.units.contains(off) {
                        continue;
                    }
                    let Some(&lpn) = spare.lpns.get(usize::from(off)) else {
                        continue;
                    };
                    let live = c.fc.ftl.l2p_entry(lpn).map_err(err(Step::Verify))?
                        == L2pEntry::Flash(g.pun(ppn, off));
                    if live && lpn.0 < CORE_LOGICAL {
                        let lba = lpn.0.saturating_mul(n).saturating_add(core);
                        if !bit(self.truth, lba) {
                            set_bit(self.truth, lba);
                            count = count.saturating_add(1);
                        }
                    }
                }
            }
        }
        Ok(count)
    }
}

/// Builds a flash core over `tables` and `lend` in `out`. Kept out of
/// line so only its frame holds the core on its way into the slot.
#[inline(never)]
fn make_core<'a>(
    out: &mut CoreSlot<'a>,
    tables: &'a mut [u8],
    lend: CoreLend<'a>,
) -> Result<(), Error> {
    *out = None;
    let ftl = FullFtl::new(CONFIG, tables)?;
    *out = Some(FlashCore::new(ftl, lend, N_BAD_DIE)?);
    Ok(())
}

/// Builds core `i` in `slot` over its share of `mem` (taken off the front
/// of each slice), with its medium.
fn build_core<'c, 'a>(
    slot: &'c mut CoreSlot<'a>,
    mem: &mut McMemory<'a>,
    i: usize,
    seed: u64,
) -> Result<McCore<'c, 'a>, ScenarioError> {
    let setup = err(Step::Setup);
    let tables = take(&mut mem.core, sizes::CORE_TABLES_BYTES, "core tables")?;
    let lend = CoreLend {
        entrust: take(&mut mem.entrust, sizes::ENTRUST, "entrust")?,
        marks: take(&mut mem.marks, sizes::MARKS, "marks")?,
        lists: ListLend {
            holders: take(&mut mem.holders, sizes::HOLDERS, "list holders")?,
            bufs: take(&mut mem.list_bufs, sizes::LIST_BUF_BYTES, "list buffers")?,
        },
        // Block-level entrustment only.
        pages: &mut [],
    };
    make_core(slot, tables, lend).map_err(setup)?;
    let fc = slot
        .as_mut()
        .ok_or(ScenarioError::Memory("core slot empty"))?;
    let meta = LentMeta::new(
        take(
            &mut mem.medium_meta,
            sizes::MEDIUM_META_BYTES,
            "medium meta",
        )?,
        take(
            &mut mem.medium_meta_pages,
            sizes::MEDIUM_META_SLOTS,
            "medium meta pages",
        )?,
        sizes::META_PAGE_BYTES,
    )
    .map_err(setup)?;
    let store = LentStorage::new(
        take(
            &mut mem.medium_blocks,
            sizes::MEDIUM_BLOCKS,
            "medium blocks",
        )?,
        take(&mut mem.medium_pages, sizes::MEDIUM_PAGES, "medium pages")?,
        take(&mut mem.medium_units, sizes::MEDIUM_UNITS, "medium units")?,
    )
    .with_meta(meta);
    // No bit errors: the only failures are the injected die failure.
    let rel = ReliabilityConfig {
        seed: seed ^ ((i as u64) << 8),
        base_errors: 0.0,
        wear_errors: 0.0,
        read_noise: 0.0,
        ..ReliabilityConfig::default()
    };
    let nand =
        LentMedium::with_storage(GEOMETRY, rel, FaultConfig::default(), store).map_err(setup)?;
    let data = take(&mut mem.data, sizes::DATA, "data pool")?;
    Ok(McCore { fc, nand, data })
}

/// Runs the multi-core scenario over lent memory; the flash cores are built
/// in `cores` (at least [`CORES`] slots, contents on entry do not matter).
/// Failed checks are counted in the report; an `Err` means the scenario
/// could not run to the end.
pub fn run<'a>(
    mem: McMemory<'a>,
    cores: &mut [CoreSlot<'a>],
    opts: &McOptions,
) -> Result<McReport, ScenarioError> {
    check_sizes()?;
    let mut mem = mem;
    let setup = err(Step::Setup);
    let cores = cores
        .get_mut(..CORES)
        .ok_or(ScenarioError::Memory("fewer core slots than CORES"))?;
    let mut built: [Option<McCore<'_, 'a>>; CORES] = core::array::from_fn(|_| None);
    for (i, (slot, out)) in cores.iter_mut().zip(built.iter_mut()).enumerate() {
        let c = out.insert(build_core(slot, &mut mem, i, opts.seed)?);
        c.fc.ftl.format(0).map_err(err(Step::Format))?;
        c.run(Step::Format)?;
    }
    let oracle = core::mem::take(&mut mem.oracle)
        .get_mut(..sizes::ORACLE)
        .ok_or(ScenarioError::Memory("oracle shorter than the drive"))?;
    oracle.fill(0);
    let truth = core::mem::take(&mut mem.truth)
        .get_mut(..sizes::TRUTH)
        .ok_or(ScenarioError::Memory("truth bitmap shorter than the drive"))?;

    let mut d = Drive {
        master: Master::new(CORES as u32, u64::from(LOGICAL)).map_err(setup)?,
        cores: built,
        oracle,
        truth,
        version: 0,
        rng: rng(opts.seed),
        report: McReport {
            cores: CORES as u32,
            dies_per_core: GEOMETRY.dies(),
            logical: LOGICAL,
            host_writes: 0,
            superblocks: 0,
            list_pages: 0,
            list_pages_per_core: [0; CORES],
            gc_victims: 0,
            failed_die_detected: false,
            detect_writes: 0,
            truth_lbas: 0,
            identified_lbas: 0,
            missed: 0,
            extra: 0,
            ident_page_reads: 0,
            ident_ram_blocks: 0,
            rewritten: 0,
            still_failed: 0,
            mismatches_before: 0,
            mismatches_after: 0,
            audits_failed: 0,
            checks_passed: 0,
            checks_failed: 0,
        },
    };

    // Fill, then random overwrites.
    for lba in 0..LOGICAL {
        d.write(lba, Step::Fill)?;
    }
    let target = u64::from(LOGICAL).saturating_mul(u64::from(opts.write_factor.max(1)));
    while d.report.host_writes < target {
        let lba = d.rng.below_u32(LOGICAL);
        d.write(lba, Step::Churn)?;
    }
    d.report.mismatches_before = d.verify_all(Step::Verify)?;
    d.flush_all(Step::Verify)?;

    // Ground truth, then the die dies.
    d.report.truth_lbas = d.take_truth(VICTIM, FAILED_DIE)?;
    d.report.tally(d.report.truth_lbas > 0);
    d.core(VICTIM)?
        .nand
        .fail_die(DieId(FAILED_DIE))
        .map_err(|error| ScenarioError::Medium {
            step: Step::Corrupt,
            error,
        })?;

    // Writes of LBAs the die does not hold, until the detector retires it.
    let before = d.report.host_writes;
    let guard = u64::from(LOGICAL).saturating_mul(8);
    let mut lba = 0u32;
    while !d.core(VICTIM)?.fc.is_retired(DieId(FAILED_DIE)) {
        if d.report.host_writes.saturating_sub(before) > guard {
            break;
        }
        if !bit(d.truth, lba) {
            d.write(lba, Step::Churn)?;
        }
        lba = lba.saturating_add(1) % LOGICAL;
    }
    d.report.detect_writes = d.report.host_writes.saturating_sub(before);
    d.report.failed_die_detected = d.core(VICTIM)?.fc.is_retired(DieId(FAILED_DIE));
    d.report.tally(d.report.failed_die_detected);

    // CDR*: block-level identification on the victim, then a range query
    // over its whole space, compared with the truth both ways.
    let victim = d.core(VICTIM)?;
    victim
        .fc
        .start_identify(firmware_core::tech::reparo::p2l::P2lMode::Block)
        .map_err(err(Step::Verify))?;
    victim.run(Step::Verify)?;
    let cost = victim.fc.identify_result().map_err(err(Step::Verify))?;
    d.report.tally(cost.is_some());
    if let Some(c) = cost {
        d.report.ident_page_reads = c.page_reads;
        d.report.ident_ram_blocks = c.ram_blocks;
    }
    // Each reported LBA is compared with the truth bitmap as it comes.
    let drop_first = opts.fault == McFault::DropIdentified;
    let (mut identified, mut matched, mut extra) = (0u64, 0u64, 0u64);
    {
        let Drive { cores, truth, .. } = &mut d;
        let truth: &[u32] = truth;
        reported_lbas(cores, drop_first, |lba| {
            identified = identified.saturating_add(1);
            if bit(truth, lba) {
                matched = matched.saturating_add(1);
            } else {
                extra = extra.saturating_add(1);
            }
        })?;
    }
    d.report.identified_lbas = identified;
    d.report.extra = extra;
    d.report.missed = d.report.truth_lbas.saturating_sub(matched);
    // One check per local LPN of the victim: reported if and only if true.
    let wrong = d.report.missed.saturating_add(extra);
    let compared = u64::from(CORE_LOGICAL);
    for i in 0..compared {
        d.report.tally(i >= wrong);
    }

    // Recovery: the host rewrites what the drive reported, from the oracle.
    d.truth.fill(0);
    {
        let Drive { cores, truth, .. } = &mut d;
        reported_lbas(cores, drop_first, |lba| set_bit(truth, lba))?;
    }
    for lba in (VICTIM..LOGICAL).step_by(CORES) {
        if bit(d.truth, lba) {
            let v = d.version_of(lba)?;
            d.write_version(lba, v, Step::Verify)?;
            d.report.rewritten = d.report.rewritten.saturating_add(1);
        }
    }
    d.flush_all(Step::Verify)?;
    let mut still = 0u64;
    d.core(VICTIM)?
        .fc
        .scan_marks(0, CORE_LOGICAL, |_| still = still.saturating_add(1))
        .map_err(err(Step::Verify))?;
    d.report.still_failed = still;
    d.report.tally(still == 0);
    d.report.mismatches_after = d.verify_all(Step::Verify)?;
    d.audit_all()?;

    for c in 0..CORES as u32 {
        let s = *d.core(c)?.fc.ftl.stats();
        d.report.superblocks = d.report.superblocks.saturating_add(s.superblocks);
        d.report.list_pages = d.report.list_pages.saturating_add(s.list_pages);
        d.report.gc_victims = d.report.gc_victims.saturating_add(s.gc_victims);
        if let Some(p) = d.report.list_pages_per_core.get_mut(c as usize) {
            *p = s.list_pages;
        }
        d.report.tally(s.list_pages > 0);
    }
    Ok(d.report)
}

/// Bytes of lent memory [`run`] needs, all cores together
/// ([`sizes::LENT_BYTES`], once [`check_sizes`] has proved the constants).
pub fn lent_bytes() -> Result<usize, ScenarioError> {
    check_sizes()?;
    Ok(sizes::LENT_BYTES)
}

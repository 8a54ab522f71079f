//! A multi-core drive for Reparo (seed 001, Ch. 5): the master core's
//! striping over `N` flash cores ([`firmware_core::tech::reparo::controller`]), each core
//! an FTL over its own medium of `D_ssd / N` dies, run functionally (every
//! operation executes at once, in emission order) with the medium's
//! operation counts kept for the time model.
//!
//! [`Drive::get_lba_status`] answers the host's failed-LBA query for a range
//! with the configured *Identifier*; [`Drive::activate_cdr`] turns on the CDR
//! *Handler* (logical-space adjustment, redirection, fake failures).

use std::collections::BTreeSet;

use firmware_core::driver::execute;
use firmware_core::tech::reparo::controller::{CoreLend, FlashCore, IdentifyStats, Master};
use firmware_core::tech::reparo::handler::{Cdr, SsdShape};
use firmware_core::tech::reparo::p2l::P2lMode;
use firmware_core::tech::reparo::p2l_list::ListLend;
use firmware_core::{Config, DieId, Error, FullFtl, Geometry, Lpn, ReadValue, Slot, Tag};
use nand_model::{FaultConfig, ReliabilityConfig, SimMedium};
use test_kit::read::SyncCore;
use test_kit::rng::XorShift64;

use crate::engine::{CoreStore, Engine, EngineParams, StampOracle};
use crate::identify_time::{CoreCosts, IdentifyClock};
use crate::timing::TimingParams;
use crate::workload::{HostOp, HostRequest, VecSource};

/// Reparo recovery variant (`reparo.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Rebuild-Assist replacement of the whole drive.
    Baseline,
    /// Isolated die recovery: the victim core scans its L2P, keeps its LBAs.
    Idr,
    /// Cooperative die recovery: parallel scan, logical-space adjustment.
    Cdr,
    /// CDR with P2L entrustment and marked failed LBAs.
    CdrStar,
}

impl Mode {
    /// Parses a `reparo.mode` value.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "baseline" => Mode::Baseline,
            "idr" => Mode::Idr,
            "cdr" => Mode::Cdr,
            "cdr-star" => Mode::CdrStar,
            _ => return None,
        })
    }

    /// The `reparo.mode` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Baseline => "baseline",
            Mode::Idr => "idr",
            Mode::Cdr => "cdr",
            Mode::CdrStar => "cdr-star",
        }
    }
}

/// The entrustment a drive in `mode` uses: only CDR* identifies through
/// entrusted P2L lists, so only its drives give up list pages to them.
pub fn effective_p2l(mode: Mode, p2l: P2lMode) -> P2lMode {
    if mode == Mode::CdrStar {
        p2l
    } else {
        P2lMode::None
    }
}

/// Parses a `reparo.p2l` value.
pub fn parse_p2l(s: &str) -> Option<P2lMode> {
    Some(match s {
        "none" => P2lMode::None,
        "page" => P2lMode::Page,
        "block" => P2lMode::Block,
        _ => return None,
    })
}

/// One per-entry loop of the *Identifier* ([`Drive::identify_stage_work`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentifyStage {
    /// IDR: L2P entries checked in place.
    Scan,
    /// CDR: L2P entries copied into the shared area.
    Copy,
    /// CDR: shared-area entries checked.
    Region,
    /// CDR*: mark bits of a range query.
    Marks,
}

/// Shape of one multi-core drive.
#[derive(Clone, Copy, Debug)]
pub struct DriveSpec {
    /// Flash cores `N` (`controller.flash_cores`).
    pub cores: u32,
    /// Geometry of one core's share of the dies.
    pub core_geometry: Geometry,
    /// Space utilisation: host-visible LBAs over usable units.
    pub utilisation: f64,
    /// Bad blocks past which a die is failed (`reparo.n_bad_die`).
    pub n_bad_die: u32,
    /// Medium seed.
    pub seed: u64,
}

impl DriveSpec {
    /// Usable units of one die: the blocks a plane keeps for data (all but
    /// the GC reserve and the open-block margin the core sets aside).
    pub fn die_capacity(&self) -> u64 {
        let g = self.core_geometry;
        let usable = g.blocks_per_plane.saturating_sub(2 + 3);
        u64::from(usable) * u64::from(g.planes_per_die) * u64::from(g.units_per_block())
    }

    /// Dies in the drive, `D_ssd`.
    pub fn dies(&self) -> u32 {
        self.cores * self.core_geometry.dies()
    }

    /// Host-visible LBAs, a multiple of the cores.
    pub fn logical(&self) -> u64 {
        let phys = self.die_capacity() * u64::from(self.dies());
        let l = (phys as f64 * self.utilisation) as u64;
        l - l % u64::from(self.cores)
    }

    /// The CDR shape.
    pub fn shape(&self) -> SsdShape {
        SsdShape {
            cores: self.cores,
            dies: self.dies(),
            logical: self.logical(),
            die_capacity: self.die_capacity(),
        }
    }

    /// Whether a victim core under IDR can keep its LBAs on its remaining
    /// dies after one die fails (at most 98 % of their usable units, the
    /// rest is GC's working room).
    pub fn idr_holds(&self) -> bool {
        let left = u64::from(self.core_geometry.dies().saturating_sub(1));
        let per_core = self.logical() / u64::from(self.cores.max(1));
        per_core.saturating_mul(100) <= self.die_capacity().saturating_mul(left).saturating_mul(98)
    }

    /// Whether each flash core can hold this drive's share of the LBAs (with
    /// CDR's hidden redirection space and the GC reserve) under `p2l`,
    /// checked on the core configuration alone, before anything is allocated.
    pub fn check(&self, p2l: P2lMode) -> Result<(), Error> {
        self.core_config(p2l)?.validate()
    }

    fn core_config(&self, p2l: P2lMode) -> Result<Config, Error> {
        let mut cfg = Config::with_op_ratio(self.core_geometry, 0.05)?;
        // Superblock writes, as the thesis's FTL; block-level entrustment
        // keeps the last page of every block for the neighbour's list.
        cfg.superblock.enabled = true;
        cfg.superblock.list_pages = p2l == P2lMode::Block;
        let per_core = self.logical() / u64::from(self.cores);
        // Room for the hidden LS_redirect of a CDR helper: up to five
        // failures on drives of 64 dies or more, three on smaller ones.
        let kmax = if self.dies() >= 64 { 5 } else { 3 };
        let helper = cdr_spaces(self.cores, self.dies(), per_core, kmax, true);
        let hidden = helper.first().copied().unwrap_or(per_core) - per_core + 1;
        cfg.logical_units = u32::try_from(per_core + hidden).map_err(|_| Error::OutOfSpace)?;
        cfg.write_buffer_units = 256;
        cfg.max_inflight = 512;
        cfg.read_slots = 16;
        Ok(cfg)
    }
}

/// Memory one flash core borrows besides the FTL tables.
struct CoreMem {
    entrust: Vec<u32>,
    marks: Vec<u32>,
    holders: Vec<u32>,
    list_bufs: Vec<u8>,
    pages: Vec<u32>,
}

/// Memory of one drive, lent to its cores.
pub struct DriveStore {
    cores: Vec<(CoreStore<u64>, CoreMem)>,
    cfg: Config,
    p2l: P2lMode,
}

impl DriveStore {
    /// Allocates the tables of every core, with list pages when `p2l` is
    /// block-level entrustment.
    pub fn new(spec: &DriveSpec, p2l: P2lMode) -> Result<DriveStore, Error> {
        let cfg = spec.core_config(p2l)?;
        let g = cfg.geometry;
        let lists = cfg.superblock.list_pages;
        let cores = (0..spec.cores)
            .map(|_| {
                Ok((
                    CoreStore::new(&cfg)?,
                    CoreMem {
                        entrust: vec![0u32; g.total_units() as usize],
                        marks: vec![0u32; (cfg.logical_units as usize).div_ceil(32)],
                        holders: vec![
                            0u32;
                            if lists {
                                firmware_core::tech::reparo::p2l_list::holder_words(
                                    g.total_blocks() as usize,
                                    g.planes() as usize,
                                )
                            } else {
                                0
                            }
                        ],
                        pages: vec![
                            0u32;
                            if p2l == P2lMode::Page {
                                firmware_core::tech::reparo::p2l_page::page_words(
                                    g.total_pages() as usize
                                )
                            } else {
                                0
                            }
                        ],
                        list_bufs: vec![
                            0u8;
                            if lists {
                                firmware_core::tech::reparo::p2l_list::LIST_BUFS
                                    * g.page_bytes as usize
                            } else {
                                0
                            }
                        ],
                    },
                ))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(DriveStore { cores, cfg, p2l })
    }
}

/// Operations one host command may cause before the core is taken to be
/// livelocked (GC of a plane with no reclaimable space).
const OP_LIMIT: u64 = 1_000_000;

/// Hands flash core `fc` the result of operation `id`. The core puts new
/// work off while operations are still queued; this harness takes them one
/// at a time, so it has the put-off pass run at once ([`Ftl::schedule`]),
/// keeping the operation order the Reparo figures in `docs/results.md`
/// were recorded with.
///
/// [`Ftl::schedule`]: firmware_core::Ftl::schedule
fn complete(
    fc: &mut FlashCore<'_, firmware_core::Techniques<'_>>,
    id: firmware_core::OpId,
    r: firmware_core::NandResult,
) -> Result<(), Error> {
    fc.complete(id, r, 0)?;
    fc.ftl.schedule(0)
}

/// One flash core with its medium and data pool.
struct Core<'a> {
    fc: FlashCore<'a, firmware_core::Techniques<'a>>,
    data: &'a mut [u64],
    nand: SimMedium,
}

impl Core<'_> {
    /// Runs queued operations (and probes, and die retirements) to the end.
    fn run(&mut self) -> Result<(), Error> {
        let mut ops = 0u64;
        loop {
            while let Some(op) = self.fc.poll_op() {
                let meta = if op.id == firmware_core::tech::reparo::controller::PROBE_ID {
                    &mut [][..]
                } else {
                    self.fc.meta_for(&op)
                };
                let r = execute(&mut self.nand, self.data, meta, &op);
                ops += 1;
                if ops > OP_LIMIT {
                    // GC cannot gain space: the core is over-full.
                    return Err(Error::OutOfSpace);
                }
                complete(&mut self.fc, op.id, r)?;
            }
            self.fc.maintain()?;
            if self.fc.ftl.ops_queued() == 0 {
                let again = self.fc.poll_op();
                match again {
                    None => return Ok(()),
                    Some(op) => {
                        let meta = if op.id == firmware_core::tech::reparo::controller::PROBE_ID {
                            &mut [][..]
                        } else {
                            self.fc.meta_for(&op)
                        };
                        let r = execute(&mut self.nand, self.data, meta, &op);
                        complete(&mut self.fc, op.id, r)?;
                    }
                }
            }
        }
    }

    /// [`Core::run`] on the identification clock: the operations the core
    /// emits before it needs a completion issue together at the clock's
    /// time, the core's dies, channels and DRAM bus order them, and the
    /// clock moves to the last completion.
    fn run_timed(&mut self, clock: &mut IdentifyClock) -> Result<(), Error> {
        let mut ops = 0u64;
        let mut batch = Vec::new();
        loop {
            while let Some(op) = self.fc.poll_op() {
                batch.push(op);
            }
            if batch.is_empty() {
                self.fc.maintain()?;
                match self.fc.poll_op() {
                    Some(op) => batch.push(op),
                    None if self.fc.ftl.ops_queued() == 0 => return Ok(()),
                    None => continue,
                }
            }
            let start = clock.now;
            for op in batch.drain(..) {
                let meta = if op.id == firmware_core::tech::reparo::controller::PROBE_ID {
                    &mut [][..]
                } else {
                    self.fc.meta_for(&op)
                };
                let r = execute(&mut self.nand, self.data, meta, &op);
                clock.now = clock.now.max(clock.timing.schedule(&op, start));
                complete(&mut self.fc, op.id, r)?;
                ops += 1;
            }
            if ops > OP_LIMIT {
                return Err(Error::OutOfSpace);
            }
        }
    }

    fn write(&mut self, lpn: Lpn, v: u64) -> Result<(), Error> {
        loop {
            match self.fc.ftl.write(lpn, 0) {
                Ok(s) => {
                    *self
                        .data
                        .get_mut(usize::from(s.0))
                        .ok_or(Error::Corrupt(&"slot"))? = v;
                    return self.run();
                }
                Err(Error::Busy) => {
                    if self.fc.holding() {
                        // The write buffer waits for a held superpage run.
                        self.fc.release_held();
                    } else if self.fc.ftl.ops_queued() == 0 {
                        return Err(Error::OutOfSpace);
                    }
                    self.run()?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn read(&mut self, lpn: Lpn) -> Result<ReadValue<u64>, Error> {
        test_kit::read::read(self, lpn)
    }
}

impl<'a> SyncCore<'a> for Core<'a> {
    type Hooks = firmware_core::Techniques<'a>;
    type Unit = u64;
    type Error = Error;

    fn ftl(&mut self) -> &mut FullFtl<'a> {
        &mut self.fc.ftl
    }

    fn run(&mut self) -> Result<(), Error> {
        Core::run(self)
    }

    fn unit(&self, slot: Slot) -> Result<u64, Error> {
        self.data
            .get(usize::from(slot.0))
            .copied()
            .ok_or(Error::Corrupt(&"slot"))
    }

    fn core_error(&self, e: Error) -> Error {
        e
    }
}

/// Medium operation counts of one core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreOps {
    /// Page reads (probes included).
    pub reads: u64,
    /// Page programs.
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
}

/// A drive of `N` flash cores behind a master core.
pub struct Drive<'a> {
    master: Master,
    cores: Vec<Core<'a>>,
    spec: DriveSpec,
    mode: Mode,
    p2l: P2lMode,
    /// Failed LBAs reported by queries so far (real and fake).
    pub reported: u64,
    /// Fake failures reported so far.
    pub fake_reported: u64,
    identified: bool,
    /// Per core: the identification clock (empty: identification untimed).
    clocks: Vec<IdentifyClock>,
}

impl<'a> Drive<'a> {
    /// Builds and formats a drive over `store`.
    pub fn new(
        spec: DriveSpec,
        store: &'a mut DriveStore,
        mode: Mode,
        p2l: P2lMode,
    ) -> Result<Drive<'a>, Error> {
        let cfg = store.cfg;
        if effective_p2l(mode, p2l) != store.p2l {
            return Err(Error::InvalidConfig(
                &"drive store built for another p2l mode (list pages differ)",
            ));
        }
        let mut cores = Vec::new();
        for (i, (cs, mem)) in store.cores.iter_mut().enumerate() {
            let (t, data) = cs.split();
            let ftl = firmware_core::FullFtl::new(cfg, t)?;
            let fc = FlashCore::new(
                ftl,
                CoreLend {
                    entrust: mem.entrust.as_mut_slice(),
                    marks: mem.marks.as_mut_slice(),
                    lists: ListLend {
                        holders: mem.holders.as_mut_slice(),
                        bufs: mem.list_bufs.as_mut_slice(),
                    },
                    pages: mem.pages.as_mut_slice(),
                },
                spec.n_bad_die,
            )?;
            // No bit errors: the only failures are the injected die failures.
            let rel = ReliabilityConfig {
                seed: spec.seed ^ ((i as u64) << 8),
                base_errors: 0.0,
                wear_errors: 0.0,
                read_noise: 0.0,
                ..ReliabilityConfig::default()
            };
            let nand = SimMedium::new(cfg.geometry, rel, FaultConfig::default())?;
            let mut core = Core { fc, data, nand };
            core.fc.ftl.format(0)?;
            core.run()?;
            cores.push(core);
        }
        Ok(Drive {
            master: Master::new(spec.cores, spec.logical())?,
            cores,
            spec,
            mode,
            p2l,
            reported: 0,
            fake_reported: 0,
            identified: false,
            clocks: Vec::new(),
        })
    }

    /// The drive's shape.
    pub fn spec(&self) -> &DriveSpec {
        &self.spec
    }

    /// Host-visible LBAs.
    pub fn logical(&self) -> u64 {
        self.master.logical()
    }

    /// The master core.
    pub fn master(&self) -> &Master {
        &self.master
    }

    fn core(&mut self, c: u32) -> Result<&mut Core<'a>, Error> {
        self.cores
            .get_mut(c as usize)
            .ok_or(Error::AddressOutOfRange)
    }

    /// Writes one LBA. A write of a redirected LBA also drops its stale
    /// copy on the victim core.
    pub fn write(&mut self, lba: u64, v: u64) -> Result<(), Error> {
        let t = self.master.route(lba)?;
        self.core(t.core)?.write(t.lpn, v)?;
        let home = self.master.static_home(lba)?;
        if home != t {
            let c = self.core(home.core)?;
            if c.fc.ftl.l2p_entry(home.lpn)? != firmware_core::ftl::die_fail::L2pEntry::Unmapped {
                c.fc.ftl.trim(home.lpn, 0)?;
                c.run()?;
            }
        }
        Ok(())
    }

    /// Reads one LBA.
    pub fn read(&mut self, lba: u64) -> Result<ReadValue<u64>, Error> {
        let t = self.master.route(lba)?;
        self.core(t.core)?.read(t.lpn)
    }

    /// Flushes every core's write buffer.
    pub fn flush(&mut self) -> Result<(), Error> {
        for c in &mut self.cores {
            c.fc.ftl.flush(Tag(u32::MAX), 0)?;
            c.fc.release_held();
            c.run()?;
            while c.fc.ftl.poll_completion().is_some() {}
        }
        Ok(())
    }

    /// Kills die `die` (index within core `core`) on the medium now.
    pub fn fail_die(&mut self, core: u32, die: u32) -> Result<(), Error> {
        self.core(core)?
            .nand
            .fail_die(DieId(die))
            .map_err(|_| Error::AddressOutOfRange)
    }

    /// Dies detected failed and retired, as `(core, die)`.
    pub fn failed_dies(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (i, c) in self.cores.iter().enumerate() {
            for d in 0..c.fc.ftl.config().geometry.dies() {
                if c.fc.is_retired(DieId(d)) {
                    out.push((i as u32, d));
                }
            }
        }
        out
    }

    /// Turns on the CDR *Handler* for a failure on core `victim`.
    pub fn activate_cdr(&mut self, victim: u32) -> Result<(), Error> {
        let cdr = Cdr::new(self.spec.shape(), victim)?;
        self.master.set_cdr(cdr)
    }

    /// Times every later identification on the engine's resources of each
    /// core (`p` over the core's geometry) with the core costs `costs`.
    pub fn time_identification(&mut self, p: TimingParams, costs: CoreCosts) {
        self.clocks = self
            .cores
            .iter()
            .map(|c| IdentifyClock::new(c.fc.ftl.config().geometry, p, costs))
            .collect();
    }

    /// Identification time so far, ns: the latest clock of any core (0
    /// when untimed).
    pub fn identify_ns(&self) -> u64 {
        self.clocks.iter().map(|c| c.now).max().unwrap_or(0)
    }

    /// Failed LBAs of `start..start + len`, in increasing order: LBAs whose
    /// data lived on a failed die, plus CDR fake failures not yet rewritten.
    pub fn get_lba_status(&mut self, start: u64, len: u64) -> Result<Vec<u64>, Error> {
        let n = u64::from(self.spec.cores);
        let end = (start + len).min(self.logical());
        let mut out = BTreeSet::new();
        if self.mode == Mode::CdrStar && !self.identified {
            for (i, c) in self.cores.iter_mut().enumerate() {
                if !c.fc.has_failed_die() {
                    continue;
                }
                c.fc.start_identify(self.p2l)?;
                match self.clocks.get_mut(i) {
                    Some(clock) => c.run_timed(clock)?,
                    None => c.run()?,
                }
                let cost =
                    c.fc.identify_result()?
                        .ok_or(Error::Corrupt(&"P2L identification unfinished"))?;
                if let Some(clock) = self.clocks.get_mut(i) {
                    // Each LBA read from a list is checked against the L2P.
                    clock.marks(0, cost.candidates);
                }
            }
            self.identified = true;
        }
        let mut real = 0u64;
        for (ci, c) in self.cores.iter_mut().enumerate() {
            if !c.fc.has_failed_die() || start >= end {
                continue;
            }
            let before = c.fc.identify_stats();
            let clock = self.clocks.get_mut(ci);
            let ci = ci as u64;
            // Local LPNs l with l * N + ci in start..end.
            let first = (start + n - 1 - ci) / n;
            let last = (end + n - 1 - ci) / n;
            let (f, cnt) = (first as u32, (last - first) as u32);
            let mut push = |l: Lpn| {
                out.insert(u64::from(l.0) * n + ci);
            };
            match self.mode {
                Mode::CdrStar => c.fc.scan_marks(f, cnt, &mut push)?,
                Mode::Cdr => {
                    // The victim copies the range's entries into the shared
                    // area; every core scans one of N regions, on its own
                    // thread; results merge in LPN order.
                    let mut shared =
                        vec![firmware_core::ftl::die_fail::L2pEntry::Unmapped; cnt as usize];
                    let len = c.fc.copy_to_shared(f, &mut shared)?;
                    let view = c.fc.failure_view();
                    let chunk = len.div_ceil(n as usize).max(1);
                    let found: Vec<Vec<u32>> = std::thread::scope(|s| {
                        let handles: Vec<_> = shared[..len]
                            .chunks(chunk)
                            .enumerate()
                            .map(|(i, region)| {
                                s.spawn(move || {
                                    let mut v = Vec::new();
                                    let base = f + (i * chunk) as u32;
                                    view.scan_region(region, base, |l| v.push(l.0));
                                    v
                                })
                            })
                            .collect();
                        handles
                            .into_iter()
                            .map(|h| {
                                h.join()
                                    .map_err(|_| Error::Corrupt(&"scan thread panicked"))
                            })
                            .collect::<Result<Vec<_>, Error>>()
                    })?;
                    let total: usize = found.iter().map(Vec::len).sum();
                    c.fc.note_found(total as u64);
                    for l in found.into_iter().flatten() {
                        push(Lpn(l));
                    }
                }
                _ => c.fc.scan(f, cnt, &mut push)?,
            }
            if let Some(clock) = clock {
                let after = c.fc.identify_stats();
                let entries = after.l2p_scanned - before.l2p_scanned;
                match self.mode {
                    Mode::CdrStar => clock.marks(
                        after.marks_scanned - before.marks_scanned,
                        after.p2l.candidates - before.p2l.candidates,
                    ),
                    Mode::Cdr => clock.copy_and_split(entries, self.spec.cores),
                    _ => clock.scan(entries),
                }
                clock.answer(after.found - before.found);
            }
        }
        real += out.len() as u64;
        let mut fake = 0u64;
        let mut victims: Vec<u32> = self.master.victims().collect();
        victims.sort_unstable();
        victims.dedup();
        for v in victims {
            let v = u64::from(v);
            let mut l = (start + n - 1 - v) / n * n + v;
            while l < end {
                if self.master.is_fake_failure(l) {
                    let t = self.master.route(l)?;
                    let e = self.core(t.core)?.fc.ftl.l2p_entry(t.lpn)?;
                    if e == firmware_core::ftl::die_fail::L2pEntry::Unmapped && out.insert(l) {
                        fake += 1;
                    }
                }
                l += n;
            }
        }
        // The master answers the fake failures with the rest.
        if let Some(clock) = self.clocks.iter_mut().max_by_key(|c| c.now) {
            clock.answer(fake);
        }
        self.reported += real + fake;
        self.fake_reported += fake;
        Ok(out.into_iter().collect())
    }

    /// Runs one per-entry loop of the *Identifier* over every local LPN of
    /// every core with a failed die, `passes` times, reporting nothing and
    /// charging no clock: the work whose instructions
    /// `examples/identify_cost.rs` counts. Returns the entries visited.
    pub fn identify_stage_work(&mut self, stage: IdentifyStage, passes: u32) -> Result<u64, Error> {
        let mut entries = 0u64;
        for c in self.cores.iter_mut().filter(|c| c.fc.has_failed_die()) {
            let per_core = c.fc.ftl.logical_units();
            let mut shared =
                vec![firmware_core::ftl::die_fail::L2pEntry::Unmapped; per_core as usize];
            if stage == IdentifyStage::Region {
                c.fc.copy_to_shared(0, &mut shared)?;
            }
            for _ in 0..passes {
                match stage {
                    IdentifyStage::Scan => c.fc.scan(0, per_core, |_| {})?,
                    IdentifyStage::Copy => {
                        c.fc.copy_to_shared(0, &mut shared)?;
                    }
                    IdentifyStage::Region => {
                        let view = c.fc.failure_view();
                        let mut n = 0u32;
                        view.scan_region(&shared, 0, |_| n += 1);
                        std::hint::black_box(n);
                    }
                    IdentifyStage::Marks => c.fc.scan_marks(0, per_core, |_| {})?,
                }
                entries += u64::from(per_core);
            }
        }
        Ok(entries)
    }

    /// Identification counters summed over the cores, and the largest
    /// single-core scan (the victim's, for IDR).
    pub fn identify_stats(&self) -> Vec<IdentifyStats> {
        self.cores.iter().map(|c| c.fc.identify_stats()).collect()
    }

    /// Medium operation counts per core.
    pub fn core_ops(&self) -> Vec<CoreOps> {
        self.cores
            .iter()
            .map(|c| {
                let s = c.nand.stats();
                CoreOps {
                    reads: s.reads,
                    programs: s.programs,
                    erases: s.erases,
                }
            })
            .collect()
    }

    /// Host units written and units programmed per core (for WAF).
    pub fn core_write_counts(&self) -> Vec<(u64, u64)> {
        self.cores
            .iter()
            .map(|c| {
                let s = c.fc.ftl.stats();
                (
                    s.host_write_units,
                    s.host_program_units + s.gc_program_units,
                )
            })
            .collect()
    }

    /// Zeroes the core and medium counters.
    pub fn reset_stats(&mut self) {
        for c in &mut self.cores {
            c.fc.ftl.reset_stats();
            c.nand.reset_stats();
        }
    }

    /// Live dies per core.
    pub fn live_dies(&self) -> Vec<u32> {
        self.cores
            .iter()
            .map(|c| {
                let g = c.fc.ftl.config().geometry;
                (0..g.dies())
                    .filter(|&d| !c.fc.is_retired(DieId(d)))
                    .count() as u32
            })
            .collect()
    }

    /// The mode this drive recovers with.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The ground truth: which LBAs' static homes are on die `die` of core
    /// `core` according to the medium's spare areas (the LPNs of the live
    /// units there). Read straight from the simulator, not through the FTL.
    pub fn lbas_on_die(&self, core: u32, die: u32) -> Result<BTreeSet<u64>, Error> {
        let c = self
            .cores
            .get(core as usize)
            .ok_or(Error::AddressOutOfRange)?;
        let g = c.fc.ftl.config().geometry;
        let per_die = u32::from(g.planes_per_die) * g.blocks_per_plane;
        let n = u64::from(self.spec.cores);
        let mut out = BTreeSet::new();
        for b in die * per_die..(die + 1) * per_die {
            for page in 0..g.pages_per_block {
                let ppn = g.ppn(firmware_core::BlockId(b), page);
                let Some(spare) = c.nand.peek_spare(ppn) else {
                    continue;
                };
                for off in 0..g.units_per_page {
                    if !spare.units.contains(off) {
                        continue;
                    }
                    let lpn = spare.lpns[usize::from(off)];
                    // Live: the L2P still names this unit.
                    if c.fc.ftl.l2p_entry(lpn)?
                        == firmware_core::ftl::die_fail::L2pEntry::Flash(g.pun(ppn, off))
                        && u64::from(lpn.0) < self.master.per_core()
                    {
                        out.insert(u64::from(lpn.0) * n + u64::from(core));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The FTL counters of core `core` (superblocks, list pages, ...).
    pub fn core_stats(&self, core: u32) -> Result<firmware_core::Stats, Error> {
        let c = self
            .cores
            .get(core as usize)
            .ok_or(Error::AddressOutOfRange)?;
        Ok(*c.fc.ftl.stats())
    }

    /// Blocks of die `die` of core `core` holding programmed pages (read
    /// from the medium's store).
    pub fn written_blocks_on_die(&self, core: u32, die: u32) -> Result<u64, Error> {
        let c = self
            .cores
            .get(core as usize)
            .ok_or(Error::AddressOutOfRange)?;
        let g = c.fc.ftl.config().geometry;
        let per_die = u32::from(g.planes_per_die) * g.blocks_per_plane;
        Ok((die * per_die..(die + 1) * per_die)
            .filter(|&b| {
                c.nand
                    .peek_spare(g.ppn(firmware_core::BlockId(b), 0))
                    .is_some()
            })
            .count() as u64)
    }

    /// Post-recovery performance on the timed engine (the engine of `ftl
    /// synth`): `warm` uniform random full-unit overwrites run functionally,
    /// then `count` more are routed by the master core (CDR redirection
    /// included) and each flash core's share runs on an [`Engine`] around
    /// that core's FTL and medium, with `p.queue_depth` split evenly over the
    /// cores (rounded up). Returns (WAF, IOPS): units programmed over units
    /// written by the host on every core, and `count` over the simulated time
    /// of the slowest core. Consumes the drive: its cores move into the
    /// engines.
    pub fn timed_random_write_perf(
        mut self,
        warm: u64,
        count: u64,
        seed: u64,
        p: EngineParams,
    ) -> Result<(f64, f64), Error> {
        let n = self.logical();
        let mut rng = XorShift64(seed | 1);
        for _ in 0..warm {
            let l = rng.below_mod(n);
            self.write(l, l ^ 0xABCD)?;
        }
        self.flush()?;
        let cores = self.cores.len();
        let mut reqs = vec![Vec::new(); cores];
        for _ in 0..count {
            let t = self.master.route(rng.below_mod(n))?;
            let r = reqs
                .get_mut(t.core as usize)
                .ok_or(Error::AddressOutOfRange)?;
            r.push(HostRequest {
                time_ns: 0,
                op: HostOp::Write,
                lpn: t.lpn.0,
                units: 1,
                idle_ns: 0,
                window: 0,
                placement: 0,
            });
        }
        let qd = p.queue_depth.div_ceil(cores.max(1) as u32).max(1);
        let (mut host, mut progs, mut slowest) = (0u64, 0u64, 0u64);
        for (core, reqs) in self.cores.into_iter().zip(reqs) {
            let Core { fc, data, nand } = core;
            let ftl = fc.ftl;
            let oracle = StampOracle::new(ftl.logical_units());
            let params = EngineParams {
                queue_depth: qd,
                ..p
            };
            let mut e = Engine::adopt_running(ftl, nand, data, params, oracle)?;
            e.run(&mut VecSource::new(reqs), &mut |_| {})?;
            // The engine's phase began with the core's counters at zero.
            let s = e.ftl.stats();
            host += s.host_write_units;
            progs += s.host_program_units + s.gc_program_units;
            slowest = slowest.max(e.stats.end_ns.saturating_sub(e.stats.start_ns));
        }
        let waf = progs as f64 / host.max(1) as f64;
        let iops = if slowest > 0 {
            count as f64 / (slowest as f64 / 1e9)
        } else {
            0.0
        };
        Ok((waf, iops))
    }

    /// Fails die `die` of core `core` and recovers it as the host would,
    /// with `expect` (the data of every LBA) standing in for the RAID
    /// rebuild: random updates until the detector reports the die, CDR's
    /// adjustment (CDR modes), failed-LBA queries over 64 MiB ranges and a
    /// write-back of every answer. Returns the LBAs the queries reported.
    pub fn fail_and_recover(
        &mut self,
        core: u32,
        die: u32,
        expect: &mut [u64],
        seed: u64,
    ) -> Result<u64, Error> {
        let n = self.logical();
        let before = self.failed_dies().len();
        self.fail_die(core, die)?;
        let mut rng = XorShift64(seed | 1);
        let mut guard = 0u64;
        while self.failed_dies().len() == before {
            let l = rng.below_mod(n);
            let v = expect.get_mut(l as usize).ok_or(Error::LpnOutOfRange)?;
            *v = v.wrapping_add(0x1_0000);
            let v = *v;
            self.write(l, v)?;
            guard += 1;
            if guard > 10 * n {
                return Err(Error::Corrupt(&"die failure never detected"));
            }
        }
        if matches!(self.mode, Mode::Cdr | Mode::CdrStar) {
            self.activate_cdr(core)?;
            self.identified = false;
        }
        let range = (64 << 20) / u64::from(self.spec.core_geometry.unit_bytes()).max(1);
        let mut reported = 0u64;
        let mut start = 0;
        while start < n {
            for l in self.get_lba_status(start, range)? {
                let v = *expect.get(l as usize).ok_or(Error::LpnOutOfRange)?;
                self.write(l, v)?;
                reported += 1;
            }
            start += range;
        }
        Ok(reported)
    }

    /// Checks every core's cross-table invariants (slow).
    pub fn audit(&self) -> Result<(), Error> {
        self.cores.iter().try_for_each(|c| c.fc.ftl.audit())
    }
}

/// Per-core logical spaces after `k` die failures on the last core:
/// IDR keeps them; CDR moves `alpha = |LS_h| / (D - 1)` (Eq. 5.4, floored,
/// `D` the dies still alive) from the victim to each helper per failure,
/// the approximation the paper evaluates for repeated failures.
pub fn cdr_spaces(cores: u32, dies: u32, per_core: u64, k: u32, cdr: bool) -> Vec<u64> {
    let n = cores as usize;
    let mut ls = vec![per_core; n];
    if !cdr {
        return ls;
    }
    for i in 0..k {
        let d_alive = u64::from(dies.saturating_sub(i));
        let alpha = ls[0] / d_alive.saturating_sub(1).max(1);
        for l in ls.iter_mut().take(n - 1) {
            *l += alpha;
        }
        ls[n - 1] = ls[n - 1].saturating_sub(alpha * (n as u64 - 1));
    }
    ls
}

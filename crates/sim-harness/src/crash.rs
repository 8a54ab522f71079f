//! Power-cut testing: run a workload, cut the power at random points (in
//! the middle of programs and erases, during GC, translation-page writes and
//! mount itself), let the capacitor flush run on its budget, remount, and
//! check every logical unit against an oracle.
//!
//! The driver executes operations one at a time in emission order (a valid
//! per-die order) and delivers completions later, die by die, in a seeded
//! random interleaving, so operations are genuinely in flight when the power
//! goes. At a cut the operation about to run is torn (a program leaves its
//! page unprogrammed, unreadable or intact; an erase leaves the block neither
//! erased nor intact) and every later one never runs. The capacitor then
//! pays for at most [`firmware_core::FullFtl::cut_capacity`] programs; the run
//! counts any flush that needs more.
//!
//! Every write the core accepted is acknowledged (the write buffer is
//! capacitor-backed), so after each remount every unit must read back its
//! last acknowledged data, or zeros if its last acknowledged command was a
//! trim or nothing was ever written.

use std::collections::VecDeque;

use firmware_core::driver::execute;
use firmware_core::ftl::tables::BlockState;
use firmware_core::persist::mount::MountStep;
use firmware_core::{
    Config, CopyStop, Error, FullFtl, HostCompletion, Loc, Lpn, NandCmd, NandOp, NandResult,
    ReadStart, ReadStatus, Tag,
};
use nand_model::{SimMedium, TornProgram};
// The crash harness draws from xorshift64*.
use test_kit::rng::{XorShift64Star as Rng, GOLDEN_GAMMA};

use crate::engine::CoreStore;
use crate::timing::{Timing, TimingParams};

pub mod random_config;
pub mod setup;
mod zones;

/// What a crash run does.
#[derive(Clone, Copy, Debug)]
pub struct CrashSpec {
    /// Power cuts.
    pub cuts: u32,
    /// Seed of the workload, the cut points and the tearing.
    pub seed: u64,
    /// Mean host commands between two cuts.
    pub ops_per_cut: u32,
    /// Share (0-1) of the logical space the workload touches.
    pub span: f64,
    /// Probability that a mount is itself cut (then mounted again).
    pub mount_cut_prob: f64,
    /// Check every logical unit after this many cuts (0: only at the end);
    /// between, the units touched since the last cut and a random sample are checked.
    pub full_check_every: u32,
    /// Capacitor energy as a share of what the core asks for (1.0: exactly
    /// [`firmware_core::FullFtl::cut_capacity`] programs). Below 1 the flush is
    /// cut short and data is lost: the check must see it.
    pub capacitor_scale: f64,
    /// NAND and channel timing: operations complete when the timing model
    /// says, and mount time is reported in simulated seconds. Without it
    /// every completion advances the clock by 1 us.
    pub timing: Option<TimingParams>,
    /// Write every unit of the span once before the first cut, so the
    /// workload runs on a full drive and GC from the start.
    pub prefill: bool,
    /// Share (0-1) of host commands that are copies of 1-4 units (0: none,
    /// and the workload is the same as without copy support).
    pub copy_share: f64,
    /// Probability that an epoch ends in a clean shutdown
    /// ([`firmware_core::FullFtl::shutdown`]) instead of a power cut.
    pub shutdown_prob: f64,
    /// A zoned namespace of this shape (`host.interface = zns`): the
    /// workload is zone commands (see `crash/zones.rs`) and every zone's
    /// state and write pointer is checked after each mount; no prefill.
    pub zones: Option<firmware_core::tech::zns::zone::ZoneGeometry>,
}

impl Default for CrashSpec {
    fn default() -> Self {
        CrashSpec {
            cuts: 100,
            seed: 1,
            ops_per_cut: 400,
            span: 0.9,
            mount_cut_prob: 0.2,
            full_check_every: 50,
            capacitor_scale: 1.0,
            timing: None,
            prefill: false,
            copy_share: 0.0,
            shutdown_prob: 0.0,
            zones: None,
        }
    }
}

/// What a crash run found (report keys `crash.*`, `recovery.*`).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct CrashReport {
    /// Power cuts made (including cuts during mount).
    pub cuts: u64,
    /// Cuts that hit a mount in progress.
    pub mount_cuts: u64,
    /// Units whose acknowledged data did not read back (older data, zeros or an error).
    pub lost_acknowledged: u64,
    /// Reads that returned data no command ever wrote to that unit.
    pub invalid_reads: u64,
    /// Power-cut flushes that needed more programs than the capacitor pays for.
    pub capacitor_overruns: u64,
    /// Most programs one power-cut flush used.
    pub cut_programs_max: u64,
    /// Programs the capacitor pays for.
    pub cut_capacity: u64,
    /// Programs torn by a cut.
    pub torn_programs: u64,
    /// Erases torn by a cut.
    pub torn_erases: u64,
    /// Units checked after remounts.
    pub units_checked: u64,
    /// Logical units whose location after a mount differs from the one
    /// the core held when the power went (a unit then in the write buffer
    /// may be anywhere on flash). Stricter than the read-back check: it
    /// also catches stale mappings that still happen to read right.
    pub mapping_mismatches: u64,
    /// Host commands run.
    pub host_commands: u64,
    /// Mean NAND operations of a completed mount.
    pub mount_ops_mean: f64,
    /// Most NAND operations of one mount.
    pub mount_ops_max: u64,
    /// Mean simulated time of a completed mount, in seconds (with timing).
    pub mount_sim_seconds_mean: f64,
    /// Longest simulated mount, in seconds (with timing).
    pub mount_sim_seconds_max: f64,
    /// Completed mounts.
    pub mounts: u64,
    /// Clean shutdowns (epochs that ended without a cut).
    pub shutdowns: u64,
    /// Mounts that took the block table from a checkpoint instead of
    /// reading every block's first page.
    pub checkpoint_mounts: u64,
    /// Reads of blocks' first pages over all mounts (a whole drive's worth
    /// for a mount without a checkpoint).
    pub mount_head_reads: u64,
    /// Reads of the pages the power-cut flushes wrote, over all mounts.
    pub mount_replay_reads: u64,
    /// Reads outside the checkpoint (first pages and replayed pages) of
    /// the mounts after a clean shutdown: 0 when they read only the checkpoint.
    pub clean_mount_data_reads: u64,
    /// Translation pages written while running.
    pub map_programs: u64,
    /// Batches of translation-page write-backs the budget forced.
    pub map_flushes: u64,
    /// GC victims reclaimed over the run.
    pub gc_victims: u64,
    /// Highest program/erase count of any block at the end (the medium's
    /// count): past the rated endurance, reads fail from wear, not cuts.
    pub max_pe: u32,
    /// Largest gap, over the written blocks after any mount, between the
    /// erase count the core recovered from a block's first page and the
    /// chip's own count (wear levelling must survive cuts).
    pub pe_drift_max: u32,
    /// Copy units the core served by remapping.
    pub copy_remapped_units: u64,
    /// Zones whose state or write pointer after a mount differed from
    /// what the acknowledged zone commands left (zoned namespace only).
    pub zone_wp_mismatches: u64,
    /// Acknowledged zone writes and appends.
    pub zone_writes: u64,
    /// Of them, zone appends (each checked to land at the write pointer).
    pub zone_appends: u64,
    /// Zones reset.
    pub zone_resets: u64,
    /// Zones finished.
    pub zone_finishes: u64,
    /// Zone commands refused with a specification status (off the
    /// pointer, full zones, resource limits, invalid transitions).
    pub zone_refusals: u64,
}

/// The driver: a core, its tables, the medium and the operations in flight.
struct Drive {
    cfg: Config,
    /// Emitted, not yet run.
    queue: VecDeque<NandOp>,
    /// Run, completion not yet delivered (with its completion time): per
    /// die, oldest first.
    done: Vec<VecDeque<(NandOp, NandResult, u64)>>,
    /// The dies whose `done` queue is not empty, ascending: a step picks
    /// one of them, so keeping them here spares a scan of every die per
    /// operation.
    busy: Vec<usize>,
    now: u64,
    timing: Option<Timing>,
}

/// Stamp of version `v` of unit `lpn` (0: never written).
fn stamp(lpn: u32, v: u32) -> u64 {
    (u64::from(lpn) << 32) | u64::from(v)
}

/// Per block, whether it is an emptied victim still waiting for its erase
/// (or a victim being emptied) when the core keeps GC relocations outside
/// the capacitor budget; empty otherwise.
fn waiting_victims(ftl: &FullFtl<'_>, cfg: &Config) -> Result<Vec<bool>, Error> {
    if !ftl.defers_victim_erases() {
        return Ok(Vec::new());
    }
    (0..cfg.geometry.total_blocks())
        .map(|b| {
            let (_, state, _) = ftl.block_info(firmware_core::BlockId(b))?;
            Ok(matches!(state, BlockState::Victim | BlockState::Retiring))
        })
        .collect()
}

/// Refills `out` with where every unit is now, in place: the table is as
/// large as the drive and taken at every cut, so a fresh one each time paid
/// the allocation and the kernel's zeroing of its pages.
fn capture_locations(ftl: &FullFtl<'_>, logical: u32, out: &mut Vec<Loc>) -> Result<(), Error> {
    out.clear();
    for l in 0..logical {
        out.push(ftl.location(Lpn(l))?);
    }
    Ok(())
}

/// Checks the tables a mount rebuilt, as its steps end: the erase counts
/// it recovered against the chips' (`pe_drift_max`) and every unit's
/// location against the one held when the power went (`at_cut`), counting
/// each difference in `mapping_mismatches`.
fn check_rebuilt(
    ftl: &FullFtl<'_>,
    cfg: &Config,
    medium: &SimMedium,
    at_cut: &[Loc],
    waiting_at_cut: &[bool],
    rep: &mut CrashReport,
) -> Result<(), Error> {
    for b in 0..cfg.geometry.total_blocks() {
        let b = firmware_core::BlockId(b);
        let (pe, state, _) = ftl.block_info(b)?;
        if matches!(state, BlockState::Full | BlockState::Meta) {
            rep.pe_drift_max = rep.pe_drift_max.max(pe.abs_diff(medium.pe_count(b)));
        }
    }
    for (l, was) in at_cut.iter().enumerate() {
        let now = ftl.location(Lpn(l as u32))?;
        let same = match (was, now) {
            (Loc::Buffer(_), now) => matches!(now, Loc::Flash(_)),
            (Loc::Flash(_), Loc::Flash(p)) if *was != now => {
                let b = cfg.geometry.block_of(cfg.geometry.page_of_unit(p));
                waiting_at_cut.get(b.0 as usize).copied().unwrap_or(false)
            }
            (w, now) => *w == now,
        };
        if !same {
            rep.mapping_mismatches += 1;
        }
    }
    Ok(())
}

/// Runs a crash test on a configuration with mapping persistence.
pub fn run_crash(
    cfg: Config,
    mut medium: SimMedium,
    spec: &CrashSpec,
    mut progress: impl FnMut(u64),
) -> Result<CrashReport, Error> {
    if !cfg.persist.enabled() {
        return Err(Error::InvalidConfig(
            &"crash tests need ftl.map_entries_per_page > 0",
        ));
    }
    let mut rng = Rng(spec.seed.wrapping_mul(GOLDEN_GAMMA) | 1);
    let dies = cfg.geometry.dies() as usize;
    let mut store: CoreStore<u64> = CoreStore::new(&cfg)?;
    let mut d = Drive {
        cfg,
        queue: VecDeque::new(),
        done: vec![VecDeque::new(); dies],
        busy: Vec::with_capacity(dies),
        now: 0,
        timing: spec.timing.map(|p| Timing::new(cfg.geometry, p)),
    };
    let logical = cfg.logical_units;
    let span = ((f64::from(logical) * spec.span) as u32).clamp(1, logical);
    // Oracle: last acknowledged stamp per unit (0: zeros). A copy makes a
    // unit hold another unit's stamp.
    let mut acked: Vec<u64> = vec![0; logical as usize];
    let copies = spec.copy_share > 0.0;
    // Whether a wrong stamp read from `lpn` is older acknowledged data (as
    // opposed to data no command ever wrote there).
    let older = |next_version: &[u32], lpn: u32, s: u64| {
        let owner = (s >> 32) as usize;
        (owner == lpn as usize || (copies && owner < next_version.len()))
            && next_version
                .get(owner)
                .is_some_and(|&v| (s as u32) <= v && s as u32 != 0)
    };
    let mut next_version: Vec<u32> = vec![0; logical as usize];
    let mut rep = CrashReport::default();
    let mut mounts_done = 0u64;
    let mut mount_ops_sum = 0u64;
    let mut mount_ns_sum = 0u64;
    let mut mount_ns_max = 0u64;
    let mut touched: Vec<u32> = Vec::new();
    // Where every unit was when the power last went (empty before the first cut).
    let mut at_cut: Vec<Loc> = Vec::new();
    // Victims not yet erased then: with relocations outside the capacitor
    // budget a unit may come back mapped to its old copy in one of them.
    let mut waiting_at_cut: Vec<bool> = Vec::new();
    // Whether the last epoch ended in a clean shutdown.
    let mut clean = false;

    // Format.
    {
        let (t, data) = store.split();
        let mut ftl = FullFtl::new(cfg, t)?;
        ftl.format(0)?;
        d.settle_with(&mut ftl, &mut medium, data, &mut rng)?;
        rep.cut_capacity = u64::from(ftl.cut_capacity());
        if spec.prefill && spec.zones.is_none() {
            // Every unit of the span once, in order, so GC starts at once;
            // then the power goes (a full capacitor flush) before the first mount.
            for lpn in 0..span {
                let slot = loop {
                    match zones::place(&mut ftl, lpn, span, d.now) {
                        Ok(s) => break s,
                        Err(Error::Busy) => {
                            if !d.step(&mut ftl, &mut medium, data, &mut rng, true)? {
                                return Err(Error::Corrupt(&"prefill stuck"));
                            }
                        }
                        Err(e) => return Err(e),
                    }
                };
                next_version[lpn as usize] = 1;
                acked[lpn as usize] = stamp(lpn, 1);
                data[usize::from(slot.0)] = stamp(lpn, 1);
            }
            d.settle_with(&mut ftl, &mut medium, data, &mut rng)?;
            capture_locations(&ftl, logical, &mut at_cut)?;
            waiting_at_cut = waiting_victims(&ftl, &cfg)?;
            ftl.power_fail(d.now)?;
            while let Some(op) = ftl.poll_op() {
                let r = execute(&mut medium, data, ftl.meta_for(&op), &op);
                ftl.complete(op.id, r, d.now)?;
            }
            d.now += 1_000_000;
        }
    }
    let mut zone_work = spec.zones.map(zones::ZoneWork::new);
    let mut cut_no = 0u32;
    while cut_no < spec.cuts {
        // Mount (the first epoch after format mounts too: the format's state
        // is on flash, nothing in DRAM survives).
        let (mount_ops, map_programs, victims, mount_ns, remapped) = {
            let (t, data) = store.split();
            let mut ftl = FullFtl::new(cfg, t)?;
            let mount_start = d.now;
            ftl.mount(d.now)?;
            // A cut during mount? The steps may run past the mount's own
            // into settling and GC, which move units: the table the mount
            // rebuilt is checked the moment its steps end.
            let mut rebuilt_ns = None;
            if rng.chance(spec.mount_cut_prob) {
                let limit = rng.below(200);
                let mut n = 0;
                while n < limit && d.step(&mut ftl, &mut medium, data, &mut rng, false)? {
                    n += 1;
                    if rebuilt_ns.is_none() && ftl.mount_step() == MountStep::Idle {
                        check_rebuilt(&ftl, &cfg, &medium, &at_cut, &waiting_at_cut, &mut rep)?;
                        rebuilt_ns = Some(d.now - mount_start);
                    }
                }
                if !ftl.is_ready() {
                    d.cut(&mut ftl, &mut medium, data, &mut rng, &mut rep);
                    clean = false;
                    rep.mount_cuts += 1;
                    rep.cuts += 1;
                    cut_no += 1;
                    progress(rep.cuts);
                    continue;
                }
            }
            // The table the mount rebuilt, before GC moves anything.
            while ftl.mount_step() != MountStep::Idle
                && d.step(&mut ftl, &mut medium, data, &mut rng, false)?
            {}
            let mount_ns = match rebuilt_ns {
                Some(ns) => ns,
                None => {
                    check_rebuilt(&ftl, &cfg, &medium, &at_cut, &waiting_at_cut, &mut rep)?;
                    d.now - mount_start
                }
            };
            d.settle_with(&mut ftl, &mut medium, data, &mut rng)?;
            if !ftl.is_ready() {
                return Err(Error::Corrupt(&"mount did not finish"));
            }
            ftl.audit()?;
            let mount_ops = ftl.stats().mount_ops;
            {
                let s = ftl.stats();
                rep.mount_head_reads += s.mount_head_reads;
                rep.mount_replay_reads += s.mount_replay_reads;
                rep.checkpoint_mounts += s.checkpoint_mounts;
                if clean {
                    rep.clean_mount_data_reads += s.mount_head_reads + s.mount_replay_reads;
                }
            }
            // Check the oracle.
            let full = rep.cuts == 0
                || (spec.full_check_every > 0 && cut_no.is_multiple_of(spec.full_check_every))
                || cut_no + 1 >= spec.cuts;
            let mut check: Vec<u32> = if full {
                (0..logical).collect()
            } else {
                let mut v = std::mem::take(&mut touched);
                for _ in 0..64 {
                    v.push(rng.below(u64::from(span)) as u32);
                }
                v
            };
            check.sort_unstable();
            check.dedup();
            for lpn in check {
                let want = acked[lpn as usize];
                let got = d.read(&mut ftl, &mut medium, data, &mut rng, lpn)?;
                rep.units_checked += 1;
                match got {
                    Some(s) if s == want => {}
                    Some(s) if older(&next_version, lpn, s) => rep.lost_acknowledged += 1,
                    Some(0) | None => rep.lost_acknowledged += 1,
                    Some(_) => rep.invalid_reads += 1,
                }
            }
            touched.clear();
            // Workload until the next cut.
            let n_ops = 1 + rng.below(u64::from(spec.ops_per_cut) * 2);
            if let Some(zw) = zone_work.as_mut() {
                let e = zones::Epoch {
                    ftl: &mut ftl,
                    medium: &mut medium,
                    data,
                    rng: &mut rng,
                    acked: &mut acked,
                    next_version: &mut next_version,
                    touched: &mut touched,
                };
                zw.epoch(&mut d, e, n_ops, &mut rep)?;
            }
            let plain_ops = if zone_work.is_some() { 0 } else { n_ops };
            for i in 0..plain_ops {
                // Some cuts come in the middle of a burst of writes.
                if i + 1 == n_ops && rng.chance(0.5) {
                    for _ in 0..rng.below(u64::from(ftl.config().geometry.units_per_page) * 8) {
                        let lpn = rng.below(u64::from(span)) as u32;
                        match zones::place(&mut ftl, lpn, span, d.now) {
                            Ok(slot) => {
                                let v = next_version[lpn as usize] + 1;
                                next_version[lpn as usize] = v;
                                data[usize::from(slot.0)] = stamp(lpn, v);
                                acked[lpn as usize] = stamp(lpn, v);
                                touched.push(lpn);
                            }
                            Err(Error::Busy) => break,
                            Err(e) => return Err(e),
                        }
                    }
                    break;
                }
                let lpn = if rng.chance(0.7) {
                    rng.below(u64::from(span / 8).max(1)) as u32
                } else {
                    rng.below(u64::from(span)) as u32
                };
                if copies && rng.chance(spec.copy_share) {
                    rep.host_commands += 1;
                    let k = 1 + rng.below(4) as u32;
                    let room = u64::from(span.saturating_sub(k).max(1));
                    let (src, dst) = (rng.below(room) as u32, rng.below(room) as u32);
                    if src.abs_diff(dst) < k || dst + k > logical || src + k > logical {
                        continue;
                    }
                    d.copy(
                        &mut ftl,
                        &mut medium,
                        data,
                        &mut rng,
                        (src, dst, k),
                        &mut acked,
                    )?;
                    touched.extend(dst..dst + k);
                    continue;
                }
                let r = rng.below(100);
                rep.host_commands += 1;
                if r < 70 {
                    let v = next_version[lpn as usize] + 1;
                    next_version[lpn as usize] = v;
                    let slot = loop {
                        match zones::place(&mut ftl, lpn, span, d.now) {
                            Ok(s) => break s,
                            Err(Error::Busy) => {
                                if !d.step(&mut ftl, &mut medium, data, &mut rng, true)? {
                                    return Err(Error::Corrupt(&"write stuck"));
                                }
                            }
                            Err(e) => return Err(e),
                        }
                    };
                    data[usize::from(slot.0)] = stamp(lpn, v);
                    acked[lpn as usize] = stamp(lpn, v);
                    touched.push(lpn);
                } else if r < 80 {
                    loop {
                        match ftl.trim(Lpn(lpn), d.now) {
                            Ok(()) => break,
                            Err(Error::Busy) => {
                                if !d.step(&mut ftl, &mut medium, data, &mut rng, true)? {
                                    return Err(Error::Corrupt(&"trim stuck"));
                                }
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    acked[lpn as usize] = 0;
                    touched.push(lpn);
                } else if r < 97 {
                    let want = acked[lpn as usize];
                    let got = d.read(&mut ftl, &mut medium, data, &mut rng, lpn)?;
                    match got {
                        Some(s) if s == want => {}
                        _ => rep.invalid_reads += 1,
                    }
                } else {
                    // Let some operations run.
                    for _ in 0..rng.below(64) {
                        if !d.step(&mut ftl, &mut medium, data, &mut rng, true)? {
                            break;
                        }
                    }
                }
                // Background progress between commands.
                for _ in 0..rng.below(4) {
                    if !d.step(&mut ftl, &mut medium, data, &mut rng, true)? {
                        break;
                    }
                }
            }
            if rng.chance(spec.shutdown_prob)
                && d.shut_down(&mut ftl, &mut medium, data, &mut rng)?
            {
                capture_locations(&ftl, logical, &mut at_cut)?;
                waiting_at_cut = waiting_victims(&ftl, &cfg)?;
                rep.shutdowns += 1;
                clean = true;
                let s = ftl.stats();
                rep.map_flushes += s.map_flushes;
                (
                    mount_ops,
                    s.map_programs,
                    s.gc_victims,
                    mount_ns,
                    s.copy_remapped_units,
                )
            } else {
                clean = false;
                d.cut(&mut ftl, &mut medium, data, &mut rng, &mut rep);
                capture_locations(&ftl, logical, &mut at_cut)?;
                waiting_at_cut = waiting_victims(&ftl, &cfg)?;
                ftl.power_fail(d.now)?;
                let mut programs = 0u64;
                let capacity = (f64::from(ftl.cut_capacity()) * spec.capacitor_scale) as u64;
                while let Some(op) = ftl.poll_op() {
                    let is_program = matches!(
                        op.cmd,
                        NandCmd::Program { .. } | NandCmd::ProgramMeta { .. }
                    );
                    if is_program {
                        programs += 1;
                        if programs > capacity {
                            rep.capacitor_overruns += 1;
                            break;
                        }
                    }
                    let r = execute(&mut medium, data, ftl.meta_for(&op), &op);
                    ftl.complete(op.id, r, d.now)?;
                }
                if !ftl.cut_finished() && programs <= capacity {
                    return Err(Error::Corrupt(&"power-cut flush did not finish"));
                }
                rep.cut_programs_max = rep.cut_programs_max.max(programs);
                rep.cuts += 1;
                cut_no += 1;
                progress(rep.cuts);
                let s = ftl.stats();
                rep.map_flushes += s.map_flushes;
                (
                    mount_ops,
                    s.map_programs,
                    s.gc_victims,
                    mount_ns,
                    s.copy_remapped_units,
                )
            }
        };
        mounts_done += 1;
        mount_ops_sum += mount_ops;
        mount_ns_sum += mount_ns;
        mount_ns_max = mount_ns_max.max(mount_ns);
        rep.mount_ops_max = rep.mount_ops_max.max(mount_ops);
        rep.map_programs += map_programs;
        rep.gc_victims += victims;
        rep.copy_remapped_units += remapped;
    }
    rep.mounts = mounts_done;
    rep.max_pe = (0..cfg.geometry.total_blocks())
        .map(|b| medium.pe_count(firmware_core::BlockId(b)))
        .max()
        .unwrap_or(0);
    if mounts_done > 0 {
        rep.mount_ops_mean = mount_ops_sum as f64 / mounts_done as f64;
        rep.mount_sim_seconds_mean = mount_ns_sum as f64 / mounts_done as f64 / 1e9;
    }
    rep.mount_sim_seconds_max = mount_ns_max as f64 / 1e9;
    Ok(rep)
}

impl Drive {
    /// Runs the next queued operation or delivers a completion. False: idle.
    fn step(
        &mut self,
        ftl: &mut FullFtl<'_>,
        medium: &mut SimMedium,
        data: &mut [u64],
        rng: &mut Rng,
        _host: bool,
    ) -> Result<bool, Error> {
        while let Some(op) = ftl.poll_op() {
            self.queue.push_back(op);
        }
        let pending = self.busy.len();
        let run = !self.queue.is_empty() && (pending == 0 || rng.chance(0.5));
        if run {
            if let Some(op) = self.queue.pop_front() {
                let r = execute(medium, data, ftl.meta_for(&op), &op);
                let die = die_of(&self.cfg, &op);
                let at = match &mut self.timing {
                    Some(t) => t.schedule(&op, self.now),
                    None => self.now + 1_000,
                };
                let q = &mut self.done[die];
                if q.is_empty() {
                    if let Err(i) = self.busy.binary_search(&die) {
                        self.busy.insert(i, die);
                    }
                }
                q.push_back((op, r, at));
            }
            return Ok(true);
        }
        if pending == 0 {
            return Ok(false);
        }
        let k = rng.below(pending as u64) as usize;
        let die = self.busy[k];
        let q = &mut self.done[die];
        let head = q.pop_front();
        if q.is_empty() {
            self.busy.remove(k);
        }
        if let Some((op, r, at)) = head {
            self.now = self.now.max(at);
            // Host completions (only reads here) are polled by `read`.
            ftl.complete(op.id, r, self.now)?;
        }
        Ok(true)
    }

    /// Clean shutdown: flushes the write buffer, lets everything finish,
    /// and writes the checkpoint with no tearing. False (nothing done) when
    /// the core cannot shut down now (still settling after a mount).
    fn shut_down(
        &mut self,
        ftl: &mut FullFtl<'_>,
        medium: &mut SimMedium,
        data: &mut [u64],
        rng: &mut Rng,
    ) -> Result<bool, Error> {
        if !ftl.is_ready() {
            return Ok(false);
        }
        loop {
            match ftl.flush(firmware_core::ftl::host::Tag(u32::MAX - 1), self.now) {
                Ok(()) => break,
                Err(Error::Busy) => {
                    if !self.step(ftl, medium, data, rng, true)? {
                        return Ok(false);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        self.settle_with(ftl, medium, data, rng)?;
        match ftl.shutdown(self.now) {
            Ok(()) => {}
            Err(Error::Busy) => return Ok(false),
            Err(e) => return Err(e),
        }
        self.settle_with(ftl, medium, data, rng)?;
        if !ftl.cut_finished() {
            return Err(Error::Corrupt(&"shutdown did not finish"));
        }
        self.power_off();
        Ok(true)
    }

    /// Runs until nothing is in flight.
    fn settle_with(
        &mut self,
        ftl: &mut FullFtl<'_>,
        medium: &mut SimMedium,
        data: &mut [u64],
        rng: &mut Rng,
    ) -> Result<(), Error> {
        // Settling moves each page a bounded number of times; a core that
        // keeps issuing operations past this has stopped making progress.
        let limit = u64::from(self.cfg.geometry.total_pages()).saturating_mul(16);
        let mut steps = 0u64;
        while self.step(ftl, medium, data, rng, false)? {
            steps += 1;
            if steps > limit {
                return Err(Error::Corrupt(&"settling did not end"));
            }
        }
        Ok(())
    }

    /// Copies `k` units from `src` to `dst` through [`Ftl::copy`]; units the
    /// core hands back are copied here (read, then write or trim). Updates
    /// the oracle unit by unit, as each is acknowledged.
    fn copy(
        &mut self,
        ftl: &mut FullFtl<'_>,
        medium: &mut SimMedium,
        data: &mut [u64],
        rng: &mut Rng,
        (src, dst, k): (u32, u32, u32),
        acked: &mut [u64],
    ) -> Result<(), Error> {
        let mut done = 0u32;
        while done < k {
            let p = ftl.copy(Lpn(src + done), Lpn(dst + done), k - done, self.now)?;
            for i in done..done + p.remapped {
                acked[(dst + i) as usize] = acked[(src + i) as usize];
            }
            done += p.remapped;
            match p.stop {
                CopyStop::Done => {}
                CopyStop::Busy => {
                    if !self.step(ftl, medium, data, rng, true)? {
                        return Err(Error::Corrupt(&"copy stuck"));
                    }
                }
                CopyStop::Physical(_) => {
                    let (s, t) = (src + done, dst + done);
                    match self.read(ftl, medium, data, rng, s)? {
                        Some(0) => loop {
                            match ftl.trim(Lpn(t), self.now) {
                                Ok(()) => break,
                                Err(Error::Busy) => {
                                    if !self.step(ftl, medium, data, rng, true)? {
                                        return Err(Error::Corrupt(&"trim stuck"));
                                    }
                                }
                                Err(e) => return Err(e),
                            }
                        },
                        Some(v) => {
                            let slot = loop {
                                match ftl.write(Lpn(t), self.now) {
                                    Ok(slot) => break slot,
                                    Err(Error::Busy) => {
                                        if !self.step(ftl, medium, data, rng, true)? {
                                            return Err(Error::Corrupt(&"write stuck"));
                                        }
                                    }
                                    Err(e) => return Err(e),
                                }
                            };
                            data[usize::from(slot.0)] = v;
                        }
                        // Unreadable source: the copy stops; the oracle keeps
                        // what the destination held.
                        None => return Ok(()),
                    }
                    acked[t as usize] = acked[s as usize];
                    done += 1;
                }
            }
        }
        Ok(())
    }

    /// Reads one unit through the core: `Some(stamp)` (0 for zeros) or `None` on error.
    fn read(
        &mut self,
        ftl: &mut FullFtl<'_>,
        medium: &mut SimMedium,
        data: &mut [u64],
        rng: &mut Rng,
        lpn: u32,
    ) -> Result<Option<u64>, Error> {
        const TAG: u32 = 0x7fff_fff0;
        let start = loop {
            match ftl.read(Tag(TAG), Lpn(lpn), self.now) {
                Ok(s) => break s,
                Err(Error::Busy) => {
                    if !self.step(ftl, medium, data, rng, false)? {
                        return Err(Error::Corrupt(&"read stuck"));
                    }
                }
                Err(e) => return Err(e),
            }
        };
        match start {
            ReadStart::Unmapped => return Ok(Some(0)),
            ReadStart::Lost => return Ok(None),
            ReadStart::Buffered(s) => return Ok(Some(data[usize::from(s.0)])),
            ReadStart::Issued => {}
        }
        loop {
            // Completions other than ours are dropped (no other host reads run here).
            let mut got = None;
            while let Some(c) = ftl.poll_completion() {
                if let HostCompletion::Read { tag, slot, status } = c {
                    if tag.0 == TAG {
                        got = Some(match status {
                            ReadStatus::Ok => Some(data[usize::from(slot.0)]),
                            ReadStatus::MediaError => None,
                        });
                    }
                }
            }
            if let Some(g) = got {
                return Ok(g);
            }
            if !self.step(ftl, medium, data, rng, false)? {
                return Err(Error::Corrupt(&"read never completed"));
            }
        }
    }

    /// Power goes: the queued operation about to run may be torn, the rest
    /// never run, completions not yet delivered are never delivered.
    fn cut(
        &mut self,
        ftl: &mut FullFtl<'_>,
        medium: &mut SimMedium,
        data: &[u64],
        rng: &mut Rng,
        rep: &mut CrashReport,
    ) {
        // Operations the last command emitted are in flight too.
        while let Some(op) = ftl.poll_op() {
            self.queue.push_back(op);
        }
        // Power goes while a random queued operation runs: the ones before
        // it completed on the chips (their completions are lost).
        if !self.queue.is_empty() {
            let erase = self.queue.iter().position(|op| {
                matches!(op.cmd, NandCmd::Erase { .. } | NandCmd::GuardedErase { .. })
            });
            let at = match erase {
                Some(i) if rng.chance(0.5) => i as u64,
                _ => rng.below(self.queue.len() as u64),
            };
            for _ in 0..at {
                if let Some(op) = self.queue.pop_front() {
                    let _ = execute(medium, &mut data.to_vec(), ftl.meta_for(&op), &op);
                }
            }
        }
        if let Some(op) = self.queue.pop_front() {
            if rng.chance(0.7) {
                let outcome = match rng.below(3) {
                    0 => TornProgram::Unprogrammed,
                    1 => TornProgram::Uncorrectable,
                    _ => TornProgram::Intact,
                };
                match op.cmd {
                    NandCmd::Program { page, spare, src } => {
                        let units = spare.units.count() as usize;
                        let stamps: Vec<u64> = src[..units]
                            .iter()
                            .map(|s| data[usize::from(s.0)])
                            .collect();
                        let _ = medium.tear_program(page, &stamps, &spare, outcome);
                        rep.torn_programs += 1;
                    }
                    NandCmd::ProgramMeta { page, spare, .. } => {
                        let bytes = ftl.meta_for(&op).to_vec();
                        let _ = medium.tear_program_meta(page, &bytes, &spare, outcome);
                        rep.torn_programs += 1;
                    }
                    NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. } => {
                        let _ = medium.tear_erase(block);
                        rep.torn_erases += 1;
                    }
                    _ => {}
                }
            }
        }
        self.power_off();
    }

    /// The supply is off a while: nothing queued survives, and the chips
    /// restart idle.
    fn power_off(&mut self) {
        self.queue.clear();
        for q in &mut self.done {
            q.clear();
        }
        self.busy.clear();
        self.now += 1_000_000;
        if let Some(t) = &mut self.timing {
            *t = Timing::new(self.cfg.geometry, *t.params());
        }
    }
}

fn die_of(cfg: &Config, op: &NandOp) -> usize {
    let g = &cfg.geometry;
    let block = match op.cmd {
        NandCmd::Read { page, .. }
        | NandCmd::Program { page, .. }
        | NandCmd::ProgramMeta { page, .. }
        | NandCmd::ReadMeta { page, .. } => g.block_of(page),
        NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. } => block,
        NandCmd::Copyback { src, .. } => g.block_of(src),
    };
    g.die_of(block).0 as usize
}

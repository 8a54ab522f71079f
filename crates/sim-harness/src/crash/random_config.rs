//! Power cuts over the configuration space: `ftl crash --random-config N`.
//!
//! The generator draws `N` cells, each a preset with a list of `--set`
//! assignments and crash-workload flags, from [`AXES`]: every preset, every
//! value of every mode key (copyback, erase, flush order, interface, GC copy
//! mode and destination, copy mode, superblocks and list pages, ...),
//! numeric keys from a few telling values (flush start and map protection
//! ratios, fault probabilities, wear and retention), and a geometry shrunk
//! so a cell runs in a fraction of a second. Each axis deals its values
//! out in a freshly shuffled order every round, so `N` at least as large
//! as an axis' value list covers every value of it, while the combinations
//! stay random. Nothing is filtered: a combination validation refuses is a
//! refused cell, not a failure.
//!
//! Cell `i` depends only on the seed and `i` (not on `N`), and runs exactly
//! as `ftl crash --cuts C --seed S --preset P --set ...` with the flags of
//! [`Cell::replay_args`].

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use test_kit::rng::{splitmix64, SplitMix64};

use super::setup::{crash_plan, spec_for};
use super::{run_crash, CrashReport, CrashSpec};
use crate::config::{presets, SimConfig};

/// How an axis is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Every cell draws it: the geometry and the sizes that keep a cell
    /// small and fast whatever the preset.
    Shape,
    /// A random share ([`FEATURE_SHARE`]) of the cells draws it; the others
    /// keep the preset's value (swarm testing: a cell changes a few
    /// features at once, so most combinations are ones validation accepts,
    /// yet every pair of features meets).
    Feature,
    /// A crash-workload flag of `ftl crash`, drawn by every cell.
    Flag,
}

/// One dimension of the space: a configuration key (or two drawn together,
/// comma-separated, as the pages of a block and of a wordline), or a crash
/// workload flag (`--copy-share`), and the values it takes. A value listed
/// twice is drawn twice as often.
#[derive(Clone, Copy, Debug)]
pub struct Axis {
    /// `section.key`, `key1,key2` or `--flag`.
    pub key: &'static str,
    /// Values as `--set` (or the flag) takes them; `key1,key2` axes give
    /// `v1,v2`.
    pub values: &'static [&'static str],
    /// How it is drawn.
    pub kind: Kind,
}

/// Share of the cells that draw a [`Kind::Feature`] axis.
pub const FEATURE_SHARE: f64 = 0.3;

/// The coverage table's name for a feature axis a cell left at the preset's value.
pub const PRESET_VALUE: &str = "(preset)";

const fn shape(key: &'static str, values: &'static [&'static str]) -> Axis {
    Axis {
        key,
        values,
        kind: Kind::Shape,
    }
}

const fn feature(key: &'static str, values: &'static [&'static str]) -> Axis {
    Axis {
        key,
        values,
        kind: Kind::Feature,
    }
}

const fn flag(key: &'static str, values: &'static [&'static str]) -> Axis {
    Axis {
        key,
        values,
        kind: Kind::Flag,
    }
}

/// The preset axis's key in the coverage table.
pub const PRESET_KEY: &str = "preset";

/// Every dimension the generator draws from, after the preset. Mode keys
/// list every value they accept.
pub const AXES: &[Axis] = &[
    // Geometry, shrunk: a few hundred blocks at most.
    shape("geometry.channels", &["1", "2"]),
    shape("geometry.dies_per_channel", &["1", "2"]),
    shape("geometry.planes_per_die", &["1", "2"]),
    shape("geometry.blocks_per_plane", &["24", "32", "48", "64"]),
    // 576 pages of 3 per wordline is the wordline model's block, which
    // erase.mode gerase and bpm need.
    shape(
        "geometry.pages_per_block,geometry.pages_per_wordline",
        &["16,1", "32,2", "48,3", "64,4", "576,3", "576,3"],
    ),
    shape("geometry.page_bytes", &["4096", "8192", "16384", "16384"]),
    shape(
        "ftl.mapping_unit_bytes",
        &["2048", "4096", "4096", "4096", "4096", "16384"],
    ),
    // Sizes the presets set for drives a thousand times larger.
    shape("ftl.op_ratio", &["0.4", "0.6", "0.9"]),
    shape("ftl.gc_reserve_blocks", &["1", "2"]),
    shape("ftl.gc_trigger_blocks", &["2", "3", "4"]),
    shape("ftl.map_entries_per_page", &["64", "256", "1020"]),
    shape("ftl.gc_slots_per_plane", &["4", "16", "16", "16", "32"]),
    shape("buffer.write_buffer_bytes", &["65536", "262144", "1048576"]),
    // FTL.
    feature("ftl.wl_threshold", &["0", "16"]),
    feature("ftl.wl_check_interval", &["8", "64"]),
    feature("ftl.max_inflight", &["8", "64", "4096"]),
    feature("ftl.read_slots", &["4", "256"]),
    feature("ftl.superblock", &["false", "true"]),
    feature("ftl.list_pages", &["false", "true"]),
    // Write buffer and mapping persistence.
    feature("buffer.flush_policy", &["fifo", "lidf"]),
    feature(
        "buffer.flush_start_ratio",
        &["0", "0.25", "0.5", "0.75", "0.9"],
    ),
    feature("buffer.map_protect_ratio", &["1", "0.5", "0.1", "0.05"]),
    feature("buffer.gc_outside_budget", &["true", "false"]),
    // Host interface.
    feature("host.interface", &["conventional", "zns", "fdp"]),
    feature("host.arbitration", &["round_robin", "weighted"]),
    feature("zns.max_active", &["4", "8"]),
    feature("zns.max_open", &["2", "4"]),
    feature("fdp.handles", &["1", "2", "4", "8"]),
    // GC: copy mode and destination (cross-way GC), transaction size.
    feature("gc.copy_mode", &["icb", "lcb", "gcb", "dgcb"]),
    feature("gc.destination", &["plane", "channel"]),
    feature("gc.transaction_pages", &["1", "8", "128"]),
    // Copyback (rcFTL and its baselines).
    feature(
        "copyback.mode",
        &["off-chip", "fastgc", "rcftl-per-page", "rcftl", "unchecked"],
    ),
    feature("copyback.selector", &["greedy", "dmms"]),
    feature("copyback.table", &["rcopyback", "rcpb"]),
    feature("copyback.retention_months", &["12", "3"]),
    feature("copyback.max_threshold", &["0", "2", "15"]),
    feature("copyback.min_live_units", &["0", "1"]),
    // Erase: GuardedErase (longFTL) and BPM.
    feature("erase.mode", &["normal", "gerase", "bpm"]),
    feature(
        "erase.gerase_mode",
        &["auto", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    ),
    feature("erase.gerase_scope", &["host", "all"]),
    feature("erase.bpm_capacity_loss_pct", &["2.1", "10"]),
    feature("erase.waf_window", &["1", "4"]),
    // Host copies (copyless copy; the workload's share is --copy-share).
    feature("copy.mode", &["physical", "remap"]),
    feature("copy.refcount_bits", &["1", "2", "4", "8"]),
    feature("copy.shadow_oob_entries", &["16", "65536"]),
    // Reparo (superblocks and list pages above; these two are its recovery modes).
    feature("reparo.mode", &["baseline", "idr", "cdr", "cdr-star"]),
    feature("reparo.p2l", &["none", "page", "block"]),
    // Medium: reliability model, faults, wear and retention (read failures).
    feature(
        "nand.model",
        &["default", "mlc-dac18", "mlc-ecc24", "tlc-thesis"],
    ),
    feature("nand.program_fail_prob", &["0", "0.001", "0.01"]),
    feature("nand.erase_fail_prob", &["0", "0.001", "0.01"]),
    feature("nand.factory_bad_ratio", &["0", "0.01"]),
    feature("nand.initial_pe", &["0", "1000"]),
    feature("nand.retention_months", &["0", "3", "12"]),
    feature("nand.full_data", &["false", "true"]),
    feature("timing.cache_program", &["false", "true"]),
    // The crash workload.
    flag("--copy-share", &["0", "0", "0.1", "0.3"]),
    flag("--shutdown-prob", &["0", "0", "0.1"]),
    flag("--ops-per-cut", &["100", "400"]),
    flag("--span", &["0.5", "0.9", "1"]),
    flag("--mount-cut-prob", &["0.2", "0.5"]),
    flag("--no-fill", &["false", "false", "true"]),
];

/// Keys drawn per cell from its seed rather than from a list.
const SEEDED_KEY: &str = "nand.seed";

/// The crash-workload flags of a cell (those of `ftl crash`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellWorkload {
    /// `--seed`.
    pub seed: u64,
    /// `--ops-per-cut`.
    pub ops_per_cut: u32,
    /// `--span`.
    pub span: f64,
    /// `--mount-cut-prob`.
    pub mount_cut_prob: f64,
    /// `--copy-share`.
    pub copy_share: f64,
    /// `--shutdown-prob`.
    pub shutdown_prob: f64,
    /// `--no-fill`.
    pub no_fill: bool,
}

impl Default for CellWorkload {
    /// The defaults of `ftl crash`'s flags.
    fn default() -> Self {
        let d = CrashSpec::default();
        CellWorkload {
            seed: d.seed,
            ops_per_cut: d.ops_per_cut,
            span: d.span,
            mount_cut_prob: d.mount_cut_prob,
            copy_share: d.copy_share,
            shutdown_prob: d.shutdown_prob,
            no_fill: false,
        }
    }
}

impl CellWorkload {
    /// The crash spec of `cuts` cuts with these flags (capacitor at full
    /// scale, a full check every 50 cuts: `ftl crash`'s defaults).
    pub fn spec(&self, cuts: u32) -> CrashSpec {
        CrashSpec {
            cuts,
            seed: self.seed,
            ops_per_cut: self.ops_per_cut.max(1),
            span: self.span,
            mount_cut_prob: self.mount_cut_prob,
            copy_share: self.copy_share,
            shutdown_prob: self.shutdown_prob,
            prefill: !self.no_fill,
            ..CrashSpec::default()
        }
    }

    /// Applies one drawn workload flag.
    fn apply(&mut self, flag: &str, value: &str) -> Result<(), String> {
        let bad = || format!("{flag}: bad value `{value}`");
        let f = || value.parse::<f64>().map_err(|_| bad());
        match flag {
            "--copy-share" => self.copy_share = f()?,
            "--shutdown-prob" => self.shutdown_prob = f()?,
            "--span" => self.span = f()?,
            "--mount-cut-prob" => self.mount_cut_prob = f()?,
            "--ops-per-cut" => self.ops_per_cut = value.parse().map_err(|_| bad())?,
            "--no-fill" => self.no_fill = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown workload flag {flag}")),
        }
        Ok(())
    }

    /// The flags that differ from `ftl crash`'s defaults, `--seed` first.
    pub fn args(&self) -> Vec<String> {
        let d = CellWorkload::default();
        let mut v = vec!["--seed".to_string(), self.seed.to_string()];
        let mut num = |flag: &str, x: f64, def: f64| {
            if x != def {
                v.push(flag.to_string());
                v.push(x.to_string());
            }
        };
        num("--span", self.span, d.span);
        num("--mount-cut-prob", self.mount_cut_prob, d.mount_cut_prob);
        num("--copy-share", self.copy_share, d.copy_share);
        num("--shutdown-prob", self.shutdown_prob, d.shutdown_prob);
        if self.ops_per_cut != d.ops_per_cut {
            v.push("--ops-per-cut".to_string());
            v.push(self.ops_per_cut.to_string());
        }
        if self.no_fill {
            v.push("--no-fill".to_string());
        }
        v
    }
}

/// One drawn cell: a preset, the `--set` assignments that change it, and
/// the workload flags.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Position in the draw (0-based).
    pub index: usize,
    /// `--preset`.
    pub preset: String,
    /// `--set` assignments, in order; a drawn value equal to the preset's
    /// is left out.
    pub sets: Vec<String>,
    /// Workload flags.
    pub workload: CellWorkload,
    /// Every axis and the value drawn for it (for the coverage table),
    /// the preset first.
    pub drawn: Vec<(&'static str, &'static str)>,
}

impl Cell {
    /// The configuration: the preset, then the assignments.
    pub fn config(&self) -> Result<SimConfig, String> {
        let mut cfg = SimConfig::preset(&self.preset).map_err(|e| e.to_string())?;
        for s in &self.sets {
            cfg.apply_set(s).map_err(|e| e.to_string())?;
        }
        Ok(cfg)
    }

    /// The arguments of `ftl crash` that run this cell alone.
    pub fn replay_args(&self, cuts: u32) -> Vec<String> {
        let mut v = vec!["--cuts".to_string(), cuts.to_string()];
        let mut w = self.workload.args();
        // `--seed S` right after the cuts, the other flags at the end.
        let rest = w.split_off(2);
        v.extend(w);
        v.push("--preset".to_string());
        v.push(self.preset.clone());
        for s in &self.sets {
            v.push("--set".to_string());
            v.push(s.clone());
        }
        v.extend(rest);
        v
    }

    /// The shell command that runs this cell alone.
    pub fn replay_command(&self, cuts: u32) -> String {
        let mut s = String::from("ftl crash");
        for a in self.replay_args(cuts) {
            s.push(' ');
            s.push_str(&a);
        }
        s
    }
}

/// A 64-bit hash of a few words (the generator's stream selector).
fn mix(words: &[u64]) -> u64 {
    words.iter().fold(0x5EED_C0F1_6000_0001_u64, |h, &w| {
        splitmix64(h ^ splitmix64(w))
    })
}

/// Value `i` of an axis of `len` values: position `i % len` of the
/// shuffle of round `i / len` (a fresh permutation per round and axis).
fn dealt(seed: u64, axis: u64, len: usize, i: usize) -> usize {
    let round = (i / len) as u64;
    let mut order: Vec<usize> = (0..len).collect();
    let mut rng = SplitMix64(mix(&[seed, axis, round]));
    for k in (1..len).rev() {
        let j = rng.below_mod(k as u64 + 1) as usize;
        order.swap(k, j);
    }
    order[i % len]
}

/// Whether cell `index` draws axis `k` of `kind`.
fn draws(seed: u64, k: usize, kind: Kind, index: usize) -> bool {
    match kind {
        Kind::Shape | Kind::Flag => true,
        Kind::Feature => {
            let x = mix(&[seed, k as u64, index as u64, 0xFEA7]);
            ((x >> 11) as f64 / (1u64 << 53) as f64) < FEATURE_SHARE
        }
    }
}

/// Which draw of axis `k` cell `index` makes (how many cells before it
/// drew the axis), or `None` when it keeps the preset's value.
fn occurrence(seed: u64, k: usize, kind: Kind, index: usize) -> Option<usize> {
    if !draws(seed, k, kind, index) {
        return None;
    }
    Some((0..index).filter(|&i| draws(seed, k, kind, i)).count())
}

/// Draws cell `index` of the space seeded `seed`.
pub fn draw_cell(seed: u64, index: usize) -> Result<Cell, String> {
    let names: Vec<&'static str> = presets().iter().map(|p| p.name).collect();
    let preset = names[dealt(seed, 0, names.len(), index)];
    let mut drawn = vec![(PRESET_KEY, preset)];
    let cell_seed = mix(&[seed, u64::MAX, index as u64]) >> 34;
    let mut cfg = SimConfig::preset(preset).map_err(|e| e.to_string())?;
    let mut sets = Vec::new();
    let mut workload = CellWorkload {
        seed: cell_seed,
        ..CellWorkload::default()
    };
    let mut set = |cfg: &mut SimConfig, key: &str, value: &str| -> Result<(), String> {
        let a = format!("{key}={value}");
        let before = cfg.clone();
        cfg.apply_set(&a).map_err(|e| e.to_string())?;
        if *cfg != before {
            sets.push(a);
        }
        Ok(())
    };
    for (k, axis) in AXES.iter().enumerate() {
        let Some(occurrence) = occurrence(seed, k, axis.kind, index) else {
            drawn.push((axis.key, PRESET_VALUE));
            continue;
        };
        let value = axis.values[dealt(seed, k as u64 + 1, axis.values.len(), occurrence)];
        drawn.push((axis.key, value));
        if axis.kind == Kind::Flag {
            workload.apply(axis.key, value)?;
        } else if axis.key.contains(',') {
            for (key, v) in axis.key.split(',').zip(value.split(',')) {
                set(&mut cfg, key, v)?;
            }
        } else {
            set(&mut cfg, axis.key, value)?;
        }
    }
    set(&mut cfg, SEEDED_KEY, &cell_seed.to_string())?;
    Ok(Cell {
        index,
        preset: preset.to_string(),
        sets,
        workload,
        drawn,
    })
}

/// How one cell ended.
#[derive(Clone, Debug)]
pub enum CellOutcome {
    /// Validation refused the combination (not a failure).
    Refused(String),
    /// The run completed with these figures (a failure when
    /// [`CrashReport::failed`]).
    Ran(Box<CrashReport>),
    /// The run stopped on an internal error or a panic (a failure).
    Error(String),
}

/// A cell and its outcome.
#[derive(Clone, Debug)]
pub struct CellResult {
    /// The cell.
    pub cell: Cell,
    /// What happened.
    pub outcome: CellOutcome,
}

impl CellResult {
    /// Whether the cell counts as a failure (lost data, invalid reads,
    /// mapping mismatches, capacitor overruns, or an internal error).
    pub fn failed(&self) -> bool {
        match &self.outcome {
            CellOutcome::Refused(_) => false,
            CellOutcome::Ran(r) => r.failed(),
            CellOutcome::Error(_) => true,
        }
    }
}

/// Runs one cell through `cuts` cuts, exactly as its replay command does.
pub fn run_cell(cell: &Cell, cuts: u32) -> CellOutcome {
    let cfg = match cell.config() {
        Ok(c) => c,
        Err(e) => return CellOutcome::Error(format!("the drawn assignments do not apply: {e}")),
    };
    let prepared = crash_plan(&cfg).and_then(|plan| {
        let spec = spec_for(&cfg, &plan, cell.workload.spec(cuts))?;
        Ok((plan, spec))
    });
    let (plan, spec) = match prepared {
        Ok(p) => p,
        Err(e) => return CellOutcome::Refused(e.to_string()),
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        let medium = plan.medium()?;
        run_crash(plan.core, medium, &spec, |_| {})
    }));
    match run {
        Ok(Ok(r)) => CellOutcome::Ran(Box::new(r)),
        Ok(Err(e)) => CellOutcome::Error(format!("simulation failed: {e}")),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            CellOutcome::Error(format!("panic: {msg}"))
        }
    }
}

/// What a random-configuration sweep does.
#[derive(Clone, Copy, Debug)]
pub struct RandomSpec {
    /// Cells to draw.
    pub cells: usize,
    /// Seed of the draw.
    pub seed: u64,
    /// Power cuts per cell.
    pub cuts: u32,
    /// Cells run at once on threads (at least 1).
    pub jobs: usize,
}

/// How often one value of an axis was drawn, and what its cells did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueCount {
    /// Cells that drew it.
    pub drawn: u64,
    /// Of them, cells validation accepted (run).
    pub ran: u64,
    /// Of them, failed cells.
    pub failed: u64,
}

/// One axis of the coverage table: its values in the order the axis lists
/// them, each once, then for a feature axis [`PRESET_VALUE`].
#[derive(Clone, Debug)]
pub struct AxisCoverage {
    /// The axis key.
    pub key: &'static str,
    /// Value and counts.
    pub values: Vec<(&'static str, ValueCount)>,
}

/// What a random-configuration sweep found.
#[derive(Clone, Debug)]
pub struct RandomReport {
    /// Every cell, in draw order.
    pub cells: Vec<CellResult>,
    /// Figures summed over the cells that ran.
    pub totals: CrashReport,
    /// Cells validation refused.
    pub refused_cells: u64,
    /// Cells that failed (lost data, invalid reads, mapping mismatches,
    /// capacitor overruns, or an internal error).
    pub failed_cells: u64,
    /// Of them, cells whose run stopped on an internal error.
    pub error_cells: u64,
    /// Every axis, the preset first, and the values drawn.
    pub coverage: Vec<AxisCoverage>,
}

/// The coverage table of `cells`: every axis (the preset first) with each
/// of its values, drawn or not.
pub fn coverage(cells: &[CellResult]) -> Vec<AxisCoverage> {
    let preset_values: Vec<&'static str> = presets().iter().map(|p| p.name).collect();
    let axes = std::iter::once((PRESET_KEY, preset_values.as_slice(), Kind::Shape))
        .chain(AXES.iter().map(|a| (a.key, a.values, a.kind)));
    let mut out: Vec<AxisCoverage> = axes
        .map(|(key, values, kind)| {
            let mut seen: Vec<(&'static str, ValueCount)> = Vec::new();
            let kept: &[&'static str] = match kind {
                Kind::Feature => &[PRESET_VALUE],
                _ => &[],
            };
            for v in values.iter().chain(kept) {
                if !seen.iter().any(|(s, _)| s == v) {
                    seen.push((v, ValueCount::default()));
                }
            }
            AxisCoverage { key, values: seen }
        })
        .collect();
    let index: BTreeMap<&str, usize> = out.iter().enumerate().map(|(i, a)| (a.key, i)).collect();
    for c in cells {
        let ran = !matches!(c.outcome, CellOutcome::Refused(_));
        let failed = c.failed();
        for (key, value) in &c.cell.drawn {
            let Some(&i) = index.get(key) else { continue };
            if let Some((_, n)) = out[i].values.iter_mut().find(|(v, _)| v == value) {
                n.drawn += 1;
                n.ran += u64::from(ran);
                n.failed += u64::from(failed);
            }
        }
    }
    out
}

/// `f` of every item on `jobs` threads, in item order; `progress` hears
/// the number of items done.
fn par_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<R>, String> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                if let Some(Ok(mut slot)) = slots.get(i).map(Mutex::lock) {
                    *slot = Some(r);
                }
                progress(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
            });
        }
    });
    // Every slot is filled unless a thread died: then no result is dropped
    // silently, the run fails.
    slots
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            m.into_inner()
                .ok()
                .flatten()
                .ok_or_else(|| format!("item {i} has no result: its thread stopped"))
        })
        .collect()
}

/// Shrinks every failing cell of `report` ([`shrink`]) on `jobs` threads:
/// pairs of the cell's index and the smaller cell.
pub fn shrink_failures(
    report: &RandomReport,
    cuts: u32,
    jobs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<(usize, Cell)>, String> {
    let failing: Vec<&CellResult> = report.cells.iter().filter(|c| c.failed()).collect();
    par_map(
        &failing,
        jobs,
        |c| (c.cell.index, shrink(&c.cell, cuts, &c.outcome)),
        progress,
    )
}

/// Draws `spec.cells` cells and runs each through `spec.cuts` cuts on
/// `spec.jobs` threads; `progress` hears the number of cells finished.
/// Errs only when the generator itself fails (a drawn value a key does
/// not take).
pub fn run_random(
    spec: &RandomSpec,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<RandomReport, String> {
    let cells: Vec<Cell> = (0..spec.cells)
        .map(|i| draw_cell(spec.seed, i))
        .collect::<Result<_, _>>()?;
    let outcomes = par_map(&cells, spec.jobs, |c| run_cell(c, spec.cuts), progress)?;
    let cells: Vec<CellResult> = cells
        .into_iter()
        .zip(outcomes)
        .map(|(cell, outcome)| CellResult { cell, outcome })
        .collect();
    let mut totals = CrashReport::default();
    let (mut refused_cells, mut failed_cells, mut error_cells) = (0, 0, 0);
    for c in &cells {
        match &c.outcome {
            CellOutcome::Refused(_) => refused_cells += 1,
            CellOutcome::Ran(r) => totals.add(r),
            CellOutcome::Error(_) => error_cells += 1,
        }
        failed_cells += u64::from(c.failed());
    }
    Ok(RandomReport {
        coverage: coverage(&cells),
        cells,
        totals,
        refused_cells,
        failed_cells,
        error_cells,
    })
}

/// Whether `o` fails the way `was` did: the same internal error, or lost
/// or wrong data again.
fn same_failure(was: &CellOutcome, o: &CellOutcome) -> bool {
    match (was, o) {
        (CellOutcome::Error(a), CellOutcome::Error(b)) => a == b,
        (CellOutcome::Ran(_), CellOutcome::Ran(r)) => r.failed(),
        _ => false,
    }
}

/// The axis kind of the key an assignment sets.
fn kind_of(assignment: &str) -> Kind {
    let key = assignment.split('=').next().unwrap_or("");
    AXES.iter()
        .find(|a| a.key.split(',').any(|k| k == key))
        .map_or(Kind::Shape, |a| a.kind)
}

/// A smaller cell that still fails as `cell` did with outcome `was`:
/// feature assignments are dropped one at a time (back to the preset's
/// value), then the workload flags reset to `ftl crash`'s defaults, while
/// the failure stays; the shrunk geometry and sizes are kept. What is left
/// names the keys the failure needs. Runs the cell once per attempt.
pub fn shrink(cell: &Cell, cuts: u32, was: &CellOutcome) -> Cell {
    let mut best = cell.clone();
    loop {
        let mut progressed = false;
        let mut i = 0;
        while i < best.sets.len() {
            if kind_of(&best.sets[i]) != Kind::Feature {
                i += 1;
                continue;
            }
            let mut c = best.clone();
            c.sets.remove(i);
            if same_failure(was, &run_cell(&c, cuts)) {
                best = c;
                progressed = true;
            } else {
                i += 1;
            }
        }
        let d = CellWorkload {
            seed: best.workload.seed,
            ..CellWorkload::default()
        };
        let resets: [fn(&mut CellWorkload, &CellWorkload); 6] = [
            |w, d| w.copy_share = d.copy_share,
            |w, d| w.shutdown_prob = d.shutdown_prob,
            |w, d| w.ops_per_cut = d.ops_per_cut,
            |w, d| w.span = d.span,
            |w, d| w.mount_cut_prob = d.mount_cut_prob,
            |w, d| w.no_fill = d.no_fill,
        ];
        for reset in resets {
            let mut c = best.clone();
            reset(&mut c.workload, &d);
            if c.workload != best.workload && same_failure(was, &run_cell(&c, cuts)) {
                best = c;
                progressed = true;
            }
        }
        if !progressed {
            return best;
        }
    }
}

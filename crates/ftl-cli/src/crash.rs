//! `ftl crash`: power cuts at random points of a mixed workload, a remount
//! after each, and an oracle check of every acknowledged write and trim.

use clap::Args;
use serde_json::{json, Value};
use sim_harness::crash::setup::spec_for;
use sim_harness::crash::{run_crash, CrashReport, CrashSpec};
use sim_harness::sim::Plan;

use crate::common::CommonOpts;
use crate::progress::Progress;
use crate::CliError;

/// Options of `ftl crash`.
#[derive(Args, Debug, Clone)]
pub struct CrashArgs {
    #[command(flatten)]
    pub common: CommonOpts,
    /// Power cuts to make (cuts during mount count too).
    #[arg(long, default_value_t = 1000)]
    pub cuts: u32,
    /// Seed of the workload, the cut points and the torn operations.
    #[arg(long, default_value_t = CrashSpec::default().seed)]
    pub seed: u64,
    /// Mean host commands between two cuts (writes 70%, trims 10%, reads 17%).
    #[arg(long, default_value_t = CrashSpec::default().ops_per_cut)]
    pub ops_per_cut: u32,
    /// Share (0-1] of the logical space the workload touches.
    #[arg(long, default_value_t = CrashSpec::default().span)]
    pub span: f64,
    /// Probability that a mount is itself cut.
    #[arg(long, default_value_t = CrashSpec::default().mount_cut_prob)]
    pub mount_cut_prob: f64,
    /// Check every logical unit after this many cuts (between, the units
    /// written or trimmed since the last cut and a random sample).
    #[arg(long, default_value_t = CrashSpec::default().full_check_every)]
    pub full_check_every: u32,
    /// Capacitor energy as a share of what the core asks for; below 1 the
    /// flush is cut short and the check must see lost data.
    #[arg(long, default_value_t = CrashSpec::default().capacitor_scale)]
    pub capacitor_scale: f64,
    /// Share (0-1) of host commands that are copies of 1-4 units (with
    /// `--set copy.mode=remap` they are remapped).
    #[arg(long, default_value_t = CrashSpec::default().copy_share)]
    pub copy_share: f64,
    /// Start on an empty drive instead of writing the span once first
    /// (without the fill, small runs may never reach GC).
    #[arg(long)]
    pub no_fill: bool,
    /// Probability [0, 1) that an epoch ends in a clean shutdown (flush,
    /// then checkpoint) instead of a cut; such epochs come on top of `--cuts`.
    #[arg(long, default_value_t = CrashSpec::default().shutdown_prob)]
    pub shutdown_prob: f64,
    /// Draw N configurations from the whole configuration space (every
    /// preset, every value of every mode key, shrunk geometries) and run
    /// each through `--cuts` cuts; the preset, the `--set` list and the
    /// workload flags are drawn per cell from `--seed`, so those flags
    /// are refused beside it.
    #[arg(long, value_name = "N", conflicts_with_all = [
        "preset", "config", "set", "ops_per_cut", "span", "mount_cut_prob", "copy_share",
        "shutdown_prob", "no_fill", "capacitor_scale", "full_check_every",
    ])]
    pub random_config: Option<usize>,
    /// Cells of `--random-config` run at once on threads.
    #[arg(long, default_value_t = 1, value_name = "J")]
    pub jobs: usize,
    /// With `--random-config`: shrink every failing cell, dropping the
    /// feature assignments and workload flags the failure does not need
    /// (each attempt is one more run of the cell), and print the smaller
    /// replay command too.
    #[arg(long, requires = "random_config")]
    pub shrink: bool,
}

/// Translation-page size `ftl crash` turns on when the configuration has
/// mapping persistence off: as many 4-byte entries as fill a 4 KiB page
/// after its 16-byte header (the default configuration's size).
pub const DEFAULT_MAP_ENTRIES: u32 = sim_harness::config::DEFAULT_MAP_ENTRIES;

/// Runs `ftl crash`. Exit status 1 when any acknowledged data was lost or
/// read back wrong, a mount rebuilt a different mapping, or the power-cut
/// flush needed more than the capacitor holds.
pub fn run(a: CrashArgs) -> Result<(), CliError> {
    if let Some(n) = a.random_config {
        return crate::crash_random::run(&a, n);
    }
    if !(a.span > 0.0 && a.span <= 1.0) {
        return Err(CliError::Input("--span must be in (0, 1]".into()));
    }
    if !(0.0..=1.0).contains(&a.mount_cut_prob) {
        return Err(CliError::Input("--mount-cut-prob must be in [0, 1]".into()));
    }
    if !(0.0..1.0).contains(&a.shutdown_prob) {
        return Err(CliError::Input("--shutdown-prob must be in [0, 1)".into()));
    }
    if !(0.0..=1.0).contains(&a.copy_share) {
        return Err(CliError::Input("--copy-share must be in [0, 1]".into()));
    }
    if !(a.capacitor_scale.is_finite() && a.capacitor_scale >= 0.0) {
        return Err(CliError::Input(
            "--capacitor-scale must be a non-negative number".into(),
        ));
    }
    let mut cfg = a.common.load_unchecked()?;
    let turned_on = cfg.ftl.map_entries_per_page == 0;
    if turned_on {
        cfg.apply_set(&format!("ftl.map_entries_per_page={DEFAULT_MAP_ENTRIES}"))
            .map_err(|e| CliError::Input(e.to_string()))?;
    }
    cfg.validate().map_err(|e| CliError::Input(e.to_string()))?;
    let mut plan = Plan::from_config(&cfg).map_err(|e| CliError::Input(e.to_string()))?;
    // The memory check comes first; only the core's layout of the metadata
    // region can then fail, and a preset that keeps its mapping table in
    // DRAM gets the override that makes room for it.
    if let Err(e) = a.common.check_plan(&cfg, &plan, 1, 1, "this crash run") {
        let short = matches!(&e, CliError::Input(m) if m.contains("metadata region"));
        if !(turned_on && short) {
            return Err(e);
        }
        let Some(o) = region_override(&cfg) else {
            return Err(e);
        };
        cfg.apply_set(&o)
            .map_err(|e| CliError::Input(e.to_string()))?;
        eprintln!(
            "ftl crash: preset {} keeps its mapping table in DRAM and its spare space cannot \
             hold the metadata region of ftl.map_entries_per_page={DEFAULT_MAP_ENTRIES}: \
             override --set {o}",
            a.common.preset
        );
        plan = Plan::from_config(&cfg).map_err(|e| CliError::Input(e.to_string()))?;
        a.common.check_plan(&cfg, &plan, 1, 1, "this crash run")?;
    }
    let base = CrashSpec {
        cuts: a.cuts,
        seed: a.seed,
        ops_per_cut: a.ops_per_cut.max(1),
        span: a.span,
        mount_cut_prob: a.mount_cut_prob,
        full_check_every: a.full_check_every,
        capacitor_scale: a.capacitor_scale,
        prefill: !a.no_fill,
        copy_share: a.copy_share,
        shutdown_prob: a.shutdown_prob,
        ..CrashSpec::default()
    };
    let spec = spec_for(&cfg, &plan, base).map_err(|e| CliError::Input(e.to_string()))?;
    let medium = plan.medium().map_err(|e| CliError::Input(e.to_string()))?;
    let mut progress = Progress::new(Some(u64::from(a.cuts)), a.common.quiet);
    let r = run_crash(plan.core, medium, &spec, |n| progress.update(n, "run"))?;
    progress.finish();
    let mut v = report_json(&r);
    if let Value::Object(m) = &mut v {
        m.insert("preset".into(), Value::String(a.common.preset.clone()));
        m.insert(
            "workload".into(),
            json!({
                "cuts": a.cuts,
                "seed": a.seed,
                "ops_per_cut": spec.ops_per_cut,
                "span": a.span,
                "mount_cut_prob": a.mount_cut_prob,
                "capacitor_scale": a.capacitor_scale,
                "prefill": !a.no_fill,
                "shutdown_prob": a.shutdown_prob,
            }),
        );
        m.insert("config".into(), crate::common::config_json(&cfg));
    }
    a.common.write_out(&v, None)?;
    a.common.print(&v, || summary(&a.common.preset, &r))?;
    if r.failed() {
        return Err(CliError::Run(format!(
            "power cuts lost data: {}",
            failure_line(&r)
        )));
    }
    Ok(())
}

/// What a failed crash run found, in one line.
pub fn failure_line(r: &CrashReport) -> String {
    format!(
        "{} acknowledged units lost, {} invalid reads, {} mapping mismatches, {} capacitor overruns",
        r.lost_acknowledged, r.invalid_reads, r.mapping_mismatches, r.capacitor_overruns
    )
}

/// The override that lets a configuration whose mapping persistence `ftl
/// crash` turned on hold the metadata region: the highest GC trigger (not below
/// the GC reserve) that leaves room for it, as a `--set` assignment; `None`
/// when no trigger helps. It lays the core's tables out for each candidate:
/// call it after the memory check.
pub fn region_override(cfg: &sim_harness::config::SimConfig) -> Option<String> {
    let fits = |c: &sim_harness::config::SimConfig| {
        Plan::from_config(c).is_ok_and(|p| p.check_core(c).is_ok())
    };
    let mut c = cfg.clone();
    while c.ftl.gc_trigger_blocks > c.ftl.gc_reserve_blocks {
        c.ftl.gc_trigger_blocks -= 1;
        if fits(&c) {
            return Some(format!("ftl.gc_trigger_blocks={}", c.ftl.gc_trigger_blocks));
        }
    }
    None
}

/// The report sections of a crash run: `crash.*`, `recovery.*`,
/// `nand.map_programs`, `buffer.map_flushes`.
pub fn report_json(r: &CrashReport) -> Value {
    json!({
        "crash": {
            "cuts": r.cuts,
            "mount_cuts": r.mount_cuts,
            "lost_acknowledged": r.lost_acknowledged,
            "invalid_reads": r.invalid_reads,
            "mapping_mismatches": r.mapping_mismatches,
            "capacitor_overruns": r.capacitor_overruns,
            "cut_programs_max": r.cut_programs_max,
            "cut_capacity": r.cut_capacity,
            "torn_programs": r.torn_programs,
            "torn_erases": r.torn_erases,
            "units_checked": r.units_checked,
            "host_commands": r.host_commands,
            "max_pe": r.max_pe,
            "pe_drift_max": r.pe_drift_max,
            "shutdowns": r.shutdowns,
            "zone_wp_mismatches": r.zone_wp_mismatches,
        },
        "zns": {
            "zone_writes": r.zone_writes,
            "appends": r.zone_appends,
            "resets": r.zone_resets,
            "finishes": r.zone_finishes,
            "refused": r.zone_refusals,
        },
        "recovery": {
            "mounts": r.mounts,
            "mount_ops": r.mount_ops_mean,
            "mount_ops_max": r.mount_ops_max,
            "mount_sim_seconds": r.mount_sim_seconds_mean,
            "mount_sim_seconds_max": r.mount_sim_seconds_max,
            "checkpoint_mounts": r.checkpoint_mounts,
            "mount_head_reads": r.mount_head_reads,
            "mount_replay_reads": r.mount_replay_reads,
            "clean_mount_data_reads": r.clean_mount_data_reads,
        },
        "nand": { "map_programs": r.map_programs },
        "buffer": { "map_flushes": r.map_flushes },
        "gc": { "victims": r.gc_victims },
        "copy": { "remapped_units": r.copy_remapped_units },
    })
}

fn summary(preset: &str, r: &CrashReport) -> String {
    format!(
        "crash: preset {preset}, {} cuts ({} during mount), {} torn programs, {} torn erases\n\
         lost acknowledged      {}\n\
         invalid reads          {}\n\
         mapping mismatches     {}\n\
         zone pointer mismatches {} ({} zone writes and appends, {} resets, {} finishes, {} refused)\n\
         capacitor overruns     {} (flush used at most {} of {} programs)\n\
         units checked          {}\n\
         host commands          {}\n\
         mount                  {:.0} NAND operations on average ({} at most), {:.3} ms ({:.3} ms at most)\n\
         checkpoint             {} of {} mounts took it; {} first-page reads, {} replayed pages; {} clean shutdowns, {} reads outside the checkpoint after them\n\
         translation pages      {} written, {} budget write-back batches\n\
         GC victims             {}\n\
         highest P/E count      {}\n",
        r.cuts,
        r.mount_cuts,
        r.torn_programs,
        r.torn_erases,
        r.lost_acknowledged,
        r.invalid_reads,
        r.mapping_mismatches,
        r.zone_wp_mismatches,
        r.zone_writes,
        r.zone_resets,
        r.zone_finishes,
        r.zone_refusals,
        r.capacitor_overruns,
        r.cut_programs_max,
        r.cut_capacity,
        r.units_checked,
        r.host_commands,
        r.mount_ops_mean,
        r.mount_ops_max,
        r.mount_sim_seconds_mean * 1e3,
        r.mount_sim_seconds_max * 1e3,
        r.checkpoint_mounts,
        r.mounts,
        r.mount_head_reads,
        r.mount_replay_reads,
        r.shutdowns,
        r.clean_mount_data_reads,
        r.map_programs,
        r.map_flushes,
        r.gc_victims,
        r.max_pe,
    )
}

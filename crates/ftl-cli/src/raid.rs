//! `ftl raid`: a RAID-5 group of simulated multi-core drives, filled and
//! worked, a die failed, recovered with `reparo.mode`, every unit verified
//! against the oracle (`sim_harness::raid`).

use std::path::PathBuf;

use clap::Args;
use sim_harness::config::SimConfig;
use sim_harness::raid::{RaidOutcome, RaidSpec, TimeModel};
use sim_harness::reparo::DriveSpec;
use sim_harness::sim::Plan;

use crate::common::CommonOpts;
use crate::CliError;

/// Options of `ftl raid`.
#[derive(Args, Debug, Clone)]
pub struct RaidArgs {
    #[command(flatten)]
    pub common: CommonOpts,
    /// Drives in the RAID-5 group.
    #[arg(long, default_value_t = 8)]
    pub ssds: u32,
    /// Stripe unit, KiB.
    #[arg(long, default_value_t = 64)]
    pub stripe_kib: u64,
    /// Random stripe-unit updates before the die fails (the failure time).
    #[arg(long, default_value_t = 20_000)]
    pub fail_after: u64,
    /// Drive, flash core and die (within the core) that fail.
    #[arg(long, default_value_t = 1)]
    pub fail_drive: u32,
    /// Flash core of the failed die.
    #[arg(long, default_value_t = 3)]
    pub fail_core: u32,
    /// Die (index within its core) that fails.
    #[arg(long, default_value_t = 1)]
    pub fail_die: u32,
    /// Failed-LBA query range, MiB.
    #[arg(long, default_value_t = 64)]
    pub range_mib: u64,
    /// Share of the host bandwidth recovery may use (0.1 = 10 %).
    #[arg(long, default_value_t = 1.0)]
    pub bw_limit: f64,
    /// Space utilisation of each drive (host LBAs over usable units).
    /// Default: 0.85, or the largest of 0.80, 0.75, ... 0.05 that the
    /// configured drive holds in every recovery mode (0.45 on `default`).
    #[arg(long)]
    pub utilisation: Option<f64>,
    /// Post-recovery random writes on the repaired drive, in drive capacities.
    #[arg(long, default_value_t = 0.0)]
    pub post_writes: f64,
    /// Print seed 001 Tables 8 and 9 (space utilisation growth after one die
    /// failure under IDR and under CDR's adjustment, four flash cores) from
    /// the Handler arithmetic, and the Fig. 30 example, then exit.
    #[arg(long)]
    pub tables: bool,
}

/// Tables 8 and 9 and Fig. 30 from `firmware_core::tech::reparo::handler`
/// and `sim_harness::reparo_space`.
fn print_tables() -> Result<(), CliError> {
    use firmware_core::tech::reparo::handler::{Cdr, Route, SsdShape};
    use sim_harness::reparo_space::{Ratio, Utilisation};
    let per_core = [4u32, 8, 16, 32, 64, 128];
    let mut t8 = (String::new(), String::new());
    let mut t9 = (String::new(), String::new());
    let pct = |r: Option<Ratio>| {
        r.and_then(|r| r.percent_hundredths())
            .map_or("-".to_string(), |h| format!("{}.{:02}%", h / 100, h % 100))
    };
    for x in per_core {
        let dies = 4 * x;
        let logical = 4 * u64::from(dies - 1) * 9;
        let shape = SsdShape {
            cores: 4,
            dies,
            logical,
            die_capacity: (logical / u64::from(dies) * 10 / 9).max(1),
        };
        let c = Cdr::new(shape, 3).map_err(|e| CliError::Run(e.to_string()))?;
        let before = c.utilisation_before();
        t8.0 += &format!(" {} |", pct(c.victim_utilisation_idr().growth_over(before)));
        t8.1 += &format!(" {} |", pct(before.growth_over(before)));
        t9.0 += &format!(
            " {} |",
            pct(c.victim_utilisation_after().growth_over(before))
        );
        t9.1 += &format!(
            " {} |",
            pct(c.helper_utilisation_after().growth_over(before))
        );
    }
    let head =
        "| dies per flash core | 4 | 8 | 16 | 32 | 64 | 128 |\n|---|---|---|---|---|---|---|";
    println!("Table 8: space utilisation growth under IDR (one die failure)\n{head}");
    println!("| victim core |{}\n| helper core |{}\n", t8.0, t8.1);
    println!("Table 9: space utilisation growth after the CDR adjustment\n{head}");
    println!("| victim core |{}\n| helper core |{}\n", t9.0, t9.1);
    let fig = Cdr::new(
        SsdShape {
            cores: 4,
            dies: 16,
            logical: 60,
            die_capacity: 6,
        },
        3,
    )
    .map_err(|e| CliError::Run(e.to_string()))?;
    println!(
        "Fig. 30 (N=4, D_ssd=16, |LS|=60, victim core 3): alpha = {}, utilisation {:.3} -> {:.3}",
        fig.alpha().to_f64(),
        fig.utilisation_before().to_f64(),
        fig.helper_utilisation_after().to_f64()
    );
    for lba in fig.fake_failures() {
        if let Some(Route::Redirected(h)) = fig.route(lba) {
            println!("  LBA {lba} -> core {} as _{}", h.core, h.lba);
        }
    }
    Ok(())
}

/// The RAID spec of a configuration: `controller.flash_cores` splits the
/// configured channels; `reparo.*` picks the recovery.
pub(crate) fn spec_of(
    cfg: &SimConfig,
    ssds: u32,
    utilisation: f64,
    stripe_kib: u64,
) -> Result<RaidSpec, String> {
    let core = cfg.to_core_config().map_err(|e| e.to_string())?;
    let g = core.geometry;
    let n = cfg.controller.flash_cores;
    if n == 0 || u32::from(g.channels) % n != 0 {
        return Err("geometry.channels must be a multiple of controller.flash_cores".into());
    }
    let mut cg = g;
    cg.channels = (u32::from(g.channels) / n) as u16;
    let unit = u64::from(g.unit_bytes());
    let t = &cfg.timing;
    let mut time = TimeModel::with_timings(t.t_read_us, t.t_prog_us, t.t_erase_us, t.host_mib_s);
    time.unit_bytes = unit;
    // The identification and post-recovery runs use the configuration's
    // channel, DRAM and host timing and queue depth.
    time.engine = Plan::from_config(cfg).map_err(|e| e.to_string())?.engine;
    Ok(RaidSpec {
        drive: DriveSpec {
            cores: n,
            core_geometry: cg,
            utilisation,
            n_bad_die: cfg.reparo.n_bad_die,
            seed: cfg.nand.seed,
        },
        ssds,
        stripe_lbas: (stripe_kib * 1024 / unit).max(1),
        mode: cfg.reparo.mode(),
        p2l: cfg.reparo.p2l(),
        writes_before: 20_000,
        fail: (1, n - 1, 1),
        range_lbas: 64 * 1_048_576 / unit,
        time,
        seed: cfg.sim.seed,
        post_writes: 0.0,
    })
}

/// Largest stripe unit, KiB (1 GiB).
const MAX_STRIPE_KIB: u64 = 1 << 20;
/// Largest failed-LBA query range, MiB (1 TiB).
const MAX_RANGE_MIB: u64 = 1 << 20;
/// Most post-recovery writes, in drive capacities.
const MAX_POST_WRITES: f64 = 100.0;

/// Checks the arguments that need no configuration.
fn check_args(a: &RaidArgs) -> Result<(), CliError> {
    let bad = |m: String| Err(CliError::Input(m));
    if a.ssds < 3 {
        return bad(format!(
            "--ssds: {} drives; RAID-5 needs at least 3",
            a.ssds
        ));
    }
    if let Some(u) = a.utilisation {
        if !(u.is_finite() && u > 0.0 && u <= 1.0) {
            return bad(format!("--utilisation: {u} is not in (0, 1]"));
        }
    }
    if !(a.bw_limit.is_finite() && a.bw_limit > 0.0 && a.bw_limit <= 1.0) {
        return bad(format!(
            "--bw-limit: {} is not a share of the host bandwidth in (0, 1]",
            a.bw_limit
        ));
    }
    if !(1..=MAX_STRIPE_KIB).contains(&a.stripe_kib) {
        return bad(format!(
            "--stripe-kib: {} is not in 1 to {MAX_STRIPE_KIB}",
            a.stripe_kib
        ));
    }
    if !(1..=MAX_RANGE_MIB).contains(&a.range_mib) {
        return bad(format!(
            "--range-mib: {} is not in 1 to {MAX_RANGE_MIB}",
            a.range_mib
        ));
    }
    if !(a.post_writes.is_finite() && (0.0..=MAX_POST_WRITES).contains(&a.post_writes)) {
        return bad(format!(
            "--post-writes: {} is not in 0 to {MAX_POST_WRITES} drive capacities",
            a.post_writes
        ));
    }
    if a.fail_drive >= a.ssds {
        return bad(format!(
            "--fail-drive: {} is not one of the {} drives (0 to {})",
            a.fail_drive,
            a.ssds,
            a.ssds - 1
        ));
    }
    Ok(())
}

/// The utilisation of a run without `--utilisation`, the same for every
/// `reparo.mode`: 0.85 when every mode's drive holds it, else the largest
/// multiple of 0.05 below that does. Small drives give a large share to
/// CDR's hidden redirection space, and IDR's victim core must keep its LBAs
/// on its remaining dies (0.45 on `default`: two dies per flash core).
pub(crate) fn default_utilisation(spec: &RaidSpec) -> Result<f64, String> {
    let mut d = spec.drive;
    for step in (1..=17u32).rev() {
        d.utilisation = f64::from(step) * 0.05;
        if d.logical() > 0 && d.check(spec.p2l).is_ok() && d.idr_holds() {
            return Ok(d.utilisation);
        }
    }
    Err(
        "--utilisation: the drive holds no utilisation from 0.05 to 0.85 \
         (each flash core needs room for CDR's hidden redirection space and the GC reserve)"
            .into(),
    )
}

/// Checks the arguments against the drive the configuration builds.
fn check_spec(a: &RaidArgs, spec: &RaidSpec) -> Result<(), CliError> {
    let bad = |m: String| Err(CliError::Input(m));
    let d = &spec.drive;
    let unit = spec.time.unit_bytes;
    if !(a.stripe_kib * 1024).is_multiple_of(unit) {
        return bad(format!(
            "--stripe-kib: {} KiB is not a multiple of the {unit}-byte mapping unit",
            a.stripe_kib
        ));
    }
    if a.fail_core >= d.cores {
        return bad(format!(
            "--fail-core: {} is not one of the {} flash cores (controller.flash_cores)",
            a.fail_core, d.cores
        ));
    }
    let p2l = sim_harness::reparo::effective_p2l(spec.mode, spec.p2l);
    if let Err(e) = d.check(p2l) {
        return bad(format!(
            "--utilisation: {} does not fit: {e} (each flash core must hold its share of the LBAs \
             plus CDR's hidden redirection space and the GC reserve: lower --utilisation, or give \
             the drive more dies)",
            d.utilisation
        ));
    }
    let dies = d.core_geometry.dies();
    if a.fail_die >= dies {
        return bad(format!(
            "--fail-die: {} is not one of the {dies} dies of a flash core",
            a.fail_die
        ));
    }
    if d.logical() < spec.stripe_lbas.saturating_mul(u64::from(a.ssds)) {
        return bad(format!(
            "--utilisation: {} leaves {} LBAs per drive, less than one stripe row \
             (--stripe-kib {} on {} drives)",
            d.utilisation,
            d.logical(),
            a.stripe_kib,
            a.ssds
        ));
    }
    Ok(())
}

/// Runs `ftl raid`.
pub fn run(a: RaidArgs) -> Result<(), CliError> {
    if a.tables {
        return print_tables();
    }
    check_args(&a)?;
    let cfg = a.common.load_config()?;
    let mut spec = spec_of(&cfg, a.ssds, a.utilisation.unwrap_or(0.85), a.stripe_kib)
        .map_err(CliError::Input)?;
    if a.utilisation.is_none() {
        spec.drive.utilisation = default_utilisation(&spec).map_err(CliError::Input)?;
    }
    let utilisation = spec.drive.utilisation;
    check_spec(&a, &spec)?;
    spec.writes_before = a.fail_after;
    spec.fail = (a.fail_drive, a.fail_core, a.fail_die);
    spec.range_lbas = (a.range_mib * 1_048_576 / spec.time.unit_bytes).max(1);
    spec.time.bw_limit = a.bw_limit;
    spec.post_writes = a.post_writes;
    // Every drive plus the spare, and the oracle's copy of every unit.
    let plan = Plan::from_config(&cfg).map_err(|e| CliError::Input(e.to_string()))?;
    let oracle = u64::from(a.ssds).saturating_mul(spec.drive.logical().saturating_mul(8));
    let need = plan
        .worst_case_bytes(1)
        .map_err(|e| CliError::Input(cfg.core_rejection(e).to_string()))?
        .saturating_mul(u64::from(a.ssds) + 1)
        .saturating_add(oracle);
    crate::mem_limit::check(need, a.common.max_memory, "this RAID group")?;
    let o: RaidOutcome = sim_harness::raid::run(&spec).map_err(|e| {
        let hint = if matches!(e, firmware_core::Error::InvalidConfig(m) if m.starts_with("over-provisioning")) {
            format!(
                " (each flash core must hold utilisation {} of its dies plus CDR's hidden redirection space and the GC reserve: \
                 lower --utilisation, or give the drive more dies)",
                utilisation
            )
        } else {
            String::new()
        };
        let msg = format!("raid run failed: {e}{hint}");
        // A configuration the core rejects is bad input, not a failed run.
        if matches!(e, firmware_core::Error::InvalidConfig(_)) {
            CliError::Input(msg)
        } else {
            CliError::Run(msg)
        }
    })?;
    let mut v = sim_harness::report::raid_report(&o);
    if let Some(r) = v.get_mut("raid").and_then(|r| r.as_object_mut()) {
        r.insert("utilisation".into(), utilisation.into());
    }
    if let Some(m) = v.as_object_mut() {
        m.insert(
            "config".into(),
            serde_json::to_value(&cfg).map_err(|e| CliError::Run(e.to_string()))?,
        );
    }
    if let Some(dir) = &a.common.out {
        write_report(dir, &v)?;
    }
    if a.common.json {
        println!("{v}");
    } else {
        println!(
            "mode {}: {} drives x {} dies, {} LBAs each (utilisation {utilisation:.2}); failed LBAs {} (+{} fake, ground truth {}, exact {}), \
             rebuild {:.3} s ({:.3} s identify), {} bytes; {}; integrity mismatches {}",
            o.mode,
            o.ssds,
            o.dies,
            o.lbas_per_drive,
            o.failed_lbas,
            o.fake_failures,
            o.truth_failed,
            o.status_exact,
            o.rebuild_seconds,
            o.identify_seconds,
            o.rebuild_bytes,
            post_recovery_text(a.post_writes, o.post_waf, o.post_iops),
            o.mismatches
        );
        if o.p2l_page_reads + o.p2l_ram_blocks + o.p2l_ram_pages > 0 {
            println!(
                "P2L identification: {} page reads, {} blocks and {} pages from the controller's RAM, {} failed blocks",
                o.p2l_page_reads, o.p2l_ram_blocks, o.p2l_ram_pages, o.failed_die_blocks
            );
        }
    }
    if o.mismatches != 0 || !o.status_exact {
        return Err(CliError::Run(
            "raid: recovery did not restore the data exactly".into(),
        ));
    }
    Ok(())
}

fn write_report(dir: &PathBuf, v: &serde_json::Value) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::Run(e.to_string()))?;
    let text = serde_json::to_string_pretty(v).map_err(|e| CliError::Run(e.to_string()))?;
    std::fs::write(dir.join("report.json"), text).map_err(|e| CliError::Run(e.to_string()))
}

/// The post-recovery part of the summary: its WAF and IOPS, or that no
/// writes ran after the recovery (rather than a WAF of 0 and 0 IOPS).
fn post_recovery_text(post_writes: f64, waf: f64, iops: f64) -> String {
    if post_writes > 0.0 {
        format!("post-recovery WAF {waf:.2} IOPS {iops:.0}")
    } else {
        "no post-recovery writes (--post-writes 0)".to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn post_recovery_without_writes_says_so() {
        assert_eq!(
            super::post_recovery_text(0.0, 0.0, 0.0),
            "no post-recovery writes (--post-writes 0)"
        );
        assert_eq!(
            super::post_recovery_text(0.5, 1.25, 1234.4),
            "post-recovery WAF 1.25 IOPS 1234"
        );
    }
}

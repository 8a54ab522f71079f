//! `ftl synth`: synthetic workloads.

use clap::{Args, ValueEnum};
use serde_json::json;
use sim_harness::workload::{Pattern, Synth, SynthSpec};

use crate::common::CommonOpts;
use crate::CliError;

/// Access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PatternArg {
    /// Uniform random offsets.
    Random,
    /// Consecutive offsets.
    Sequential,
    /// Skewed: `--hot-access-pct` of requests to `--hot-space-pct` of the footprint.
    Hotcold,
}

/// Options of `ftl synth`.
#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Access pattern.
    #[arg(long, value_enum, default_value_t = PatternArg::Random)]
    pub pattern: PatternArg,
    /// Percentage of reads.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub read_pct: u32,
    /// Request size in KiB (a multiple of the mapping unit).
    #[arg(long, default_value_t = 4)]
    pub size_kib: u32,
    /// Number of requests (default: twice the logical capacity in requests).
    #[arg(long)]
    pub requests: Option<u64>,
    /// Footprint in percent of the logical capacity.
    #[arg(long, default_value_t = 100.0)]
    pub footprint_pct: f64,
    /// Queue depth (overrides host.queue_depth).
    #[arg(long)]
    pub qd: Option<u32>,
    /// Workload seed (default: sim.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Fill the logical space sequentially, overwrite it randomly twice, then reset counters.
    #[arg(long)]
    pub precondition: bool,
    /// Hot-cold: percentage of requests aimed at the hot region.
    #[arg(long, default_value_t = 80)]
    pub hot_access_pct: u32,
    /// Hot-cold: size of the hot region in percent of the footprint.
    #[arg(long, default_value_t = 20)]
    pub hot_space_pct: u32,
    /// Read every logical unit back at the end and check it.
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub common: CommonOpts,
}

/// Runs `ftl synth`.
pub fn run(a: SynthArgs) -> Result<(), CliError> {
    let (cfg, plan) = a.common.plan(a.qd)?;
    let unit_bytes = plan.core.geometry.unit_bytes();
    let size_bytes = u64::from(a.size_kib) * 1024;
    if a.size_kib == 0 || size_bytes % u64::from(unit_bytes) != 0 {
        return Err(CliError::Input(format!(
            "--size-kib: {} KiB is not a positive multiple of the {unit_bytes}-byte mapping unit",
            a.size_kib
        )));
    }
    let units = (size_bytes / u64::from(unit_bytes)) as u32;
    if !(a.footprint_pct > 0.0 && a.footprint_pct <= 100.0) {
        return Err(CliError::Input(format!(
            "--footprint-pct: {} must be in (0, 100]",
            a.footprint_pct
        )));
    }
    if a.hot_access_pct > 100 || a.hot_space_pct == 0 || a.hot_space_pct > 100 {
        return Err(CliError::Input(
            "--hot-access-pct and --hot-space-pct must be percentages".into(),
        ));
    }
    let logical = plan.core.logical_units;
    let footprint_units = ((f64::from(logical) * a.footprint_pct / 100.0) as u32).max(units);
    if units > logical {
        return Err(CliError::Input(format!(
            "--size-kib: larger than the device ({logical} units)"
        )));
    }
    let requests = a.requests.unwrap_or(2 * u64::from(logical / units));
    let pattern = match a.pattern {
        PatternArg::Random => Pattern::Random,
        PatternArg::Sequential => Pattern::Sequential,
        PatternArg::Hotcold => Pattern::HotCold {
            hot_access_pct: a.hot_access_pct,
            hot_space_pct: a.hot_space_pct,
        },
    };
    let spec = SynthSpec {
        pattern,
        read_pct: a.read_pct,
        units,
        requests,
        footprint_units,
        interarrival_ns: 0,
        seed: a.seed.unwrap_or(cfg.sim.seed),
    };
    let mut src = Synth::new(spec);
    let out = a
        .common
        .simulate(&plan, &mut src, a.precondition.then_some(units), a.verify)?;
    let input = json!({
        "pattern": format!("{:?}", a.pattern).to_lowercase(),
        "read_pct": a.read_pct,
        "size_kib": a.size_kib,
        "requests": requests,
        "footprint_units": footprint_units,
        "queue_depth": plan.engine.queue_depth,
        "precondition": a.precondition,
        "seed": spec.seed,
    });
    let v = a.common.report(&cfg, &out, "workload", input);
    let header = format!(
        "synthetic {:?} workload: {requests} requests of {} KiB, {}% reads, QD {}, preset {}\n",
        a.pattern, a.size_kib, a.read_pct, plan.engine.queue_depth, a.common.preset
    );
    a.common.emit(&v, &header)
}

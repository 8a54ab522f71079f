//! `ftl synth`: synthetic workloads, and the one function that runs a
//! synthetic workload for `ftl synth` and for every experiment cell.

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use sim_harness::copy_load::CopyLoad;
use sim_harness::dedup_window::{MetaLayout, Scheme};
use sim_harness::profiles::{copy_profiles, profile, profiles, WorkloadParams};
use sim_harness::sim::Outcome;
use sim_harness::workload::{IdleModel, Pattern, Synth, SynthSpec};
use sim_harness::zns_host::{ZoneHostStats, ZoneLog};

use crate::common::{CommonOpts, PreconditionMode, Preconditioning, PresetsArgs};
use crate::CliError;

/// Host scheme of a windowed `--profile dedup` run (seed 003 Sec. IV).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DedupSchemeArg {
    /// Copy-assisted writing: duplicates become copy commands.
    Ccaw,
    /// Host-side deduplication (OrderMergeDedup), its metadata appended to
    /// a log.
    Dedup,
    /// Host-side deduplication, its metadata tables updated in place.
    DedupTable,
}

/// Access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PatternArg {
    /// Uniform random offsets.
    Random,
    /// Consecutive offsets.
    Sequential,
    /// Skewed: `--hot-access-pct` of requests to `--hot-space-pct` of the footprint.
    Hotcold,
    /// JESD219 enterprise skew: 50 % of requests to the first 5 % of the
    /// footprint, 30 % to the next 15 %, 20 % to the remaining 80 %.
    Jesd219,
}

/// Options of `ftl synth`.
///
/// With `--profile`, the profile sets the defaults of the workload options
/// and any option given explicitly overrides it.
#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Named workload (see `ftl profiles`) that sets the defaults of the
    /// workload options below; options given explicitly override it.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Access pattern [default: random, or the profile's].
    #[arg(long, value_enum)]
    pub pattern: Option<PatternArg>,
    /// Percentage of reads [default: 0, or the profile's].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub read_pct: Option<u32>,
    /// Request size in KiB, a multiple of the mapping unit [default: 4, or the
    /// profile's size mix].
    #[arg(long)]
    pub size_kib: Option<u32>,
    /// Number of requests (default: twice the logical capacity in requests).
    #[arg(long)]
    pub requests: Option<u64>,
    /// Footprint in percent of the logical capacity [default: 100].
    #[arg(long)]
    pub footprint_pct: Option<f64>,
    /// Queue depth (overrides host.queue_depth).
    #[arg(long)]
    pub qd: Option<u32>,
    /// Workload seed (default: sim.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Bring the drive to steady state first, then reset counters: `full`
    /// (bare `--precondition`) fills the logical space sequentially and
    /// overwrites the footprint randomly twice; `fast` builds the state that
    /// reaches directly (docs/architecture.md, "Fast preconditioning").
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1,
          default_missing_value = "full", require_equals = true)]
    pub precondition: Option<PreconditionMode>,
    /// Hot-cold: percentage of requests aimed at the hot region [default: 80, or the profile's].
    #[arg(long)]
    pub hot_access_pct: Option<u32>,
    /// Hot-cold: size of the hot region in percent of the footprint [default: 20, or the profile's].
    #[arg(long)]
    pub hot_space_pct: Option<u32>,
    /// Read every logical unit back at the end and check it.
    #[arg(long)]
    pub verify: bool,
    /// A concurrent flow `name=N,weight=W,qd=Q,KEY=VALUE...` whose other
    /// keys are this command's workload options (`profile=oltp`,
    /// `read_pct=30`, `size_kib=16`, `requests=N`, `pattern=random`...);
    /// repeatable. The flows share the drive in equal address regions under
    /// `host.arbitration`, and the report gains a `flows` list.
    #[arg(long = "flow", value_name = "SPEC")]
    pub flow: Vec<String>,
    /// `--profile dedup`: deduplication ratio R (at least 1); a share
    /// 1 - 1/R of the writes duplicate data on the drive and become copies
    /// [default: 2].
    #[arg(long, value_name = "R")]
    pub dedup_ratio: Option<f64>,
    /// `--profile dedup`: group the user writes into windows of N, each
    /// ending in a flush, as seed 003 Sec. IV does (`window.*` report keys).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub window: Option<u32>,
    /// `--profile dedup` with `--window`: the host scheme, copy-assisted
    /// writing (`ccaw`, duplicates become copies) or host-side
    /// deduplication (OrderMergeDedup: `dedup` appends its metadata to a
    /// log, `dedup-table` updates its tables in place) [default: ccaw].
    #[arg(long, value_name = "SCHEME", requires = "window")]
    pub dedup_scheme: Option<DedupSchemeArg>,
    #[command(flatten)]
    pub common: CommonOpts,
}

/// A synthetic run independent of the drive: what `ftl synth` resolves its
/// options to, and what an experiment cell holds.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthJob {
    /// Profile the workload came from, if any (reported).
    pub profile: Option<String>,
    /// The workload.
    pub params: WorkloadParams,
    /// Queue depth override.
    pub qd: Option<u32>,
    /// Precondition the drive first.
    pub precondition: bool,
    /// Precondition fast (`--precondition=fast`) rather than by simulation.
    pub precondition_fast: bool,
    /// Read everything back at the end.
    pub verify: bool,
    /// Run until the drive's end of life instead (`ftl lifetime`): the
    /// drive is always preconditioned, `params.requests` is a safety cap.
    pub lifetime: bool,
}

impl SynthJob {
    /// A run of `params` alone: no profile, the configured queue depth, a
    /// fresh drive, no read-back and no lifetime run.
    pub fn of(params: WorkloadParams) -> SynthJob {
        SynthJob {
            profile: None,
            params,
            qd: None,
            precondition: false,
            precondition_fast: false,
            verify: false,
            lifetime: false,
        }
    }
}

impl SynthArgs {
    /// Resolves the options: profile defaults first, explicit options on top.
    pub fn job(&self) -> Result<SynthJob, CliError> {
        let mut params = match &self.profile {
            Some(name) => profile(name).map_err(CliError::Input)?.params(),
            None => WorkloadParams::default(),
        };
        let (hot_access, hot_space) = match params.pattern {
            Pattern::HotCold {
                hot_access_pct,
                hot_space_pct,
            } => (hot_access_pct, hot_space_pct),
            _ => (80, 20),
        };
        let hot = Pattern::HotCold {
            hot_access_pct: self.hot_access_pct.unwrap_or(hot_access),
            hot_space_pct: self.hot_space_pct.unwrap_or(hot_space),
        };
        params.pattern = match self.pattern {
            Some(PatternArg::Random) => Pattern::Random,
            Some(PatternArg::Sequential) => Pattern::Sequential,
            Some(PatternArg::Hotcold) => hot,
            Some(PatternArg::Jesd219) => Pattern::Jesd219,
            None if matches!(params.pattern, Pattern::HotCold { .. }) => hot,
            None => params.pattern,
        };
        if let Some(r) = self.read_pct {
            params.read_pct = r;
        }
        if let Some(s) = self.size_kib {
            params.sizes_kib = vec![(s, 1)];
        }
        if let Some(f) = self.footprint_pct {
            params.footprint_pct = f;
        }
        params.requests = self.requests.or(params.requests);
        params.seed = self.seed.or(params.seed);
        if self.dedup_ratio.is_some() || self.window.is_some() {
            let Some(CopyLoad::Dedup { ratio }) = params.copy else {
                let flag = if self.window.is_some() {
                    "--window"
                } else {
                    "--dedup-ratio"
                };
                return Err(CliError::Input(format!(
                    "{flag}: only with --profile dedup"
                )));
            };
            let ratio = self.dedup_ratio.unwrap_or(ratio);
            params.copy = Some(match self.window {
                None => CopyLoad::Dedup { ratio },
                Some(window) => CopyLoad::Windowed {
                    scheme: match self.dedup_scheme {
                        Some(DedupSchemeArg::Dedup) => Scheme::Dedup(MetaLayout::Log),
                        Some(DedupSchemeArg::DedupTable) => Scheme::Dedup(MetaLayout::Table),
                        Some(DedupSchemeArg::Ccaw) | None => Scheme::Ccaw,
                    },
                    ratio,
                    window,
                },
            });
        }
        Ok(SynthJob {
            profile: self.profile.clone(),
            params,
            qd: self.qd,
            precondition: self.precondition.is_some(),
            precondition_fast: self.precondition == Some(PreconditionMode::Fast),
            verify: self.verify,
            lifetime: false,
        })
    }
}

/// Runs `ftl synth`.
pub fn run(a: SynthArgs) -> Result<(), CliError> {
    if !a.flow.is_empty() {
        return crate::flows::run_synth(a);
    }
    let job = a.job()?;
    let (v, header, out) = execute_outcome(&a.common, &job)?;
    a.common.emit(&v, &header, &out)
}

/// Runs `job` on the drive `common` configures and returns the JSON report
/// and a one-line header for the text summary. `ftl synth` and every
/// experiment cell go through here.
pub fn execute(common: &CommonOpts, job: &SynthJob) -> Result<(Value, String), CliError> {
    execute_outcome(common, job).map(|(v, h, _)| (v, h))
}

/// [`execute`], also returning the run's outcome (for the `--out` files).
pub fn execute_outcome(
    common: &CommonOpts,
    job: &SynthJob,
) -> Result<(Value, String, Outcome), CliError> {
    let zoned = !job.lifetime && job.params.copy.is_none() && !job.precondition;
    let (cfg, plan) = if zoned {
        common.plan_any_interface(job.qd)?
    } else {
        common.plan(job.qd)?
    };
    let zones = match cfg.host.interface {
        sim_harness::config::InterfaceKey::Zns => Some(
            cfg.zone_geometry()
                .map_err(|e| CliError::Input(e.to_string()))?,
        ),
        _ => None,
    };
    // Under ZNS the workload addresses the zone host's application blocks.
    let space = zones.map_or(plan.core.logical_units, |g| {
        ZoneLog::<Synth>::app_units_for(g, 1)
    });
    let spec = job
        .params
        .resolve(plan.core.geometry.unit_bytes(), space, cfg.sim.seed)
        .map_err(CliError::Input)?;
    let precondition = Preconditioning {
        units: spec.units,
        footprint: spec.footprint_units,
        fast: job.precondition_fast,
    };
    let mut zstats = None;
    let mut host_summary = None;
    let (out, life) = if let Some(g) = zones {
        let mut table = vec![Default::default(); g.zones as usize];
        let mut zl =
            ZoneLog::new(Synth::new(spec), g, &mut table, 1, space).map_err(CliError::Input)?;
        let out = common.simulate(&plan, &mut zl, None, job.verify)?;
        zstats = Some(zl.stats);
        (out, None)
    } else if job.lifetime {
        let mut src = Synth::new(SynthSpec {
            requests: u64::MAX,
            ..spec
        });
        let cap = job.params.requests.unwrap_or(u64::MAX);
        let lo = common.lifetime(&plan, &mut src, precondition, cap)?;
        let life = crate::lifetime::life_json(&lo);
        (lo.outcome, Some(life))
    } else if let Some(load) = job.params.copy {
        // The copy generators' tables live beside the drive.
        let engine = plan
            .worst_case_bytes(plan.engine.queue_depth)
            .map_err(|e| CliError::Input(cfg.core_rejection(e).to_string()))?;
        crate::mem_limit::check(
            engine.saturating_add(load.worst_case_bytes(spec.footprint_units, spec.requests)),
            common.max_memory,
            "this configuration and its copy workload",
        )?;
        let mut src = load
            .source(spec.footprint_units, spec.requests, spec.seed)
            .map_err(CliError::Input)?;
        let out = common.simulate(
            &plan,
            src.as_mut(),
            job.precondition.then_some(precondition),
            job.verify,
        )?;
        host_summary = src.summary();
        (out, None)
    } else {
        let mut src = Synth::new(spec);
        let out = common.simulate(
            &plan,
            &mut src,
            job.precondition.then_some(precondition),
            job.verify,
        )?;
        (out, None)
    };
    let p = &job.params;
    let (pattern, hot) = match p.pattern {
        Pattern::Random => ("random", Value::Null),
        Pattern::Sequential => ("sequential", Value::Null),
        Pattern::Jesd219 => ("jesd219", Value::Null),
        Pattern::HotCold {
            hot_access_pct,
            hot_space_pct,
        } => (
            "hotcold",
            json!({"access_pct": hot_access_pct, "space_pct": hot_space_pct}),
        ),
    };
    let idle = match p.idle {
        IdleModel::None => Value::Null,
        IdleModel::Bursty {
            busy_pct,
            period,
            idle_ns,
        } => json!({"busy_pct": busy_pct, "period": period, "idle_ns": idle_ns}),
    };
    let sizes: Vec<Value> = p.sizes_kib.iter().map(|(k, w)| json!([k, w])).collect();
    let copy = match p.copy {
        None => Value::Null,
        Some(CopyLoad::Journal { pages }) => json!({"kind": "journal", "pages": pages}),
        Some(CopyLoad::Dedup { ratio }) => json!({"kind": "dedup", "dedup_ratio": ratio,
            "conversion_ratio": 1.0 - 1.0 / ratio}),
        Some(CopyLoad::Windowed {
            scheme,
            ratio,
            window,
        }) => json!({"kind": "dedup", "dedup_ratio": ratio,
            "conversion_ratio": 1.0 - 1.0 / ratio, "scheme": scheme.name(), "window": window}),
    };
    let input = json!({
        "profile": job.profile,
        "pattern": pattern,
        "hot": hot,
        "read_pct": p.read_pct,
        "size_kib": p.sizes_kib.iter().map(|s| s.0).min().unwrap_or(0),
        "sizes_kib": sizes,
        "idle": idle,
        "copy": copy,
        "requests": spec.requests,
        "footprint_units": spec.footprint_units,
        "queue_depth": plan.engine.queue_depth,
        "precondition": job.precondition,
        "precondition_mode": job.precondition.then_some(if job.precondition_fast { "fast" } else { "full" }),
        "seed": spec.seed,
    });
    let mut v = common.report(&cfg, &out, "workload", input);
    if let (Some(h), Some(w)) = (host_summary, v.get_mut("window")) {
        w["host"] = h;
    }
    if zstats.is_some() {
        add_end_to_end(&mut v, &out, zstats.as_ref());
    }
    if let (Some(life), Some(obj)) = (life, v.as_object_mut()) {
        obj.insert("life".into(), life);
    }
    // A lifetime run stops at the end of life (or its cap), not after
    // `spec.requests`: say how many ran and why it stopped.
    let requests = if job.lifetime {
        let end = v
            .get("life")
            .and_then(|l| l.get("end_reason"))
            .and_then(Value::as_str)
            .unwrap_or("-");
        format!(
            "{} requests run, stopped by {end}{}",
            out.run.requests,
            job.params
                .requests
                .map(|c| format!(" (cap {c})"))
                .unwrap_or_default()
        )
    } else {
        format!("{} requests", spec.requests)
    };
    let header = format!(
        "synthetic {} workload{}: {requests}, {}% reads, QD {}, preset {}\n",
        pattern,
        job.profile
            .as_deref()
            .map(|n| format!(" (profile {n})"))
            .unwrap_or_default(),
        p.read_pct,
        plan.engine.queue_depth,
        common.preset
    );
    Ok((v, header, out))
}

/// Lists the workload profiles (`ftl profiles`).
pub fn list_profiles(a: &PresetsArgs) -> Result<(), CliError> {
    if a.json {
        let list: Vec<Value> = profiles()
            .iter()
            .chain(copy_profiles())
            .map(|p| {
                json!({"name": p.name, "description": p.description, "source": p.source,
                       "read_pct": p.read_pct, "paper_waf": p.paper_waf})
            })
            .collect();
        println!("{}", Value::Array(list));
        return Ok(());
    }
    for p in profiles().iter().chain(copy_profiles()) {
        println!("{:<20} {}", p.name, p.description);
        println!("{:<20} source: {}", "", p.source);
    }
    Ok(())
}

/// Adds `waf_end_to_end` (NAND programs over the application's writes:
/// the zone host's, with its compaction, or the device's) and, with a
/// zone host, its `zns.*` counts to report `v`.
pub fn add_end_to_end(v: &mut Value, out: &Outcome, z: Option<&ZoneHostStats>) {
    let programs = (out.ftl.host_program_units + out.ftl.gc_program_units) as f64;
    let app = z.map_or(out.ftl.host_write_units, |z| z.app_write_units);
    v["waf_end_to_end"] = json!(programs / (app.max(1) as f64));
    if let Some(z) = z {
        v["zns"] = json!({
            "app_write_units": z.app_write_units,
            "compaction_units": z.compaction_units,
            "appends": z.appends,
            "resets": z.resets,
            "refused": z.refused.values().sum::<u64>(),
        });
    }
}

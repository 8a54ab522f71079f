//! Options every run command shares, and how they turn into a configuration and a report.

use std::path::PathBuf;

use clap::Args;
use serde_json::Value;
use sim_harness::config::{presets, SimConfig};
use sim_harness::lifetime::{run_lifetime, LifetimeOutcome, LifetimeSpec};
use sim_harness::report;
use sim_harness::sim::{self, Outcome, Plan, RunSpec};
use sim_harness::workload::RequestSource;

use crate::progress::Progress;
use crate::CliError;

/// `--precondition[=full|fast]`: how a drive reaches steady state before
/// the measured phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PreconditionMode {
    /// Simulate every write: fill the drive, overwrite it twice at random.
    Full,
    /// Build the state full preconditioning reaches directly (fill and
    /// greedy GC's valid-count spread, written onto the medium).
    Fast,
}

impl PreconditionMode {
    /// The mode's name in reports (`workload.precondition_mode`).
    pub fn name(mode: Option<PreconditionMode>) -> Option<&'static str> {
        mode.map(|m| match m {
            PreconditionMode::Full => "full",
            PreconditionMode::Fast => "fast",
        })
    }
}

/// How a run preconditions its drive: overwrite request size and footprint
/// in mapping units (0 = the whole drive), and whether fast.
#[derive(Clone, Copy, Debug)]
pub struct Preconditioning {
    /// Units per overwrite request.
    pub units: u32,
    /// Units the overwrites cover (0 = all).
    pub footprint: u32,
    /// `--precondition=fast`.
    pub fast: bool,
}

impl Preconditioning {
    /// `mode` over the whole drive in single-unit overwrites (trace
    /// replays and flows), or none.
    pub fn whole_drive(mode: Option<PreconditionMode>) -> Option<Preconditioning> {
        mode.map(|m| Preconditioning {
            units: 1,
            footprint: 0,
            fast: m == PreconditionMode::Fast,
        })
    }
}

/// Requests between two end-of-life checks of a lifetime run.
const LIFE_CHUNK_REQUESTS: u64 = 50_000;

/// Options shared by every run command.
#[derive(Args, Debug, Clone, Default)]
pub struct CommonOpts {
    /// Built-in configuration to start from (see `ftl presets`).
    #[arg(long, default_value = "default")]
    pub preset: String,
    /// TOML file applied on top of the preset.
    #[arg(long, value_name = "FILE.toml")]
    pub config: Option<PathBuf>,
    /// Override one configuration key, e.g. `--set ftl.op_ratio=0.28` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print exactly one JSON object on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Write report.json (with the effective config), timeseries.csv and
    /// SVG charts into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Simulated time step of timeseries.csv in milliseconds (default:
    /// adaptive, 500 to 1000 rows per run).
    #[arg(long, value_name = "MS", value_parser = parse_interval_ms)]
    pub interval_ms: Option<f64>,
    /// No progress bar and no summary on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Most memory the run may take (bytes, or with K, M, G or T); a
    /// configuration whose worst case needs more is refused before anything
    /// is allocated [default: the machine's physical RAM].
    #[arg(long, value_name = "SIZE", value_parser = crate::mem_limit::parse_size)]
    pub max_memory: Option<u64>,
}

/// Smallest and largest `--interval-ms`: 1 us to about 11.6 days.
const INTERVAL_MS_RANGE: (f64, f64) = (0.001, 1e9);

/// Parses `--interval-ms`: a finite number of milliseconds within
/// [`INTERVAL_MS_RANGE`]. The one check of the flag, run by the argument
/// parser for every command that takes it (NaN, infinities and 0 fail).
pub fn parse_interval_ms(s: &str) -> Result<f64, String> {
    let (lo, hi) = INTERVAL_MS_RANGE;
    let ms: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of milliseconds"))?;
    if !(lo..=hi).contains(&ms) {
        return Err(format!("{ms} is outside {lo} to {hi} milliseconds"));
    }
    Ok(ms)
}

impl CommonOpts {
    /// The effective configuration: preset, then file, then `--set`s; validated.
    pub fn load_config(&self) -> Result<SimConfig, CliError> {
        let cfg = self.load_unchecked()?;
        cfg.validate().map_err(|e| CliError::Input(e.to_string()))?;
        Ok(cfg)
    }

    /// [`Self::load_config`] without the whole-configuration validation, for
    /// commands that only cost a geometry (it may be too large to simulate).
    pub fn load_unchecked(&self) -> Result<SimConfig, CliError> {
        let mut cfg =
            SimConfig::preset(&self.preset).map_err(|e| CliError::Input(e.to_string()))?;
        if let Some(path) = &self.config {
            let text = sim_harness::config::read_config_text(path)
                .map_err(|e| CliError::Input(e.to_string()))?;
            let name = path.display().to_string();
            // The file overrides the preset key by key.
            let over = SimConfig::from_toml_str(&text, &name)
                .map_err(|e| CliError::Input(e.to_string()))?;
            let given: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                CliError::Input(format!("{name}: {}", e.message()))
            })?;
            for (section, keys) in given {
                if let toml::Value::Table(t) = keys {
                    for (k, _) in t {
                        let key = format!("{section}.{k}");
                        if let Some(v) = over.get(&key) {
                            cfg.apply_set(&format!("{key}={v}"))
                                .map_err(|e| CliError::Input(e.to_string()))?;
                        }
                    }
                }
            }
        }
        for s in &self.set {
            cfg.apply_set(s)
                .map_err(|e| CliError::Input(e.to_string()))?;
        }
        Ok(cfg)
    }

    /// The configuration and run plan, with a `--qd` override applied;
    /// everything validated and the worst-case memory checked against
    /// `--max-memory` before anything is allocated.
    pub fn plan(&self, qd: Option<u32>) -> Result<(SimConfig, Plan), CliError> {
        let (cfg, plan) = self.plan_any_interface(qd)?;
        if cfg.host.interface == sim_harness::config::InterfaceKey::Zns {
            // Only commands that run a zone host take a zoned namespace.
            return Err(CliError::Input(
                "config: key host.interface: zns runs need a zone workload: ftl synth \
                 (without --flow, --precondition, copies or lifetime), ftl replay of a zone \
                 trace (without --flows or --precondition), ftl crash or ftl experiment \
                 placement (docs/placement.md)"
                    .into(),
            ));
        }
        Ok((cfg, plan))
    }

    /// [`Self::plan`] for commands that also run a zoned namespace.
    pub fn plan_any_interface(&self, qd: Option<u32>) -> Result<(SimConfig, Plan), CliError> {
        let mut cfg = self.load_unchecked()?;
        if let Some(qd) = qd {
            cfg.apply_set(&format!("host.queue_depth={qd}"))
                .map_err(|e| CliError::Input(format!("--qd: {e}")))?;
        }
        cfg.validate().map_err(|e| match qd {
            Some(_) if e.key == "host.queue_depth" => CliError::Input(format!("--qd: {e}")),
            _ => CliError::Input(e.to_string()),
        })?;
        let mut plan = Plan::from_config(&cfg).map_err(|e| CliError::Input(e.to_string()))?;
        if let Some(ms) = self.interval_ms {
            plan.engine.sample_step_ns = ((ms * 1e6).round() as u64).max(1);
        }
        self.check_plan(
            &cfg,
            &plan,
            plan.engine.queue_depth,
            1,
            "this configuration",
        )?;
        Ok((cfg, plan))
    }

    /// Checks that `copies` drives of `plan` with `qd` requests outstanding
    /// fit in `--max-memory`, then lets the core lay out its tables once.
    pub fn check_plan(
        &self,
        cfg: &SimConfig,
        plan: &Plan,
        qd: u32,
        copies: u64,
        what: &str,
    ) -> Result<(), CliError> {
        let need = plan
            .worst_case_bytes(qd)
            .map_err(|e| CliError::Input(cfg.core_rejection(e).to_string()))?
            .saturating_mul(copies);
        crate::mem_limit::check(need, self.max_memory, what)?;
        plan.check_core(cfg)
            .map_err(|e| CliError::Input(e.to_string()))
    }

    /// Checks that `plan` (at its queue depth) and reading `inputs` at the
    /// same time fit in `--max-memory`, and returns what the limit leaves
    /// beside them for each input's deduplication tables (`None`: no limit
    /// known). A replay reads every input of a joined trace (and of every
    /// flow) at once, each with its own tables.
    pub fn check_reading(
        &self,
        cfg: &SimConfig,
        plan: &Plan,
        inputs: &[&sim_harness::trace::TraceInput<'_>],
    ) -> Result<Option<u64>, CliError> {
        let engine = plan
            .worst_case_bytes(plan.engine.queue_depth)
            .map_err(|e| CliError::Input(cfg.core_rejection(e).to_string()))?;
        let mut reading = crate::replay_feed::feed_bytes(inputs.len());
        for i in inputs {
            let r = i
                .reading_bytes()
                .map_err(|e| CliError::Input(e.to_string()))?;
            reading = reading.saturating_add(r);
        }
        let need = engine.saturating_add(reading);
        crate::mem_limit::check(
            need,
            self.max_memory,
            "this configuration and reading its trace",
        )?;
        Ok(crate::mem_limit::effective(self.max_memory)
            .map(|(limit, _)| (limit - need) / inputs.len().max(1) as u64))
    }

    /// Refuses `--precondition=fast` on a drive it cannot build (an input
    /// error, before anything runs).
    pub fn check_fast(plan: &Plan, precondition: Option<Preconditioning>) -> Result<(), CliError> {
        match precondition {
            Some(Preconditioning { fast: true, .. }) => {
                match sim_harness::precondition_fast::fast_unsupported(plan) {
                    Some(why) => Err(CliError::Input(format!("--precondition=fast: {why}"))),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Runs `source` on a fresh drive with a progress bar, preconditioned
    /// first as `precondition` says.
    pub fn simulate(
        &self,
        plan: &Plan,
        source: &mut dyn RequestSource,
        precondition: Option<Preconditioning>,
        verify: bool,
    ) -> Result<Outcome, CliError> {
        Self::check_fast(plan, precondition)?;
        let mut progress = Progress::new(source.len_hint(), self.quiet);
        let out = sim::run(
            plan,
            RunSpec {
                precondition: precondition.is_some(),
                precondition_units: precondition.map_or(1, |p| p.units),
                precondition_footprint: precondition.map_or(0, |p| p.footprint),
                precondition_fast: precondition.is_some_and(|p| p.fast),
                verify,
                source,
                progress: &mut |d, ph| progress.update(d, ph),
            },
        )?;
        progress.finish();
        Ok(out)
    }

    /// Runs `source` on a fresh preconditioned drive until its end of life
    /// (see `sim_harness::lifetime`), at most `max_requests` requests,
    /// preconditioned first as `precondition` says.
    pub fn lifetime(
        &self,
        plan: &Plan,
        source: &mut dyn RequestSource,
        precondition: Preconditioning,
        max_requests: u64,
    ) -> Result<LifetimeOutcome, CliError> {
        Self::check_fast(plan, Some(precondition))?;
        let mut progress = Progress::new(None, self.quiet);
        let out = run_lifetime(
            plan,
            LifetimeSpec {
                precondition_units: precondition.units,
                precondition_footprint: precondition.footprint,
                precondition_fast: precondition.fast,
                source,
                chunk_requests: LIFE_CHUNK_REQUESTS,
                max_requests,
                progress: &mut |d, ph| progress.update(d, ph),
            },
        )?;
        progress.finish();
        Ok(out)
    }

    /// The JSON report: run figures plus one section describing the input, the preset and the config.
    pub fn report(&self, cfg: &SimConfig, out: &Outcome, section: &str, input: Value) -> Value {
        let mut extra = serde_json::Map::new();
        extra.insert(section.to_string(), input);
        extra.insert("preset".into(), Value::String(self.preset.clone()));
        extra.insert("config".into(), config_json(cfg));
        report::json_report(out, Value::Object(extra))
    }

    /// Writes `report.json` into `--out`, if given, and with the run's
    /// outcome `o` the time series and charts beside it.
    pub fn write_out(&self, v: &Value, o: Option<&Outcome>) -> Result<(), CliError> {
        if let Some(dir) = &self.out {
            write_dir(dir, v, o)?;
        }
        Ok(())
    }

    /// Prints the report (JSON or summary) and writes it, the time series
    /// and the charts of `o` to `--out`.
    pub fn emit(&self, v: &Value, header: &str, o: &Outcome) -> Result<(), CliError> {
        self.write_out(v, Some(o))?;
        self.print(v, || format!("{header}{}", report::text_summary(v)))
    }

    /// Prints `v` as one JSON object with `--json`, else the text `text`
    /// makes.
    pub fn print(&self, v: &Value, text: impl FnOnce() -> String) -> Result<(), CliError> {
        if self.json {
            println!(
                "{}",
                serde_json::to_string(v).map_err(|e| CliError::Run(e.to_string()))?
            );
        } else {
            print!("{}", text());
        }
        Ok(())
    }
}

/// Writes `report.json` (and with `o` the run files of
/// [`crate::artifacts`]) into `dir`, creating it.
pub fn write_dir(dir: &std::path::Path, v: &Value, o: Option<&Outcome>) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::Run(format!("{}: {e}", dir.display())))?;
    let path = dir.join("report.json");
    let text = serde_json::to_string_pretty(v).map_err(|e| CliError::Run(e.to_string()))?;
    std::fs::write(&path, text).map_err(|e| CliError::Run(format!("{}: {e}", path.display())))?;
    if let Some(o) = o {
        crate::artifacts::write_all(dir, v, o)?;
    }
    Ok(())
}

/// Options of `ftl presets` and `ftl profiles`.
#[derive(Args, Debug)]
pub struct PresetsArgs {
    /// Print the presets as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Lists the built-in configurations.
pub fn list_presets(a: &PresetsArgs) -> Result<(), CliError> {
    if a.json {
        let list: Vec<Value> = presets()
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "description": p.description, "source": p.source}))
            .collect();
        println!("{}", Value::Array(list));
        return Ok(());
    }
    for p in presets() {
        println!("{:<16} {}", p.name, p.description);
        println!("{:<16} source: {}", "", p.source);
    }
    Ok(())
}

/// The configuration as JSON, for the report.
pub fn config_json(cfg: &SimConfig) -> Value {
    let text = cfg.to_toml_string();
    match text.parse::<toml::Table>() {
        Ok(t) => serde_json::to_value(t).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    }
}

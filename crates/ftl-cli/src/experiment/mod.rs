//! `ftl experiment NAME`: runs a registered grid of simulations (cells) on
//! several threads and writes its table, reports and charts.
//!
//! Each cell runs through [`crate::synth::execute`], the path of `ftl
//! synth`, and is deterministic given its configuration and seed, so the
//! results do not depend on `--jobs`.

pub mod cc;
pub mod dawid;
pub mod dawid_area;
pub mod dgcb;
pub mod output;
pub mod placement;
pub mod registry;
pub mod reparo;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use serde_json::Value;
use sim_harness::config::SimConfig;

use crate::common::CommonOpts;
use crate::synth::execute;
use crate::CliError;
use registry::{experiment, experiments, Cell};

/// Options of `ftl experiment`.
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// Experiment to run (see `--list`).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// List the experiments with a one-line description.
    #[arg(long)]
    pub list: bool,
    /// Output directory (required; created if missing): results.csv,
    /// table.md, report.json, SVG charts and, for `dawid` and `cc`, summary.md.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Smoke run: at most 2 channels of one single-plane die, 128 blocks of
    /// at most 96 pages per plane, at most 2000 requests per cell, and the
    /// experiment's own quick settings (`dawid`: 1 MiB write buffer,
    /// translation pages of 64 entries; `longftl`: the wordline model's
    /// 576-page blocks).
    #[arg(long)]
    pub quick: bool,
    /// Override one configuration key in every cell, on top of the cell's own (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Cells run at once (default: the available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Run only the cells whose label contains one of these strings
    /// (repeatable), e.g. `--only "fileserver 0K"`.
    #[arg(long, value_name = "TEXT")]
    pub only: Vec<String>,
    /// Print report.json on stdout instead of the markdown table.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// Requests per cell in a `--quick` run.
const QUICK_REQUESTS: u64 = 2000;

/// `--set`s that shrink the drive of a cell for `--quick` (see `--help`).
fn quick_sets(cfg: &SimConfig) -> Vec<String> {
    let g = &cfg.geometry;
    vec![
        format!("geometry.channels={}", g.channels.min(2)),
        "geometry.dies_per_channel=1".to_string(),
        "geometry.planes_per_die=1".to_string(),
        format!("geometry.blocks_per_plane={}", g.blocks_per_plane.min(128)),
        // 96 is a multiple of every pages-per-wordline (1 to 4).
        format!("geometry.pages_per_block={}", g.pages_per_block.min(96)),
    ]
}

/// Runs `ftl experiment`.
pub fn run(a: ExperimentArgs) -> Result<(), CliError> {
    if a.list {
        for e in experiments() {
            println!("{:<10} {}", e.name, e.description);
        }
        return Ok(());
    }
    let name = a.name.as_deref().unwrap_or_default();
    let exp = experiment(name).map_err(CliError::Input)?;
    let out = a
        .out
        .clone()
        .ok_or_else(|| CliError::Input("ftl experiment: --out DIR is required".into()))?;
    let mut cells = (exp.cells)().map_err(CliError::Input)?;
    if !a.only.is_empty() {
        cells.retain(|c| a.only.iter().any(|o| c.label.contains(o.as_str())));
        if cells.is_empty() {
            return Err(CliError::Input(format!(
                "ftl experiment {name}: no cell label contains {:?}",
                a.only
            )));
        }
    }
    let model = exp.evaluate.is_some();
    let opts = cells
        .iter_mut()
        .map(|c| cell_opts(c, &a, exp, model))
        .collect::<Result<Vec<_>, _>>()?;
    let reports = match exp.evaluate {
        Some(eval) => evaluate_cells(eval, &cells, &opts)?,
        None => run_cells(&cells, &opts, a.jobs, a.quiet)?,
    };
    let (md, json) = output::write_all(&out, exp, &cells, &reports)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string(&json).map_err(|e| CliError::Run(e.to_string()))?
        );
    } else {
        print!("{md}");
    }
    Ok(())
}

/// Reports of a model experiment: each cell's configuration through `eval`.
fn evaluate_cells(
    eval: registry::Evaluate,
    cells: &[Cell],
    opts: &[CommonOpts],
) -> Result<Vec<Value>, CliError> {
    cells
        .iter()
        .zip(opts)
        .map(|(c, o)| {
            let cfg = o.load_config()?;
            eval(&cfg, c).map_err(|e| CliError::Run(format!("cell `{}`: {e}", c.label)))
        })
        .collect()
}

/// The run options of one cell: preset, the cell's `--set`s, the `--quick`
/// shrink and the experiment's own quick `--set`s (not for `model`
/// experiments, which run no workload), then the command line's `--set`s.
/// The configuration is checked here, so a bad key fails before any cell
/// runs.
fn cell_opts(
    c: &mut Cell,
    a: &ExperimentArgs,
    exp: &registry::Experiment,
    model: bool,
) -> Result<CommonOpts, CliError> {
    let located = |e: CliError| match e {
        CliError::Input(m) => CliError::Input(format!("cell `{}`: {m}", c.label)),
        other => other,
    };
    let mut opts = CommonOpts {
        preset: c.preset.clone(),
        set: c.sets.clone(),
        quiet: true,
        ..CommonOpts::default()
    };
    if a.quick && !model {
        let cfg = opts.load_config().map_err(located)?;
        opts.set.extend(quick_sets(&cfg));
        opts.set
            .extend(exp.quick_sets.iter().map(|s| s.to_string()));
        let r = c.job.params.requests.unwrap_or(QUICK_REQUESTS);
        c.job.params.requests = Some(r.min(QUICK_REQUESTS));
    }
    opts.set.extend(a.set.iter().cloned());
    if model {
        // Model experiments build their own run (zoned namespaces too).
        opts.load_config().map_err(located)?;
    } else {
        opts.plan(c.job.qd).map_err(located)?;
    }
    Ok(opts)
}

/// Runs every cell on `jobs` threads; reports come back in cell order, so
/// callers (experiments and sweeps) get results independent of `jobs`.
pub(crate) fn run_cells(
    cells: &[Cell],
    opts: &[CommonOpts],
    jobs: Option<u32>,
    quiet: bool,
) -> Result<Vec<Value>, CliError> {
    let jobs = jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |j| j as usize,
    );
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Value, CliError>>>> =
        Mutex::new((0..cells.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(cells.len()).max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let (Some(cell), Some(o)) = (cells.get(i), opts.get(i)) else {
                    break;
                };
                let t = Instant::now();
                let r = execute(o, &cell.job).map(|(v, _)| v).map_err(|e| match e {
                    CliError::Input(m) => CliError::Input(format!("cell `{}`: {m}", cell.label)),
                    CliError::Run(m) => CliError::Run(format!("cell `{}`: {m}", cell.label)),
                });
                let failed = r.is_err();
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                if !quiet {
                    eprintln!(
                        "[{n}/{}] {}{} ({:.1} s)",
                        cells.len(),
                        cell.label,
                        if failed { " failed" } else { "" },
                        t.elapsed().as_secs_f64()
                    );
                }
                if failed {
                    // Stop handing out cells; the others finish theirs.
                    next.store(cells.len(), Ordering::SeqCst);
                }
            });
        }
    });
    let all = results
        .into_inner()
        .map_err(|_| CliError::Run("a cell thread panicked".into()))?;
    // The first failure in cell order is the one reported.
    if let Some(i) = all.iter().position(|r| matches!(r, Some(Err(_)))) {
        if let Some(Some(Err(e))) = all.into_iter().nth(i) {
            return Err(e);
        }
        return Err(CliError::Run("a cell failed".into()));
    }
    all.into_iter()
        .zip(cells)
        .map(|(r, c)| {
            r.unwrap_or_else(|| Err(CliError::Run(format!("cell `{}` did not run", c.label))))
        })
        .collect()
}

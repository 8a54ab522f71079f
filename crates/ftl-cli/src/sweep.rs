//! `ftl sweep`: runs the cross product of configuration values, workloads and
//! seeds and writes one CSV row per cell, either locally on threads or as
//! one shell command per cell (for GNU parallel or a Slurm array) whose
//! per-cell files `--merge` turns into the same CSV.
//!
//! Cells run through the experiment runner ([`crate::experiment::run_cells`]),
//! which runs each as `ftl synth` does and returns reports in cell order, so
//! the CSV does not depend on `--jobs` or on how the cells were scheduled.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};
use sim_harness::config::SimConfig;
use sim_harness::profiles::profile;

use crate::common::{CommonOpts, PreconditionMode};
use crate::experiment::output::{csv, lookup, text, Table};
use crate::experiment::registry::Cell;
use crate::experiment::run_cells;
use crate::synth::SynthJob;
use crate::CliError;

/// Options of `ftl sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Built-in configuration every cell starts from (see `ftl presets`).
    #[arg(long, default_value = "default")]
    pub preset: String,
    /// A configuration key and the values it takes, e.g.
    /// `--vary ftl.op_ratio=0.07,0.14,0.28` (repeatable; the grid is the
    /// cross product, the first `--vary` varying slowest).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub vary: Vec<String>,
    /// Fix one configuration key in every cell, e.g. `--set geometry.channels=2` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Workload profile (see `ftl profiles`); repeatable or comma-separated.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub workload: Vec<String>,
    /// Values of `sim.seed`, e.g. `--seeds 1,2,3` (default: the configuration's seed).
    #[arg(long, value_name = "S1,S2,...", value_delimiter = ',')]
    pub seeds: Vec<u64>,
    /// Requests per cell.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REQUESTS)]
    pub requests: u64,
    /// Precondition every cell as `ftl synth --precondition[=full|fast]`
    /// does: bare, fill the logical space sequentially, overwrite the
    /// footprint randomly twice, then reset counters.
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1,
          default_missing_value = "full", require_equals = true)]
    pub precondition: Option<PreconditionMode>,
    /// Cells run at once (default: the available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Output: the CSV (direct run and `--merge`), or with `--cell` the cell's JSON file.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print one self-contained shell command per cell, each writing
    /// `DIR/cell-NNNN.json`, instead of running the cells.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["merge", "cell"])]
    pub emit_jobs: Option<PathBuf>,
    /// Run only cell number N (from 0) of the sweep and write it to `--out` as JSON.
    #[arg(long, value_name = "N", conflicts_with = "merge")]
    pub cell: Option<usize>,
    /// Merge the per-cell files of `--emit-jobs DIR` into the `--out` CSV.
    #[arg(long, value_name = "DIR")]
    pub merge: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// Requests per cell by default: a few seconds per cell on the default preset.
const DEFAULT_REQUESTS: u64 = 20_000;

/// Report keys written after the cell's own columns (missing = empty).
/// Wall-clock figures are left out: they differ from run to run.
const REPORT_KEYS: &[&str] = &[
    "perf.iops",
    "perf.throughput_mib_s",
    "perf.latency_us.mean",
    "perf.latency_us.p50",
    "perf.latency_us.p99",
    "perf.latency_us.p999",
    "perf.latency_us.max",
    "perf.sim_seconds",
    "waf",
    "host.requests",
    "nand.programs",
    "nand.erases",
    "nand.copybacks",
    "nand.offchip_copies",
    "ftl.gc_victims",
    "integrity.read_checks",
    "integrity.mismatches",
    "integrity.uncorrectable_reads",
];

/// One `--vary`: a key and its values.
#[derive(Clone, Debug, PartialEq)]
struct Axis {
    key: String,
    values: Vec<String>,
}

/// Parses and checks one `--vary KEY=V1,V2,...` against the preset.
fn parse_vary(arg: &str, base: &SimConfig) -> Result<Axis, CliError> {
    let bad = |why: &str| CliError::Input(format!("--vary {arg}: {why}"));
    let (key, list) = arg
        .split_once('=')
        .ok_or_else(|| bad("expected KEY=V1,V2,..."))?;
    let key = key.trim();
    if base.get(key).is_none() {
        return Err(bad(&format!("unknown configuration key `{key}`")));
    }
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(bad("empty value in the list"));
    }
    Ok(Axis {
        key: key.to_string(),
        values,
    })
}

/// Every point of the grid, as the values of the axes in axis order; the
/// first axis varies slowest.
fn grid(axes: &[Axis]) -> Vec<Vec<String>> {
    axes.iter().fold(vec![Vec::new()], |points, axis| {
        points
            .iter()
            .flat_map(|p| {
                axis.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v.clone());
                    q
                })
            })
            .collect()
    })
}

/// A sweep resolved into cells, ready to run.
struct Sweep {
    /// The `--vary` axes, in command-line order.
    axes: Vec<Axis>,
    /// The cells in row order.
    cells: Vec<Cell>,
    /// Run options of each cell.
    opts: Vec<CommonOpts>,
}

/// The sweep's cells in row order (grid, then workload, then seed), each
/// with its run options, checked before anything runs.
fn cells(a: &SweepArgs) -> Result<Sweep, CliError> {
    let base = CommonOpts {
        preset: a.preset.clone(),
        set: a.set.clone(),
        quiet: true,
        ..CommonOpts::default()
    };
    let base_cfg = base.load_unchecked()?;
    let axes = a
        .vary
        .iter()
        .map(|v| parse_vary(v, &base_cfg))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.key == axis.key) {
            return Err(CliError::Input(format!(
                "--vary {}: key given twice",
                axis.key
            )));
        }
    }
    if a.workload.is_empty() {
        return Err(CliError::Input(
            "ftl sweep: at least one --workload is required (see `ftl profiles`)".into(),
        ));
    }
    let mut jobs = Vec::new();
    for w in &a.workload {
        let mut params = profile(w)
            .map_err(|e| {
                let why = e.trim_start_matches("--profile: ");
                CliError::Input(format!("--workload {w}: {why}"))
            })?
            .params();
        params.requests = Some(a.requests);
        jobs.push(SynthJob {
            profile: Some(w.clone()),
            params,
            qd: None,
            precondition: a.precondition.is_some(),
            precondition_fast: a.precondition == Some(PreconditionMode::Fast),
            verify: false,
            lifetime: false,
        });
    }
    let seeds: Vec<Option<u64>> = if a.seeds.is_empty() {
        vec![None]
    } else {
        a.seeds.iter().copied().map(Some).collect()
    };
    let (mut cells, mut opts) = (Vec::new(), Vec::new());
    for point in grid(&axes) {
        let sets: Vec<String> = axes
            .iter()
            .zip(&point)
            .map(|(axis, v)| format!("{}={v}", axis.key))
            .collect();
        for job in &jobs {
            for seed in &seeds {
                let mut o = base.clone();
                o.set.extend(sets.iter().cloned());
                o.set.extend(seed.map(|s| format!("sim.seed={s}")));
                let workload = job.profile.clone().unwrap_or_default();
                let mut label = sets.join(" ");
                label.push_str(&format!(" {workload}"));
                if let Some(s) = seed {
                    label.push_str(&format!(" seed={s}"));
                }
                let label = label.trim().to_string();
                o.plan(job.qd).map_err(|e| match e {
                    CliError::Input(m) => CliError::Input(format!("cell `{label}`: {m}")),
                    other => other,
                })?;
                cells.push(Cell {
                    label,
                    group: workload.clone(),
                    series: String::new(),
                    x: None,
                    preset: a.preset.clone(),
                    sets: o.set.clone(),
                    workload,
                    job: job.clone(),
                    attrs: axes
                        .iter()
                        .zip(&point)
                        .map(|(axis, v)| (axis.key.clone(), v.clone()))
                        .collect(),
                });
                opts.push(o);
            }
        }
    }
    Ok(Sweep { axes, cells, opts })
}

/// The CSV columns: the varied keys, workload, seed, then [`REPORT_KEYS`].
fn columns(axes: &[Axis]) -> Vec<String> {
    let mut c: Vec<String> = axes.iter().map(|a| a.key.clone()).collect();
    c.push("workload".into());
    c.push("seed".into());
    c.extend(REPORT_KEYS.iter().map(|k| k.to_string()));
    c
}

/// One CSV row: the cell's values, then the report's (the seed as run).
fn row(cell: &Cell, report: &Value) -> Vec<String> {
    let mut r: Vec<String> = cell.attrs.iter().map(|(_, v)| v.clone()).collect();
    r.push(cell.workload.clone());
    r.push(text(lookup(report, "config.sim.seed")));
    r.extend(REPORT_KEYS.iter().map(|k| text(lookup(report, k))));
    r
}

/// Writes `body` to `path`, creating its directory.
fn write(path: &Path, body: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Run(format!("{}: {e}", dir.display())))?;
    }
    std::fs::write(path, body).map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
}

/// `--out`, which every mode but `--emit-jobs` needs.
fn out_path(a: &SweepArgs) -> Result<&Path, CliError> {
    a.out
        .as_deref()
        .ok_or_else(|| CliError::Input("ftl sweep: --out FILE is required".into()))
}

/// Runs `ftl sweep`.
pub fn run(a: SweepArgs) -> Result<(), CliError> {
    if let Some(dir) = &a.merge {
        let table = merge(dir)?;
        return write(out_path(&a)?, &csv(&table));
    }
    let Sweep { axes, cells, opts } = cells(&a)?;
    if let Some(dir) = &a.emit_jobs {
        return emit_jobs(&a, dir, cells.len());
    }
    let out = out_path(&a)?;
    if let Some(i) = a.cell {
        let (Some(cell), Some(o)) = (cells.get(i), opts.get(i)) else {
            return Err(CliError::Input(format!(
                "--cell {i}: the sweep has {} cells",
                cells.len()
            )));
        };
        let report = run_cells(
            std::slice::from_ref(cell),
            std::slice::from_ref(o),
            Some(1),
            true,
        )?;
        let v = json!({
            "cell": i,
            "cells": cells.len(),
            "columns": columns(&axes),
            "row": row(cell, &report[0]),
        });
        let body = serde_json::to_string(&v).map_err(|e| CliError::Run(e.to_string()))?;
        return write(out, &format!("{body}\n"));
    }
    let reports = run_cells(&cells, &opts, a.jobs, a.quiet)?;
    let table = Table {
        columns: columns(&axes),
        rows: cells.iter().zip(&reports).map(|(c, r)| row(c, r)).collect(),
    };
    write(out, &csv(&table))
}

/// File name of cell `i` of `n`: zero-padded so names sort in cell order.
fn cell_file(i: usize, n: usize) -> String {
    let width = n.saturating_sub(1).to_string().len().max(4);
    format!("cell-{i:0width$}.json")
}

/// Quotes a word for `sh` when it needs it.
fn sh_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=,:+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Prints one `ftl sweep --cell` command per cell; runs nothing.
fn emit_jobs(a: &SweepArgs, dir: &Path, n: usize) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::Run(format!("{}: {e}", dir.display())))?;
    let exe = std::env::current_exe().map_err(|e| CliError::Run(format!("ftl binary: {e}")))?;
    let mut common = vec![
        exe.display().to_string(),
        "sweep".into(),
        "--quiet".into(),
        "--preset".into(),
        a.preset.clone(),
    ];
    let flag = |name: &str, vals: &[String]| -> Vec<String> {
        vals.iter()
            .flat_map(|v| [name.to_string(), v.clone()])
            .collect()
    };
    common.extend(flag("--set", &a.set));
    common.extend(flag("--vary", &a.vary));
    common.extend(flag("--workload", &a.workload));
    if !a.seeds.is_empty() {
        let seeds: Vec<String> = a.seeds.iter().map(u64::to_string).collect();
        common.extend(["--seeds".to_string(), seeds.join(",")]);
    }
    common.extend(["--requests".to_string(), a.requests.to_string()]);
    if let Some(mode) = PreconditionMode::name(a.precondition) {
        common.push(format!("--precondition={mode}"));
    }
    for i in 0..n {
        let out = dir.join(cell_file(i, n)).display().to_string();
        let mut words = common.clone();
        words.extend(["--cell".to_string(), i.to_string(), "--out".into(), out]);
        let line: Vec<String> = words.iter().map(|w| sh_quote(w)).collect();
        println!("{}", line.join(" "));
    }
    Ok(())
}

/// Reads the per-cell files of `dir` back into the sweep's table, checking
/// that every cell is there exactly once and that all agree on the columns.
fn merge(dir: &Path) -> Result<Table, CliError> {
    let bad = |m: String| CliError::Input(format!("--merge {}: {m}", dir.display()));
    let entries = std::fs::read_dir(dir).map_err(|e| bad(e.to_string()))?;
    let mut found: Vec<(u64, u64, Vec<String>, Vec<String>)> = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| bad(e.to_string()))?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !(name.starts_with("cell-") && name.ends_with(".json")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| bad(format!("{name}: {e}")))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| bad(format!("{name}: {e}")))?;
        let strings = |k: &str| -> Option<Vec<String>> {
            v.get(k)?
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        let parsed = (|| {
            Some((
                v.get("cell")?.as_u64()?,
                v.get("cells")?.as_u64()?,
                strings("columns")?,
                strings("row")?,
            ))
        })();
        found.push(parsed.ok_or_else(|| bad(format!("{name}: not a sweep cell file")))?);
    }
    found.sort_by_key(|f| f.0);
    let Some(first) = found.first() else {
        return Err(bad("no cell-*.json files".into()));
    };
    let (n, columns) = (first.1, first.2.clone());
    for (i, (cell, cells, cols, row)) in found.iter().enumerate() {
        if *cell != i as u64 {
            return Err(bad(format!("cell {i} is missing or given twice")));
        }
        if *cells != n || *cols != columns || row.len() != columns.len() {
            return Err(bad(format!("cell {i} is from a different sweep")));
        }
    }
    if found.len() as u64 != n {
        return Err(bad(format!("{} of {n} cells present", found.len())));
    }
    Ok(Table {
        columns,
        rows: found.into_iter().map(|f| f.3).collect(),
    })
}

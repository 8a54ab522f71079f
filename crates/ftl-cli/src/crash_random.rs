//! `ftl crash --random-config N`: the flags, the text and the JSON report
//! of a power-cut sweep over drawn configurations (the sweep itself is
//! `sim_harness::crash::random_config`).

use std::sync::Mutex;

use serde_json::{json, Value};
use sim_harness::crash::random_config::{
    run_random, shrink_failures, Cell, CellOutcome, RandomReport, RandomSpec,
};

use crate::crash::{failure_line, report_json, CrashArgs};
use crate::progress::Progress;
use crate::CliError;

/// Runs `n` drawn cells. Exit status 1 when any cell failed (lost or
/// invalid data, a mapping mismatch, a capacitor overrun, an internal
/// error); refused cells are not failures.
pub fn run(a: &CrashArgs, n: usize) -> Result<(), CliError> {
    check_flags(n, a.jobs)?;
    let spec = RandomSpec {
        cells: n,
        seed: a.seed,
        cuts: a.cuts,
        jobs: a.jobs,
    };
    let progress = Mutex::new(Progress::new(Some(n as u64), a.common.quiet));
    let report = run_random(&spec, &|done| {
        if let Ok(mut p) = progress.lock() {
            p.update(done, "run");
        }
    })
    .map_err(CliError::Run)?;
    if let Ok(p) = progress.lock() {
        p.finish();
    }
    let shrunk = if a.shrink {
        let p = Mutex::new(Progress::new(Some(report.failed_cells), a.common.quiet));
        let s = shrink_failures(&report, a.cuts, a.jobs, &|done| {
            if let Ok(mut p) = p.lock() {
                p.update(done, "shrink");
            }
        })
        .map_err(CliError::Run)?;
        if let Ok(p) = p.lock() {
            p.finish();
        }
        s
    } else {
        Vec::new()
    };
    let v = report_value(&spec, &report, &shrunk);
    a.common.write_out(&v, None)?;
    a.common.print(&v, || text(&spec, &report, &shrunk))?;
    if report.failed_cells > 0 {
        return Err(CliError::Run(format!(
            "{} of {} cells failed ({} with an internal error); replay each with the command printed for it",
            report.failed_cells, n, report.error_cells
        )));
    }
    Ok(())
}

/// Refuses counts of zero (clap refuses the flags a drawn cell sets itself).
fn check_flags(n: usize, jobs: usize) -> Result<(), CliError> {
    if n == 0 {
        return Err(CliError::Input("--random-config must be at least 1".into()));
    }
    if jobs == 0 {
        return Err(CliError::Input("--jobs must be at least 1".into()));
    }
    Ok(())
}

/// One cell's result word and detail.
fn verdict(o: &CellOutcome) -> (&'static str, String) {
    match o {
        CellOutcome::Refused(why) => ("refused", why.clone()),
        CellOutcome::Error(e) => ("error", e.clone()),
        CellOutcome::Ran(r) if r.failed() => ("failed", failure_line(r)),
        CellOutcome::Ran(r) => (
            "ok",
            format!("{} cuts, {} units checked", r.cuts, r.units_checked),
        ),
    }
}

/// The JSON report: the summed figures at the usual keys, the cell
/// counts, the coverage table and every cell.
pub fn report_value(spec: &RandomSpec, r: &RandomReport, shrunk: &[(usize, Cell)]) -> Value {
    let mut v = report_json(&r.totals);
    let cells: Vec<Value> = r
        .cells
        .iter()
        .map(|c| {
            let (result, detail) = verdict(&c.outcome);
            let mut cell = json!({
                "index": c.cell.index,
                "preset": c.cell.preset,
                "set": c.cell.sets,
                "seed": c.cell.workload.seed,
                "workload": {
                    "ops_per_cut": c.cell.workload.ops_per_cut,
                    "span": c.cell.workload.span,
                    "mount_cut_prob": c.cell.workload.mount_cut_prob,
                    "copy_share": c.cell.workload.copy_share,
                    "shutdown_prob": c.cell.workload.shutdown_prob,
                    "prefill": !c.cell.workload.no_fill,
                },
                "result": result,
                "replay": c.cell.replay_command(spec.cuts),
            });
            if let Value::Object(m) = &mut cell {
                match &c.outcome {
                    CellOutcome::Ran(rep) => {
                        if let Value::Object(f) = report_json(rep) {
                            m.extend(f);
                        }
                    }
                    CellOutcome::Refused(_) => {
                        m.insert("refused".into(), Value::String(detail));
                    }
                    CellOutcome::Error(_) => {
                        m.insert("error".into(), Value::String(detail));
                    }
                }
                if let Some((_, small)) = shrunk.iter().find(|(i, _)| *i == c.cell.index) {
                    m.insert(
                        "shrunk".into(),
                        json!({
                            "set": small.sets,
                            "replay": small.replay_command(spec.cuts),
                        }),
                    );
                }
            }
            cell
        })
        .collect();
    let coverage: serde_json::Map<String, Value> = r
        .coverage
        .iter()
        .map(|a| {
            let values: serde_json::Map<String, Value> = a
                .values
                .iter()
                .map(|(val, n)| {
                    (
                        val.to_string(),
                        json!({"drawn": n.drawn, "ran": n.ran, "failed": n.failed}),
                    )
                })
                .collect();
            (a.key.to_string(), Value::Object(values))
        })
        .collect();
    if let Value::Object(m) = &mut v {
        if let Some(Value::Object(c)) = m.get_mut("crash") {
            c.insert("cells".into(), json!(r.cells.len()));
            c.insert("refused_cells".into(), json!(r.refused_cells));
            c.insert("failed_cells".into(), json!(r.failed_cells));
            c.insert("error_cells".into(), json!(r.error_cells));
        }
        m.insert(
            "random_config".into(),
            json!({"cells": spec.cells, "seed": spec.seed, "cuts": spec.cuts, "jobs": spec.jobs}),
        );
        m.insert("coverage".into(), Value::Object(coverage));
        m.insert("cells".into(), Value::Array(cells));
    }
    v
}

/// The text report: one line per cell, the replay of every failing cell,
/// the coverage table and the totals.
pub fn text(spec: &RandomSpec, r: &RandomReport, shrunk: &[(usize, Cell)]) -> String {
    let mut s = format!(
        "crash --random-config {}: seed {}, {} cuts per cell\n",
        spec.cells, spec.seed, spec.cuts
    );
    for c in &r.cells {
        let (result, detail) = verdict(&c.outcome);
        s.push_str(&format!(
            "cell {:>4}  {:<14} {:<8} {detail}\n",
            c.cell.index, c.cell.preset, result
        ));
    }
    let failing: Vec<_> = r.cells.iter().filter(|c| c.failed()).collect();
    if !failing.is_empty() {
        s.push_str("\nfailing cells (each replays alone):\n");
        for c in failing {
            let (result, detail) = verdict(&c.outcome);
            s.push_str(&format!(
                "cell {} seed {} {result} ({detail}):\n  {}\n",
                c.cell.index,
                c.cell.workload.seed,
                c.cell.replay_command(spec.cuts)
            ));
            if let Some((_, small)) = shrunk.iter().find(|(i, _)| *i == c.cell.index) {
                s.push_str(&format!("  shrunk: {}\n", small.replay_command(spec.cuts)));
            }
        }
    }
    s.push_str("\ncoverage (value: drawn/ran/failed)\n");
    for a in &r.coverage {
        let vals: Vec<String> = a
            .values
            .iter()
            .map(|(v, n)| format!("{v}: {}/{}/{}", n.drawn, n.ran, n.failed))
            .collect();
        s.push_str(&format!("  {:<54} {}\n", a.key, vals.join("  ")));
    }
    let t = &r.totals;
    s.push_str(&format!(
        "\ncells {}: {} ran, {} refused, {} failed ({} internal errors)\n\
         cuts {}, lost acknowledged {}, invalid reads {}, mapping mismatches {}, capacitor overruns {}, units checked {}\n",
        r.cells.len(),
        r.cells.len() as u64 - r.refused_cells - r.error_cells,
        r.refused_cells,
        r.failed_cells,
        r.error_cells,
        t.cuts,
        t.lost_acknowledged,
        t.invalid_reads,
        t.mapping_mismatches,
        t.capacitor_overruns,
        t.units_checked,
    ));
    s
}

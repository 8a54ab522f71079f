//! The working-area axis of `ftl experiment dawid`: 4 KiB random writes
//! over 12.5, 30, 60 and 100 % of the exposed drive with garbage
//! collection running, at protected ratios of 1, 10 and 100 %, FIFO and
//! LIDF. Each cell first fills the whole drive and overwrites its area
//! twice (`--precondition`), so GC runs in every cell, then writes
//! [`super::dawid::VOLUME`] times its area. Every cell is normalised both
//! to the same policy at 100 % over the same area and to FIFO at 100 %.

use serde_json::Value;
use sim_harness::config::SimConfig;
use sim_harness::profiles::WorkloadParams;
use sim_harness::workload::Pattern;

use super::dawid::{POLICIES, PRESET, VOLUME};
use super::output::lookup;
use super::registry::Cell;
use crate::synth::SynthJob;

/// Workload name of the area cells.
pub const WORKLOAD: &str = "rand-write-area";

/// Working areas, percent of the exposed capacity.
pub const AREAS_PCT: [f64; 4] = [12.5, 30.0, 60.0, 100.0];

/// Protected ratios of the area cells, percent.
pub const RATIOS_PCT: [u32; 3] = [1, 10, 100];

/// The area cells, groups `rand-write-area <area>% <policy>`.
pub fn cells(sets: &[&str]) -> Result<Vec<Cell>, String> {
    let mut cfg = SimConfig::preset(PRESET).map_err(|e| e.to_string())?;
    for s in sets {
        cfg.apply_set(s).map_err(|e| e.to_string())?;
    }
    let logical = cfg
        .to_core_config()
        .map_err(|e| e.to_string())?
        .logical_units;
    let mut out = Vec::new();
    for area in AREAS_PCT {
        let units = (f64::from(logical) * area / 100.0) as u64;
        let params = WorkloadParams {
            pattern: Pattern::Random,
            read_pct: 0,
            sizes_kib: vec![(4, 1)],
            footprint_pct: area,
            requests: Some(VOLUME * units),
            ..WorkloadParams::default()
        };
        for (series, policy) in POLICIES {
            for pct in RATIOS_PCT {
                let mut s: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
                s.push(format!("buffer.flush_policy={policy}"));
                s.push(format!(
                    "buffer.map_protect_ratio={}",
                    f64::from(pct) / 100.0
                ));
                out.push(Cell {
                    label: format!("{WORKLOAD} {area}% {series} {pct}%"),
                    group: format!("{WORKLOAD} {area}% {series}"),
                    series: series.to_string(),
                    x: Some(f64::from(pct)),
                    preset: PRESET.to_string(),
                    sets: s,
                    workload: WORKLOAD.to_string(),
                    job: SynthJob {
                        precondition: true,
                        ..SynthJob::of(params.clone())
                    },
                    attrs: vec![
                        ("protected_pct".into(), pct.to_string()),
                        ("policy".into(), series.to_string()),
                        ("area_pct".into(), area.to_string()),
                    ],
                });
            }
        }
    }
    Ok(out)
}

/// IOPS of the area cell `area`, `series`, `pct`, if it ran.
fn iops(cells: &[Cell], reports: &[Value], area: f64, series: &str, pct: u32) -> Option<f64> {
    let group = format!("{WORKLOAD} {area}% {series}");
    cells
        .iter()
        .zip(reports)
        .find(|(c, _)| c.group == group && c.x == Some(f64::from(pct)))
        .and_then(|(_, r)| lookup(r, "perf.iops").and_then(Value::as_f64))
}

/// The area table: a row per area and ratio, each policy's IOPS over its
/// own 100 % cell and over FIFO's 100 % cell of the same area.
pub fn table(cells: &[Cell], reports: &[Value]) -> Option<String> {
    let mut md = String::from(
        "### 4 KiB random writes with GC running, over the working area (`rand-write-area`)\n\n\
         | area | protected ratio | FIFO IOPS | LIDF IOPS | FIFO / FIFO 100% | LIDF / LIDF 100% | \
         LIDF / FIFO 100% |\n|---|---|---|---|---|---|---|\n",
    );
    let mut any = false;
    for area in AREAS_PCT {
        let fifo_full = iops(cells, reports, area, "FIFO", 100);
        let lidf_full = iops(cells, reports, area, "LIDF", 100);
        for pct in RATIOS_PCT {
            let f = iops(cells, reports, area, "FIFO", pct);
            let l = iops(cells, reports, area, "LIDF", pct);
            any |= f.is_some() || l.is_some();
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.3}", a / b),
                _ => String::new(),
            };
            let n = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_default();
            md.push_str(&format!(
                "| {area}% | {pct}% | {} | {} | {} | {} | {} |\n",
                n(f),
                n(l),
                ratio(f, fifo_full),
                ratio(l, lidf_full),
                ratio(l, fifo_full),
            ));
        }
    }
    md.push('\n');
    any.then_some(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_area_policy_and_ratio_runs_preconditioned_and_normalises() {
        let c = cells(&["ftl.map_entries_per_page=1020"]).unwrap();
        assert_eq!(c.len(), AREAS_PCT.len() * 2 * RATIOS_PCT.len());
        assert!(c.iter().all(|c| c.job.precondition));
        let reports: Vec<Value> = c
            .iter()
            .map(|c| {
                let x = c.x.unwrap();
                let base = if c.series == "FIFO" { 100.0 } else { 200.0 };
                serde_json::json!({"perf": {"iops": base * x}})
            })
            .collect();
        let t = table(&c, &reports).unwrap();
        // LIDF at 1 %: 200 of its own 20,000 and of FIFO's 10,000.
        assert!(
            t.contains("| 12.5% | 1% | 100 | 200 | 0.010 | 0.010 | 0.020 |"),
            "{t}"
        );
        assert!(
            t.contains("| 100% | 100% | 10000 | 20000 | 1.000 | 1.000 | 2.000 |"),
            "{t}"
        );
        assert!(table(&c[..0], &reports[..0]).is_none());
    }
}

//! `ftl experiment cc`: copyless copy (seed 003 §III). Journaling and
//! copy-assisted writing (dedup ratios 1, 1.4, 2, 4, 8), each with copies
//! served by remapping and physically (read and write inside the device).
//!
//! Every cell runs the `journal` or `dedup` profile on the `default` preset
//! scaled to 2 channels x 2 dies x 2 planes of 128 blocks (1 GiB), 8-bit
//! reference counts, 60 000 requests, queue depth 32, and verifies every
//! unit at the end. Journal cells are preconditioned (GC runs); dedup cells
//! start from a fresh drive, like the paper's 120 GB volume on a 1 TB SSD,
//! so the FTL's own write amplification does not change with R.
//! `copy.write_mib_s` is the host's write rate counting copied units (a
//! copy replaces a write); its `.norm` column divides by the same copy mode
//! at R = 1 (no copies), so for dedup it is the speed-up the paper expects
//! to track `1 / (1 - conversion ratio)`.
//!
//! The window cells (seed 003 §IV, Figs. 4-5) group the same dedup user
//! writes into windows of 1, 10, 100 and 1000, each ending in a flush, at
//! dedup ratios 2 and 8, under four host schemes: CCAW with copies remapped
//! (`ccaw`) or copied physically (`ccaw-physical`), and host-side
//! deduplication with its metadata in a log (`dedup`, the strongest form)
//! or in tables updated in place (`dedup-table`, OrderMergeDedup's layout)
//! ([`sim_harness::dedup_window`]). `window.user_write_mib_s.norm` divides
//! by `dedup` in the same window and ratio, the paper's CCAW/DEDUP.

use std::path::Path;

use serde_json::Value;
use sim_harness::copy_load::CopyLoad;
use sim_harness::dedup_window::{MetaLayout, Scheme};
use sim_harness::profiles::profile;

use super::registry::Cell;
use crate::chart::{self, Axes, XySeries};
use crate::synth::SynthJob;

/// Report keys collected.
pub const KEYS: &[&str] = &[
    "copy.write_mib_s",
    "copy.waf",
    "nand.programs",
    "copy.commands",
    "copy.units",
    "copy.remapped_units",
    "copy.fallback_physical",
    "host.write_units",
    "perf.latency_us.p99",
    "integrity.read_checks",
    "integrity.mismatches",
    "window.user_write_mib_s",
    "window.latency_us.p50",
    "window.latency_us.p80",
    "perf.flush_latency_us.mean",
    "window.host.metadata_writes",
    "window.host.flushes",
];

/// Drive of every cell.
const SETS: [&str; 5] = [
    "geometry.channels=2",
    "geometry.dies_per_channel=2",
    "geometry.blocks_per_plane=128",
    "copy.refcount_bits=8",
    "copy.shadow_oob_entries=262144",
];

/// Requests per cell.
const REQUESTS: u64 = 60_000;

/// Deduplication ratios (1: the write-only baseline).
pub const RATIOS: [f64; 5] = [1.0, 1.4, 2.0, 4.0, 8.0];

/// Window sizes (user writes per flush) of the window cells.
pub const WINDOWS: [u32; 4] = [1, 10, 100, 1000];

/// Dedup ratios of the window cells.
pub const WINDOW_RATIOS: [f64; 2] = [2.0, 8.0];

/// Host schemes of the window cells: (series, copy mode, scheme).
const SCHEMES: [(&str, &str, Scheme); 4] = [
    ("ccaw", "copy.mode=remap", Scheme::Ccaw),
    ("ccaw-physical", "copy.mode=physical", Scheme::Ccaw),
    ("dedup", "copy.mode=remap", Scheme::Dedup(MetaLayout::Log)),
    (
        "dedup-table",
        "copy.mode=remap",
        Scheme::Dedup(MetaLayout::Table),
    ),
];

/// CCAW over DEDUP throughput the paper gives (Sec. IV): (ratio, window,
/// gain).
const PAPER: [(f64, u32, f64); 5] = [
    (2.0, 1, 3.1),
    (2.0, 10, 2.3),
    (2.0, 100, 2.2),
    (2.0, 1000, 2.0),
    (8.0, 10, 4.39),
];

/// Copy modes compared: (series, `--set`).
const MODES: [(&str, &str); 2] = [
    ("remap", "copy.mode=remap"),
    ("physical", "copy.mode=physical"),
];

fn job(name: &str, copy: CopyLoad, precondition: bool) -> Result<SynthJob, String> {
    let mut params = profile(name)?.params();
    params.copy = Some(copy);
    params.requests = Some(REQUESTS);
    Ok(SynthJob {
        profile: Some(name.to_string()),
        params,
        qd: None,
        precondition,
        precondition_fast: false,
        verify: true,
        lifetime: false,
    })
}

fn sets(mode: &str) -> Vec<String> {
    SETS.iter()
        .map(|s| s.to_string())
        .chain(std::iter::once(mode.to_string()))
        .collect()
}

/// The grid: journal per mode, then dedup per mode and ratio. Groups are
/// `<workload> <mode>` so the normalisation baseline (`R=1`, the series of
/// the ratio-1 dedup cell and of no journal cell) is per mode.
pub fn cells() -> Result<Vec<Cell>, String> {
    let mut cells = Vec::new();
    for (mode, set) in MODES {
        cells.push(Cell {
            label: format!("journal {mode}"),
            group: "journal".to_string(),
            series: mode.to_string(),
            x: None,
            preset: "default".to_string(),
            sets: sets(set),
            workload: "journal".to_string(),
            job: job(
                "journal",
                CopyLoad::Journal {
                    pages: sim_harness::profiles::JOURNAL_PAGES,
                },
                true,
            )?,
            attrs: vec![("dedup_ratio".into(), String::new())],
        });
    }
    for (mode, set) in MODES {
        for r in RATIOS {
            cells.push(Cell {
                label: format!("dedup {mode} R={r}"),
                group: format!("dedup {mode}"),
                series: format!("R={r}"),
                x: Some(r),
                preset: "default".to_string(),
                sets: sets(set),
                workload: "dedup".to_string(),
                job: job("dedup", CopyLoad::Dedup { ratio: r }, false)?,
                attrs: vec![("dedup_ratio".into(), r.to_string())],
            });
        }
    }
    for r in WINDOW_RATIOS {
        for w in WINDOWS {
            for (series, set, scheme) in SCHEMES {
                cells.push(Cell {
                    label: format!("window R={r} W={w} {series}"),
                    group: format!("window R={r} W={w}"),
                    series: series.to_string(),
                    x: None,
                    preset: "default".to_string(),
                    sets: sets(set),
                    workload: "dedup-window".to_string(),
                    job: job(
                        "dedup",
                        CopyLoad::Windowed {
                            scheme,
                            ratio: r,
                            window: w,
                        },
                        false,
                    )?,
                    attrs: vec![("dedup_ratio".into(), r.to_string())],
                });
            }
        }
    }
    Ok(cells)
}

fn num(r: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(r, |v, k| v.get(k))?.as_f64()
}

/// The window cell's report for ratio `r`, window `w` and `series`.
fn window_cell<'a>(
    cells: &[Cell],
    reports: &'a [Value],
    r: f64,
    w: u32,
    series: &str,
) -> Option<&'a Value> {
    let group = format!("window R={r} W={w}");
    cells
        .iter()
        .zip(reports)
        .find(|(c, _)| c.group == group && c.series == series)
        .map(|(_, v)| v)
}

/// Fig. 4 and Fig. 5 side by side with the paper: throughput per scheme and
/// window, CCAW over each DEDUP layout, the window latencies; writes
/// `window_throughput_R*.svg` and `window_latency_cdf.svg`.
pub fn summary(dir: &Path, cells: &[Cell], reports: &[Value]) -> Result<String, String> {
    let tp = |v: &Value| num(v, &["window", "user_write_mib_s"]);
    let mut md = String::from(
        "## CCAW against DEDUP over window sizes (seed 003 Sec. IV)\n\n\
         | R | window | ccaw MiB/s | ccaw-physical | dedup (log) | dedup-table | \
         CCAW/DEDUP log | CCAW/DEDUP table | paper | flush mean (us, ccaw) | \
         p80 window latency ccaw / dedup / dedup-table (ms) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in WINDOW_RATIOS {
        let mut lines = Vec::new();
        for (series, _, _) in SCHEMES {
            let points = WINDOWS
                .iter()
                .filter_map(|&w| {
                    Some((
                        f64::from(w),
                        tp(window_cell(cells, reports, r, w, series)?)?,
                    ))
                })
                .collect();
            lines.push(XySeries {
                name: series.to_string(),
                points,
            });
        }
        for w in WINDOWS {
            let get = |s: &str| window_cell(cells, reports, r, w, s);
            let t = |s: &str| get(s).and_then(tp);
            let p80 = |s: &str| get(s).and_then(|v| num(v, &["window", "latency_us", "p80"]));
            let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.1}"));
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".to_string(),
            };
            let paper = PAPER
                .iter()
                .find(|p| p.0 == r && p.1 == w)
                .map_or("-".to_string(), |p| format!("{}x", p.2));
            let flush = get("ccaw").and_then(|v| num(v, &["perf", "flush_latency_us", "mean"]));
            let ms = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.2}", x / 1e3));
            md.push_str(&format!(
                "| {r} | {w} | {} | {} | {} | {} | {} | {} | {paper} | {} | {} / {} / {} |\n",
                f(t("ccaw")),
                f(t("ccaw-physical")),
                f(t("dedup")),
                f(t("dedup-table")),
                ratio(t("ccaw"), t("dedup")),
                ratio(t("ccaw"), t("dedup-table")),
                f(flush),
                ms(p80("ccaw")),
                ms(p80("dedup")),
                ms(p80("dedup-table")),
            ));
        }
        let title = format!("User write throughput vs window size, dedup ratio {r} (Fig. 4)");
        let svg = chart::lines_log_x(
            &Axes {
                title: &title,
                x: "window size (user writes per flush)",
                y: "user write throughput (MiB/s, simulated)",
            },
            &lines,
        )?;
        let path = dir.join(format!("window_throughput_R{r}.svg"));
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // Fig. 5: window latency CDFs at ratio 2, windows 10 and 100.
    let mut cdfs = Vec::new();
    for w in [10, 100] {
        for s in ["ccaw", "dedup", "dedup-table"] {
            let points = super::output::cdf_points(
                window_cell(cells, reports, 2.0, w, s)
                    .and_then(|v| v.pointer("/window/latency_us/cdf")),
            );
            cdfs.push(XySeries {
                name: format!("{s} W={w}"),
                points,
            });
        }
    }
    let svg = chart::cdf(
        &Axes {
            title: "Write latency from entering a window to its flush, dedup ratio 2 (Fig. 5)",
            x: "latency (us)",
            y: "fraction of user writes",
        },
        &cdfs,
    )?;
    let path = dir.join("window_latency_cdf.svg");
    std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    let path = dir.join("summary.md");
    std::fs::write(&path, &md).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_has_both_modes_every_ratio_and_a_baseline_per_group() {
        let c = cells().unwrap();
        assert_eq!(
            c.len(),
            2 + 2 * RATIOS.len() + WINDOW_RATIOS.len() * WINDOWS.len() * SCHEMES.len()
        );
        for cell in c.iter().filter(|c| c.workload == "dedup-window") {
            assert!(c
                .iter()
                .any(|b| b.group == cell.group && b.series == "dedup"));
        }
        for cell in c.iter().filter(|c| c.workload == "dedup") {
            assert!(c.iter().any(|b| b.group == cell.group && b.series == "R=1"));
            assert!(cell.sets.iter().any(|s| s.starts_with("copy.mode=")));
        }
        assert!(c.iter().all(|c| c.job.verify));
        assert!(c
            .iter()
            .all(|c| c.job.precondition == (c.workload == "journal")));
    }
}

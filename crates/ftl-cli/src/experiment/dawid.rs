//! `ftl experiment dawid`: Dawid's partially protected mapping table (seed
//! 004 Sec. 5.1, Figs. 5 and 6). IOPS and write traffic (user pages and
//! translation pages) of the FIFO and LIDF write-buffer flush orders at
//! protected ratios of 1 % to 100 %, for 4 KiB sequential writes, 4 KiB
//! random writes and the JESD219-like skewed read/write mix.
//!
//! Scaling: the paper writes 90 GB into a 30 GB area of a FEMU drive. Every
//! cell here runs on the `dawid-femu` drive (64 dies, 12 GiB exposed, 128
//! MiB write buffer, queue depth 8) with translation pages of 1020 entries
//! and the flush starting at half the buffer, as in the paper, and writes
//! three times a working area of [`AREA_PCT`] % of the exposed space (1.5
//! GiB), so the volume to area ratio is the paper's while a cell takes
//! seconds. The drive starts fresh and the 4.5 GiB written fit in its 16
//! GiB of flash, so no garbage collection runs. The protected ratio is
//! `buffer.map_protect_ratio`, a share of every translation page of the
//! drive; the area's pages are 12.5 % of them, so from 12.5 % up every
//! page the workloads dirty is protected. A fourth workload,
//! `rand-write-wide`, writes 4 KiB at random over [`WIDE_AREA_PCT`] % of the
//! exposed space at the 25, 50 and 100 % ratios only, where that area makes
//! the budget bind (garbage collection runs there).

use std::path::Path;

use serde_json::Value;
use sim_harness::config::SimConfig;
use sim_harness::profiles::WorkloadParams;
use sim_harness::workload::{Pattern, JESD219_SIZES_KIB};

use super::output::lookup;
use super::registry::Cell;
use crate::chart::{self, Axes, XySeries};
use crate::synth::SynthJob;

/// Preset every cell starts from.
pub const PRESET: &str = "dawid-femu";

/// Working area in percent of the exposed capacity.
pub const AREA_PCT: f64 = 12.5;

/// Working area of `rand-write-wide`, in percent of the exposed capacity:
/// more than half, so the 50 % budget cannot cover every page it dirties.
pub const WIDE_AREA_PCT: f64 = 60.0;

/// Ratios `rand-write-wide` runs at (below, its FIFO cells take minutes).
const WIDE_RATIOS_PCT: [u32; 3] = [25, 50, 100];

/// Bytes written per byte of working area.
pub const VOLUME: u64 = 3;

/// Protected ratios of the mapping table, in percent.
pub const RATIOS_PCT: [u32; 7] = [1, 2, 5, 10, 25, 50, 100];

/// Flush orders compared: (series, `buffer.flush_policy`).
pub const POLICIES: [(&str, &str); 2] = [("FIFO", "fifo"), ("LIDF", "lidf")];

/// `--set`s of every cell besides the ratio and the policy.
const SETS: [&str; 2] = [
    "ftl.map_entries_per_page=1020",
    "buffer.flush_start_ratio=0.5",
];

/// `--set`s of `--quick` on top of the drive shrink: the 128 MiB buffer
/// would not fit the shrunk drive, and 1020-entry translation pages would
/// cover its working area with three pages.
pub const QUICK_SETS: &[&str] = &[
    "buffer.write_buffer_bytes=1048576",
    "ftl.map_entries_per_page=64",
];

/// Report keys collected.
pub const KEYS: &[&str] = &[
    "perf.iops",
    "nand.map_programs",
    "ftl.host_program_units",
    "buffer.map_flushes",
    "host.write_units",
    "host.requests",
    "ftl.gc_program_units",
    "perf.latency_us.p99",
];

/// One workload of the paper's micro-benchmark.
#[derive(Clone, Copy, Debug)]
struct Workload {
    /// Name in labels and the table.
    name: &'static str,
    /// Heading of its summary table and charts.
    title: &'static str,
    /// Address pattern.
    pattern: Pattern,
    /// Percentage of reads.
    read_pct: u32,
    /// Request sizes (KiB, weight).
    sizes_kib: &'static [(u32, u32)],
    /// Working area, percent of the exposed capacity.
    area_pct: f64,
    /// Protected ratios it runs at.
    ratios: &'static [u32],
}

/// The three workloads of seed 004 Sec. 5.1. The JESD219-like mix follows
/// `fio/dawid-jesd219.fio`: 40 % writes, JESD219 enterprise sizes and skew.
const WORKLOADS: [Workload; 4] = [
    Workload {
        name: "seq-write",
        title: "4 KiB sequential writes",
        pattern: Pattern::Sequential,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        area_pct: AREA_PCT,
        ratios: &RATIOS_PCT,
    },
    Workload {
        name: "rand-write",
        title: "4 KiB random writes",
        pattern: Pattern::Random,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        area_pct: AREA_PCT,
        ratios: &RATIOS_PCT,
    },
    Workload {
        name: "jesd219",
        title: "JESD219-like mix (60 % reads, 50/30/20 skew)",
        pattern: Pattern::Jesd219,
        read_pct: 60,
        sizes_kib: &JESD219_SIZES_KIB,
        area_pct: AREA_PCT,
        ratios: &RATIOS_PCT,
    },
    Workload {
        name: "rand-write-wide",
        title: "4 KiB random writes over 60 % of the drive",
        pattern: Pattern::Random,
        read_pct: 0,
        sizes_kib: &[(4, 1)],
        area_pct: WIDE_AREA_PCT,
        ratios: &WIDE_RATIOS_PCT,
    },
];

/// Requests that write [`VOLUME`] times `area_units` with workload `w` on
/// `unit_kib`-KiB mapping units (reads write nothing).
fn requests(w: &Workload, area_units: u64, unit_kib: u64) -> u64 {
    let weight: u64 = w.sizes_kib.iter().map(|s| u64::from(s.1)).sum();
    let units: u64 = w
        .sizes_kib
        .iter()
        .map(|&(kib, wt)| u64::from(kib).div_ceil(unit_kib.max(1)) * u64::from(wt))
        .sum();
    let per_100 = units * u64::from(100 - w.read_pct.min(99));
    (VOLUME * area_units * weight * 100).div_ceil(per_100.max(1))
}

/// The grid: workload x policy x ratio, groups `<workload> <policy>`.
pub fn cells() -> Result<Vec<Cell>, String> {
    let mut cfg = SimConfig::preset(PRESET).map_err(|e| e.to_string())?;
    for s in SETS {
        cfg.apply_set(s).map_err(|e| e.to_string())?;
    }
    let core = cfg.to_core_config().map_err(|e| e.to_string())?;
    let unit_kib = u64::from(cfg.ftl.mapping_unit_bytes / 1024);
    let mut out = Vec::new();
    for w in &WORKLOADS {
        let area = (f64::from(core.logical_units) * w.area_pct / 100.0) as u64;
        let params = WorkloadParams {
            pattern: w.pattern,
            read_pct: w.read_pct,
            sizes_kib: w.sizes_kib.to_vec(),
            footprint_pct: w.area_pct,
            requests: Some(requests(w, area, unit_kib)),
            ..WorkloadParams::default()
        };
        for (series, policy) in POLICIES {
            for &pct in w.ratios {
                let mut sets: Vec<String> = SETS.iter().map(|s| s.to_string()).collect();
                sets.push(format!("buffer.flush_policy={policy}"));
                sets.push(format!(
                    "buffer.map_protect_ratio={}",
                    f64::from(pct) / 100.0
                ));
                out.push(Cell {
                    label: format!("{} {series} {pct}%", w.name),
                    group: format!("{} {series}", w.name),
                    series: series.to_string(),
                    x: Some(f64::from(pct)),
                    preset: PRESET.to_string(),
                    sets,
                    workload: w.name.to_string(),
                    job: SynthJob::of(params.clone()),
                    attrs: vec![
                        ("protected_pct".into(), pct.to_string()),
                        ("policy".into(), series.to_string()),
                    ],
                });
            }
        }
    }
    out.extend(super::dawid_area::cells(&SETS)?);
    Ok(out)
}

/// The figures of one cell the summary uses.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Point {
    iops: f64,
    map_programs: f64,
    user_programs: f64,
}

/// The cell of `workload`, `series` at `pct`, if it ran.
fn point(
    cells: &[Cell],
    reports: &[Value],
    workload: &str,
    series: &str,
    pct: u32,
) -> Option<Point> {
    let (_, r) = cells.iter().zip(reports).find(|(c, _)| {
        c.workload == workload && c.series == series && c.x == Some(f64::from(pct))
    })?;
    let num = |k: &str| lookup(r, k).and_then(Value::as_f64);
    Some(Point {
        iops: num("perf.iops")?,
        map_programs: num("nand.map_programs")?,
        user_programs: num("ftl.host_program_units")?,
    })
}

/// A count with thousands separators.
fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The summary of one workload: a table with a row per ratio, and whether
/// LIDF wrote no more translation pages than FIFO below 100 %.
fn workload_table(w: &Workload, cells: &[Cell], reports: &[Value]) -> Option<String> {
    let at = |series: &str, pct: u32| point(cells, reports, w.name, series, pct);
    if !w
        .ratios
        .iter()
        .any(|&p| at("FIFO", p).is_some() || at("LIDF", p).is_some())
    {
        return None;
    }
    let full = at("LIDF", 100).map(|p| p.iops);
    // The stronger normalisation: both policies against FIFO fully
    // protected, so a policy slower than FIFO everywhere cannot look whole.
    let fifo_full = at("FIFO", 100).map(|p| p.iops);
    let pct_of = |v: Option<Point>, base: Option<f64>| match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => Some(v.iops / b * 100.0),
        _ => None,
    };
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_default();
    let mut md = format!(
        "### {} (`{}`)\n\n| protected ratio | FIFO IOPS | LIDF IOPS | LIDF % of 100%-protected | \
         FIFO % of FIFO 100% | LIDF % of FIFO 100% | \
         user pages (FIFO / LIDF) | FIFO translation pages | LIDF translation pages |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        w.title, w.name
    );
    // Ratios below 100 % where LIDF wrote fewer, as many, or more translation pages.
    let mut verdict: [Vec<String>; 3] = Default::default();
    for &pct in w.ratios {
        let (f, l) = (at("FIFO", pct), at("LIDF", pct));
        let share = pct_of(l, full);
        md.push_str(&format!(
            "| {pct}% | {} | {} | {} | {} | {} | {} / {} | {} | {} |\n",
            opt(f.map(|p| p.iops), &thousands),
            opt(l.map(|p| p.iops), &thousands),
            opt(share, &|s| format!("{s:.1}%")),
            opt(pct_of(f, fifo_full), &|s| format!("{s:.1}%")),
            opt(pct_of(l, fifo_full), &|s| format!("{s:.1}%")),
            opt(f.map(|p| p.user_programs), &thousands),
            opt(l.map(|p| p.user_programs), &thousands),
            opt(f.map(|p| p.map_programs), &thousands),
            opt(l.map(|p| p.map_programs), &thousands),
        ));
        if let (Some(f), Some(l), true) = (f, l, pct < 100) {
            let i = match l.map_programs.partial_cmp(&f.map_programs) {
                Some(std::cmp::Ordering::Less) => 0,
                Some(std::cmp::Ordering::Equal) => 1,
                _ => 2,
            };
            verdict[i].push(format!("{pct}%"));
        }
    }
    let mut notes = Vec::new();
    if verdict.iter().any(|v| !v.is_empty()) {
        let list = |v: &Vec<String>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        notes.push(format!(
            "Translation pages below 100% protection: LIDF writes fewer than FIFO at {}; \
             as many at {}; more at {}.",
            list(&verdict[0]),
            list(&verdict[1]),
            list(&verdict[2])
        ));
    }
    if let (Some(l), Some(b)) = (at("LIDF", 1), full) {
        if b > 0.0 {
            notes.push(format!(
                "LIDF at 1% keeps {:.1}% of its 100%-protected IOPS.",
                l.iops / b * 100.0
            ));
        }
    }
    if let Some(s) = pct_of(at("LIDF", 1), fifo_full) {
        notes.push(format!(
            "LIDF at 1% reaches {s:.1}% of FIFO's 100%-protected IOPS."
        ));
    }
    if !notes.is_empty() {
        md.push('\n');
        md.push_str(&notes.join("\n"));
        md.push('\n');
    }
    md.push('\n');
    Some(md)
}

/// A quantity of a cell drawn on a chart.
type Quantity = fn(&Point) -> f64;

/// Line charts of one workload over the protected ratio (log axis), FIFO
/// against LIDF: `iops_<workload>.svg`, `map_programs_<workload>.svg` and
/// `writes_<workload>.svg` (user and translation pages).
fn workload_charts(
    dir: &Path,
    w: &Workload,
    cells: &[Cell],
    reports: &[Value],
) -> Result<(), String> {
    let line = |series: &str, name: String, value: Quantity| XySeries {
        name,
        points: w
            .ratios
            .iter()
            .filter_map(|&p| {
                Some((
                    f64::from(p),
                    value(&point(cells, reports, w.name, series, p)?),
                ))
            })
            .collect(),
    };
    let per_policy = |value: Quantity, what: &str| -> Vec<XySeries> {
        POLICIES
            .iter()
            .map(|(s, _)| line(s, format!("{s}{what}"), value))
            .collect()
    };
    let user: Quantity = |p| p.user_programs;
    let map: Quantity = |p| p.map_programs;
    let mut writes = per_policy(user, " user pages");
    writes.extend(per_policy(map, " translation pages"));
    let charts = [
        (
            "iops",
            format!("IOPS vs protected ratio: {}", w.title),
            "IOPS (requests/s, simulated)",
            per_policy(|p| p.iops, ""),
        ),
        (
            "map_programs",
            format!("Translation pages written: {}", w.title),
            "translation pages written (pages)",
            per_policy(map, ""),
        ),
        (
            "writes",
            format!("Write traffic: {}", w.title),
            "pages programmed (4 KiB pages)",
            writes,
        ),
    ];
    for (file, title, y, series) in charts {
        let axes = Axes {
            title: &title,
            x: "protected ratio of the mapping table (%, log scale)",
            y,
        };
        let svg = chart::lines_log_x(&axes, &series)?;
        let path = dir.join(format!("{file}_{}.svg", w.name));
        std::fs::write(&path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes `summary.md` (a table per workload: ratio rows, FIFO and LIDF
/// side by side) and the per-workload charts into `dir`; returns the
/// summary's markdown.
pub fn summary(dir: &Path, cells: &[Cell], reports: &[Value]) -> Result<String, String> {
    let mut md = String::from("## Dawid: FIFO against LIDF over the protected ratio\n\n");
    for w in &WORKLOADS {
        if let Some(t) = workload_table(w, cells, reports) {
            md.push_str(&t);
            workload_charts(dir, w, cells, reports)?;
        }
    }
    if let Some(t) = super::dawid_area::table(cells, reports) {
        md.push_str(&t);
    }
    let path = dir.join("summary.md");
    std::fs::write(&path, &md).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_has_every_workload_policy_and_ratio() {
        let c = cells().unwrap();
        assert_eq!(c.len(), 3 * 2 * 7 + 2 * 3 + 4 * 2 * 3);
        let mut labels: Vec<&str> = c.iter().map(|c| c.label.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), c.len());
        for cell in &c {
            let mut cfg = SimConfig::preset(&cell.preset).unwrap();
            for s in &cell.sets {
                cfg.apply_set(s).unwrap();
            }
            cfg.validate().unwrap();
        }
        let one = c.iter().find(|c| c.label == "rand-write LIDF 1%").unwrap();
        assert!(one
            .sets
            .iter()
            .any(|s| s == "buffer.map_protect_ratio=0.01"));
        assert!(one.sets.iter().any(|s| s == "buffer.flush_policy=lidf"));
    }

    #[test]
    fn every_workload_writes_three_times_its_area() {
        // 1.5 GiB of 4 KiB units.
        let area = 393_216;
        assert_eq!(requests(&WORKLOADS[0], area, 4), 3 * area);
        assert_eq!(requests(&WORKLOADS[1], area, 4), 3 * area);
        // 40 % writes of 1.97 units on average.
        let j = requests(&WORKLOADS[2], area, 4);
        let written = j as f64 * 0.4 * 1.97;
        assert!((written / area as f64 - 3.0).abs() < 1e-3, "{j}");
    }

    #[test]
    fn summary_tables_compare_the_policies_per_ratio() {
        let c = cells().unwrap();
        let reports: Vec<Value> = c
            .iter()
            .map(|c| {
                let x = c.x.unwrap();
                let tp = if c.series == "FIFO" { 1000.0 } else { 10.0 } * (100.0 - x);
                // FIFO twice as fast as LIDF, so the two normalisations differ.
                let iops = if c.series == "FIFO" { 2000.0 } else { 1000.0 } * x;
                serde_json::json!({"perf": {"iops": iops}, "nand": {"map_programs": tp},
                    "ftl": {"host_program_units": 5.0}})
            })
            .collect();
        let dir = std::env::temp_dir().join(format!("ftl-dawid-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let md = summary(&dir, &c, &reports).unwrap();
        assert!(
            md.contains("| 1% | 2,000 | 1,000 | 1.0% | 1.0% | 0.5% | 5 / 5 | 99,000 | 990 |"),
            "{md}"
        );
        let against_fifo = "LIDF at 1% reaches 0.5% of FIFO's 100%-protected IOPS.";
        assert_eq!(md.matches(against_fifo).count(), 3, "{md}");
        let verdict = "LIDF writes fewer than FIFO at 1%, 2%, 5%, 10%, 25%, 50%; as many at none; \
                       more at none.";
        assert_eq!(md.matches(verdict).count(), 3, "{md}");
        let wide = "LIDF writes fewer than FIFO at 25%, 50%; as many at none; more at none.";
        assert_eq!(md.matches(wide).count(), 1, "{md}");
        for w in WORKLOADS {
            for chart in ["iops", "map_programs", "writes"] {
                let file = dir.join(format!("{chart}_{}.svg", w.name));
                let svg = std::fs::read_to_string(file).unwrap();
                assert!(svg.contains("LIDF") && svg.contains("FIFO"), "{chart}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

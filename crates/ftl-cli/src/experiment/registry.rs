//! The experiment registry: what an experiment is (cells, collected report
//! keys, normalisation, charts) and the experiments `ftl experiment` knows.

use sim_harness::config::SimConfig;
use sim_harness::profiles::{calibration_sets, profile, profiles, Profile};

use crate::synth::SynthJob;

/// One simulation of an experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Unique name of the cell (first CSV column).
    pub label: String,
    /// Category on bar charts and the normalisation group (e.g. preset, workload, P/E).
    pub group: String,
    /// Series on bar charts (e.g. the FTL configuration).
    pub series: String,
    /// Position on the x axis of line charts, if the cell is on one.
    pub x: Option<f64>,
    /// Preset the drive starts from.
    pub preset: String,
    /// `--set` overrides on top of the preset.
    pub sets: Vec<String>,
    /// Workload name (profile) for the table.
    pub workload: String,
    /// The workload and run options.
    pub job: SynthJob,
    /// Extra descriptive columns (name, value), e.g. the paper's WAF.
    pub attrs: Vec<(String, String)>,
}

/// The validated configuration of cell `c`: its preset and sets.
#[cfg(test)]
pub(crate) fn cell_config(c: &Cell) -> SimConfig {
    let mut cfg = SimConfig::preset(&c.preset).unwrap();
    for s in &c.sets {
        cfg.apply_set(s).unwrap();
    }
    cfg.validate().unwrap();
    cfg
}

/// What a chart plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// Grouped bars: category = cell group. With one column the series are
    /// the cells' series; with several, each column is a series.
    Bars,
    /// Lines: one line per cell group, x = cell x, y = the column.
    Lines,
    /// Lines: one line per cell workload and series (named `workload
    /// series`), x = cell x, y = the column; for sweeps whose groups are
    /// the sweep's points (each normalised on its own).
    SeriesLines,
    /// CDF per cell, from the report array named by the column
    /// (`[value, fraction]` pairs).
    Cdf,
}

/// One SVG chart of an experiment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChartDef {
    /// File name in the output directory.
    pub file: &'static str,
    /// Kind of chart.
    pub kind: ChartKind,
    /// Title.
    pub title: &'static str,
    /// X axis label, with unit.
    pub x: &'static str,
    /// Y axis label, with unit.
    pub y: &'static str,
    /// Columns (CSV names, or for a CDF one report key) plotted, with legend names.
    pub columns: &'static [(&'static str, &'static str)],
}

/// A value divided by the value of the baseline series in the same group,
/// written as the column `<key>.norm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Normalise {
    /// Report key normalised.
    pub key: &'static str,
    /// Series whose cell in each group is the denominator.
    pub baseline_series: &'static str,
}

/// A registered experiment.
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    /// Name given to `ftl experiment`.
    pub name: &'static str,
    /// One-line description for `--list`.
    pub description: &'static str,
    /// Report keys collected into the CSV (dotted paths; missing = empty).
    pub keys: &'static [&'static str],
    /// Normalised columns.
    pub normalise: &'static [Normalise],
    /// Charts written.
    pub charts: &'static [ChartDef],
    /// Builds the cells.
    pub cells: fn() -> Result<Vec<Cell>, String>,
    /// Computes a cell's report from its configuration instead of running
    /// its workload (model experiments); `None` runs the simulation.
    pub evaluate: Option<Evaluate>,
    /// Writes experiment-specific files beside the common ones (e.g. tables
    /// that put cells side by side) and returns markdown printed after the
    /// results table; `None` writes nothing more.
    pub summary: Option<Summary>,
    /// `--set`s added to every cell by `--quick`, after the drive shrink
    /// (e.g. a write buffer that fits the shrunk drive).
    pub quick_sets: &'static [&'static str],
}

/// Writes an experiment's extra files into the output directory from its
/// cells and their reports; returns markdown.
pub type Summary = fn(&std::path::Path, &[Cell], &[serde_json::Value]) -> Result<String, String>;

/// Computes one cell's report from its configuration.
pub type Evaluate = fn(&SimConfig, &Cell) -> Result<serde_json::Value, String>;

/// Every experiment.
pub fn experiments() -> &'static [Experiment] {
    &EXPERIMENTS
}

/// The experiment called `name`; the error lists the known ones.
pub fn experiment(name: &str) -> Result<&'static Experiment, String> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        format!(
            "unknown experiment `{name}`; known experiments: {}",
            known.join(", ")
        )
    })
}

static EXPERIMENTS: [Experiment; 8] = [
    Experiment {
        name: "profiles",
        description: "Baseline (off-chip copy, greedy GC) WAF and IOPS of every workload profile \
                      on its paper's drive, scaled down; compares with the papers' WAFs",
        keys: &[
            "waf",
            "perf.iops",
            "perf.throughput_mib_s",
            "perf.latency_us.p99",
            "host.read_requests",
            "host.write_requests",
            "nand.erases",
            "integrity.mismatches",
        ],
        normalise: &[],
        charts: &[
            ChartDef {
                file: "waf.svg",
                kind: ChartKind::Bars,
                title: "Baseline WAF per workload profile",
                x: "workload profile",
                y: "write amplification (NAND writes / host writes)",
                columns: &[("waf", "measured"), ("paper_waf", "paper")],
            },
            ChartDef {
                file: "iops.svg",
                kind: ChartKind::Bars,
                title: "Baseline IOPS per workload profile",
                x: "workload profile",
                y: "IOPS (requests/s, simulated)",
                columns: &[("perf.iops", "IOPS")],
            },
            ChartDef {
                file: "latency_cdf.svg",
                kind: ChartKind::Cdf,
                title: "Request latency CDF per workload profile",
                x: "latency (us)",
                y: "fraction of requests",
                columns: &[("perf.latency_us.cdf", "latency")],
            },
        ],
        cells: profile_cells,
        evaluate: None,
        summary: None,
        quick_sets: &[],
    },
    Experiment {
        name: "rcftl",
        description: "rcFTL (seed 000 Fig. 6, seed 001 Fig. 22/24): normalised throughput of \
                      off-chip, FastGC, rcFTL2/3/4, per-page rcFTL, rcFTL- vs rcFTL at 0 and \
                      end-of-table P/E on scaled rcftl-dac18 and rcftl-thesis drives, and \
                      off-chip, FastGC and rcFTL4 over DRAM 1400-6400 MiB/s at 0 P/E",
        keys: RCFTL_KEYS,
        normalise: &[Normalise {
            key: "perf.throughput_mib_s",
            baseline_series: "off-chip",
        }],
        charts: &[
            ChartDef {
                file: "throughput.svg",
                kind: ChartKind::Bars,
                title: "I/O throughput normalised to off-chip copy",
                x: "drive, workload, P/E cycles",
                y: "throughput / off-chip throughput (ratio)",
                columns: &[("perf.throughput_mib_s.norm", "")],
            },
            ChartDef {
                file: "threshold.svg",
                kind: ChartKind::Lines,
                title: "rcFTL throughput vs maximum copyback threshold",
                x: "maximum copyback threshold (consecutive copybacks)",
                y: "throughput / off-chip throughput (ratio)",
                columns: &[("perf.throughput_mib_s.norm", "")],
            },
        ],
        cells: rcftl_cells,
        evaluate: None,
        summary: None,
        quick_sets: &[],
    },
    Experiment {
        name: "dgcb",
        description: "Direct-data-transfer GC (seed 002 Figs. 11-14): merge throughput, whole-GC \
                      time and channel utilisation of ICB, LCB, GCB and DGCB with and without \
                      cache program, single and two-plane, 1-128 (2-256) page transactions, \
                      0-100% of the ECC limit, event-driven on dgcb-flashsim",
        keys: super::dgcb::KEYS,
        normalise: &[],
        charts: &[
            dgcb_chart(
                "throughput_1plane.svg",
                "Merge throughput, single plane (Fig. 11)",
                "merge throughput (MB/s)",
                &[("p1.throughput_mb_s", "")],
            ),
            dgcb_chart(
                "throughput_2plane.svg",
                "Merge throughput, two-plane (Fig. 11)",
                "merge throughput (MB/s)",
                &[("p2.throughput_mb_s", "")],
            ),
            dgcb_chart(
                "gc_time_1plane.svg",
                "Whole-GC time of a 128-page block, single plane (Fig. 12)",
                "GC time incl. erase (ms)",
                &[("p1.gc_time_ms", "")],
            ),
            dgcb_chart(
                "gc_time_2plane.svg",
                "Whole-GC time of a two-plane block pair, two-plane (Fig. 12)",
                "GC time incl. erase (ms)",
                &[("p2.gc_time_ms", "")],
            ),
            dgcb_chart(
                "throughput_norm_1plane.svg",
                "DGCB throughput vs error rate, single plane (Fig. 13)",
                "throughput / error-free throughput (ratio)",
                &[("p1.throughput_norm", "")],
            ),
            dgcb_chart(
                "throughput_norm_2plane.svg",
                "DGCB throughput vs error rate, two-plane (Fig. 13)",
                "throughput / error-free throughput (ratio)",
                &[("p2.throughput_norm", "")],
            ),
            dgcb_chart(
                "utilisation_1plane.svg",
                "Channel utilisation during GC, single plane (Fig. 14)",
                "channel busy / GC time (fraction)",
                &[("p1.utilisation_gc", "")],
            ),
            dgcb_chart(
                "utilisation_2plane.svg",
                "Channel utilisation during GC, two-plane (Fig. 14)",
                "channel busy / GC time (fraction)",
                &[("p2.utilisation_gc", "")],
            ),
        ],
        cells: super::dgcb::cells,
        evaluate: Some(super::dgcb::evaluate),
        summary: None,
        quick_sets: &[],
    },
    Experiment {
        name: "reparo",
        description: "Reparo (seed 001 Figs. 33-36): RAID-5 of 8 drives, one die fails; rebuild \
                      time/traffic of baseline (Rebuild Assist), IDR, CDR, CDR* over 4-32 TB-class \
                      drives (64-512 dies, 4 flash cores, scaled blocks per die), Identifier time \
                      by cores and P2L entrustment, post-recovery random-write IOPS and WAF",
        keys: super::reparo::KEYS,
        normalise: &[
            Normalise {
                key: "reparo.rebuild_seconds",
                baseline_series: "baseline",
            },
            Normalise {
                key: "reparo.post_iops",
                baseline_series: "baseline",
            },
            Normalise {
                key: "reparo.post_waf",
                baseline_series: "baseline",
            },
            Normalise {
                key: "repaired.iops",
                baseline_series: super::reparo::NO_FAILURE,
            },
            Normalise {
                key: "repaired.waf",
                baseline_series: super::reparo::NO_FAILURE,
            },
        ],
        charts: &[
            ChartDef {
                file: "rebuild_time.svg",
                kind: ChartKind::Bars,
                title: "Rebuild time after a die failure (Fig. 33a)",
                x: "drive class",
                y: "rebuild time (s, scaled drives)",
                columns: &[("reparo.rebuild_seconds", "")],
            },
            ChartDef {
                file: "rebuild_traffic.svg",
                kind: ChartKind::Bars,
                title: "Rebuild traffic (Fig. 33b)",
                x: "drive class",
                y: "host bytes read and written",
                columns: &[("reparo.rebuild_bytes", "")],
            },
            ChartDef {
                file: "identify_time.svg",
                kind: ChartKind::Bars,
                title: "Identifier time (Fig. 34)",
                x: "drive class",
                y: "identification time (s)",
                columns: &[("reparo.identify_seconds", "")],
            },
            ChartDef {
                file: "post_iops.svg",
                kind: ChartKind::Bars,
                title: "Random-write IOPS after recovery / new drive (Fig. 35b)",
                x: "drive class",
                y: "IOPS / new drive (ratio)",
                columns: &[("reparo.post_iops.norm", "")],
            },
            ChartDef {
                file: "post_waf.svg",
                kind: ChartKind::Bars,
                title: "Random-write WAF after recovery / new drive (Fig. 36b)",
                x: "drive class",
                y: "WAF / new drive (ratio)",
                columns: &[("reparo.post_waf.norm", "")],
            },
            ChartDef {
                file: "multi_die_iops.svg",
                kind: ChartKind::Lines,
                title: "Random-write IOPS after k repaired die failures (Figs. 38a/39a, 40)",
                x: "failed dies on one core",
                y: "IOPS / no failure (ratio)",
                columns: &[("repaired.iops.norm", "")],
            },
            ChartDef {
                file: "multi_die_waf.svg",
                kind: ChartKind::Lines,
                title: "Random-write WAF after k repaired die failures (Figs. 38b/39b, 41)",
                x: "failed dies on one core",
                y: "WAF / no failure (ratio)",
                columns: &[("repaired.waf.norm", "")],
            },
        ],
        cells: super::reparo::cells,
        evaluate: Some(super::reparo::evaluate),
        summary: None,
        quick_sets: &[],
    },
    Experiment {
        name: "longftl",
        description: "longFTL / GuardedErase (seed 001 Fig. 13-16): lifetime TBW and IOPS of the \
                      baseline, BPM 2.1% and 5.2% and longFTL (host-only and all-blocks gErase, \
                      WAF window 10 and the paper's 1) on the eight Table 5 workloads, scaled \
                      longftl-mqsim, endurance x0.005; the `WL` groups with static wear \
                      levelling at the preset's threshold scaled alike",
        keys: &[
            "life.tbw_bytes",
            "perf.iops",
            "waf",
            "life.end_reason",
            "life.bad_blocks",
            "life.final_mode",
            "erase.guarded_erases",
            "erase.low_stress_wls",
            "ftl.pe_max",
            "ftl.pe_min",
            "ftl.wl_moves",
            "integrity.read_checks",
            "integrity.mismatches",
        ],
        normalise: &[
            Normalise {
                key: "life.tbw_bytes",
                baseline_series: "baseline",
            },
            Normalise {
                key: "perf.iops",
                baseline_series: "baseline",
            },
            Normalise {
                key: "waf",
                baseline_series: "baseline",
            },
        ],
        charts: &[
            ChartDef {
                file: "tbw.svg",
                kind: ChartKind::Bars,
                title: "Lifetime host writes (TBW) normalised to the baseline FTL (Fig. 13, 16)",
                x: "workload",
                y: "TBW / baseline TBW (ratio)",
                columns: &[("life.tbw_bytes.norm", "")],
            },
            ChartDef {
                file: "iops.svg",
                kind: ChartKind::Bars,
                title: "IOPS over the drive's life normalised to the baseline FTL (Fig. 15, 16)",
                x: "workload",
                y: "IOPS / baseline IOPS (ratio)",
                columns: &[("perf.iops.norm", "")],
            },
            ChartDef {
                file: "waf.svg",
                kind: ChartKind::Bars,
                title: "WAF change over the baseline FTL (Fig. 14)",
                x: "workload",
                y: "WAF / baseline WAF (ratio)",
                columns: &[("waf.norm", "")],
            },
            ChartDef {
                file: "mode.svg",
                kind: ChartKind::Bars,
                title: "gErase mode in use at the end of life (Fig. 14)",
                x: "workload",
                y: "gErase mode n of gE(n)",
                columns: &[("life.final_mode", "")],
            },
        ],
        cells: longftl_cells,
        evaluate: None,
        summary: None,
        // The wordline model (`nand.endurance_scale`) needs its own 576-page
        // blocks; the generic shrink's 96 pages would be refused.
        quick_sets: &["geometry.pages_per_block=576"],
    },
    Experiment {
        name: "cc",
        description: "Copyless copy (seed 003 Sec. III-IV): host write throughput, NAND programs \
                      and WAF of undo-log journaling and copy-assisted writing (dedup ratios 1, \
                      1.4, 2, 4, 8) with copies remapped vs copied physically; CCAW against \
                      host-side deduplication (DEDUP, metadata in a log or in tables) with \
                      windows of 1, 10, 100, 1000 writes at dedup ratios 2 and 8",
        keys: super::cc::KEYS,
        normalise: &[
            Normalise {
                key: "copy.write_mib_s",
                baseline_series: "R=1",
            },
            Normalise {
                key: "nand.programs",
                baseline_series: "R=1",
            },
            Normalise {
                key: "window.user_write_mib_s",
                baseline_series: "dedup",
            },
        ],
        charts: &[
            ChartDef {
                file: "dedup_speedup.svg",
                kind: ChartKind::Lines,
                title: "Dedup: host write throughput vs R = 1 (ideal: R)",
                x: "deduplication ratio R = 1 / (1 - conversion ratio)",
                y: "write throughput / throughput at R = 1 (ratio)",
                columns: &[("copy.write_mib_s.norm", "")],
            },
            ChartDef {
                file: "dedup_throughput.svg",
                kind: ChartKind::Lines,
                title: "Dedup: host write throughput (writes and copies)",
                x: "deduplication ratio R",
                y: "host write throughput (MiB/s, simulated)",
                columns: &[("copy.write_mib_s", "")],
            },
            ChartDef {
                file: "dedup_waf.svg",
                kind: ChartKind::Lines,
                title: "Dedup: NAND unit programs per host-written unit",
                x: "deduplication ratio R",
                y: "WAF (NAND programs / units written or copied)",
                columns: &[("copy.waf", "")],
            },
            ChartDef {
                file: "journal.svg",
                kind: ChartKind::Bars,
                title: "Journaling: host write throughput, remap vs physical copy",
                x: "workload",
                y: "host write throughput (MiB/s, simulated)",
                columns: &[("copy.write_mib_s", "")],
            },
            ChartDef {
                file: "programs.svg",
                kind: ChartKind::Bars,
                title: "NAND page programs per cell",
                x: "workload and copy mode",
                y: "NAND programs (pages)",
                columns: &[("nand.programs", "")],
            },
        ],
        cells: super::cc::cells,
        evaluate: None,
        summary: Some(super::cc::summary),
        quick_sets: &[],
    },
    Experiment {
        name: "dawid",
        description: "Dawid (seed 004 Sec. 5.1): IOPS and write traffic (user and translation \
                      pages) of FIFO vs LIDF write-buffer flushing at protected ratios 1-100 %, \
                      for 4 KiB sequential writes, 4 KiB random writes and a JESD219-like mix, \
                      writing 3x the working area on dawid-femu; random writes with GC running \
                      over 12.5/30/60/100 % of the drive at 1, 10, 100 %",
        keys: super::dawid::KEYS,
        normalise: &[],
        // Per-workload charts over a log ratio axis come with the summary.
        charts: &[],
        cells: super::dawid::cells,
        evaluate: None,
        summary: Some(super::dawid::summary),
        quick_sets: super::dawid::QUICK_SETS,
    },
    Experiment {
        name: "placement",
        description: "Conventional vs FDP vs ZNS: device and end-to-end WAF, IOPS and p99 \
                      latency of two-tenant mixes (random beside a sequential log; two random \
                      tenants at 10x different rates) at 50-90 % fill and a hot/cold \
                      log-structured application at 80 % fill",
        keys: super::placement::KEYS,
        normalise: &[Normalise {
            key: "waf",
            baseline_series: "conventional",
        }],
        charts: &[
            ChartDef {
                file: "waf.svg",
                kind: ChartKind::Bars,
                title: "Device WAF per host interface",
                x: "workload",
                y: "write amplification (NAND programs / device writes)",
                columns: &[("waf", "")],
            },
            ChartDef {
                file: "waf_end_to_end.svg",
                kind: ChartKind::Bars,
                title: "End-to-end WAF (host compaction included)",
                x: "workload",
                y: "NAND programs / application writes",
                columns: &[("waf_end_to_end", "")],
            },
            ChartDef {
                file: "waf_fill.svg",
                kind: ChartKind::SeriesLines,
                title: "Device WAF against fill (multi-tenant mixes)",
                x: "fill (% of the exposed capacity)",
                y: "write amplification (NAND programs / device writes)",
                columns: &[("waf", "")],
            },
            ChartDef {
                file: "waf_end_to_end_fill.svg",
                kind: ChartKind::SeriesLines,
                title: "End-to-end WAF against fill (host compaction included)",
                x: "fill (% of the exposed capacity)",
                y: "NAND programs / application writes",
                columns: &[("waf_end_to_end", "")],
            },
            ChartDef {
                file: "iops.svg",
                kind: ChartKind::Bars,
                title: "IOPS per host interface",
                x: "workload",
                y: "IOPS (requests/s, simulated)",
                columns: &[("perf.iops", "")],
            },
            ChartDef {
                file: "p99.svg",
                kind: ChartKind::Bars,
                title: "p99 request latency per host interface",
                x: "workload",
                y: "p99 latency (us)",
                columns: &[("perf.latency_us.p99", "")],
            },
        ],
        cells: super::placement::cells,
        evaluate: Some(super::placement::evaluate),
        summary: None,
        quick_sets: &[],
    },
];

/// A line chart of the DGCB experiment over the transaction size.
const fn dgcb_chart(
    file: &'static str,
    title: &'static str,
    y: &'static str,
    columns: &'static [(&'static str, &'static str)],
) -> ChartDef {
    ChartDef {
        file,
        kind: ChartKind::Lines,
        title,
        x: "transaction size (pages)",
        y,
        columns,
    }
}

/// The eight workloads of seed 001 Table 5: (name in the table, profile).
const LONGFTL_WORKLOADS: [(&str, &str); 8] = [
    ("proj0", "proj0"),
    ("prxy1", "prxy1"),
    ("prxy0", "prxy0"),
    ("src10", "src10"),
    ("proj2", "proj2"),
    ("oltp", "oltp-longftl"),
    ("fileserver", "fileserver-longftl"),
    ("varmail", "varmail-longftl"),
];

/// Erase policies compared by the longFTL experiment: (series, `--set`s).
const LONGFTL_CONFIGS: [(&str, &[&str]); 6] = [
    ("baseline", &["erase.mode=normal"]),
    (
        "BPM 2.1%",
        &["erase.mode=bpm", "erase.bpm_capacity_loss_pct=2.1"],
    ),
    (
        "BPM 5.2%",
        &["erase.mode=bpm", "erase.bpm_capacity_loss_pct=5.2"],
    ),
    (
        "longFTL",
        &[
            "erase.mode=gerase",
            "erase.gerase_mode=auto",
            "erase.gerase_scope=host",
            "erase.waf_window=10",
        ],
    ),
    (
        "longFTL all-blocks",
        &[
            "erase.mode=gerase",
            "erase.gerase_mode=auto",
            "erase.gerase_scope=all",
            "erase.waf_window=10",
        ],
    ),
    (
        "longFTL window 1",
        &[
            "erase.mode=gerase",
            "erase.gerase_mode=auto",
            "erase.gerase_scope=host",
            "erase.waf_window=1",
        ],
    ),
];

/// The policies also run with static wear levelling on (series of the
/// `<workload> WL` groups, normalised to that group's baseline).
const LONGFTL_WL_SERIES: [&str; 3] = ["baseline", "longFTL", "longFTL window 1"];

/// Endurance multiplier of the longFTL lifetime runs: the weakest wordline
/// lasts 10K x 0.005 = 50 cycles, so a whole life takes seconds.
const LONGFTL_ENDURANCE_SCALE: f64 = 0.005;

/// The static wear-levelling threshold of `preset` scaled like its
/// endurance (at least 1): at x0.005 the preset's 100 would never fire in
/// a 50-cycle life.
fn scaled_wl_threshold(preset: &str) -> Result<u32, String> {
    let cfg = SimConfig::preset(preset).map_err(|e| e.to_string())?;
    let t = (f64::from(cfg.ftl.wl_threshold) * LONGFTL_ENDURANCE_SCALE).round();
    Ok((t as u32).max(1))
}

/// The longFTL grid: every Table 5 workload under every erase policy, each
/// a lifetime run on the profile's calibration drive. The groups named
/// after the workloads run with static wear levelling off (the cold data
/// of the profiles stays put, as in the WAF calibration, and the hot
/// blocks set the drive's life); the `<workload> WL` groups run the
/// baseline and longFTL with it on at the scaled threshold.
fn longftl_cells() -> Result<Vec<Cell>, String> {
    let preset = "longftl-mqsim";
    let wl_on = format!("ftl.wl_threshold={}", scaled_wl_threshold(preset)?);
    let mut cells = Vec::new();
    for (wl, group_tail) in [("ftl.wl_threshold=0", ""), (wl_on.as_str(), " WL")] {
        for (table, name) in LONGFTL_WORKLOADS {
            let p = profile(name)?;
            for (series, sets) in LONGFTL_CONFIGS {
                if !group_tail.is_empty() && !LONGFTL_WL_SERIES.contains(&series) {
                    continue;
                }
                let mut all: Vec<String> = calibration_sets(preset)
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                all.push(format!("nand.endurance_scale={LONGFTL_ENDURANCE_SCALE}"));
                all.push(wl.to_string());
                all.extend(sets.iter().map(|s| s.to_string()));
                let mut job = profile_job(p, None);
                job.lifetime = true;
                let group = format!("{table}{group_tail}");
                cells.push(Cell {
                    label: format!("{group} {series}"),
                    group,
                    series: series.to_string(),
                    x: None,
                    preset: preset.to_string(),
                    sets: all,
                    workload: name.to_string(),
                    job,
                    attrs: vec![
                        ("read_pct".into(), p.read_pct.to_string()),
                        (
                            "paper_waf".into(),
                            p.paper_waf.map(|w| w.to_string()).unwrap_or_default(),
                        ),
                    ],
                });
            }
        }
    }
    Ok(cells)
}

/// Report keys of the rcFTL experiment (`epm.active_blocks_max` comes with the EPM).
const RCFTL_KEYS: &[&str] = &[
    "perf.iops",
    "perf.throughput_mib_s",
    "waf",
    "nand.copybacks",
    "nand.offchip_copies",
    "integrity.uncorrectable_reads",
    "integrity.mismatches",
    "epm.active_blocks_max",
];

/// A preconditioned run of `p` (the rest of the job is the profile's).
fn profile_job(p: &Profile, requests: Option<u64>) -> SynthJob {
    let mut params = p.params();
    params.requests = requests;
    SynthJob {
        profile: Some(p.name.to_string()),
        params,
        qd: None,
        precondition: true,
        precondition_fast: false,
        verify: false,
        lifetime: false,
    }
}

/// Every profile on its calibration drive (the command of the WAF table in
/// `docs/results.md`).
fn profile_cells() -> Result<Vec<Cell>, String> {
    Ok(profiles()
        .iter()
        .map(|p| {
            let preset = p.calibration_preset();
            Cell {
                label: p.name.to_string(),
                group: p.name.to_string(),
                series: "baseline".to_string(),
                x: None,
                preset: preset.to_string(),
                sets: calibration_sets(preset)
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                workload: p.name.to_string(),
                job: profile_job(p, None),
                attrs: vec![
                    ("read_pct".into(), p.read_pct.to_string()),
                    ("footprint_pct".into(), p.footprint_pct.to_string()),
                    ("hot_access_pct".into(), p.hot_access_pct.to_string()),
                    ("hot_space_pct".into(), p.hot_space_pct.to_string()),
                    (
                        "paper_waf".into(),
                        p.paper_waf.map(|w| w.to_string()).unwrap_or_default(),
                    ),
                ],
            }
        })
        .collect())
}

/// Blocks per plane of the scaled rcFTL drives. Fewer misbehave: with 32
/// or 64 blocks per plane (16-page blocks) the greedy baseline's WAF
/// reached 50 to 2000 under uniform random writes, far from the spare
/// space's prediction (docs/results.md).
const RCFTL_BLOCKS: u32 = 128;
/// Measured requests per rcFTL cell.
const RCFTL_REQUESTS: u64 = 100_000;

/// `--set`s scaling `preset` down to [`RCFTL_BLOCKS`] blocks per plane,
/// channels, chips, block and page size kept. The
/// over-provisioning is raised so that the spare space beyond the GC reserve
/// (`gc_trigger_blocks + 1` blocks per plane) is the same share of the
/// logical space as on the full drive; otherwise the reserve would eat most
/// of the spare space of a small plane and inflate the WAF.
pub fn rcftl_scaling(preset: &str) -> Result<Vec<String>, String> {
    let cfg = SimConfig::preset(preset).map_err(|e| e.to_string())?;
    let full = f64::from(cfg.geometry.blocks_per_plane);
    let reserve = f64::from(cfg.ftl.gc_trigger_blocks + 1);
    let logical = full / (1.0 + cfg.ftl.op_ratio);
    let spare_share = (full - logical - reserve) / logical;
    let scaled = f64::from(RCFTL_BLOCKS);
    let op = scaled / ((scaled - reserve) / (1.0 + spare_share)) - 1.0;
    Ok(vec![
        format!("geometry.blocks_per_plane={RCFTL_BLOCKS}"),
        format!("ftl.op_ratio={op:.4}"),
    ])
}

/// FTL configurations of the trace part: (series, `--set`s, threshold for the line chart).
const RCFTL_CONFIGS: [(&str, &[&str], Option<f64>); 6] = [
    ("off-chip", &["copyback.mode=off-chip"], None),
    ("FastGC", &["copyback.mode=fastgc"], None),
    (
        "rcFTL2",
        &[
            "copyback.mode=rcftl",
            "copyback.selector=dmms",
            "copyback.max_threshold=2",
        ],
        Some(2.0),
    ),
    (
        "rcFTL3",
        &[
            "copyback.mode=rcftl",
            "copyback.selector=dmms",
            "copyback.max_threshold=3",
        ],
        Some(3.0),
    ),
    (
        "rcFTL4",
        &[
            "copyback.mode=rcftl",
            "copyback.selector=dmms",
            "copyback.max_threshold=4",
        ],
        Some(4.0),
    ),
    (
        "rcFTL4 per-page",
        &[
            "copyback.mode=rcftl-per-page",
            "copyback.selector=dmms",
            "copyback.max_threshold=4",
        ],
        None,
    ),
];

/// Configurations of the mode-selector part (seed 000 Fig. 6(b), seed 001 Fig. 24).
const SELECTOR_CONFIGS: [(&str, &[&str]); 3] = [
    ("off-chip", &["copyback.mode=off-chip"]),
    (
        "rcFTL2-",
        &[
            "copyback.mode=rcftl",
            "copyback.selector=greedy",
            "copyback.max_threshold=2",
        ],
    ),
    (
        "rcFTL2",
        &[
            "copyback.mode=rcftl",
            "copyback.selector=dmms",
            "copyback.max_threshold=2",
        ],
    ),
];

/// Drives and P/E conditions: seed 000 Table 1 ends at 3K P/E, seed 001
/// Table 6 at 5K; both papers start from fresh blocks.
/// The aged condition starts 100 cycles below the tables' last column, so the
/// run's own wear keeps every block inside the characterised range (beyond
/// it the thresholds are 0: off-chip only). Labels keep the papers' "3K" and
/// "5K".
const RCFTL_DRIVES: [(&str, [u32; 2]); 2] =
    [("rcftl-dac18", [0, 2900]), ("rcftl-thesis", [0, 4900])];

/// Trace workloads of both papers' tables.
const RCFTL_TRACES: [&str; 4] = ["oltp", "ntrx", "varmail", "fileserver"];

/// Intensity mixes.
const RCFTL_INTENSITIES: [&str; 3] = ["high", "mid", "low"];

/// DRAM bandwidths of the sensitivity axis, MiB/s: the rcFTL presets'
/// 1400, 2400, the 3200 of the other presets, and 6400.
const RCFTL_DRAM_MIB_S: [u32; 4] = [1400, 2400, 3200, 6400];

/// Configurations of the DRAM axis: the baseline, FastGC and rcFTL4.
const RCFTL_DRAM_CONFIGS: [usize; 3] = [0, 1, 4];

/// The rcFTL grid: every configuration on every trace, drive and P/E
/// count, the selector on the intensity mixes, and at 0 P/E the off-chip
/// baseline, FastGC and rcFTL4 over [`RCFTL_DRAM_MIB_S`] (groups
/// `"<drive> <trace> 0K DRAM <MiB/s>"`), since off-chip copies contend for
/// the DRAM bus and the gain depends on its bandwidth.
fn rcftl_cells() -> Result<Vec<Cell>, String> {
    let mut cells = Vec::new();
    for (preset, _) in RCFTL_DRIVES {
        let scaling = rcftl_scaling(preset)?;
        for w in RCFTL_TRACES {
            let p = profile(w)?;
            for dram in RCFTL_DRAM_MIB_S {
                let group = format!("{preset} {w} 0K DRAM {dram}");
                for i in RCFTL_DRAM_CONFIGS {
                    let (series, sets, _) = RCFTL_CONFIGS
                        .get(i)
                        .ok_or("rcftl DRAM axis names a missing configuration")?;
                    let mut all = scaling.clone();
                    all.extend(sets.iter().map(|s| s.to_string()));
                    all.push("copyback.retention_months=12".to_string());
                    all.push("nand.initial_pe=0".to_string());
                    all.push(format!("timing.dram_mib_s={dram}"));
                    cells.push(Cell {
                        label: format!("{group} {series}"),
                        group: group.clone(),
                        series: series.to_string(),
                        x: None,
                        preset: preset.to_string(),
                        sets: all,
                        workload: w.to_string(),
                        job: profile_job(p, Some(RCFTL_REQUESTS)),
                        attrs: vec![
                            ("initial_pe".into(), "0".into()),
                            ("dram_mib_s".into(), dram.to_string()),
                        ],
                    });
                }
            }
        }
    }
    for (preset, pes) in RCFTL_DRIVES {
        let scaling = rcftl_scaling(preset)?;
        for pe in pes {
            let workloads = RCFTL_TRACES
                .iter()
                .map(|w| (*w, &RCFTL_CONFIGS[..]))
                .chain(RCFTL_INTENSITIES.iter().map(|w| (*w, &[][..])));
            for (w, configs) in workloads {
                let p = profile(w)?;
                let selector = SELECTOR_CONFIGS.iter().map(|(s, sets)| (*s, *sets, None));
                let list: Vec<(&str, &[&str], Option<f64>)> = if configs.is_empty() {
                    selector.collect()
                } else {
                    configs.to_vec()
                };
                let group = format!("{preset} {w} {}K", pe.div_ceil(1000));
                for (series, sets, x) in list {
                    let mut all = scaling.clone();
                    all.extend(sets.iter().map(|s| s.to_string()));
                    all.push("copyback.retention_months=12".to_string());
                    all.push(format!("nand.initial_pe={pe}"));
                    cells.push(Cell {
                        label: format!("{group} {series}"),
                        group: group.clone(),
                        series: series.to_string(),
                        x,
                        preset: preset.to_string(),
                        sets: all,
                        workload: w.to_string(),
                        job: profile_job(p, Some(RCFTL_REQUESTS)),
                        attrs: vec![("initial_pe".into(), pe.to_string())],
                    });
                }
            }
        }
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rcftl_grid_has_every_configuration_workload_drive_and_pe() {
        let cells = rcftl_cells().unwrap();
        // 2 drives x 2 P/E x (4 traces x 6 configurations + 3 intensities x 3),
        // plus the DRAM axis: 2 drives x 4 traces x 4 bandwidths x 3.
        assert_eq!(cells.len(), 2 * 2 * (4 * 6 + 3 * 3) + 2 * 4 * 4 * 3);
        let mut labels: Vec<&str> = cells.iter().map(|c| c.label.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), cells.len(), "labels are unique");
        let has = |label: &str, set: &str| {
            let c = cells
                .iter()
                .find(|c| c.label == label)
                .unwrap_or_else(|| panic!("{label}"));
            c.sets.iter().any(|s| s == set)
        };
        assert!(has(
            "rcftl-dac18 oltp 0K off-chip",
            "copyback.mode=off-chip"
        ));
        assert!(has("rcftl-dac18 oltp 3K FastGC", "copyback.mode=fastgc"));
        assert!(has("rcftl-dac18 oltp 3K FastGC", "nand.initial_pe=2900"));
        assert!(has(
            "rcftl-thesis ntrx 5K rcFTL3",
            "copyback.max_threshold=3"
        ));
        assert!(has("rcftl-thesis ntrx 5K rcFTL3", "nand.initial_pe=4900"));
        assert!(has(
            "rcftl-thesis varmail 0K rcFTL4 per-page",
            "copyback.mode=rcftl-per-page"
        ));
        assert!(has(
            "rcftl-dac18 low 0K rcFTL2-",
            "copyback.selector=greedy"
        ));
        assert!(has("rcftl-dac18 low 0K rcFTL2", "copyback.selector=dmms"));
        assert!(has(
            "rcftl-dac18 fileserver 0K DRAM 6400 rcFTL4",
            "timing.dram_mib_s=6400"
        ));
        assert!(has(
            "rcftl-thesis oltp 0K DRAM 2400 FastGC",
            "copyback.mode=fastgc"
        ));
        assert!(has(
            "rcftl-thesis high 5K rcFTL2",
            "copyback.retention_months=12"
        ));
        // Every group has its off-chip baseline for normalisation.
        for c in &cells {
            assert!(
                cells
                    .iter()
                    .any(|b| b.group == c.group && b.series == "off-chip"),
                "{}",
                c.label
            );
            assert_eq!(c.job.params.requests, Some(RCFTL_REQUESTS));
            assert!(c.job.precondition);
        }
        // Intensity cells carry the bursty idle model, trace cells none.
        let low = cells.iter().find(|c| c.workload == "low").unwrap();
        assert_ne!(low.job.params.idle, sim_harness::workload::IdleModel::None);
    }

    #[test]
    fn rcftl_scaling_keeps_the_spare_share_beyond_the_reserve() {
        let sets = rcftl_scaling("rcftl-dac18").unwrap();
        let op: f64 = sets[1]
            .strip_prefix("ftl.op_ratio=")
            .unwrap()
            .parse()
            .unwrap();
        // Full drive: 1024 blocks, OP 7%, reserve 4: (1024 - 957 - 4) / 957 = 6.6%.
        let logical = (128.0 - 4.0) / (1.0 + (1024.0 - 1024.0 / 1.07 - 4.0) / (1024.0 / 1.07));
        assert!((op - (128.0 / logical - 1.0)).abs() < 1e-3, "{op}");
        assert!(op > 0.07 && op < 0.2);
        let mut cfg = SimConfig::preset("rcftl-dac18").unwrap();
        for s in &sets {
            cfg.apply_set(s).unwrap();
        }
        cfg.validate().unwrap();
    }

    #[test]
    fn longftl_grid_covers_every_workload_and_policy() {
        let cells = longftl_cells().unwrap();
        assert_eq!(cells.len(), 8 * (6 + 3));
        for c in &cells {
            assert!(c.job.lifetime && c.job.precondition, "{}", c.label);
            let mut cfg = SimConfig::preset(&c.preset).unwrap();
            for s in &c.sets {
                cfg.apply_set(s).unwrap();
            }
            cfg.validate().unwrap();
            assert!(cells
                .iter()
                .any(|b| b.group == c.group && b.series == "baseline"));
        }
        let lf = cells.iter().find(|c| c.label == "varmail longFTL").unwrap();
        assert!(lf.sets.iter().any(|s| s == "erase.gerase_scope=host"));
        assert_eq!(lf.workload, "varmail-longftl");
        assert!(lf.sets.iter().any(|s| s == "ftl.wl_threshold=0"));
        // At x0.005 the preset's threshold of 100 scales to 1 (at least 1).
        assert_eq!(scaled_wl_threshold("longftl-mqsim").unwrap(), 1);
        let wl = cells
            .iter()
            .find(|c| c.label == "varmail WL longFTL window 1")
            .unwrap();
        assert!(wl.sets.iter().any(|s| s == "ftl.wl_threshold=1"));
        assert!(wl.sets.iter().any(|s| s == "erase.waf_window=1"));
    }

    #[test]
    fn registry_names_and_unknown_name() {
        assert!(experiment("profiles").is_ok());
        assert!(experiment("rcftl").is_ok());
        let e = experiment("nope").unwrap_err();
        assert!(e.contains("profiles") && e.contains("rcftl"), "{e}");
        assert_eq!(profile_cells().unwrap().len(), profiles().len());
    }
}

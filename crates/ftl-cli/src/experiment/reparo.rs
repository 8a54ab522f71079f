//! `ftl experiment reparo`: Reparo's recovery of a die failure in a RAID-5
//! group of eight multi-core drives (seed 001 Sec. 5.6): rebuild time and
//! traffic of Rebuild-Assist `baseline`, `idr`, `cdr` and `cdr-star` over
//! 4, 8, 16 and 32 TB-class drives (Fig. 33), *Identifier* time by
//! participating cores and P2L entrustment (Fig. 34), and post-recovery
//! random-write IOPS and WAF of the repaired drive against a new one
//! (Figs. 35b and 36b).
//!
//! Scaling: a TB class keeps its die count (64, 128, 256, 512 dies, four
//! flash cores, 16 channels) and the paper's shape of a die, but each die
//! has 24 blocks of 64 pages of 16 KiB (24 MiB) instead of thousands of
//! blocks, so every drive fits in memory; traffic and times scale with the
//! die size, and their ratios between modes and capacities are what the
//! tables compare. Cells run the functional simulation of
//! `sim_harness::raid`: the *Identifier* timed on the victim core's engine
//! resources (`sim_harness::identify_time`), post-recovery IOPS and WAF from
//! a timed engine run of the repaired drive, rebuild traffic between drives
//! over the host bandwidth.
//!
//! Utilisation: the recovery and Figs. 38/39 cells fill 0.85 of the usable
//! units (blocks minus the core's GC reserve and open-block margin, 19 of
//! 24 per plane). Figs. 40/41 follow the thesis's definition, host LBAs
//! over raw NAND, at 0.87-0.90: 24 blocks leave only 19/24 = 0.79 of raw
//! NAND usable, so those cells keep the 32 TB class's 512 dies and four
//! cores but give each die 192 blocks (reserve and margin 5/192 = 2.6 %).

use serde_json::Value;
use sim_harness::config::SimConfig;

use super::registry::Cell;
use crate::synth::SynthJob;

/// Report keys of the table.
pub const KEYS: &[&str] = &[
    "reparo.rebuild_seconds",
    "reparo.rebuild_seconds_bw10",
    "reparo.identify_seconds",
    "reparo.identify_formula_seconds",
    "reparo.rebuild_bytes",
    "reparo.failed_lbas",
    "reparo.fake_failures",
    "reparo.status_exact",
    "reparo.p2l_page_reads",
    "reparo.p2l_ram_blocks",
    "reparo.p2l_ram_pages",
    "reparo.failed_die_blocks",
    "reparo.identify_1core_seconds",
    "reparo.identify_2core_seconds",
    "reparo.identify_4core_seconds",
    "reparo.post_iops",
    "reparo.post_waf",
    "integrity.mismatches",
    "repaired.failed_dies",
    "repaired.utilisation",
    "repaired.iops",
    "repaired.waf",
];

/// Series of the multi-die cells with no failed die (the normalisation base).
pub const NO_FAILURE: &str = "0 failed dies";

/// TB classes: (name, dies per channel over 16 channels).
const CLASSES: [(&str, u32, u32); 4] = [
    ("4TB", 4, 4),
    ("8TB", 8, 8),
    ("16TB", 16, 16),
    ("32TB", 32, 32),
];

/// Blocks per plane of the scaled dies.
const BLOCKS: u32 = 24;

/// Blocks per plane of the Figs. 40/41 dies: enough that the GC reserve and
/// open-block margin (5 blocks) leave room for 0.90 of raw NAND plus CDR's
/// redirection space, and take a small share (2.6 %) of the spare space the
/// utilisation leaves, as on a die of thousands of blocks.
const BLOCKS_RAW_U: u32 = 192;

/// The drive of a TB class with `blocks` blocks per plane.
fn geometry_sets(dies_per_channel: u32, blocks: u32) -> Vec<String> {
    vec![
        "geometry.channels=16".into(),
        format!("geometry.dies_per_channel={dies_per_channel}"),
        "geometry.planes_per_die=1".into(),
        format!("geometry.blocks_per_plane={blocks}"),
        "geometry.pages_per_block=64".into(),
        "geometry.page_bytes=16384".into(),
        "ftl.mapping_unit_bytes=4096".into(),
        "ftl.op_ratio=0.3".into(),
        "controller.flash_cores=4".into(),
    ]
}

fn job() -> SynthJob {
    SynthJob::of(Default::default())
}

/// The cells: every mode at every class, then CDR* with page-level
/// entrustment beside block-level (Fig. 34).
pub fn cells() -> Result<Vec<Cell>, String> {
    let mut out = Vec::new();
    for (class, dpc, x) in CLASSES {
        let series: [(&str, &str, &str, u32); 5] = [
            ("baseline", "baseline", "none", 8),
            ("idr", "idr", "none", 8),
            ("cdr", "cdr", "none", 8),
            ("cdr-star", "cdr-star", "block", 8),
            ("cdr-star page-P2L", "cdr-star", "page", 3),
        ];
        for (name, mode, p2l, ssds) in series {
            let mut sets = geometry_sets(dpc, BLOCKS);
            sets.push(format!("reparo.mode={mode}"));
            sets.push(format!("reparo.p2l={p2l}"));
            out.push(Cell {
                label: format!("{class} {name}"),
                group: class.to_string(),
                series: name.to_string(),
                x: Some(f64::from(x)),
                preset: "default".into(),
                sets,
                workload: "raid5-die-failure".into(),
                job: job(),
                attrs: vec![
                    ("dies".into(), (16 * dpc).to_string()),
                    ("ssds".into(), ssds.to_string()),
                    (
                        "post_writes".into(),
                        if ssds == 8 { "1" } else { "0" }.to_string(),
                    ),
                ],
            });
        }
    }
    // Figs. 38/39: k die failures repaired on one core, IDR against CDR.
    for (class, dpc, _) in [CLASSES[1], CLASSES[3]] {
        for mode in ["idr", "cdr"] {
            for k in 0..=4u32 {
                out.push(repaired_cell(
                    class,
                    dpc,
                    mode,
                    k,
                    Utilisation::Usable(0.85),
                    &format!("{class} {mode}"),
                ));
            }
        }
    }
    // Figs. 40/41: CDR after k failures at the thesis's utilisations of
    // raw NAND.
    for u in RAW_UTILISATIONS {
        for k in [0u32, 1, 3, 5] {
            out.push(repaired_cell(
                "32TB",
                32,
                "cdr",
                k,
                Utilisation::Raw(u),
                &format!("32TB cdr U={u:.2}"),
            ));
        }
    }
    Ok(out)
}

/// Space utilisation of the Figs. 40/41 cells (host LBAs over raw NAND).
pub const RAW_UTILISATIONS: [f64; 4] = [0.87, 0.88, 0.89, 0.90];

/// Space utilisation of a post-recovery cell: host LBAs over the usable
/// units (blocks minus the GC reserve and open-block margin), or over the
/// raw NAND as in the thesis (`U_i` of Sec. 5.4.2: logical over physical).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Utilisation {
    Usable(f64),
    Raw(f64),
}

/// A post-recovery cell: a drive repaired after `k` die failures on one
/// core under `mode`, at space utilisation `u`.
fn repaired_cell(class: &str, dpc: u32, mode: &str, k: u32, u: Utilisation, group: &str) -> Cell {
    let (u, of, blocks) = match u {
        Utilisation::Usable(u) => (u, "usable", BLOCKS),
        Utilisation::Raw(u) => (u, "raw", BLOCKS_RAW_U),
    };
    let mut sets = geometry_sets(dpc, blocks);
    sets.push(format!("reparo.mode={mode}"));
    sets.push("reparo.p2l=none".into());
    Cell {
        label: format!("{group} {k} failed dies"),
        group: group.to_string(),
        series: if k == 0 {
            NO_FAILURE.to_string()
        } else {
            format!("{k} failed dies")
        },
        x: Some(f64::from(k)),
        preset: "default".into(),
        sets,
        workload: "randwrite-after-repair".into(),
        job: job(),
        attrs: vec![
            ("dies".into(), (16 * dpc).to_string()),
            ("failed_dies".into(), k.to_string()),
            ("utilisation".into(), format!("{u}")),
            ("utilisation_of".into(), of.to_string()),
            ("class".into(), class.to_string()),
        ],
    }
}

/// The utilisation of the usable units that gives `raw` of the raw NAND
/// (`DriveSpec::logical` counts usable units).
fn usable_of_raw(d: &sim_harness::reparo::DriveSpec, raw: f64) -> f64 {
    let g = d.core_geometry;
    let raw_die = u64::from(g.blocks_per_plane)
        * u64::from(g.planes_per_die)
        * u64::from(g.units_per_block());
    raw * raw_die as f64 / d.die_capacity().max(1) as f64
}

/// The utilisation of a post-recovery cell and its drive.
fn repaired_spec(cfg: &SimConfig, c: &Cell) -> Result<(f64, sim_harness::raid::RaidSpec), String> {
    let u: f64 = attr(c, "utilisation")
        .unwrap_or("0.85")
        .parse()
        .map_err(|_| "utilisation")?;
    let mut spec = crate::raid::spec_of(cfg, 3, u, 64)?;
    if attr(c, "utilisation_of") == Some("raw") {
        spec.drive.utilisation = usable_of_raw(&spec.drive, u);
    }
    Ok((u, spec))
}

fn attr<'a>(c: &'a Cell, name: &str) -> Option<&'a str> {
    c.attrs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Runs one cell: the RAID group, the failure, recovery and verification.
pub fn evaluate(cfg: &SimConfig, c: &Cell) -> Result<Value, String> {
    if let Some(k) = attr(c, "failed_dies") {
        return evaluate_repaired(cfg, c, k);
    }
    let ssds: u32 = attr(c, "ssds").unwrap_or("8").parse().map_err(|_| "ssds")?;
    let post: f64 = attr(c, "post_writes")
        .unwrap_or("0")
        .parse()
        .map_err(|_| "post_writes")?;
    let mut spec = crate::raid::spec_of(cfg, ssds, 0.85, 64)?;
    spec.post_writes = post;
    // The failure comes after 5 % of a drive's LBAs were updated.
    let per_drive = spec.drive.logical();
    spec.writes_before = per_drive / 20;
    let o = sim_harness::raid::run(&spec).map_err(|e| e.to_string())?;
    if o.mismatches != 0 || !o.status_exact {
        return Err(format!("cell {}: recovery not exact: {o:?}", c.label));
    }
    Ok(sim_harness::report::raid_report(&o))
}

/// A post-recovery cell: `k` dies of the last core fail one after the
/// other and are recovered through the data path (detector, queries,
/// CDR rounds, write-back from the oracle); every LBA is checked, then one
/// capacity of random writes warms the drive and one more is measured. A
/// core left over-full (IDR with too few dies for its data) gives zero
/// IOPS and no WAF.
fn evaluate_repaired(cfg: &SimConfig, c: &Cell, k: &str) -> Result<Value, String> {
    use firmware_core::{Error, ReadValue};
    use sim_harness::reparo::{effective_p2l, Drive, DriveStore};
    let k: u32 = k.parse().map_err(|_| "failed_dies")?;
    let (u, spec) = repaired_spec(cfg, c)?;
    let d = spec.drive;
    let p2l = effective_p2l(cfg.reparo.mode(), cfg.reparo.p2l());
    let mut store = DriveStore::new(&d, p2l).map_err(|e| e.to_string())?;
    let mut drive = Drive::new(d, &mut store, cfg.reparo.mode(), cfg.reparo.p2l())
        .map_err(|e| e.to_string())?;
    let n = drive.logical();
    let mut expect: Vec<u64> = (0..n).map(|l| l * 2 + 1).collect();
    let t = spec.time;
    let run = |drive: &mut Drive<'_>, expect: &mut Vec<u64>| -> Result<(u64, u64), Error> {
        for l in 0..n {
            drive.write(l, expect[l as usize])?;
        }
        let mut reported = 0;
        for i in 0..k {
            reported += drive.fail_and_recover(d.cores - 1, i, expect, spec.seed ^ u64::from(i))?;
        }
        let mut mismatches = 0;
        for l in 0..n {
            if drive.read(l)? != ReadValue::Data(expect[l as usize]) {
                mismatches += 1;
            }
        }
        Ok((reported, mismatches))
    };
    let (reported, mismatches, waf, iops) = match run(&mut drive, &mut expect) {
        Ok((r, m)) => {
            let (waf, iops) = drive
                .timed_random_write_perf(n, n, spec.seed, t.engine)
                .or_else(|e| match e {
                    Error::OutOfSpace => Ok((f64::INFINITY, 0.0)),
                    e => Err(e),
                })
                .map_err(|e| e.to_string())?;
            (r, m, waf, iops)
        }
        Err(Error::OutOfSpace) => (0, 0, f64::INFINITY, 0.0),
        Err(e) => return Err(e.to_string()),
    };
    if mismatches != 0 {
        return Err(format!(
            "cell {}: {mismatches} LBAs differ after recovery",
            c.label
        ));
    }
    Ok(serde_json::json!({
        "repaired": {
            "failed_dies": k,
            "utilisation": u,
            "reported_lbas": reported,
            "iops": iops,
            "waf": if waf.is_finite() { serde_json::json!(waf) } else { Value::Null },
        },
        "integrity": { "mismatches": mismatches },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::registry::cell_config as cfg_of;

    /// Figs. 40/41 run at 0.87-0.90 of raw NAND: host LBAs over every unit
    /// of every die, within a unit per core of the target.
    #[test]
    fn utilisation_cells_fill_raw_nand() {
        let cells = cells().unwrap();
        for u in RAW_UTILISATIONS {
            let group = format!("32TB cdr U={u:.2}");
            let of_u: Vec<&Cell> = cells.iter().filter(|c| c.group == group).collect();
            assert_eq!(of_u.len(), 4, "{group}");
            for c in of_u {
                let (got, spec) = repaired_spec(&cfg_of(c), c).unwrap();
                assert_eq!(got, u);
                let d = spec.drive;
                assert_eq!(d.dies(), 512);
                assert_eq!(d.cores, 4);
                let raw = u64::from(d.core_geometry.total_units()) * u64::from(d.cores);
                let want = raw as f64 * u;
                let logical = d.logical() as f64;
                assert!(
                    logical <= want && logical > want - 2.0 * f64::from(d.cores),
                    "{}: {logical} LBAs of {raw} units",
                    c.label
                );
            }
        }
    }
}

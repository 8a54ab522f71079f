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
//! `sim_harness::raid` and its time model.

use serde_json::Value;
use sim_harness::config::SimConfig;

use super::registry::Cell;
use crate::synth::SynthJob;

/// Report keys of the table.
pub const KEYS: &[&str] = &[
    "reparo.rebuild_seconds",
    "reparo.rebuild_seconds_bw10",
    "reparo.identify_seconds",
    "reparo.rebuild_bytes",
    "reparo.failed_lbas",
    "reparo.fake_failures",
    "reparo.status_exact",
    "reparo.p2l_page_reads",
    "reparo.failed_die_blocks",
    "reparo.identify_1core_seconds",
    "reparo.identify_2core_seconds",
    "reparo.identify_4core_seconds",
    "reparo.post_iops",
    "reparo.post_waf",
    "integrity.mismatches",
];

/// TB classes: (name, dies per channel over 16 channels).
const CLASSES: [(&str, u32, u32); 4] = [
    ("4TB", 4, 4),
    ("8TB", 8, 8),
    ("16TB", 16, 16),
    ("32TB", 32, 32),
];

/// The drive of a TB class.
fn geometry_sets(dies_per_channel: u32) -> Vec<String> {
    vec![
        "geometry.channels=16".into(),
        format!("geometry.dies_per_channel={dies_per_channel}"),
        "geometry.planes_per_die=1".into(),
        "geometry.blocks_per_plane=24".into(),
        "geometry.pages_per_block=64".into(),
        "geometry.page_bytes=16384".into(),
        "ftl.mapping_unit_bytes=4096".into(),
        "ftl.op_ratio=0.3".into(),
        "controller.flash_cores=4".into(),
    ]
}

fn job() -> SynthJob {
    SynthJob {
        profile: None,
        params: Default::default(),
        qd: None,
        precondition: false,
        verify: false,
        lifetime: false,
    }
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
            let mut sets = geometry_sets(dpc);
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
    Ok(out)
}

fn attr<'a>(c: &'a Cell, name: &str) -> Option<&'a str> {
    c.attrs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Runs one cell: the RAID group, the failure, recovery and verification.
pub fn evaluate(cfg: &SimConfig, c: &Cell) -> Result<Value, String> {
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

//! `ftl experiment placement`: WAF, IOPS and p99 latency of a
//! conventional namespace, FDP and ZNS (series `conventional`, `fdp`,
//! `zns`) on multi-tenant mixes and on a log-structured application.
//!
//! Every cell runs on the `default` drive with [`SETS`]. Fill is a share
//! of the exposed capacity: the logical space (conventional, FDP), or
//! every zone's capacity (ZNS); the multi-tenant mixes run at every fill
//! of [`FILLS`], the log-structured application at 80 %. Tenants write
//! 4 KiB units; each first fills its region once (unmeasured, with
//! [`WARM_PASSES`] passes of the mix), then [`MEASURE_PASSES`] times the
//! fill in mixed writes are measured. Under FDP every tenant writes through its own placement
//! identifier; under ZNS every tenant is a stream of the zone host
//! (`sim_harness::zns_host`): a log-structured writer appending to zones,
//! compacting the zone with the fewest live blocks when empty zones run
//! low and resetting it. `waf` is the device's (NAND programs over the
//! writes the device got); `waf_end_to_end` is NAND programs over the
//! application's writes, which under ZNS counts the host's compaction.

use serde_json::{json, Value};
use sim_harness::config::{InterfaceKey, SimConfig};
use sim_harness::phased::run_phased;
use sim_harness::profiles::WorkloadParams;
use sim_harness::sim::Plan;
use sim_harness::tenants::{Tenant, Tenants};
use sim_harness::workload::RequestSource;
use sim_harness::zns_host::ZoneLog;

use super::registry::Cell;
use crate::synth::SynthJob;

/// Preset of every cell.
pub const PRESET: &str = "default";

/// `--set`s of every cell: a quarter of the default drive (64 blocks a
/// plane), so the 33 cells take about a minute.
pub const SETS: &[&str] = &["geometry.blocks_per_plane=64"];

/// Passes of the fill the mix writes before measuring.
pub const WARM_PASSES: u64 = 2;

/// Passes of the fill the mix writes while measured.
pub const MEASURE_PASSES: u64 = 3;

/// Series: (name, `host.interface`).
pub const SERIES: [(&str, &str); 3] = [
    ("conventional", "conventional"),
    ("fdp", "fdp"),
    ("zns", "zns"),
];

/// Report keys collected.
pub const KEYS: &[&str] = &[
    "waf",
    "waf_end_to_end",
    "perf.iops",
    "perf.latency_us.p99",
    "zns.compaction_units",
    "zns.app_write_units",
    "zns.resets",
    "host.write_units",
    "ftl.gc_program_units",
];

/// One tenant of a workload, in shares of the exposed capacity.
#[derive(Clone, Copy, Debug)]
struct TenantSpec {
    /// Share of the exposed capacity it writes over.
    space: f64,
    /// A sequential log writer, else random.
    sequential: bool,
    /// Relative write rate.
    weight: u32,
}

/// A workload: its tenants, side by side from unit 0.
#[derive(Clone, Copy, Debug)]
struct Workload {
    name: &'static str,
    tenants: &'static [TenantSpec],
}

/// The workloads: the two multi-tenant mixes and a
/// log-structured application (hot and cold data, 80 % fill).
const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "rand20+seq60",
        tenants: &[
            TenantSpec {
                space: 0.2,
                sequential: false,
                weight: 1,
            },
            TenantSpec {
                space: 0.6,
                sequential: true,
                weight: 1,
            },
        ],
    },
    Workload {
        name: "rand40x10+rand40",
        tenants: &[
            TenantSpec {
                space: 0.4,
                sequential: false,
                weight: 10,
            },
            TenantSpec {
                space: 0.4,
                sequential: false,
                weight: 1,
            },
        ],
    },
    Workload {
        name: "log-hot16+cold64",
        tenants: &[
            TenantSpec {
                space: 0.16,
                sequential: false,
                weight: 8,
            },
            TenantSpec {
                space: 0.64,
                sequential: false,
                weight: 2,
            },
        ],
    },
];

/// Fill levels (% of the exposed capacity) of the multi-tenant mixes;
/// their tenants' spaces scale in proportion to the 80 % of [`WORKLOADS`].
pub const FILLS: [u32; 5] = [50, 60, 70, 80, 90];

/// The fill [`WORKLOADS`] are written for.
const BASE_FILL: u32 = 80;

/// Whether a workload is swept over [`FILLS`] (the multi-tenant mixes;
/// the log-structured application stays at 80 %).
fn swept(w: &Workload) -> bool {
    !w.name.starts_with("log-")
}

/// The grid: workload x fill x series. The 80 % cells keep their labels
/// and groups (`WORKLOAD SERIES`, group `WORKLOAD`); the others are
/// `WORKLOAD fillF SERIES` in group `WORKLOAD fillF`, so each fill's FDP
/// and ZNS are normalised to its own conventional.
pub fn cells() -> Result<Vec<Cell>, String> {
    let mut out = Vec::new();
    for w in &WORKLOADS {
        let fills: &[u32] = if swept(w) { &FILLS } else { &[BASE_FILL] };
        for &fill in fills {
            let group = if fill == BASE_FILL {
                w.name.to_string()
            } else {
                format!("{} fill{fill}", w.name)
            };
            for (series, interface) in SERIES {
                let mut sets: Vec<String> = SETS.iter().map(|s| s.to_string()).collect();
                sets.push(format!("host.interface={interface}"));
                out.push(Cell {
                    label: format!("{group} {series}"),
                    group: group.clone(),
                    series: series.to_string(),
                    x: swept(w).then_some(f64::from(fill)),
                    preset: PRESET.to_string(),
                    sets,
                    workload: w.name.to_string(),
                    job: SynthJob::of(WorkloadParams::default()),
                    attrs: vec![
                        ("fill_pct".into(), fill.to_string()),
                        ("fill".into(), fill.to_string()),
                    ],
                });
            }
        }
    }
    Ok(out)
}

/// The fill of cell `c` (% of the exposed capacity).
fn fill_of(c: &Cell) -> Result<u32, String> {
    c.attrs
        .iter()
        .find(|(k, _)| k == "fill")
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| format!("cell {}: no fill", c.label))
}

/// Runs one cell (the experiment's `evaluate`): its tenants on its interface.
pub fn evaluate(cfg: &SimConfig, c: &Cell) -> Result<Value, String> {
    let w = WORKLOADS
        .iter()
        .find(|w| w.name == c.workload)
        .ok_or_else(|| format!("unknown workload {}", c.workload))?;
    let scale = f64::from(fill_of(c)?) / f64::from(BASE_FILL);
    let plan = Plan::from_config(cfg).map_err(|e| e.to_string())?;
    let zns = cfg.host.interface == InterfaceKey::Zns;
    let geo = if zns {
        Some(cfg.zone_geometry().map_err(|e| e.to_string())?)
    } else {
        None
    };
    let exposed = match geo {
        Some(g) => u64::from(g.zones) * u64::from(g.cap),
        None => u64::from(plan.core.logical_units),
    };
    let fdp = cfg.host.interface == InterfaceKey::Fdp;
    let mut base = 0u32;
    let mut tenants = Vec::new();
    for (i, t) in w.tenants.iter().enumerate() {
        let units = (exposed as f64 * t.space * scale) as u32;
        tenants.push(Tenant {
            base,
            units,
            sequential: t.sequential,
            weight: t.weight,
            placement: if fdp || zns { i as u8 } else { 0 },
        });
        base += units;
    }
    let fill_units = u64::from(base);
    let src = Tenants::new(
        tenants,
        fill_units * (WARM_PASSES + MEASURE_PASSES),
        cfg.sim.seed,
    );
    let warm = src.fill_requests() + fill_units * WARM_PASSES;
    let (out, zstats) = match geo {
        Some(g) => {
            let mut table = vec![Default::default(); g.zones as usize];
            let streams = w.tenants.len() as u32;
            let app = ZoneLog::<Tenants>::app_units_for(g, streams).max(base);
            let mut zl = ZoneLog::new(src, g, &mut table, streams, app)?;
            zl.restart_stats_after(warm);
            let out = run_measured(&plan, warm, &mut zl)?;
            (out, Some(zl.stats))
        }
        None => {
            let mut src = src;
            (run_measured(&plan, warm, &mut src)?, None)
        }
    };
    let mut v = sim_harness::report::json_report(&out, json!({ "workload": w.name }));
    crate::synth::add_end_to_end(&mut v, &out, zstats.as_ref());
    Ok(v)
}

/// [`run_phased`] with a string error.
fn run_measured(
    plan: &Plan,
    warm: u64,
    src: &mut dyn RequestSource,
) -> Result<sim_harness::sim::Outcome, String> {
    run_phased(plan, warm, src).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multi-tenant mixes at every fill, the log-structured
    /// application at 80 %, the 80 % cells under their old labels, and a
    /// normalisation group per workload and fill holding all three series.
    #[test]
    fn the_grid_sweeps_fill_for_the_mixes() {
        let cells = cells().unwrap();
        assert_eq!(cells.len(), (2 * FILLS.len() + 1) * SERIES.len());
        for c in &cells {
            let fill = fill_of(c).unwrap();
            let in_group: Vec<&str> = cells
                .iter()
                .filter(|d| d.group == c.group)
                .map(|d| d.series.as_str())
                .collect();
            assert_eq!(in_group, ["conventional", "fdp", "zns"], "{}", c.group);
            let swept = !c.workload.starts_with("log-");
            assert_eq!(c.x, swept.then_some(f64::from(fill)), "{}", c.label);
            if fill == 80 {
                assert_eq!(c.label, format!("{} {}", c.workload, c.series));
            } else {
                assert!(swept, "{}", c.label);
                assert_eq!(c.label, format!("{} fill{fill} {}", c.workload, c.series));
            }
        }
        let fills: Vec<u32> = cells
            .iter()
            .filter(|c| c.workload == "rand40x10+rand40" && c.series == "fdp")
            .map(|c| fill_of(c).unwrap())
            .collect();
        assert_eq!(fills, FILLS);
    }
}

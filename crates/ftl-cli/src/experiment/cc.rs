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

use sim_harness::copy_load::CopyLoad;
use sim_harness::profiles::profile;

use super::registry::Cell;
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
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_has_both_modes_every_ratio_and_a_baseline_per_group() {
        let c = cells().unwrap();
        assert_eq!(c.len(), 2 + 2 * RATIOS.len());
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

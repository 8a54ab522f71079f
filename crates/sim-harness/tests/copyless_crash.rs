//! Power cuts with copies in the workload: remapped copies are either
//! persisted (their L2P entries go through the dirty translation pages like
//! writes) or rebuilt at mount (counts and shadow OOB from the L2P), so no
//! acknowledged copy is lost.

use firmware_core::{CopyConfig, CopyMode};
use sim_harness::config::SimConfig;
use sim_harness::crash::{run_crash, CrashSpec};
use sim_harness::sim::Plan;

fn plan(ratio: &str, copy: CopyConfig) -> Plan {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=64",
        "ftl.op_ratio=0.35",
        "geometry.pages_per_block=32",
        "ftl.map_entries_per_page=256",
        "buffer.write_buffer_bytes=262144",
    ] {
        cfg.apply_set(s).unwrap();
    }
    cfg.apply_set(&format!("buffer.map_protect_ratio={ratio}"))
        .unwrap();
    let mut plan = Plan::from_config(&cfg).unwrap();
    plan.core.copy = copy;
    plan
}

const REMAP: CopyConfig = CopyConfig {
    mode: CopyMode::Remap,
    refcount_bits: 3,
    shadow_entries: 4096,
};

fn crash(ratio: &str, copy: CopyConfig, seed: u64) -> sim_harness::crash::CrashReport {
    let p = plan(ratio, copy);
    let spec = CrashSpec {
        cuts: 40,
        seed,
        ops_per_cut: 600,
        copy_share: 0.25,
        ..CrashSpec::default()
    };
    run_crash(p.core, p.medium().unwrap(), &spec, |_| {}).unwrap()
}

#[test]
fn remapped_copies_survive_cuts_with_full_protection() {
    let r = crash("1.0", REMAP, 11);
    assert_eq!(r.lost_acknowledged, 0, "{r:?}");
    assert_eq!(r.invalid_reads, 0, "{r:?}");
    assert_eq!(r.capacitor_overruns, 0, "{r:?}");
    assert!(r.copy_remapped_units > 1000, "{r:?}");
    assert!(r.gc_victims > 0, "{r:?}");
}

#[test]
fn remapped_copies_survive_cuts_with_partial_protection() {
    let r = crash("0.05", REMAP, 12);
    assert_eq!(r.lost_acknowledged, 0, "{r:?}");
    assert_eq!(r.invalid_reads, 0, "{r:?}");
    assert_eq!(r.capacitor_overruns, 0, "{r:?}");
    assert!(r.map_programs > 0 && r.copy_remapped_units > 1000, "{r:?}");
}

#[test]
fn physical_copies_survive_cuts() {
    let r = crash("0.05", CopyConfig::PHYSICAL, 13);
    assert_eq!(r.lost_acknowledged + r.invalid_reads, 0, "{r:?}");
    assert_eq!(r.copy_remapped_units, 0, "{r:?}");
}

/// Long soak with copies, e.g. `CUTS=300 RATIO=0.05 SHARE=0.25 cargo test
/// --release -p sim-harness --test copyless_crash soak -- --ignored --nocapture`.
#[test]
#[ignore]
fn soak() {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let p = plan(&env("RATIO", "0.05"), REMAP);
    let spec = CrashSpec {
        cuts: env("CUTS", "300").parse().unwrap(),
        seed: env("SEED", "1").parse().unwrap(),
        ops_per_cut: 600,
        copy_share: env("SHARE", "0.25").parse().unwrap(),
        ..CrashSpec::default()
    };
    let r = run_crash(p.core, p.medium().unwrap(), &spec, |_| {}).unwrap();
    eprintln!("{r:?}");
    assert_eq!(
        r.lost_acknowledged + r.invalid_reads + r.capacitor_overruns,
        0,
        "{r:?}"
    );
}

//! Power cuts under a zoned namespace and under FDP: every zone's state
//! and write pointer come back as the acknowledged zone commands left
//! them, acknowledged appends read back, and a capacitor too small to
//! flush makes the checks fail.

use sim_harness::config::SimConfig;
use sim_harness::crash::{run_crash, CrashReport, CrashSpec};
use sim_harness::sim::Plan;

fn run(interface: &str, cuts: u32, capacitor_scale: f64) -> CrashReport {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=32",
        "ftl.op_ratio=0.35",
        "ftl.map_entries_per_page=256",
        "buffer.write_buffer_bytes=262144",
        &format!("host.interface={interface}"),
    ] {
        cfg.apply_set(s).unwrap();
    }
    cfg.validate().unwrap();
    let plan = Plan::from_config(&cfg).unwrap();
    let spec = CrashSpec {
        cuts,
        seed: 11,
        ops_per_cut: 300,
        capacitor_scale,
        zones: (interface == "zns").then(|| cfg.zone_geometry().unwrap()),
        ..CrashSpec::default()
    };
    run_crash(plan.core, plan.medium().unwrap(), &spec, |_| {}).unwrap()
}

#[test]
fn zones_survive_cuts() {
    let r = run("zns", 60, 1.0);
    assert_eq!(r.zone_wp_mismatches, 0, "{r:?}");
    assert_eq!(r.lost_acknowledged + r.invalid_reads, 0, "{r:?}");
    assert_eq!(r.capacitor_overruns, 0, "{r:?}");
    let epochs = r.cuts - r.mount_cuts;
    assert!(r.zone_writes >= 100 * epochs, "{r:?}");
    assert!(
        r.zone_appends > 0 && r.zone_resets > 0 && r.zone_finishes > 0,
        "{r:?}"
    );
}

#[test]
fn a_short_capacitor_breaks_write_pointers_and_the_check_sees_it() {
    let r = run("zns", 30, 0.02);
    assert!(r.capacitor_overruns > 0, "{r:?}");
    assert!(r.zone_wp_mismatches > 0, "{r:?}");
    assert!(r.lost_acknowledged > 0, "{r:?}");
}

#[test]
fn fdp_placement_survives_cuts() {
    let r = run("fdp", 60, 1.0);
    assert_eq!(r.lost_acknowledged + r.invalid_reads, 0, "{r:?}");
    assert_eq!(r.mapping_mismatches + r.capacitor_overruns, 0, "{r:?}");
    assert_eq!(r.zone_writes, 0, "{r:?}");
    assert!(r.gc_victims > 0, "{r:?}");
}

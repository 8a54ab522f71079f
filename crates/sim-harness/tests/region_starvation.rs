//! The metadata region never starves a full drive. With the whole mapping
//! table protected, random writes keep nearly every translation page dirty;
//! when the region could not open a block above the cut reserve, each
//! write-back waited for a region block, the region for a free block, GC
//! (its programs held by the full budget) for the write-backs: the drive
//! stopped with requests queued and nothing in flight (the run reported
//! "not enough good blocks for the logical capacity"). After a power cut
//! with half the write buffer full, the same starvation held a mount in
//! its settling forever ("mount did not finish").

use sim_harness::config::SimConfig;
use sim_harness::sim::{run, Plan, RunSpec};
use sim_harness::workload::{Pattern, Synth, SynthSpec};

#[test]
fn random_writes_on_a_full_power_safe_drive_never_stall() {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=64",
        "ftl.map_entries_per_page=1020",
    ] {
        cfg.apply_set(s).unwrap();
    }
    assert!(
        cfg.ftl.map_entries_per_page > 0,
        "the default persists the map"
    );
    let plan = Plan::from_config(&cfg).unwrap();
    let logical = plan.core.logical_units;
    let mut src = Synth::new(SynthSpec {
        pattern: Pattern::Random,
        read_pct: 0,
        units: 1,
        requests: 2 * u64::from(logical),
        footprint_units: logical,
        seed: 1,
        ..SynthSpec::default()
    });
    let o = run(
        &plan,
        RunSpec {
            precondition: true,
            precondition_units: 1,
            precondition_footprint: 0,
            precondition_fast: false,
            verify: true,
            source: &mut src,
            progress: &mut |_, _| {},
        },
    )
    .unwrap();
    assert_eq!(o.run.mismatches, 0);
    assert_eq!(o.run.requests, 2 * u64::from(logical));
}

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
use sim_harness::crash::{run_crash, CrashSpec};
use sim_harness::sim::{run, Plan, RunSpec};
use sim_harness::workload::{Pattern, Synth, SynthSpec};

#[test]
fn random_writes_on_a_full_power_safe_drive_never_stall() {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=72",
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

/// `ftl crash` on a small drive whose spare space only just holds the
/// metadata region, the flush starting at half the buffer (so a cut finds
/// up to half of its 256 units buffered). Two ways it stopped before the
/// fixes: the power-cut flush took the last free block of a plane, so GC
/// there could not finish its victim after the mount and writes stalled
/// ("write stuck", seed 17); and a mount's settling cleaned a region that
/// had every free block and could still not reach the cut reserve, GC held
/// off, moving translation pages without end ("settling did not end",
/// seed 14).
#[test]
fn power_cuts_with_half_the_buffer_full_never_stall_recovery() {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=32",
        "ftl.map_entries_per_page=256",
        "buffer.write_buffer_bytes=1048576",
        "buffer.flush_start_ratio=0.5",
        "ftl.op_ratio=0.22",
    ] {
        cfg.apply_set(s).unwrap();
    }
    let plan = Plan::from_config(&cfg).unwrap();
    for seed in [14, 17] {
        // What `ftl crash --cuts 300 --seed N` runs.
        let spec = CrashSpec {
            cuts: 300,
            seed,
            timing: Some(plan.engine.timing),
            prefill: true,
            ..CrashSpec::default()
        };
        let r = run_crash(plan.core, plan.medium().unwrap(), &spec, |_| {}).unwrap();
        assert_eq!(r.cuts, 300, "seed {seed}");
        assert_eq!(r.lost_acknowledged, 0, "seed {seed}");
        assert_eq!(r.invalid_reads, 0, "seed {seed}");
    }
}

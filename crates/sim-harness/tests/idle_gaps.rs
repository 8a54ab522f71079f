//! Idle gaps (`IdleModel::Bursty`) start after completions, so they add
//! simulated time and leave the drive idle, whatever its speed.

use sim_harness::config::SimConfig;
use sim_harness::sim::{run, Outcome, Plan, RunSpec};
use sim_harness::workload::{IdleModel, Synth, SynthSpec};

/// 1000 random 4 KiB writes on a small drive with `idle` gaps.
fn writes(idle: IdleModel, sets: &[&str]) -> Outcome {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=1",
        "geometry.blocks_per_plane=40",
        // Too small for a metadata region: the mapping stays in DRAM.
        "ftl.map_entries_per_page=0",
    ]
    .iter()
    .chain(sets)
    {
        cfg.apply_set(s).unwrap();
    }
    let plan = Plan::from_config(&cfg).unwrap();
    let mut src = Synth::new(SynthSpec {
        units: 1,
        requests: 1000,
        footprint_units: plan.core.logical_units,
        seed: 3,
        idle,
        ..SynthSpec::default()
    });
    run(
        &plan,
        RunSpec {
            precondition: false,
            precondition_units: 1,
            precondition_footprint: 0,
            precondition_fast: false,
            verify: false,
            source: &mut src,
            progress: &mut |_, _| {},
        },
    )
    .unwrap()
}

#[test]
fn idle_requests_wait_their_gap_after_the_last_completion() {
    let gap = 1_000_000;
    let bursty = IdleModel::Bursty {
        busy_pct: 70,
        period: 100,
        idle_ns: gap,
    };
    let busy = writes(IdleModel::None, &[]);
    let idle = writes(bursty, &[]);
    assert_eq!(idle.run.requests, 1000);
    let span = |o: &Outcome| o.run.end_ns - o.run.start_ns;
    // 300 requests each wait a full gap after the drive went quiet.
    assert!(span(&idle) >= 300 * gap, "{}", span(&idle));
    assert!(span(&busy) < 300 * gap, "{}", span(&busy));
    // A slower drive takes longer for the same gaps: the gaps do not hide it.
    let slow = writes(
        bursty,
        &["timing.t_prog_us=3000", "buffer.write_buffer_bytes=65536"],
    );
    assert!(
        span(&slow) > span(&idle),
        "{} vs {}",
        span(&slow),
        span(&idle)
    );
}

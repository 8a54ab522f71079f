//! Per-block erase counts of the measured phase agree with the phase's
//! erase counter: the format's erases (every block once) and the
//! preconditioning's are not in them.

use sim_harness::config::SimConfig;
use sim_harness::sim::{run, Outcome, Plan, RunSpec};
use sim_harness::workload::{Synth, SynthSpec};

fn writes(requests: u64, precondition: bool) -> Outcome {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=1",
        "geometry.blocks_per_plane=40",
        // Too small for a metadata region: the mapping stays in DRAM.
        "ftl.map_entries_per_page=0",
    ] {
        cfg.apply_set(s).unwrap();
    }
    let plan = Plan::from_config(&cfg).unwrap();
    let mut src = Synth::new(SynthSpec {
        units: 1,
        requests,
        footprint_units: plan.core.logical_units,
        seed: 5,
        ..SynthSpec::default()
    });
    run(
        &plan,
        RunSpec {
            precondition,
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
fn erase_chart_counts_match_the_phase_counter() {
    // A short run on a fresh drive erases nothing, though every block was
    // erased once by the format.
    let fresh = writes(100, false);
    assert_eq!(fresh.ftl.nand_erases, 0);
    assert!(fresh.erase_counts.iter().all(|&e| e >= 1));
    assert!(fresh.phase_erase_counts.iter().all(|&e| e == 0));
    assert_eq!(fresh.phase_erase_counts.len(), fresh.erase_counts.len());
    // In steady state the per-block erases add up to the phase's erases.
    let steady = writes(20_000, true);
    let sum: u64 = steady
        .phase_erase_counts
        .iter()
        .map(|&e| u64::from(e))
        .sum();
    assert!(steady.ftl.nand_erases > 0);
    assert_eq!(sum, steady.ftl.nand_erases);
}

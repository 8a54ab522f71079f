//! Lifetime runs on the wordline model: GuardedErase and BPM keep every
//! host read equal to the oracle while blocks skip wordlines and wear out,
//! and GuardedErase outlives the baseline.

use proptest::prelude::*;
use sim_harness::config::SimConfig;
use sim_harness::lifetime::{run_lifetime, EndReason, LifetimeOutcome, LifetimeSpec};
use sim_harness::sim::Plan;
use sim_harness::workload::{Pattern, Synth, SynthSpec};

/// A small 192-wordline drive: 2 planes of 24 blocks, 8 KiB pages of
/// 4 KiB units, weakest wordline lasting `10K x scale` cycles.
fn plan(sets: &[&str], scale: f64) -> Plan {
    let mut c = SimConfig::preset("longftl-mqsim").unwrap();
    for s in [
        "geometry.channels=1",
        "geometry.planes_per_die=2",
        "geometry.blocks_per_plane=24",
        "ftl.op_ratio=0.6",
        "ftl.mapping_unit_bytes=4096",
        "ftl.wl_threshold=0",
        "buffer.write_buffer_bytes=262144",
    ] {
        c.apply_set(s).unwrap();
    }
    c.apply_set(&format!("nand.endurance_scale={scale}"))
        .unwrap();
    for s in sets {
        c.apply_set(s).unwrap();
    }
    Plan::from_config(&c).unwrap()
}

fn life(plan: &Plan, read_pct: u32, hot: u32, seed: u64) -> LifetimeOutcome {
    let logical = plan.core.logical_units;
    let mut src = Synth::new(SynthSpec {
        pattern: Pattern::HotCold {
            hot_access_pct: hot,
            hot_space_pct: 20,
        },
        read_pct,
        units: 2,
        requests: u64::MAX,
        footprint_units: logical,
        seed,
        ..SynthSpec::default()
    });
    run_lifetime(
        plan,
        LifetimeSpec {
            precondition_units: 2,
            precondition_footprint: 0,
            precondition_fast: false,
            source: &mut src,
            chunk_requests: 5_000,
            max_requests: 3_000_000,
            progress: &mut |_, _| {},
        },
    )
    .unwrap()
}

fn check(o: &LifetimeOutcome) -> Result<(), TestCaseError> {
    prop_assert_eq!(o.outcome.run.mismatches, 0);
    prop_assert_eq!(o.outcome.run.uncorrectable_reads, 0);
    prop_assert!(o.outcome.run.read_checks > 0);
    prop_assert!(
        o.end_reason != EndReason::RequestLimit,
        "{:?}",
        o.end_reason
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn guarded_erase_and_bpm_match_the_oracle_to_the_end_of_life(
        seed in 1u64..1000,
        read_pct in 0u32..60,
        hot in 50u32..95,
        mode in 0usize..4,
    ) {
        let sets: &[&str] = match mode {
            0 => &["erase.mode=gerase", "erase.gerase_mode=auto", "erase.waf_window=10"],
            1 => &["erase.mode=gerase", "erase.gerase_mode=5", "erase.gerase_scope=all"],
            2 => &["erase.mode=bpm", "erase.bpm_capacity_loss_pct=5.2"],
            _ => &["erase.mode=gerase", "erase.gerase_mode=2", "erase.gerase_scope=host"],
        };
        let o = life(&plan(sets, 0.002), read_pct, hot, seed);
        check(&o)?;
        if mode == 1 || mode == 3 {
            prop_assert!(o.outcome.ftl.guarded_erases > 0);
            prop_assert!(o.outcome.ftl.low_stress_wls > 0);
        }
    }
}

#[test]
fn guarded_erase_outlives_the_baseline() {
    let base = life(&plan(&["erase.mode=normal"], 0.002), 10, 80, 7);
    let ge = life(
        &plan(&["erase.mode=gerase", "erase.gerase_mode=1"], 0.002),
        10,
        80,
        7,
    );
    for o in [&base, &ge] {
        assert_eq!(o.outcome.run.mismatches, 0);
        assert_eq!(o.end_reason, EndReason::BadBlocks, "{:?}", o.end_reason);
    }
    assert_eq!(ge.mode_history, vec![1]);
    let gain = ge.tbw_bytes as f64 / base.tbw_bytes as f64;
    assert!(gain > 1.05, "gE(1) TBW gain {gain:.3}");
}

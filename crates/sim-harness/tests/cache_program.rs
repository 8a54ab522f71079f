//! Whole-drive runs on `dgcb-flashsim`: cache program hides the data-in of
//! sequential programs behind the previous program busy, the GC copy
//! mode decides how much channel time GC takes, and with GC crossing ways
//! every DGCB copy exchanges the DDT messages of seed 002's Table I in
//! Fig. 9's order while GCB exchanges none.

use sim_harness::config::SimConfig;
use sim_harness::ddt_msgs::DdtMsg::{self, *};
use sim_harness::sim::{run, Outcome, Plan, RunSpec};
use sim_harness::workload::{Pattern, Synth, SynthSpec};

/// `requests` writes of `units` units on a one-channel `dgcb-flashsim`.
fn writes(
    sets: &[&str],
    pattern: Pattern,
    units: u32,
    requests: u64,
    precondition: bool,
) -> Outcome {
    let mut cfg = SimConfig::preset("dgcb-flashsim").unwrap();
    for s in [
        "geometry.channels=1",
        "geometry.blocks_per_plane=64",
        "ftl.op_ratio=0.2",
    ]
    .iter()
    .chain(sets)
    {
        cfg.apply_set(s).unwrap();
    }
    let plan = Plan::from_config(&cfg).unwrap();
    let mut src = Synth::new(SynthSpec {
        pattern,
        units,
        requests,
        footprint_units: plan.core.logical_units,
        seed: 5,
        ..SynthSpec::default()
    });
    run(
        &plan,
        RunSpec {
            precondition,
            precondition_units: 2,
            precondition_footprint: 0,
            precondition_fast: false,
            verify: true,
            source: &mut src,
            progress: &mut |_, _| {},
        },
    )
    .unwrap()
}

fn mib_s(o: &Outcome) -> f64 {
    o.run.write_units as f64 / o.run.sim_seconds()
}

#[test]
fn cache_program_speeds_up_sequential_writes_of_one_die_by_the_hidden_data_in() {
    let one_die = ["geometry.dies_per_channel=1", "geometry.planes_per_die=1"];
    let run = |cache: &str| {
        let mut sets = one_die.to_vec();
        sets.push(cache);
        writes(&sets, Pattern::Sequential, 16, 1500, false)
    };
    let plain = run("timing.cache_program=false");
    let cached = run("timing.cache_program=true");
    assert_eq!(plain.run.mismatches + cached.run.mismatches, 0);
    // One page: 175 ns command + 8640 B at 25 ns + tPROG 1300 us; cache
    // program leaves tPROG per page: 1.166x.
    let gain = mib_s(&cached) / mib_s(&plain);
    assert!((1.12..1.18).contains(&gain), "{gain}");
}

#[test]
fn dgcb_and_icb_gc_take_less_channel_time_in_gc_than_gcb() {
    let util = |mode: &str| {
        let o = writes(&[mode], Pattern::Random, 2, 6000, true);
        assert_eq!(o.run.mismatches, 0);
        assert!(o.ftl.gc_victims > 0);
        let busy: u64 = o.gc_busy_ns.iter().sum();
        let window: u64 = o.gc_window_ns.iter().sum();
        busy as f64 / window as f64
    };
    let gcb = util("gc.copy_mode=gcb");
    let dgcb = util("gc.copy_mode=dgcb");
    let icb = util("gc.copy_mode=icb");
    assert!(gcb > 0.0 && gcb <= 1.0, "{gcb}");
    assert!(dgcb < 0.8 * gcb, "dgcb {dgcb} gcb {gcb}");
    assert!((icb - dgcb).abs() < 0.05 * gcb, "icb {icb} dgcb {dgcb}");
}

/// Random 8 KiB writes with GC crossing ways at P/E 2900 (the reads' bit
/// errors call for retransmission).
fn cross_way(mode: &str) -> Outcome {
    let sets = ["gc.destination=channel", "nand.initial_pe=2900", mode];
    let o = writes(&sets, Pattern::Random, 2, 6000, true);
    assert_eq!(o.run.mismatches, 0);
    assert!(o.ftl.gc_victims > 0);
    o
}

fn counts(o: &Outcome, kinds: &[DdtMsg]) -> Vec<u64> {
    kinds.iter().map(|m| o.gc_ddt_messages.count(*m)).collect()
}

#[test]
fn every_dgcb_copy_runs_the_whole_message_sequence() {
    let o = cross_way("gc.copy_mode=dgcb");
    let reads = counts(&o, &[ReadInit, ReadStart, ReadEnd]);
    let programs = counts(
        &o,
        &[ProgInit, DinReady, DdtBegin, DdtDone, ProgStart, ProgEnd],
    );
    // One read handshake per GC read, one program handshake per GC
    // program, and at least one direct transfer between two ways.
    assert!(reads.iter().all(|c| *c == reads[0] && *c > 0), "{reads:?}");
    assert!(
        programs.iter().all(|c| *c == programs[0] && *c > 0),
        "{programs:?}"
    );
    assert!((1..=programs[0]).contains(&o.gc_ddt_pages));
    // ERR_RETRANSMIT only for the copies whose read had bit errors, and
    // then on most of them at P/E 2900.
    let retx = o.gc_ddt_messages.count(ErrRetransmit);
    assert!(o.gc_retx_bytes > 0);
    assert!(
        retx <= programs[0] && retx * 2 > programs[0],
        "{retx} of {programs:?}"
    );
    // The report names every kind as Table I does.
    let json = o.gc_ddt_messages.to_json();
    for m in DdtMsg::ALL {
        assert_eq!(json[m.name()], o.gc_ddt_messages.count(m), "{}", m.name());
    }
    // Fig. 9's order for the last copy: the read's messages, then the
    // program's.
    let at = |m| o.gc_ddt_messages.last(m);
    assert!(at(ReadInit) <= at(ReadStart) && at(ReadStart) < at(ReadEnd));
    assert!(at(DdtBegin) < at(DdtDone) && at(DdtDone) <= at(ProgStart));
    assert!(at(ProgInit) <= at(DinReady) && at(DinReady) < at(DdtBegin));
    assert!(at(ProgStart) < at(ProgEnd));
}

#[test]
fn gcb_exchanges_no_ddt_messages() {
    let o = cross_way("gc.copy_mode=gcb");
    assert_eq!(counts(&o, &DdtMsg::ALL), vec![0; 10]);
    assert_eq!(o.gc_ddt_pages, 0);
}

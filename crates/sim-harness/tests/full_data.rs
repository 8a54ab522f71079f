//! Full-data runs: `nand.full_data` keeps real unit bytes on the medium and
//! every host read checks all of them.

use firmware_core::Error;
use nand_model::FullUnit;
use sim_harness::config::SimConfig;
use sim_harness::engine::StampUnit;
use sim_harness::sim::{run, Outcome, Plan, RunSpec};
use sim_harness::workload::{Pattern, Synth, SynthSpec};

/// The `default` preset shrunk to a few MiB of flash, with `sets` applied.
fn config(sets: &[&str]) -> SimConfig {
    let mut c = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=1",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=40",
        // Too small for a metadata region: the mapping stays in DRAM.
        "ftl.map_entries_per_page=0",
    ]
    .iter()
    .chain(sets)
    {
        c.apply_set(s).unwrap();
    }
    c
}

/// Random writes of about three times the logical space with 30 % reads,
/// then a full read-back.
fn run_mixed(plan: &Plan) -> Outcome {
    let logical = plan.core.logical_units;
    let units = 2;
    let mut src = Synth::new(SynthSpec {
        pattern: Pattern::Random,
        read_pct: 30,
        units,
        requests: u64::from(logical) * 3 / 2 * 10 / 7,
        footprint_units: logical,
        interarrival_ns: 0,
        seed: 7,
        ..SynthSpec::default()
    });
    run(
        plan,
        RunSpec {
            precondition: false,
            precondition_units: 1,
            precondition_footprint: 0,
            precondition_fast: false,
            verify: true,
            source: &mut src,
            progress: &mut |_, _| {},
        },
    )
    .unwrap_or_else(|e| panic!("run failed: {e}"))
}

fn full_and_stamp(sets: &[&str]) {
    let mut c = config(sets);
    let stamp_plan = Plan::from_config(&c).unwrap();
    c.apply_set("nand.full_data=true").unwrap();
    let plan = Plan::from_config(&c).unwrap();
    assert!(plan.full_data && !stamp_plan.full_data);
    let full = run_mixed(&plan);
    let r = &full.run;
    assert!(r.read_checks > u64::from(plan.core.logical_units));
    assert_eq!(r.mismatches, 0);
    assert!(full.ftl.gc_victims > 0, "no GC: {:?}", full.ftl);
    assert!(full.ftl.gc_program_units > 0, "no GC: {:?}", full.ftl);
    // The full-data medium delegates every rule: the stamp run is identical.
    let stamp = run_mixed(&stamp_plan);
    assert_eq!(stamp.run.read_checks, r.read_checks);
    assert_eq!(stamp.run.uncorrectable_reads, r.uncorrectable_reads);
    assert_eq!(stamp.run.mismatches, 0);
    assert_eq!(stamp.run.end_ns, r.end_ns);
    assert_eq!(stamp.ftl, full.ftl);
    assert_eq!(stamp.nand, full.nand);
}

#[test]
fn default_preset_16k_pages_4k_units() {
    full_and_stamp(&[]);
}

#[test]
fn small_and_large_units() {
    // 4 units of 512 bytes per 2 KiB page.
    full_and_stamp(&[
        "geometry.page_bytes=2048",
        "ftl.mapping_unit_bytes=512",
        "geometry.blocks_per_plane=64",
        "buffer.write_buffer_bytes=65536",
    ]);
    // One 16 KiB unit per page.
    full_and_stamp(&["ftl.mapping_unit_bytes=16384"]);
}

#[test]
fn unsupported_unit_size_is_rejected() {
    let mut c = config(&["geometry.page_bytes=12288", "ftl.mapping_unit_bytes=3072"]);
    let stamp = Plan::from_config(&c).unwrap();
    c.apply_set("nand.full_data=true").unwrap();
    match Plan::from_config(&c) {
        Err(e) => assert_eq!(e.key, "nand.full_data", "{e}"),
        Ok(_) => panic!("3072-byte units accepted for full data"),
    }
    // A plan set by hand fails at run time with a clear error.
    {
        let mut plan = stamp;
        plan.full_data = true;
        let mut src = Synth::new(SynthSpec {
            pattern: Pattern::Sequential,
            read_pct: 0,
            units: 1,
            requests: 1,
            footprint_units: 1,
            interarrival_ns: 0,
            seed: 1,
            ..SynthSpec::default()
        });
        let r = run(
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
        );
        match r {
            Err(Error::InvalidConfig(s)) => assert!(s.contains("nand.full_data"), "{s}"),
            other => panic!("{:?}", other.map(|o| o.run)),
        }
    }
}

#[test]
fn full_unit_check_catches_any_changed_byte() {
    fn check<const B: usize>() {
        let s = (12345u64 << 32) | 678;
        let u = FullUnit::<B>::from_stamp(s);
        assert!(u.matches(s));
        assert!(!u.matches(s + 1));
        assert!(!u.matches((12346u64 << 32) | 678));
        assert!(!u.matches(0));
        // Every byte matters, including the last ones.
        for i in [0, 1, 7, 8, B / 2, B - 9, B - 1] {
            let mut bad = u;
            bad.as_bytes_mut()[i] ^= 0x10;
            assert!(!bad.matches(s), "byte {i} of {B} not checked");
        }
        // A unit holding another unit's second half is caught too.
        let mut mixed = u;
        let other = FullUnit::<B>::from_stamp(s ^ 1);
        mixed.as_bytes_mut()[B / 2..].copy_from_slice(&other.as_bytes()[B / 2..]);
        assert!(!mixed.matches(s));
        // Stamp 0 is the zeroed unit, as for `u64`.
        assert_eq!(FullUnit::<B>::from_stamp(0), FullUnit::<B>::default());
        assert!(FullUnit::<B>::default().matches(0));
        assert!(!FullUnit::<B>::default().matches(s));
        let mut z = FullUnit::<B>::default();
        z.as_bytes_mut()[B - 1] = 1;
        assert!(!z.matches(0));
        // In-place fill agrees with the constructor.
        let mut v = FullUnit::<B>::from_stamp(99);
        v.set_stamp(s);
        assert_eq!(v, u);
        v.set_stamp(0);
        assert_eq!(v, FullUnit::<B>::default());
    }
    check::<512>();
    check::<4096>();
    check::<16384>();
    // Sizes that are not a multiple of the 8-byte pattern word.
    check::<13>();
    check::<4100>();
    // The compact stamp is its own check.
    assert!(u64::from_stamp(5).matches(5));
    assert!(!5u64.matches(6));
    assert_eq!(u64::from_stamp(0), u64::default());
}

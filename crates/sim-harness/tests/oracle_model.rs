//! The core on the real medium model: random writes, reads, trims and flushes
//! against an oracle while the model injects factory bad blocks, program and
//! erase failures, and (on worn media) uncorrectable reads. A read may fail;
//! it must never return data other than what was last written.

use firmware_core::{Config, Error, FullFtl, Geometry, Lpn, ReadValue, SyncDriver};
use nand_model::{FaultConfig, ReliabilityConfig, SimMedium};
use proptest::prelude::*;
use sim_harness::engine::CoreStore;

#[derive(Clone, Debug)]
enum Op {
    Write(u32),
    Read(u32),
    Trim(u32),
    Flush,
}

fn ops(n: u32) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            6 => (0..n).prop_map(Op::Write),
            3 => (0..n).prop_map(Op::Read),
            1 => (0..n).prop_map(Op::Trim),
            1 => Just(Op::Flush),
        ],
        50..400,
    )
}

fn geometry() -> Geometry {
    Geometry {
        channels: 2,
        dies_per_channel: 1,
        planes_per_die: 2,
        blocks_per_plane: 24,
        pages_per_block: 8,
        page_bytes: 8192,
        pages_per_wordline: 2,
        units_per_page: 2,
    }
}

struct Outcome {
    checked: u64,
    media_errors: u64,
    stats: firmware_core::Stats,
}

fn run(
    ops: &[Op],
    faults: FaultConfig,
    initial_pe: u32,
    rounds: u64,
) -> Result<Outcome, TestCaseError> {
    let mut cfg = Config::with_op_ratio(geometry(), 0.5).unwrap();
    cfg.write_buffer_units = 6;
    cfg.read_slots = 4;
    cfg.max_inflight = 24;
    cfg.wl_threshold = 4;
    cfg.wl_check_interval = 8;
    let mut store = CoreStore::new(&cfg).unwrap();
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut nand = SimMedium::new(cfg.geometry, ReliabilityConfig::default(), faults).unwrap();
    nand.set_initial_pe(initial_pe);
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    let n = cfg.logical_units;
    let mut oracle: Vec<Option<u64>> = vec![None; n as usize];
    let (mut stamp, mut checked, mut media_errors) = (0u64, 0u64, 0u64);
    let mut check = |got: ReadValue<u64>, want: Option<u64>, l: u32| -> Result<(), TestCaseError> {
        match (got, want) {
            (ReadValue::Error, _) => media_errors += 1,
            (ReadValue::Data(g), Some(w)) => prop_assert_eq!(g, w, "lpn {}", l),
            (ReadValue::Unmapped, None) => {}
            (g, w) => prop_assert!(false, "lpn {}: got {:?}, want {:?}", l, g, w),
        }
        checked += 1;
        Ok(())
    };
    'rounds: for _ in 0..rounds {
        for op in ops {
            match *op {
                Op::Write(l) => {
                    let l = l % n;
                    stamp += 1;
                    match drv.write(&mut ftl, Lpn(l), stamp) {
                        Ok(()) => oracle[l as usize] = Some(stamp),
                        // Failures may eat the spare blocks; the drive then refuses writes.
                        Err(Error::OutOfSpace) => break 'rounds,
                        Err(e) => return Err(TestCaseError::fail(format!("write: {e}"))),
                    }
                }
                Op::Read(l) => {
                    let l = l % n;
                    check(drv.read(&mut ftl, Lpn(l)).unwrap(), oracle[l as usize], l)?;
                }
                Op::Trim(l) => {
                    let l = l % n;
                    drv.trim(&mut ftl, Lpn(l)).unwrap();
                    oracle[l as usize] = None;
                }
                Op::Flush => drv.flush(&mut ftl).unwrap(),
            }
        }
        ftl.audit()
            .map_err(|e| TestCaseError::fail(format!("audit: {e}")))?;
    }
    for l in 0..n {
        check(drv.read(&mut ftl, Lpn(l)).unwrap(), oracle[l as usize], l)?;
    }
    Ok(Outcome {
        checked,
        media_errors,
        stats: *ftl.stats(),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn no_wrong_data_under_injected_failures(
        ops in ops(300),
        seed in any::<u32>(),
        fp in 0.0f64..0.02,
        fe in 0.0f64..0.05,
        bad in 0.0f64..0.05,
    ) {
        let faults = FaultConfig {
            seed: u64::from(seed),
            factory_bad_fraction: bad,
            program_fail_prob: fp,
            erase_fail_prob: fe,
        };
        let out = run(&ops, faults, 0, 8)?;
        prop_assert_eq!(out.media_errors, 0, "fresh media must read back cleanly");
    }

    #[test]
    fn worn_media_may_fail_reads_but_never_lies(ops in ops(300), seed in any::<u32>()) {
        let faults = FaultConfig { seed: u64::from(seed), ..FaultConfig::default() };
        // Far beyond rated endurance: many reads are uncorrectable.
        run(&ops, faults, 4500, 4)?;
    }
}

#[test]
fn failures_and_wear_really_happen() {
    let ops: Vec<Op> = (0..3000u32)
        .map(|i| match i % 7 {
            0 => Op::Read(i.wrapping_mul(2654435761) >> 8),
            _ => Op::Write(i.wrapping_mul(2246822519) >> 8),
        })
        .collect();
    let faults = FaultConfig {
        seed: 3,
        factory_bad_fraction: 0.03,
        program_fail_prob: 0.004,
        erase_fail_prob: 0.01,
    };
    let out = run(&ops, faults, 0, 3).unwrap();
    assert!(
        out.stats.program_failures > 0 && out.stats.erase_failures > 0,
        "{:?}",
        out.stats
    );
    assert!(out.stats.gc_victims > 50, "{:?}", out.stats);
    assert!(out.checked > 1000);
    let worn = run(&ops, FaultConfig::default(), 4500, 1).unwrap();
    assert!(worn.media_errors > 0, "the worn medium never failed a read");
}

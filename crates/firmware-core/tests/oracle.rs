//! The core against an in-memory oracle: random writes, reads, trims and
//! flushes across GC, wear levelling and injected program/erase failures.

mod common;

use common::{small_geometry, Store, TestNand};
use firmware_core::{
    Config, CopybackMode, CopybackPolicy, FullFtl, Lpn, ReadValue, Selector, SyncDriver,
};
use proptest::prelude::*;
use test_kit::rng::XorShift64;

#[derive(Clone, Debug)]
enum Op {
    Write(u32),
    Read(u32),
    Trim(u32),
    Flush,
}

fn op_strategy(n: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..n).prop_map(Op::Write),
        3 => (0..n).prop_map(Op::Read),
        1 => (0..n).prop_map(Op::Trim),
        1 => Just(Op::Flush),
    ]
}

fn config(upp: u8, wl: u32) -> Config {
    let mut cfg = Config::with_op_ratio(small_geometry(upp), 0.6).unwrap();
    cfg.write_buffer_units = 8;
    cfg.read_slots = 4;
    cfg.max_inflight = 32;
    cfg.wl_threshold = wl;
    cfg.wl_check_interval = 4;
    cfg
}

/// Runs `ops` and checks every read against the oracle; returns the number of reads checked.
fn run(
    cfg: Config,
    ops: &[Op],
    fail_prog: u64,
    fail_erase: u64,
) -> Result<(u64, firmware_core::Stats), TestCaseError> {
    let mut store = Store::new(&cfg);
    let mut nand = TestNand::new(cfg.geometry);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    drv.nand.fail_program_every = fail_prog;
    drv.nand.fail_erase_every = fail_erase;
    let mut oracle: Vec<Option<u64>> = vec![None; cfg.logical_units as usize];
    let mut stamp = 0u64;
    let mut checked = 0;
    // Repeat the sequence so GC runs many times over.
    for round in 0..6u64 {
        for op in ops {
            match *op {
                Op::Write(l) => {
                    stamp += 1;
                    let v = (round << 48) | stamp;
                    match drv.write(&mut ftl, Lpn(l), v) {
                        Ok(()) => oracle[l as usize] = Some(v),
                        Err(firmware_core::Error::OutOfSpace) => {
                            // Only acceptable once failures ate the spare blocks.
                            prop_assert!(
                                fail_prog != 0 || fail_erase != 0,
                                "out of space without failures"
                            );
                            return Ok((checked, *ftl.stats()));
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("write: {e}"))),
                    }
                }
                Op::Read(l) => {
                    let got = drv.read(&mut ftl, Lpn(l)).unwrap();
                    let want = match oracle[l as usize] {
                        Some(v) => ReadValue::Data(v),
                        None => ReadValue::Unmapped,
                    };
                    prop_assert_eq!(got, want, "lpn {}", l);
                    checked += 1;
                }
                Op::Trim(l) => {
                    drv.trim(&mut ftl, Lpn(l)).unwrap();
                    oracle[l as usize] = None;
                }
                Op::Flush => match drv.flush(&mut ftl) {
                    Ok(()) => {}
                    Err(firmware_core::Error::OutOfSpace) => {
                        prop_assert!(
                            fail_prog != 0 || fail_erase != 0,
                            "flush out of space without failures"
                        );
                        return Ok((checked, *ftl.stats()));
                    }
                    Err(e) => {
                        return Err(TestCaseError::fail(format!(
                            "flush: {e} ({:?})",
                            cfg.copyback
                        )))
                    }
                },
            }
        }
        if let Err(e) = ftl.audit() {
            return Err(TestCaseError::fail(format!("audit: {e}")));
        }
    }
    // Final full read-back.
    for (l, want) in oracle.iter().enumerate() {
        let got = drv.read(&mut ftl, Lpn(l as u32)).unwrap();
        let want = match want {
            Some(v) => ReadValue::Data(*v),
            None => ReadValue::Unmapped,
        };
        prop_assert_eq!(got, want, "final lpn {}", l);
        checked += 1;
    }
    Ok((checked, *ftl.stats()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn matches_oracle_one_unit_per_page(ops in prop::collection::vec(op_strategy(200), 1..600)) {
        let cfg = config(1, 0);
        let n = cfg.logical_units;
        let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
        run(cfg, &ops, 0, 0)?;
    }

    #[test]
    fn matches_oracle_four_units_per_page_with_wear_levelling(ops in prop::collection::vec(op_strategy(800), 1..900)) {
        let cfg = config(4, 3);
        let n = cfg.logical_units;
        let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
        run(cfg, &ops, 0, 0)?;
    }

    #[test]
    fn matches_oracle_under_program_and_erase_failures(
        ops in prop::collection::vec(op_strategy(150), 1..500),
        fp in 40u64..400,
        fe in 20u64..200,
    ) {
        let cfg = config(2, 0);
        let n = cfg.logical_units;
        let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
        run(cfg, &ops, fp, fe)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Superblock order with list pages, under program and erase failures.
    #[test]
    fn matches_oracle_in_superblocks_with_list_pages(
        ops in prop::collection::vec(op_strategy(300), 1..600),
        fp in prop::option::of(40u64..400),
        fe in prop::option::of(20u64..200),
        lists in any::<bool>(),
    ) {
        let mut cfg = config(2, 0);
        cfg.superblock.enabled = true;
        cfg.superblock.list_pages = lists;
        let n = cfg.logical_units;
        let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
        let (_, st) = run(cfg, &ops, fp.unwrap_or(0), fe.unwrap_or(0))?;
        prop_assert!(st.host_program_units == 0 || st.superblocks > 0);
        // Sixteen blocks' worth of host pages fill blocks, so list pages go out.
        if lists && st.host_program_units > 16 * 8 * 2 {
            prop_assert!(st.list_pages > 0, "{st:?}");
        }
    }
}

/// Every copyback mode, with both selectors: the same oracle must hold.
fn copyback_modes() -> Vec<CopybackPolicy> {
    let mut v = Vec::new();
    for mode in [
        CopybackMode::FastGc,
        CopybackMode::RcftlPerPage,
        CopybackMode::Rcftl,
        CopybackMode::Unchecked,
    ] {
        for selector in [Selector::Greedy, Selector::Dmms] {
            v.push(CopybackPolicy {
                mode,
                selector,
                dmms_window_ns: 1_000,
                ..CopybackPolicy::OFF_CHIP
            });
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn matches_oracle_with_every_copyback_mode(
        ops in prop::collection::vec(op_strategy(400), 1..700),
        upp in 1u8..=2,
        min_live in 0u8..=1,
        fp in prop::option::of(60u64..400),
    ) {
        for cb in copyback_modes() {
            let mut cfg = config(upp, 0);
            cfg.copyback = CopybackPolicy { min_live_units: min_live, ..cb };
            let n = cfg.logical_units;
            let ops: Vec<Op> = ops.iter().cloned().map(|o| clamp(o, n)).collect();
            let (_, stats) = run(cfg, &ops, fp.unwrap_or(0), 0)?;
            prop_assert_eq!(stats.lost_units, 0);
        }
    }
}

/// Copyback really happens in each copying mode, and the rcFTL per-block
/// variant keeps several GC active blocks.
#[test]
fn copyback_modes_copy_back() {
    let ops: Vec<Op> = (0..4000u32).map(|i| Op::Write((i * 7919) % 300)).collect();
    for cb in copyback_modes() {
        let mut cfg = config(1, 0);
        cfg.copyback = CopybackPolicy {
            selector: Selector::Greedy,
            ..cb
        };
        let (_, stats) = run(cfg, &ops, 0, 0).unwrap();
        assert!(stats.nand_copybacks > 0, "{:?}: {stats:?}", cb.mode);
        assert!(stats.gc_victims > 0, "{:?}", cb.mode);
        if cb.mode == CopybackMode::Rcftl {
            assert!(stats.epm_active_blocks_max >= 2, "{stats:?}");
            assert!(stats.classified_blocks > 0, "{stats:?}");
        }
    }
    let mut cfg = config(1, 0);
    cfg.copyback = CopybackPolicy::OFF_CHIP;
    let (_, stats) = run(cfg, &ops, 0, 0).unwrap();
    assert_eq!(stats.nand_copybacks, 0);
}

fn clamp(o: Op, n: u32) -> Op {
    match o {
        Op::Write(l) => Op::Write(l % n),
        Op::Read(l) => Op::Read(l % n),
        Op::Trim(l) => Op::Trim(l % n),
        Op::Flush => Op::Flush,
    }
}

#[test]
fn fills_to_100_percent_and_overwrites_without_deadlock() {
    let cfg = config(2, 4);
    let n = cfg.logical_units;
    let ops: Vec<Op> = (0..n)
        .map(Op::Write)
        .chain((0..n).rev().map(Op::Write))
        .chain((0..n).map(Op::Read))
        .collect();
    let (checked, stats) = run(cfg, &ops, 0, 0).unwrap();
    assert!(checked >= u64::from(n) * 6);
    // The drive was filled six times over: GC must have reclaimed many victims.
    assert!(stats.gc_victims > 50, "{stats:?}");
    assert!(stats.gc_program_units > 0);
}

#[test]
fn long_random_run_exercises_gc_wear_levelling_and_failures() {
    // A deterministic long sequence so the counters below are guaranteed to move.
    let cfg = config(2, 2);
    let n = cfg.logical_units;
    let mut rng = XorShift64(12345);
    let mut ops = Vec::new();
    for _ in 0..4000 {
        let x = rng.next_u64();
        // A hot tenth of the space takes most writes, so cold blocks age slowly.
        let l = if x % 10 < 8 {
            (x >> 8) as u32 % (n / 10)
        } else {
            (x >> 8) as u32 % n
        };
        ops.push(if x.is_multiple_of(7) {
            Op::Read(l)
        } else {
            Op::Write(l)
        });
    }
    let (_, stats) = run(cfg, &ops, 0, 0).unwrap();
    assert!(stats.gc_victims > 100, "{stats:?}");
    assert!(
        stats.wl_moves > 0,
        "static wear levelling never ran: {stats:?}"
    );
    let (_, stats) = run(cfg, &ops, 997, 331).unwrap();
    assert!(
        stats.program_failures > 0 && stats.erase_failures > 0,
        "{stats:?}"
    );
    assert!(stats.grown_bad_blocks > 0, "{stats:?}");
}

#[test]
fn reads_of_one_page_share_one_nand_read() {
    use firmware_core::{HostCompletion, ReadStart, ReadStatus, Tag};
    let cfg = config(4, 0);
    let mut store = Store::new(&cfg);
    let mut nand = TestNand::new(cfg.geometry);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    // Four consecutive units fill one page; flush so they are on flash.
    for l in 0..4u32 {
        drv.write(&mut ftl, Lpn(l), 100 + u64::from(l)).unwrap();
    }
    drv.flush(&mut ftl).unwrap();
    let before = ftl.stats().nand_reads;
    // Read them in a scrambled order without running the driver in between.
    for l in [2u32, 0, 3, 1] {
        assert_eq!(ftl.read(Tag(l), Lpn(l), 0).unwrap(), ReadStart::Issued);
    }
    assert_eq!(
        ftl.stats().nand_reads - before,
        1,
        "one page read for four units"
    );
    drv.run(&mut ftl).unwrap();
    let mut seen = 0;
    while let Some(c) = ftl.poll_completion() {
        let HostCompletion::Read { tag, slot, status } = c else {
            continue;
        };
        assert_eq!(status, ReadStatus::Ok);
        assert_eq!(
            drv.data[usize::from(slot.0)],
            100 + u64::from(tag.0),
            "tag {}",
            tag.0
        );
        seen += 1;
    }
    assert_eq!(seen, 4);
}

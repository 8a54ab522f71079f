//! Copyless copy against an in-memory oracle: random writes, copies,
//! overwrites, trims and reads on a small drive (GC and wear levelling run
//! all the time), with remapped and physical copies. Every tag must read
//! what was copied to it, and a fully remapped copy must cost no NAND
//! operation.

mod common;

use common::{small_geometry, Store, TestNand};
use firmware_core::{
    Config, CopyConfig, CopyFallback, CopyMode, CopyStop, CopybackMode, CopybackPolicy, FullFtl,
    Lpn, ReadValue, Selector, SyncDriver,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Write(u32),
    Copy(u32, u32, u32),
    Read(u32),
    Trim(u32),
    Flush,
}

fn op_strategy(n: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..n).prop_map(Op::Write),
        4 => (0..n, 0..n, 1u32..5).prop_map(|(s, d, k)| Op::Copy(s, d, k)),
        2 => (0..n).prop_map(Op::Read),
        1 => (0..n).prop_map(Op::Trim),
        1 => Just(Op::Flush),
    ]
}

fn config(upp: u8, mode: CopyMode, bits: u8, shadow: u32, wl: u32) -> Config {
    let mut cfg = Config::with_op_ratio(small_geometry(upp), 0.6).unwrap();
    cfg.write_buffer_units = 8;
    cfg.read_slots = 4;
    cfg.max_inflight = 32;
    cfg.wl_threshold = wl;
    cfg.wl_check_interval = 4;
    cfg.copy = CopyConfig {
        mode,
        refcount_bits: bits,
        shadow_entries: shadow,
    };
    cfg
}

/// What a run saw.
#[derive(Debug, Default)]
struct Seen {
    copies_all_remapped: u64,
    remapped_units: u64,
}

/// Runs `ops` (three rounds) and checks every read against the oracle.
fn run(cfg: Config, ops: &[Op]) -> Result<(Seen, firmware_core::Stats), TestCaseError> {
    let mut store = Store::new(&cfg);
    let mut nand = TestNand::new(cfg.geometry);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    let n = cfg.logical_units;
    let mut oracle: Vec<Option<u64>> = vec![None; n as usize];
    let mut stamp = 0u64;
    let mut seen = Seen::default();
    for round in 0..3u64 {
        for op in ops {
            match *op {
                Op::Write(l) => {
                    stamp += 1;
                    let v = (round << 48) | stamp;
                    drv.write(&mut ftl, Lpn(l), v)
                        .map_err(|e| TestCaseError::fail(format!("write: {e}")))?;
                    oracle[l as usize] = Some(v);
                }
                Op::Copy(s, d, k) => {
                    let k = k.min(n - s).min(n - d);
                    if s != d && s < d + k && d < s + k {
                        prop_assert!(ftl.copy(Lpn(s), Lpn(d), k, 0).is_err(), "overlap refused");
                        continue;
                    }
                    let before = *ftl.stats();
                    drv.copy(&mut ftl, Lpn(s), Lpn(d), k)
                        .map_err(|e| TestCaseError::fail(format!("copy: {e}")))?;
                    let after = *ftl.stats();
                    let remapped = after.copy_remapped_units - before.copy_remapped_units;
                    let fell_back = after.copy_fallback_units - before.copy_fallback_units;
                    seen.remapped_units += remapped;
                    if s != d {
                        prop_assert_eq!(remapped + fell_back, u64::from(k));
                    }
                    if cfg.copy.mode == CopyMode::Physical {
                        prop_assert_eq!(remapped, 0);
                    }
                    if fell_back == 0 {
                        // A copy served entirely by remapping touches no NAND.
                        prop_assert_eq!(after.nand_programs, before.nand_programs);
                        prop_assert_eq!(after.nand_reads, before.nand_reads);
                        prop_assert_eq!(after.nand_erases, before.nand_erases);
                        seen.copies_all_remapped += 1;
                    }
                    for i in 0..k {
                        oracle[(d + i) as usize] = oracle[(s + i) as usize];
                    }
                }
                Op::Read(l) => {
                    let got = drv.read(&mut ftl, Lpn(l)).unwrap();
                    let want = oracle[l as usize].map_or(ReadValue::Unmapped, ReadValue::Data);
                    prop_assert_eq!(got, want, "lpn {}", l);
                }
                Op::Trim(l) => {
                    drv.trim(&mut ftl, Lpn(l)).unwrap();
                    oracle[l as usize] = None;
                }
                Op::Flush => drv
                    .flush(&mut ftl)
                    .map_err(|e| TestCaseError::fail(format!("flush: {e}")))?,
            }
        }
        if let Err(e) = ftl.audit() {
            return Err(TestCaseError::fail(format!("audit: {e}")));
        }
    }
    for (l, want) in oracle.iter().enumerate() {
        let got = drv.read(&mut ftl, Lpn(l as u32)).unwrap();
        let want = want.map_or(ReadValue::Unmapped, ReadValue::Data);
        prop_assert_eq!(got, want, "final lpn {}", l);
    }
    ftl.audit()
        .map_err(|e| TestCaseError::fail(format!("audit: {e}")))?;
    Ok((seen, *ftl.stats()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Remapped copies agree with the oracle under GC and wear-levelling
    /// pressure, for several count widths and shadow sizes (small ones force
    /// both fallbacks), and so do physical copies.
    #[test]
    fn copies_match_oracle(
        ops in prop::collection::vec(op_strategy(300), 1..500),
        upp in 1u8..=2,
        bits in 1u8..=4,
        shadow in prop::sample::select(vec![0u32, 3, 16, 400]),
        wl in prop::sample::select(vec![0u32, 3]),
    ) {
        let cfg = config(upp, CopyMode::Remap, bits, shadow, wl);
        let n = cfg.logical_units;
        let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
        run(cfg, &ops)?;
        let cfg = config(upp, CopyMode::Physical, bits, shadow, wl);
        let (_, stats) = run(cfg, &ops)?;
        prop_assert_eq!(stats.copy_remapped_units, 0);
    }

    /// The same with GC moving pages by copyback (shared units relocated on
    /// chip must still remap every tag).
    #[test]
    fn copies_match_oracle_with_copyback(
        ops in prop::collection::vec(op_strategy(300), 1..400),
        mode in prop::sample::select(vec![CopybackMode::FastGc, CopybackMode::Unchecked]),
    ) {
        let mut cfg = config(2, CopyMode::Remap, 3, 64, 3);
        cfg.copyback = CopybackPolicy {
            mode,
            selector: Selector::Greedy,
            ..CopybackPolicy::OFF_CHIP
        };
        let n = cfg.logical_units;
        let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
        run(cfg, &ops)?;
    }
}

fn clamp(o: Op, n: u32) -> Op {
    match o {
        Op::Write(l) => Op::Write(l % n),
        Op::Copy(s, d, k) => Op::Copy(s % n, d % n, k),
        Op::Read(l) => Op::Read(l % n),
        Op::Trim(l) => Op::Trim(l % n),
        Op::Flush => Op::Flush,
    }
}

/// A journal-like sequence: many copies of flushed data, heavy overwrite
/// traffic afterwards. Most copies are remapped and cost nothing.
#[test]
fn remapped_copies_cost_no_programs_and_survive_gc() {
    let cfg = config(2, CopyMode::Remap, 4, 512, 3);
    let n = cfg.logical_units;
    // Two thirds of the logical space in use: enough for GC pressure on
    // this tiny drive without pinning it at full.
    let half = n / 3;
    let mut ops = Vec::new();
    for i in 0..half {
        ops.push(Op::Write(i));
    }
    ops.push(Op::Flush);
    for i in (0..half).step_by(8) {
        ops.push(Op::Copy(i, half + i, 8.min(half - i)));
    }
    for i in 0..3000u32 {
        ops.push(Op::Write((i * 7919) % half));
        if i % 97 == 0 {
            ops.push(Op::Flush);
            ops.push(Op::Copy((i * 31) % half, half + (i * 17) % half, 1));
        }
    }
    let ops: Vec<Op> = ops.into_iter().map(|o| clamp(o, n)).collect();
    let (seen, stats) = run(cfg, &ops).unwrap();
    assert!(seen.copies_all_remapped > 10, "{seen:?}");
    assert!(seen.remapped_units >= u64::from(half), "{seen:?} {stats:?}");
    assert!(stats.gc_victims > 0, "{stats:?}");
}

fn drive(cfg: Config) -> (Store, TestNand) {
    (Store::new(&cfg), TestNand::new(cfg.geometry))
}

#[test]
fn copy_of_k_flushed_units_is_a_pure_remap() {
    let cfg = config(2, CopyMode::Remap, 4, 64, 0);
    let (mut store, mut nand) = drive(cfg);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    for l in 0..16 {
        drv.write(&mut ftl, Lpn(l), 100 + u64::from(l)).unwrap();
    }
    drv.flush(&mut ftl).unwrap();
    let before = *ftl.stats();
    let p = ftl.copy(Lpn(0), Lpn(100), 16, 0).unwrap();
    assert_eq!(p.remapped, 16);
    assert_eq!(p.stop, CopyStop::Done);
    assert_eq!(ftl.poll_op(), None, "a remap emits no NAND operation");
    let after = *ftl.stats();
    assert_eq!(after.nand_programs, before.nand_programs);
    assert_eq!(after.nand_reads, before.nand_reads);
    assert_eq!(after.copy_remapped_units, 16);
    for l in 0..16 {
        assert_eq!(
            drv.read(&mut ftl, Lpn(100 + l)).unwrap(),
            ReadValue::Data(100 + u64::from(l))
        );
    }
    // Copy-on-write: overwriting the source leaves the copy intact.
    drv.write(&mut ftl, Lpn(3), 7).unwrap();
    drv.trim(&mut ftl, Lpn(4)).unwrap();
    drv.flush(&mut ftl).unwrap();
    assert_eq!(drv.read(&mut ftl, Lpn(103)).unwrap(), ReadValue::Data(103));
    assert_eq!(drv.read(&mut ftl, Lpn(104)).unwrap(), ReadValue::Data(104));
    assert_eq!(drv.read(&mut ftl, Lpn(3)).unwrap(), ReadValue::Data(7));
    ftl.audit().unwrap();
}

#[test]
fn fallbacks_are_reported_and_physical_copies_are_right() {
    // Two-bit counts (3 tags at most), two shadow records.
    let cfg = config(2, CopyMode::Remap, 2, 2, 0);
    let (mut store, mut nand) = drive(cfg);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    for l in 0..5 {
        drv.write(&mut ftl, Lpn(l), 10 + u64::from(l)).unwrap();
    }
    // Unit 4 is still in the write buffer (half a page): the driver copies.
    let p = ftl.copy(Lpn(4), Lpn(54), 1, 0).unwrap();
    assert_eq!(p.stop, CopyStop::Physical(CopyFallback::SourceBuffered));
    assert_eq!(p.remapped, 0);
    drv.copy(&mut ftl, Lpn(4), Lpn(54), 1).unwrap();
    drv.flush(&mut ftl).unwrap();
    assert_eq!(drv.read(&mut ftl, Lpn(54)).unwrap(), ReadValue::Data(14));
    // Unit 0 shared by 0 and 50: both shadow records used.
    let p = ftl.copy(Lpn(0), Lpn(50), 1, 0).unwrap();
    assert_eq!((p.remapped, p.stop), (1, CopyStop::Done));
    // Shadow full: sharing unit 1 needs two more records.
    let p = ftl.copy(Lpn(1), Lpn(51), 1, 0).unwrap();
    assert_eq!(p.stop, CopyStop::Physical(CopyFallback::ShadowFull));
    drv.copy(&mut ftl, Lpn(1), Lpn(51), 1).unwrap();
    assert_eq!(drv.read(&mut ftl, Lpn(51)).unwrap(), ReadValue::Data(11));
    // Copy-on-write frees a record: the next copy of unit 0 fits, and the
    // count (0, 52, then 53 would be a fourth tag) overflows after it.
    drv.write(&mut ftl, Lpn(50), 99).unwrap();
    let p = ftl.copy(Lpn(0), Lpn(52), 1, 0).unwrap();
    assert_eq!((p.remapped, p.stop), (1, CopyStop::Done));
    let before = ftl.stats().copy_fallback_units;
    drv.copy(&mut ftl, Lpn(0), Lpn(53), 1).unwrap();
    assert_eq!(ftl.stats().copy_fallback_units, before + 1);
    for (l, v) in [(0, 10), (50, 99), (51, 11), (52, 10), (53, 10)] {
        assert_eq!(
            drv.read(&mut ftl, Lpn(l)).unwrap(),
            ReadValue::Data(v),
            "lpn {l}"
        );
    }
    // Physical mode: every unit goes back to the driver.
    let cfg = config(2, CopyMode::Physical, 4, 0, 0);
    let (mut store, mut nand) = drive(cfg);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    drv.write(&mut ftl, Lpn(0), 5).unwrap();
    drv.flush(&mut ftl).unwrap();
    let p = ftl.copy(Lpn(0), Lpn(1), 1, 0).unwrap();
    assert_eq!(p.stop, CopyStop::Physical(CopyFallback::Mode));
    drv.copy(&mut ftl, Lpn(0), Lpn(1), 1).unwrap();
    assert_eq!(drv.read(&mut ftl, Lpn(1)).unwrap(), ReadValue::Data(5));
    assert!(ftl.copy(Lpn(0), Lpn(1), 2, 0).is_err(), "overlap");
    assert!(ftl.copy(Lpn(0), Lpn(cfg.logical_units - 1), 2, 0).is_err());
}

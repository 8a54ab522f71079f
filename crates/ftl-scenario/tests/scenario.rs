//! The shared scenario on the host, over Vec-backed memory: it must pass clean
//! through its power cuts and remounts, and it must catch an injected corruption.

use firmware_core::persist::mount::MountStep;
use firmware_core::ReadValue;
use ftl_scenario::{sizes, Corruption, CutKind, Failure, Memory, Options, Report, CUT_PLAN};
use nand_model::{BlockRec, PageRec, UnitRec};

/// Heap-backed stand-in for the firmware's static arrays.
struct HostMemory {
    core: Vec<u8>,
    data: Vec<u64>,
    medium_blocks: Vec<BlockRec>,
    medium_pages: Vec<PageRec>,
    medium_units: Vec<UnitRec>,
    medium_meta: Vec<u8>,
    medium_meta_pages: Vec<u32>,
    oracle: Vec<u32>,
}

impl HostMemory {
    fn new() -> Self {
        HostMemory {
            core: vec![0; sizes::CORE_LENT_BYTES],
            data: vec![0; sizes::DATA],
            medium_blocks: vec![BlockRec::INIT; sizes::MEDIUM_BLOCKS],
            medium_pages: vec![PageRec::INIT; sizes::MEDIUM_PAGES],
            medium_units: vec![UnitRec::INIT; sizes::MEDIUM_UNITS],
            medium_meta: vec![0; sizes::MEDIUM_META_BYTES],
            medium_meta_pages: vec![0; sizes::MEDIUM_META_SLOTS],
            oracle: vec![0; sizes::ORACLE],
        }
    }

    fn lend(&mut self) -> Memory<'_> {
        Memory {
            core: &mut self.core,
            data: &mut self.data,
            medium_blocks: &mut self.medium_blocks,
            medium_pages: &mut self.medium_pages,
            medium_units: &mut self.medium_units,
            medium_meta: &mut self.medium_meta,
            medium_meta_pages: &mut self.medium_meta_pages,
            oracle: &mut self.oracle,
        }
    }
}

fn run(opts: Options) -> Report {
    let mut mem = HostMemory::new();
    ftl_scenario::run(mem.lend(), &opts).unwrap_or_else(|e| panic!("scenario stopped: {e}"))
}

#[test]
fn size_constants_match_the_core_and_the_medium() {
    ftl_scenario::check_sizes().unwrap();
    let lent = ftl_scenario::lent_bytes().unwrap();
    // Comfortably inside the 16 MiB PSRAM the firmware lends from.
    let total = lent.core_tables + lent.data_pool + lent.medium + lent.medium_meta + lent.oracle;
    assert_eq!(total, lent.total());
    assert!(total < 4 << 20, "{lent:?}");
}

#[test]
fn clean_run_passes_every_check() {
    let r = run(Options::DEFAULT);
    let n = u64::from(r.logical_units);
    assert_eq!(r.checks_failed, 0, "{r:?}");
    assert_eq!(r.first_failure, None);
    // Every unit read back after each cut and at the end, an audit after
    // each mount, plus the churn's checks.
    let mounts = u64::from(r.mounts);
    assert_eq!(r.cut_checks, n * u64::from(r.cuts));
    assert_eq!(r.checks(), n * mounts + mounts + r.churn_checks);
    assert!(r.host_writes >= 5 * n, "{r:?}");
    assert!(r.trims > 0 && r.flushes > 0 && r.churn_checks > 0, "{r:?}");
    // The workload went round the drive many times: GC and WL did real work.
    assert!(r.core.gc_victims > 100, "{:?}", r.core);
    assert!(r.core.gc_program_units > 0, "{:?}", r.core);
    assert!(r.core.wl_moves > 0, "{:?}", r.core);
    assert_eq!(r.core.lost_units, 0);
    assert_eq!(r.core.host_read_errors, 0);
    assert!(r.medium.erases > 200, "{:?}", r.medium);
    assert!(r.ok());
}

#[test]
fn power_cuts_lose_nothing_acknowledged() {
    let r = run(Options::DEFAULT);
    assert!(r.cuts > 0, "{r:?}");
    assert_eq!(
        r.cuts as usize,
        CUT_PLAN.len(),
        "every planned cut hit: {r:?}"
    );
    assert_eq!(r.mounts, r.cuts + 1);
    assert_eq!(r.lost_acknowledged, 0, "{r:?}");
    assert_eq!(r.invalid_reads, 0, "{r:?}");
    assert_eq!(r.checks_failed, 0, "{r:?}");
    assert!(r.mount_ops > 0 && r.mount_ops == r.core.mount_ops, "{r:?}");
    assert!(r.cut_capacity > 0 && r.cut_programs_max <= r.cut_capacity);
    assert!(r.meta_slots_peak > 0 && r.meta_slots_peak as usize <= sizes::MEDIUM_META_SLOTS);
    // Translation pages were written while running, so a cut could tear one.
    assert!(r.core.map_programs > 0, "{:?}", r.core);
    for (c, plan) in r.cut_reports().zip(CUT_PLAN) {
        assert_eq!(c.plan, plan);
        assert!(c.torn, "{c:?}");
        assert!(c.mount_ops > 0, "{c:?}");
        // The cut flush ends in a checkpoint: mount reads its block table,
        // not every block's first page, and marks it stale before writing.
        assert!(c.mount_steps.contains(MountStep::Table), "{c:?}");
        assert!(!c.mount_steps.contains(MountStep::Heads), "{c:?}");
        assert!(c.mount_steps.contains(MountStep::Seal), "{c:?}");
        assert!(c.mount_steps.contains(MountStep::Region), "{c:?}");
        // The torn erase is done again by the mount.
        if plan.kind == CutKind::Erase {
            assert!(c.mount_steps.contains(MountStep::Erase), "{c:?}");
        }
    }
}

#[test]
fn no_cuts_still_passes() {
    let r = run(Options {
        cuts: &[],
        ..Options::DEFAULT
    });
    assert_eq!(r.cuts, 0);
    assert_eq!(r.mounts, 1);
    assert!(r.ok(), "{r:?}");
}

#[test]
fn same_seed_same_report() {
    assert_eq!(run(Options::DEFAULT), run(Options::DEFAULT));
}

#[test]
fn unreadable_block_is_detected() {
    let r = run(Options {
        corruption: Corruption::UnreadableBlock,
        ..Options::DEFAULT
    });
    let c = r.corrupted.expect("a block was damaged");
    assert!(c.live_units > 0);
    assert!(!r.ok());
    // Exactly the damaged block's live units fail; the churn was clean.
    assert_eq!(r.checks_failed, u64::from(c.live_units), "{r:?}");
    match r.first_failure {
        Some(Failure::Read { got, .. }) => assert_eq!(got, ReadValue::Error),
        other => panic!("unexpected first failure {other:?}"),
    }
}

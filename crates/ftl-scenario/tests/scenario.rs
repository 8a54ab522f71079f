//! The shared scenario on the host, over Vec-backed memory: it must pass clean,
//! and it must catch an injected corruption.

use firmware_core::tables::{BlockMeta, OpEntry, PlaneState, SlotMeta};
use firmware_core::{ReadValue, Tables};
use ftl_scenario::{sizes, Corruption, Failure, Memory, Options, Report};
use nand_model::{BlockRec, PageRec, UnitRec};

/// Heap-backed stand-in for the firmware's static arrays.
struct HostMemory {
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    blocks: Vec<BlockMeta>,
    buckets: Vec<u32>,
    planes: Vec<PlaneState>,
    slots: Vec<SlotMeta>,
    ops: Vec<OpEntry>,
    page_cb: Vec<u8>,
    data: Vec<u64>,
    medium_blocks: Vec<BlockRec>,
    medium_pages: Vec<PageRec>,
    medium_units: Vec<UnitRec>,
    oracle: Vec<u32>,
}

impl HostMemory {
    fn new() -> Self {
        HostMemory {
            l2p: vec![0; sizes::L2P],
            p2l: vec![0; sizes::P2L],
            blocks: vec![BlockMeta::default(); sizes::BLOCKS],
            buckets: vec![0; sizes::BUCKETS],
            planes: vec![PlaneState::default(); sizes::PLANES],
            slots: vec![SlotMeta::default(); sizes::SLOTS],
            ops: vec![OpEntry::default(); sizes::OPS],
            page_cb: vec![0; sizes::PAGE_CB],
            data: vec![0; sizes::DATA],
            medium_blocks: vec![BlockRec::INIT; sizes::MEDIUM_BLOCKS],
            medium_pages: vec![PageRec::INIT; sizes::MEDIUM_PAGES],
            medium_units: vec![UnitRec::INIT; sizes::MEDIUM_UNITS],
            oracle: vec![0; sizes::ORACLE],
        }
    }

    fn lend(&mut self) -> Memory<'_> {
        Memory {
            tables: Tables {
                l2p: &mut self.l2p,
                p2l: &mut self.p2l,
                blocks: &mut self.blocks,
                buckets: &mut self.buckets,
                planes: &mut self.planes,
                slots: &mut self.slots,
                ops: &mut self.ops,
                page_cb: &mut self.page_cb,
                persist: firmware_core::PersistTables::none(),
                copyless: firmware_core::copyless::CopylessTables::none(),
            },
            data: &mut self.data,
            medium_blocks: &mut self.medium_blocks,
            medium_pages: &mut self.medium_pages,
            medium_units: &mut self.medium_units,
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
    let total = lent.core_tables + lent.data_pool + lent.medium + lent.oracle;
    assert!(total < 4 << 20, "{lent:?}");
}

#[test]
fn clean_run_passes_every_check() {
    let r = run(Options::DEFAULT);
    let n = u64::from(r.logical_units);
    assert_eq!(r.checks_failed, 0, "{r:?}");
    assert_eq!(r.first_failure, None);
    // Every unit read back, plus the audit, plus the churn's checks.
    assert_eq!(r.checks(), n + 1 + r.churn_checks);
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

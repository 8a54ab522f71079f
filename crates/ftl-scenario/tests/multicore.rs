//! The multi-core Reparo scenario on the host, over Vec-backed memory: the
//! very code the QEMU firmware runs.

use ftl_scenario::multicore::{
    self, sizes, CoreSlot, McFault, McMemory, McOptions, McReport, CORES,
};
use nand_model::{BlockRec, PageRec, UnitRec};

/// Every lent array, `CORES` shares of each per-core table.
struct Store {
    core: Vec<u8>,
    data: Vec<u64>,
    medium_blocks: Vec<BlockRec>,
    medium_pages: Vec<PageRec>,
    medium_units: Vec<UnitRec>,
    medium_meta: Vec<u8>,
    medium_meta_pages: Vec<u32>,
    entrust: Vec<u32>,
    marks: Vec<u32>,
    holders: Vec<u32>,
    list_bufs: Vec<u8>,
    oracle: Vec<u32>,
    truth: Vec<u32>,
}

impl Store {
    fn new() -> Store {
        let c = CORES;
        Store {
            core: vec![0; c * sizes::CORE_TABLES_BYTES],
            data: vec![0; c * sizes::DATA],
            medium_blocks: vec![BlockRec::INIT; c * sizes::MEDIUM_BLOCKS],
            medium_pages: vec![PageRec::INIT; c * sizes::MEDIUM_PAGES],
            medium_units: vec![UnitRec::INIT; c * sizes::MEDIUM_UNITS],
            medium_meta: vec![0; c * sizes::MEDIUM_META_BYTES],
            medium_meta_pages: vec![0; c * sizes::MEDIUM_META_SLOTS],
            entrust: vec![0; c * sizes::ENTRUST],
            marks: vec![0; c * sizes::MARKS],
            holders: vec![0; c * sizes::HOLDERS],
            list_bufs: vec![0; c * sizes::LIST_BUF_BYTES],
            oracle: vec![0; sizes::ORACLE],
            truth: vec![0; sizes::TRUTH],
        }
    }

    fn memory(&mut self) -> McMemory<'_> {
        McMemory {
            core: &mut self.core,
            data: &mut self.data,
            medium_blocks: &mut self.medium_blocks,
            medium_pages: &mut self.medium_pages,
            medium_units: &mut self.medium_units,
            medium_meta: &mut self.medium_meta,
            medium_meta_pages: &mut self.medium_meta_pages,
            entrust: &mut self.entrust,
            marks: &mut self.marks,
            holders: &mut self.holders,
            list_bufs: &mut self.list_bufs,
            oracle: &mut self.oracle,
            truth: &mut self.truth,
        }
    }
}

fn run(opts: &McOptions) -> McReport {
    let mut store = Store::new();
    let mut cores: Vec<CoreSlot<'_>> = (0..CORES).map(|_| None).collect();
    let r = multicore::run(store.memory(), &mut cores, opts).expect("scenario runs to the end");
    println!("{r}");
    r
}

#[test]
fn multicore_identifies_exactly_the_failed_die_and_recovers() {
    let r = run(&McOptions::DEFAULT);
    assert!(r.ok(), "{r:?}");
    assert!(r.failed_die_detected, "{r:?}");
    assert!(r.truth_lbas > 0, "{r:?}");
    assert_eq!(r.identified_lbas, r.truth_lbas, "{r:?}");
    assert_eq!((r.missed, r.extra), (0, 0), "{r:?}");
    assert!(r.ident_page_reads > 0, "list pages read from flash: {r:?}");
    assert!(r.superblocks > 0, "{r:?}");
    assert!(
        r.list_pages_per_core.iter().all(|&n| n > 0),
        "list pages on every core: {r:?}"
    );
    assert!(r.gc_victims > 0, "GC ran: {r:?}");
    assert_eq!(r.rewritten, r.truth_lbas, "{r:?}");
    assert_eq!(r.still_failed, 0, "{r:?}");
    assert_eq!(r.mismatches_before, 0, "{r:?}");
    assert_eq!(r.mismatches_after, 0, "{r:?}");
    assert_eq!(r.audits_failed, 0, "{r:?}");
    assert_eq!(r.checks_failed, 0, "{r:?}");
}

/// The checks can fail: an identification that loses one LBA is caught
/// (one missed, and that LBA reads back as an error after the recovery).
#[test]
fn multicore_catches_a_missed_lba() {
    let r = run(&McOptions {
        fault: McFault::DropIdentified,
        ..McOptions::DEFAULT
    });
    assert!(!r.ok(), "{r:?}");
    assert_eq!(r.missed, 1, "{r:?}");
    assert_eq!(r.identified_lbas + 1, r.truth_lbas, "{r:?}");
    assert_eq!(r.mismatches_after, 1, "{r:?}");
    assert_eq!(r.still_failed, 1, "{r:?}");
    assert!(r.checks_failed >= 3, "{r:?}");
}

#[test]
fn multicore_lent_bytes_fit_the_firmware_psram_share() {
    let b = multicore::lent_bytes().expect("sizes agree");
    println!("multicore lent bytes: {b}");
    assert!(b < 8 << 20, "{b} bytes");
}

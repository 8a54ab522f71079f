//! Mount from a medium whose metadata pages are mutated.
//!
//! Input: a workload header (4 bytes), then edits of 4 bytes each. The
//! workload formats a small drive with mapping persistence, writes units
//! through `SyncDriver`, and ends with a clean shutdown or a power cut.
//! Each edit names one of the metadata pages programmed so far (translation
//! pages, checkpoints, anchors, cut records), a byte and an XOR mask (or,
//! with offset 0xffff, a fill of the whole page); from then on every read
//! of that page returns the damaged bytes, as a medium with that damage
//! would. The mount must end (no panic, a bounded number of operations)
//! and, if it reports the drive ready, reads must end too; without any
//! damage every unit must read back as its last acknowledged value.
#![no_main]

use std::sync::OnceLock;

use firmware_core::driver::{execute, ReadValue, SyncDriver};
use firmware_core::medium::nand::{Nand, NandResult, Spare, WlSet};
use firmware_core::{BlockId, FullFtl, Lpn, Ppn, UnitMask};
use libfuzzer_sys::fuzz_target;
use nand_model::SimMedium;
use sim_harness::config::SimConfig;
use sim_harness::engine::CoreStore;
use sim_harness::sim::Plan;

/// Most NAND operations a mount may take before it counts as looping.
const MOUNT_OP_LIMIT: u64 = 2_000_000;

/// A small drive with translation pages (the crash tests' shape).
fn plan() -> &'static Plan {
    static PLAN: OnceLock<Plan> = OnceLock::new();
    PLAN.get_or_init(|| {
        let mut cfg = SimConfig::preset("default").expect("default preset");
        for s in [
            "geometry.channels=2",
            "geometry.dies_per_channel=1",
            "geometry.blocks_per_plane=32",
            "geometry.pages_per_block=16",
            "ftl.op_ratio=0.5",
            "ftl.map_entries_per_page=256",
            "buffer.write_buffer_bytes=131072",
        ] {
            cfg.apply_set(s).expect("fuzz configuration key");
        }
        Plan::from_config(&cfg).expect("fuzz configuration")
    })
}

/// One damage: `(metadata page index, byte offset, xor mask)`; offset
/// `u16::MAX` fills the page with the mask instead.
type Edit = (usize, u16, u8);

/// The medium, recording metadata pages as they are programmed and
/// damaging them as they are read.
struct Damaged<'a> {
    inner: &'a mut SimMedium,
    meta_pages: Vec<Ppn>,
    edits: Vec<Edit>,
    /// Reads of a damaged page.
    damaged_reads: u64,
}

impl Nand for Damaged<'_> {
    type Unit = u64;

    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [u64]) -> NandResult {
        self.inner.read(page, units, out)
    }
    fn program(&mut self, page: Ppn, data: &[u64], spare: &Spare) -> NandResult {
        self.inner.program(page, data, spare)
    }
    fn erase(&mut self, block: BlockId) -> NandResult {
        self.inner.erase(block)
    }
    fn guarded_erase(&mut self, block: BlockId, low: &WlSet, retired: &WlSet) -> NandResult {
        self.inner.guarded_erase(block, low, retired)
    }
    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        self.inner.copyback(src, dst, spare)
    }
    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        if !self.meta_pages.contains(&page) {
            self.meta_pages.push(page);
        }
        self.inner.program_meta(page, bytes, spare)
    }
    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        let r = self.inner.read_meta(page, out)?;
        let mut hit = false;
        for &(i, off, mask) in &self.edits {
            if self.meta_pages.get(i) != Some(&page) || out.is_empty() {
                continue;
            }
            hit = true;
            if off == u16::MAX {
                out.fill(mask);
            } else {
                let at = usize::from(off) % out.len();
                out[at] ^= mask;
            }
        }
        self.damaged_reads += u64::from(hit);
        Ok(r)
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&[n_writes, spread, seed, end], edits)) = input.split_first_chunk::<4>() else {
        return;
    };
    let plan = plan();
    let cfg = plan.core;
    let mut medium = plan.medium().expect("medium");
    let mut store: CoreStore<u64> = CoreStore::new(&cfg).expect("tables");
    let logical = cfg.logical_units;
    let span = (u32::from(spread) + 1) * 8 % logical.max(1) + 1;
    let mut expect = vec![None::<u64>; logical as usize];
    let mut nand = Damaged {
        inner: &mut medium,
        meta_pages: Vec::new(),
        edits: Vec::new(),
        damaged_reads: 0,
    };
    {
        let (t, data) = store.split();
        let mut ftl = FullFtl::new(cfg, t).expect("core");
        let mut d = SyncDriver::new(&mut nand, data);
        d.format(&mut ftl).expect("format");
        let mut x = u32::from(seed);
        for i in 0..u32::from(n_writes) * 8 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let lpn = (x >> 8) % span;
            let v = u64::from(lpn) << 32 | u64::from(i + 1);
            match d.write(&mut ftl, Lpn(lpn), v) {
                Ok(()) => expect[lpn as usize] = Some(v),
                Err(_) => break,
            }
        }
        if end & 1 == 0 {
            let _ = d.flush(&mut ftl);
            let _ = d.shutdown(&mut ftl);
        } else {
            // A power cut: the capacitor flush runs to its end.
            if ftl.power_fail(0).is_ok() {
                let mut n = 0u64;
                while let Some(op) = ftl.poll_op() {
                    let r = execute(d.nand, d.data, ftl.meta_for(&op), &op);
                    if ftl.complete(op.id, r, 0).is_err() || n > MOUNT_OP_LIMIT {
                        break;
                    }
                    n += 1;
                }
            }
        }
        // Acknowledged but not flushed before a cut: the core decides what
        // survives; only clean shutdowns promise every write.
        if end & 1 != 0 {
            expect.iter_mut().for_each(|e| *e = None);
        }
    }
    nand.edits = edits
        .chunks_exact(4)
        .map(|e| (usize::from(e[0]), u16::from_be_bytes([e[1], e[2]]), e[3]))
        .collect();
    let (t, data) = store.split();
    let mut ftl = FullFtl::new(cfg, t).expect("core");
    if ftl.mount(0).is_err() {
        return;
    }
    let mut ops = 0u64;
    while let Some(op) = ftl.poll_op() {
        let r = execute(&mut nand, data, ftl.meta_for(&op), &op);
        if ftl.complete(op.id, r, 0).is_err() {
            return;
        }
        ops += 1;
        assert!(
            ops < MOUNT_OP_LIMIT,
            "mount did not finish in {MOUNT_OP_LIMIT} operations"
        );
    }
    if !ftl.is_ready() {
        return;
    }
    let _ = ftl.audit();
    let undamaged = nand.damaged_reads == 0;
    let mut d = SyncDriver::new(&mut nand, data);
    for (lpn, want) in expect.iter().enumerate().take(span as usize) {
        let Ok(got) = d.read(&mut ftl, Lpn(lpn as u32)) else {
            return;
        };
        if undamaged {
            if let Some(w) = want {
                assert_eq!(
                    got,
                    ReadValue::Data(*w),
                    "unit {lpn} after an undamaged mount"
                );
            }
        }
    }
});

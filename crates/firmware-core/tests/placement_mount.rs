//! Placement handles across a power cut: mount gives every block back the
//! handle whose data it holds, from the checkpoint's block table or, with
//! no checkpoint, from its first page's spare area. GC after the mount
//! then moves each handle's data into that handle's blocks only.
#![cfg(feature = "placement")]

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::TestNand;
use firmware_core::tech::placement::handles;
use firmware_core::{
    BlockId, Config, Error, FullFtl, Geometry, Lpn, Nand, NandResult, PageKind, Ppn, ReadValue,
    Spare, SyncDriver, UnitMask,
};

/// The test medium: [`TestNand`], optionally reading every spare area
/// without its tag (as a drive that never recorded handles).
struct Medium {
    inner: TestNand,
    lose_tags: bool,
}

impl Medium {
    fn untagged(&self, r: NandResult) -> NandResult {
        r.map(|mut r| {
            if self.lose_tags {
                r.spare.tag = 0;
            }
            r
        })
    }
}

impl Nand for Medium {
    type Unit = u64;

    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [u64]) -> NandResult {
        let r = self.inner.read(page, units, out);
        self.untagged(r)
    }
    fn program(&mut self, page: Ppn, data: &[u64], spare: &Spare) -> NandResult {
        self.inner.program(page, data, spare)
    }
    fn erase(&mut self, block: BlockId) -> NandResult {
        self.inner.erase(block)
    }
    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        self.inner.copyback(src, dst, spare)
    }
    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        self.inner.program_meta(page, bytes, spare)
    }
    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        let r = self.inner.read_meta(page, out);
        self.untagged(r)
    }
}

/// Where mount finds the handles.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mount {
    /// In the checkpoint's block table.
    Checkpoint,
    /// No checkpoint (the anchor blocks erased): in each block's first page.
    FirstPages,
    /// Nowhere: no checkpoint, and every spare area read without its tag.
    Lost,
}

fn config() -> Config {
    let g = Geometry {
        channels: 2,
        dies_per_channel: 1,
        planes_per_die: 1,
        blocks_per_plane: 32,
        pages_per_block: 8,
        page_bytes: 8192,
        pages_per_wordline: 1,
        units_per_page: 2,
    };
    let mut cfg = Config::with_op_ratio(g, 1.0).unwrap();
    cfg.write_buffer_units = 16;
    cfg.read_slots = 4;
    cfg.max_inflight = 32;
    cfg.placement.handles = 2;
    cfg.persist.map_entries_per_page = 64;
    cfg
}

/// The test's handle of `lpn`: the lower half of the space is handle 0's.
fn handle_of(lpn: u32, logical: u32) -> u8 {
    u8::from(lpn >= logical / 2)
}

/// Writes `lpn` through `handle` with value `v`, running the medium while
/// the core is busy.
fn write(ftl: &mut FullFtl<'_>, drv: &mut SyncDriver<'_, Medium>, lpn: u32, handle: u8, v: u64) {
    for _ in 0..1000 {
        match handles::write(ftl, Lpn(lpn), handle, drv.now) {
            Ok(s) => {
                drv.data[usize::from(s.0)] = v;
                drv.run(ftl).unwrap();
                return;
            }
            Err(Error::Busy) => drv.run(ftl).unwrap(),
            Err(e) => panic!("write {lpn}: {e}"),
        }
    }
    panic!("write {lpn} stuck: {:?}", ftl.stats());
}

/// Each block cycle of a program log (a cycle starts at page 0) with the
/// handles (by LPN) of the units it holds.
fn cycles(g: Geometry, log: &[(Ppn, Spare)], logical: u32) -> Vec<(u32, BTreeSet<u8>)> {
    let mut open: BTreeMap<u32, BTreeSet<u8>> = BTreeMap::new();
    let mut done = Vec::new();
    for (ppn, spare) in log {
        if spare.kind != PageKind::Data {
            continue;
        }
        let b = g.block_of(*ppn).0;
        if g.page_in_block(*ppn) == 0 {
            if let Some(hs) = open.remove(&b) {
                done.push((b, hs));
            }
        }
        let e = open.entry(b).or_default();
        for u in 0..g.units_per_page {
            if spare.units.contains(u) {
                e.insert(handle_of(spare.lpns[usize::from(u)].0, logical));
            }
        }
    }
    done.extend(open);
    done
}

/// What one run saw.
struct Outcome {
    /// Blocks whose data is one handle's, and how many of them mount gave
    /// back the handle they had before the cut.
    single: usize,
    restored: usize,
    /// Of those, blocks of handle 1.
    single_h1: usize,
    /// Block cycles written after the mount that hold handle 1's units,
    /// and how many of them also hold handle 0's.
    h1_cycles: usize,
    h1_mixed: usize,
}

/// Fills both handles' halves, overwrites them so their blocks hold dead
/// units, cuts the power (the capacitor flushes), optionally erases the
/// anchor blocks (no checkpoint: mount reads every block's first page),
/// mounts a fresh core and overwrites both halves again, each through its
/// handle, so GC moves units out of the pre-cut blocks.
fn run(how: Mount) -> Outcome {
    let cfg = config();
    let g = cfg.geometry;
    let logical = cfg.logical_units;
    let mut mem = vec![0u8; FullFtl::lend_bytes(&cfg).unwrap()];
    let mut mem2 = mem.clone();
    let mut data = vec![0u64; cfg.total_slots() as usize];
    let mut nand = Medium {
        inner: TestNand::new(g),
        lose_tags: false,
    };
    let mut last = vec![0u64; logical as usize];
    let mut rng = test_kit::rng::XorShift64Star(5);
    let mut v = 0u64;
    let before: Vec<u8>;
    let data_blocks: Vec<(u32, BTreeSet<u8>)>;
    {
        let mut ftl = FullFtl::new(cfg, &mut mem).unwrap();
        let mut drv = SyncDriver::new(&mut nand, &mut data);
        drv.format(&mut ftl).unwrap();
        for i in 0..u64::from(logical) * 3 {
            let lpn = if i < u64::from(logical) {
                i as u32
            } else {
                rng.below(u64::from(logical)) as u32
            };
            v += 1;
            write(&mut ftl, &mut drv, lpn, handle_of(lpn, logical), v);
            last[lpn as usize] = v;
        }
        drv.flush(&mut ftl).unwrap();
        let p = ftl.hooks().placement().unwrap();
        before = (0..g.total_blocks())
            .map(|b| p.block_handle(BlockId(b)))
            .collect();
        // The current cycle of every block that holds data at the cut (a
        // block's later cycles come after its earlier ones in the log).
        let current: BTreeMap<u32, BTreeSet<u8>> = cycles(g, &drv.nand.inner.log, logical)
            .into_iter()
            .collect();
        data_blocks = current
            .into_iter()
            .filter(|(b, _)| {
                let r = drv.nand.read(g.ppn(BlockId(*b), 0), UnitMask(0), &mut []);
                r.is_ok_and(|r| r.spare.kind == PageKind::Data)
            })
            .collect();
        ftl.power_fail(drv.now).unwrap();
        drv.run(&mut ftl).unwrap();
        assert!(ftl.cut_finished());
    }
    if how != Mount::Checkpoint {
        for b in 0..2 {
            nand.erase(BlockId(b)).unwrap();
        }
    }
    nand.lose_tags = how == Mount::Lost;
    let mut ftl = FullFtl::new(cfg, &mut mem2).unwrap();
    let mut drv = SyncDriver::new(&mut nand, &mut data);
    let mounted_from = drv.nand.inner.log.len();
    ftl.mount(drv.now).unwrap();
    drv.run(&mut ftl).unwrap();
    assert!(ftl.is_ready());
    // Blocks GC has already emptied, erased and written again since the
    // mount hold other data now: their handle is no longer the cut's.
    let rewritten: BTreeSet<u32> = drv.nand.inner.log[mounted_from..]
        .iter()
        .filter(|(ppn, _)| g.page_in_block(*ppn) == 0)
        .map(|(ppn, _)| g.block_of(*ppn).0)
        .collect();
    let st = ftl.stats();
    if how == Mount::Checkpoint {
        assert_eq!(st.checkpoint_mounts, 1, "mount read the block table");
        assert_eq!(st.mount_head_reads, 0);
    } else {
        assert_eq!(st.checkpoint_mounts, 0);
        assert!(
            st.mount_head_reads > 0,
            "mount read every block's first page"
        );
    }
    let p = ftl.hooks().placement().unwrap();
    let mut out = Outcome {
        single: 0,
        restored: 0,
        single_h1: 0,
        h1_cycles: 0,
        h1_mixed: 0,
    };
    for (b, hs) in &data_blocks {
        let pre = before[*b as usize];
        if hs.len() == 1 && hs.contains(&pre) && !rewritten.contains(b) {
            out.single += 1;
            out.single_h1 += usize::from(pre == 1);
            out.restored += usize::from(p.block_handle(BlockId(*b)) == pre);
        }
    }
    let from = drv.nand.inner.log.len();
    let victims = ftl.stats().gc_victims;
    for _ in 0..logical / 2 {
        let lpn = rng.below(u64::from(logical)) as u32;
        v += 1;
        write(&mut ftl, &mut drv, lpn, handle_of(lpn, logical), v);
        last[lpn as usize] = v;
    }
    drv.flush(&mut ftl).unwrap();
    assert!(ftl.stats().gc_victims > victims, "GC ran after the mount");
    for (l, want) in last.iter().enumerate() {
        assert_eq!(
            drv.read(&mut ftl, Lpn(l as u32)).unwrap(),
            ReadValue::Data(*want),
            "lpn {l}"
        );
    }
    for (_, hs) in cycles(g, &drv.nand.inner.log[from..], logical) {
        if hs.contains(&1) {
            out.h1_cycles += 1;
            out.h1_mixed += usize::from(hs.contains(&0));
        }
    }
    out
}

fn check(how: Mount) {
    let o = run(how);
    let lost = run(Mount::Lost);
    eprintln!(
        "{how:?}: {} of {} single-handle blocks restored ({} of handle 1); \
         {} of {} block cycles with handle 1's units written after the mount \
         mixed; with the handles lost: {} restored, {} of {} mixed",
        o.restored,
        o.single,
        o.single_h1,
        o.h1_mixed,
        o.h1_cycles,
        lost.restored,
        lost.h1_mixed,
        lost.h1_cycles
    );
    assert!(o.single_h1 > 0, "the cut must leave blocks of handle 1");
    assert_eq!(o.restored, o.single, "every block's handle restored");
    // Lost handles: every block counts as handle 0's (the check can fail).
    assert_eq!(lost.restored, lost.single - lost.single_h1);
    assert!(o.h1_cycles > 0, "handle 1's units written after the mount");
    assert!(
        o.h1_mixed * 2 < lost.h1_mixed,
        "moved data kept apart by handle"
    );
}

#[test]
fn mount_from_the_checkpoint_restores_handles_and_gc_keeps_them_apart() {
    check(Mount::Checkpoint);
}

#[test]
fn mount_from_first_pages_restores_handles_and_gc_keeps_them_apart() {
    check(Mount::FirstPages);
}

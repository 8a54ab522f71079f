//! Placement handles observed on the medium: every data page and every
//! block holds the writes of one handle, and everything reads back.
#![cfg(feature = "placement")]

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{small_geometry, Store, TestNand};
use firmware_core::tech::placement::handles;
use firmware_core::{Config, Error, FullFtl, Lpn, PageKind, ReadValue, SyncDriver};

fn config(handles: u8) -> Config {
    let mut cfg = Config::with_op_ratio(small_geometry(2), 1.0).unwrap();
    cfg.write_buffer_units = 16;
    cfg.read_slots = 4;
    cfg.max_inflight = 32;
    cfg.placement.handles = handles;
    cfg
}

/// Handle of `lpn` in the test: the LPN's residue.
fn handle_of(lpn: u32, n: u8) -> u8 {
    (lpn % u32::from(n)) as u8
}

/// Writes every LPN once through handle `lpn % n` (consecutive writes
/// alternate handles; no overwrite, so no GC), reads everything back and
/// returns the handles each block's data pages hold.
fn blocks_by_handle(n: u8) -> BTreeMap<u32, BTreeSet<u8>> {
    let cfg = config(n);
    let g = cfg.geometry;
    let mut store = Store::new(&cfg);
    let mut nand = TestNand::new(g);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    let k = n.max(3);
    let logical = cfg.logical_units;
    for lpn in 0..logical {
        let h = handle_of(lpn, k).min(n.saturating_sub(1));
        loop {
            let r = if n == 0 {
                ftl.write(Lpn(lpn), drv.now)
            } else {
                handles::write(&mut ftl, Lpn(lpn), h, drv.now)
            };
            match r {
                Ok(s) => {
                    drv.data[usize::from(s.0)] = u64::from(lpn) + 1;
                    break;
                }
                Err(Error::Busy) => drv.run(&mut ftl).unwrap(),
                Err(e) => panic!("{e}"),
            }
        }
        drv.run(&mut ftl).unwrap();
    }
    if n > 0 {
        assert_eq!(
            handles::write(&mut ftl, Lpn(0), n, drv.now),
            Err(Error::BadRequest(
                &"placement handle beyond the configured handles"
            ))
        );
        let p = ftl.hooks().placement().unwrap();
        let total: u64 = (0..n).map(|h| p.host_units(h)).sum();
        assert_eq!(total, u64::from(logical));
    }
    drv.flush(&mut ftl).unwrap();
    for l in 0..logical {
        assert_eq!(
            drv.read(&mut ftl, Lpn(l)).unwrap(),
            ReadValue::Data(u64::from(l) + 1)
        );
    }
    let mut by_block: BTreeMap<u32, BTreeSet<u8>> = BTreeMap::new();
    for (ppn, spare) in &drv.nand.log {
        if spare.kind != PageKind::Data {
            continue;
        }
        let b = g.block_of(*ppn).0;
        for u in 0..g.units_per_page {
            if spare.units.contains(u) {
                let lpn = spare.lpns[usize::from(u)].0;
                by_block.entry(b).or_default().insert(handle_of(lpn, k));
            }
        }
    }
    by_block
}

#[test]
fn each_block_holds_one_handle_and_everything_reads_back() {
    let placed = blocks_by_handle(3);
    assert!(placed.len() > 3);
    for (b, hs) in &placed {
        assert_eq!(hs.len(), 1, "block {b} holds handles {hs:?}");
    }
    // Without placement the same writes mix in blocks (the check can fail).
    let mixed = blocks_by_handle(0);
    assert!(mixed.values().any(|hs| hs.len() > 1));
}

/// Overwrites every LPN many times through handle `lpn % 3` (LPNs of
/// handle 0 ten times as often), so GC runs, and returns how many block
/// erase cycles held units of more than one handle, out of how many.
fn mixed_block_cycles(n: u8) -> (usize, usize) {
    let cfg = config(n);
    let g = cfg.geometry;
    common::with_core(cfg, |ftl, drv| {
        let logical = cfg.logical_units;
        let mut rng = test_kit::rng::XorShift64Star(7);
        let mut last = vec![0u64; logical as usize];
        for i in 0..u64::from(logical) * 12 {
            let lpn = if i < u64::from(logical) {
                i as u32
            } else if rng.below(11) < 10 {
                (rng.below(u64::from(logical).div_ceil(3)) * 3) as u32 % logical
            } else {
                rng.below(u64::from(logical)) as u32
            };
            let h = handle_of(lpn, 3).min(n.saturating_sub(1));
            let mut busy = 0;
            let slot = loop {
                let r = if n == 0 {
                    ftl.write(Lpn(lpn), drv.now)
                } else {
                    handles::write(ftl, Lpn(lpn), h, drv.now)
                };
                match r {
                    Ok(s) => break s,
                    Err(Error::Busy) => {
                        busy += 1;
                        assert!(busy < 1000, "write {i} stuck: {:?}", ftl.stats());
                        drv.run(ftl).unwrap()
                    }
                    Err(e) => panic!("{e}"),
                }
            };
            drv.data[usize::from(slot.0)] = i + 1;
            last[lpn as usize] = i + 1;
            drv.run(ftl).unwrap();
        }
        drv.flush(ftl).unwrap();
        for (l, want) in last.iter().enumerate() {
            assert_eq!(
                drv.read(ftl, Lpn(l as u32)).unwrap(),
                ReadValue::Data(*want)
            );
        }
        assert!(ftl.stats().gc_victims > 0, "the run must reach GC");
        block_cycles(g, &drv.nand.log)
    })
}

/// How many block erase cycles of a program log held units of more than
/// one handle (`lpn % 3`), out of how many (page 0 starts a cycle).
fn block_cycles(
    g: firmware_core::Geometry,
    log: &[(firmware_core::Ppn, firmware_core::Spare)],
) -> (usize, usize) {
    let mut open: BTreeMap<u32, BTreeSet<u8>> = BTreeMap::new();
    let mut cycles = Vec::new();
    for (ppn, spare) in log {
        if spare.kind != PageKind::Data {
            continue;
        }
        let b = g.block_of(*ppn).0;
        if ppn.0 % g.pages_per_block == 0 {
            if let Some(hs) = open.remove(&b) {
                cycles.push(hs);
            }
        }
        let e = open.entry(b).or_default();
        for u in 0..g.units_per_page {
            if spare.units.contains(u) {
                e.insert(handle_of(spare.lpns[usize::from(u)].0, 3));
            }
        }
    }
    cycles.extend(open.into_values());
    let mixed = cycles.iter().filter(|hs| hs.len() > 1).count();
    (mixed, cycles.len())
}

#[test]
fn gc_keeps_each_handle_in_its_own_blocks() {
    let (mixed, cycles) = mixed_block_cycles(3);
    let (base_mixed, base_cycles) = mixed_block_cycles(0);
    eprintln!(
        "placement: {mixed} of {cycles} block cycles mixed; without: {base_mixed} of {base_cycles}"
    );
    // Without placement most blocks mix the handles (the check can fail).
    assert!(base_mixed * 2 > base_cycles);
    // GC relocates by handle: a block mixes only when a plane at its GC
    // reserve lends the core's GC block to another handle, or a held GC
    // block is emptied into it (often on a drive this small: 16 blocks a
    // plane for 3 handles' host and GC blocks).
    assert!(
        mixed * 5 <= cycles,
        "{mixed} of {cycles} block cycles mixed"
    );
    // Hot and cold data apart: fewer blocks erased for the same writes.
    assert!(
        cycles < base_cycles,
        "{cycles} vs {base_cycles} block cycles"
    );
}

//! Superblock write order and list pages, observed on the medium.

mod common;

use common::{small_geometry, Store, TestNand};
use firmware_core::{Config, FullFtl, Lpn, PageKind, SyncDriver};

fn config(lists: bool) -> Config {
    let mut cfg = Config::with_op_ratio(small_geometry(2), 0.6).unwrap();
    cfg.write_buffer_units = 8;
    cfg.read_slots = 4;
    cfg.max_inflight = 32;
    cfg.superblock.enabled = true;
    cfg.superblock.list_pages = lists;
    cfg
}

/// Writes `n` distinct LPNs once and returns the medium's program log.
fn write_once(cfg: Config, n: u32) -> Vec<(firmware_core::Ppn, firmware_core::Spare)> {
    let mut store = Store::new(&cfg);
    let mut nand = TestNand::new(cfg.geometry);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    for l in 0..n {
        drv.write(&mut ftl, Lpn(l), u64::from(l) + 1).unwrap();
    }
    drv.flush(&mut ftl).unwrap();
    for l in 0..n {
        assert_eq!(
            drv.read(&mut ftl, Lpn(l)).unwrap(),
            firmware_core::ReadValue::Data(u64::from(l) + 1)
        );
    }
    drv.nand.log.clone()
}

#[test]
fn host_pages_fill_superpages_in_order_and_list_pages_close_them() {
    let cfg = config(true);
    let g = cfg.geometry;
    let planes = g.planes();
    let data_pages = g.pages_per_block - 1;
    // Three superblocks of data: no overwrite, so no GC.
    let n = 3 * planes * data_pages * u32::from(g.units_per_page);
    let log = write_once(cfg, n);
    let data: Vec<_> = log
        .iter()
        .filter(|(_, s)| s.kind == PageKind::Data)
        .map(|(p, _)| (g.block_of(*p), g.page_in_block(*p)))
        .collect();
    assert_eq!(data.len() as u32, 3 * planes * data_pages);
    for (i, &(b, page)) in data.iter().enumerate() {
        let i = i as u32;
        let sb = i / (planes * data_pages);
        let within = i % (planes * data_pages);
        assert_eq!(page, within / planes, "page {i}: offset");
        assert_eq!(g.plane_of(b).0, within % planes, "page {i}: plane");
        // Every member of a superblock keeps its block throughout.
        let first = data[(sb * planes * data_pages + within % planes) as usize].0;
        assert_eq!(b, first, "page {i}: member block");
    }
    // Each superblock's list pages follow all of its data pages.
    let lists: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| s.kind == PageKind::Meta)
        .map(|(i, (p, s))| {
            assert!(s.units.is_empty());
            assert_eq!(g.page_in_block(*p), g.pages_per_block - 1);
            i
        })
        .collect();
    assert_eq!(lists.len() as u32, 3 * planes);
    let data_at: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| s.kind == PageKind::Data)
        .map(|(i, _)| i)
        .collect();
    for sb in 0..3usize {
        let last_data = data_at[(sb + 1) * (planes * data_pages) as usize - 1];
        for &l in &lists[sb * planes as usize..(sb + 1) * planes as usize] {
            assert!(l > last_data, "superblock {sb}: list page before its data");
        }
    }
}

#[test]
fn without_list_pages_every_page_holds_data() {
    let cfg = config(false);
    let g = cfg.geometry;
    let n = 2 * g.planes() * g.pages_per_block * u32::from(g.units_per_page);
    let log = write_once(cfg, n);
    assert!(log.iter().all(|(_, s)| s.kind == PageKind::Data));
    let last = log
        .iter()
        .filter(|(p, _)| g.page_in_block(*p) == g.pages_per_block - 1)
        .count();
    assert_eq!(last as u32, 2 * g.planes());
}

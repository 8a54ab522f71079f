#![cfg(feature = "crossway")]
//! Cross-way GC destinations (`crossway` feature): with
//! `GcDestination::Channel` GC moves cold units to other ways of their
//! channel, and every unit still reads back.

mod common;

use common::{small_geometry, Store, TestNand};
use firmware_core::tech::crossway::config::GcDestination;
use firmware_core::{Config, FullFtl, Geometry, Lpn, PageKind, ReadValue, SyncDriver};

fn config(dest: GcDestination) -> Config {
    let g = Geometry {
        channels: 1,
        dies_per_channel: 4,
        planes_per_die: 1,
        ..small_geometry(1)
    };
    let mut cfg = Config::with_op_ratio(g, 0.5).unwrap();
    cfg.write_buffer_units = 8;
    cfg.read_slots = 4;
    cfg.max_inflight = 32;
    cfg.gc_destination = dest;
    cfg
}

/// Fills the drive, overwrites the even LPNs many times, reads everything
/// back; returns (GC relocations of odd (cold) LPNs that changed die, those
/// that stayed on their die).
fn run(dest: GcDestination) -> (u32, u32) {
    let cfg = config(dest);
    let g = cfg.geometry;
    let n = cfg.logical_units;
    let mut store = Store::new(&cfg);
    let mut nand = TestNand::new(g);
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let ftl = &mut ftl;
    let mut drv = SyncDriver::new(&mut nand, data);
    let drv = &mut drv;
    drv.format(ftl).unwrap();
    {
        for l in 0..n {
            drv.write(ftl, Lpn(l), u64::from(l)).unwrap();
        }
        drv.flush(ftl).unwrap();
        let start = drv.nand.log.len();
        let mut x = 1u64;
        for round in 0..20u64 {
            for _ in 0..n / 2 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let l = ((x >> 33) as u32 % (n / 2)) * 2;
                drv.write(ftl, Lpn(l), u64::from(l) + (round + 1) * 1_000_000)
                    .unwrap();
            }
        }
        drv.flush(ftl).unwrap();
        let mut last: std::collections::HashMap<u32, firmware_core::Ppn> = drv.nand.log[..start]
            .iter()
            .filter(|(_, s)| s.kind == PageKind::Data)
            .flat_map(|(p, s)| {
                s.lpns
                    .iter()
                    .take(s.units.count() as usize)
                    .map(move |l| (l.0, *p))
            })
            .collect();
        let (mut across, mut within) = (0, 0);
        for (p, s) in &drv.nand.log[start..] {
            if s.kind != PageKind::Data {
                continue;
            }
            for l in s.lpns.iter().take(s.units.count() as usize) {
                if let Some(old) = last.insert(l.0, *p) {
                    if l.0 % 2 == 1 {
                        let die = |q: firmware_core::Ppn| g.die_of(g.block_of(q));
                        if die(old) == die(*p) {
                            within += 1;
                        } else {
                            across += 1;
                        }
                    }
                }
            }
        }
        for l in 0..n {
            let v = drv.read(ftl, Lpn(l)).unwrap();
            let ReadValue::Data(v) = v else {
                panic!("LPN {l}: {v:?}")
            };
            assert_eq!(v % 1_000_000, u64::from(l), "LPN {l}");
            if l % 2 == 1 {
                assert_eq!(v, u64::from(l), "cold LPN {l} keeps its data");
            }
        }
        assert!(ftl.stats().gc_program_units > 0);
        (across, within)
    }
}

#[test]
fn channel_destination_moves_cold_units_to_other_ways() {
    let (across, within) = run(GcDestination::Plane);
    assert_eq!(across, 0, "the baseline keeps GC inside the plane");
    assert!(within > 0, "cold units were relocated");
    let (across, _) = run(GcDestination::Channel);
    assert!(across > 0, "no relocation changed way");
}

#[cfg(feature = "placement")]
#[test]
fn channel_destination_with_placement_handles_is_refused() {
    let mut cfg = config(GcDestination::Channel);
    cfg.placement = firmware_core::tech::placement::config::PlacementConfig { handles: 2 };
    assert!(matches!(
        FullFtl::lend_bytes(&cfg),
        Err(firmware_core::Error::InvalidConfig(_))
    ));
    cfg.gc_destination = GcDestination::Plane;
    assert!(FullFtl::lend_bytes(&cfg).is_ok());
}

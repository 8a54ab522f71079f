//! A drive kept in an image file: what was acknowledged (synced) survives a
//! power cut at the end of any call, with GC running; a torn capacitor
//! region loses only what was not acknowledged; a wrong, truncated or corrupt
//! image is refused with the reason.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use sim_harness::config::SimConfig;
use sim_harness::image::{journal, layout::Layout, open, ImageError, ImageOptions, Served};
use sim_harness::interactive::Device;
use sim_harness::sim::Plan;
use sim_harness::workload::HostOp;

fn plan(blocks: u32) -> Plan {
    let mut c = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2".to_string(),
        "geometry.dies_per_channel=1".to_string(),
        format!("geometry.blocks_per_plane={blocks}"),
        "geometry.pages_per_block=32".to_string(),
        "ftl.op_ratio=0.35".to_string(),
        "ftl.map_entries_per_page=256".to_string(),
        "buffer.write_buffer_bytes=262144".to_string(),
        "nand.full_data=true".to_string(),
    ] {
        c.apply_set(&s).unwrap();
    }
    Plan::from_config(&c).unwrap()
}

fn temp(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("ftl-image-{}-{name}.img", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// Runs one request to completion and syncs (as before an NBD reply).
fn call(d: &mut dyn Device, op: HostOp, lpn: u32, units: u32, data: Vec<u8>) -> Vec<u8> {
    let id = d.submit(op, lpn, units, data, 0).unwrap();
    loop {
        if let Some(c) = d.poll() {
            assert_eq!(c.id, id);
            assert!(c.ok);
            d.sync().unwrap();
            return c.data;
        }
        assert!(d.step().unwrap(), "no event left before completion");
    }
}

fn unit(lpn: u32, version: u32, b: usize) -> Vec<u8> {
    let mut v = vec![0u8; b];
    for (i, x) in v.iter_mut().enumerate() {
        *x = (lpn as usize * 7 + version as usize * 13 + i) as u8;
    }
    v
}

#[test]
fn synced_writes_survive_every_cut_and_gc() {
    let plan = plan(64);
    let path = temp("cuts");
    let opts = ImageOptions::default();
    // What each unit of the region last held when acknowledged.
    let region = 96u32;
    let mut last: Vec<Option<u32>> = vec![None; region as usize];
    let mut version = 0u32;
    let mut flushes = 0u64;
    for power_on in 0..6u32 {
        open(&plan, &path, opts, |d, rec| {
            assert_eq!(rec.mounted, power_on > 0, "{rec:?}");
            if power_on > 0 {
                assert!(rec.replayed_calls > 0, "{rec:?}");
                flushes += rec.flush_ops;
            }
            let b = d.unit_bytes();
            // Everything acknowledged before the cut reads back.
            for lpn in 0..region {
                let got = call(d, HostOp::Read, lpn, 1, Vec::new());
                let want = last[lpn as usize].map_or(vec![0; b], |v| unit(lpn, v, b));
                assert!(got == want, "power-on {power_on}: unit {lpn} lost its data");
            }
            // Enough overwrites that GC runs, then the power goes (the
            // closure returns with buffered writes and operations in flight).
            for i in 0..(3 * d.logical_units() / 4) {
                version += 1;
                let lpn = (i * 37 + power_on * 11) % region;
                call(d, HostOp::Write, lpn, 1, unit(lpn, version, b));
                last[lpn as usize] = Some(version);
            }
            Served::Stopped(())
        })
        .unwrap();
    }
    assert!(flushes > 0, "no cut found data in the write buffer");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_torn_capacitor_region_loses_only_what_was_not_acknowledged() {
    let plan = plan(64);
    let path = temp("torn");
    let opts = ImageOptions::default();
    let epoch = open(&plan, &path, opts, |d, rec| {
        let b = d.unit_bytes();
        call(d, HostOp::Write, 5, 1, unit(5, 1, b));
        call(d, HostOp::Write, 6, 1, unit(6, 1, b));
        Served::Stopped(rec.epoch)
    })
    .unwrap();
    // The kill tore the last batch (the one before unit 6's reply).
    let lay = Layout::new(plan.core.geometry);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let parsed = journal::parse(&f, lay.cap_off, epoch).unwrap();
    let last = lay.cap_off + parsed.end - 1;
    let mut byte = [0u8];
    f.read_exact_at(&mut byte, last).unwrap();
    f.write_all_at(&[byte[0] ^ 0x40], last).unwrap();
    let torn = journal::parse(&f, lay.cap_off, epoch).unwrap();
    assert!(torn.end < parsed.end && torn.calls.len() < parsed.calls.len());
    drop(f);
    open(&plan, &path, opts, |d, rec| {
        assert_eq!(rec.replayed_calls, torn.calls.len() as u64);
        let b = d.unit_bytes();
        assert_eq!(call(d, HostOp::Read, 5, 1, Vec::new()), unit(5, 1, b));
        let six = call(d, HostOp::Read, 6, 1, Vec::new());
        assert!(six == unit(6, 1, b) || six == vec![0; b]);
        Served::Stopped(())
    })
    .unwrap();
    std::fs::remove_file(path).unwrap();
}

#[test]
fn wrong_truncated_or_corrupt_images_are_refused() {
    let plan = plan(64);
    let path = temp("bad");
    let opts = ImageOptions::default();
    open(&plan, &path, opts, |_, _| Served::Stopped(())).unwrap();
    let invalid = |r: Result<(), ImageError>| match r {
        Err(ImageError::Invalid(m)) => m,
        other => panic!("expected an invalid image, got {other:?}"),
    };
    // Another configuration of the same geometry.
    let mut other = plan;
    other.core.write_buffer_units /= 2;
    let m = invalid(open(&other, &path, opts, |_, _| Served::Stopped(())));
    assert!(m.contains("another configuration"), "{m}");
    // Another geometry.
    let m = invalid(open(&self::plan(96), &path, opts, |_, _| {
        Served::Stopped(())
    }));
    assert!(
        m.contains("truncated") || m.contains("another geometry"),
        "{m}"
    );
    // Both header copies corrupt.
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.write_all_at(&[0xFF; 16], 20).unwrap();
    f.write_all_at(&[0xFF; 16], 4096 + 20).unwrap();
    let m = invalid(open(&plan, &path, opts, |_, _| Served::Stopped(())));
    assert!(m.contains("not an ftl image"), "{m}");
    // Truncated.
    f.set_len(8192).unwrap();
    let m = invalid(open(&plan, &path, opts, |_, _| Served::Stopped(())));
    assert!(m.contains("truncated"), "{m}");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn compaction_cuts_the_power_while_idle_and_keeps_every_unit() {
    let plan = plan(64);
    let path = temp("compact");
    let opts = ImageOptions {
        compact_bytes: 256 << 10,
        ..ImageOptions::default()
    };
    let region = 64u32;
    let mut last: Vec<Option<u32>> = vec![None; region as usize];
    let (mut version, mut power_ons, mut compactions) = (0u32, 0u32, 0u32);
    let epochs = open(&plan, &path, opts, |d, rec| {
        power_ons += 1;
        if rec.compacted_bytes > 0 {
            compactions += 1;
            assert!(rec.compacted_bytes >= 256 << 10, "{rec:?}");
        }
        let b = d.unit_bytes();
        for lpn in 0..region {
            let got = call(d, HostOp::Read, lpn, 1, Vec::new());
            let want = last[lpn as usize].map_or(vec![0; b], |v| unit(lpn, v, b));
            assert!(
                got == want,
                "power-on {}: unit {lpn} lost its data",
                rec.epoch
            );
        }
        while !d.compact_due() {
            version += 1;
            let lpn = version * 7 % region;
            call(d, HostOp::Write, lpn, 1, unit(lpn, version, b));
            last[lpn as usize] = Some(version);
        }
        if compactions < 3 {
            Served::Compact
        } else {
            Served::Stopped(rec.epoch)
        }
    })
    .unwrap();
    assert_eq!((power_ons, compactions), (4, 3));
    // The last power-on's journal is what the next start replays; it is
    // bounded by the compaction size plus one request's records.
    open(&plan, &path, opts, |_, rec| {
        assert_eq!(rec.epoch, epochs + 1);
        assert!(rec.journal_bytes < (256 << 10) + (64 << 10), "{rec:?}");
        Served::Stopped(())
    })
    .unwrap();
    std::fs::remove_file(path).unwrap();
}

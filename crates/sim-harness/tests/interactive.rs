//! The interactive drive: payloads written come back byte for byte, trimmed
//! units read as zeros, flushes complete, and the run report counts it all.

use sim_harness::config::SimConfig;
use sim_harness::interactive::{open, Completion, Device};
use sim_harness::sim::Plan;
use sim_harness::workload::HostOp;

fn plan() -> Plan {
    let mut c = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=1",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=40",
        // Too small for a metadata region: the mapping stays in DRAM.
        "ftl.map_entries_per_page=0",
    ] {
        c.apply_set(s).unwrap();
    }
    Plan::from_config(&c).unwrap()
}

/// Runs one request to completion.
fn call(d: &mut dyn Device, op: HostOp, lpn: u32, units: u32, data: Vec<u8>) -> Completion {
    let id = d.submit(op, lpn, units, data, 0).unwrap();
    let mut steps = 0u64;
    loop {
        if let Some(c) = d.poll() {
            assert_eq!(c.id, id);
            return c;
        }
        assert!(d.step().unwrap(), "no event left before completion");
        steps += 1;
        assert!(steps < 1_000_000, "request never completed");
    }
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn written_bytes_read_back_and_trim_reads_zeros() {
    let plan = plan();
    let out = open(&plan, |d| {
        let b = d.unit_bytes();
        assert_eq!(b, 4096);
        let logical = d.logical_units();
        // Overwrite a region three times the logical space over, so GC moves data around.
        let region = 256u32;
        let mut last = vec![Vec::new(); region as usize];
        for round in 0..(3 * logical / 8) {
            let lpn = (round * 8) % region;
            let data = pattern(round as u8, 8 * b);
            let c = call(d, HostOp::Write, lpn, 8, data.clone());
            assert!(c.ok && c.data.is_empty());
            for (k, chunk) in data.chunks(b).enumerate() {
                last[lpn as usize + k] = chunk.to_vec();
            }
        }
        let c = call(d, HostOp::Flush, 0, 1, Vec::new());
        assert!(c.ok);
        let c = call(d, HostOp::Read, 0, 8, Vec::new());
        assert!(c.ok);
        assert_eq!(c.data, last[..8].concat());
        call(d, HostOp::Trim, 2, 2, Vec::new());
        let c = call(d, HostOp::Read, 1, 4, Vec::new());
        assert_eq!(&c.data[..b], &last[1][..]);
        assert!(c.data[b..3 * b].iter().all(|&x| x == 0));
        assert_eq!(&c.data[3 * b..], &last[4][..]);
        // A write of the wrong length is refused, not half-done.
        assert!(d.submit(HostOp::Write, 0, 2, vec![0; b], 0).is_err());
        assert!(d.submit(HostOp::Read, logical, 1, Vec::new(), 0).is_err());
        d.outcome(0.0, 0.0).unwrap()
    })
    .unwrap();
    assert_eq!(out.run.mismatches, 0);
    assert!(out.run.read_checks >= 12);
    assert_eq!(out.run.flush_requests, 1);
    assert!(out.ftl.gc_victims > 0, "the test should exercise GC");
}

#[test]
fn concurrent_requests_complete_with_their_own_data() {
    let plan = plan();
    open(&plan, |d| {
        let b = d.unit_bytes();
        let mut ids = Vec::new();
        for lpn in 0..8u32 {
            assert!(d.can_submit());
            ids.push(
                d.submit(HostOp::Write, lpn * 3, 3, pattern(lpn as u8, 3 * b), 0)
                    .unwrap(),
            );
        }
        let mut done = 0;
        let mut steps = 0;
        while done < ids.len() {
            while d.poll().is_some() {
                done += 1;
            }
            if done < ids.len() {
                assert!(d.step().unwrap());
            }
            steps += 1;
            assert!(steps < 1_000_000);
        }
        for lpn in 0..8u32 {
            let c = call(d, HostOp::Read, lpn * 3, 3, Vec::new());
            assert_eq!(c.data, pattern(lpn as u8, 3 * b), "request {lpn}");
        }
    })
    .unwrap();
}

//! Copy requests through the timing engine: remapped and physical copies
//! keep every unit's data (the final verify reads every unit back), and a
//! remapped copy costs no NAND program.

use sim_harness::config::SimConfig;
use sim_harness::sim::{run, Outcome, Plan, RunSpec};
use sim_harness::workload::{HostOp, HostRequest, VecSource};
use test_kit::rng::XorShift64;

fn plan(mode: &str) -> Plan {
    plan_with(mode, &[])
}

fn plan_with(mode: &str, extra: &[&str]) -> Plan {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=48",
        "geometry.pages_per_block=32",
        "ftl.op_ratio=0.3",
        "buffer.write_buffer_bytes=262144",
        "copy.refcount_bits=3",
        "copy.shadow_oob_entries=8192",
    ] {
        cfg.apply_set(s).unwrap();
    }
    cfg.apply_set(&format!("copy.mode={mode}")).unwrap();
    for s in extra {
        cfg.apply_set(s).unwrap();
    }
    Plan::from_config(&cfg).unwrap()
}

fn req(op: HostOp, lpn: u32, units: u32) -> HostRequest {
    HostRequest {
        time_ns: 0,
        op,
        lpn,
        units,
        idle_ns: 0,
        window: 0,
        placement: 0,
    }
}

/// Writes a third of the drive, copies it to the next third in 8-unit
/// copies, then mixes overwrites, copies and trims on the first two thirds.
fn workload(logical: u32, seed: u64) -> Vec<HostRequest> {
    let third = logical / 3 / 8 * 8;
    let mut v = Vec::new();
    for l in (0..third).step_by(8) {
        v.push(req(HostOp::Write, l, 8));
    }
    v.push(req(HostOp::Flush, 0, 1));
    for l in (0..third).step_by(8) {
        v.push(req(HostOp::Copy { src: l }, third + l, 8));
    }
    let mut rng = XorShift64(seed | 1);
    for _ in 0..20_000 {
        let r = rng.next_u64();
        let a = (r >> 8) as u32 % (2 * third - 4);
        let b = (r >> 40) as u32 % (2 * third - 4);
        match r % 10 {
            0..=5 => v.push(req(HostOp::Write, a, 1 + (r >> 20) as u32 % 4)),
            6 | 7 if a.abs_diff(b) >= 4 => v.push(req(HostOp::Copy { src: a }, b, 4)),
            8 => v.push(req(HostOp::Trim, a, 1)),
            _ => v.push(req(HostOp::Read, a, 2)),
        }
    }
    v
}

fn go(mode: &str, reqs: Vec<HostRequest>) -> Outcome {
    go_on(&plan(mode), reqs)
}

fn go_on(p: &Plan, reqs: Vec<HostRequest>) -> Outcome {
    let mut src = VecSource::new(reqs);
    run(
        p,
        RunSpec {
            precondition: false,
            precondition_units: 1,
            precondition_footprint: 0,
            precondition_fast: false,
            verify: true,
            source: &mut src,
            progress: &mut |_, _| {},
        },
    )
    .unwrap()
}

#[test]
fn copies_keep_data_in_both_modes_and_remap_saves_programs() {
    let logical = plan("remap").core.logical_units;
    let w = workload(logical, 7);
    let remap = go("remap", w.clone());
    let phys = go("physical", w);
    for (name, o) in [("remap", &remap), ("physical", &phys)] {
        assert_eq!(o.run.mismatches, 0, "{name}: {:?}", o.run);
        assert_eq!(o.run.uncorrectable_reads, 0, "{name}");
        assert!(o.run.read_checks > u64::from(logical), "{name}");
        assert!(o.run.copy_requests > 1000, "{name}: {:?}", o.run);
        assert!(o.ftl.gc_victims > 0, "{name}: GC must run");
    }
    assert_eq!(phys.ftl.copy_remapped_units, 0);
    assert_eq!(phys.ftl.copy_fallback_units, phys.run.copy_units);
    assert!(
        remap.ftl.copy_remapped_units > remap.run.copy_units / 2,
        "{:?}",
        remap.ftl
    );
    assert!(
        remap.ftl.nand_programs < phys.ftl.nand_programs,
        "remap {} vs physical {} programs",
        remap.ftl.nand_programs,
        phys.ftl.nand_programs
    );
}

#[test]
fn a_remapped_copy_programs_nothing() {
    let p = plan("remap");
    let mut v = Vec::new();
    for l in (0..512).step_by(8) {
        v.push(req(HostOp::Write, l, 8));
    }
    v.push(req(HostOp::Flush, 0, 1));
    let base = go("remap", v.clone());
    // Issued once everything before it completed (flush included), so
    // every source is on flash.
    v.push(HostRequest {
        idle_ns: 1,
        window: 0,
        placement: 0,
        ..req(HostOp::Copy { src: 0 }, 1024, 512)
    });
    let with_copy = go("remap", v);
    assert_eq!(with_copy.run.mismatches, 0);
    assert_eq!(with_copy.ftl.copy_remapped_units, 512);
    assert_eq!(
        with_copy.ftl.nand_programs, base.ftl.nand_programs,
        "a 512-unit remapped copy costs no program"
    );
    assert!(p.core.logical_units > 1536);
}

/// A physical copy holds its own queue slot and the dies it reads, not the
/// whole queue: one-unit copies of data on flash, interleaved with one-unit
/// writes at queue depth 32, run at about the speed of the same number of
/// writes (1.2 times as long in this setup). When a copy held every later
/// request until its source read returned, the mix took 1.8 times as long.
#[test]
fn physical_copies_overlap_like_writes() {
    let p = plan_with("physical", &["host.queue_depth=32"]);
    let n = 2048u32;
    let mut base = Vec::new();
    for l in (0..n).step_by(8) {
        base.push(req(HostOp::Write, l, 8));
    }
    base.push(req(HostOp::Flush, 0, 1));
    let then = |op: HostOp, lpn: u32, first: bool| HostRequest {
        // The first waits for everything before it, so every source is on flash.
        idle_ns: u64::from(first),
        window: 0,
        ..req(op, lpn, 1)
    };
    let mut copies = base.clone();
    let mut writes = base.clone();
    for i in 0..n {
        copies.push(then(HostOp::Write, n + i, i == 0));
        copies.push(then(HostOp::Copy { src: i }, 2 * n + i, false));
        writes.push(then(HostOp::Write, n + i, i == 0));
        writes.push(then(HostOp::Write, 2 * n + i, false));
    }
    let b = go_on(&p, base).run.end_ns;
    let c = go_on(&p, copies);
    let w = go_on(&p, writes);
    assert_eq!(c.run.mismatches, 0);
    assert_eq!(c.ftl.copy_fallback_units, u64::from(n));
    let (tc, tw) = (c.run.end_ns - b, w.run.end_ns - b);
    assert!(
        tc * 10 <= tw * 15,
        "copies and writes took {tc} ns, writes alone {tw} ns"
    );
}

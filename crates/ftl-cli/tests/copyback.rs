//! Copyback under the calibrated error model: the rcFTL error propagation
//! manager keeps every chain of copybacks correctable from a fresh drive to
//! the end of its characterised life, at both retention requirements, while
//! copyback without it makes reads fail.

mod common;
use common::{ftl, get, json_of};
use serde_json::Value;

/// A small 3D-TLC drive of the `rcftl-thesis` preset (same medium model,
/// page-level mapping), hot/cold 16 KiB writes, every unit read back.
fn run(mode: &str, retention: u32, pe: u32) -> Value {
    let sets = [
        "geometry.channels=1".to_string(),
        "geometry.dies_per_channel=2".to_string(),
        "geometry.blocks_per_plane=64".to_string(),
        "ftl.op_ratio=0.25".to_string(),
        "buffer.write_buffer_bytes=1048576".to_string(),
        format!("copyback.mode={mode}"),
        "copyback.selector=greedy".to_string(),
        format!("copyback.retention_months={retention}"),
        format!("nand.retention_months={retention}"),
        format!("nand.initial_pe={pe}"),
    ];
    let mut args = vec!["synth", "--preset", "rcftl-thesis", "--quiet", "--json"];
    for s in &sets {
        args.extend(["--set", s.as_str()]);
    }
    args.extend([
        "--pattern",
        "hotcold",
        "--size-kib",
        "16",
        "--requests",
        "40000",
        "--verify",
    ]);
    json_of(&ftl(&args))
}

fn count(v: &Value, key: &str) -> u64 {
    get(v, key).as_u64().unwrap_or(u64::MAX)
}

#[test]
fn epm_keeps_every_read_correctable_through_life() {
    for retention in [12, 3] {
        let mut copybacks = 0;
        for pe in [0, 1000, 2000, 3000, 4000, 4900] {
            let v = run("rcftl", retention, pe);
            let at = format!("retention {retention} months, P/E {pe}");
            assert_eq!(count(&v, "integrity.uncorrectable_reads"), 0, "{at}");
            assert_eq!(count(&v, "integrity.mismatches"), 0, "{at}");
            assert_eq!(count(&v, "ftl.lost_units"), 0, "{at}");
            assert!(count(&v, "integrity.read_checks") > 0, "{at}");
            copybacks += count(&v, "nand.copybacks");
        }
        assert!(copybacks > 10_000, "copyback was used: {copybacks}");
    }
}

#[test]
fn without_the_epm_copybacks_become_uncorrectable() {
    let v = run("unchecked", 12, 4900);
    assert!(count(&v, "nand.copybacks") > 0);
    assert!(
        count(&v, "integrity.uncorrectable_reads") > 0,
        "the error model must bite when chains are unbounded"
    );
    // The same drive and workload with the EPM: nothing fails.
    let v = run("rcftl", 12, 4900);
    assert_eq!(count(&v, "integrity.uncorrectable_reads"), 0);
}

/// `ftl memory` on a 16 TB-class drive (seed 001's 4 KB mapping): the
/// per-block EPM state is at least two orders of magnitude below per-page
/// quota or counters, and off-chip copy needs none.
#[test]
fn per_block_state_is_two_orders_below_per_page_at_16_tb() {
    let out = ftl(&[
        "memory",
        "--preset",
        "rcftl-thesis",
        "--set",
        "geometry.planes_per_die=2",
        "--set",
        "geometry.blocks_per_plane=65536",
        "--set",
        "geometry.pages_per_block=128",
        "--set",
        "ftl.mapping_unit_bytes=4096",
        "--json",
    ]);
    let v = json_of(&out);
    let raw = get(&v, "geometry.raw_bytes").as_u64().unwrap();
    assert!(raw >= 16_000_000_000_000, "{raw}");
    let by = |m: &str| {
        get(&v, &format!("memory.epm_bytes_by_mode.{m}"))
            .as_u64()
            .unwrap()
    };
    assert_eq!(by("off-chip"), 0);
    assert!(by("rcftl") > 0);
    assert!(by("rcftl-per-page") / by("rcftl") >= 100, "{v}");
    assert!(by("fastgc") / by("rcftl") >= 100, "{v}");
}

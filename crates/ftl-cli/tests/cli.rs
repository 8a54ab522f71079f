//! The `ftl` binary as users and scripts see it: report keys, real traces,
//! and bad input answered with a located error and exit status 2.

use std::path::PathBuf;
use std::process::Output;

mod common;
use common::{ftl, get, json_of};

/// Keys other tools read; renaming one breaks them.
const KEYS: &[&str] = &[
    "host.requests",
    "host.read_units",
    "host.write_units",
    "nand.reads",
    "nand.programs",
    "nand.erases",
    "nand.copybacks",
    "nand.offchip_copies",
    "waf",
    "perf.iops",
    "perf.throughput_mib_s",
    "perf.latency_us.mean",
    "perf.latency_us.p50",
    "perf.latency_us.p99",
    "perf.latency_us.p999",
    "perf.latency_us.max",
    "perf.sim_seconds",
    "integrity.read_checks",
    "integrity.mismatches",
    "integrity.uncorrectable_reads",
    "run.wall_seconds",
    "run.host_requests_per_wall_second",
    "run.peak_rss_mib",
    "run.giant_page_mib",
    "run.bytes_per_simulated_gib",
    "run.events_per_wall_second",
    "run.programmed_units_per_wall_second",
];

#[test]
fn default_replay_reports_every_key_and_no_mismatch() {
    let v = json_of(&ftl(&["replay", "--json"]));
    for k in KEYS {
        assert!(get(&v, k).is_number(), "{k} is not a number");
    }
    assert_eq!(get(&v, "host.requests").as_u64(), Some(5000));
    assert_eq!(get(&v, "integrity.mismatches").as_u64(), Some(0));
    assert!(get(&v, "integrity.read_checks").as_u64().unwrap() > 1000);
}

#[test]
fn run_rates_follow_the_counters() {
    let v = json_of(&ftl(&["synth", "--json", "--quiet", "--requests", "20000"]));
    let wall = get(&v, "run.wall_seconds").as_f64().unwrap();
    let units = [
        "ftl.host_program_units",
        "ftl.gc_program_units",
        "ftl.pad_units",
    ]
    .iter()
    .map(|k| get(&v, k).as_f64().unwrap())
    .sum::<f64>();
    let rate = get(&v, "run.programmed_units_per_wall_second")
        .as_f64()
        .unwrap();
    assert!(
        units > 0.0 && (rate * wall - units).abs() <= 1e-6 * units,
        "{rate} {wall} {units}"
    );
    // At least one NAND completion per programmed page.
    let events = get(&v, "run.events_per_wall_second").as_f64().unwrap() * wall;
    assert!(
        events >= get(&v, "nand.programs").as_f64().unwrap(),
        "{events}"
    );
    // The default drive is 4 GiB of flash.
    let rss = get(&v, "run.peak_rss_mib").as_f64().unwrap() * 1_048_576.0;
    let per_gib = get(&v, "run.bytes_per_simulated_gib").as_f64().unwrap();
    assert!((per_gib * 4.0 - rss).abs() <= 1e-6 * rss, "{per_gib} {rss}");
}

#[test]
fn precondition_takes_no_value_full_or_fast() {
    let run = |flag: Option<&str>| {
        let mut args = vec![
            "synth",
            "--json",
            "--quiet",
            "--requests",
            "40000",
            "--verify",
        ];
        args.extend(flag);
        json_of(&ftl(&args))
    };
    let none = run(None);
    assert_eq!(get(&none, "workload.precondition").as_bool(), Some(false));
    assert!(get(&none, "workload.precondition_mode").is_null());
    for (flag, mode) in [
        ("--precondition", "full"),
        ("--precondition=full", "full"),
        ("--precondition=fast", "fast"),
    ] {
        let v = run(Some(flag));
        assert_eq!(
            get(&v, "workload.precondition").as_bool(),
            Some(true),
            "{flag}"
        );
        assert_eq!(
            get(&v, "workload.precondition_mode").as_str(),
            Some(mode),
            "{flag}"
        );
        assert_eq!(get(&v, "integrity.mismatches").as_u64(), Some(0), "{flag}");
        // Every logical unit was written before the run: the verify pass reads them all.
        assert_eq!(
            get(&v, "integrity.read_checks").as_u64(),
            get(&v, "ftl.logical_units").as_u64(),
            "{flag}"
        );
        // Steady state: GC runs within the first twentieth of the logical
        // space (fast leaves the blocks the metadata region grows into free).
        assert!(get(&v, "ftl.gc_victims").as_u64().unwrap() > 0, "{flag}");
    }
    // The value needs `=`: a separate word is not taken as the mode.
    let out = ftl(&["synth", "--quiet", "--precondition", "fast"]);
    assert_eq!(out.status.code(), Some(2));
    let bad = ftl(&["synth", "--quiet", "--precondition=quick"]);
    assert_eq!(bad.status.code(), Some(2));
    let refused = ftl(&[
        "synth",
        "--quiet",
        "--precondition=fast",
        "--set",
        "copyback.mode=rcftl",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--precondition=fast"));
}

fn shared(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("note: {} not found; skipping", p.display());
        None
    }
}

#[test]
fn every_shared_trace_replays_with_its_request_count() {
    for (file, requests) in [
        ("fin1_ssdsim_example.ascii", 10_000u64),
        ("mqsim_tpcc-small.trace", 6_999),
        ("apress_blkparse.txt", 170),
        ("cloudphysics_vscsi_sample.csv", 113_872),
    ] {
        let Some(path) = shared(file) else { continue };
        let v = json_of(&ftl(&[
            "replay",
            "--json",
            "--quiet",
            path.to_str().unwrap(),
        ]));
        assert_eq!(get(&v, "host.requests").as_u64(), Some(requests), "{file}");
        assert_eq!(get(&v, "trace.records").as_u64(), Some(requests), "{file}");
        assert_eq!(get(&v, "integrity.mismatches").as_u64(), Some(0), "{file}");
        assert_eq!(
            get(&v, "integrity.uncorrectable_reads").as_u64(),
            Some(0),
            "{file}"
        );
    }
}

fn assert_input_error(out: &Output, needles: &[&str]) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "no report on bad input");
    let err = String::from_utf8_lossy(&out.stderr);
    for n in needles {
        assert!(err.contains(n), "stderr {err:?} lacks {n:?}");
    }
}

#[test]
fn malformed_trace_names_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("ftl-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.ascii");
    std::fs::write(&p, "0 0 100 8 0\n10 0 abc 8 1\n").unwrap();
    let out = ftl(&["replay", "--json", "--format", "ascii", p.to_str().unwrap()]);
    assert_input_error(&out, &["bad.ascii:2", "sector"]);
    let out = ftl(&[
        "replay",
        "--json",
        dir.join("missing.trace").to_str().unwrap(),
    ]);
    assert_input_error(&out, &["missing.trace"]);
}

#[test]
fn bad_config_is_rejected_naming_the_key() {
    assert_input_error(
        &ftl(&["replay", "--json", "--set", "geometry.channels=0"]),
        &["geometry.channels"],
    );
    assert_input_error(
        &ftl(&["replay", "--json", "--set", "geometry.chanels=4"]),
        &["geometry.chanels"],
    );
    assert_input_error(
        &ftl(&["replay", "--json", "--set", "ftl.op_ratio=0.0001"]),
        &[
            "ftl.op_ratio",
            "gc_reserve_blocks + 3 open blocks",
            "op_ratio must be above",
        ],
    );
    assert_input_error(&ftl(&["replay", "--json", "--preset", "nope"]), &["nope"]);
    let dir = std::env::temp_dir().join(format!("ftl-cli-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("cfg.toml");
    std::fs::write(&p, "[geometry]\nchannels = 2\nplanes_per_dye = 1\n").unwrap();
    assert_input_error(
        &ftl(&["replay", "--json", "--config", p.to_str().unwrap()]),
        &["cfg.toml:3", "planes_per_dye"],
    );
}

#[test]
fn config_file_and_set_override_the_preset() {
    let dir = std::env::temp_dir().join(format!("ftl-cli-ok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("cfg.toml");
    std::fs::write(&p, "[ftl]\nop_ratio = 0.25\n").unwrap();
    let v = json_of(&ftl(&[
        "synth",
        "--json",
        "--requests",
        "2000",
        "--config",
        p.to_str().unwrap(),
        "--set",
        "geometry.blocks_per_plane=128",
    ]));
    assert_eq!(
        get(&v, "config.geometry.blocks_per_plane").as_u64(),
        Some(128)
    );
    assert!((get(&v, "config.ftl.op_ratio").as_f64().unwrap() - 0.25).abs() < 1e-9);
    assert_eq!(get(&v, "host.requests").as_u64(), Some(2000));
}

#[test]
fn synth_with_precondition_and_reads_verifies_clean() {
    let v = json_of(&ftl(&[
        "synth",
        "--json",
        "--set",
        "geometry.blocks_per_plane=64",
        "--pattern",
        "hotcold",
        "--read-pct",
        "30",
        "--requests",
        "20000",
        "--precondition",
        "--verify",
    ]));
    assert_eq!(get(&v, "integrity.mismatches").as_u64(), Some(0));
    assert!(get(&v, "integrity.read_checks").as_u64().unwrap() > 20_000);
    assert!(get(&v, "ftl.gc_victims").as_u64().unwrap() > 0);
}

#[test]
fn presets_lists_the_papers_setups() {
    let out = ftl(&["presets"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for p in [
        "default",
        "rcftl-dac18",
        "rcftl-thesis",
        "longftl-mqsim",
        "dgcb-flashsim",
        "dawid-femu",
        "mqsim-gc16",
    ] {
        assert!(text.contains(p), "preset {p} missing");
    }
}

#[test]
fn eight_units_per_page_run_gc_without_stalling() {
    // 16 KiB pages of 2 KiB units: GC holds partial pages while it reads.
    let v = json_of(&ftl(&[
        "synth",
        "--json",
        "--set",
        "ftl.mapping_unit_bytes=2048",
        "--set",
        "geometry.blocks_per_plane=72",
        "--precondition",
        "--read-pct",
        "20",
        "--requests",
        "100000",
    ]));
    assert!(get(&v, "ftl.gc_victims").as_u64().unwrap() > 0);
    assert_eq!(get(&v, "integrity.mismatches").as_u64(), Some(0));
    // Too few GC slots for such pages is refused up front.
    assert_input_error(
        &ftl(&[
            "synth",
            "--json",
            "--set",
            "ftl.mapping_unit_bytes=2048",
            "--set",
            "ftl.gc_slots_per_plane=8",
        ]),
        &["ftl.gc_slots_per_plane"],
    );
}

/// Few operation entries: a plane whose GC turn found none free stays
/// queued for the next pass. Before, it waited for a completion of its own
/// GC, which with four entries often never came: the core went idle with
/// a full write buffer after about two million writes ("not enough good
/// blocks for the logical capacity").
#[test]
fn four_operation_entries_run_to_the_end() {
    let out = ftl(&[
        "synth",
        "--requests",
        "6000000",
        "--set",
        "ftl.max_inflight=4",
        "--quiet",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(get(&v, "host.requests"), 6_000_000);
}

//! `ftl sweep` as scripts see it: one CSV row per cell, the same CSV for
//! any `--jobs` and through `--emit-jobs` + `--merge`, and bad arguments
//! answered with exit status 2.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::ftl;

/// A fresh, empty temporary directory for one test.
fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ftl-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The sweep under test: 3 over-provisioning ratios x 2 workloads on a
/// small drive, with `extra` arguments appended.
fn sweep(extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "sweep",
        "--quiet",
        "--set",
        "geometry.channels=2",
        "--set",
        "geometry.dies_per_channel=1",
        "--set",
        "geometry.planes_per_die=1",
        "--set",
        "geometry.blocks_per_plane=64",
        "--set",
        "geometry.pages_per_block=64",
        // 128 blocks at 10 % spare cannot hold a metadata region: the
        // mapping stays in DRAM.
        "--set",
        "ftl.map_entries_per_page=0",
        "--vary",
        "ftl.op_ratio=0.1,0.2,0.3",
        "--workload",
        "oltp",
        "--workload",
        "fileserver",
        "--requests",
        "2000",
    ];
    args.extend_from_slice(extra);
    ftl(&args)
}

/// Runs the sweep directly with `jobs` threads and returns its CSV.
fn direct(dir: &std::path::Path, jobs: &str) -> String {
    let file = dir.join(format!("jobs{jobs}.csv"));
    let out = sweep(&["--jobs", jobs, "--out", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&file).expect("csv written")
}

#[test]
fn sweep_is_the_same_on_threads_and_through_emitted_jobs() {
    let dir = temp("same");
    let csv = direct(&dir, "2");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 7, "header and 6 rows:\n{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(&header[..3], ["ftl.op_ratio", "workload", "seed"]);
    for key in [
        "perf.iops",
        "waf",
        "nand.copybacks",
        "integrity.uncorrectable_reads",
    ] {
        assert!(header.contains(&key), "column {key}");
    }
    assert!(lines[1].starts_with("0.1,oltp,"), "{}", lines[1]);
    assert!(lines[6].starts_with("0.3,fileserver,"), "{}", lines[6]);

    assert_eq!(direct(&dir, "1"), csv, "--jobs 1 gives the same CSV");

    let cells = dir.join("cells");
    let emitted = sweep(&["--emit-jobs", cells.to_str().unwrap()]);
    assert!(emitted.status.success());
    let script = String::from_utf8(emitted.stdout).expect("utf8");
    assert_eq!(script.lines().count(), 6, "one command per cell");
    for line in script.lines() {
        let st = Command::new("sh")
            .args(["-c", line])
            .status()
            .expect("run sh");
        assert!(st.success(), "{line}");
    }
    let merged = dir.join("merged.csv");
    let out = ftl(&[
        "sweep",
        "--merge",
        cells.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&merged).unwrap(), csv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_sweep_arguments_exit_2_and_name_the_argument() {
    let dir = temp("bad");
    let out_file = dir.join("x.csv");
    let out = out_file.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["--vary", "ftl.no_such_key=1,2", "--workload", "oltp"],
            "ftl.no_such_key",
        ),
        (
            vec!["--vary", "ftl.op_ratio=", "--workload", "oltp"],
            "ftl.op_ratio",
        ),
        (vec!["--workload", "no-such-profile"], "no-such-profile"),
    ] {
        let mut all = vec!["sweep", "--out", out];
        all.extend(args);
        let r = ftl(&all);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(needle), "{all:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!out_file.exists(), "nothing written on bad input");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `waf` column of a sweep CSV, one value per row.
fn waf_column(csv: &str) -> Vec<f64> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header.iter().position(|h| *h == "waf").expect("waf column");
    lines
        .map(|l| {
            l.split(',')
                .nth(col)
                .expect("waf value")
                .parse()
                .expect("number")
        })
        .collect()
}

#[test]
fn preconditioned_sweep_shows_the_over_provisioning_difference() {
    let dir = temp("precondition");
    let file = dir.join("pre.csv");
    let out = sweep(&["--precondition", "--out", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let waf = waf_column(&std::fs::read_to_string(&file).unwrap());
    // Rows: op 0.1, 0.2, 0.3 (slowest) x oltp, fileserver.
    assert_eq!(waf.len(), 6);
    for w in 0..2 {
        let (low_op, high_op) = (waf[w], waf[4 + w]);
        assert!(low_op > 1.0, "steady state rewrites data: {waf:?}");
        assert!(low_op > high_op, "more spare space, less GC: {waf:?}");
    }
    // Without preconditioning the drive never fills: no difference to see.
    let fresh = dir.join("fresh.csv");
    let out = sweep(&["--out", fresh.to_str().unwrap()]);
    assert!(out.status.success());
    let waf_fresh = waf_column(&std::fs::read_to_string(&fresh).unwrap());
    assert!(
        waf_fresh.iter().all(|w| *w < waf[0]),
        "{waf_fresh:?} vs {waf:?}"
    );
}

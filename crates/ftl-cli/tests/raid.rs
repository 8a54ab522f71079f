//! `ftl raid` as scripts see it: every recovery mode restores every unit,
//! the failed-LBA answers match the ground truth, and Tables 8 and 9 print.

use std::process::{Command, Output};

use serde_json::Value;

fn ftl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftl"))
        .args(args)
        .output()
        .expect("run ftl")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "ftl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf8")
}

const SMALL: [&str; 14] = [
    "--set",
    "geometry.channels=8",
    "--set",
    "geometry.dies_per_channel=2",
    "--set",
    "geometry.planes_per_die=1",
    "--set",
    "geometry.blocks_per_plane=24",
    "--set",
    "geometry.pages_per_block=16",
    "--set",
    "geometry.page_bytes=16384",
    "--set",
    "ftl.op_ratio=0.3",
];

#[test]
fn every_mode_recovers_with_no_mismatch() {
    let mut secs = Vec::new();
    for mode in ["baseline", "idr", "cdr", "cdr-star"] {
        let set = format!("reparo.mode={mode}");
        let mut args = vec!["raid", "--json", "--ssds", "4", "--set", &set];
        args.extend(SMALL);
        args.extend(["--set", "reparo.n_bad_die=4", "--utilisation", "0.6"]);
        let v: Value = serde_json::from_str(&ok(&ftl(&args))).expect("json");
        assert_eq!(v["integrity"]["mismatches"], 0, "{mode}");
        assert_eq!(v["reparo"]["status_exact"], true, "{mode}");
        assert_eq!(v["reparo"]["mode"], mode);
        let failed = v["reparo"]["failed_lbas"].as_u64().unwrap();
        assert_eq!(failed, v["reparo"]["truth_failed_lbas"].as_u64().unwrap());
        assert!(failed > 0);
        let fake = v["reparo"]["fake_failures"].as_u64().unwrap();
        assert_eq!(fake > 0, mode.starts_with("cdr"), "{mode}");
        if mode == "cdr-star" {
            // One list-page read per failed block, except blocks whose
            // lists were still in the controller's RAM.
            let reads = v["reparo"]["p2l_page_reads"].as_u64().unwrap();
            let ram = v["reparo"]["p2l_ram_blocks"].as_u64().unwrap();
            assert!(reads > 0, "{v}");
            assert_eq!(
                reads + ram,
                v["reparo"]["failed_die_blocks"].as_u64().unwrap(),
                "one read per block"
            );
        }
        secs.push(v["reparo"]["rebuild_seconds"].as_f64().unwrap());
    }
    assert!(secs[3] < secs[0], "{secs:?}");
}

#[test]
fn tables_8_and_9_and_figure_30() {
    let out = ok(&ftl(&["raid", "--tables"]));
    assert!(out.contains("| victim core | 33.33% | 14.29% | 6.67% | 3.23% | 1.59% | 0.79% |"));
    assert!(out.contains("| victim core | 6.67% | 3.23% | 1.59% | 0.79% | 0.39% | 0.20% |"));
    assert!(out.contains("alpha = 1, utilisation 0.625 -> 0.667"));
    for l in [
        "LBA 3 -> core 0 as _60",
        "LBA 7 -> core 1 as _61",
        "LBA 11 -> core 2 as _62",
    ] {
        assert!(out.contains(l), "{l}");
    }
}

/// With no `--utilisation`, `ftl raid` picks one every recovery mode holds
/// on the default drive (two dies per flash core: IDR's victim core keeps
/// its LBAs on one die) and recovers exactly.
#[test]
fn default_drive_runs_without_a_utilisation() {
    let mut used = Vec::new();
    for mode in ["idr", "cdr-star"] {
        let set = format!("reparo.mode={mode}");
        let args = ["raid", "--json", "--ssds", "4", "--set", &set];
        let v: Value = serde_json::from_str(&ok(&ftl(&args))).expect("json");
        assert_eq!(v["integrity"]["mismatches"], 0, "{mode}");
        assert_eq!(v["reparo"]["status_exact"], true, "{mode}");
        used.push(v["raid"]["utilisation"].as_f64().unwrap());
    }
    assert_eq!(used[0], used[1], "one default for every mode");
    assert!(used[0] > 0.0 && used[0] < 0.85, "{used:?}");
}

//! Copies from the command line: an `ftl` trace with copies replays with
//! remapped and physical copies, and the dedup and journal profiles run.

mod common;

use common::{ftl, get, json_of};

/// Writes 4096 units (four times the default 4 MiB write buffer, so the
/// first ones are on flash), copies the first 512 to a second area,
/// overwrites some sources and reads the copies back.
fn trace() -> String {
    let mut s = String::from("# ftl trace\n");
    let mut t = 0u64;
    for i in 0..4096u64 {
        s.push_str(&format!("{t} W {} 4096\n", i * 4096));
        t += 1000;
    }
    for i in 0..512u64 {
        s.push_str(&format!("{t} C {} 4096 {}\n", (8192 + i) * 4096, i * 4096));
        t += 1000;
        if i % 4 == 0 {
            s.push_str(&format!("{t} W {} 4096\n", i * 4096));
            t += 1000;
        }
    }
    for i in 0..512u64 {
        s.push_str(&format!("{t} R {} 4096\n", (8192 + i) * 4096));
        t += 1000;
    }
    s
}

#[test]
fn ftl_trace_with_copies_replays_in_both_modes() {
    let dir = std::env::temp_dir().join(format!("ftl-cc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("copies.ftl");
    std::fs::write(&p, trace()).unwrap();
    let path = p.to_str().unwrap();
    let remap = json_of(&ftl(&[
        "replay",
        "--json",
        "--set",
        "copy.mode=remap",
        path,
    ]));
    let phys = json_of(&ftl(&[
        "replay",
        "--json",
        "--format",
        "ftl",
        "--set",
        "copy.mode=physical",
        path,
    ]));
    for v in [&remap, &phys] {
        assert_eq!(get(v, "copy.commands"), 512);
        assert_eq!(get(v, "integrity.mismatches"), 0);
        assert!(get(v, "integrity.read_checks").as_u64().unwrap() >= 512);
    }
    assert_eq!(get(&phys, "copy.remapped_units"), 0);
    assert_eq!(get(&phys, "copy.fallback_physical"), 512);
    assert!(get(&remap, "copy.remapped_units").as_u64().unwrap() > 400);
    assert!(
        get(&remap, "nand.programs").as_u64().unwrap()
            < get(&phys, "nand.programs").as_u64().unwrap()
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn copy_profiles_run_and_verify() {
    for args in [
        &["--profile", "journal"][..],
        &["--profile", "dedup", "--dedup-ratio", "4"][..],
    ] {
        let mut a = vec![
            "synth",
            "--json",
            "--requests",
            "3000",
            "--verify",
            "--set",
            "copy.mode=remap",
        ];
        a.extend_from_slice(args);
        let v = json_of(&ftl(&a));
        assert_eq!(get(&v, "integrity.mismatches"), 0, "{args:?}");
        assert!(
            get(&v, "copy.remapped_units").as_u64().unwrap() > 500,
            "{args:?}"
        );
    }
    let out = ftl(&["synth", "--json", "--dedup-ratio", "2"]);
    assert!(!out.status.success(), "--dedup-ratio needs --profile dedup");
}

/// Windowed copy-assisted writing against host deduplication: both verify,
/// every user write is counted in a window, DEDUP writes metadata and
/// issues no copies, and the window flags are checked.
#[test]
fn windowed_ccaw_and_dedup_run_and_verify() {
    let run = |scheme: &str| {
        json_of(&ftl(&[
            "synth",
            "--json",
            "--requests",
            "2000",
            "--verify",
            "--set",
            "copy.mode=remap",
            "--profile",
            "dedup",
            "--window",
            "10",
            "--dedup-scheme",
            scheme,
        ]))
    };
    let ccaw = run("ccaw");
    let dedup = run("dedup");
    let table = run("dedup-table");
    for v in [&ccaw, &dedup, &table] {
        assert_eq!(get(v, "integrity.mismatches"), 0);
        assert_eq!(get(v, "window.user_writes"), 2000);
        assert_eq!(get(v, "window.windows"), 200);
        assert!(get(v, "window.latency_us.p50").as_f64().unwrap() > 0.0);
    }
    assert!(get(&ccaw, "copy.commands").as_u64().unwrap() > 500);
    assert_eq!(get(&ccaw, "window.host.metadata_writes"), 0);
    assert_eq!(get(&ccaw, "window.host.flushes"), 200);
    assert_eq!(get(&dedup, "copy.commands"), 0);
    assert_eq!(get(&dedup, "window.host.metadata_writes"), 200);
    assert!(get(&dedup, "window.host.flushes").as_u64().unwrap() > 200);
    assert!(
        get(&table, "window.host.metadata_writes").as_u64().unwrap()
            > get(&dedup, "window.host.metadata_writes").as_u64().unwrap()
    );
    for bad in [
        &["synth", "--json", "--window", "10"][..],
        &["synth", "--json", "--profile", "dedup", "--window", "0"][..],
        &[
            "synth",
            "--json",
            "--profile",
            "dedup",
            "--dedup-scheme",
            "dedup",
        ][..],
    ] {
        let out = ftl(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

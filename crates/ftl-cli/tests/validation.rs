//! Every argument and configuration value is checked before anything is
//! allocated or run: each case below once panicked, aborted, overflowed or
//! was accepted; now it exits with status 2, no report, and a message
//! naming the flag or key. All run under `ulimit -v 1 GiB`.

mod common;

use common::{assert_rejected, ftl_limited};

/// Runs `args` (plus `--json`, so any report would reach stdout) under the
/// memory limit and checks the rejection.
fn rejects(args: &[&str], needles: &[&str]) {
    let mut all = args.to_vec();
    all.push("--json");
    assert_rejected(&ftl_limited(&all), needles);
}

#[test]
fn raid_arguments_out_of_range() {
    for u in ["0", "-1", "NaN", "1.5", "inf"] {
        rejects(&["raid", &format!("--utilisation={u}")], &["--utilisation"]);
    }
    rejects(
        &["raid", "--utilisation", "0.6", "--fail-drive", "99"],
        &["--fail-drive", "99"],
    );
    rejects(
        &["raid", "--utilisation", "0.6", "--fail-core", "4"],
        &["--fail-core"],
    );
    rejects(
        &["raid", "--utilisation", "0.6", "--fail-die", "99"],
        &["--fail-die", "99"],
    );
    for b in ["-1", "0", "NaN", "2"] {
        rejects(&["raid", &format!("--bw-limit={b}")], &["--bw-limit"]);
    }
    rejects(&["raid", "--stripe-kib", "0"], &["--stripe-kib"]);
    rejects(
        &["raid", "--stripe-kib", "2"],
        &["--stripe-kib", "mapping unit"],
    );
    rejects(&["raid", "--ssds", "2"], &["--ssds"]);
    rejects(&["raid", "--range-mib", "0"], &["--range-mib"]);
    rejects(&["raid", "--post-writes=-1"], &["--post-writes"]);
    rejects(
        &["raid", "--utilisation", "0.0001"],
        &["--utilisation", "stripe row"],
    );
}

#[test]
fn raid_configuration_errors_exit_2() {
    rejects(
        &["raid", "--set", "controller.flash_cores=3"],
        &["controller.flash_cores"],
    );
    rejects(&["raid", "--set", "reparo.p2l=none"], &["reparo.p2l"]);
    // Too full for the CDR redirection space: a configuration problem.
    rejects(
        &["raid", "--utilisation", "0.99"],
        &["over-provisioning", "--utilisation"],
    );
    rejects(
        &[
            "raid",
            "--utilisation",
            "0.6",
            "--ssds",
            "4",
            "--max-memory",
            "1M",
        ],
        &["--max-memory"],
    );
}

#[test]
fn memory_checks_the_geometry() {
    rejects(
        &["memory", "--set", "geometry.channels=0"],
        &["geometry.channels"],
    );
    rejects(
        &["memory", "--set", "geometry.pages_per_block=0"],
        &["geometry.pages_per_block"],
    );
}

#[test]
fn timing_values_keep_times_finite() {
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "timing.t_erase_us=1e308",
        ],
        &["timing.t_erase_us"],
    );
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "timing.t_prog_us=1e20",
        ],
        &["timing.t_prog_us"],
    );
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "timing.channel_mts=1e-300",
        ],
        &["timing.channel_mts"],
    );
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "timing.t_cmd_ns=1e300",
        ],
        &["timing.t_cmd_ns"],
    );
}

#[test]
fn huge_tables_are_refused_before_allocation() {
    let cases = [
        ("ftl.max_inflight=4294967295", "ftl.max_inflight"),
        (
            "ftl.map_entries_per_page=4294967295",
            "ftl.map_entries_per_page",
        ),
        ("host.queue_depth=268435456", "host.queue_depth"),
    ];
    for (set, key) in cases {
        rejects(&["synth", "--requests", "100", "--set", set], &[key]);
    }
    // Valid on its own but needs tens of GiB: the message says how much.
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "geometry.pages_per_block=65536",
            "--max-memory",
            "16G",
        ],
        &["--max-memory", "GiB", "would take"],
    );
    rejects(
        &["synth", "--requests", "100", "--max-memory", "1M"],
        &["--max-memory", "MiB"],
    );
    rejects(&["synth", "--max-memory", "lots"], &["--max-memory"]);
    rejects(
        &["replay", "--qd", "268435456"],
        &["--qd", "host.queue_depth"],
    );
    rejects(&["replay", "--qd", "0"], &["--qd", "host.queue_depth"]);
}

#[test]
fn values_that_failed_at_run_time_are_rejected_up_front() {
    for epp in ["1", "2", "3"] {
        rejects(
            &[
                "synth",
                "--requests",
                "100",
                "--set",
                &format!("ftl.map_entries_per_page={epp}"),
            ],
            &["ftl.map_entries_per_page"],
        );
    }
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "nand.endurance_scale=0.5",
        ],
        &["nand.endurance_scale", "wordline"],
    );
    rejects(
        &["synth", "--requests", "100", "--set", "erase.mode=gerase"],
        &["erase.mode", "wordline"],
    );
    rejects(
        &[
            "synth",
            "--requests",
            "100",
            "--set",
            "nand.retention_months=1e308",
        ],
        &["nand.retention_months"],
    );
    for r in ["0.99", "0.999", "0.5"] {
        rejects(
            &[
                "synth",
                "--requests",
                "100",
                "--set",
                &format!("nand.factory_bad_ratio={r}"),
            ],
            &["nand.factory_bad_ratio"],
        );
    }
    rejects(
        &[
            "crash",
            "--cuts",
            "1",
            "--set",
            "ftl.map_entries_per_page=2",
        ],
        &["ftl.map_entries_per_page"],
    );
}

#[test]
fn interval_and_serve_flags_are_bounded() {
    rejects(
        &["synth", "--requests", "100", "--interval-ms", "0.00001"],
        &["--interval-ms"],
    );
    rejects(
        &["synth", "--requests", "100", "--interval-ms", "1e300"],
        &["--interval-ms"],
    );
    let serve = |extra: &[&str], flag: &str| {
        let mut a = vec!["serve", "--nbd", "127.0.0.1:0"];
        a.extend_from_slice(extra);
        rejects(&a, &[flag]);
    };
    serve(&["--max-seconds", "1e20"], "--max-seconds");
    serve(&["--handshake-timeout", "0"], "--handshake-timeout");
    serve(&["--handshake-timeout", "NaN"], "--handshake-timeout");
    serve(&["--max-connections", "0"], "--max-connections");
    serve(&["--max-queued-bytes", "4096"], "--max-queued-bytes");
    serve(&["--set", "timing.t_erase_us=1e308"], "timing.t_erase_us");
}

/// The checks reject only what is out of range: the same commands with
/// sane values still run under the same memory limit.
#[test]
fn sane_values_still_run_under_the_limit() {
    let out = ftl_limited(&[
        "synth",
        "--requests",
        "200",
        "--json",
        "--quiet",
        "--interval-ms",
        "0.01",
        "--set",
        "timing.t_prog_us=9000000",
        "--set",
        "nand.retention_months=1200",
        "--set",
        "nand.factory_bad_ratio=0.05",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
    assert!(v["perf"]["iops"].as_f64().is_some_and(|x| x > 0.0), "{v}");
    assert_eq!(v["integrity"]["mismatches"], 0, "{v}");
}

#[test]
fn a_bad_image_is_refused_with_its_name() {
    let dir = std::env::temp_dir().join(format!("ftl-bad-image-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Shorter than the configuration's image.
    let short = dir.join("short.img");
    std::fs::write(&short, vec![0x5a; 1 << 20]).unwrap();
    fn image(f: &std::path::Path) -> Vec<&str> {
        let mut a = vec!["serve", "--nbd", "127.0.0.1:0", "--image"];
        a.push(f.to_str().unwrap());
        a.extend(["--set", "geometry.blocks_per_plane=64"]);
        a
    }
    rejects(&image(&short), &["--image", "short.img", "truncated"]);
    // Long enough, but no header.
    let garbage = dir.join("garbage.img");
    let f = std::fs::File::create(&garbage).unwrap();
    f.set_len(2 << 30).unwrap();
    std::io::Write::write_all(&mut &f, &[0xA5; 8192]).unwrap();
    rejects(&image(&garbage), &["garbage.img", "not an ftl image"]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every command takes `--interval-ms` through the same check: crash and
/// memory, which build no time series, once took NaN, inf and 0.
#[test]
fn interval_ms_is_checked_by_every_command() {
    for bad in ["NaN", "inf", "0", "-1", "1e300", "x"] {
        let flag = format!("--interval-ms={bad}");
        rejects(&["crash", "--cuts", "1", &flag], &["--interval-ms"]);
        rejects(&["memory", &flag], &["--interval-ms"]);
        rejects(&["synth", "--requests", "10", &flag], &["--interval-ms"]);
        rejects(&["replay", &flag], &["--interval-ms"]);
    }
}

/// A configuration file is read up to a bound: `/dev/zero` is refused at
/// once by name (it was read until memory ran out), under the 1 GiB limit.
#[test]
fn an_endless_config_file_is_refused() {
    rejects(
        &["replay", "--config", "/dev/zero"],
        &["/dev/zero", "larger than 4194304 bytes"],
    );
    rejects(&["memory", "--config", "/dev/zero"], &["/dev/zero"]);
}

/// A file of many unknown keys is refused quickly, listing a few and
/// counting the rest; a huge value is cut in the message.
#[test]
fn unknown_keys_and_huge_values_give_short_messages() {
    let dir = std::env::temp_dir().join(format!("ftl-cfg-edges-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let many = dir.join("many.toml");
    let mut text = String::from("[geometry]\n");
    for i in 0..40_000 {
        text.push_str(&format!("k{i} = 1\n"));
    }
    std::fs::write(&many, text).unwrap();
    let t0 = std::time::Instant::now();
    let out = ftl_limited(&["memory", "--json", "--config", many.to_str().unwrap()]);
    let secs = t0.elapsed().as_secs_f64();
    assert_rejected(
        &out,
        &[
            "many.toml:2: key geometry.k0: unknown key",
            "40000 unknown keys in all: geometry.k0 (line 2), geometry.k1 (line 3)",
            "and 39995 more",
        ],
    );
    // Quadratic, it took 9 s in a release build.
    assert!(secs < 5.0, "{secs} s");
    let big = dir.join("big.toml");
    // 3 MiB: within the 4 MiB a configuration file may hold.
    std::fs::write(
        &big,
        format!("[erase]\nmode = \"{}\"\n", "x".repeat(3 << 20)),
    )
    .unwrap();
    let out = ftl_limited(&["memory", "--json", "--config", big.to_str().unwrap()]);
    assert_rejected(&out, &["big.toml:2: key erase.mode", "…(3145728 bytes)"]);
    assert!(
        out.stderr.len() < 1000,
        "{} bytes of message",
        out.stderr.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

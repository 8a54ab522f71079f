//! `cargo xtask fuzz [--seconds N] [TARGET...]`: builds the coverage-guided
//! fuzz targets of `fuzz/` (cargo-fuzz, libFuzzer, nightly toolchain,
//! installed when missing) and runs each for N seconds (default 25), one
//! after another, printing executions and corpus size per target. A crash
//! fails the command; libFuzzer leaves the input in `fuzz/artifacts/TARGET/`.

use std::path::Path;
use std::process::Command;

use crate::ci::root;
use crate::qemu::run_in;

/// Seconds per target when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 25;
/// Flags of every cargo-fuzz build and run: optimised, with debug assertions.
const BUILD_FLAGS: [&str; 2] = ["-O", "--debug-assertions"];

/// Parses the arguments after `fuzz` and runs.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut seconds = DEFAULT_SECONDS;
    let mut targets = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--seconds" {
            let v = it.next().ok_or("--seconds needs a value")?;
            seconds = v
                .parse()
                .ok()
                .filter(|&s| s > 0)
                .ok_or_else(|| format!("--seconds: `{v}` is not a positive integer"))?;
        } else {
            targets.push(a.clone());
        }
    }
    run_for(seconds, &targets)
}

/// Installs what fuzzing needs, builds every target and runs `targets`
/// (all when empty) for `seconds` each.
pub fn run_for(seconds: u64, targets: &[String]) -> Result<(), String> {
    let dir = root().join("fuzz");
    ensure_tools()?;
    let mut build = vec!["+nightly", "fuzz", "build"];
    build.extend(BUILD_FLAGS);
    run_in(&dir, "cargo", &build)?;
    let targets = if targets.is_empty() {
        list_targets(&dir)?
    } else {
        targets.to_vec()
    };
    let mut summary = Vec::new();
    for t in &targets {
        summary.push(run_target(&dir, t, seconds)?);
    }
    for line in summary {
        eprintln!("{line}");
    }
    Ok(())
}

/// Installs the nightly toolchain and cargo-fuzz when they are missing.
fn ensure_tools() -> Result<(), String> {
    let nightly = Command::new("cargo")
        .args(["+nightly", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        run_in(&root(), "rustup", &["toolchain", "install", "nightly"])?;
    }
    let fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !fuzz {
        run_in(&root(), "cargo", &["install", "cargo-fuzz"])?;
    }
    Ok(())
}

/// The targets `cargo fuzz list` names.
fn list_targets(dir: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("cargo")
        .args(["+nightly", "fuzz", "list"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run cargo fuzz list: {e}"))?;
    if !out.status.success() {
        return Err("cargo fuzz list failed".into());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// Runs one target for `seconds` on its corpus (`fuzz/corpus/T`, seeded
/// from the committed `fuzz/seeds/T`); returns its summary line.
fn run_target(dir: &Path, target: &str, seconds: u64) -> Result<String, String> {
    let corpus = format!("corpus/{target}");
    let seeds = format!("seeds/{target}");
    let artifacts = format!("artifacts/{target}/");
    for d in [&corpus, &artifacts] {
        std::fs::create_dir_all(dir.join(d)).map_err(|e| format!("{d}: {e}"))?;
    }
    let time = format!("-max_total_time={seconds}");
    let prefix = format!("-artifact_prefix={artifacts}");
    let mut args = vec!["+nightly", "fuzz", "run"];
    args.extend(BUILD_FLAGS);
    args.extend([target, corpus.as_str()]);
    if dir.join(&seeds).is_dir() {
        args.push(seeds.as_str());
    }
    args.extend([
        "--",
        time.as_str(),
        "-rss_limit_mb=2048",
        // Under CI a fixed seed: every run mutates the same inputs, so a
        // brief run that passed once passes again; a crash it finds is a
        // regression, not luck. Manual campaigns explore with random seeds.
        if std::env::var_os("CI").is_some() {
            "-seed=1"
        } else {
            "-seed=0"
        },
        "-timeout=30",
        "-print_final_stats=1",
        prefix.as_str(),
    ]);
    eprintln!("+ (cd {}) cargo {}", dir.display(), args.join(" "));
    let out = Command::new("cargo")
        .args(&args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot start cargo fuzz: {e}"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "fuzz target {target} failed ({}); input in fuzz/{artifacts}\n{}",
            out.status,
            tail.join("\n")
        ));
    }
    let stat = |name: &str| {
        log.lines()
            .find_map(|l| l.strip_prefix(&format!("stat::{name}:")))
            .map_or("?".to_string(), |v| v.trim().to_string())
    };
    let files = std::fs::read_dir(dir.join(&corpus)).map_or(0, |d| d.count());
    Ok(format!(
        "{target}: {seconds} s, {} executions ({}/s), corpus {files} inputs",
        stat("number_of_executed_units"),
        stat("average_exec_per_sec")
    ))
}

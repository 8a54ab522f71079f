//! `cargo xtask ci`: installs what the checks need, then runs them in order.

use std::path::PathBuf;
use std::process::Command;

/// The bare-metal target the core must build for.
pub const TARGET: &str = "thumbv7em-none-eabihf";

/// Seconds each fuzz target runs in CI.
const CI_FUZZ_SECONDS: u64 = 20;

/// The workspace root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    dir.parent().map(PathBuf::from).unwrap_or(dir)
}

/// Runs a command in the workspace root, failing on a non-zero exit.
pub fn run_cmd(program: &str, args: &[&str]) -> Result<(), String> {
    crate::qemu::run_in(&root(), program, args)
}

/// Installs the Rust target for bare-metal builds when it is missing.
pub fn ensure_target() -> Result<(), String> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| format!("cannot run rustup: {e}"))?;
    if String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.trim() == TARGET)
    {
        return Ok(());
    }
    run_cmd("rustup", &["target", "add", TARGET])
}

/// Every check, in the order a failure is cheapest to find.
pub fn run() -> Result<(), String> {
    ensure_target()?;
    let before = git_status();
    run_cmd("cargo", &["fmt", "--all", "--", "--check"])?;
    run_cmd(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run_cmd(
        "cargo",
        &["build", "-p", "firmware-core", "--target", TARGET],
    )?;
    // The baseline-only build and each technique alone.
    for features in [
        "",
        "rcftl",
        "longftl",
        "dawid",
        "copyless",
        "reparo",
        "zns",
        "placement",
        "crossway",
        "deferred-erase",
    ] {
        run_cmd(
            "cargo",
            &[
                "build",
                "-p",
                "firmware-core",
                "--no-default-features",
                "--features",
                features,
                "--target",
                TARGET,
            ],
        )?;
    }
    run_cmd(
        "cargo",
        &[
            "clippy",
            "-p",
            "firmware-core",
            "--no-default-features",
            "--target",
            TARGET,
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run_cmd(
        "cargo",
        &[
            "clippy",
            "-p",
            "firmware-core",
            "--target",
            TARGET,
            "--",
            "-D",
            "warnings",
        ],
    )?;
    run_cmd(
        "cargo",
        &[
            "build",
            "-p",
            "nand-model",
            "--no-default-features",
            "--target",
            TARGET,
        ],
    )?;
    // The run-output tests render a chart to PNG with it.
    crate::qemu::ensure_apt("rsvg-convert", "librsvg2-bin")?;
    run_cmd(
        "cargo",
        &["test", "--workspace", "--release", "--no-fail-fast"],
    )?;
    // Every fuzz target briefly (sixteen targets: about six minutes of runs).
    crate::fuzz::run_for(CI_FUZZ_SECONDS, &[])?;
    crate::nbd::run()?;
    // A few power cuts under ext4 (the 200-cut run is in docs/results.md).
    crate::fs_crash::run(&["--cuts".into(), "8".into()])?;
    crate::qemu::run()?;
    // The run leaves the tree as it found it: no run leftovers, no lock
    // file rewritten.
    if let (Some(before), Some(after)) = (before, git_status()) {
        let new: Vec<&str> = after
            .lines()
            .filter(|l| !before.lines().any(|b| b == *l))
            .collect();
        if !new.is_empty() {
            return Err(format!(
                "the run changed the working tree (git status --porcelain):\n{}",
                new.join("\n")
            ));
        }
    }
    Ok(())
}

/// `git status --porcelain` of the repository, if git can tell.
fn git_status() -> Option<String> {
    let out = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

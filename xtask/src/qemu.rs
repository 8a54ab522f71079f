//! `cargo xtask qemu`: boots the bare-metal firmware (`firmware/qemu-m4`) on
//! QEMU's Cortex-M4 board twice. The clean build must exit 0 and end with
//! `N passed, 0 failed`, and its power-cut figures must show cuts, remounts
//! and nothing lost (see [`check_cuts`]), and its multi-core Reparo scenario
//! must identify exactly the failed die's LBAs and read everything back after
//! the recovery (see [`check_multicore`]); the build with feature `corrupt`
//! (one block of the medium damaged after the workload) must exit non-zero.
//!
//! Installs what is missing first: the thumbv7em target (rustup) and
//! `qemu-system-arm` (apt-get).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::ci::{self, TARGET};

/// The firmware crate, relative to the workspace root.
pub const FIRMWARE_DIR: &str = "firmware/qemu-m4";

/// Longest a firmware run may take (a clean run needs a few seconds).
const TIMEOUT: Duration = Duration::from_secs(300);

/// The QEMU command line, minus the ELF.
const QEMU: &str = "qemu-system-arm";
const QEMU_ARGS: [&str; 8] = [
    "-machine",
    "mps2-an386",
    "-cpu",
    "cortex-m4",
    "-nographic",
    "-semihosting-config",
    "enable=on,target=native",
    "-kernel",
];

/// What one firmware run did.
pub struct Boot {
    /// Exit status (`None`: killed at the timeout, or by a signal).
    pub status: Option<i32>,
    /// Everything it printed (stdout then stderr).
    pub output: String,
    /// The last `N passed, M failed` line.
    pub tally: Option<(u64, u64)>,
}

impl Boot {
    /// The value printed on a `label: N ...` line, e.g. `stack high-water: 123 bytes`.
    pub fn figure(&self, label: &str) -> Option<u64> {
        self.output.lines().find_map(|l| {
            let rest = l.trim().strip_prefix(label)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse().ok()
        })
    }
}

/// The firmware directory.
pub fn firmware_dir() -> PathBuf {
    ci::root().join(FIRMWARE_DIR)
}

/// Runs `program args` in `dir`, failing on a non-zero exit.
pub fn run_in(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("+ (cd {}) {program} {}", dir.display(), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` failed with {status}",
            args.join(" ")
        ))
    }
}

/// Whether `program` is on the PATH.
pub fn have(program: &str) -> bool {
    Command::new("which")
        .arg(program)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Installs a Debian package when `program` is missing.
pub fn ensure_apt(program: &str, package: &str) -> Result<(), String> {
    if have(program) {
        return Ok(());
    }
    eprintln!("xtask: {program} not found; installing Debian package {package}");
    let root = ci::root();
    run_in(&root, "apt-get", &["update"])?;
    run_in(&root, "apt-get", &["install", "-y", package])?;
    if have(program) {
        Ok(())
    } else {
        Err(format!(
            "{program} still missing after installing {package}"
        ))
    }
}

/// Builds the firmware in release (opt-level "s", the core at "z"; fat LTO) and returns a copy
/// of its ELF named after the variant.
pub fn build(corrupt: bool) -> Result<PathBuf, String> {
    let dir = firmware_dir();
    let target_dir = dir.join("target");
    let target_dir_s = target_dir.to_string_lossy().into_owned();
    let mut args = vec!["build", "--release", "--target-dir", &target_dir_s];
    if corrupt {
        args.extend(["--features", "corrupt"]);
    }
    run_in(&dir, "cargo", &args)?;
    let elf = target_dir.join(TARGET).join("release").join("qemu-m4");
    let name = if corrupt {
        "qemu-m4-corrupt.elf"
    } else {
        "qemu-m4.elf"
    };
    let copy = target_dir.join(name);
    std::fs::copy(&elf, &copy).map_err(|e| format!("copy {}: {e}", elf.display()))?;
    Ok(copy)
}

/// Lints and format-checks the firmware (it is outside the workspace, so the
/// workspace-wide checks do not see it).
fn lint() -> Result<(), String> {
    let dir = firmware_dir();
    let target_dir = dir.join("target");
    let target_dir_s = target_dir.to_string_lossy().into_owned();
    run_in(&dir, "cargo", &["fmt", "--", "--check"])?;
    run_in(
        &dir,
        "cargo",
        &[
            "clippy",
            "--release",
            "--all-targets",
            "--target-dir",
            &target_dir_s,
            "--",
            "-D",
            "warnings",
        ],
    )
}

/// Parses `N passed, M failed`.
fn tally(line: &str) -> Option<(u64, u64)> {
    let (p, f) = line.trim().split_once(" passed, ")?;
    let f = f.strip_suffix(" failed")?;
    Some((p.parse().ok()?, f.parse().ok()?))
}

/// Boots `elf` on QEMU, echoing its output with `label` in front of each line
/// (so the firmware's tally line is not mistaken for this tool's own).
pub fn boot(elf: &Path, label: &str) -> Result<Boot, String> {
    let elf_s = elf.to_string_lossy().into_owned();
    let mut args: Vec<&str> = QEMU_ARGS.to_vec();
    args.push(&elf_s);
    eprintln!("+ {QEMU} {}", args.join(" "));
    let mut child = Command::new(QEMU)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {QEMU}: {e}"))?;
    let (tx, rx) = mpsc::channel::<String>();
    let mut readers = Vec::new();
    let streams: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ];
    for s in streams.into_iter().flatten() {
        let tx = tx.clone();
        let label = label.to_string();
        readers.push(thread::spawn(move || {
            for line in BufReader::new(s).lines().map_while(Result::ok) {
                println!("    {label}| {line}");
                let _ = tx.send(line);
            }
        }));
    }
    drop(tx);
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s.code(),
            Ok(None) if start.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                eprintln!("xtask: {label}: killed after {}s", TIMEOUT.as_secs());
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for {QEMU}: {e}")),
        }
    };
    for r in readers {
        let _ = r.join();
    }
    let lines: Vec<String> = rx.into_iter().collect();
    let tally = lines.iter().rev().find_map(|l| tally(l));
    eprintln!(
        "xtask: {label}: exit status {} after {:.1}s",
        status.map_or("none (killed)".to_string(), |c| c.to_string()),
        start.elapsed().as_secs_f64()
    );
    Ok(Boot {
        status,
        output: lines.join("\n"),
        tally,
    })
}

/// Installs what is missing: the thumbv7em target and QEMU.
pub fn prepare() -> Result<(), String> {
    ci::ensure_target()?;
    ensure_apt(QEMU, "qemu-system-arm")
}

/// Passes a clean run only if it exited 0 with `N passed, 0 failed` (N > 0).
pub fn check_clean(b: Boot) -> Result<Boot, String> {
    match (b.status, b.tally) {
        (Some(0), Some((n, 0))) if n > 0 => Ok(b),
        (status, tally) => Err(format!(
            "clean firmware failed: exit status {status:?}, tally {tally:?} (want exit 0 and `N passed, 0 failed`)"
        )),
    }
}

/// Passes a clean run only if it printed at least one power cut, a remount
/// from flash after each plus the final one, and no acknowledged write lost
/// or invalid read after a cut. Returns (cuts, remounts).
pub fn check_cuts(b: &Boot) -> Result<(u64, u64), String> {
    let want = |label: &str| {
        b.figure(label)
            .ok_or_else(|| format!("clean firmware printed no `{label}: N` line"))
    };
    let cuts = want("power cuts")?;
    let remounts = want("remounts")?;
    let lost = want("lost acknowledged")?;
    let invalid = want("invalid reads")?;
    if cuts == 0 {
        return Err("clean firmware made no power cut".to_string());
    }
    if remounts != cuts + 1 {
        return Err(format!(
            "clean firmware remounted {remounts} times for {cuts} power cuts (want one per cut plus the final remount)"
        ));
    }
    if lost != 0 || invalid != 0 {
        return Err(format!(
            "clean firmware lost {lost} acknowledged writes and read {invalid} invalid units after power cuts"
        ));
    }
    Ok((cuts, remounts))
}

/// Parses `multicore: identified N of M ...` into (N, M).
fn identified(b: &Boot) -> Option<(u64, u64)> {
    b.output.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("multicore: identified ")?;
        let mut w = rest.split_whitespace();
        let n = w.next()?.parse().ok()?;
        if w.next()? != "of" {
            return None;
        }
        let m = w.next()?.parse().ok()?;
        Some((n, m))
    })
}

/// Passes a clean run only if its multi-core scenario identified every LBA
/// of the failed die and no other (`multicore: identified N of N`, N > 0,
/// nothing missed or extra), and no read mismatched the oracle before the
/// die failed or after the recovery. Returns N.
pub fn check_multicore(b: &Boot) -> Result<u64, String> {
    let want = |label: &str| {
        b.figure(label)
            .ok_or_else(|| format!("clean firmware printed no `{label}: N` line"))
    };
    let (n, truth) = identified(b).ok_or_else(|| {
        "clean firmware printed no `multicore: identified N of M` line".to_string()
    })?;
    if truth == 0 || n != truth {
        return Err(format!(
            "multicore scenario identified {n} of {truth} LBAs of the failed die (want all, and some)"
        ));
    }
    let line = b
        .output
        .lines()
        .find(|l| l.trim().starts_with("multicore: identified "))
        .unwrap_or_default();
    if !line.contains("(0 missed, 0 extra)") {
        return Err(format!("multicore identification inexact: {line}"));
    }
    for label in [
        "multicore mismatches before",
        "multicore mismatches after",
        "multicore audits failed",
    ] {
        let v = want(label)?;
        if v != 0 {
            return Err(format!("clean firmware: {label}: {v} (want 0)"));
        }
    }
    Ok(n)
}

/// `cargo xtask qemu`.
pub fn run() -> Result<(), String> {
    prepare()?;
    let elf = build(false)?;
    let clean = check_clean(boot(&elf, "m4")?)?;
    let (cuts, remounts) = check_cuts(&clean)?;
    let identified = check_multicore(&clean)?;
    let (checks, _) = clean.tally.unwrap_or_default();
    lint()?;
    let elf = build(true)?;
    let bad = boot(&elf, "m4-corrupt")?;
    let failed = bad.tally.map_or(0, |(_, f)| f);
    match bad.status {
        Some(0) => {
            return Err("corrupted firmware exited 0: a damaged block went unnoticed".to_string())
        }
        None => return Err("corrupted firmware did not exit (timeout or signal)".to_string()),
        Some(_) if failed == 0 => {
            return Err(
                "corrupted firmware exited non-zero but reported no failed check".to_string(),
            )
        }
        Some(_) => {}
    }
    eprintln!(
        "xtask qemu: OK. Clean firmware: all {checks} checks good through {cuts} power cuts \
         and {remounts} remounts from flash, nothing acknowledged lost, multi-core scenario \
         identified all {identified} LBAs of the failed die and recovered them, exit 0. \
         Corrupted firmware: {failed} checks caught the damage, exit {:?} as required.",
        bad.status.unwrap_or_default()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot(out: &str) -> Boot {
        Boot {
            status: Some(0),
            output: out.to_string(),
            tally: None,
        }
    }

    const GOOD: &str = "multicore: identified 396 of 396 (0 missed, 0 extra), 13 list-page reads, 3 blocks from RAM\n\
                        multicore mismatches before: 0\n\
                        multicore mismatches after: 0\n\
                        multicore audits failed: 0";

    #[test]
    fn multicore_figures_pass_only_when_exact() {
        assert_eq!(check_multicore(&boot(GOOD)), Ok(396));
        let missed = GOOD.replace(
            "identified 396 of 396 (0 missed",
            "identified 395 of 396 (1 missed",
        );
        assert!(check_multicore(&boot(&missed)).is_err());
        let after = GOOD.replace("after: 0", "after: 1");
        assert!(check_multicore(&boot(&after)).is_err());
        let none = GOOD.replace("396 of 396", "0 of 0");
        assert!(check_multicore(&boot(&none)).is_err());
        assert!(check_multicore(&boot("")).is_err());
    }
}

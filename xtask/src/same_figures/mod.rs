//! `cargo xtask same-figures BASE [--speed] [--only NAME]...`: the identity
//! check of a restructuring. Builds the release `ftl` of commit `BASE` and
//! of the working tree, runs every command of [`checks::CHECKS`] with both
//! and compares every simulated figure of their `--json` reports exactly
//! (host-dependent keys aside: wall time, rates per wall second, RSS).
//! Prints one line per command, `same` or `DIFFERENT` followed by each
//! differing key with both values; fails if any command differs. Keys only
//! the current report has are listed as additions, not differences: every
//! figure the base reported must be unchanged.
//!
//! With `--speed`, the mqsim-gc16 run is also timed three times with each
//! binary, alternating, and the median requests per wall second of each
//! and their ratio are printed.

mod build;
mod checks;
mod compare;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use checks::{Check, CHECKS, SPEED_CHECK};

/// Timed runs per binary with `--speed`.
const SPEED_RUNS: usize = 3;

/// Differing keys printed per command before the rest are counted.
const MAX_SHOWN: usize = 40;

/// Parsed command line.
struct Args {
    base: String,
    speed: bool,
    only: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut base = None;
    let mut speed = false;
    let mut only = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--speed" => speed = true,
            "--only" => only.push(it.next().ok_or("--only needs a check name")?.to_string()),
            s if s.starts_with('-') => return Err(format!("unknown flag `{s}`")),
            s if base.is_none() => base = Some(s.to_string()),
            s => return Err(format!("unexpected argument `{s}`")),
        }
    }
    let known: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
    if let Some(o) = only.iter().find(|o| !known.contains(&o.as_str())) {
        return Err(format!(
            "--only {o}: unknown check; known: {}",
            known.join(", ")
        ));
    }
    Ok(Args {
        base: base.ok_or("usage: cargo xtask same-figures BASE [--speed] [--only NAME]...")?,
        speed,
        only,
    })
}

/// One run of `ftl`: its exit status and its JSON report.
struct Outcome {
    status: Option<i32>,
    report: Result<Value, String>,
    seconds: f64,
}

/// Runs `bin` with the check's arguments in `work` (its own scratch
/// directory, so nothing lands in the working tree).
fn run_one(bin: &Path, check: &Check, work: &Path) -> Result<Outcome, String> {
    let mut args: Vec<String> = check.args.iter().map(|s| s.to_string()).collect();
    if check.out {
        args.push("--out".into());
        args.push(work.join("out").to_string_lossy().into_owned());
    }
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let t = Instant::now();
    let out = Command::new(bin)
        .args(&args)
        .arg("--quiet")
        .current_dir(work)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let seconds = t.elapsed().as_secs_f64();
    let report = serde_json::from_slice::<Value>(&out.stdout).map_err(|e| {
        format!(
            "no JSON report ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    });
    Ok(Outcome {
        status: out.status.code(),
        report,
        seconds,
    })
}

/// Compares one check's two outcomes: the lines to print after its name,
/// and the keys only the current report has (additions, not differences:
/// a report may grow keys while every figure it had stays the same).
fn compare_outcomes(base: &Outcome, current: &Outcome) -> (Vec<String>, Vec<String>) {
    let mut lines = Vec::new();
    let mut added = Vec::new();
    if base.status != current.status {
        lines.push(format!(
            "exit status: base {:?}, current {:?}",
            base.status, current.status
        ));
    }
    match (&base.report, &current.report) {
        (Ok(b), Ok(c)) => {
            let (new_keys, d): (Vec<_>, Vec<_>) = compare::differences(b, c)
                .into_iter()
                .partition(|x| x.base.is_none());
            added = new_keys.into_iter().map(|x| x.key).collect();
            let show = |v: &Option<Value>| v.as_ref().map_or("(missing)".into(), Value::to_string);
            for x in d.iter().take(MAX_SHOWN) {
                lines.push(format!(
                    "{}: base {}, current {}",
                    x.key,
                    show(&x.base),
                    show(&x.current)
                ));
            }
            if d.len() > MAX_SHOWN {
                lines.push(format!("... and {} more keys", d.len() - MAX_SHOWN));
            }
        }
        (b, c) => {
            for (side, r) in [("base", b), ("current", c)] {
                if let Err(e) = r {
                    lines.push(format!("{side}: {e}"));
                }
            }
        }
    }
    (lines, added)
}

/// Median of a non-empty list.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Requests per wall second of one report (`run.host_requests_per_wall_second`).
fn rate(o: &Outcome) -> Result<f64, String> {
    o.report
        .as_ref()
        .map_err(Clone::clone)?
        .pointer("/run/host_requests_per_wall_second")
        .and_then(Value::as_f64)
        .ok_or_else(|| "report without run.host_requests_per_wall_second".to_string())
}

/// `--speed`: the mqsim-gc16 run [`SPEED_RUNS`] times per binary,
/// alternating base and current.
fn speed(bins: [&Path; 2], work: &Path) -> Result<(), String> {
    let check = CHECKS
        .iter()
        .find(|c| c.name == SPEED_CHECK)
        .ok_or("no speed check")?;
    let mut rates = [Vec::new(), Vec::new()];
    for i in 0..SPEED_RUNS {
        for (side, bin) in bins.iter().enumerate() {
            let o = run_one(bin, check, &work.join(format!("speed-{side}")))?;
            let r = rate(&o)?;
            eprintln!(
                "same-figures: speed run {} {}: {r:.0} requests/s ({:.1} s)",
                i + 1,
                ["base", "current"][side],
                o.seconds
            );
            if let Some(v) = rates.get_mut(side) {
                v.push(r);
            }
        }
    }
    let [b, c] = rates.map(median);
    println!(
        "speed {SPEED_CHECK}: median of {SPEED_RUNS} requests per wall second: base {b:.0}, current {c:.0}, current/base {:.3}",
        if b > 0.0 { c / b } else { 0.0 }
    );
    Ok(())
}

/// A scratch directory under the system's temporary directory.
fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("ftl-same-figures-runs-{}", std::process::id()))
}

/// `cargo xtask same-figures`.
pub fn run(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    let sha = build::resolve(&a.base)?;
    let base = build::base_binary(&sha)?;
    let current = build::current_binary()?;
    let work = scratch();
    let selected: Vec<&Check> = CHECKS
        .iter()
        .filter(|c| a.only.is_empty() || a.only.iter().any(|o| o == c.name))
        .collect();
    println!("same-figures: base {sha} against the working tree");
    let mut different = 0usize;
    for check in &selected {
        let b = run_one(&base, check, &work.join(check.name).join("base"))?;
        let c = run_one(&current, check, &work.join(check.name).join("current"))?;
        let (lines, added) = compare_outcomes(&b, &c);
        let verdict = if lines.is_empty() {
            "same"
        } else {
            "DIFFERENT"
        };
        println!(
            "{verdict:<9} {:<22} ({:.1} s / {:.1} s)  ftl {}",
            check.name,
            b.seconds,
            c.seconds,
            check.args.join(" ")
        );
        for l in &lines {
            println!("          {l}");
        }
        if !added.is_empty() {
            println!(
                "          {} keys only in the current report: {}",
                added.len(),
                added.join(", ")
            );
        }
        if !lines.is_empty() {
            different += 1;
        }
    }
    if a.speed {
        speed([&base, &current], &work)?;
    }
    let _ = std::fs::remove_dir_all(&work);
    if different > 0 {
        return Err(format!(
            "{different} of {} commands report different figures",
            selected.len()
        ));
    }
    Ok(())
}

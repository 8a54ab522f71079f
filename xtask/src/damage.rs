//! `cargo xtask damage [--count N] [--seed S] [--data-only]`: random damage
//! to image files (bit flips, zeroed ranges, truncation, a block copied over
//! another, a stale copy of the file) after clean stops and kills, every
//! unit read back; runs the `image_damage` example of `sim-harness` (the
//! library `ftl serve --image` uses) and fails if a unit is served wrong.

use std::process::Command;

/// Runs the harness with `args` passed through.
pub fn run(args: &[String]) -> Result<(), String> {
    let status = Command::new(env!("CARGO"))
        .args([
            "run",
            "--release",
            "-q",
            "-p",
            "sim-harness",
            "--example",
            "image_damage",
            "--",
        ])
        .args(args)
        .status()
        .map_err(|e| format!("cargo run: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("damage harness: {status}"))
    }
}

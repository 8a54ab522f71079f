//! Builds the `ftl` binary of a commit in a temporary git worktree, with a
//! target directory of its own kept across runs, and of the working tree.

use std::fs;
use std::path::{Path, PathBuf};

use crate::ci;

/// Runs `git args` in the workspace root and returns its trimmed stdout.
fn git(args: &[&str]) -> Result<String, String> {
    crate::budget::output_of("git", args).map(|s| s.trim().to_string())
}

/// The full commit id `rev` names.
pub fn resolve(rev: &str) -> Result<String, String> {
    git(&["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
}

/// `target/same-figures/<sha>`: the base's target directory and binary.
fn cache_dir(sha: &str) -> PathBuf {
    ci::root().join("target").join("same-figures").join(sha)
}

/// The release `ftl` of commit `sha`, built once and kept in
/// `target/same-figures/<sha>/ftl`. The sources are checked out in a
/// temporary detached worktree (removed after the build); the target
/// directory stays, so a rebuild after `cargo clean -p` is incremental.
pub fn base_binary(sha: &str) -> Result<PathBuf, String> {
    let dir = cache_dir(sha);
    let bin = dir.join("ftl");
    if bin.is_file() {
        eprintln!("same-figures: base binary {} (cached)", bin.display());
        return Ok(bin);
    }
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tree = std::env::temp_dir().join(format!("ftl-same-figures-{}", std::process::id()));
    let tree_s = tree.to_string_lossy().into_owned();
    git(&["worktree", "add", "--detach", "--force", &tree_s, sha])?;
    let built = build_in(&tree, &dir.join("target"));
    // The worktree goes whether or not the build worked.
    let removed = git(&["worktree", "remove", "--force", &tree_s]);
    let out = built?;
    removed?;
    fs::copy(&out, &bin).map_err(|e| format!("{} -> {}: {e}", out.display(), bin.display()))?;
    Ok(bin)
}

/// `cargo build --release -p ftl-cli` in `src` with `target` as the target
/// directory; the path of the `ftl` it built.
fn build_in(src: &Path, target: &Path) -> Result<PathBuf, String> {
    let target_s = target.to_string_lossy().into_owned();
    crate::qemu::run_in(
        src,
        "cargo",
        &[
            "build",
            "--release",
            "--quiet",
            "-p",
            "ftl-cli",
            "--target-dir",
            &target_s,
        ],
    )?;
    Ok(target.join("release").join("ftl"))
}

/// The release `ftl` of the working tree (`target/release/ftl`).
pub fn current_binary() -> Result<PathBuf, String> {
    let root = ci::root();
    build_in(&root, &root.join("target"))
}

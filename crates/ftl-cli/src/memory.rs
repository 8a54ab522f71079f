//! `ftl memory`: what the FTL's copyback-safety state costs on a geometry,
//! without running anything, so drives too large to simulate (16 TB class)
//! can be costed too.

use clap::Args;
use serde_json::{json, Value};

use crate::common::CommonOpts;
use crate::CliError;

/// Options of `ftl memory` (preset, file and `--set`s as for a run).
#[derive(Args, Debug)]
pub struct MemoryArgs {
    #[command(flatten)]
    pub common: CommonOpts,
}

/// Runs `ftl memory`.
pub fn run(a: MemoryArgs) -> Result<(), CliError> {
    let cfg = a.common.load_unchecked()?;
    cfg.validate_shape()
        .map_err(|e| CliError::Input(e.to_string()))?;
    let by_mode = cfg
        .epm_bytes_by_mode()
        .map_err(|e| CliError::Input(e.to_string()))?;
    let g = &cfg.geometry;
    let capacity = u64::from(g.channels)
        * u64::from(g.dies_per_channel)
        * u64::from(g.planes_per_die)
        * u64::from(g.blocks_per_plane)
        * u64::from(g.pages_per_block)
        * u64::from(g.page_bytes);
    let configured = by_mode
        .iter()
        .find(|(name, _)| Some(*name) == mode_name(&cfg))
        .map_or(0, |&(_, b)| b);
    let modes: serde_json::Map<String, Value> = by_mode
        .iter()
        .map(|&(name, b)| (name.to_string(), json!(b)))
        .collect();
    let v = json!({
        "geometry": { "raw_bytes": capacity },
        "memory": { "epm_bytes": configured, "epm_bytes_by_mode": modes },
    });
    if a.common.json {
        return a.common.print(&v, String::new);
    }
    println!("raw capacity {:.2} TB", capacity as f64 / 1e12);
    for (name, b) in &by_mode {
        println!(
            "{name:<16} {:>16} bytes  {:>10.1} MiB",
            b,
            *b as f64 / (1u64 << 20) as f64
        );
    }
    Ok(())
}

/// The `copyback.mode` value of `cfg` as the by-mode list names it.
fn mode_name(cfg: &sim_harness::config::SimConfig) -> Option<&'static str> {
    use sim_harness::config::ModeKey;
    match cfg.copyback.mode {
        ModeKey::OffChip => Some("off-chip"),
        ModeKey::Fastgc => Some("fastgc"),
        ModeKey::RcftlPerPage => Some("rcftl-per-page"),
        ModeKey::Rcftl => Some("rcftl"),
        ModeKey::Unchecked => None,
    }
}

//! `ftl`: replay block traces and synthetic workloads on a simulated SSD
//! running the firmware-core FTL, and report what happened.

mod artifacts;
mod chart;
mod common;
mod crash;
mod crash_random;
mod experiment;
mod flows;
mod lifetime;
mod mem_limit;
mod memory;
#[cfg(test)]
mod preset_text;
mod progress;
mod raid;
mod replay;
mod replay_feed;
mod replay_zones;
mod serve;
mod sweep;
mod synth;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Replays block I/O traces and synthetic workloads on a simulated SSD.
#[derive(Parser, Debug)]
#[command(name = "ftl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Replay one or more traces (the bundled trace when none is given).
    Replay(replay::ReplayArgs),
    /// Run a synthetic workload.
    Synth(synth::SynthArgs),
    /// Run a synthetic workload until the drive wears out (bad blocks beyond
    /// 2.5% or no free-block reserve) and report TBW, final WAF and IOPS.
    Lifetime(synth::SynthArgs),
    /// Cut the power at random points of a mixed workload (in the middle of
    /// programs, erases, GC, translation-page writes and mounts), remount
    /// after each cut and check every acknowledged write and trim.
    Crash(crash::CrashArgs),
    /// Serve the simulated drive over the network (NBD).
    Serve(serve::ServeArgs),
    /// List the built-in configurations.
    Presets(common::PresetsArgs),
    /// List the workload profiles `--profile` accepts.
    Profiles(common::PresetsArgs),
    /// Run a registered experiment (a grid of synthetic runs) and write its
    /// table, reports and charts.
    Experiment(experiment::ExperimentArgs),
    /// Run the cross product of `--vary` values, workloads and seeds and
    /// write one CSV row per cell; or emit one command per cell and merge.
    Sweep(sweep::SweepArgs),
    /// Build a RAID-5 group of multi-core drives, fail a die, recover it
    /// (`reparo.mode`) and verify every unit against the oracle.
    Raid(raid::RaidArgs),
    /// Cost the copyback-safety state (`memory.epm_bytes`) of a geometry
    /// under every copyback mode, without running.
    Memory(memory::MemoryArgs),
}

/// A failure, with the exit status it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad input (config, trace, arguments): exit status 2.
    Input(String),
    /// The simulation failed: exit status 1.
    Run(String),
}

impl From<firmware_core::Error> for CliError {
    fn from(e: firmware_core::Error) -> Self {
        CliError::Run(format!("simulation failed: {e}"))
    }
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    if cli.cmd.is_none() {
        // Bare `ftl` (what `cargo run --release` runs): the main job, the
        // bundled trace on a drive in steady state, report and charts in
        // the temporary directory (never in the working tree).
        let out = std::env::temp_dir().join("ftl-main-job");
        cli = Cli::parse_from([
            "ftl".as_ref(),
            "replay".as_ref(),
            "--precondition".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
    }
    let result = match cli.cmd {
        None => Err(CliError::Input("no command".into())),
        Some(Cmd::Replay(a)) => replay::run(a),
        Some(Cmd::Synth(a)) => synth::run(a),
        Some(Cmd::Lifetime(a)) => lifetime::run(a),
        Some(Cmd::Serve(a)) => serve::run(a),
        Some(Cmd::Crash(a)) => crash::run(a),
        Some(Cmd::Presets(a)) => common::list_presets(&a),
        Some(Cmd::Profiles(a)) => synth::list_profiles(&a),
        Some(Cmd::Experiment(a)) => experiment::run(a),
        Some(Cmd::Sweep(a)) => sweep::run(a),
        Some(Cmd::Memory(a)) => memory::run(a),
        Some(Cmd::Raid(a)) => raid::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Run(m)) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

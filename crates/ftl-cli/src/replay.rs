//! `ftl replay`: trace replay.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde_json::json;
use sim_harness::trace::{
    self, CapacityPolicy, DevicePolicy, TimeUnit, TraceFormat, TraceOp, TraceOptions,
};
use sim_harness::workload::{HostOp, HostRequest, VecSource};

use crate::common::CommonOpts;
use crate::CliError;

/// The bundled default trace (see `crates/ftl-cli/traces/README.md`).
const BUNDLED: &str = include_str!("../traces/fin1-5k.ascii");
const BUNDLED_NAME: &str = "<bundled fin1-5k.ascii>";

/// Trace format choice on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Detect from the first lines.
    #[default]
    Auto,
    /// DiskSim / MQSim / SSDsim ASCII.
    Ascii,
    /// MSR Cambridge CSV.
    Msr,
    /// blkparse text (D events).
    Blkparse,
    /// CloudPhysics vSCSI CSV.
    Vscsi,
    /// This project's own format, `time op offset len [src]`, which can
    /// carry copies (`sim_harness::trace::native`).
    Ftl,
}

/// What to do with addresses beyond the simulated capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CapacityArg {
    /// Fold addresses modulo the capacity (unit by unit; requests are never split).
    #[default]
    Wrap,
    /// Shrink the trace's address range linearly onto the capacity.
    Scale,
    /// Refuse the trace, naming the first request beyond the capacity.
    Reject,
}

/// Options of `ftl replay`.
#[derive(Args, Debug, Clone, Default)]
pub struct ReplayArgs {
    /// Trace files; none replays the bundled excerpt of the Financial1 trace.
    pub traces: Vec<PathBuf>,
    /// Trace format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Time unit of ASCII traces (ns for MQSim/SSDsim, ms for DiskSim).
    #[arg(long, default_value = "ns")]
    pub time_unit: String,
    /// Keep the trace's own time origin instead of starting at the first request.
    #[arg(long)]
    pub no_rebase: bool,
    /// Replay speed factor (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Device policy: `merge` (each device its own region) or a device number to keep.
    #[arg(long, default_value = "merge")]
    pub device: String,
    /// Addresses beyond capacity.
    #[arg(long, value_enum, default_value_t = CapacityArg::Wrap)]
    pub capacity_policy: CapacityArg,
    /// Queue depth (overrides host.queue_depth).
    #[arg(long)]
    pub qd: Option<u32>,
    /// Read every logical unit back at the end and check it.
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub common: CommonOpts,
}

fn to_format(f: FormatArg) -> Option<TraceFormat> {
    match f {
        FormatArg::Auto => None,
        FormatArg::Ascii => Some(TraceFormat::Ascii),
        FormatArg::Msr => Some(TraceFormat::Msr),
        FormatArg::Blkparse => Some(TraceFormat::Blkparse),
        FormatArg::Vscsi => Some(TraceFormat::Vscsi),
        FormatArg::Ftl => Some(TraceFormat::Ftl),
    }
}

/// Converts byte requests to mapping-unit requests; wraps units past the end
/// when the policy is `wrap`. Returns the requests and how many were wrapped.
fn to_units(
    reqs: &[trace::TraceRequest],
    unit: u64,
    logical: u32,
    wrap: bool,
) -> (Vec<HostRequest>, u64) {
    let mut out = Vec::with_capacity(reqs.len());
    let mut wrapped = 0;
    for r in reqs {
        let first = r.offset_bytes / unit;
        let last = (r.end_bytes() - 1) / unit;
        let units = (last - first + 1).min(u64::from(logical)) as u32;
        let lpn = if wrap {
            if first + u64::from(units) > u64::from(logical) {
                wrapped += 1;
            }
            (first % u64::from(logical)) as u32
        } else {
            first as u32
        };
        let op = match r.op {
            TraceOp::Read => HostOp::Read,
            TraceOp::Write => HostOp::Write,
            TraceOp::Trim => HostOp::Trim,
            // As many units from the unit holding the source offset.
            TraceOp::Copy { src_bytes } => {
                let s = src_bytes / unit;
                HostOp::Copy {
                    src: if wrap {
                        (s % u64::from(logical)) as u32
                    } else {
                        s as u32
                    },
                }
            }
        };
        out.push(HostRequest {
            time_ns: r.time_ns,
            op,
            lpn,
            units,
            idle_ns: 0,
        });
    }
    (out, wrapped)
}

/// Runs `ftl replay`.
pub fn run(a: ReplayArgs) -> Result<(), CliError> {
    let (cfg, plan) = a.common.plan(a.qd)?;
    let unit = u64::from(plan.core.geometry.unit_bytes());
    let logical = plan.core.logical_units;
    let capacity = u64::from(logical) * unit;
    let time_unit: TimeUnit = a.time_unit.parse().map_err(CliError::Input)?;
    let device_policy = if a.device == "merge" {
        DevicePolicy::Merge
    } else {
        DevicePolicy::Select(a.device.parse().map_err(|_| {
            CliError::Input(format!(
                "--device: `{}` is not `merge` or a number",
                a.device
            ))
        })?)
    };
    if !(a.speed.is_finite() && a.speed > 0.0) {
        return Err(CliError::Input(format!(
            "--speed: {} must be a positive number",
            a.speed
        )));
    }
    let wrap = a.capacity_policy == CapacityArg::Wrap;
    let opts = TraceOptions {
        format: to_format(a.format),
        time_unit,
        rebase_time: !a.no_rebase,
        speed: a.speed,
        device_policy,
        capacity_policy: match a.capacity_policy {
            CapacityArg::Wrap | CapacityArg::Reject => CapacityPolicy::Reject,
            CapacityArg::Scale => CapacityPolicy::Scale,
        },
    };
    // Wrapping happens unit by unit below, so the trace loader only checks bounds otherwise.
    let load_capacity = if wrap { u64::MAX / 2 } else { capacity };
    let inputs: Vec<(String, trace::Trace)> = if a.traces.is_empty() {
        let t = trace::parse_bytes(BUNDLED_NAME, BUNDLED.as_bytes(), &opts, load_capacity)
            .map_err(|e| CliError::Input(e.to_string()))?;
        vec![(BUNDLED_NAME.to_string(), t)]
    } else {
        let mut v = Vec::new();
        for p in &a.traces {
            let t =
                trace::load(p, &opts, load_capacity).map_err(|e| CliError::Input(e.to_string()))?;
            v.push((p.display().to_string(), t));
        }
        v
    };
    let mut reports = Vec::new();
    for (name, t) in inputs {
        let (reqs, wrapped) = to_units(&t.requests, unit, logical, wrap);
        let n = reqs.len() as u64;
        let mut src = VecSource::new(reqs);
        let out = a.common.simulate(&plan, &mut src, None, a.verify)?;
        let s = &t.stats;
        let skipped: serde_json::Map<String, serde_json::Value> = s
            .skipped
            .iter()
            .map(|(k, v)| (format!("{k:?}"), json!(v)))
            .collect();
        let input = json!({
                "file": name,
                "format": s.format.name(),
                "lines": s.lines,
                "records": s.records,
                "requests": s.requests,
                "skipped": skipped,
                "devices": s.devices.len(),
                "device_policy": a.device,
                "capacity_policy": format!("{:?}", a.capacity_policy).to_lowercase(),
                "capacity_bytes": capacity,
                "max_end_bytes": s.max_end_bytes,
                "wrapped": wrapped,
                "scaled": s.scaled,
                "time_span_s": s.time_span_ns as f64 / 1e9,
                "time_regressions": s.time_regressions,
        });
        let v = a.common.report(&cfg, &out, "trace", input);
        let header = format!(
            "replay of {name} ({} format, {} requests, {} wrapped, {} lines skipped) on preset {}\n",
            s.format.name(),
            n,
            wrapped,
            s.skipped_total(),
            a.common.preset
        );
        reports.push((v, header, out));
    }
    if reports.len() == 1 {
        let (v, h, o) = &reports[0];
        return a.common.emit(v, h, o);
    }
    // Several traces: one JSON object holding one report per trace.
    let all = json!({ "runs": reports.iter().map(|(v, _, _)| v.clone()).collect::<Vec<_>>() });
    a.common.write_out(&all, None)?;
    // Each run's time series and charts go into `DIR/run-<index>/`.
    if let Some(dir) = &a.common.out {
        for (i, (v, _, o)) in reports.iter().enumerate() {
            crate::common::write_dir(&dir.join(format!("run-{i}")), v, Some(o))?;
        }
    }
    if a.common.json {
        println!("{all}");
    } else {
        for (v, h, _) in &reports {
            print!("{h}{}", sim_harness::report::text_summary(v));
        }
    }
    Ok(())
}

//! `ftl replay`: trace replay, streamed.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::{json, Value};
use sim_harness::trace::{
    self, CapacityPolicy, DevicePolicy, Prepared, TimeUnit, TraceFormat, TraceInput, TraceOptions,
    TraceStats,
};

use crate::common::{CommonOpts, PreconditionMode, Preconditioning};
use crate::replay_feed::StreamSource;
use crate::replay_zones;
use crate::CliError;
use sim_harness::config::InterfaceKey;

/// The bundled default trace (see `crates/ftl-cli/traces/README.md`).
const BUNDLED: &str = include_str!("../traces/fin1-5k.ascii");
const BUNDLED_NAME: &str = "<bundled fin1-5k.ascii>";

/// `--format`: a format, or `None` for `auto` (detect from the first lines).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FormatChoice(pub Option<TraceFormat>);

/// Parses `--format`: `auto` or a format name of `TraceFormat::ALL`.
fn parse_format(s: &str) -> Result<FormatChoice, String> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(FormatChoice(None));
    }
    s.parse().map(|f| FormatChoice(Some(f)))
}

/// What to do with addresses beyond the simulated capacity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CapacityArg {
    /// Fold offsets modulo the capacity; a request crossing the end is split there.
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
    /// Trace files (plain, .gz, .zst or .xz); none replays the bundled
    /// excerpt of the Financial1 trace.
    pub traces: Vec<PathBuf>,
    /// Trace format: auto (detect), ascii, msr, blkparse, vscsi, ftl,
    /// alibaba, tencent, systor, fiu, spc or fio (docs/traces.md).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: FormatChoice,
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
    /// Join the files into one trace in timestamp order (hourly or per-LUN
    /// files of one trace) instead of replaying each separately.
    #[arg(long, conflicts_with = "flows")]
    pub concat: bool,
    /// Only read and check the trace (the counted first pass), print its
    /// statistics and the parse rate in lines per second; nothing is simulated.
    #[arg(long)]
    pub parse_only: bool,
    /// Bring the drive to steady state first: fill it, overwrite it twice
    /// at random in 4 KiB units, then measure the trace alone.
    /// `--precondition=fast` builds that state directly instead.
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1,
          default_missing_value = "full", require_equals = true)]
    pub precondition: Option<PreconditionMode>,
    /// FIU traces: a write repeating content still stored elsewhere becomes a copy.
    #[arg(long)]
    pub dedup_copies: bool,
    /// Replay the files concurrently, each as its own flow with its own
    /// queue, queue depth and address range.
    #[arg(long)]
    pub flows: bool,
    /// A flow `name=N,files=F[+F...],weight=W,qd=Q` (repeatable; implies --flows).
    #[arg(long = "flow", value_name = "SPEC")]
    pub flow: Vec<String>,
    #[command(flatten)]
    pub common: CommonOpts,
}

/// Request rates (per simulated second) outside which a trace's time unit
/// is probably wrong.
const PLAUSIBLE_RATE: (f64, f64) = (0.01, 5e7);

/// The options every input of this replay is read with.
pub fn trace_options(a: &ReplayArgs) -> Result<TraceOptions, CliError> {
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
    Ok(TraceOptions {
        format: a.format.0,
        time_unit,
        rebase_time: !a.no_rebase,
        speed: a.speed,
        device_policy,
        capacity_policy: match a.capacity_policy {
            CapacityArg::Wrap => CapacityPolicy::Wrap,
            CapacityArg::Reject => CapacityPolicy::Reject,
            CapacityArg::Scale => CapacityPolicy::Scale,
        },
        dedup_copies: a.dedup_copies,
        dedup_max_bytes: None,
    })
}

/// The inputs of the replay, grouped into runs: one group per file, or
/// all files in one group with `--concat`.
fn groups(a: &ReplayArgs) -> Vec<Vec<TraceInput<'static>>> {
    if a.traces.is_empty() {
        return vec![vec![TraceInput::Bytes {
            name: BUNDLED_NAME.to_string(),
            data: BUNDLED.as_bytes(),
        }]];
    }
    let inputs = a.traces.iter().map(|p| TraceInput::Path(p.clone()));
    if a.concat {
        vec![inputs.collect()]
    } else {
        inputs.map(|i| vec![i]).collect()
    }
}

/// Warnings about a trace whose timing looks implausible (a wrong
/// `--time-unit`, usually).
pub fn warnings(s: &TraceStats, a: &ReplayArgs) -> Vec<String> {
    let mut w = Vec::new();
    let secs = s.time_span_ns as f64 / 1e9;
    if s.records >= 100 && secs > 0.0 {
        let rate = s.records as f64 / secs;
        if rate < PLAUSIBLE_RATE.0 || rate > PLAUSIBLE_RATE.1 {
            w.push(format!(
                "the trace implies {rate:.3e} requests per second over {secs:.3e} simulated seconds, \
                 which is implausible for a block trace; check --time-unit (now {}) or --speed",
                a.time_unit
            ));
        }
    }
    w
}

/// The `trace` section of the report.
pub fn trace_json(names: &[String], s: &TraceStats, a: &ReplayArgs, capacity: u64) -> Value {
    let skipped: serde_json::Map<String, Value> = s
        .skipped
        .iter()
        .map(|(k, v)| (format!("{k:?}"), json!(v)))
        .collect();
    json!({
        "file": names.join(" + "),
        "files": names,
        "format": s.format.name(),
        "lines": s.lines,
        "records": s.records,
        "requests": s.requests,
        "reads": s.reads,
        "writes": s.writes,
        "trims": s.trims,
        "copies": s.copies,
        "placed_writes": s.placed_writes,
        "appends": s.appends,
        "zone_sends": s.zone_sends,
        "read_bytes": s.read_bytes,
        "write_bytes": s.write_bytes,
        "trim_bytes": s.trim_bytes,
        "copy_bytes": s.copy_bytes,
        "skipped": skipped,
        "devices": s.devices.len(),
        "device_policy": a.device,
        "capacity_policy": format!("{:?}", a.capacity_policy).to_lowercase(),
        "capacity_bytes": capacity,
        "max_end_bytes": s.max_end_bytes,
        "wrapped": s.wrapped,
        "split": s.split,
        "scaled": s.scaled,
        "time_span_s": s.time_span_ns as f64 / 1e9,
        "time_regressions": s.time_regressions,
        "warnings": warnings(s, a),
    })
}

/// Runs `ftl replay`.
pub fn run(a: ReplayArgs) -> Result<(), CliError> {
    if a.flows || !a.flow.is_empty() {
        if a.parse_only {
            return Err(CliError::Input("--parse-only: not with --flows".into()));
        }
        return crate::flows::run(a);
    }
    // A zoned namespace replays through the zone front end, from a fresh
    // drive (preconditioning writes outside the zones' order).
    let (cfg, plan) = if a.precondition.is_none() {
        a.common.plan_any_interface(a.qd)?
    } else {
        a.common.plan(a.qd)?
    };
    let zoned = cfg.host.interface == InterfaceKey::Zns;
    let unit = u64::from(plan.core.geometry.unit_bytes());
    let capacity = if zoned {
        let geo = cfg
            .zone_geometry()
            .map_err(|e| CliError::Input(e.to_string()))?;
        geo.data_blocks() * unit
    } else {
        u64::from(plan.core.logical_units) * unit
    };
    let mut opts = trace_options(&a)?;
    // The counted first pass of every run, before anything is simulated, so
    // a malformed line anywhere is reported first.
    let mut prepared = Vec::new();
    for g in groups(&a) {
        let t0 = Instant::now();
        // Each run reads its trace while it simulates: both must fit, and
        // what is left bounds the deduplication tables.
        let inputs: Vec<&TraceInput<'_>> = g.iter().collect();
        opts.dedup_max_bytes = a.common.check_reading(&cfg, &plan, &inputs)?;
        let p = trace::prepare(&g, &opts, capacity).map_err(|e| CliError::Input(e.to_string()))?;
        replay_zones::check_commands(&p.stats, &cfg)?;
        prepared.push((p, t0.elapsed().as_secs_f64()));
    }
    if a.parse_only {
        return parse_only(&a, &prepared, capacity);
    }
    let mut reports = Vec::new();
    for (p, _) in prepared {
        let names = p.names();
        for w in warnings(&p.stats, &a) {
            if !a.common.quiet {
                eprintln!("warning: {w}");
            }
        }
        let (out, stats, zones) = if zoned {
            let (o, s, z) = replay_zones::simulate(&a.common, &cfg, &plan, p, a.verify)?;
            (o, s, Some(z))
        } else {
            let mut src = StreamSource::spawn(p, unit, 0);
            let precondition = Preconditioning::whole_drive(a.precondition);
            let out = a.common.simulate(&plan, &mut src, precondition, a.verify);
            let stats = src.finish().map_err(CliError::Input)?;
            (out?, stats, None)
        };
        let mut input = trace_json(&names, &stats, &a, capacity);
        input["preconditioned"] = json!(a.precondition.is_some());
        input["precondition_mode"] = json!(PreconditionMode::name(a.precondition));
        let mut v = a.common.report(&cfg, &out, "trace", input);
        if let Some(z) = &zones {
            v["zns"] = replay_zones::zns_json(z);
        }
        let header = header(&names.join(" + "), &stats, &a, &v);
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

/// The lines printed above the summary: what drive, what trace, the
/// headline figures and where the report went.
fn header(name: &str, s: &TraceStats, a: &ReplayArgs, v: &Value) -> String {
    let g = |path: &str| -> f64 {
        path.split('.')
            .try_fold(v, |cur, k| cur.get(k))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    let cap_gib = g("trace.capacity_bytes") / f64::from(1u32 << 30);
    let state = if a.precondition.is_some() {
        "preconditioned to steady state (filled, then overwritten twice at random)"
    } else {
        "fresh (empty: no garbage collection until it fills)"
    };
    let mut h = format!(
        "drive   preset {}: {cap_gib:.2} GiB user capacity, {state}\n",
        a.common.preset
    );
    let devices = if s.devices.len() > 1 && s.device_span_bytes.is_some() {
        format!(", {} devices merged", s.devices.len())
    } else {
        String::new()
    };
    h.push_str(&format!(
        "trace   {name}: {} format, {} requests ({} reads, {} writes){devices}, {:.1} s of trace time; \
         {} wrapped, {} split, {} scaled into the capacity, {} lines skipped\n",
        s.format.name(),
        s.requests,
        s.reads,
        s.writes,
        s.time_span_ns as f64 / 1e9,
        s.wrapped,
        s.split,
        s.scaled,
        s.skipped_total()
    ));
    h.push_str(&format!(
        "result  {:.1} IOPS, latency p50 {:.1} us, p99 {:.1} us; WAF {:.3} with {} GC victims \
         ({} units moved by GC)\n",
        g("perf.iops"),
        g("perf.latency_us.p50"),
        g("perf.latency_us.p99"),
        g("waf"),
        g("ftl.gc_victims"),
        g("ftl.gc_program_units"),
    ));
    if let Some(dir) = &a.common.out {
        h.push_str(&format!(
            "report  {} (time series and SVG charts beside it)\n",
            dir.join("report.json").display()
        ));
    }
    h.push('\n');
    h
}

/// `--parse-only`: the statistics of the counted pass and its rate.
fn parse_only(
    a: &ReplayArgs,
    prepared: &[(Prepared<'static>, f64)],
    capacity: u64,
) -> Result<(), CliError> {
    let mut all = Vec::new();
    for (p, secs) in prepared {
        let s = &p.stats;
        let rate = s.lines as f64 / secs.max(1e-9);
        let mut v = trace_json(&p.names(), s, a, capacity);
        v["parse_seconds"] = json!(secs);
        v["lines_per_second"] = json!(rate);
        if !a.common.json {
            println!(
                "{}\nparsed {} lines in {secs:.3} s: {rate:.0} lines per second\n",
                s, s.lines
            );
        }
        all.push(json!({ "trace": v }));
    }
    if a.common.json {
        let v = if all.len() == 1 {
            all.swap_remove(0)
        } else {
            json!({ "runs": all })
        };
        println!("{v}");
    }
    Ok(())
}

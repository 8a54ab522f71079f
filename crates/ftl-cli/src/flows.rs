//! `ftl replay --flows`: several traces replayed concurrently, each as its
//! own flow with its own queue, queue depth, weight and address region;
//! the device's command slots (`host.queue_depth`) are shared under
//! `host.arbitration`.

use std::path::PathBuf;

use clap::Parser;
use serde_json::{json, Value};
use sim_harness::config::SimConfig;
use sim_harness::engine::{Flow, FlowSet, FlowStats};
use sim_harness::trace::{self, TraceInput};
use sim_harness::workload::{HostOp, HostRequest, RequestSource, Synth};

use crate::common::{PreconditionMode, Preconditioning};
use crate::replay::{trace_json, trace_options, warnings, ReplayArgs};
use crate::replay_feed::StreamSource;
use crate::synth::SynthArgs;
use crate::CliError;

/// One flow as described on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Its name in the report.
    pub name: String,
    /// Its trace files (joined in time order, as with `--concat`).
    pub files: Vec<PathBuf>,
    /// Arbitration weight.
    pub weight: u32,
    /// Queue depth (default: `host.queue_depth`).
    pub qd: Option<u32>,
    /// Placement handle of the flow's writes (`host.interface = fdp`;
    /// default: the flow's index modulo `fdp.handles`).
    pub placement: Option<u8>,
}

/// Parses `name=N,files=F[+F...],weight=W,qd=Q` (only `files` required).
pub fn parse_flow(s: &str) -> Result<FlowSpec, String> {
    let (f, rest) = parse_flow_keys(s, false)?;
    if let Some((k, _)) = rest.first() {
        return Err(format!(
            "--flow {s}: unknown key `{k}` (expected name, files, weight, qd)"
        ));
    }
    if f.files.is_empty() || f.files.iter().any(|p| p.as_os_str().is_empty()) {
        return Err(format!("--flow {s}: files= is required"));
    }
    Ok(f)
}

/// Parses the common keys of a flow spec (`name`, `files`, `weight`,
/// `qd`) and returns the other `key=value` pairs in order.
fn parse_flow_keys(s: &str, workload: bool) -> Result<(FlowSpec, Vec<(String, String)>), String> {
    let bad = |why: String| format!("--flow {s}: {why}");
    let mut f = FlowSpec {
        name: String::new(),
        files: Vec::new(),
        weight: 1,
        qd: None,
        placement: None,
    };
    let mut rest = Vec::new();
    for part in s.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("`{part}` is not key=value")))?;
        let num = |v: &str| -> Result<u32, String> {
            match v.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(bad(format!("{k}: `{v}` is not an integer >= 1"))),
            }
        };
        match k {
            "name" => f.name = v.to_string(),
            "files" if !workload => f.files = v.split('+').map(PathBuf::from).collect(),
            "weight" => f.weight = num(v)?,
            "qd" => f.qd = Some(num(v)?),
            "placement" => {
                f.placement = Some(
                    v.parse::<u8>()
                        .ok()
                        .filter(|&p| p < 64)
                        .ok_or_else(|| bad(format!("placement: `{v}` is not an integer 0..=63")))?,
                )
            }
            other => rest.push((other.to_string(), v.to_string())),
        }
    }
    Ok((f, rest))
}

/// Gives flows without a name `flow<index>`.
fn name_flows(specs: &mut [FlowSpec]) {
    for (i, f) in specs.iter_mut().enumerate() {
        if f.name.is_empty() {
            f.name = format!("flow{i}");
        }
    }
}

/// The flows of the command line: `--flow` specs, or one flow per file.
fn specs(a: &ReplayArgs) -> Result<Vec<FlowSpec>, CliError> {
    let mut v: Vec<FlowSpec> = a
        .flow
        .iter()
        .map(|s| parse_flow(s))
        .collect::<Result<_, _>>()
        .map_err(CliError::Input)?;
    v.extend(a.traces.iter().map(|p| FlowSpec {
        name: String::new(),
        files: vec![p.clone()],
        weight: 1,
        qd: None,
        placement: None,
    }));
    if v.is_empty() {
        return Err(CliError::Input(
            "--flows: give trace files or --flow name=N,files=F,...".into(),
        ));
    }
    name_flows(&mut v);
    Ok(v)
}

/// Runs `ftl replay --flows`.
pub fn run(a: ReplayArgs) -> Result<(), CliError> {
    let specs = specs(&a)?;
    let (cfg, plan) = a.common.plan(a.qd)?;
    let unit = u64::from(plan.core.geometry.unit_bytes());
    let region_units = region_units(specs.len(), plan.core.logical_units)?;
    let region_bytes = u64::from(region_units) * unit;
    let mut opts = trace_options(&a)?;
    // Every flow's files are read at once, while the drive simulates.
    let all: Vec<TraceInput<'static>> = specs
        .iter()
        .flat_map(|s| s.files.iter().map(|p| TraceInput::Path(p.clone())))
        .collect();
    opts.dedup_max_bytes = a
        .common
        .check_reading(&cfg, &plan, &all.iter().collect::<Vec<_>>())?;
    let mut prepared = Vec::new();
    for s in &specs {
        let inputs: Vec<TraceInput<'static>> = s
            .files
            .iter()
            .map(|p| TraceInput::Path(p.clone()))
            .collect();
        let p = trace::prepare(&inputs, &opts, region_bytes)
            .map_err(|e| CliError::Input(e.to_string()))?;
        crate::replay_zones::check_commands(&p.stats, &cfg)?;
        prepared.push(p);
    }
    for p in &prepared {
        for w in warnings(&p.stats, &a) {
            if !a.common.quiet {
                eprintln!("warning: {w}");
            }
        }
    }
    let names: Vec<Vec<String>> = prepared.iter().map(|p| p.names()).collect();
    let mut sources: Vec<StreamSource> = prepared
        .into_iter()
        .enumerate()
        .map(|(i, p)| StreamSource::spawn(p, unit, i as u32 * region_units))
        .collect();
    let qd_default = plan.engine.queue_depth;
    let mut set = flow_set(&mut sources, &specs, qd_default, &cfg);
    let precondition = Preconditioning::whole_drive(a.precondition);
    let out = a.common.simulate(&plan, &mut set, precondition, a.verify);
    let flow_stats = std::mem::take(&mut set.stats);
    drop(set);
    let mut trace_stats = Vec::new();
    for s in sources {
        trace_stats.push(s.finish().map_err(CliError::Input)?);
    }
    let out = out?;
    let unit_bytes = unit;
    let flows: Vec<Value> = specs
        .iter()
        .zip(&flow_stats)
        .zip(&trace_stats)
        .zip(&names)
        .enumerate()
        .map(|(i, (((spec, fs), ts), files))| {
            let mut f = flow_json(spec, fs, region_bytes, unit_bytes, i as u32 * region_units);
            f["trace"] = trace_json(files, ts, &a, region_bytes);
            f
        })
        .collect();
    let total = json!({
        "flows": specs.len(),
        "files": names.concat(),
        "arbitration": cfg.get("host.arbitration"),
        "region_bytes": region_bytes,
        "records": trace_stats.iter().map(|t| t.records).sum::<u64>(),
        "requests": trace_stats.iter().map(|t| t.requests).sum::<u64>(),
        "wrapped": trace_stats.iter().map(|t| t.wrapped).sum::<u64>(),
        "split": trace_stats.iter().map(|t| t.split).sum::<u64>(),
        "preconditioned": a.precondition.is_some(),
        "precondition_mode": PreconditionMode::name(a.precondition),
    });
    let mut v = a.common.report(&cfg, &out, "trace", total);
    v["flows"] = Value::Array(flows);
    let header = flows_header(&specs, &flow_stats, qd_default, &a.common.preset, &cfg);
    a.common.emit(&v, &header, &out)
}

/// The flows over `sources` (one per spec), sharing the device under
/// `host.arbitration`.
fn flow_set<'s, S: RequestSource + 's>(
    sources: &'s mut [S],
    specs: &[FlowSpec],
    qd_default: u32,
    cfg: &SimConfig,
) -> FlowSet<'s> {
    FlowSet {
        flows: sources
            .iter_mut()
            .zip(specs)
            .map(|(src, s)| Flow {
                source: Box::new(src),
                queue_depth: s.qd.unwrap_or(qd_default),
                weight: s.weight,
            })
            .collect(),
        arbitration: cfg.host.arbitration.mode(),
        stats: Vec::new(),
    }
}

/// Mapping units of each of `n` equal flow regions of `logical` units.
fn region_units(n: usize, logical: u32) -> Result<u32, CliError> {
    match logical / (n as u32).max(1) {
        0 => Err(CliError::Input(format!(
            "--flow: {n} flows do not fit in {logical} mapping units"
        ))),
        r => Ok(r),
    }
}

/// The lines above the summary: one per flow.
fn flows_header(
    specs: &[FlowSpec],
    stats: &[FlowStats],
    qd_default: u32,
    preset: &str,
    cfg: &SimConfig,
) -> String {
    let mut header = format!(
        "{} flows on preset {preset}, arbitration {}:\n",
        specs.len(),
        cfg.get("host.arbitration").unwrap_or_default()
    );
    for (spec, fs) in specs.iter().zip(stats) {
        header.push_str(&format!(
            "  {:<12} weight {} qd {}: {} requests, {:.1} IOPS ({:.1} while all flows ran), p99 {:.1} us\n",
            spec.name,
            spec.weight,
            spec.qd.unwrap_or(qd_default),
            fs.requests,
            fs.iops(),
            fs.contended_iops(),
            fs.latency.quantile(0.99) as f64 / 1e3,
        ));
    }
    header.push('\n');
    header
}

/// One flow's object of the report's `flows` list (its unit region starts
/// at `first_unit`).
fn flow_json(
    spec: &FlowSpec,
    fs: &FlowStats,
    region_bytes: u64,
    unit_bytes: u64,
    first_unit: u32,
) -> Value {
    let us = |ns: u64| ns as f64 / 1e3;
    let lat = |h: &sim_harness::hist::Histogram| {
        json!({
            "mean": h.mean() / 1e3,
            "p50": us(h.quantile(0.5)),
            "p99": us(h.quantile(0.99)),
            "p999": us(h.quantile(0.999)),
            "max": us(h.max()),
        })
    };
    json!({
        "name": spec.name,
        "weight": spec.weight,
        "queue_depth": spec.qd,
        "region": { "first_unit": first_unit, "bytes": region_bytes },
        "host": {
            "requests": fs.requests,
            "read_requests": fs.read_requests,
            "write_requests": fs.write_requests,
            "read_units": fs.read_units,
            "write_units": fs.write_units,
        },
        "read_bytes": fs.read_units * unit_bytes,
        "write_bytes": fs.write_units * unit_bytes,
        "perf": {
            "iops": fs.iops(),
            "iops_contended": fs.contended_iops(),
            "sim_seconds": fs.sim_seconds(),
            "latency_us": lat(&fs.latency),
            "read_latency_us": lat(&fs.read_latency),
            "write_latency_us": lat(&fs.write_latency),
        },
    })
}

/// Shifts a flow's requests into its address region and tags its writes
/// with the flow's placement handle.
struct Shifted<S> {
    inner: S,
    base: u32,
    placement: u8,
}

impl<S: RequestSource> RequestSource for Shifted<S> {
    fn next_request(&mut self) -> Option<HostRequest> {
        let mut r = self.inner.next_request()?;
        r.lpn += self.base;
        r.placement = self.placement;
        if let HostOp::Copy { src } = r.op {
            r.op = HostOp::Copy {
                src: src + self.base,
            };
        }
        Some(r)
    }
    fn len_hint(&self) -> Option<u64> {
        self.inner.len_hint()
    }
}

/// `ftl synth --flow ...` parses each flow's workload keys as synth options.
#[derive(clap::Parser, Debug)]
#[command(name = "flow", no_binary_name = true)]
struct FlowWorkload {
    #[command(flatten)]
    w: SynthArgs,
}

/// Runs `ftl synth --flow ...`: synthetic workloads as concurrent flows.
pub fn run_synth(a: SynthArgs) -> Result<(), CliError> {
    let mut specs = Vec::new();
    let mut jobs = Vec::new();
    for f in &a.flow {
        let (spec, rest) = parse_flow_keys(f, true).map_err(CliError::Input)?;
        let argv: Vec<String> = rest
            .iter()
            .flat_map(|(k, v)| [format!("--{}", k.replace('_', "-")), v.clone()])
            .collect();
        let w = FlowWorkload::try_parse_from(&argv).map_err(|e| {
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            CliError::Input(format!("--flow {f}: {first}"))
        })?;
        let job = w.w.job()?;
        if job.params.copy.is_some() {
            return Err(CliError::Input(format!(
                "--flow {f}: copy workloads do not run as flows"
            )));
        }
        jobs.push(job);
        specs.push(spec);
    }
    name_flows(&mut specs);
    let (cfg, plan) = a.common.plan(a.qd)?;
    let unit = plan.core.geometry.unit_bytes();
    let region_units = region_units(specs.len(), plan.core.logical_units)?;
    let handles = u32::from(plan.core.placement.handles);
    let mut placements = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        placements.push(match (s.placement, handles) {
            (Some(_), 0) => {
                return Err(CliError::Input(format!(
                    "--flow {}: placement= needs --set host.interface=fdp",
                    s.name
                )))
            }
            (Some(p), h) if u32::from(p) >= h => {
                return Err(CliError::Input(format!(
                    "--flow {}: placement={p} is not below fdp.handles {h}",
                    s.name
                )))
            }
            (Some(p), _) => p,
            (None, 0) => 0,
            (None, h) => (i as u32 % h) as u8,
        });
    }
    if cfg.host.interface == sim_harness::config::InterfaceKey::Zns {
        return Err(CliError::Input(
            "--flow under host.interface=zns: zone workloads are not flows yet".into(),
        ));
    }
    let mut sources = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let spec = j
            .params
            .resolve(unit, region_units, cfg.sim.seed)
            .map_err(CliError::Input)?;
        sources.push(Shifted {
            inner: Synth::new(spec),
            base: i as u32 * region_units,
            placement: placements[i],
        });
    }
    let qd_default = plan.engine.queue_depth;
    let mut set = flow_set(&mut sources, &specs, qd_default, &cfg);
    let precondition = Preconditioning::whole_drive(a.precondition);
    let out = a.common.simulate(&plan, &mut set, precondition, a.verify)?;
    let region_bytes = u64::from(region_units) * u64::from(unit);
    let flows: Vec<Value> = specs
        .iter()
        .zip(&set.stats)
        .zip(&jobs)
        .enumerate()
        .map(|(i, ((spec, fs), job))| {
            let mut f = flow_json(
                spec,
                fs,
                region_bytes,
                u64::from(unit),
                i as u32 * region_units,
            );
            f["placement"] = json!(placements[i]);
            f["workload"] = json!({
                "profile": job.profile,
                "read_pct": job.params.read_pct,
                "requests": job.params.requests,
            });
            f
        })
        .collect();
    let input = json!({ "flows": specs.len(), "precondition": a.precondition.is_some(),
        "precondition_mode": PreconditionMode::name(a.precondition) });
    let mut v = a.common.report(&cfg, &out, "workload", input);
    v["flows"] = Value::Array(flows);
    let header = flows_header(&specs, &set.stats, qd_default, &a.common.preset, &cfg);
    a.common.emit(&v, &header, &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_specs_parse_and_reject_nonsense() {
        let f = parse_flow("name=db,files=a.csv+b.csv,weight=2,qd=8").unwrap();
        assert_eq!(f.name, "db");
        assert_eq!(
            f.files,
            vec![PathBuf::from("a.csv"), PathBuf::from("b.csv")]
        );
        assert_eq!((f.weight, f.qd), (2, Some(8)));
        assert_eq!(parse_flow("files=x").unwrap().weight, 1);
        for bad in [
            "name=a",
            "files=x,weight=0",
            "files=x,qd=-1",
            "files=x,speed=2",
            "files",
        ] {
            assert!(parse_flow(bad).is_err(), "{bad}");
        }
    }
}

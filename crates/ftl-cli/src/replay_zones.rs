//! `ftl replay` and the namespace: which trace commands each
//! `host.interface` takes (checked after the first pass, before anything
//! runs), and the replay of a trace on a zoned namespace through the zone
//! front end (`sim_harness::zone_replay`).

use serde_json::{json, Value};
use sim_harness::config::{InterfaceKey, SimConfig};
use sim_harness::sim::{Outcome, Plan};
use sim_harness::trace::{Prepared, TraceStats};
use sim_harness::zone_replay::{ZoneReplay, ZoneReplayStats};

use crate::common::CommonOpts;
use crate::replay_feed::StreamSource;
use crate::CliError;

/// The interface's name as `--set host.interface=` spells it.
fn name(i: InterfaceKey) -> &'static str {
    match i {
        InterfaceKey::Conventional => "conventional",
        InterfaceKey::Zns => "zns",
        InterfaceKey::Fdp => "fdp",
    }
}

/// Refuses, naming file and line, a trace whose commands the configured
/// namespace does not take: zone commands anywhere but `zns`; placement
/// identifiers beyond `fdp.handles` under `fdp`, or any under `zns`;
/// trims and copies under `zns`. Placement identifiers under
/// `conventional` are ignored (no placement).
pub fn check_commands(s: &TraceStats, cfg: &SimConfig) -> Result<(), CliError> {
    let iface = cfg.host.interface;
    let u = &s.uses;
    let refuse = |e: sim_harness::trace::TraceError| Err(CliError::Input(e.to_string()));
    if let (Some(at), false) = (&u.zone_op, iface == InterfaceKey::Zns) {
        return refuse(at.error(
            "op",
            format!(
                "a zone command needs --set host.interface=zns (now {})",
                name(iface)
            ),
        ));
    }
    match iface {
        InterfaceKey::Fdp => {
            let handles = cfg.fdp.handles;
            if let Some((pid, at)) = &u.max_placement {
                if u32::from(*pid) >= handles {
                    return refuse(at.error(
                        "placement",
                        format!(
                            "placement identifier {pid} is beyond fdp.handles = {handles} \
                             (identifiers 0..{handles})"
                        ),
                    ));
                }
            }
        }
        InterfaceKey::Zns => {
            if let Some(at) = &u.placed {
                return refuse(at.error(
                    "placement",
                    "a zoned namespace places by zone: no placement identifiers under \
                     host.interface=zns",
                ));
            }
            if let Some(at) = &u.trim_or_copy {
                return refuse(at.error(
                    "op",
                    "trims and copies are not zone commands: a zoned namespace discards \
                     with zone resets (ZR)",
                ));
            }
        }
        InterfaceKey::Conventional => {}
    }
    Ok(())
}

/// Replays `p` on the zoned namespace of `cfg` through the zone front
/// end; returns the outcome, the trace's final statistics and what the
/// zone commands did.
pub fn simulate(
    common: &CommonOpts,
    cfg: &SimConfig,
    plan: &Plan,
    p: Prepared<'static>,
    verify: bool,
) -> Result<(Outcome, TraceStats, ZoneReplayStats), CliError> {
    let geo = cfg
        .zone_geometry()
        .map_err(|e| CliError::Input(e.to_string()))?;
    let unit = u64::from(plan.core.geometry.unit_bytes());
    let stream = StreamSource::spawn_map(p, |r| *r);
    let records = stream.records();
    let mut table = vec![Default::default(); geo.zones as usize];
    let mut zr =
        ZoneReplay::new(stream, geo, &mut table, unit, Some(records)).map_err(CliError::Input)?;
    let out = common.simulate(plan, &mut zr, None, verify);
    let zstats = zr.stats.clone();
    let stats = zr.into_inner().finish().map_err(CliError::Input)?;
    Ok((out?, stats, zstats))
}

/// The `zns` section of a replay's report.
pub fn zns_json(z: &ZoneReplayStats) -> Value {
    json!({
        "zone_writes": z.zone_writes,
        "appends": z.appends,
        "reads": z.reads,
        "opens": z.opens,
        "closes": z.closes,
        "finishes": z.finishes,
        "resets": z.resets,
        "write_units": z.write_units,
        "refused": z.refused.values().sum::<u64>(),
        "refused_by_status": z.refused.iter().map(|(k, v)| (format!("{k:#04x}"), json!(v)))
            .collect::<serde_json::Map<_, _>>(),
    })
}

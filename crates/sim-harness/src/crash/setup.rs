//! From a configuration to a crash run: the plan (validated, the core's
//! tables laid out once) and the [`CrashSpec`] the configuration implies
//! (its timing model, its zoned namespace). `ftl crash` and the random
//! configuration sweep both go through here, so a cell of the sweep and the
//! single run its replay command starts are the same run.

use crate::config::{ConfigError, InterfaceKey, SimConfig};
use crate::sim::Plan;

use super::{CrashReport, CrashSpec};

/// The plan of a crash run on `cfg`: validated, with the core's tables laid
/// out once (a metadata region that does not fit is refused here, before a
/// run). The caller checks the memory the plan needs first when it must.
pub fn crash_plan(cfg: &SimConfig) -> Result<Plan, ConfigError> {
    cfg.validate()?;
    let plan = Plan::from_config(cfg)?;
    plan.worst_case_bytes(1)
        .map_err(|e| cfg.core_rejection(e))?;
    plan.check_core(cfg)?;
    Ok(plan)
}

/// `base` with what the configuration decides filled in: the plan's timing
/// model and, for `host.interface = zns`, the zone geometry.
pub fn spec_for(cfg: &SimConfig, plan: &Plan, base: CrashSpec) -> Result<CrashSpec, ConfigError> {
    Ok(CrashSpec {
        timing: Some(plan.engine.timing),
        zones: match cfg.host.interface {
            InterfaceKey::Zns => Some(cfg.zone_geometry()?),
            _ => None,
        },
        ..base
    })
}

impl CrashReport {
    /// Whether the run found anything wrong: acknowledged data lost or read
    /// back wrong, a mount that rebuilt another mapping, or a power-cut
    /// flush that needed more than the capacitor holds (the exit status 1
    /// of `ftl crash`).
    pub fn failed(&self) -> bool {
        self.lost_acknowledged
            + self.invalid_reads
            + self.mapping_mismatches
            + self.capacitor_overruns
            > 0
    }

    /// Adds the figures of another run: counts add up, maxima take the
    /// larger, means are weighted by mounts.
    pub fn add(&mut self, o: &CrashReport) {
        let mounts = self.mounts + o.mounts;
        if mounts > 0 {
            let w =
                |a: f64, na: u64, b: f64, nb: u64| (a * na as f64 + b * nb as f64) / mounts as f64;
            self.mount_ops_mean = w(self.mount_ops_mean, self.mounts, o.mount_ops_mean, o.mounts);
            self.mount_sim_seconds_mean = w(
                self.mount_sim_seconds_mean,
                self.mounts,
                o.mount_sim_seconds_mean,
                o.mounts,
            );
        }
        self.mounts = mounts;
        self.cuts += o.cuts;
        self.mount_cuts += o.mount_cuts;
        self.lost_acknowledged += o.lost_acknowledged;
        self.invalid_reads += o.invalid_reads;
        self.capacitor_overruns += o.capacitor_overruns;
        self.cut_programs_max = self.cut_programs_max.max(o.cut_programs_max);
        self.cut_capacity = self.cut_capacity.max(o.cut_capacity);
        self.torn_programs += o.torn_programs;
        self.torn_erases += o.torn_erases;
        self.units_checked += o.units_checked;
        self.mapping_mismatches += o.mapping_mismatches;
        self.host_commands += o.host_commands;
        self.mount_ops_max = self.mount_ops_max.max(o.mount_ops_max);
        self.mount_sim_seconds_max = self.mount_sim_seconds_max.max(o.mount_sim_seconds_max);
        self.shutdowns += o.shutdowns;
        self.checkpoint_mounts += o.checkpoint_mounts;
        self.mount_head_reads += o.mount_head_reads;
        self.mount_replay_reads += o.mount_replay_reads;
        self.clean_mount_data_reads += o.clean_mount_data_reads;
        self.map_programs += o.map_programs;
        self.map_flushes += o.map_flushes;
        self.gc_victims += o.gc_victims;
        self.max_pe = self.max_pe.max(o.max_pe);
        self.pe_drift_max = self.pe_drift_max.max(o.pe_drift_max);
        self.copy_remapped_units += o.copy_remapped_units;
        self.zone_wp_mismatches += o.zone_wp_mismatches;
        self.zone_writes += o.zone_writes;
        self.zone_appends += o.zone_appends;
        self.zone_resets += o.zone_resets;
        self.zone_finishes += o.zone_finishes;
        self.zone_refusals += o.zone_refusals;
    }
}

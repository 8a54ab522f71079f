//! Builds a simulated drive from a [`SimConfig`] and runs workloads on it.

use std::time::Instant;

use firmware_core::Nand;
use nand_model::{
    FaultConfig, FullDataMedium, GuardedMedium, ReliabilityConfig, SimMedium, WlModelConfig,
};

use crate::config::{ConfigError, SimConfig};
use crate::engine::{CoreStore, Engine, EngineParams, HostSide, RunStats, StampOracle, StampUnit};
use crate::timing::TimingParams;
use crate::workload::{Pattern, RequestSource, Synth, SynthSpec};

/// Everything derived from a configuration that a run needs.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Core configuration.
    pub core: firmware_core::Config,
    /// Engine parameters.
    pub engine: EngineParams,
    /// Medium reliability model.
    pub reliability: ReliabilityConfig,
    /// Medium fault injection.
    pub faults: FaultConfig,
    /// P/E cycles every block starts with.
    pub initial_pe: u32,
    /// Keep full unit payloads ([`FullDataMedium`]) instead of `u64` stamps;
    /// the mapping unit size must be one of [`FULL_DATA_UNIT_BYTES`].
    pub full_data: bool,
    /// Per-wordline wear model ([`GuardedMedium`]); on with `erase.mode`
    /// `gerase` or `bpm`, with `nand.endurance_scale` other than 1, and in
    /// lifetime runs.
    pub wordline: Option<WlModelConfig>,
}

/// Per-wordline endurance jitter of the wordline model (±5 %).
const WL_JITTER: f64 = 0.05;

/// Mapping unit sizes (bytes) a full-data run supports (`nand.full_data`):
/// the engine and medium are instantiated for each of them.
pub const FULL_DATA_UNIT_BYTES: [u32; 6] = [512, 1024, 2048, 4096, 8192, 16384];

/// Why a full-data run cannot use the configured mapping unit size.
pub(crate) const FULL_DATA_UNIT_ERROR: &str =
    "nand.full_data needs a mapping unit of 512, 1024, 2048, 4096, 8192 or 16384 bytes";

impl Plan {
    /// Validates `cfg` and derives the run plan.
    pub fn from_config(cfg: &SimConfig) -> Result<Plan, ConfigError> {
        let core = cfg.to_core_config()?;
        let t = &cfg.timing;
        let timing = TimingParams {
            t_read_ns: (t.t_read_us * 1e3).round() as u64,
            t_prog_ns: (t.t_prog_us * 1e3).round() as u64,
            t_erase_ns: (t.t_erase_us * 1e3).round() as u64,
            t_cmd_ns: t.t_cmd_ns.round() as u64,
            channel_bytes_per_ns: t.channel_mts / 1e3,
            dram_bytes_per_ns: t.dram_mib_s * 1_048_576.0 / 1e9,
            host_bytes_per_ns: t.host_mib_s * 1_048_576.0 / 1e9,
            spare_bytes: u64::from(cfg.geometry.spare_bytes),
            t_dl_ns: t.t_dl_ns.round() as u64,
            gc_copy: cfg.gc.copy_mode.mode(),
            cache_program: t.cache_program,
            gc_cross_way: cfg.gc.cross_way(),
            // 85h and two column cycles, tADL, one data cycle (seed 002's ONFI timing).
            retx_byte_ns: (4.0 * 1e3 / t.channel_mts.max(1e-9)).round() as u64
                + crate::gc_merge::TABLE_II.t_adl_ns,
            codewords_per_unit: u64::from(core.geometry.unit_bytes()).div_ceil(1024),
        };
        let n = &cfg.nand;
        let reliability = cfg.reliability()?;
        let faults = FaultConfig {
            seed: n.seed ^ 0xFA17,
            factory_bad_fraction: n.factory_bad_ratio,
            program_fail_prob: n.program_fail_prob,
            erase_fail_prob: n.erase_fail_prob,
        };
        if n.full_data && !FULL_DATA_UNIT_BYTES.contains(&core.geometry.unit_bytes()) {
            return Err(ConfigError {
                source: "config".to_string(),
                line: None,
                key: "nand.full_data".to_string(),
                reason: format!(
                    "full data supports mapping units of {FULL_DATA_UNIT_BYTES:?} bytes, not {}",
                    core.geometry.unit_bytes()
                ),
            });
        }
        Ok(Plan {
            core,
            engine: EngineParams {
                timing,
                queue_depth: cfg.host.queue_depth,
                initial_pe: n.initial_pe,
                sample_step_ns: 0,
            },
            reliability,
            faults,
            initial_pe: n.initial_pe,
            full_data: n.full_data,
            wordline: (core.guard.enabled() || n.endurance_scale != 1.0).then_some(WlModelConfig {
                endurance_scale: n.endurance_scale,
                jitter: WL_JITTER,
                ecc_limit: n.ecc_limit,
                seed: n.seed ^ 0x3D,
            }),
        })
    }

    /// Turns the wordline model on (lifetime runs), with the configured
    /// endurance scale.
    pub fn with_wordline_model(mut self, endurance_scale: f64) -> Plan {
        self.wordline = Some(WlModelConfig {
            endurance_scale,
            jitter: WL_JITTER,
            ecc_limit: self.reliability.ecc_limit,
            seed: self.reliability.seed ^ 0x3D,
        });
        self
    }

    /// Builds the medium for this plan.
    pub fn medium(&self) -> Result<SimMedium, firmware_core::Error> {
        let mut m = SimMedium::new(self.core.geometry, self.reliability, self.faults)?;
        if self.initial_pe > 0 {
            m.set_initial_pe(self.initial_pe);
        }
        Ok(m)
    }

    /// Builds the core once over its tables, without a medium, so that a
    /// configuration the core only rejects when it lays its tables out (the
    /// metadata region of mapping persistence) is an input error before a
    /// run. Call it after the memory check: it allocates the core's tables.
    pub fn check_core(&self, cfg: &SimConfig) -> Result<(), ConfigError> {
        let build = || -> Result<(), firmware_core::Error> {
            let mut store = CoreStore::<u64>::new(&self.core)?;
            let (mem, _) = store.split();
            firmware_core::FullFtl::new(self.core, mem).map(|_| ())
        };
        build().map_err(|e| cfg.core_rejection(e))
    }

    /// Builds the full-data medium for this plan (the stamp medium of
    /// [`Plan::medium`] with a side store of `B` bytes per physical unit).
    /// `B` must be the mapping unit size.
    pub fn full_medium<const B: usize>(&self) -> Result<FullDataMedium<B>, firmware_core::Error> {
        FullDataMedium::from_medium(self.medium()?)
    }
}

/// A measured run: engine, core and medium counters plus wall-clock figures.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Engine measurements of the measured phase.
    pub run: RunStats,
    /// Core counters of the measured phase.
    pub ftl: firmware_core::Stats,
    /// Medium counters (whole run).
    pub nand: nand_model::Stats,
    /// Busy ns per channel in the measured phase.
    pub chan_busy_ns: Vec<u64>,
    /// Busy ns per die in the measured phase.
    pub die_busy_ns: Vec<u64>,
    /// Per channel: ns inside GC windows (a GC operation of the channel
    /// running) in the measured phase.
    pub gc_window_ns: Vec<u64>,
    /// Per channel: channel busy ns inside GC windows.
    pub gc_busy_ns: Vec<u64>,
    /// Per channel: GC's own channel ns (its command and data cycles).
    pub gc_own_ns: Vec<u64>,
    /// Corrected bytes retransmitted after direct data transfers.
    pub gc_retx_bytes: u64,
    /// Direct data transfers between ways.
    pub gc_ddt_pages: u64,
    /// DDT master/slave messages of cross-way DGCB copies (Table I of
    /// seed 002), per kind.
    pub gc_ddt_messages: crate::ddt_msgs::DdtLog,
    /// P/E spread (min, max) over good blocks at the end.
    pub pe_spread: (u32, u32),
    /// Erase (P/E) count of every good block at the end.
    pub erase_counts: Vec<u32>,
    /// Erases of every good block during the measured phase (what the
    /// report's `nand.erases` counts, per block).
    pub phase_erase_counts: Vec<u32>,
    /// Time series of the measured phase.
    pub series: Vec<crate::series::Sample>,
    /// Write-buffer size in mapping units.
    pub write_buffer_units: u32,
    /// Wall-clock seconds of the measured phase.
    pub wall_seconds: f64,
    /// Wall-clock seconds of the whole run, including format and preconditioning.
    pub total_wall_seconds: f64,
    /// Wall-clock seconds of format and preconditioning.
    pub precondition_wall_seconds: f64,
    /// Bytes of memory lent to the core.
    pub core_table_bytes: usize,
    /// gErase modes the core used, oldest first (`[0]` without GuardedErase).
    pub gerase_modes: Vec<u8>,
    /// The plan that ran.
    pub plan: Plan,
}

/// How the run proceeds.
pub struct RunSpec<'s> {
    /// Fill the logical space sequentially, overwrite the footprint randomly twice, then reset counters.
    pub precondition: bool,
    /// Request size (units) of the random preconditioning overwrites.
    pub precondition_units: u32,
    /// Units (from 0) the preconditioning overwrites cover; 0 = the whole
    /// logical space. A workload touching part of the drive passes its
    /// footprint, so the data outside it stays as the fill wrote it: cold,
    /// in fully valid blocks, as on a drive whose files were written once.
    pub precondition_footprint: u32,
    /// With `precondition`: build the steady state directly instead of
    /// simulating the writes (`--precondition=fast`; see
    /// [`crate::precondition_fast`]).
    pub precondition_fast: bool,
    /// Read everything back at the end and check it (counted in integrity figures).
    pub verify: bool,
    /// The measured workload.
    pub source: &'s mut dyn RequestSource,
    /// Progress callback: (requests done, phase name).
    pub progress: &'s mut dyn FnMut(u64, &str),
}

/// Runs a workload on a fresh drive built from `plan`: the stamp medium, or
/// with `plan.full_data` the full-data medium (every read then checks every
/// byte of every unit).
pub fn run(plan: &Plan, spec: RunSpec<'_>) -> Result<Outcome, firmware_core::Error> {
    let t_start = Instant::now();
    if let (Some(wl), false) = (plan.wordline, plan.full_data) {
        let geo = plan.core.geometry;
        return run_on(
            plan,
            spec,
            t_start,
            || GuardedMedium::new(plan.medium()?, &geo, wl),
            |m| *m.inner().stats(),
        );
    }
    if !plan.full_data {
        return run_on(plan, spec, t_start, || plan.medium(), |m| *m.stats());
    }
    match plan.core.geometry.unit_bytes() {
        512 => run_full::<512>(plan, spec, t_start),
        1024 => run_full::<1024>(plan, spec, t_start),
        2048 => run_full::<2048>(plan, spec, t_start),
        4096 => run_full::<4096>(plan, spec, t_start),
        8192 => run_full::<8192>(plan, spec, t_start),
        16384 => run_full::<16384>(plan, spec, t_start),
        _ => Err(firmware_core::Error::InvalidConfig(&FULL_DATA_UNIT_ERROR)),
    }
}

/// [`run`] on a full-data medium of `B`-byte units.
fn run_full<const B: usize>(
    plan: &Plan,
    spec: RunSpec<'_>,
    t_start: Instant,
) -> Result<Outcome, firmware_core::Error> {
    if let Some(wl) = plan.wordline {
        let geo = plan.core.geometry;
        return run_on(
            plan,
            spec,
            t_start,
            || GuardedMedium::new(plan.full_medium::<B>()?, &geo, wl),
            |m| *m.inner().stats(),
        );
    }
    run_on(
        plan,
        spec,
        t_start,
        || plan.full_medium::<B>(),
        |m| *m.stats(),
    )
}

/// [`run`] on the medium `medium` builds; `nand_stats` reads its counters at the end.
fn run_on<N: Nand>(
    plan: &Plan,
    spec: RunSpec<'_>,
    t_start: Instant,
    medium: impl FnOnce() -> Result<N, firmware_core::Error>,
    nand_stats: fn(&N) -> nand_model::Stats,
) -> Result<Outcome, firmware_core::Error>
where
    N::Unit: StampUnit,
{
    let mut store = CoreStore::<N::Unit>::new(&plan.core)?;
    let progress = spec.progress;
    let how = spec.precondition.then_some(Precondition {
        fast: spec.precondition_fast,
        units: spec.precondition_units,
        footprint: spec.precondition_footprint,
    });
    let t_pre = Instant::now();
    let mut eng = preconditioned_engine(plan, &mut store, medium()?, how, progress)?;
    let precondition_seconds = t_pre.elapsed().as_secs_f64();
    let t_measure = Instant::now();
    eng.run(spec.source, &mut |n| progress(n, "run"))?;
    let wall_seconds = t_measure.elapsed().as_secs_f64();
    let mut out = outcome(&eng, plan, nand_stats(&eng.nand), wall_seconds, 0.0)?;
    if spec.verify {
        eng.verify_all()?;
        out.run.read_checks += eng.stats.read_checks;
        out.run.mismatches += eng.stats.mismatches;
        out.run.uncorrectable_reads += eng.stats.uncorrectable_reads;
        out.nand = nand_stats(&eng.nand);
    }
    out.total_wall_seconds = t_start.elapsed().as_secs_f64();
    out.precondition_wall_seconds = precondition_seconds;
    Ok(out)
}

/// How a drive is preconditioned before its measured phase.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Precondition {
    /// Build the steady state directly ([`crate::precondition_fast`])
    /// instead of simulating every write.
    pub(crate) fast: bool,
    /// Request size (units) of the simulated overwrites.
    pub(crate) units: u32,
    /// Units the overwrites cover (0 = all).
    pub(crate) footprint: u32,
}

/// An engine over `medium` and `store`, formatted, or preconditioned as
/// `how` says, at the start of a new phase.
pub(crate) fn preconditioned_engine<'a, N: Nand>(
    plan: &Plan,
    store: &'a mut CoreStore<N::Unit>,
    medium: N,
    how: Option<Precondition>,
    progress: &mut dyn FnMut(u64, &str),
) -> Result<Engine<'a, N>, firmware_core::Error>
where
    N::Unit: StampUnit,
{
    match how {
        Some(Precondition {
            fast: true,
            footprint,
            ..
        }) => {
            let host = StampOracle::new(plan.core.logical_units);
            let mut eng = Engine::unstarted(plan.core, store, medium, plan.engine, host)?;
            crate::precondition_fast::precondition_fast(&mut eng, plan, footprint, progress)?;
            Ok(eng)
        }
        Some(p) => {
            let mut eng = Engine::new(plan.core, store, medium, plan.engine)?;
            precondition(&mut eng, plan, p.units, p.footprint, progress)?;
            Ok(eng)
        }
        None => Engine::new(plan.core, store, medium, plan.engine),
    }
}

/// Fills the logical space sequentially, overwrites `footprint` units (0 =
/// everything) randomly twice in requests of `units`, then starts a new
/// measurement phase (see [`RunSpec::precondition`]).
pub(crate) fn precondition<N: Nand>(
    eng: &mut Engine<'_, N>,
    plan: &Plan,
    units: u32,
    footprint: u32,
    progress: &mut dyn FnMut(u64, &str),
) -> Result<(), firmware_core::Error>
where
    N::Unit: StampUnit,
{
    let logical = plan.core.logical_units;
    let mut fill = Synth::new(SynthSpec {
        pattern: Pattern::Sequential,
        read_pct: 0,
        units: 32.min(logical),
        requests: u64::from(logical.div_ceil(32.min(logical))),
        footprint_units: logical,
        interarrival_ns: 0,
        seed: 1,
        ..SynthSpec::default()
    });
    eng.run(&mut fill, &mut |n| progress(n, "precondition: fill"))?;
    let units = units.max(1);
    let footprint = match footprint {
        0 => logical,
        f => f.clamp(units.min(logical), logical),
    };
    let mut over = Synth::new(SynthSpec {
        pattern: Pattern::Random,
        read_pct: 0,
        units,
        requests: 2 * u64::from(footprint / units),
        footprint_units: footprint,
        interarrival_ns: 0,
        seed: 2,
        ..SynthSpec::default()
    });
    eng.run(&mut over, &mut |n| progress(n, "precondition: overwrite"))?;
    eng.begin_phase();
    Ok(())
}

/// The figures of an engine's current phase: its counters, the core's, the
/// medium's (`nand`), bus and die busy times and the P/E spread.
pub fn outcome<N: Nand, H: HostSide<N::Unit>>(
    eng: &Engine<'_, N, H>,
    plan: &Plan,
    nand: nand_model::Stats,
    wall_seconds: f64,
    total_wall_seconds: f64,
) -> Result<Outcome, firmware_core::Error> {
    Ok(Outcome {
        run: eng.stats.clone(),
        ftl: *eng.ftl.stats(),
        nand,
        chan_busy_ns: eng.timing.chan_busy(),
        die_busy_ns: eng.timing.die_busy(),
        gc_window_ns: eng.timing.gc_window(),
        gc_busy_ns: eng.timing.gc_busy(),
        gc_own_ns: eng.timing.gc_own(),
        gc_retx_bytes: eng.timing.retx_bytes,
        gc_ddt_pages: eng.timing.ddt_pages,
        gc_ddt_messages: eng.timing.ddt,
        pe_spread: eng.ftl.pe_spread(),
        erase_counts: eng.block_erase_counts().into_iter().flatten().collect(),
        phase_erase_counts: eng.phase_erase_counts(),
        series: eng.time_series(),
        write_buffer_units: eng.write_buffer_units(),
        wall_seconds,
        total_wall_seconds,
        precondition_wall_seconds: 0.0,
        core_table_bytes: firmware_core::FullFtl::lend_bytes(&plan.core)?,
        gerase_modes: eng.ftl.hooks().gerase_mode_history().to_vec(),
        plan: *plan,
    })
}

/// Peak memory of this process in MiB: the peak resident set (Linux
/// `VmHWM`; 0 elsewhere) plus the peak on reserved huge pages, which the
/// resident set leaves out ([`nand_model::huge::giant_page_bytes`]).
pub fn peak_rss_mib() -> f64 {
    peak_resident_mib() + nand_model::huge::giant_page_bytes() as f64 / 1_048_576.0
}

/// Peak resident set size of this process in MiB (Linux `VmHWM`; 0 elsewhere).
pub fn peak_resident_mib() -> f64 {
    nand_model::huge::status_kib("VmHWM:") as f64 / 1024.0
}

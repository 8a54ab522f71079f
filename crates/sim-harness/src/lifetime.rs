//! Lifetime runs: a workload until the drive wears out (seed 001 §3.4.2).
//!
//! The drive runs on the wordline model ([`nand_model::GuardedMedium`]),
//! whose blocks fail a program once a usable wordline has worn past its
//! endurance; the core then retires them. The run ends when more than
//! [`END_BAD_BLOCK_PCT`] % of the blocks are bad or retiring, or when the
//! FTL can no longer keep its free-block reserve (the engine reports that
//! requests can no longer be served). TBW is the host bytes written until
//! then. Every host read is checked against the engine's oracle, and a
//! final verify pass reads everything back when the drive still can.

use std::time::Instant;

use firmware_core::ftl::tables::BlockState;
use firmware_core::{BlockId, Nand};
use nand_model::{GuardedMedium, WlMedium};

use crate::engine::{CoreStore, Engine, StampUnit};
use crate::sim::{
    outcome, preconditioned_engine, Outcome, Plan, Precondition, FULL_DATA_UNIT_ERROR,
};
use crate::workload::{HostRequest, RequestSource};

/// Bad blocks (percent of all blocks) that end a drive's life.
pub const END_BAD_BLOCK_PCT: f64 = 2.5;

/// Why a lifetime run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// More than [`END_BAD_BLOCK_PCT`] % of the blocks went bad.
    BadBlocks,
    /// The FTL could no longer keep its free-block reserve.
    Reserve,
    /// The request limit came first (the drive is still alive).
    RequestLimit,
}

impl EndReason {
    /// The value of report key `life.end_reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::BadBlocks => "bad-blocks",
            EndReason::Reserve => "free-block-reserve",
            EndReason::RequestLimit => "request-limit",
        }
    }
}

/// How a lifetime run proceeds.
pub struct LifetimeSpec<'s> {
    /// Request size (units) of the preconditioning overwrites.
    pub precondition_units: u32,
    /// Units the preconditioning overwrites cover (0 = all).
    pub precondition_footprint: u32,
    /// Build the preconditioned steady state directly
    /// ([`crate::precondition_fast`]) instead of simulating it.
    pub precondition_fast: bool,
    /// The workload; it should not end before the drive does.
    pub source: &'s mut dyn RequestSource,
    /// Requests between two end-of-life checks.
    pub chunk_requests: u64,
    /// Most requests to run (a safety stop).
    pub max_requests: u64,
    /// Progress callback: (requests done, phase name).
    pub progress: &'s mut dyn FnMut(u64, &str),
}

/// What a lifetime run measured.
#[derive(Clone, Debug)]
pub struct LifetimeOutcome {
    /// Host bytes written until the end of life (`life.tbw_bytes`).
    pub tbw_bytes: u64,
    /// Why the run ended (`life.end_reason`).
    pub end_reason: EndReason,
    /// Blocks bad or retiring at the end.
    pub bad_blocks: u32,
    /// gErase modes in the order the selector used them (`erase.mode_history`).
    pub mode_history: Vec<u8>,
    /// Stable WAF (thousandths) the selector recorded per gErase mode.
    pub mode_waf: Vec<Option<u32>>,
    /// The run's figures (whole life after preconditioning).
    pub outcome: Outcome,
}

/// Yields at most `left` requests of `inner`.
struct Take<'a> {
    inner: &'a mut dyn RequestSource,
    left: u64,
}

impl RequestSource for Take<'_> {
    fn next_request(&mut self) -> Option<HostRequest> {
        self.left = self.left.checked_sub(1)?;
        self.inner.next_request()
    }
}

/// Runs `spec` on a fresh preconditioned drive built from `plan` (with the
/// wordline model turned on) until its end of life.
pub fn run_lifetime(
    plan: &Plan,
    spec: LifetimeSpec<'_>,
) -> Result<LifetimeOutcome, firmware_core::Error> {
    let plan = match plan.wordline {
        Some(_) => *plan,
        None => plan.with_wordline_model(1.0),
    };
    let Some(wl) = plan.wordline else {
        return Err(firmware_core::Error::InvalidConfig(&"no wordline model"));
    };
    let geo = plan.core.geometry;
    if !plan.full_data {
        let m = GuardedMedium::new(plan.medium()?, &geo, wl)?;
        return life_on(&plan, spec, m);
    }
    match geo.unit_bytes() {
        4096 => life_on(
            &plan,
            spec,
            GuardedMedium::new(plan.full_medium::<4096>()?, &geo, wl)?,
        ),
        8192 => life_on(
            &plan,
            spec,
            GuardedMedium::new(plan.full_medium::<8192>()?, &geo, wl)?,
        ),
        16384 => life_on(
            &plan,
            spec,
            GuardedMedium::new(plan.full_medium::<16384>()?, &geo, wl)?,
        ),
        _ => Err(firmware_core::Error::InvalidConfig(&FULL_DATA_UNIT_ERROR)),
    }
}

/// Blocks the core holds as bad or retiring.
fn lost_blocks<N: Nand>(eng: &Engine<'_, N>, total: u32) -> u32 {
    (0..total)
        .filter(|&b| {
            eng.ftl
                .block_info(BlockId(b))
                .is_ok_and(|(_, st, _)| matches!(st, BlockState::Bad | BlockState::Retiring))
        })
        .count() as u32
}

fn life_on<M: WlMedium>(
    plan: &Plan,
    spec: LifetimeSpec<'_>,
    medium: GuardedMedium<M>,
) -> Result<LifetimeOutcome, firmware_core::Error>
where
    M::Unit: StampUnit,
{
    let t_start = Instant::now();
    let mut store = CoreStore::<M::Unit>::new(&plan.core)?;
    let progress = spec.progress;
    let how = Precondition {
        fast: spec.precondition_fast,
        units: spec.precondition_units,
        footprint: spec.precondition_footprint,
    };
    let mut eng = preconditioned_engine(plan, &mut store, medium, Some(how), progress)?;
    let total = plan.core.geometry.total_blocks();
    let limit = (f64::from(total) * END_BAD_BLOCK_PCT / 100.0).floor() as u32;
    let t_measure = Instant::now();
    let mut done = 0u64;
    let end_reason = loop {
        if done >= spec.max_requests {
            break EndReason::RequestLimit;
        }
        let n = spec.chunk_requests.max(1).min(spec.max_requests - done);
        let mut chunk = Take {
            inner: &mut *spec.source,
            left: n,
        };
        let base = eng.stats.requests;
        let r = eng.run(&mut chunk, &mut |k| progress(base + k, "life"));
        done += n;
        match r {
            Ok(()) => {}
            Err(firmware_core::Error::OutOfSpace) => break EndReason::Reserve,
            Err(e) => return Err(e),
        }
        if lost_blocks(&eng, total) > limit {
            break EndReason::BadBlocks;
        }
    };
    let wall = t_measure.elapsed().as_secs_f64();
    let nand = *eng.nand.inner().sim().stats();
    let mut out = outcome(&eng, plan, nand, wall, 0.0)?;
    if end_reason != EndReason::Reserve && eng.verify_all().is_ok() {
        out.run.read_checks = eng.stats.read_checks;
        out.run.mismatches = eng.stats.mismatches;
        out.run.uncorrectable_reads = eng.stats.uncorrectable_reads;
    }
    eng.ftl.audit()?;
    firmware_core::tech::longftl::gerase::audit_guard(&eng.ftl)?;
    out.total_wall_seconds = t_start.elapsed().as_secs_f64();
    let unit = u64::from(plan.core.geometry.unit_bytes());
    Ok(LifetimeOutcome {
        tbw_bytes: out.ftl.host_write_units.saturating_mul(unit),
        end_reason,
        bad_blocks: lost_blocks(&eng, total),
        mode_history: eng.ftl.hooks().gerase_mode_history().to_vec(),
        mode_waf: (0..firmware_core::tech::longftl::gerase_select::MAX_MODES)
            .map(|m| eng.ftl.hooks().gerase_waf(m))
            .collect(),
        outcome: out,
    })
}

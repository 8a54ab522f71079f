//! A run in two phases of one request source: the first requests warm
//! the drive up (not measured), the rest are measured. For sources whose
//! state carries from warm-up to measurement (a zone host's map, tenants'
//! logs), which the standard preconditioning cannot warm up.

use std::time::Instant;

use crate::engine::Engine;
use crate::sim::{outcome, Outcome, Plan};
use crate::workload::{HostRequest, RequestSource};

/// The first `left` requests of a source.
struct Take<'s> {
    src: &'s mut dyn RequestSource,
    left: u64,
}

impl RequestSource for Take<'_> {
    fn next_request(&mut self) -> Option<HostRequest> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.src.next_request()
    }
}

/// Runs `source` on a fresh drive of `plan` (stamp medium): its first
/// `warm` requests unmeasured, the rest measured.
pub fn run_phased(
    plan: &Plan,
    warm: u64,
    source: &mut dyn RequestSource,
) -> Result<Outcome, firmware_core::Error> {
    let t_start = Instant::now();
    let mut store = crate::engine::CoreStore::<u64>::new(&plan.core)?;
    let mut eng = Engine::new(plan.core, &mut store, plan.medium()?, plan.engine)?;
    eng.run(
        &mut Take {
            src: source,
            left: warm,
        },
        &mut |_| {},
    )?;
    eng.begin_phase();
    let t_measure = Instant::now();
    eng.run(source, &mut |_| {})?;
    let mut out = outcome(
        &eng,
        plan,
        *eng.nand.stats(),
        t_measure.elapsed().as_secs_f64(),
        0.0,
    )?;
    out.total_wall_seconds = t_start.elapsed().as_secs_f64();
    Ok(out)
}

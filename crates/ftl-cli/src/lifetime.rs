//! `ftl lifetime`: a workload until the drive's end of life, reporting the
//! host bytes written (TBW), the final WAF and IOPS.

use serde_json::{json, Value};
use sim_harness::config::limits;
use sim_harness::lifetime::LifetimeOutcome;

use crate::synth::{execute_outcome, SynthArgs};
use crate::CliError;

/// Runs `ftl lifetime`: the options of `ftl synth`, with `--requests` a
/// safety cap; the drive is always preconditioned.
pub fn run(a: SynthArgs) -> Result<(), CliError> {
    if !a.flow.is_empty() {
        return Err(CliError::Input("--flow: not with ftl lifetime".into()));
    }
    let mut job = a.job()?;
    // Lifetime runs wear the drive through the wordline model.
    let cfg = a.common.load_unchecked()?;
    if !limits::has_wordline_geometry(&cfg) {
        let e = limits::wordline_geometry_error(&cfg, "geometry.pages_per_block");
        return Err(CliError::Input(format!("ftl lifetime: {e}")));
    }
    job.lifetime = true;
    // Always preconditioned: fully unless `--precondition=fast`.
    job.precondition = true;
    let (v, header, out) = execute_outcome(&a.common, &job)?;
    let life = v.get("life").cloned().unwrap_or(Value::Null);
    let tbw = life.get("tbw_bytes").and_then(Value::as_u64).unwrap_or(0);
    let header = format!(
        "lifetime: {}, end {}, {} bad blocks\n{header}",
        tbw_text(tbw),
        life.get("end_reason")
            .and_then(Value::as_str)
            .unwrap_or("-"),
        life.get("bad_blocks").unwrap_or(&Value::Null),
    );
    a.common.emit(&v, &header, &out)
}

/// Terabytes written in decimal units, as drive datasheets give them,
/// with the exact byte count.
pub fn tbw_text(bytes: u64) -> String {
    let tb = bytes as f64 / 1e12;
    if tb >= 0.1 {
        format!("TBW {tb:.2} TB ({bytes} bytes)")
    } else {
        format!("TBW {:.2} GB ({bytes} bytes)", bytes as f64 / 1e9)
    }
}

/// The `life` section of a lifetime report (`life.tbw_bytes`,
/// `life.end_reason`, ...).
pub fn life_json(lo: &LifetimeOutcome) -> Value {
    let waf: Vec<Value> = lo
        .mode_waf
        .iter()
        .map(|w| w.map_or(Value::Null, |m| json!(f64::from(m) / 1000.0)))
        .collect();
    json!({
        "tbw_bytes": lo.tbw_bytes,
        "end_reason": lo.end_reason.as_str(),
        "bad_blocks": lo.bad_blocks,
        "final_mode": lo.mode_history.last().copied().unwrap_or(0),
        "mode_waf": waf,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn tbw_is_written_in_tb_or_gb() {
        assert_eq!(
            super::tbw_text(1_234_000_000_000),
            "TBW 1.23 TB (1234000000000 bytes)"
        );
        assert_eq!(
            super::tbw_text(56_780_000_000),
            "TBW 56.78 GB (56780000000 bytes)"
        );
    }
}

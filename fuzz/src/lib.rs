//! Helpers shared by the fuzz targets.

use sim_harness::trace::{self, CapacityPolicy, DevicePolicy, TimeUnit, TraceFormat, TraceOptions};

/// Capacities a trace target replays against: the smallest, a page, the
/// `default` preset's drive, and the largest.
const CAPACITIES: [u64; 4] = [1, 4096, 3_734_749_184, u64::MAX];

/// Splits the fuzz input into two option bytes and the trace text, and
/// parses it with `format` (`None`: auto-detection). Every result is
/// acceptable except a panic; a parsed trace must account for its lines.
pub fn parse_trace(format: Option<TraceFormat>, input: &[u8]) {
    let Some((&[knobs, more], data)) = input.split_first_chunk::<2>() else {
        return;
    };
    let opts = TraceOptions {
        format,
        time_unit: [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms][usize::from(knobs & 3) % 3],
        rebase_time: knobs & 4 != 0,
        speed: if knobs & 8 != 0 { 0.37 } else { 1.0 },
        device_policy: if knobs & 16 != 0 {
            DevicePolicy::Select(u32::from(knobs >> 5))
        } else {
            DevicePolicy::Merge
        },
        capacity_policy: [
            CapacityPolicy::Wrap,
            CapacityPolicy::Scale,
            CapacityPolicy::Reject,
        ][usize::from(more & 3) % 3],
        dedup_copies: more & 16 != 0,
        dedup_max_bytes: (more & 32 != 0).then_some(64 << 10),
    };
    let capacity = CAPACITIES[usize::from(more >> 2 & 3)];
    if let Ok(t) = trace::parse_bytes("fuzz", data, &opts, capacity) {
        assert!(t.stats.records <= t.stats.lines, "{:?}", t.stats);
        // Reject passes only requests that fit.
        if opts.capacity_policy == CapacityPolicy::Reject {
            for r in &t.requests {
                assert!(r.max_end_bytes() <= capacity, "{r:?} beyond {capacity}");
            }
        }
    }
}

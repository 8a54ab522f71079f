//! Whole-trace transforms applied after parsing: device policy, time
//! rebase and speed, capacity policy (in that order). See the docs of
//! [`DevicePolicy`], [`TraceOptions`] and [`CapacityPolicy`].

use super::{
    CapacityPolicy, DevicePolicy, TraceError, TraceOp, TraceOptions, TraceRequest, TraceStats,
};

/// Granule that merged device regions are rounded up to.
const MERGE_ALIGN: u64 = 1 << 20;

/// Largest alignment that `Scale` preserves.
const SCALE_ALIGN_MAX_SHIFT: u32 = 12;

/// Applies the options to the parsed requests. `lines[i]` is the line
/// number of `reqs[i]`, for errors.
pub(super) fn apply(
    file: &str,
    mut reqs: Vec<TraceRequest>,
    lines: &[u64],
    stats: &mut TraceStats,
    opts: &TraceOptions,
) -> Result<Vec<TraceRequest>, TraceError> {
    let format = stats.format;
    let line_of = |i: usize| lines.get(i).copied().unwrap_or(0);

    // Devices.
    match opts.device_policy {
        DevicePolicy::Select(d) => {
            if !stats.devices.contains_key(&d) {
                let seen: Vec<String> = stats
                    .devices
                    .keys()
                    .map(|k| stats.device_name(*k))
                    .collect();
                return Err(TraceError::new(
                    file,
                    0,
                    "device",
                    format!(
                        "selected device {d} does not occur in the trace (devices seen: {})",
                        if seen.is_empty() {
                            "none".to_string()
                        } else {
                            seen.join(", ")
                        }
                    ),
                ));
            }
        }
        DevicePolicy::Merge if stats.devices.len() > 1 => {
            let devices: Vec<u32> = stats.devices.keys().copied().collect();
            let max_end = reqs.iter().map(TraceRequest::end_bytes).max().unwrap_or(0);
            let span = max_end
                .checked_next_multiple_of(MERGE_ALIGN)
                .unwrap_or(u64::MAX);
            stats.device_span_bytes = Some(span);
            for (i, r) in reqs.iter_mut().enumerate() {
                let rank = devices.binary_search(&r.device).unwrap_or(0) as u64;
                let moved = rank
                    .checked_mul(span)
                    .and_then(|base| base.checked_add(r.offset_bytes))
                    .filter(|off| off.checked_add(r.len_bytes).is_some());
                match moved {
                    Some(off) => r.offset_bytes = off,
                    None => {
                        return Err(TraceError::new(
                            file,
                            line_of(i),
                            format.offset_field(),
                            format!(
                                "merging {} devices into regions of {span} bytes puts device {} \
                                 beyond 64-bit bytes; select one device instead",
                                devices.len(),
                                r.device
                            ),
                        ))
                    }
                }
            }
        }
        DevicePolicy::Merge => {}
    }

    // Time.
    let min_t = reqs.iter().map(|r| r.time_ns).min().unwrap_or(0);
    let rebase = if opts.rebase_time { min_t } else { 0 };
    for (i, r) in reqs.iter_mut().enumerate() {
        let t = r.time_ns - rebase;
        r.time_ns = if opts.speed == 1.0 {
            t
        } else {
            let scaled = (t as f64 / opts.speed).round();
            // 2^64 as f64; anything at or above does not fit.
            if scaled >= 18_446_744_073_709_551_616.0 {
                return Err(TraceError::new(
                    file,
                    line_of(i),
                    "time",
                    format!(
                        "time {t} ns divided by speed {} overflows 64 bits",
                        opts.speed
                    ),
                ));
            }
            scaled as u64
        };
    }
    let mut prev = 0;
    for (i, r) in reqs.iter().enumerate() {
        if i > 0 && r.time_ns < prev {
            stats.time_regressions += 1;
        }
        prev = r.time_ns;
    }
    stats.first_time_ns = reqs.iter().map(|r| r.time_ns).min().unwrap_or(0);
    stats.last_time_ns = reqs.iter().map(|r| r.time_ns).max().unwrap_or(0);
    stats.time_span_ns = stats.last_time_ns - stats.first_time_ns;

    // Capacity.
    let cap = stats.capacity_bytes;
    let max_end = reqs
        .iter()
        .map(TraceRequest::max_end_bytes)
        .max()
        .unwrap_or(0);
    stats.max_end_bytes = max_end;
    let merged = if stats.device_span_bytes.is_some() {
        " after merging devices"
    } else {
        ""
    };
    let too_long = |i: usize, r: &TraceRequest, what: &str| {
        TraceError::new(
            file,
            line_of(i),
            format.size_field(),
            format!(
                "request of {} bytes is longer than the capacity of {cap} bytes; cannot {what} it",
                r.len_bytes
            ),
        )
    };
    match opts.capacity_policy {
        CapacityPolicy::Reject => {
            if let Some(i) = reqs.iter().position(|r| r.max_end_bytes() > cap) {
                let r = &reqs[i];
                return Err(TraceError::new(
                    file,
                    line_of(i),
                    format.offset_field(),
                    format!(
                        "request [{}, {}){merged} ends beyond the capacity of {cap} bytes \
                         (capacity policy reject; use wrap or scale)",
                        r.offset_bytes,
                        r.end_bytes()
                    ),
                ));
            }
            Ok(reqs)
        }
        CapacityPolicy::Wrap => {
            if max_end <= cap {
                return Ok(reqs);
            }
            let mut out = Vec::with_capacity(reqs.len() + reqs.len() / 16);
            for (i, r) in reqs.iter().enumerate() {
                if r.len_bytes > cap {
                    return Err(too_long(i, r, "wrap"));
                }
                let off = r.offset_bytes % cap;
                if off != r.offset_bytes {
                    stats.wrapped += 1;
                }
                let room = cap - off;
                if let TraceOp::Copy { src_bytes } = r.op {
                    // A copy moves as a whole: both ranges wrap, neither may
                    // be split.
                    let src = src_bytes % cap;
                    if r.len_bytes > room || r.len_bytes > cap - src {
                        return Err(TraceError::new(
                            file,
                            line_of(i),
                            format.offset_field(),
                            "copy crosses the end of the capacity; cannot wrap it \
                             (use scale)",
                        ));
                    }
                    out.push(TraceRequest {
                        offset_bytes: off,
                        op: TraceOp::Copy { src_bytes: src },
                        ..*r
                    });
                    continue;
                }
                if r.len_bytes > room {
                    stats.split += 1;
                    out.push(TraceRequest {
                        offset_bytes: off,
                        len_bytes: room,
                        ..*r
                    });
                    out.push(TraceRequest {
                        offset_bytes: 0,
                        len_bytes: r.len_bytes - room,
                        ..*r
                    });
                } else {
                    out.push(TraceRequest {
                        offset_bytes: off,
                        ..*r
                    });
                }
            }
            Ok(out)
        }
        CapacityPolicy::Scale => {
            if max_end <= cap {
                return Ok(reqs);
            }
            for (i, r) in reqs.iter_mut().enumerate() {
                if r.len_bytes > cap {
                    return Err(too_long(i, r, "scale"));
                }
                let align = 1u64 << r.offset_bytes.trailing_zeros().min(SCALE_ALIGN_MAX_SHIFT);
                let mask = !(align - 1);
                // < cap because offset < max_end; fits in u64.
                let lin =
                    (u128::from(r.offset_bytes) * u128::from(cap) / u128::from(max_end)) as u64;
                let mut off = lin & mask;
                if r.len_bytes > cap - off {
                    off = (cap - r.len_bytes) & mask;
                }
                if off != r.offset_bytes {
                    stats.scaled += 1;
                }
                r.offset_bytes = off;
                if let TraceOp::Copy { src_bytes } = r.op {
                    let lin =
                        (u128::from(src_bytes) * u128::from(cap) / u128::from(max_end)) as u64;
                    let mut src = lin & mask;
                    if r.len_bytes > cap - src {
                        src = (cap - r.len_bytes) & mask;
                    }
                    r.op = TraceOp::Copy { src_bytes: src };
                }
            }
            Ok(reqs)
        }
    }
}

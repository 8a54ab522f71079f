//! Per-request transforms of the second pass: time rebase and speed, and
//! the capacity policy. See [`TraceOptions`](super::TraceOptions) and
//! [`CapacityPolicy`].

use std::collections::VecDeque;

use super::{CapacityPolicy, TraceOp, TraceRequest};

/// Largest alignment that `Scale` preserves.
const SCALE_ALIGN_MAX_SHIFT: u32 = 12;

/// What the second pass counted.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Tally {
    /// Requests returned (pieces of split requests counted one by one).
    pub requests: u64,
    /// Requests the wrap policy moved: offset (or copy source) reduced
    /// modulo the capacity, or a tail carried over the end to 0.
    pub wrapped: u64,
    /// Extra pieces made by splitting requests at the end of the capacity.
    pub split: u64,
    /// Requests whose offset was moved by `Scale`.
    pub scaled: u64,
    /// Requests earlier than their predecessor.
    pub time_regressions: u64,
}

/// `t - rebase`, divided by `speed` and rounded to the nearest ns; `None`
/// if it is beyond [`MAX_TIME_NS`](super::MAX_TIME_NS). Speed 1 involves
/// no floating point.
pub(super) fn time(t: u64, rebase: u64, speed: f64) -> Option<u64> {
    let t = t.saturating_sub(rebase);
    if speed == 1.0 {
        return (t <= super::MAX_TIME_NS).then_some(t);
    }
    let scaled = (t as f64 / speed).round();
    // MAX_TIME_NS = 3 * 2^62 is exact as f64.
    (scaled <= super::MAX_TIME_NS as f64).then_some(scaled as u64)
}

/// A placement failure: the field (`None`: the format's offset field,
/// `Some("size")`: its length field) and the reason, in which `{merged}`
/// stands for a note on merged devices.
pub(super) type PlaceError = (Option<&'static str>, String);

/// Places `r` within `cap` bytes under `policy` (`max_end` is the trace's
/// highest end, which `Scale` maps onto the capacity) and appends the
/// result, one request or the pieces of a split one, to `out`.
pub(super) fn place(
    r: TraceRequest,
    cap: u64,
    max_end: u64,
    policy: CapacityPolicy,
    out: &mut VecDeque<TraceRequest>,
    tally: &mut Tally,
) -> Result<(), PlaceError> {
    let too_long = |what: &str| {
        (
            Some("size"),
            format!(
                "request of {} bytes is longer than the capacity of {cap} bytes; cannot {what} it",
                r.len_bytes
            ),
        )
    };
    let before = out.len();
    match policy {
        CapacityPolicy::Reject => {
            if r.len_bytes > cap {
                return Err(too_long("place"));
            }
            if r.max_end_bytes() > cap {
                return Err((
                    None,
                    format!(
                        "request [{}, {}){{merged}} ends beyond the capacity of {cap} bytes \
                         (capacity policy reject; use wrap or scale)",
                        r.offset_bytes,
                        r.end_bytes()
                    ),
                ));
            }
            out.push_back(r);
        }
        _ if max_end <= cap => out.push_back(r),
        CapacityPolicy::Wrap => {
            if r.len_bytes > cap {
                return Err(too_long("wrap"));
            }
            wrap(r, cap, out, tally);
        }
        CapacityPolicy::Scale => {
            if r.len_bytes > cap {
                return Err(too_long("scale"));
            }
            out.push_back(scale(r, cap, max_end, tally));
        }
    }
    // Folding or scaling may bring a copy's source onto its destination.
    let overlap = out.iter().skip(before).find_map(|p| match p.op {
        TraceOp::Copy { src_bytes }
            if super::ranges_overlap(src_bytes, p.offset_bytes, p.len_bytes) =>
        {
            Some((src_bytes, p.offset_bytes, p.len_bytes))
        }
        _ => None,
    });
    if let Some((src, dst, len)) = overlap {
        out.truncate(before);
        return Err((
            Some("src"),
            format!(
                "the capacity policy ({policy:?}) puts the copy's source at [{src}, {}){{merged}}, \
                 overlapping its destination [{dst}, {}); a copy's ranges must not overlap",
                src + len,
                dst + len
            ),
        ));
    }
    tally.requests += (out.len() - before) as u64;
    Ok(())
}

/// Offsets modulo the capacity; a request that then crosses the end is
/// split there (a copy also where its source crosses it), so no byte is
/// lost. `r.len_bytes <= cap`.
fn wrap(r: TraceRequest, cap: u64, out: &mut VecDeque<TraceRequest>, tally: &mut Tally) {
    let mut dst = r.offset_bytes % cap;
    let mut src = match r.op {
        TraceOp::Copy { src_bytes } => Some(src_bytes % cap),
        _ => None,
    };
    let moved = dst != r.offset_bytes
        || matches!((r.op, src), (TraceOp::Copy { src_bytes }, Some(s)) if s != src_bytes);
    let mut left = r.len_bytes;
    let mut pieces = 0u64;
    while left > 0 {
        let room = (cap - dst).min(src.map_or(u64::MAX, |s| cap - s));
        let n = left.min(room);
        out.push_back(TraceRequest {
            offset_bytes: dst,
            len_bytes: n,
            op: src.map_or(r.op, |s| TraceOp::Copy { src_bytes: s }),
            ..r
        });
        pieces += 1;
        left -= n;
        dst = (dst + n) % cap;
        src = src.map(|s| (s + n) % cap);
    }
    tally.split += pieces - 1;
    if moved || pieces > 1 {
        tally.wrapped += 1;
    }
}

/// Shrinks the address linearly onto the capacity, keeping the offset's
/// alignment (up to 4 KiB); `max_end > cap >= r.len_bytes`.
fn scale(mut r: TraceRequest, cap: u64, max_end: u64, tally: &mut Tally) -> TraceRequest {
    let align = 1u64 << r.offset_bytes.trailing_zeros().min(SCALE_ALIGN_MAX_SHIFT);
    let mask = !(align - 1);
    let map = |o: u64| {
        // < cap because o < max_end; fits in u64.
        let lin = (u128::from(o) * u128::from(cap) / u128::from(max_end)) as u64;
        let mut off = lin & mask;
        if r.len_bytes > cap - off {
            off = (cap - r.len_bytes) & mask;
        }
        off
    };
    let off = map(r.offset_bytes);
    if off != r.offset_bytes {
        tally.scaled += 1;
    }
    r.offset_bytes = off;
    if let TraceOp::Copy { src_bytes } = r.op {
        r.op = TraceOp::Copy {
            src_bytes: map(src_bytes),
        };
    }
    r
}

//! Device and capacity policies.

use super::*;

const MIB: u64 = 1 << 20;

/// An ASCII line (ns, 512 B sectors) for a request in bytes.
fn line(t: u64, dev: u32, off: u64, len: u64, read: bool) -> String {
    format!("{t} {dev} {} {} {}\n", off / 512, len / 512, u8::from(read))
}

fn opts(cap: CapacityPolicy, dev: DevicePolicy) -> TraceOptions {
    TraceOptions {
        format: Some(TraceFormat::Ascii),
        capacity_policy: cap,
        device_policy: dev,
        ..TraceOptions::default()
    }
}

fn spans(t: &Trace) -> Vec<(u64, u64)> {
    t.requests
        .iter()
        .map(|r| (r.offset_bytes, r.len_bytes))
        .collect()
}

#[test]
fn trace_wrap() {
    let text = [
        line(0, 0, 0, 4096, true),
        line(1, 0, MIB + 4096, 4096, true),
        line(2, 0, MIB - 2048, 4096, false),
        line(3, 0, 3 * MIB - 1024, 4096, false),
        line(4, 0, 512, 1024, true),
    ]
    .concat();
    let t = parse_with(&text, &opts(CapacityPolicy::Wrap, DevicePolicy::Merge), MIB).unwrap();
    assert_eq!(
        spans(&t),
        vec![
            (0, 4096),
            (4096, 4096),
            (MIB - 2048, 2048),
            (0, 2048),
            (MIB - 1024, 1024),
            (0, 3072),
            (512, 1024),
        ]
    );
    // The halves of a split request keep its time and op.
    assert_eq!(t.requests[2].time_ns, t.requests[3].time_ns);
    assert_eq!(t.requests[3].op, TraceOp::Write);
    let s = &t.stats;
    // Wrapped: the two reduced offsets and the request crossing the end.
    assert_eq!((s.wrapped, s.split, s.records, s.requests), (3, 2, 5, 7));
    assert_eq!(s.max_end_bytes, 3 * MIB + 3072);
    // A request longer than the capacity cannot be wrapped.
    let e = parse_with(
        &[line(0, 0, 0, 4096, true), line(0, 0, 0, 2 * MIB, true)].concat(),
        &opts(CapacityPolicy::Wrap, DevicePolicy::Merge),
        MIB,
    )
    .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "size"));
    // A trace that fits is untouched.
    let t = parse_with(
        &text,
        &opts(CapacityPolicy::Wrap, DevicePolicy::Merge),
        4 * MIB,
    )
    .unwrap();
    assert_eq!(t.stats.wrapped + t.stats.split, 0);
}

#[test]
fn trace_scale() {
    let text = [
        line(0, 0, 2 * MIB, 4096, true),
        line(1, 0, 4 * MIB - 4096, 4096, true),
        line(2, 0, 512, 512, true),
        line(3, 0, 1024 * 1024 + 1536, 1024, true),
        line(4, 0, 0, 8192, false),
    ]
    .concat();
    // max_end = 4 MiB onto 1 MiB: offsets / 4, aligned down to the
    // original offset's alignment (at most 4 KiB).
    let t = parse_with(
        &text,
        &opts(CapacityPolicy::Scale, DevicePolicy::Merge),
        MIB,
    )
    .unwrap();
    assert_eq!(
        spans(&t),
        vec![
            (MIB / 2, 4096),
            (MIB - 4096, 4096),
            (0, 512),
            ((MIB + 1536) / 4 / 512 * 512, 1024),
            (0, 8192),
        ]
    );
    assert_eq!(t.stats.scaled, 4);
    assert!(t.requests.iter().all(|r| r.end_bytes() <= MIB));
    // Fits: unchanged.
    let t = parse_with(
        &text,
        &opts(CapacityPolicy::Scale, DevicePolicy::Merge),
        4 * MIB,
    )
    .unwrap();
    assert_eq!(t.stats.scaled, 0);
    assert_eq!(spans(&t)[1], (4 * MIB - 4096, 4096));
    // A big request near the end is moved down to fit.
    let t = parse_with(
        &[line(0, 0, 0, 4096, true), line(0, 0, 7 * MIB, MIB, true)].concat(),
        &opts(CapacityPolicy::Scale, DevicePolicy::Merge),
        2 * MIB,
    )
    .unwrap();
    assert_eq!(spans(&t), vec![(0, 4096), (MIB, MIB)]);
}

#[test]
fn trace_reject() {
    let text = [
        line(0, 0, 0, 4096, true),
        line(1, 0, MIB - 4096, 4096, true),
        line(2, 0, MIB - 2048, 4096, false),
        line(3, 0, 5 * MIB, 4096, false),
    ]
    .concat();
    let e = parse_with(
        &text,
        &opts(CapacityPolicy::Reject, DevicePolicy::Merge),
        MIB,
    )
    .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (3, "sector"));
    assert!(e.reason.contains("beyond the capacity"), "{e}");
    let ok = parse_with(
        &text,
        &opts(CapacityPolicy::Reject, DevicePolicy::Merge),
        6 * MIB,
    )
    .unwrap();
    assert_eq!(ok.requests.len(), 4);
    // The default policy is reject.
    assert_eq!(
        TraceOptions::default().capacity_policy,
        CapacityPolicy::Reject
    );
}

#[test]
fn trace_device_merge_and_select() {
    // Devices 7 and 3 (and a comment), largest end 3 MiB + 512 -> span 4 MiB.
    let text = [
        line(0, 7, 0, 4096, true),
        "# x\n".to_string(),
        line(1, 3, 3 * MIB, 512, false),
        line(2, 7, MIB, 4096, true),
    ]
    .concat();
    let t = parse_with(
        &text,
        &opts(CapacityPolicy::Reject, DevicePolicy::Merge),
        BIG,
    )
    .unwrap();
    assert_eq!(t.stats.device_span_bytes, Some(4 * MIB));
    // Sorted devices: 3 -> region 0, 7 -> region 1.
    assert_eq!(
        spans(&t),
        vec![(4 * MIB, 4096), (3 * MIB, 512), (5 * MIB, 4096)]
    );
    assert_eq!(
        t.requests.iter().map(|r| r.device).collect::<Vec<_>>(),
        vec![7, 3, 7]
    );
    // The merged address space is what capacity policies see.
    let e = parse_with(
        &text,
        &opts(CapacityPolicy::Reject, DevicePolicy::Merge),
        5 * MIB,
    )
    .unwrap_err();
    assert_eq!(e.line, 4);
    // Select keeps original offsets.
    let t = parse_with(
        &text,
        &opts(CapacityPolicy::Reject, DevicePolicy::Select(7)),
        5 * MIB,
    )
    .unwrap();
    assert_eq!(spans(&t), vec![(0, 4096), (MIB, 4096)]);
    assert_eq!(t.stats.skipped_of(&SkipKind::OtherDevice), 1);
    assert_eq!(t.stats.device_span_bytes, None);
    assert_eq!(t.stats.devices.len(), 2);
    // Selecting an absent device is an error listing the devices.
    let e = parse_with(
        &text,
        &opts(CapacityPolicy::Reject, DevicePolicy::Select(5)),
        BIG,
    )
    .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (0, "device"));
    assert!(e.reason.contains("devices seen: 3, 7"), "{e}");
    // One device: merge moves nothing.
    let one = [line(0, 9, 5 * MIB, 4096, true)].concat();
    let t = parse_with(
        &one,
        &opts(CapacityPolicy::Reject, DevicePolicy::Merge),
        BIG,
    )
    .unwrap();
    assert_eq!(spans(&t), vec![(5 * MIB, 4096)]);
    assert_eq!(t.stats.device_span_bytes, None);
    // Regions beyond 2^64 bytes are an error, not a wrap.
    let huge = [
        line(0, 0, 0, 512, true),
        line(0, 1, 0, 512, true),
        line(0, 2, 1 << 63, 512, true),
    ]
    .concat();
    let e = parse_with(&huge, &opts(CapacityPolicy::Wrap, DevicePolicy::Merge), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (3, "sector"));
}

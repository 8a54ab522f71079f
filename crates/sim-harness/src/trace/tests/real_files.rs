//! The real traces in `shared/traces` (see its README.md): exact counts,
//! detection, and a few spot values checked with awk.

use std::path::PathBuf;

use super::*;

/// `shared/traces`, or `None` (with a note) when the directory is absent.
fn traces_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "note: {} is absent; skipping the real-trace test",
            dir.display()
        );
        None
    }
}

/// Loads a real trace with default options (auto format, rebase) and a
/// 1 PiB capacity, checking that detection agrees with `expect`.
fn load_real(name: &str, expect: TraceFormat) -> Option<Trace> {
    let path = traces_dir()?.join(name);
    let data = std::fs::read(&path).expect("trace file readable");
    let text = String::from_utf8_lossy(&data);
    let detected = TraceFormat::detect(text.lines().take(64)).expect("detects");
    assert_eq!(detected, expect, "{name}: detected format");
    let auto = load(&path, &TraceOptions::default(), BIG).expect("auto load");
    assert_eq!(auto.stats.format, expect);
    let fixed = load(
        &path,
        &TraceOptions {
            format: Some(expect),
            ..TraceOptions::default()
        },
        BIG,
    )
    .expect("fixed-format load");
    assert_eq!(auto, fixed);
    Some(auto)
}

#[test]
fn trace_real_fin1_ascii() {
    let Some(t) = load_real("fin1_ssdsim_example.ascii", TraceFormat::Ascii) else {
        return;
    };
    let s = &t.stats;
    assert_eq!(s.lines, 10_000);
    assert_eq!(s.records, 10_000);
    assert_eq!(t.requests.len(), 10_000);
    assert_eq!((s.writes, s.reads, s.trims), (5_922, 4_078, 0));
    assert_eq!(s.write_bytes + s.read_bytes, 55_279_104);
    assert_eq!(s.skipped_total(), 0);
    assert_eq!(s.devices.len(), 22);
    assert_eq!(s.devices.values().sum::<u64>(), 10_000);
    // Times are integer ns (the default unit) from 0 to 259.6 s.
    assert_eq!(s.time_span_ns, 259_601_203_125);
    assert_eq!(t.requests[0].time_ns, 0);
    assert_eq!(t.requests[4].time_ns, 78_643_005);
    // 22 devices merged into regions of the largest end (513235456 B)
    // rounded up to 1 MiB = 490 MiB.
    assert_eq!(s.device_span_bytes, Some(490 << 20));
    // Line 2 is `0 1 55590 6 0`: device 1 -> region 1.
    assert_eq!(
        t.requests[1],
        TraceRequest {
            time_ns: 0,
            op: TraceOp::Write,
            offset_bytes: (490 << 20) + 55_590 * 512,
            len_bytes: 6 * 512,
            device: 1
        }
    );
    assert!(s.max_end_bytes <= 22 * (490 << 20));
}

#[test]
fn trace_real_mqsim_tpcc() {
    let Some(t) = load_real("mqsim_tpcc-small.trace", TraceFormat::Ascii) else {
        return;
    };
    let s = &t.stats;
    assert_eq!(s.records, 6_999);
    assert_eq!(t.requests.len(), 6_999);
    assert_eq!((s.writes, s.reads), (2_618, 4_381));
    assert_eq!(s.devices.len(), 16);
    // Raw times 938513000 .. 1075002000 ns, rebased to start at 0.
    assert_eq!(s.first_time_ns, 0);
    assert_eq!(s.last_time_ns, 1_075_002_000 - 938_513_000);
    assert_eq!(t.requests[1].time_ns, 938_828_000 - 938_513_000);
    assert_eq!(s.time_regressions, 0);
    // Addresses reach 232713410560 B (~217 GiB): 16 regions of that, 1 MiB
    // rounded, exceed a 256 GiB device: reject names the first offender.
    let path = traces_dir().unwrap().join("mqsim_tpcc-small.trace");
    let e = load(&path, &TraceOptions::default(), 256 << 30).unwrap_err();
    // Line 1 is device 4, whose region starts at 4 * 217 GiB.
    assert_eq!((e.line, e.field.as_str()), (1, "sector"));
    assert!(e.reason.contains("after merging devices"), "{e}");
    // Selecting device 4 fits and keeps only its requests.
    let sel = load(
        &path,
        &TraceOptions {
            device_policy: DevicePolicy::Select(4),
            ..TraceOptions::default()
        },
        256 << 30,
    )
    .unwrap();
    assert_eq!(sel.stats.records, s.devices[&4]);
    assert_eq!(
        sel.stats.skipped_of(&SkipKind::OtherDevice),
        6_999 - s.devices[&4]
    );
    assert!(sel.requests.iter().all(|r| r.device == 4));
    // Scale onto 64 GiB: every request inside, lengths kept.
    let scaled = load(
        &path,
        &TraceOptions {
            capacity_policy: CapacityPolicy::Scale,
            ..TraceOptions::default()
        },
        64 << 30,
    )
    .unwrap();
    assert_eq!(scaled.requests.len(), 6_999);
    assert!(scaled.requests.iter().all(|r| r.end_bytes() <= 64 << 30));
    assert!(scaled.stats.scaled > 6_000);
}

#[test]
fn trace_real_vscsi() {
    let Some(t) = load_real("cloudphysics_vscsi_sample.csv", TraceFormat::Vscsi) else {
        return;
    };
    let s = &t.stats;
    assert_eq!(s.lines, 113_873);
    assert_eq!(s.records, 113_872);
    assert_eq!(t.requests.len(), 113_872);
    assert_eq!((s.writes, s.reads), (66_898, 46_974));
    assert_eq!(s.write_bytes, 2_408_565_760);
    assert_eq!(s.read_bytes + s.write_bytes, 4_205_978_112);
    assert_eq!(s.skipped_of(&SkipKind::Header), 1);
    assert_eq!(s.skipped_total(), 1);
    assert_eq!(s.devices.len(), 1);
    // Microseconds: 5633898368802 .. 5641098458687 us.
    assert_eq!(
        s.time_span_ns,
        (5_641_098_458_687 - 5_633_898_368_802) * 1_000
    );
    // Line 5: `1,5633898967708,2a,6656,40409911`.
    assert_eq!(
        t.requests[3],
        TraceRequest {
            time_ns: (5_633_898_967_708 - 5_633_898_368_802) * 1_000,
            op: TraceOp::Write,
            offset_bytes: 40_409_911 * 512,
            len_bytes: 6_656,
            device: 0
        }
    );
}

#[test]
fn trace_real_blkparse() {
    let Some(t) = load_real("apress_blkparse.txt", TraceFormat::Blkparse) else {
        return;
    };
    let s = &t.stats;
    assert_eq!(s.lines, 50_000);
    // `awk '$6=="D"' apress_blkparse.txt | wc -l` = 170: 78 R, 86 W, 6 WS.
    assert_eq!(s.records, 170);
    assert_eq!(t.requests.len(), 170);
    assert_eq!((s.reads, s.writes, s.trims), (78, 92, 0));
    assert_eq!((s.read_bytes, s.write_bytes), (9_977_856, 31_252_480));
    // Every other line is counted by kind (awk '{print $6}' | uniq -c).
    let ev = |a: &str| s.skipped_of(&SkipKind::BlkEvent(a.to_string()));
    assert_eq!(ev("A"), 15_525);
    assert_eq!(ev("Q"), 15_524);
    assert_eq!(ev("M"), 14_356);
    assert_eq!(ev("I"), 743);
    assert_eq!(ev("G"), 743);
    assert_eq!(ev("F"), 425);
    assert_eq!(ev("C"), 171);
    assert_eq!(ev("P"), 96);
    assert_eq!(ev("U"), 89);
    assert_eq!(ev("UT"), 3);
    assert_eq!(s.skipped_of(&SkipKind::SchedulerMessage), 2_155);
    assert_eq!(s.skipped_total() + s.records, 50_000);
    assert_eq!(s.skipped_of(&SkipKind::TruncatedFinalLine), 0);
    // One device, sdb = 8,16.
    let sdb = blk_device_id(8, 16).unwrap();
    assert_eq!(s.devices.len(), 1);
    assert_eq!(s.devices[&sdb], 170);
    // First D: `8,16 5 6 0.000031865 18615 D R 1444645666 + 256 [java]`,
    // rebased to 0; last D at 9.352904571 s.
    assert_eq!(
        t.requests[0],
        TraceRequest {
            time_ns: 0,
            op: TraceOp::Read,
            offset_bytes: 1_444_645_666 * 512,
            len_bytes: 256 * 512,
            device: sdb
        }
    );
    assert_eq!(s.time_span_ns, 9_352_904_571 - 31_865);

    // The same file cut in the middle of a dispatch line (no final newline):
    // the partial line is counted, not an error and not a request.
    let path = traces_dir().unwrap().join("apress_blkparse.txt");
    let data = std::fs::read(path).unwrap();
    let text = String::from_utf8(data).unwrap();
    let cut_at = text.find("D   R 1444645922 + 256").unwrap() + "D   R 1444645922 + 25".len();
    let cut = parse_bytes(
        "cut.txt",
        &text.as_bytes()[..cut_at],
        &TraceOptions::default(),
        BIG,
    )
    .unwrap();
    assert_eq!(cut.stats.records, 1);
    assert_eq!(cut.stats.skipped_of(&SkipKind::TruncatedFinalLine), 1);
    // Cut mid-field of a non-dispatch line: also a truncated final line.
    let cut_at = text.find("0.000046560").unwrap() + 4;
    let cut = parse_bytes(
        "cut.txt",
        &text.as_bytes()[..cut_at],
        &TraceOptions::default(),
        BIG,
    )
    .unwrap();
    assert_eq!(cut.stats.skipped_of(&SkipKind::TruncatedFinalLine), 1);
    assert_eq!(
        cut.stats.lines,
        text[..cut_at].matches('\n').count() as u64 + 1
    );
}

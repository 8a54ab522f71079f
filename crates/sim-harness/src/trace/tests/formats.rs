//! Hand-built files per format: values, skip categories, time options,
//! detection, and malformed lines naming the right line and field.

use super::*;

use TraceFormat::{Ascii, Blkparse, Msr, Vscsi};

/// Three MSR lines (format of e.g. `hm_0.csv`): two on disk 1, one on disk 0.
const MSR_SAMPLE: &str = "\
128166372003061629,hm,1,Read,383496192,32768,4118
128166372013061629,hm,1,Write,383528960,4096,1000
128166372013061729,hm,0,write,0,512,1000
";

#[test]
fn trace_msr_times_offsets_ops() {
    // Rebased: filetime ticks are 100 ns.
    let opts = TraceOptions {
        format: Some(Msr),
        ..TraceOptions::default()
    };
    let t = parse_with(MSR_SAMPLE, &opts, BIG).unwrap();
    let r = &t.requests;
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].time_ns, 0);
    assert_eq!(r[1].time_ns, 10_000_000 * 100);
    assert_eq!(r[2].time_ns, 10_000_100 * 100);
    assert_eq!(r[0].op, TraceOp::Read);
    assert_eq!((r[1].op, r[2].op), (TraceOp::Write, TraceOp::Write));
    // Two devices merged: disk 0 is region 0, disk 1 region 1 with a span of
    // 383528960 + 4096 rounded up to 1 MiB = 366 MiB.
    let span = 366u64 << 20;
    assert_eq!(t.stats.device_span_bytes, Some(span));
    assert_eq!(
        (r[0].offset_bytes, r[0].len_bytes),
        (span + 383_496_192, 32_768)
    );
    assert_eq!(
        (r[1].offset_bytes, r[1].len_bytes),
        (span + 383_528_960, 4_096)
    );
    assert_eq!(
        (r[2].offset_bytes, r[2].len_bytes, r[2].device),
        (0, 512, 0)
    );
    // Not rebased: absolute filetime in ns.
    let raw = parse(Msr, MSR_SAMPLE).unwrap();
    assert_eq!(raw.requests[0].time_ns, 12_816_637_200_306_162_900);
    // Select disk 1: original offsets, disk 0 counted as skipped.
    let sel = parse_with(
        MSR_SAMPLE,
        &TraceOptions {
            device_policy: DevicePolicy::Select(1),
            ..opts
        },
        BIG,
    )
    .unwrap();
    assert_eq!(sel.requests.len(), 2);
    assert_eq!(sel.requests[1].offset_bytes, 383_528_960);
    assert_eq!(sel.stats.skipped_of(&SkipKind::OtherDevice), 1);
    assert_eq!(sel.stats.devices.len(), 2);
    // Auto-detection, with and without a header line.
    assert_eq!(TraceFormat::detect(MSR_SAMPLE.lines()), Ok(Msr));
    let with_header =
        format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{MSR_SAMPLE}");
    let t = parse_with(&with_header, &TraceOptions::default(), BIG).unwrap();
    assert_eq!(t.stats.format, Msr);
    assert_eq!(t.stats.skipped_of(&SkipKind::Header), 1);
    assert_eq!(t.requests.len(), 3);
}

#[test]
fn trace_msr_malformed() {
    let good = "128166372003061629,hm,1,Read,0,4096,10\n";
    let bad =
        |line: &str, field: &str| expect_err(Msr, &format!("{good}{good}{line}\n{good}"), 3, field);
    bad("128166372003061629,hm,1,Delete,0,4096,10", "Type");
    bad("-128166372003061629,hm,1,Read,0,4096,10", "Timestamp");
    bad("128166372003061629,,1,Read,0,4096,10", "Hostname");
    bad("128166372003061629,hm,x,Read,0,4096,10", "DiskNumber");
    bad("128166372003061629,hm,1,Read,0x10,4096,10", "Offset");
    bad("128166372003061629,hm,1,Read,0,0,10", "Size");
    bad("128166372003061629,hm,1,Read,0,4096", "ResponseTime");
    bad("128166372003061629,hm,1,Read", "Offset");
    bad("128166372003061629,hm,1,Read,0,4096,10,9", "line");
    bad("999999999999999999,hm,1,Read,0,4096,10", "Timestamp");
    bad("1,hm,1,Read,18446744073709551615,4096,10", "Offset");
}

#[test]
fn trace_ascii_values_and_time_units() {
    let text = "# DiskSim trace\n\n1.5 0 8 16 1\n2.25 0 100 1 0\n";
    let ms = parse_with(
        text,
        &TraceOptions {
            format: Some(Ascii),
            time_unit: TimeUnit::Ms,
            rebase_time: false,
            ..TraceOptions::default()
        },
        BIG,
    )
    .unwrap();
    assert_eq!(ms.stats.skipped_of(&SkipKind::Comment), 1);
    assert_eq!(ms.stats.skipped_of(&SkipKind::Blank), 1);
    assert_eq!(ms.stats.lines, 4);
    assert_eq!(
        ms.requests,
        vec![
            TraceRequest {
                time_ns: 1_500_000,
                op: TraceOp::Read,
                offset_bytes: 4096,
                len_bytes: 8192,
                device: 0
            },
            TraceRequest {
                time_ns: 2_250_000,
                op: TraceOp::Write,
                offset_bytes: 51_200,
                len_bytes: 512,
                device: 0
            }
        ]
    );
    let times = |unit: TimeUnit, rebase: bool, speed: f64| -> Vec<u64> {
        parse_with(
            text,
            &TraceOptions {
                format: Some(Ascii),
                time_unit: unit,
                rebase_time: rebase,
                speed,
                ..TraceOptions::default()
            },
            BIG,
        )
        .unwrap()
        .requests
        .iter()
        .map(|r| r.time_ns)
        .collect()
    };
    assert_eq!(times(TimeUnit::Us, false, 1.0), vec![1_500, 2_250]);
    // Default unit ns: fractions below 1 ns are truncated.
    assert_eq!(times(TimeUnit::Ns, false, 1.0), vec![1, 2]);
    assert_eq!(times(TimeUnit::Ms, true, 1.0), vec![0, 750_000]);
    // Speed divides the rebased time: 2x faster, 4x slower.
    assert_eq!(times(TimeUnit::Ms, true, 2.0), vec![0, 375_000]);
    assert_eq!(times(TimeUnit::Ms, true, 0.25), vec![0, 3_000_000]);
    assert_eq!(times(TimeUnit::Ms, false, 2.0), vec![750_000, 1_125_000]);
    // Out-of-order times are kept and counted.
    let t = parse(Ascii, "10 0 0 1 1\n5 0 0 1 1\n7 0 0 1 1\n").unwrap();
    assert_eq!(t.stats.time_regressions, 1);
    assert_eq!((t.stats.first_time_ns, t.stats.last_time_ns), (5, 10));
    assert_eq!(t.stats.time_span_ns, 5);
}

#[test]
fn trace_bad_options() {
    for speed in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = parse_with(
            "0 0 0 1 1\n",
            &TraceOptions {
                speed,
                ..TraceOptions::default()
            },
            BIG,
        )
        .unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (0, "speed"), "{e}");
    }
    let e = parse_with("0 0 0 1 1\n", &TraceOptions::default(), 0).unwrap_err();
    assert_eq!(e.field, "capacity");
    // Slowing a huge time down past 2^64 ns is an error, not a wrap.
    let e = parse_with(
        "18446744073709551615 0 0 1 1\n",
        &TraceOptions {
            rebase_time: false,
            speed: 0.5,
            ..TraceOptions::default()
        },
        BIG,
    )
    .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (1, "time"));
    let e = load("/nonexistent/trace.csv", &TraceOptions::default(), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (0, "file"));
    assert!(e
        .to_string()
        .starts_with("/nonexistent/trace.csv:0: field file: "));
}

#[test]
fn trace_ascii_malformed() {
    let good = "0 0 0 8 1\n";
    let bad =
        |line: &str, field: &str| expect_err(Ascii, &format!("{good}\n{line}\n{good}"), 3, field);
    bad("0 0 x 8 1", "sector");
    assert!(bad("-5 0 1 8 0", "time").reason.contains("negative"));
    assert!(bad("0 0 1 8 2", "type").reason.contains("unknown op"));
    bad("0 0 1 8", "type");
    bad("0", "device");
    assert!(bad("0 0 1 0 1", "size").reason.contains("zero-length"));
    bad("0 0 1 8 1 9", "line");
    bad("1e3 0 1 8 1", "time");
    bad("0 -1 1 8 1", "device");
    bad("0 4294967296 1 8 1", "device");
    bad("0 0 36028797018963968 8 1", "sector");
    bad("0 0 36028797018963967 2 1", "sector");
    bad("0,0,1,8,1", "device");
    // A missing final newline is fine outside blkparse, but the line must parse.
    assert_eq!(
        parse(Ascii, "0 0 0 8 1\n5 0 0 8 0").unwrap().requests.len(),
        2
    );
    expect_err(Ascii, "0 0 0 8 1\n5 0 0 8", 2, "type");
    // Invalid UTF-8.
    let e = parse_bytes(
        "t.trace",
        b"0 0 0 8 1\n0 0 \xff 8 1\n",
        &raw_opts(Ascii),
        BIG,
    )
    .unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "line"));
    // CRLF line ends are accepted.
    assert_eq!(
        parse(Ascii, "0 0 0 8 1\r\n5 0 0 8 0\r\n")
            .unwrap()
            .requests
            .len(),
        2
    );
}

#[test]
fn trace_vscsi_opcodes_and_malformed() {
    let text = "version,time,op,size,lbn\n\
                1,100,28,4096,8\n\
                1,101,2a,512,9\n\
                1,102,88,8192,16\n\
                1,103,8A,1024,17\n\
                1,104,35,0,0\n\
                1,105,42,24,0\n\
                1,106,0,0,0\n\
                1,107,42,24,0\n";
    let t = parse(Vscsi, text).unwrap();
    let ops: Vec<TraceOp> = t.requests.iter().map(|r| r.op).collect();
    use TraceOp::{Read, Write};
    assert_eq!(ops, vec![Read, Write, Read, Write]);
    assert_eq!(t.requests[0].time_ns, 100_000);
    assert_eq!(
        (t.requests[2].offset_bytes, t.requests[2].len_bytes),
        (16 * 512, 8192)
    );
    assert_eq!(t.stats.skipped_of(&SkipKind::Flush), 1);
    assert_eq!(t.stats.skipped_of(&SkipKind::ScsiCommand(0x42)), 2);
    assert_eq!(t.stats.skipped_of(&SkipKind::ScsiCommand(0x00)), 1);
    assert_eq!(t.stats.skipped_of(&SkipKind::Header), 1);
    assert_eq!(t.stats.records + t.stats.skipped_total(), t.stats.lines);
    assert_eq!(
        SkipKind::ScsiCommand(0x42).to_string(),
        "SCSI 0x42 UNMAP commands"
    );

    let good = "1,100,28,4096,8\n";
    let bad = |line: &str, field: &str| {
        expect_err(
            Vscsi,
            &format!("version,time,op,size,lbn\n{good}{line}\n"),
            3,
            field,
        )
    };
    bad("1,100,zz,4096,8", "op");
    bad("1,100,2a,0,8", "size");
    bad("1,-100,2a,512,8", "time");
    bad("1,100,2a,512", "lbn");
    bad("x,100,2a,512,8", "version");
    bad("1,100,2a,512,8,1", "line");
    bad("1,100,2a,512,36028797018963968", "lbn");
}

#[test]
fn trace_blkparse_kinds() {
    let text = "\
  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kworker/3:1H]
  8,0    3        2     0.000001000   697  D  WS 3417048 + 8 [kworker/3:1H]
  8,0    3        0     0.000002000     0  m   N cfq697S / dispatched a request
  8,0    3        3     0.000003000   697  D  FN [kworker/3:1H]
  8,0    3        4     0.000004000   697  D  FWFS 0 + 0 [jbd2/sda1-8]
  8,0    3        5     0.000005000   697  D  DS 2048 + 2048 [fstrim]
  8,0    3        6     0.000006000   697  D  N 0 (12 00 00 00 24 00 ..) [sg_inq]
  8,0    3        7     0.000007000   697  D  R 100 + 0 [odd]
  8,0    3        8     0.000008000   697  D  RA 64 + 8 (     123) [cat]
  8,0    3        9     0.000009000     0  C  WS 3417048 + 8 [0]
  8,1    1        1     0.000010000   697  D  W 7 + 1 [dd]
CPU3 (sda):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,        4KiB

Total (sda):
Throughput (R/W): 0KiB/s / 4KiB/s
Events (sda): 9 entries
";
    let t = parse(Blkparse, text).unwrap();
    use TraceOp::{Read, Trim, Write};
    let got: Vec<(TraceOp, u64, u64, u64, u32)> = t
        .requests
        .iter()
        .map(|r| (r.op, r.time_ns, r.offset_bytes, r.len_bytes, r.device))
        .collect();
    let sda = blk_device_id(8, 0).unwrap();
    let sda1 = blk_device_id(8, 1).unwrap();
    assert_eq!(sda1, (8 << 20) | 1);
    assert_eq!(
        got[..3],
        [
            (Write, 1_000, 3_417_048 * 512, 4096, sda),
            (Trim, 5_000, 2048 * 512, 2048 * 512, sda),
            (Read, 8_000, 64 * 512, 4096, sda),
        ]
    );
    // The second device (8,1) is merged into region 1.
    assert_eq!(got[3].0, Write);
    assert_eq!(got[3].4, sda1);
    let s = &t.stats;
    assert_eq!((s.reads, s.writes, s.trims), (1, 2, 1));
    assert_eq!(s.skipped_of(&SkipKind::Flush), 2);
    assert_eq!(s.skipped_of(&SkipKind::NoData), 1);
    assert_eq!(s.skipped_of(&SkipKind::ZeroLength), 1);
    assert_eq!(s.skipped_of(&SkipKind::SchedulerMessage), 1);
    assert_eq!(s.skipped_of(&SkipKind::BlkEvent("Q".into())), 1);
    assert_eq!(s.skipped_of(&SkipKind::BlkEvent("C".into())), 1);
    assert_eq!(s.skipped_of(&SkipKind::Summary), 6);
    assert_eq!(s.skipped_of(&SkipKind::Blank), 1);
    assert_eq!(s.records + s.skipped_total(), s.lines);
    assert_eq!(TraceFormat::detect(text.lines()), Ok(Blkparse));
    let shown = s.to_string();
    assert!(shown.contains(&format!("{sda} (8,0): 3")), "{shown}");
    assert!(shown.contains("flushes (not replayed): 2"), "{shown}");
}

#[test]
fn trace_blkparse_malformed() {
    let good = "  8,16   5        6     0.000031865 18615  D   R 1444645666 + 256 [java]\n";
    let bad = |line: &str, field: &str| {
        expect_err(Blkparse, &format!("{good}{good}{line}\n{good}"), 3, field)
    };
    bad("  8,16 5 6 x 18615 D R 1 + 8 [java]", "time");
    bad("  8,16 5 6 -0.5 18615 D R 1 + 8 [java]", "time");
    bad("  8,16 5 6 0.1 18615 D Q 1 + 8 [java]", "rwbs");
    bad("  8,16 5 6 0.1 18615 D RW 1 + 8 [java]", "rwbs");
    bad("  8,16 5 6 0.1 18615 D S 1 + 8 [java]", "rwbs");
    bad("  8,16 5 6 0.1 18615 D R 1 - 8 [java]", "+");
    bad("  8,16 5 6 0.1 18615 D R 1 + x8 [java]", "nsectors");
    bad("  8,16 5 6 0.1 18615 D R 1 + 8", "process");
    bad("  8,16 5 6 0.1 18615 D R 1 + 8 java", "process");
    bad("  8,16 5 6 0.1 18615 D R 1 + 8 (12", "process");
    bad("  8,16 5 6 0.1 18615 D R y + 8 [java]", "sector");
    bad("  8,16 5 6 0.1 18615 D", "rwbs");
    bad("  8,16 5 6 0.1 18615 Dispatch R 1 + 8 [java]", "action");
    bad("  8,16 5 6 0.1", "pid");
    bad("  8-16 5 6 0.1 18615 D R 1 + 8 [java]", "dev");
    bad("  4096,0 5 6 0.1 18615 D R 1 + 8 [java]", "dev");
    bad("hello world", "dev");
    bad("  8,16 x 6 0.1 18615 Q R 1 + 8 [java]", "cpu");
    // Cut final lines without a newline are counted, not errors...
    for cut in [
        "  8,16   5  7  0.1 18615  D   R 14446 + 2",
        "  8,16   5  7  0.1 1",
        "  8,1",
    ] {
        let t = parse(Blkparse, &format!("{good}{cut}")).unwrap();
        assert_eq!(t.requests.len(), 1, "{cut}");
        assert_eq!(
            t.stats.skipped_of(&SkipKind::TruncatedFinalLine),
            1,
            "{cut}"
        );
    }
    // ...but a complete final line without a newline is a request.
    let t = parse(Blkparse, &format!("{good}{}", good.trim_end())).unwrap();
    assert_eq!(t.requests.len(), 2);
    // The same cut line followed by a newline is malformed.
    expect_err(
        Blkparse,
        &format!("{good}  8,16 5 7 0.1 18615 D R 14446 + 2\n"),
        2,
        "process",
    );
}

#[test]
fn trace_detect() {
    assert_eq!(
        TraceFormat::detect(["0 0 303567 7 0", "0.5 1 5 6 1"]),
        Ok(Ascii)
    );
    assert_eq!(
        TraceFormat::detect([
            "version,time,op,size,lbn",
            "1,5633898368802,2a,512,42932745"
        ]),
        Ok(Vscsi)
    );
    assert_eq!(
        TraceFormat::detect(["# c", "", "1,56,2a,512,42"]),
        Ok(Vscsi)
    );
    let e = TraceFormat::detect(["", "# only a comment"]).unwrap_err();
    assert_eq!(e.line, 0);
    let e = TraceFormat::detect(["0 0 1 8 1", "hello there"]).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.reason.contains("matches no known format"), "{e}");
    let e = TraceFormat::detect(["0 0 1 8 1", "1,5,2a,512,4"]).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(
        e.reason
            .contains("looks like vscsi but earlier lines look like ascii"),
        "{e}"
    );
    // Through parse_bytes: the error names the format "field".
    let e = parse_with("what is this\n", &TraceOptions::default(), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (1, "format"));
    // A bad line after lines that agree: the parser's precise error wins.
    let e = parse_with("0 0 1 8 1\n0 0 x 8 1\n", &TraceOptions::default(), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "sector"));
    let e = parse_with("0 0 1 8 1\n1,5,2a,512,4\n", &TraceOptions::default(), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "device"));
    let e = parse_with("", &TraceOptions::default(), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (0, "format"));
    // Names round-trip through FromStr.
    for f in TraceFormat::ALL {
        assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
    }
    assert!("auto".parse::<TraceFormat>().is_err());
    assert_eq!("MS".parse::<TimeUnit>(), Ok(TimeUnit::Ms));
    assert!("s".parse::<TimeUnit>().is_err());
}

#[test]
fn trace_error_display() {
    let e = TraceError {
        file: "a.csv".into(),
        line: 7,
        field: "op".into(),
        reason: "bad".into(),
    };
    assert_eq!(e.to_string(), "a.csv:7: field op: bad");
    let _: &dyn std::error::Error = &e;
}

//! The edges of trace input in every format: lines too long to be text,
//! CR-only line ends, files holding no request, and times the simulator's
//! clock cannot take. Each is an error naming the file (and line), never
//! a trace of 0 requests.

use super::*;

/// One request line of each format at time `t` ns (given in the format's
/// own unit: the times below are all the same instant), with the header
/// lines the format needs.
fn at_time(format: TraceFormat, ns: &str, us: &str, s: &str, ticks: &str) -> String {
    match format {
        TraceFormat::Ascii => format!("{ns} 0 0 8 0\n"),
        TraceFormat::Msr => format!("{ticks},hm,0,Write,0,4096,10\n"),
        TraceFormat::Blkparse => format!("  8,16   0        2 {s}  1234  D W   0 + 8 [fio]\n"),
        TraceFormat::Vscsi => format!("1,{us},2a,4096,0\n"),
        TraceFormat::Ftl => format!("{ns} W 0 4096\n"),
        TraceFormat::Alibaba => format!("17,W,0,4096,{us}\n"),
        TraceFormat::Tencent => format!("{s},0,8,1,1063\n"),
        TraceFormat::Systor => format!("{s},0.004468,W,0,0,4096\n"),
        TraceFormat::Fiu => format!("{ns} 1 p 0 8 W 8 0 550a141f12de6341fba65b0ad0433500\n"),
        TraceFormat::Spc => format!("0,0,512,w,{s}\n"),
        TraceFormat::Fio => {
            format!("fio version 3 iolog\n0 /dev/sda add\n{us} /dev/sda write 0 4096\n")
        }
    }
}

#[test]
fn a_time_the_clock_cannot_take_is_refused_in_every_format() {
    for format in TraceFormat::ALL {
        // 18446744073709551000 ns: fits in 64 bits, but the clock would wrap.
        let text = at_time(
            format,
            "18446744073709551000",
            "18446744073709551",
            "18446744073.709551",
            "184467440737095510",
        );
        let line = text.lines().count() as u64;
        let e = parse(format, &text).expect_err(format.name());
        assert_eq!(
            (e.line, e.field.as_str()),
            (line, format.time_field()),
            "{e}"
        );
        assert!(e.reason.contains("overflows the simulator's clock"), "{e}");
        // The same after rebasing, counted from an earlier first request.
        let first = at_time(format, "0", "0", "0", "0");
        let body = text.lines().last().unwrap_or_default();
        let joined = format!("{first}{body}\n");
        let e = parse_with(
            &joined,
            &TraceOptions {
                format: Some(format),
                ..TraceOptions::default()
            },
            BIG,
        )
        .expect_err(format.name());
        assert_eq!(e.field, format.time_field(), "{e}");
        // At the bound, a request is taken.
        let t = parse(
            format,
            &at_time(
                format,
                &MAX_TIME_NS.to_string(),
                &(MAX_TIME_NS / 1000).to_string(),
                &format!(
                    "{}.{:06}",
                    MAX_TIME_NS / 1_000_000_000,
                    MAX_TIME_NS / 1000 % 1_000_000
                ),
                &(MAX_TIME_NS / 100).to_string(),
            ),
        )
        .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(t.stats.records, 1);
        assert!(t.requests[0].time_ns <= MAX_TIME_NS);
    }
}

#[test]
fn a_file_without_requests_is_refused_in_every_format() {
    for format in TraceFormat::ALL {
        for (text, what) in [
            ("", "the file is empty"),
            (
                "\n# only a comment\n",
                "its 2 lines hold none (1 blank lines, 1 comment lines)",
            ),
        ] {
            let e = parse(format, text).expect_err(format.name());
            assert_eq!((e.line, e.field.as_str()), (0, "file"), "{e}");
            assert_eq!(
                e.to_string(),
                format!("t.trace:0: field file: no request read as format {format}: {what}")
            );
        }
    }
    // A cut blkparse file whose only line is partial holds none either.
    let e = parse(TraceFormat::Blkparse, "x").expect_err("one byte");
    assert!(e.reason.contains("1 truncated final line"), "{e}");
    // Joined files: the empty one is named.
    let e = prepare(
        &[
            TraceInput::Bytes {
                name: "full.trace".into(),
                data: b"0 W 0 4096\n",
            },
            TraceInput::Bytes {
                name: "empty.trace".into(),
                data: b"",
            },
        ],
        &raw_opts(TraceFormat::Ftl),
        BIG,
    )
    .expect_err("an empty file among joined files");
    assert_eq!(e.file, "empty.trace", "{e}");
}

#[test]
fn cr_only_line_ends_are_refused_and_crlf_taken() {
    let e = expect_err(TraceFormat::Ftl, "0 W 0 4096\r1 W 4096 4096\r", 1, "line");
    assert!(e.reason.contains("CR alone"), "{e}");
    // blkparse, whose unterminated final line may be cut, refuses it too.
    let d = "  8,16   0        2     0.1  1234  D W   0 + 8 [fio]";
    expect_err(TraceFormat::Blkparse, &format!("{d}\r{d}\r"), 1, "line");
    let t = parse(TraceFormat::Ftl, "0 W 0 4096\r\n1 W 4096 4096\r\n").unwrap();
    assert_eq!(t.stats.records, 2);
}

#[test]
fn a_line_longer_than_the_bound_is_refused() {
    let long = format!("0 W 0 4096 {}\n", "1".repeat(MAX_LINE_BYTES));
    let e = expect_err(TraceFormat::Ftl, &format!("0 W 0 4096\n{long}"), 2, "line");
    assert!(
        e.reason
            .contains(&format!("longer than {MAX_LINE_BYTES} bytes")),
        "{e}"
    );
    // Without a line end at all, as a binary file may be.
    let e = expect_err(
        TraceFormat::Ascii,
        &"7".repeat(4 * MAX_LINE_BYTES),
        1,
        "line",
    );
    assert!(e.to_string().len() < 300, "{e}");
    // A line at the bound is read (and then judged by its format).
    let pad = " ".repeat(MAX_LINE_BYTES - "0 W 0 4096".len());
    let t = parse(TraceFormat::Ftl, &format!("0 W 0 4096{pad}\r\n")).unwrap();
    assert_eq!(t.stats.records, 1);
}

#[test]
fn deduplication_tables_stay_within_their_bound() {
    let text: String = (0..5000u64)
        .map(|i| format!("{} 1 p {} 8 W 8 0 {i:032x}\n", i * 1000, i * 8))
        .collect();
    let opts = |max: Option<u64>| TraceOptions {
        format: Some(TraceFormat::Fiu),
        dedup_copies: true,
        dedup_max_bytes: max,
        ..TraceOptions::default()
    };
    // 5000 distinct contents need tables of well over 64 KiB.
    let e = parse_with(&text, &opts(Some(64 << 10)), BIG).expect_err("bounded");
    assert_eq!(e.field, "md5", "{e}");
    assert!(e.line > 1 && e.line < 5000, "{e}");
    assert!(e.reason.contains("more than the 65536 bytes"), "{e}");
    // Unbounded, or bounded generously, every line is read.
    for max in [None, Some(64 << 20)] {
        let t = parse_with(&text, &opts(max), BIG).unwrap();
        assert_eq!(t.stats.records, 5000);
    }
    // Without deduplication the bound does not apply.
    let plain = TraceOptions {
        dedup_copies: false,
        ..opts(Some(1))
    };
    assert_eq!(parse_with(&text, &plain, BIG).unwrap().stats.records, 5000);
}

//! The format samples in `crates/ftl-cli/traces/samples/` (written by
//! `generate.py` there from the documented layouts): detection, exact
//! request counts, read/write split and byte totals (counted independently
//! with awk, see `docs/traces.md`), compressed copies, and malformed lines
//! of every new format naming file, line and field.

use std::io::Write;
use std::path::PathBuf;

use super::*;

/// Expected figures of one sample.
struct Expect {
    file: &'static str,
    format: TraceFormat,
    /// Requests, reads, read bytes, writes, write bytes.
    rw: [u64; 5],
    /// Trims, trim bytes, copies, copy bytes.
    other: [u64; 4],
}

const SAMPLES: [Expect; 14] = [
    Expect {
        file: "alibaba.csv",
        format: TraceFormat::Alibaba,
        rw: [2000, 691, 11_894_784, 1309, 22_532_096],
        other: [0; 4],
    },
    Expect {
        file: "tencent.csv",
        format: TraceFormat::Tencent,
        rw: [2000, 671, 12_156_928, 1329, 23_764_992],
        other: [0; 4],
    },
    Expect {
        file: "systor.csv",
        format: TraceFormat::Systor,
        rw: [2000, 1016, 17_317_888, 984, 17_367_040],
        other: [0; 4],
    },
    Expect {
        file: "fiu.txt",
        format: TraceFormat::Fiu,
        rw: [2000, 664, 2_719_744, 1336, 5_472_256],
        other: [0; 4],
    },
    Expect {
        file: "spc.csv",
        format: TraceFormat::Spc,
        rw: [2000, 630, 1_502_720, 1370, 2_985_472],
        other: [0; 4],
    },
    Expect {
        file: "fio-v2.iolog",
        format: TraceFormat::Fio,
        rw: [1960, 453, 7_081_984, 1007, 18_329_600],
        other: [500, 9_310_208, 0, 0],
    },
    Expect {
        file: "fio-v3.iolog",
        format: TraceFormat::Fio,
        rw: [1960, 450, 7_921_664, 1042, 19_304_448],
        other: [468, 8_720_384, 0, 0],
    },
    Expect {
        file: "blkparse-custom.txt",
        format: TraceFormat::Blkparse,
        rw: [1000, 523, 9_433_088, 477, 7_766_016],
        other: [0; 4],
    },
    Expect {
        file: "blkparse.txt",
        format: TraceFormat::Blkparse,
        rw: [1000, 321, 5_861_376, 679, 12_148_736],
        other: [0; 4],
    },
    Expect {
        file: "msr.csv",
        format: TraceFormat::Msr,
        rw: [2000, 646, 11_083_776, 1354, 23_654_400],
        other: [0; 4],
    },
    Expect {
        file: "vscsi.csv",
        format: TraceFormat::Vscsi,
        rw: [2000, 664, 11_063_296, 1336, 23_080_960],
        other: [0; 4],
    },
    Expect {
        file: "ftl.trace",
        format: TraceFormat::Ftl,
        rw: [2000, 459, 8_024_064, 942, 16_764_928],
        other: [499, 8_802_304, 100, 1_855_488],
    },
    Expect {
        file: "zns.trace",
        format: TraceFormat::Ftl,
        rw: [1999, 335, 9_154_560, 1073, 139_132_928],
        other: [0; 4],
    },
    Expect {
        file: "fdp.trace",
        format: TraceFormat::Ftl,
        rw: [2000, 480, 1_966_080, 1520, 6_225_920],
        other: [0; 4],
    },
];

fn sample(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ftl-cli/traces/samples"
    ))
    .join(name)
}

fn figures(s: &TraceStats) -> ([u64; 5], [u64; 4]) {
    (
        [s.records, s.reads, s.read_bytes, s.writes, s.write_bytes],
        [s.trims, s.trim_bytes, s.copies, s.copy_bytes],
    )
}

#[test]
fn trace_samples_exact_counts_auto_and_forced() {
    for e in &SAMPLES {
        let path = sample(e.file);
        let auto = load(&path, &TraceOptions::default(), BIG).unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(auto.stats.format, e.format, "{}: detected format", e.file);
        assert_eq!(figures(&auto.stats), (e.rw, e.other), "{}", e.file);
        assert_eq!(auto.requests.len() as u64, e.rw[0], "{}", e.file);
        let forced = load(
            &path,
            &TraceOptions {
                format: Some(e.format),
                ..TraceOptions::default()
            },
            BIG,
        )
        .unwrap();
        assert_eq!(forced, auto, "{}", e.file);
    }
}

/// Compresses `data` with gzip, zstd and xz.
fn compressed(data: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    let zst = zstd::encode_all(data, 3).unwrap();
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
    xz.write_all(data).unwrap();
    vec![
        ("gz", gz.finish().unwrap()),
        ("zst", zst),
        ("xz", xz.finish().unwrap()),
    ]
}

#[test]
fn trace_samples_compressed_give_the_same_trace() {
    for e in &SAMPLES {
        let data = std::fs::read(sample(e.file)).unwrap();
        let plain = parse_bytes(e.file, &data, &TraceOptions::default(), BIG).unwrap();
        for (ext, packed) in compressed(&data) {
            assert_ne!(packed, data);
            let t = parse_bytes(e.file, &packed, &TraceOptions::default(), BIG)
                .unwrap_or_else(|err| panic!("{} .{ext}: {err}", e.file));
            assert_eq!(t, plain, "{} .{ext}", e.file);
        }
    }
}

#[test]
fn trace_corrupt_archives_are_clean_errors() {
    let data = std::fs::read(sample("alibaba.csv")).unwrap();
    for (ext, mut packed) in compressed(&data) {
        // Flip bytes in the middle of the compressed stream, then cut it.
        let mid = packed.len() / 2;
        for b in &mut packed[mid..mid + 16] {
            *b ^= 0x5a;
        }
        let e = parse_bytes("a.csv", &packed, &TraceOptions::default(), BIG).unwrap_err();
        assert_eq!(e.file, "a.csv", ".{ext}: {e}");
        let cut = &packed[..packed.len() / 3];
        let e = parse_bytes("a.csv", cut, &TraceOptions::default(), BIG).unwrap_err();
        assert!(!e.reason.is_empty(), ".{ext}: {e}");
    }
}

/// Found by the `trace_ftl` fuzz target: xz headers declaring a dictionary
/// of gigabytes are refused by the decoder's memory limit before anything
/// that large is allocated, and the error names the file.
#[test]
fn trace_xz_with_an_absurd_dictionary_is_a_clean_error() {
    let inputs: [&[u8]; 2] = [
        &[
            253, 55, 122, 88, 90, 0, 0, 4, 230, 214, 180, 70, 0, 164, 164, 164, 164, 55, 0, 32,
            164, 164, 37, 164, 93, 91, 91, 91, 91, 91, 91, 91, 0, 27, 0, 106,
        ],
        &[
            253, 55, 122, 88, 90, 0, 0, 4, 230, 214, 180, 70, 0, 164, 164, 164, 164, 219, 164, 87,
            32, 32, 32, 164, 164, 164, 164, 106,
        ],
    ];
    let opts = TraceOptions {
        format: Some(crate::trace::TraceFormat::Ftl),
        ..TraceOptions::default()
    };
    for data in inputs {
        let e = parse_bytes("x.ftl", data, &opts, BIG).unwrap_err();
        assert_eq!(e.file, "x.ftl");
        assert!(e.reason.contains("xz"), "{e}");
    }
}

/// An xz header that asks for a dictionary above the decoder's memory
/// limit is refused with a message saying so.
#[test]
fn trace_xz_over_the_memory_limit_is_refused() {
    let mut opts = liblzma::stream::LzmaOptions::new_preset(6).unwrap();
    opts.dict_size(1 << 30);
    let mut filters = liblzma::stream::Filters::new();
    filters.lzma2(&opts);
    let stream =
        liblzma::stream::Stream::new_stream_encoder(&filters, liblzma::stream::Check::Crc64)
            .unwrap();
    let mut xz = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    xz.write_all(b"0 W 0 4096\n").unwrap();
    let data = xz.finish().unwrap();
    let opts = TraceOptions {
        format: Some(crate::trace::TraceFormat::Ftl),
        ..TraceOptions::default()
    };
    let e = parse_bytes("big-dict.ftl.xz", &data, &opts, BIG).unwrap_err();
    assert_eq!(e.file, "big-dict.ftl.xz");
    assert!(e.reason.contains("memory limit"), "{e}");
}

#[test]
fn trace_fiu_duplicate_content_becomes_copies() {
    let opts = TraceOptions {
        dedup_copies: true,
        ..TraceOptions::default()
    };
    let t = load(sample("fiu.txt"), &opts, BIG).unwrap();
    // 805 of the 1336 writes repeat content that an earlier write still
    // holds elsewhere (counted independently in Python).
    assert_eq!((t.stats.copies, t.stats.copy_bytes), (805, 3_297_280));
    assert_eq!(t.stats.writes, 1336 - 805);
    for r in &t.requests {
        if let TraceOp::Copy { src_bytes } = r.op {
            assert!(src_bytes + r.len_bytes <= r.offset_bytes || r.end_bytes() <= src_bytes);
        }
    }
}

#[test]
fn trace_bom_is_accepted_by_detection() {
    let mut data = b"\xef\xbb\xbf".to_vec();
    data.extend_from_slice(b"0 W 0 4096\n1 R 0 4096\n");
    let t = parse_bytes("bom.ftl", &data, &TraceOptions::default(), BIG).unwrap();
    assert_eq!((t.stats.format, t.requests.len()), (TraceFormat::Ftl, 2));
    // Only at the start: elsewhere it is a malformed line.
    let mut mid = b"0 W 0 4096\n".to_vec();
    mid.extend_from_slice(b"\xef\xbb\xbf1 R 0 4096\n");
    let e = parse_bytes("bom.ftl", &mid, &TraceOptions::default(), BIG).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (2, "time"));
}

#[test]
fn trace_new_formats_malformed_lines_name_line_and_field() {
    use TraceFormat::*;
    let cases: [(TraceFormat, &str, u64, &str); 16] = [
        (Alibaba, "1,R,0,4096,10\n1,X,0,4096,11\n", 2, "opcode"),
        (Alibaba, "1,R,0,4096\n", 1, "timestamp"),
        (Alibaba, "1,W,0,0,10\n", 1, "length"),
        (Tencent, "1538323200,8,8,2,1063\n", 1, "iotype"),
        (Tencent, "1538323200,x,8,1,1063\n", 1, "offset"),
        (
            Systor,
            "Timestamp,Response,IOType,LUN,Offset,Size\n1.5,,R,0,0,-4\n",
            2,
            "Size",
        ),
        (Systor, "1.5,0.1,R,LUN0,0,4096\n", 1, "LUN"),
        (Fiu, "1 2 p 8 8 W 8 0 abc\n", 1, "md5"),
        (
            Fiu,
            "1 2 p 8 8 Q 8 0 550a141f12de6341fba65b0ad0433500\n",
            1,
            "op",
        ),
        (Spc, "0,10,512,x,0.5\n", 1, "Opcode"),
        (Spc, "0,10,512,w\n", 1, "Timestamp"),
        (Fio, "/dev/sda write 0 4096\n", 1, "line"),
        (
            Fio,
            "fio version 2 iolog\n/dev/sda write 0 x\n",
            2,
            "length",
        ),
        (
            Fio,
            "fio version 3 iolog\n5 /dev/sda jump 0 4096\n",
            2,
            "action",
        ),
        (
            Fio,
            "fio version 3 iolog\nx /dev/sda write 0 4096\n",
            2,
            "time",
        ),
        (Blkparse, "8,16 0.5 D W 8 x\n", 1, "nsectors"),
    ];
    for (format, text, line, field) in cases {
        expect_err(format, text, line, field);
    }
}

#[test]
fn trace_fio_v2_waits_move_time_and_v3_uses_timestamps() {
    let v2 = "fio version 2 iolog\nf add\nf open\nf write 0 4096\nf wait 250 0\nf read 0 4096\nf close\n";
    let t = parse(TraceFormat::Fio, v2).unwrap();
    let times: Vec<u64> = t.requests.iter().map(|r| r.time_ns).collect();
    assert_eq!(times, vec![0, 250_000]);
    assert_eq!(t.stats.skipped_of(&SkipKind::FileAction), 3);
    assert_eq!(t.stats.skipped_of(&SkipKind::Wait), 1);
    let v3 = "fio version 3 iolog\n0 a add\n0 b add\n7 a write 0 4096\n9 b trim 4096 4096\n";
    let t = parse(TraceFormat::Fio, v3).unwrap();
    let got: Vec<(u64, u32, TraceOp)> = t
        .requests
        .iter()
        .map(|r| (r.time_ns, r.device, r.op))
        .collect();
    assert_eq!(
        got,
        vec![(7_000, 0, TraceOp::Write), (9_000, 1, TraceOp::Trim)]
    );
}

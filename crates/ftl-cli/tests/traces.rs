//! Trace replay from the command line: every format sample with its exact
//! counts, compressed copies giving the same report, capacity policies,
//! malformed input, and the warnings a newcomer needs.

mod common;

use std::io::Write;
use std::path::PathBuf;

use common::{ftl, get, json_of};
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("traces/samples")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ftl-traces-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Sample, format, requests, reads, read bytes, writes, write bytes
/// (counted with awk; see docs/traces.md).
const SAMPLES: [(&str, &str, [u64; 5]); 13] = [
    (
        "alibaba.csv",
        "alibaba",
        [2000, 691, 11_894_784, 1309, 22_532_096],
    ),
    (
        "tencent.csv",
        "tencent",
        [2000, 671, 12_156_928, 1329, 23_764_992],
    ),
    (
        "systor.csv",
        "systor",
        [2000, 1016, 17_317_888, 984, 17_367_040],
    ),
    ("fiu.txt", "fiu", [2000, 664, 2_719_744, 1336, 5_472_256]),
    ("spc.csv", "spc", [2000, 630, 1_502_720, 1370, 2_985_472]),
    (
        "fio-v2.iolog",
        "fio",
        [1960, 453, 7_081_984, 1007, 18_329_600],
    ),
    (
        "fio-v3.iolog",
        "fio",
        [1960, 450, 7_921_664, 1042, 19_304_448],
    ),
    (
        "blkparse-custom.txt",
        "blkparse",
        [1000, 523, 9_433_088, 477, 7_766_016],
    ),
    (
        "blkparse.txt",
        "blkparse",
        [1000, 321, 5_861_376, 679, 12_148_736],
    ),
    ("msr.csv", "msr", [2000, 646, 11_083_776, 1354, 23_654_400]),
    (
        "vscsi.csv",
        "vscsi",
        [2000, 664, 11_063_296, 1336, 23_080_960],
    ),
    ("ftl.trace", "ftl", [2000, 459, 8_024_064, 942, 16_764_928]),
    // Placement identifiers, ignored by the default (conventional) drive.
    ("fdp.trace", "ftl", [2000, 480, 1_966_080, 1520, 6_225_920]),
];

fn counts(v: &Value) -> [u64; 5] {
    ["requests", "reads", "read_bytes", "writes", "write_bytes"].map(|k| {
        get(v, &format!("trace.{k}"))
            .as_u64()
            .unwrap_or_else(|| panic!("trace.{k}"))
    })
}

/// The report without what may differ between runs of the same trace.
fn figures(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    o.remove("run");
    let t = o.get_mut("trace").unwrap().as_object_mut().unwrap();
    t.remove("file");
    t.remove("files");
    v
}

#[test]
fn every_sample_replays_with_its_exact_counts() {
    for (file, format, expect) in SAMPLES {
        let v = json_of(&ftl(&[
            "replay",
            "--json",
            "--quiet",
            sample(file).to_str().unwrap(),
        ]));
        assert_eq!(get(&v, "trace.format").as_str(), Some(format), "{file}");
        assert_eq!(counts(&v), expect, "{file}");
        assert_eq!(get(&v, "host.requests").as_u64(), Some(expect[0]), "{file}");
        assert_eq!(get(&v, "integrity.mismatches").as_u64(), Some(0), "{file}");
        // Forcing the format gives the same report.
        let forced = json_of(&ftl(&[
            "replay",
            "--json",
            "--quiet",
            "--format",
            format,
            sample(file).to_str().unwrap(),
        ]));
        assert_eq!(figures(forced), figures(v), "{file}");
    }
}

#[test]
fn compressed_samples_give_the_same_report() {
    for (file, _, _) in SAMPLES {
        let data = std::fs::read(sample(file)).unwrap();
        let plain = figures(json_of(&ftl(&[
            "replay",
            "--json",
            "--quiet",
            sample(file).to_str().unwrap(),
        ])));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&data).unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
        xz.write_all(&data).unwrap();
        for (ext, packed) in [
            ("gz", gz.finish().unwrap()),
            ("zst", zstd::encode_all(&data[..], 3).unwrap()),
            ("xz", xz.finish().unwrap()),
        ] {
            let p = tmp(&format!("{file}.{ext}"));
            std::fs::write(&p, packed).unwrap();
            let v = figures(json_of(&ftl(&[
                "replay",
                "--json",
                "--quiet",
                p.to_str().unwrap(),
            ])));
            assert_eq!(v, plain, "{file}.{ext}");
        }
    }
}

fn assert_exit2(args: &[&str], needles: &[&str]) {
    let out = ftl(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "no report on bad input");
    for n in needles {
        assert!(err.contains(n), "stderr {err:?} lacks {n:?}");
    }
}

#[test]
fn malformed_lines_of_new_formats_exit_2_with_file_line_field() {
    for (name, text, needles) in [
        (
            "a.csv",
            "1,R,0,4096,10\n1,R,0,4096,1x\n",
            ["a.csv:2", "timestamp"],
        ),
        (
            "t.csv",
            "1538323200,8,8,1,1063\n1538323200,8,8,7,1063\n",
            ["t.csv:2", "iotype"],
        ),
        (
            "s.csv",
            "Timestamp,Response,IOType,LUN,Offset,Size\n1.5,0.1,Q,0,0,4096\n",
            ["s.csv:2", "IOType"],
        ),
        (
            "f.txt",
            "1 2 p 8 8 W 8 0 550a141f12de6341fba65b0ad043350\n",
            ["f.txt:1", "md5"],
        ),
        (
            "u.csv",
            "0,10,512,w,0.5\n0,1x,512,w,0.6\n",
            ["u.csv:2", "LBA"],
        ),
        (
            "i.log",
            "fio version 3 iolog\n1 /dev/sda write 0\n",
            ["i.log:2", "line"],
        ),
    ] {
        let p = tmp(name);
        std::fs::write(&p, text).unwrap();
        assert_exit2(&["replay", "--json", p.to_str().unwrap()], &needles);
    }
    // A corrupt archive is an input error too, not a crash.
    let p = tmp("bad.zst");
    let mut z = zstd::encode_all(&b"0 W 0 4096\n".repeat(1000)[..], 3).unwrap();
    let n = z.len();
    z[n / 2..].iter_mut().for_each(|b| *b ^= 0xff);
    std::fs::write(&p, z).unwrap();
    assert_exit2(&["replay", "--json", p.to_str().unwrap()], &["bad.zst"]);
}

#[test]
fn capacity_policies_do_what_their_names_say() {
    // The default drive holds 3734753280 bytes.
    let cross = tmp("cross.ftl");
    std::fs::write(&cross, "0 W 3734749184 8192\n").unwrap();
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        cross.to_str().unwrap(),
    ]));
    assert_eq!(get(&v, "host.requests").as_u64(), Some(2));
    assert_eq!(get(&v, "host.write_units").as_u64(), Some(2));
    assert_eq!(get(&v, "trace.wrapped").as_u64(), Some(1));
    assert_eq!(get(&v, "trace.split").as_u64(), Some(1));
    let far = tmp("far.ftl");
    std::fs::write(&far, "0 W 9223372036854775808 4096\n").unwrap();
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        far.to_str().unwrap(),
    ]));
    assert_eq!(get(&v, "trace.wrapped").as_u64(), Some(1));
    let scaled = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        "--capacity-policy",
        "scale",
        far.to_str().unwrap(),
    ]));
    assert_eq!(get(&scaled, "trace.scaled").as_u64(), Some(1));
    assert_eq!(get(&scaled, "host.requests").as_u64(), Some(1));
    // Reject names file and line; so does a request larger than the drive
    // under every policy.
    let two = tmp("two.ftl");
    std::fs::write(&two, "0 W 0 4096\n1 W 3734749184 8192\n").unwrap();
    assert_exit2(
        &[
            "replay",
            "--json",
            "--capacity-policy",
            "reject",
            two.to_str().unwrap(),
        ],
        &["two.ftl:2", "reject"],
    );
    let big = tmp("big.trace");
    std::fs::write(&big, "0 0 100 16777216 0\n").unwrap();
    for policy in ["wrap", "scale", "reject"] {
        assert_exit2(
            &[
                "replay",
                "--json",
                "--capacity-policy",
                policy,
                big.to_str().unwrap(),
            ],
            &["big.trace:1", "longer than the capacity"],
        );
    }
    // A copy with an unaligned destination near the end fits under reject.
    let copy = tmp("copy.ftl");
    std::fs::write(&copy, "0 C 1 8192 3734745088\n").unwrap();
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        "--capacity-policy",
        "reject",
        copy.to_str().unwrap(),
    ]));
    assert_eq!(get(&v, "copy.commands").as_u64(), Some(1));
    assert_eq!(get(&v, "copy.units").as_u64(), Some(2));
}

#[test]
fn a_byte_order_mark_is_accepted() {
    let p = tmp("bom.csv");
    std::fs::write(&p, "\u{feff}1,R,0,4096,10\n1,W,4096,4096,20\n").unwrap();
    let v = json_of(&ftl(&["replay", "--json", "--quiet", p.to_str().unwrap()]));
    assert_eq!(get(&v, "trace.format").as_str(), Some("alibaba"));
    assert_eq!(get(&v, "host.requests").as_u64(), Some(2));
}

#[test]
fn an_implausible_time_unit_is_warned_about() {
    let out = ftl(&["replay", "--time-unit", "ms", "--json"]);
    let v = json_of(&out);
    let w = get(&v, "trace.warnings").as_array().unwrap();
    assert_eq!(w.len(), 1);
    assert!(w[0].as_str().unwrap().contains("--time-unit"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    let v = json_of(&ftl(&["replay", "--json"]));
    assert!(get(&v, "trace.warnings").as_array().unwrap().is_empty());
}

#[test]
fn concat_joins_files_in_time_order_and_parse_only_counts() {
    let a = tmp("h1.csv");
    let b = tmp("h2.csv");
    std::fs::write(&a, "1538323200,0,8,1,1\n1538323202,8,8,0,1\n").unwrap();
    std::fs::write(&b, "1538323201,16,8,1,1\n").unwrap();
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        "--concat",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]));
    assert_eq!(get(&v, "host.requests").as_u64(), Some(3));
    assert_eq!(get(&v, "trace.time_regressions").as_u64(), Some(0));
    assert_eq!(get(&v, "trace.time_span_s").as_f64(), Some(2.0));
    // Without --concat: two runs.
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]));
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--parse-only",
        sample("spc.csv").to_str().unwrap(),
    ]));
    assert_eq!(get(&v, "trace.records").as_u64(), Some(2000));
    assert!(get(&v, "trace.lines_per_second").as_f64().unwrap() > 0.0);
    assert!(v.get("host").is_none(), "nothing simulated");
}

/// Two identical unpaced traces of 20,000 random 4 KiB requests.
fn twin_flows() -> (PathBuf, PathBuf) {
    let mut text = String::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let op = if x.is_multiple_of(2) { 'R' } else { 'W' };
        text.push_str(&format!("0 {op} {} 4096\n", (x >> 8) % 200_000 * 4096));
    }
    let (a, b) = (tmp("flowA.ftl"), tmp("flowB.ftl"));
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    (a, b)
}

#[test]
fn flows_report_per_flow_sections_that_add_up() {
    let (a, b) = twin_flows();
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        "--flows",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]));
    let flows = v["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2);
    let sum: u64 = flows
        .iter()
        .map(|f| get(f, "host.requests").as_u64().unwrap())
        .sum();
    assert_eq!(Some(sum), get(&v, "host.requests").as_u64());
    assert_eq!(sum, 40_000);
    for f in flows {
        for k in [
            "name",
            "perf.iops",
            "perf.latency_us.p99",
            "read_bytes",
            "write_bytes",
        ] {
            assert!(!get(f, k).is_null(), "{k}");
        }
    }
    // Round robin: identical flows get the same share.
    let ratio = get(&flows[0], "perf.iops_contended").as_f64().unwrap()
        / get(&flows[1], "perf.iops_contended").as_f64().unwrap();
    assert!((0.95..1.05).contains(&ratio), "{ratio}");
}

#[test]
fn weighted_arbitration_shares_the_device_by_weight() {
    let (a, b) = twin_flows();
    let heavy = format!("name=heavy,files={},weight=2", a.display());
    let light = format!("name=light,files={},weight=1", b.display());
    let v = json_of(&ftl(&[
        "replay",
        "--json",
        "--quiet",
        "--set",
        "host.arbitration=weighted",
        "--flow",
        &heavy,
        "--flow",
        &light,
    ]));
    let iops = |i: usize| get(&v["flows"][i], "perf.iops_contended").as_f64().unwrap();
    let ratio = iops(0) / iops(1);
    assert!((1.8..2.2).contains(&ratio), "IOPS ratio {ratio}");
    assert_eq!(v["flows"][0]["name"], "heavy");
    // A malformed flow spec is an input error.
    let out = ftl(&["replay", "--json", "--flow", "name=x,weight=2"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_main_job_shows_gc_and_a_waf_above_one() {
    let dir = tmp("main-job");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ftl"))
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let result = text
        .lines()
        .find(|l| l.starts_with("result"))
        .expect("result line");
    // "result  30.1 IOPS, ...; WAF 3.701 with 110 GC victims (...)"
    let after = |key: &str| -> f64 {
        let rest = &result[result.find(key).expect(key) + key.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    assert!(after("WAF ") > 1.0, "{result}");
    let victims: f64 = result
        .split(" GC victims")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(victims > 0.0, "{result}");
    assert!(text.contains("preconditioned to steady state"));
    let report = dir.join("ftl-main-job").join("report.json");
    assert!(text.contains(&report.display().to_string()), "{text}");
    assert!(report.exists());
}

#[test]
fn synth_flows_take_workload_descriptions() {
    let v = json_of(&ftl(&[
        "synth",
        "--json",
        "--quiet",
        "--flow",
        "name=a,requests=3000",
        "--flow",
        "name=b,requests=2000,read_pct=50,weight=3,qd=4",
    ]));
    let flows = v["flows"].as_array().unwrap();
    let reqs: Vec<u64> = flows
        .iter()
        .map(|f| get(f, "host.requests").as_u64().unwrap())
        .collect();
    assert_eq!(reqs, vec![3000, 2000]);
    assert_eq!(get(&v, "host.requests").as_u64(), Some(5000));
    assert_eq!(flows[1]["queue_depth"], 4);
    assert!(get(&flows[1], "host.read_requests").as_u64().unwrap() > 0);
    assert_eq!(get(&flows[0], "host.read_requests").as_u64(), Some(0));
    assert_exit2(
        &["synth", "--json", "--flow", "name=x,bogus=1"],
        &["--flow", "bogus"],
    );
}

#[test]
fn lifetime_header_counts_the_requests_that_ran() {
    let out = ftl(&[
        "lifetime",
        "--quiet",
        "--preset",
        "longftl-mqsim",
        "--set",
        "geometry.blocks_per_plane=64",
        "--set",
        "nand.endurance_scale=0.005",
        "--requests",
        "20000",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let host = text
        .lines()
        .find(|l| l.trim_start().starts_with("requests "))
        .and_then(|l| l.split_whitespace().last())
        .unwrap()
        .to_string();
    assert!(
        text.contains(&format!("{host} requests run, stopped by ")),
        "{text}"
    );
    assert!(text.contains("TBW ") && text.contains(" GB ("), "{text}");
}

/// Files no format can replay are refused by name, never replayed as 0
/// requests: empty under any forced format, one byte under blkparse,
/// CR-only line ends, a line longer than any trace line, a time that would
/// wrap the simulated clock, and a copy onto itself.
#[test]
fn unreplayable_files_exit_2_naming_the_file() {
    let empty = tmp("empty.trace");
    std::fs::write(&empty, "").unwrap();
    for format in ["ascii", "msr", "blkparse", "ftl", "fiu", "fio"] {
        assert_exit2(
            &[
                "replay",
                "--json",
                "--format",
                format,
                empty.to_str().unwrap(),
            ],
            &[
                "empty.trace",
                "no request read as format",
                "the file is empty",
            ],
        );
    }
    let cases: [(&str, &[u8], &str, &[&str]); 6] = [
        (
            "one.blk",
            b"x",
            "blkparse",
            &["one.blk", "no request", "truncated final line"],
        ),
        (
            "cr.trace",
            b"0 W 0 4096\r1 W 4096 4096\r",
            "ftl",
            &["cr.trace:1", "CR alone"],
        ),
        (
            "cr.ascii",
            b"0 0 0 8 0\r1 0 8 8 0\r",
            "auto",
            &["cr.ascii:1", "CR alone"],
        ),
        (
            "late.trace",
            b"0 W 0 4096\n18446744073709551000 W 4096 4096\n",
            "ftl",
            &[
                "late.trace:2",
                "field time",
                "overflows the simulator's clock",
            ],
        ),
        (
            "self.trace",
            b"0 C 4096 4096 4096\n",
            "ftl",
            &["self.trace:1", "field src", "onto itself"],
        ),
        (
            "long.trace",
            &[b'7'; 200_000],
            "ascii",
            &["long.trace:1", "longer than 65536 bytes"],
        ),
    ];
    for (name, bytes, format, needles) in cases {
        let p = tmp(name);
        std::fs::write(&p, bytes).unwrap();
        assert_exit2(
            &["replay", "--json", "--format", format, p.to_str().unwrap()],
            needles,
        );
    }
}

/// `--dedup-copies` tables count against `--max-memory`: a limit that
/// holds the drive and the trace's reading but not the tables of 60,000
/// distinct contents refuses the run, naming the line; without the
/// option the same limit runs.
#[test]
fn dedup_tables_count_against_max_memory() {
    let p = tmp("distinct.fiu");
    let mut f = std::fs::File::create(&p).unwrap();
    for i in 0..60_000u64 {
        writeln!(f, "{} 1 p {} 8 W 8 0 {i:032x}", i * 1000, i * 8).unwrap();
    }
    drop(f);
    let file = p.to_str().unwrap();
    // The drive's need, then the drive's and the reading's, from the
    // refusals under limits below them.
    let mut need = 1u64;
    for _ in 0..2 {
        let limit = need.to_string();
        let out = ftl(&["replay", "--json", "--quiet", file, "--max-memory", &limit]);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{err}");
        need = err
            .split(" bytes), more than")
            .next()
            .and_then(|head| head.rsplit('(').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no need in {err}"));
    }
    // 1 MiB more than both: far less than the tables of 60,000 contents
    // (over 4 MiB), enough for the run without them.
    let limit = (need + (1 << 20)).to_string();
    let plain = ftl(&["replay", "--json", "--quiet", file, "--max-memory", &limit]);
    assert_exit2(
        &[
            "replay",
            "--json",
            "--quiet",
            file,
            "--max-memory",
            &limit,
            "--dedup-copies",
        ],
        &[
            "distinct.fiu:",
            "field md5",
            "deduplication tables",
            "memory limit",
        ],
    );
    let v = json_of(&plain);
    assert_eq!(get(&v, "trace.records"), 60_000);
}

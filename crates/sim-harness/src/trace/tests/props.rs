//! Property tests: no input panics any parser, well-formed generated lines
//! round-trip, and the capacity policies keep their promises.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

const MIB: u64 = 1 << 20;

fn any_format() -> impl Strategy<Value = Option<TraceFormat>> {
    prop_oneof![
        Just(None),
        Just(Some(TraceFormat::Ascii)),
        Just(Some(TraceFormat::Msr)),
        Just(Some(TraceFormat::Blkparse)),
        Just(Some(TraceFormat::Vscsi)),
        Just(Some(TraceFormat::Ftl)),
        Just(Some(TraceFormat::Alibaba)),
        Just(Some(TraceFormat::Tencent)),
        Just(Some(TraceFormat::Systor)),
        Just(Some(TraceFormat::Fiu)),
        Just(Some(TraceFormat::Spc)),
        Just(Some(TraceFormat::Fio)),
    ]
}

fn any_opts() -> impl Strategy<Value = TraceOptions> {
    (
        any_format(),
        prop_oneof![Just(TimeUnit::Ns), Just(TimeUnit::Us), Just(TimeUnit::Ms)],
        any::<bool>(),
        prop_oneof![Just(1.0), Just(0.5), Just(3.0), Just(1e-9)],
        prop_oneof![
            Just(DevicePolicy::Merge),
            (0u32..3).prop_map(DevicePolicy::Select)
        ],
        prop_oneof![
            Just(CapacityPolicy::Wrap),
            Just(CapacityPolicy::Scale),
            Just(CapacityPolicy::Reject)
        ],
    )
        .prop_map(
            |(format, time_unit, rebase_time, speed, device_policy, capacity_policy)| {
                TraceOptions {
                    format,
                    time_unit,
                    rebase_time,
                    speed,
                    device_policy,
                    capacity_policy,
                    dedup_copies: false,
                    dedup_max_bytes: None,
                }
            },
        )
}

fn any_cap() -> impl Strategy<Value = u64> {
    prop_oneof![Just(1u64), Just(4096), Just(MIB), Just(u64::MAX), 1u64..]
}

/// Tokens that sit near the edges of every parser's rules.
const TOKENS: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "7",
    "512",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "36028797018963968",
    "1.5",
    ".",
    "1.",
    ".5",
    "1e3",
    "x",
    "2a",
    "28",
    "35",
    "42",
    "0x8a",
    "Read",
    "Write",
    "read",
    "Timestamp",
    "version",
    "D",
    "Q",
    "m",
    "UT",
    "+",
    "[p]",
    "[",
    "]",
    "(",
    ")",
    "(12",
    "34)",
    "R",
    "W",
    "WS",
    "FWS",
    "FN",
    "N",
    "DS",
    "S",
    "8,16",
    "4096,0",
    "8,",
    ",",
    "CPU0",
    "Total",
    "#",
    "hm",
    "\u{e9}",
    "\t",
    "\r",
];

/// A line of interesting tokens joined by spaces or commas.
fn soup_line() -> impl Strategy<Value = String> {
    vec(
        (
            prop::sample::select(TOKENS),
            prop_oneof![Just(" "), Just(","), Just("  ")],
        ),
        0..14,
    )
    .prop_map(|v| v.into_iter().map(|(t, s)| format!("{t}{s}")).collect())
}

/// A file of soup lines, optionally led by a valid line so that detection
/// picks a format and the parsers see the soup.
fn soup_file() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just(""),
            Just("0 0 1 8 1\n"),
            Just("1,hm,0,Read,0,512,1\n"),
            Just("8,16 1 1 0.1 5 D R 1 + 8 [p]\n"),
            Just("version,time,op,size,lbn\n"),
        ],
        vec(soup_line(), 0..10),
        any::<bool>(),
    )
        .prop_map(|(lead, lines, final_nl)| {
            let mut s = lead.to_string();
            s.push_str(&lines.join("\n"));
            if final_nl {
                s.push('\n');
            }
            s
        })
}

/// Valid lines of every format, the seeds of [`mutated_line`].
const TEMPLATES: &[(&str, char)] = &[
    ("0 1 303567 7 0", ' '),
    ("1.25 1 303567 7 1", ' '),
    ("128166372003061629,hm,1,Read,383496192,32768,4118", ','),
    ("1,5633898368802,2a,512,42932745", ','),
    ("version,time,op,size,lbn", ','),
    (
        "8,16 5 6 0.000031865 18615 D R 1444645666 + 256 [java]",
        ' ',
    ),
    (
        "8,16 5 6 0.000031865 18615 D WS 1444645666 + 256 ( 12) [java]",
        ' ',
    ),
    ("8,16 5 6 0.000031865 18615 D FN [kworker]", ' '),
    (
        "8,16 5 2 0.000001850 18615 Q R 1444645666 + 256 [java]",
        ' ',
    ),
    ("8,16 5 0 0.000012990 0 m N cfq18615S / insert_request", ' '),
    ("CPU0 (sdb):", ' '),
    ("8,16 0.000645181 D W 3483704 128", ' '),
    ("0 W 0 4096", ' '),
    ("30 C 1048576 8192 0", ' '),
    ("3,W,1073741824,8192,1577808000000123", ','),
    ("1538323200,2048,16,1,1063", ','),
    ("Timestamp,Response,IOType,LUN,Offset,Size", ','),
    ("1487155725.002383,0.004468,R,0,387284992,4096", ','),
    ("1487155725.002383,,W,4,387284992,4096", ','),
    (
        "89966528053746 4421 pdflush 1973560 8 W 8 0 550a141f12de6341fba65b0ad0433500",
        ' ',
    ),
    ("0,303567,3584,w,0.000000", ','),
    ("fio version 2 iolog", ' '),
    ("fio version 3 iolog", ' '),
    ("/dev/nbd0 write 2023424 4096", ' '),
    ("16302 /dev/nbd0 read 2023424 4096", ' '),
    ("/dev/nbd0 wait 250 0", ' '),
];

/// A valid line with a few tokens replaced, deleted or inserted, and
/// possibly cut at any character.
fn mutated_line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(TEMPLATES),
        vec((0u8..3, 0usize..16, prop::sample::select(TOKENS)), 0..4),
        prop::option::of(0usize..80),
    )
        .prop_map(|((template, sep), edits, cut)| {
            let mut toks: Vec<&str> = template.split(sep).collect();
            for (kind, at, tok) in edits {
                let at = at % (toks.len() + 1);
                match kind {
                    0 if at < toks.len() => toks[at] = tok,
                    1 if at < toks.len() => {
                        toks.remove(at);
                    }
                    _ => toks.insert(at, tok),
                }
            }
            let line = toks.join(&sep.to_string());
            match cut {
                Some(c) => line.chars().take(c).collect(),
                None => line,
            }
        })
}

/// A valid lead line (so detection usually picks a format) and mutated
/// lines, with or without a final newline.
fn mutated_file() -> impl Strategy<Value = String> {
    (
        prop::sample::select(TEMPLATES),
        vec(mutated_line(), 0..8),
        any::<bool>(),
    )
        .prop_map(|((lead, _), lines, final_nl)| {
            let mut s = format!("{lead}\n{}", lines.join("\n"));
            if final_nl {
                s.push('\n');
            }
            s
        })
}

/// The documented merge rule, applied to requests in their original
/// addresses: regions of max end rounded up to 1 MiB, by device rank.
fn merged(mut reqs: Vec<TraceRequest>) -> Vec<TraceRequest> {
    let mut devs: Vec<u32> = reqs.iter().map(|r| r.device).collect();
    devs.sort_unstable();
    devs.dedup();
    if devs.len() > 1 {
        let max_end = reqs.iter().map(|r| r.end_bytes()).max().unwrap();
        let span = max_end.div_ceil(MIB) * MIB;
        for r in &mut reqs {
            r.offset_bytes += devs.binary_search(&r.device).unwrap() as u64 * span;
        }
    }
    reqs
}

fn roundtrip_opts(format: TraceFormat, time_unit: TimeUnit) -> TraceOptions {
    TraceOptions {
        format: Some(format),
        time_unit,
        rebase_time: false,
        ..TraceOptions::default()
    }
}

fn any_op(trim: bool) -> impl Strategy<Value = TraceOp> {
    if trim {
        prop_oneof![
            Just(TraceOp::Read),
            Just(TraceOp::Write),
            Just(TraceOp::Trim)
        ]
        .boxed()
    } else {
        prop_oneof![Just(TraceOp::Read), Just(TraceOp::Write)].boxed()
    }
}

/// Requests with sector-aligned addresses that fit every format.
fn any_requests(trim: bool, max_dev: u32) -> impl Strategy<Value = Vec<TraceRequest>> {
    vec(
        (
            0u64..(1 << 50),
            any_op(trim),
            0u64..(1 << 40),
            1u64..4096,
            0..max_dev,
        )
            .prop_map(|(time_ns, op, sector, nsect, device)| TraceRequest {
                time_ns,
                op,
                offset_bytes: sector * 512,
                len_bytes: nsect * 512,
                device,
            }),
        1..40,
    )
}

proptest! {
    #[test]
    fn trace_prop_arbitrary_bytes_never_panic(
        data in vec(any::<u8>(), 0..600),
        opts in any_opts(),
        cap in any_cap(),
    ) {
        let _ = parse_bytes("fuzz", &data, &opts, cap);
    }

    #[test]
    fn trace_prop_token_soup_never_panics(
        text in soup_file(),
        opts in any_opts(),
        cap in any_cap(),
        dedup in any::<bool>(),
    ) {
        let opts = TraceOptions { dedup_copies: dedup, ..opts };
        let _ = parse_bytes("fuzz", text.as_bytes(), &opts, cap);
        let _ = TraceFormat::detect(text.lines());
    }

    #[test]
    fn trace_prop_ascii_roundtrip(reqs in any_requests(false, 4), ms in any::<bool>()) {
        let text: String = reqs
            .iter()
            .map(|r| {
                let t = if ms {
                    format!("{}.{:06}", r.time_ns / 1_000_000, r.time_ns % 1_000_000)
                } else {
                    r.time_ns.to_string()
                };
                let ty = u8::from(r.op == TraceOp::Read);
                format!("{t} {} {} {} {ty}\n", r.device, r.offset_bytes / 512, r.len_bytes / 512)
            })
            .collect();
        let unit = if ms { TimeUnit::Ms } else { TimeUnit::Ns };
        let t = parse_with(&text, &roundtrip_opts(TraceFormat::Ascii, unit), u64::MAX).unwrap();
        prop_assert_eq!(t.requests, merged(reqs));
        prop_assert_eq!(TraceFormat::detect(text.lines()), Ok(TraceFormat::Ascii));
    }

    #[test]
    fn trace_prop_msr_roundtrip(
        reqs in any_requests(false, 3),
        host in "[a-z]{1,8}",
    ) {
        let reqs: Vec<TraceRequest> = reqs
            .into_iter()
            .map(|r| TraceRequest { time_ns: r.time_ns / 100 * 100, ..r })
            .collect();
        let text: String = reqs
            .iter()
            .map(|r| {
                let ty = if r.op == TraceOp::Read { "Read" } else { "Write" };
                format!(
                    "{},{host},{},{ty},{},{},{}\n",
                    r.time_ns / 100, r.device, r.offset_bytes, r.len_bytes, r.time_ns % 977
                )
            })
            .collect();
        let t = parse_with(&text, &roundtrip_opts(TraceFormat::Msr, TimeUnit::Ns), u64::MAX)
            .unwrap();
        prop_assert_eq!(t.requests, merged(reqs));
        prop_assert_eq!(TraceFormat::detect(text.lines()), Ok(TraceFormat::Msr));
    }

    #[test]
    fn trace_prop_vscsi_roundtrip(
        reqs in any_requests(false, 1),
        opcodes in vec((0usize..4, any::<bool>()), 40),
    ) {
        let reqs: Vec<TraceRequest> = reqs
            .into_iter()
            .map(|r| TraceRequest { time_ns: r.time_ns / 1000 * 1000, ..r })
            .collect();
        let mut text = String::from("version,time,op,size,lbn\n");
        for (r, (k, upper)) in reqs.iter().zip(&opcodes) {
            let op: u8 = match r.op {
                TraceOp::Read => [0x28, 0x88, 0xa8, 0x08][*k],
                _ => [0x2a, 0x8a, 0xaa, 0x0a][*k],
            };
            let op = if *upper { format!("{op:X}") } else { format!("{op:x}") };
            text.push_str(&format!(
                "1,{},{op},{},{}\n",
                r.time_ns / 1000, r.len_bytes, r.offset_bytes / 512
            ));
        }
        let t = parse_with(&text, &roundtrip_opts(TraceFormat::Vscsi, TimeUnit::Ns), u64::MAX)
            .unwrap();
        prop_assert_eq!(t.requests, reqs);
        prop_assert_eq!(TraceFormat::detect(text.lines()), Ok(TraceFormat::Vscsi));
    }

    #[test]
    fn trace_prop_blkparse_roundtrip(
        reqs in any_requests(true, 2),
        flags in vec(0usize..3, 40),
        noise in vec(0usize..4, 40),
    ) {
        let mut text = String::new();
        let mut noise_lines = 0u64;
        for (i, r) in reqs.iter().enumerate() {
            let (s, ns) = (r.time_ns / 1_000_000_000, r.time_ns % 1_000_000_000);
            let dev = format!("8,{}", r.device * 16);
            let sector = r.offset_bytes / 512;
            let n = r.len_bytes / 512;
            let letter = match r.op {
                TraceOp::Read => "R",
                TraceOp::Write => "W",
                TraceOp::Trim => "D",
                op => unreachable!("blkparse has no {op:?}"),
            };
            let rwbs = match flags[i] {
                0 => letter.to_string(),
                1 => format!("{letter}S"),
                _ => format!("F{letter}M"),
            };
            let head = format!("{dev:>6} {:>3} {:>8} {s:>5}.{ns:09} {:>5}", i % 8, i + 1, 1000 + i);
            match noise[i] {
                0 => {}
                1 => {
                    text.push_str(&format!("{head}  Q {rwbs:>3} {sector} + {n} [proc]\n"));
                    noise_lines += 1;
                }
                2 => {
                    text.push_str(&format!("{head}  m   N cfq1A / dispatched a request\n"));
                    noise_lines += 1;
                }
                _ => {
                    text.push('\n');
                    noise_lines += 1;
                }
            }
            text.push_str(&format!("{head}  D {rwbs:>3} {sector} + {n} [proc name]\n"));
        }
        let reqs: Vec<TraceRequest> = reqs
            .into_iter()
            .map(|r| TraceRequest { device: blk_device_id(8, r.device * 16).unwrap(), ..r })
            .collect();
        let t = parse_with(&text, &roundtrip_opts(TraceFormat::Blkparse, TimeUnit::Ns), u64::MAX)
            .unwrap();
        prop_assert_eq!(t.stats.skipped_total(), noise_lines);
        prop_assert_eq!(t.requests, merged(reqs));
        prop_assert_eq!(
            parse_with(&text, &TraceOptions { format: None, ..roundtrip_opts(TraceFormat::Ascii, TimeUnit::Ns) }, u64::MAX)
                .unwrap()
                .stats
                .format,
            TraceFormat::Blkparse
        );
    }

    #[test]
    fn trace_prop_wrap_and_scale_fit(
        reqs in any_requests(true, 1),
        cap_sectors in 2048u64..(1 << 32),
        odd in 0u64..512,
    ) {
        // Any capacity (not even sector-aligned) of at least 1 MiB; requests
        // are at most 2 MiB - 512, so some must be split.
        let cap = cap_sectors * 512 / 2 + odd;
        let cap = cap.max(2 * MIB);
        let text: String = reqs
            .iter()
            .map(|r| format!("{} 0 {} {} 0\n", r.time_ns, r.offset_bytes / 512, r.len_bytes / 512))
            .collect();
        let total: u64 = reqs.iter().map(|r| r.len_bytes).sum();
        let opts = |p| TraceOptions {
            format: Some(TraceFormat::Ascii),
            capacity_policy: p,
            ..TraceOptions::default()
        };
        let w = parse_with(&text, &opts(CapacityPolicy::Wrap), cap).unwrap();
        prop_assert!(w.requests.iter().all(|r| r.end_bytes() <= cap && r.len_bytes > 0));
        prop_assert_eq!(w.requests.iter().map(|r| r.len_bytes).sum::<u64>(), total);
        prop_assert_eq!(w.stats.requests, w.stats.records + w.stats.split);
        prop_assert_eq!(w.requests.len() as u64, w.stats.requests);
        let s = parse_with(&text, &opts(CapacityPolicy::Scale), cap).unwrap();
        prop_assert!(s.requests.iter().all(|r| r.end_bytes() <= cap));
        prop_assert_eq!(s.requests.len(), reqs.len());
        for (a, b) in s.requests.iter().zip(&reqs) {
            prop_assert_eq!(a.len_bytes, b.len_bytes);
            prop_assert!(a.offset_bytes <= b.offset_bytes);
        }
        let r = parse_with(&text, &opts(CapacityPolicy::Reject), cap);
        let fits = reqs.iter().all(|r| r.end_bytes() <= cap);
        prop_assert_eq!(r.is_ok(), fits);
    }
}

proptest! {
    // Cheap cases, and the interesting mutations are rare: run many.
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn trace_prop_mutated_files_never_panic(
        text in mutated_file(),
        opts in any_opts(),
        cap in any_cap(),
        dedup in any::<bool>(),
    ) {
        let opts = TraceOptions { dedup_copies: dedup, ..opts };
        let _ = parse_bytes("fuzz", text.as_bytes(), &opts, cap);
        let _ = TraceFormat::detect(text.lines());
    }

    #[test]
    fn trace_prop_mutated_lines_never_panic(
        lines in vec(mutated_line(), 1..8),
        opts in any_opts(),
    ) {
        // A file stops at its first error, so also feed every line alone,
        // to every parser, with and without a final newline.
        for line in &lines {
            for format in [None].into_iter().chain(TraceFormat::ALL.map(Some)) {
                for text in [line.clone(), format!("{line}\n")] {
                    let opts = TraceOptions { format, ..opts.clone() };
                    let _ = parse_bytes("fuzz", text.as_bytes(), &opts, MIB);
                }
            }
        }
    }
}

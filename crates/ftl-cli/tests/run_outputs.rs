//! `--out DIR` of a run: report, time series and charts.

mod common;

use std::path::{Path, PathBuf};

use common::{ftl, get, json_of};

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ftl-out-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Checks that `text` is well-formed XML: every element closed in order,
/// quoted attributes, nothing after the root element.
fn assert_well_formed(text: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = text.trim();
    let mut roots = 0;
    while let Some(i) = rest.find('<') {
        assert!(
            !stack.is_empty() || rest[..i].trim().is_empty(),
            "text outside the root element"
        );
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("<!--") {
            let e = r.find("-->").expect("comment closed");
            rest = &r[e + 3..];
            continue;
        }
        if rest.starts_with("<?") || rest.starts_with("<!") {
            let e = rest.find('>').expect("declaration closed");
            rest = &rest[e + 1..];
            continue;
        }
        // Find the end of the tag, skipping '>' inside quoted attributes.
        let mut quote = None;
        let mut end = None;
        for (k, c) in rest.char_indices().skip(1) {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '>') => {
                    end = Some(k);
                    break;
                }
                (None, '<') => panic!("'<' inside a tag"),
                _ => {}
            }
        }
        let end = end.expect("tag closed");
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().expect("closing tag without opening");
            assert_eq!(open, name.trim(), "mismatched closing tag");
        } else {
            let name: String = tag
                .trim_end_matches('/')
                .split_whitespace()
                .next()
                .expect("element name")
                .to_string();
            if stack.is_empty() {
                roots += 1;
            }
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    assert!(rest.trim().is_empty(), "text after the root element");
    assert_eq!(roots, 1, "exactly one root element");
}

/// The CSV as a header and rows of fields.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).expect("timeseries.csv");
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

fn column(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<Option<f64>> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    rows.iter()
        .map(|r| {
            let f = &r[i];
            (!f.is_empty()).then(|| f.parse::<f64>().expect("number"))
        })
        .collect()
}

#[test]
fn synth_out_writes_report_timeseries_and_charts() {
    let dir = out_dir("synth");
    let d = dir.to_str().unwrap();
    let v = json_of(&ftl(&[
        "synth",
        "--requests",
        "4000",
        "--read-pct",
        "30",
        "--json",
        "--quiet",
        "--out",
        d,
    ]));
    for f in [
        "report.json",
        "timeseries.csv",
        "latency_cdf.svg",
        "waf_free_blocks.svg",
        "utilisation.svg",
        "erase_counts.svg",
    ] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
    // The report gains per-die utilisation and read/write CDFs.
    assert!(get(&v, "die.utilisation").as_array().unwrap().len() > 1);
    assert!(!get(&v, "perf.read_latency_us.cdf")
        .as_array()
        .unwrap()
        .is_empty());
    assert!(!get(&v, "perf.write_latency_us.cdf")
        .as_array()
        .unwrap()
        .is_empty());

    let (header, rows) = read_csv(&dir.join("timeseries.csv"));
    for c in [
        "t_s",
        "iops",
        "waf",
        "free_blocks",
        "gc_victims",
        "buffer_occupancy",
        "channel_utilisation",
    ] {
        assert!(header.iter().any(|h| h == c), "missing column {c}");
    }
    assert!(rows.len() > 1, "one row per interval");
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let num = |name: &str| -> Vec<f64> {
        column(&header, &rows, name)
            .into_iter()
            .map(|x| x.expect("always present"))
            .collect()
    };
    let t = num("t_s");
    assert!(t.windows(2).all(|w| w[0] < w[1]), "t_s increases");
    let sim = get(&v, "perf.sim_seconds").as_f64().unwrap();
    assert!(
        *t.last().unwrap() + 1e-6 >= sim,
        "covers the measured phase"
    );
    let sum = |name: &str| num(name).iter().sum::<f64>();
    let host_writes = get(&v, "host.write_units").as_f64().unwrap();
    let host_reads = get(&v, "host.read_units").as_f64().unwrap();
    let requests = get(&v, "host.requests").as_f64().unwrap();
    assert_eq!(sum("write_units"), host_writes);
    assert_eq!(sum("read_units"), host_reads);
    assert_eq!(sum("requests"), requests);
    let from_iops: f64 = num("iops")
        .iter()
        .zip(num("interval_s"))
        .map(|(i, s)| i * s)
        .sum();
    assert!(
        (from_iops - requests).abs() <= requests * 0.01 + 2.0,
        "iops * interval {from_iops} vs {requests} requests"
    );
    let total_gc: f64 = sum("gc_victims");
    assert_eq!(total_gc, get(&v, "ftl.gc_victims").as_f64().unwrap());
    for c in ["buffer_occupancy", "channel_utilisation"] {
        assert!(
            num(c).iter().all(|x| (0.0..=1.0).contains(x)),
            "{c} in 0..1"
        );
    }
    assert!(num("free_blocks").iter().all(|x| *x > 0.0));
    let waf = column(&header, &rows, "waf");
    assert!(waf.iter().flatten().all(|w| *w > 0.0));

    let charts = [
        (
            "latency_cdf.svg",
            &[
                "latency (us, log scale)",
                "cumulative fraction of requests (0-1)",
            ][..],
        ),
        (
            "waf_free_blocks.svg",
            &[
                "simulated time (s)",
                "WAF (programmed units / host-written units)",
                "free blocks (blocks, sum over planes)",
            ][..],
        ),
        (
            "utilisation.svg",
            &[
                "resource (channel / die index)",
                "utilisation (% of simulated time)",
            ][..],
        ),
        (
            "erase_counts.svg",
            &["erases in the measured phase", "blocks (count)"][..],
        ),
    ];
    for (f, labels) in charts {
        let svg = std::fs::read_to_string(dir.join(f)).unwrap();
        assert_well_formed(&svg);
        for l in labels {
            assert!(svg.contains(l), "{f} lacks axis label {l}");
        }
    }

    // Render one chart to PNG when a converter is installed.
    let png = dir.join("waf_free_blocks.png");
    match std::process::Command::new("rsvg-convert")
        .arg(dir.join("waf_free_blocks.svg"))
        .arg("-o")
        .arg(&png)
        .status()
    {
        Ok(s) => {
            assert!(s.success(), "rsvg-convert failed");
            let bytes = std::fs::read(&png).unwrap();
            assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 1000);
        }
        Err(_) => eprintln!("rsvg-convert not found: PNG rendering not checked"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interval_ms_fixes_the_step() {
    let dir = out_dir("interval");
    let d = dir.to_str().unwrap();
    let v = json_of(&ftl(&[
        "synth",
        "--requests",
        "2000",
        "--interval-ms",
        "1",
        "--json",
        "--quiet",
        "--out",
        d,
    ]));
    let (header, rows) = read_csv(&dir.join("timeseries.csv"));
    let len = column(&header, &rows, "interval_s");
    // Every interval but the last partial one is exactly 1 ms.
    assert!(len[..len.len() - 1]
        .iter()
        .all(|x| (x.unwrap() - 0.001).abs() < 1e-9));
    let sim = get(&v, "perf.sim_seconds").as_f64().unwrap();
    // Rows run to the last event (the buffer drains after the last host
    // completion), so they cover at least the measured phase.
    let last = column(&header, &rows, "t_s").last().unwrap().unwrap();
    assert!(last + 1e-6 >= sim);
    assert_eq!(rows.len(), (last / 0.001 - 1e-6).ceil() as usize);
    let bad = ftl(&["synth", "--requests", "10", "--interval-ms", "0", "--quiet"]);
    assert!(!bad.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_time_series_does_not_change_the_report() {
    let run = |extra: &[&str]| {
        let mut args = vec!["synth", "--requests", "3000", "--read-pct", "50", "--json"];
        args.extend_from_slice(extra);
        args.push("--quiet");
        let mut v = json_of(&ftl(&args));
        v.as_object_mut().unwrap().remove("run");
        v
    };
    assert_eq!(run(&[]), run(&["--interval-ms", "0.05"]));
}

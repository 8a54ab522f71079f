//! Zoned namespaces and FDP as users see them: `ftl synth` through the
//! zone host, refusals with exit status 2, and `ftl experiment placement`.

mod common;

use common::{assert_rejected, ftl, ftl_limited, json_of};

const SMALL: [&str; 2] = ["--set", "geometry.blocks_per_plane=64"];

#[test]
fn synth_runs_a_zoned_namespace_through_the_zone_host() {
    let mut args = vec![
        "synth",
        "--set",
        "host.interface=zns",
        "--pattern",
        "random",
        "--read-pct",
        "10",
        "--footprint-pct",
        "80",
        "--requests",
        "400000",
        "--verify",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(&SMALL);
    let v = json_of(&ftl(&args));
    let waf = v["waf"].as_f64().unwrap();
    let e2e = v["waf_end_to_end"].as_f64().unwrap();
    assert!(waf <= 1.05, "device WAF {waf}");
    assert!(
        v["zns"]["compaction_units"].as_u64().unwrap() > 0,
        "{}",
        v["zns"]
    );
    assert!(v["zns"]["resets"].as_u64().unwrap() > 0, "{}", v["zns"]);
    assert_eq!(v["zns"]["refused"].as_u64(), Some(0));
    assert!(
        e2e > waf,
        "compaction adds to the end-to-end WAF: {e2e} vs {waf}"
    );
    assert_eq!(
        v["integrity"]["mismatches"].as_u64(),
        Some(0),
        "{}",
        v["integrity"]
    );
}

#[test]
fn zns_without_a_zone_workload_is_refused() {
    for extra in [
        &["synth", "--precondition"][..],
        &["synth", "--flow", "name=a,pattern=random"][..],
        &["replay", "--precondition"][..],
    ] {
        let mut args = extra.to_vec();
        args.extend_from_slice(&["--set", "host.interface=zns", "--json"]);
        assert_rejected(&ftl(&args), &["host.interface"]);
    }
}

#[test]
fn placement_experiment_shows_fdp_and_zns_gains() {
    let dir = std::env::temp_dir().join(format!("ftl-zns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The 80 % cells (the other fills are `rand20+seq60 fillF SERIES`) and
    // conventional at 50 %.
    let mut args = vec![
        "experiment",
        "placement",
        "--only",
        "rand20+seq60 conventional",
        "--only",
        "rand20+seq60 fdp",
        "--only",
        "rand20+seq60 zns",
        "--only",
        "rand20+seq60 fill50 conventional",
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(&SMALL);
    let out = ftl(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (series, waf, fill) = (col("series"), col("waf"), col("fill"));
    let _ = (
        col("perf.iops"),
        col("perf.latency_us.p99"),
        col("waf_end_to_end"),
    );
    let mut wafs = std::collections::BTreeMap::new();
    let mut conv50 = None;
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let w = f[waf].parse::<f64>().unwrap();
        match f[fill] {
            "80" => {
                wafs.insert(f[series].to_string(), w);
            }
            "50" => conv50 = Some(w),
            other => panic!("fill {other}"),
        }
    }
    let (conv, fdp, zns) = (wafs["conventional"], wafs["fdp"], wafs["zns"]);
    let conv50 = conv50.expect("the 50 % cell");
    assert!(
        conv50 < conv,
        "less fill, less GC: {conv50} at 50 % vs {conv} at 80 %"
    );
    assert!(fdp <= 0.7 * conv, "FDP {fdp} vs conventional {conv}");
    assert!(zns <= 1.05, "ZNS device WAF {zns}");
    for f in [
        "waf.svg",
        "waf_end_to_end.svg",
        "iops.svg",
        "p99.svg",
        "waf_fill.svg",
        "waf_end_to_end_fill.svg",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
}

/// The bundled zone trace and the placement-identifier trace.
fn sample(name: &str) -> String {
    format!("{}/traces/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The report of `ftl replay TRACE --verify` on a small zoned drive.
fn replay_zns(trace: &str) -> serde_json::Value {
    let mut args = vec![
        "replay",
        trace,
        "--set",
        "host.interface=zns",
        "--verify",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(&SMALL);
    json_of(&ftl(&args))
}

#[test]
fn replay_runs_a_zone_trace_through_the_zone_front_end() {
    let v = replay_zns(&sample("zns.trace"));
    let z = &v["zns"];
    // Counted independently from the file with awk (docs/traces.md).
    let counts = [
        ("zone_writes", 1073),
        ("appends", 376),
        ("reads", 335),
        ("opens", 27),
        ("closes", 83),
        ("finishes", 57),
        ("resets", 48),
        ("refused", 0),
    ];
    for (k, n) in counts {
        assert_eq!(z[k].as_u64(), Some(n), "zns.{k}: {z}");
    }
    assert_eq!(z["write_units"].as_u64(), Some(190_578_688 / 4096), "{z}");
    assert_eq!(v["trace"]["appends"].as_u64(), Some(376));
    assert_eq!(v["trace"]["zone_sends"].as_u64(), Some(27 + 83 + 57 + 48));
    assert_eq!(
        v["integrity"]["mismatches"].as_u64(),
        Some(0),
        "{}",
        v["integrity"]
    );
    assert!(
        v["integrity"]["read_checks"].as_u64().unwrap_or(0) > 0,
        "{}",
        v["integrity"]
    );
    // Zone resets leave whole blocks dead: no data moved by GC.
    assert!(v["waf"].as_f64().unwrap() <= 1.05, "WAF {}", v["waf"]);
}

#[test]
fn replay_counts_refused_zone_commands_by_status() {
    let dir = std::env::temp_dir().join(format!("ftl-zns-refused-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("z.trace");
    // Zone 1 (16 MiB) written at its pointer, then off it twice, an append
    // off a zone start, a close of an empty zone; then a reset.
    let z = 16u64 << 20;
    let text = format!(
        "0 W {z} 8192\n1 W {z} 4096\n2 W {} 4096\n3 A {} 4096\n4 ZC {}\n5 ZR {z}\n",
        z + 65536,
        z + 4096,
        2 * z
    );
    std::fs::write(&path, text).unwrap();
    let v = replay_zns(path.to_str().unwrap());
    let by = &v["zns"]["refused_by_status"];
    assert_eq!(v["zns"]["refused"].as_u64(), Some(4), "{}", v["zns"]);
    assert_eq!(by["0xbc"].as_u64(), Some(2), "{by}");
    assert_eq!(by["0x02"].as_u64(), Some(1), "{by}");
    assert_eq!(by["0xbf"].as_u64(), Some(1), "{by}");
    assert_eq!(v["zns"]["resets"].as_u64(), Some(1));
    assert_eq!(v["integrity"]["mismatches"].as_u64(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn zone_commands_and_placement_ids_are_refused_where_they_do_not_belong() {
    let dir = std::env::temp_dir().join(format!("ftl-zns-ns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let zone = write("zone.trace", "0 W 0 4096\n1 W 4096 4096\n2 ZF 0\n");
    let placed = write("placed.trace", "0 W 0 4096 1\n1 W 4096 4096 4\n");
    let trims = write("trim.trace", "0 W 0 4096\n1 T 0 4096\n");
    let fdp = sample("fdp.trace");
    let cases: [(&str, &str, String); 5] = [
        ("conventional", zone.as_str(), format!("{zone}:3: field op")),
        ("fdp", zone.as_str(), format!("{zone}:3: field op")),
        (
            "fdp",
            placed.as_str(),
            format!("{placed}:2: field placement"),
        ),
        (
            "zns",
            placed.as_str(),
            format!("{placed}:1: field placement"),
        ),
        ("zns", trims.as_str(), format!("{trims}:2: field op")),
    ];
    for (iface, file, needle) in &cases {
        let set = format!("host.interface={iface}");
        for flows in [false, true] {
            let mut args = vec!["replay", file, "--set", set.as_str(), "--json"];
            if flows {
                if *iface == "zns" {
                    continue;
                }
                args.push("--flows");
            }
            assert_rejected(&ftl_limited(&args), &[needle.as_str()]);
        }
    }
    // The same placement identifiers are fine under conventional (ignored)
    // and, within fdp.handles, under fdp.
    for (set, file) in [
        ("host.interface=conventional", placed.as_str()),
        ("host.interface=fdp", fdp.as_str()),
    ] {
        let mut args = vec![
            "replay", file, "--set", set, "--verify", "--json", "--quiet",
        ];
        args.extend_from_slice(&SMALL);
        let v = json_of(&ftl(&args));
        assert_eq!(v["integrity"]["mismatches"].as_u64(), Some(0), "{set}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fdp_replay_places_by_identifier() {
    let fdp = sample("fdp.trace");
    let run = |iface: &str| {
        let set = format!("host.interface={iface}");
        let mut args = vec![
            "replay",
            fdp.as_str(),
            "--set",
            set.as_str(),
            "--json",
            "--quiet",
        ];
        args.extend_from_slice(&SMALL);
        json_of(&ftl(&args))
    };
    let v = run("fdp");
    assert_eq!(v["trace"]["placed_writes"].as_u64(), Some(1520));
    // Every write reached the FDP statistics log.
    assert_eq!(
        v["fdp"]["host_bytes_written"].as_u64(),
        Some(6_225_920),
        "{}",
        v["fdp"]
    );
}

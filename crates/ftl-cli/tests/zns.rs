//! Zoned namespaces and FDP as users see them: `ftl synth` through the
//! zone host, refusals with exit status 2, and `ftl experiment placement`.

mod common;

use common::{assert_rejected, ftl, json_of};

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
        &["replay"][..],
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
    let mut args = vec![
        "experiment",
        "placement",
        "--only",
        "rand20+seq60",
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
    let (series, waf) = (col("series"), col("waf"));
    let _ = (
        col("perf.iops"),
        col("perf.latency_us.p99"),
        col("waf_end_to_end"),
    );
    let mut wafs = std::collections::BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        wafs.insert(f[series].to_string(), f[waf].parse::<f64>().unwrap());
    }
    let (conv, fdp, zns) = (wafs["conventional"], wafs["fdp"], wafs["zns"]);
    assert!(fdp <= 0.7 * conv, "FDP {fdp} vs conventional {conv}");
    assert!(zns <= 1.05, "ZNS device WAF {zns}");
    for f in ["waf.svg", "waf_end_to_end.svg", "iops.svg", "p99.svg"] {
        assert!(dir.join(f).exists(), "{f}");
    }
}

//! Flattening of `--json` reports into dotted keys and their comparison,
//! leaving out the figures that depend on the host rather than the
//! simulation.

use serde_json::Value;

/// Leaf key names whose values depend on the host (the `run` section of
/// every report): wall-clock times, rates per wall second and the
/// process's peak resident memory, also per simulated GiB of flash, and
/// its memory on reserved huge pages.
const HOST_KEYS: [&str; 6] = [
    "wall_seconds",
    "total_wall_seconds",
    "host_requests_per_wall_second",
    "peak_rss_mib",
    "bytes_per_simulated_gib",
    "giant_page_mib",
];

/// True when the leaf `key` holds a host-dependent value (see [`HOST_KEYS`];
/// any key naming wall time or resident memory counts too).
pub fn host_dependent(key: &str) -> bool {
    HOST_KEYS.contains(&key) || key.contains("wall") || key.contains("rss")
}

/// Every leaf of `v` as (dotted path, value), arrays indexed `key[i]`,
/// host-dependent leaves left out.
pub fn flatten(v: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if host_dependent(k) {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, format!("{path}[{i}]"), out);
            }
        }
        leaf => out.push((path, leaf.clone())),
    }
}

/// One key whose values differ (`None`: the key is missing on that side).
#[derive(Debug, PartialEq)]
pub struct Difference {
    /// Dotted path of the key.
    pub key: String,
    /// Value in the base report.
    pub base: Option<Value>,
    /// Value in the current report.
    pub current: Option<Value>,
}

/// The keys whose values differ between two reports, in the base's (sorted)
/// key order, then keys only the current report has. Numbers compare exactly.
pub fn differences(base: &Value, current: &Value) -> Vec<Difference> {
    let b = flatten(base);
    let c = flatten(current);
    let cmap: std::collections::HashMap<&str, &Value> =
        c.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let bkeys: std::collections::HashSet<&str> = b.iter().map(|(k, _)| k.as_str()).collect();
    let mut out = Vec::new();
    for (k, v) in &b {
        match cmap.get(k.as_str()) {
            Some(w) if *w == v => {}
            other => out.push(Difference {
                key: k.clone(),
                base: Some(v.clone()),
                current: other.map(|w| (*w).clone()),
            }),
        }
    }
    for (k, w) in &c {
        if !bkeys.contains(k.as_str()) {
            out.push(Difference {
                key: k.clone(),
                base: None,
                current: Some(w.clone()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_reports_differ_only_in_host_keys() {
        let a = json!({"perf": {"iops": 1.5, "latency_us": {"cdf": [[1.0, 0.5]]}},
                       "run": {"wall_seconds": 1.0, "peak_rss_mib": 3.0}});
        let b = json!({"perf": {"iops": 1.5, "latency_us": {"cdf": [[1.0, 0.5]]}},
                       "run": {"wall_seconds": 2.0, "peak_rss_mib": 4.0}});
        assert_eq!(differences(&a, &b), vec![]);
        let c = json!({"run": {"bytes_per_simulated_gib": 9.1}});
        let d = json!({"run": {"bytes_per_simulated_gib": 9.0}});
        assert_eq!(differences(&c, &d), vec![]);
    }

    #[test]
    fn a_changed_figure_and_a_missing_key_are_reported() {
        let a = json!({"perf": {"iops": 1.5, "cdf": [1, 2]}, "waf": 2.0});
        let b = json!({"perf": {"iops": 1.5000001, "cdf": [1, 3]}, "new": true});
        let d = differences(&a, &b);
        let keys: Vec<&str> = d.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys, ["perf.cdf[1]", "perf.iops", "waf", "new"]);
        assert_eq!(d[2].current, None);
        assert_eq!(d[3].base, None);
    }
}

//! Files a run writes into `--out DIR` beside `report.json`: the time
//! series (`timeseries.csv`) and four SVG charts.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;
use sim_harness::sim::Outcome;

use crate::chart::{self, Axes, XySeries};
use crate::CliError;

/// Header of `timeseries.csv`, without the per-channel columns
/// (`ch<N>_utilisation`, one per channel up to 16) that follow it.
pub const CSV_HEADER: &str = "t_s,interval_s,requests,iops,read_units,write_units,host_write_units,waf,free_blocks,gc_victims,buffer_occupancy,channel_utilisation,channel_utilisation_gc";

/// Bins of the erase-count histogram when the counts span more values.
const ERASE_BINS: u32 = 20;

/// The time series of `o` as CSV, one row per sampling interval.
pub fn timeseries_csv(o: &Outcome) -> String {
    let channels = o.chan_busy_ns.len();
    let total = f64::from(o.write_buffer_units.max(1));
    let by_channel = channels.min(sim_harness::series::SERIES_CHANNELS);
    let mut s = String::from(CSV_HEADER);
    for ch in 0..by_channel {
        let _ = write!(s, ",ch{ch}_utilisation");
    }
    s.push('\n');
    for r in &o.series {
        let d = &r.delta;
        let waf = r.waf().map(|w| format!("{w:.4}")).unwrap_or_default();
        let _ = write!(
            s,
            "{:.6},{:.6},{},{:.1},{},{},{},{},{},{},{:.4},{:.4},{:.4}",
            r.end_ns as f64 / 1e9,
            r.len_ns as f64 / 1e9,
            d.requests,
            r.iops(),
            d.read_units,
            d.write_units,
            d.host_write_units,
            waf,
            d.free_blocks,
            d.gc_victims,
            f64::from(d.buffer_used) / total,
            r.channel_utilisation(channels),
            r.channel_utilisation_gc(),
        );
        for ch in 0..by_channel {
            let _ = write!(s, ",{:.4}", r.channel_utilisation_of(ch));
        }
        s.push('\n');
    }
    s
}

/// The `[value, fraction]` pairs at `path` of the report as points.
fn points_at(v: &Value, path: &[&str]) -> Vec<(f64, f64)> {
    let mut cur = v;
    for k in path {
        match cur.get(k) {
            Some(x) => cur = x,
            None => return Vec::new(),
        }
    }
    cur.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Read and write latency CDFs from the report.
pub fn latency_chart(v: &Value) -> Result<String, String> {
    let series: Vec<XySeries> = [("read", "read_latency_us"), ("write", "write_latency_us")]
        .iter()
        .map(|(name, key)| XySeries {
            name: (*name).to_string(),
            points: points_at(v, &["perf", key, "cdf"]),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    chart::cdf(
        &Axes {
            title: "Host request latency CDF",
            x: "latency (us, log scale)",
            y: "cumulative fraction of requests (0-1)",
        },
        &series,
    )
}

/// WAF and free blocks over simulated time.
pub fn waf_chart(o: &Outcome) -> Result<String, String> {
    let t = |r: &sim_harness::series::Sample| r.end_ns as f64 / 1e9;
    let waf = XySeries {
        name: "WAF (interval)".into(),
        points: o
            .series
            .iter()
            .filter_map(|r| Some((t(r), r.waf()?)))
            .collect(),
    };
    let free = XySeries {
        name: "free blocks".into(),
        points: o
            .series
            .iter()
            .map(|r| (t(r), r.delta.free_blocks as f64))
            .collect(),
    };
    chart::dual_lines(
        &Axes {
            title: "Write amplification and free blocks over time",
            x: "simulated time (s)",
            y: "WAF (programmed units / host-written units)",
        },
        "free blocks (blocks, sum over planes)",
        &waf,
        &free,
    )
}

/// Per-channel and per-die utilisation bars.
pub fn utilisation_chart(v: &Value) -> Result<String, String> {
    let arr = |k: &str| -> Vec<f64> {
        v.get(k)
            .and_then(|x| x.get("utilisation"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_f64())
                    .map(|x| x * 100.0)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ch, die) = (arr("channel"), arr("die"));
    let mut cats: Vec<String> = (0..ch.len()).map(|i| format!("ch{i}")).collect();
    cats.extend((0..die.len()).map(|i| format!("die{i}")));
    let pad = |vals: &[f64], before: usize, after: usize| -> Vec<Option<f64>> {
        let mut out = vec![None; before];
        out.extend(vals.iter().map(|x| Some(*x)));
        out.extend(std::iter::repeat_n(None, after));
        out
    };
    let series = vec![
        ("channel".to_string(), pad(&ch, 0, die.len())),
        ("die".to_string(), pad(&die, ch.len(), 0)),
    ];
    chart::grouped_bars(
        &Axes {
            title: "Channel and die utilisation",
            x: "resource (channel / die index)",
            y: "utilisation (% of simulated time)",
        },
        &cats,
        &series,
    )
}

/// Histogram of per-block erases in the measured phase (the erases the
/// summary counts; format and preconditioning are not included).
pub fn erase_chart(o: &Outcome) -> Result<String, String> {
    let lo = o.phase_erase_counts.iter().copied().min().unwrap_or(0);
    let hi = o.phase_erase_counts.iter().copied().max().unwrap_or(0);
    let width = (hi - lo + 1).div_ceil(ERASE_BINS).max(1);
    let bins = (hi - lo) / width + 1;
    let mut counts = vec![0u64; bins as usize];
    for e in &o.phase_erase_counts {
        counts[((e - lo) / width) as usize] += 1;
    }
    let cats: Vec<String> = (0..bins)
        .map(|b| {
            let a = lo + b * width;
            if width == 1 {
                a.to_string()
            } else {
                format!("{a}-{}", a + width - 1)
            }
        })
        .collect();
    let series = vec![(
        "blocks".to_string(),
        counts.iter().map(|c| Some(*c as f64)).collect(),
    )];
    chart::grouped_bars(
        &Axes {
            title: "Erases per good block in the measured phase",
            x: "erases in the measured phase",
            y: "blocks (count)",
        },
        &cats,
        &series,
    )
}

/// Writes `timeseries.csv` and the charts of `o` (report `v`) into `dir`.
pub fn write_all(dir: &Path, v: &Value, o: &Outcome) -> Result<(), CliError> {
    let files: [(&str, Result<String, String>); 5] = [
        ("timeseries.csv", Ok(timeseries_csv(o))),
        ("latency_cdf.svg", latency_chart(v)),
        ("waf_free_blocks.svg", waf_chart(o)),
        ("utilisation.svg", utilisation_chart(v)),
        ("erase_counts.svg", erase_chart(o)),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        let text = text.map_err(CliError::Run)?;
        std::fs::write(&path, text)
            .map_err(|e| CliError::Run(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

//! The run report: one JSON object (stable dotted keys) or a readable summary.

use serde_json::{json, Value};

use crate::sim::Outcome;

/// Cumulative fractions at which `perf.latency_us.cdf` gives the latency,
/// enough to draw a CDF without the whole histogram.
const CDF_POINTS: [f64; 16] = [
    0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0,
];

/// The report of an `ftl raid` run (Reparo), with the stable dotted keys
/// (`reparo.rebuild_seconds`, `integrity.mismatches`, ...).
pub fn raid_report(o: &crate::raid::RaidOutcome) -> Value {
    json!({
        "reparo": {
            "mode": o.mode,
            "rebuild_seconds": o.rebuild_seconds,
            "rebuild_bytes": o.rebuild_bytes,
            "identify_seconds": o.identify_seconds,
            "identify_formula_seconds": o.identify_formula_seconds,
            "failed_lbas": o.failed_lbas,
            "fake_failures": o.fake_failures,
            "truth_failed_lbas": o.truth_failed,
            "status_exact": o.status_exact,
            "p2l_page_reads": o.p2l_page_reads,
            "p2l_ram_blocks": o.p2l_ram_blocks,
            "p2l_ram_pages": o.p2l_ram_pages,
            "failed_die_blocks": o.failed_die_blocks,
            "post_waf": o.post_waf,
            "post_iops": o.post_iops,
            "rebuild_seconds_bw10": o.rebuild_seconds_bw10,
            "identify_1core_seconds": o.identify_by_cores[0],
            "identify_2core_seconds": o.identify_by_cores[1],
            "identify_4core_seconds": o.identify_by_cores[2],
        },
        "raid": {
            "ssds": o.ssds,
            "dies_per_ssd": o.dies,
            "lbas_per_ssd": o.lbas_per_drive,
        },
        "integrity": { "mismatches": o.mismatches },
    })
}

/// Builds the JSON report. Keys named in the project's issues are a public
/// interface: never rename them, only add beside them.
pub fn json_report(o: &Outcome, extra: Value) -> Value {
    let r = &o.run;
    let f = &o.ftl;
    let secs = r.sim_seconds();
    let unit = f64::from(o.plan.core.geometry.unit_bytes());
    let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    let us = |ns: f64| ns / 1e3;
    let host_units = f.host_write_units.max(1) as f64;
    let waf = if f.host_write_units == 0 {
        0.0
    } else {
        (f.host_program_units + f.gc_program_units) as f64 / host_units
    };
    let bytes = (r.read_units + r.write_units) as f64 * unit;
    // Copies as the host sees them: units it wrote, by writing or copying.
    let logical_writes = r.write_units + r.copy_units;
    let copy_waf = if logical_writes == 0 {
        0.0
    } else {
        (f.host_program_units + f.gc_program_units) as f64 / logical_writes as f64
    };
    let sim_ns = (r.end_ns.saturating_sub(r.start_ns)).max(1) as f64;
    let chan_util: Vec<f64> = o.chan_busy_ns.iter().map(|b| *b as f64 / sim_ns).collect();
    let chan_mean = if chan_util.is_empty() {
        0.0
    } else {
        chan_util.iter().sum::<f64>() / chan_util.len() as f64
    };
    let gc_util: Vec<f64> = o
        .gc_busy_ns
        .iter()
        .zip(&o.gc_window_ns)
        .map(|(b, w)| if *w > 0 { *b as f64 / *w as f64 } else { 0.0 })
        .collect();
    let gc_window: u64 = o.gc_window_ns.iter().sum();
    let gc_util_mean = if gc_window > 0 {
        o.gc_busy_ns.iter().sum::<u64>() as f64 / gc_window as f64
    } else {
        0.0
    };
    let die_util: Vec<f64> = o.die_busy_ns.iter().map(|b| *b as f64 / sim_ns).collect();
    let die_util_mean = if die_util.is_empty() {
        0.0
    } else {
        die_util.iter().sum::<f64>() / die_util.len() as f64
    };
    let cdf = |h: &crate::hist::Histogram| -> Vec<Value> {
        if h.count() == 0 {
            return Vec::new();
        }
        CDF_POINTS
            .iter()
            .map(|q| json!([us(h.quantile(*q) as f64), q]))
            .collect()
    };
    let g = &o.plan.core.geometry;
    let per_wall = |x: f64| {
        if o.wall_seconds > 0.0 {
            x / o.wall_seconds
        } else {
            0.0
        }
    };
    let programmed = f.host_program_units + f.gc_program_units + f.pad_units;
    // Peak RSS over the simulated flash: what each GiB of drive costs. Read
    // once, so that `run.peak_rss_mib` and this ratio agree.
    let rss_bytes = crate::sim::peak_rss_mib() * 1_048_576.0;
    let flash_gib =
        (f64::from(g.total_units()) * unit / f64::from(1u32 << 30)).max(f64::MIN_POSITIVE);
    let mut v = json!({
        "host": {
            "requests": r.requests,
            "read_requests": r.read_requests,
            "write_requests": r.write_requests,
            "trim_requests": r.trim_requests,
            "read_units": r.read_units,
            "write_units": r.write_units,
            "trim_units": r.trim_units,
        },
        "nand": {
            "reads": f.nand_reads,
            "programs": f.nand_programs,
            "erases": f.nand_erases,
            "copybacks": f.nand_copybacks,
            "offchip_copies": f.offchip_copy_pages,
            "map_programs": f.map_programs,
            "model": {
                "reads": o.nand.reads,
                "programs": o.nand.programs,
                "erases": o.nand.erases,
                "uncorrectable_reads": o.nand.uncorrectable_reads,
            },
        },
        "waf": waf,
        "buffer": {
            "map_flushes": f.map_flushes,
            "map_sweeps": f.map_sweeps,
            "map_sweep_programs": f.map_sweep_programs,
        },
        "ftl": {
            "host_program_units": f.host_program_units,
            "gc_program_units": f.gc_program_units,
            "pad_units": f.pad_units,
            "gc_victims": f.gc_victims,
            "gc_read_units": f.gc_read_units,
            "gc_stale_units": f.gc_stale_units,
            "wl_moves": f.wl_moves,
            "lost_units": f.lost_units,
            "program_failures": f.program_failures,
            "erase_failures": f.erase_failures,
            "grown_bad_blocks": f.grown_bad_blocks,
            "bad_blocks": f.bad_blocks,
            "pe_min": o.pe_spread.0,
            "pe_max": o.pe_spread.1,
            "logical_units": o.plan.core.logical_units,
            "physical_units": g.total_units(),
        },
        "perf": {
            "iops": per_sec(r.requests as f64),
            "throughput_mib_s": per_sec(bytes) / 1_048_576.0,
            "latency_us": {
                "mean": us(r.latency.mean()),
                "p50": us(r.latency.quantile(0.5) as f64),
                "p99": us(r.latency.quantile(0.99) as f64),
                "p999": us(r.latency.quantile(0.999) as f64),
                "max": us(r.latency.max() as f64),
                "cdf": CDF_POINTS
                    .iter()
                    .map(|q| json!([us(r.latency.quantile(*q) as f64), q]))
                    .collect::<Vec<_>>(),
            },
            "read_latency_us": { "mean": us(r.read_latency.mean()), "cdf": cdf(&r.read_latency) },
            "write_latency_us": { "mean": us(r.write_latency.mean()), "cdf": cdf(&r.write_latency) },
            "flush_latency_us": {
                "mean": us(r.flush_latency.mean()),
                "p50": us(r.flush_latency.quantile(0.5) as f64),
                "p99": us(r.flush_latency.quantile(0.99) as f64),
            },
            "sim_seconds": secs,
        },
        "channel": {
            "utilisation_mean": chan_mean,
            "utilisation": chan_util,
            "utilisation_gc": gc_util_mean,
            "utilisation_gc_by_channel": gc_util,
            "gc_seconds": o.gc_window_ns.iter().map(|w| *w as f64 / 1e9).collect::<Vec<_>>(),
            "busy_gc_us": us(o.gc_own_ns.iter().sum::<u64>() as f64),
        },
        "gc": {
            "retransmitted_bytes": o.gc_retx_bytes,
            "ddt_pages": o.gc_ddt_pages,
            "ddt_messages": o.gc_ddt_messages.to_json(),
        },
        "die": { "utilisation_mean": die_util_mean, "utilisation": die_util },
        "erase": {
            "low_stress_wls": f.low_stress_wls,
            "guarded_erases": f.guarded_erases,
            "mode_history": o.gerase_modes,
        },
        "integrity": {
            "read_checks": r.read_checks,
            "mismatches": r.mismatches,
            "uncorrectable_reads": r.uncorrectable_reads,
            "detected_corruptions": r.detected_corruptions,
        },
        "memory": {
            "core_table_bytes": o.core_table_bytes,
            "epm_bytes": firmware_core::tech::rcftl::copyback::epm_bytes(g, &o.plan.core.copyback).unwrap_or(0),
        },
        "window": {
            "windows": r.windows,
            "user_writes": r.window_latency.count(),
            "user_write_mib_s": per_sec(r.window_latency.count() as f64 * unit) / 1_048_576.0,
            "latency_us": {
                "mean": us(r.window_latency.mean()),
                "p50": us(r.window_latency.quantile(0.5) as f64),
                "p80": us(r.window_latency.quantile(0.8) as f64),
                "p99": us(r.window_latency.quantile(0.99) as f64),
                "cdf": cdf(&r.window_latency),
            },
        },
        "copy": {
            "commands": r.copy_requests,
            "units": r.copy_units,
            "remapped_units": f.copy_remapped_units,
            "fallback_physical": f.copy_fallback_units,
            "write_mib_s": per_sec(logical_writes as f64 * unit) / 1_048_576.0,
            "waf": copy_waf,
        },
        "epm": {
            "active_blocks_max": f.epm_active_blocks_max,
            "offchip_victims": f.offchip_victims,
            "classified_blocks": f.classified_blocks,
            "offchip_pages": f.epm_offchip_pages,
            "no_block_pages": f.epm_no_block_pages,
            "no_room_pages": f.epm_no_room_pages,
            "full_plane_pages": f.epm_full_plane_pages,
        },
        "run": {
            "wall_seconds": o.wall_seconds,
            "total_wall_seconds": o.total_wall_seconds,
            "host_requests_per_wall_second": if o.wall_seconds > 0.0 { r.requests as f64 / o.wall_seconds } else { 0.0 },
            "peak_rss_mib": rss_bytes / 1_048_576.0,
            "giant_page_mib": nand_model::huge::giant_page_bytes() as f64 / 1_048_576.0,
            "precondition_wall_seconds": o.precondition_wall_seconds,
            "bytes_per_simulated_gib": rss_bytes / flash_gib,
            "events_per_wall_second": per_wall(r.events as f64),
            "programmed_units_per_wall_second": per_wall(programmed as f64),
        },
    });
    if o.plan.core.placement.enabled() {
        // The FDP statistics log: bytes the host wrote and bytes written to
        // the media for them (GC relocations and padding included).
        let media = f.host_program_units + f.gc_program_units + f.pad_units;
        v["fdp"] = json!({
            "handles": o.plan.core.placement.handles,
            "host_bytes_written": (f.host_write_units as f64 * unit) as u64,
            "media_bytes_written": (media as f64 * unit) as u64,
        });
    }
    if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
        for (k, x) in e {
            m.insert(k, x);
        }
    }
    v
}

/// A readable summary of a JSON report.
pub fn text_summary(v: &Value) -> String {
    let g = |path: &str| -> String {
        let mut cur = v;
        for k in path.split('.') {
            match cur.get(k) {
                Some(x) => cur = x,
                None => return "-".into(),
            }
        }
        match cur {
            Value::Number(n) if n.is_f64() => format!("{:.3}", n.as_f64().unwrap_or(0.0)),
            other => other.to_string(),
        }
    };
    let mut s = String::new();
    let line =
        |s: &mut String, label: &str, val: String| s.push_str(&format!("  {label:<28} {val}\n"));
    s.push_str("host\n");
    line(&mut s, "requests", g("host.requests"));
    line(
        &mut s,
        "read / write units",
        format!("{} / {}", g("host.read_units"), g("host.write_units")),
    );
    s.push_str("performance (simulated)\n");
    line(&mut s, "simulated seconds", g("perf.sim_seconds"));
    line(&mut s, "IOPS", g("perf.iops"));
    line(&mut s, "throughput MiB/s", g("perf.throughput_mib_s"));
    line(
        &mut s,
        "latency us mean/p50/p99/max",
        format!(
            "{} / {} / {} / {}",
            g("perf.latency_us.mean"),
            g("perf.latency_us.p50"),
            g("perf.latency_us.p99"),
            g("perf.latency_us.max")
        ),
    );
    s.push_str("flash\n");
    line(&mut s, "WAF", g("waf"));
    line(
        &mut s,
        "reads / programs / erases",
        format!(
            "{} / {} / {}",
            g("nand.reads"),
            g("nand.programs"),
            g("nand.erases")
        ),
    );
    line(&mut s, "GC victims", g("ftl.gc_victims"));
    line(
        &mut s,
        "channel utilisation (mean)",
        g("channel.utilisation_mean"),
    );
    line(
        &mut s,
        "channel utilisation in GC",
        g("channel.utilisation_gc"),
    );
    s.push_str("integrity\n");
    line(&mut s, "reads checked", g("integrity.read_checks"));
    line(&mut s, "mismatches", g("integrity.mismatches"));
    line(
        &mut s,
        "uncorrectable reads",
        g("integrity.uncorrectable_reads"),
    );
    line(
        &mut s,
        "detected corruptions",
        g("integrity.detected_corruptions"),
    );
    s.push_str("run\n");
    line(&mut s, "wall seconds", g("run.wall_seconds"));
    line(
        &mut s,
        "host requests / wall second",
        g("run.host_requests_per_wall_second"),
    );
    line(&mut s, "peak RSS MiB", g("run.peak_rss_mib"));
    s
}

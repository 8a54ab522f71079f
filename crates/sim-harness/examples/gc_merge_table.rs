//! Prints the analytic GC merge-time table of `docs/results.md`: merge time,
//! throughput and channel utilisation of ICB/LCB/GCB/DGCB with and without
//! cache program on the Table II device (seed 002), single plane.

use sim_harness::gc_merge::{CopyMode, Merge, TABLE_II};

fn main() {
    let rows: [(CopyMode, bool, f64); 8] = [
        (CopyMode::Icb, false, 0.0),
        (CopyMode::Lcb, false, 0.0),
        (CopyMode::Gcb, false, 0.0),
        (CopyMode::Gcb, true, 0.0),
        (CopyMode::Dgcb, false, 0.0),
        (CopyMode::Dgcb, true, 0.0),
        (CopyMode::Dgcb, false, 1.0),
        (CopyMode::Dgcb, true, 1.0),
    ];
    println!("| mode | cache program | errors | N | merge time (us) | us/page | MB/s | channel busy (us) | channel utilisation |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|");
    for (mode, cache, error_rate) in rows {
        for pages in [1u32, 8, 128] {
            let m = TABLE_II.merge(Merge {
                mode,
                cache,
                planes: 1,
                pages,
                error_rate,
            });
            let us = m.time_ns as f64 / 1e3;
            println!(
                "| {} | {} | {} bits | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1}% |",
                mode.name(),
                if cache { "yes" } else { "no" },
                TABLE_II.error_bits(error_rate),
                pages,
                us,
                us / f64::from(pages),
                m.throughput_mb_s(),
                m.channel_busy_ns as f64 / 1e3,
                100.0 * m.channel_utilisation(),
            );
        }
    }
    println!();
    println!("| DGCB throughput loss at 192 error bits | single plane | two-plane |");
    println!("|---|---:|---:|");
    for cache in [false, true] {
        let loss = |planes: u32, pages: u32| {
            let t = |e| {
                TABLE_II
                    .merge(Merge {
                        mode: CopyMode::Dgcb,
                        cache,
                        planes,
                        pages,
                        error_rate: e,
                    })
                    .throughput_mb_s()
            };
            100.0 * (1.0 - t(1.0) / t(0.0))
        };
        let worst = |planes: u32| {
            (1..=128u32)
                .map(|k| k * planes)
                .filter(|&n| !cache || n > planes)
                .map(|n| loss(planes, n))
                .fold(0.0f64, f64::max)
        };
        println!(
            "| {} (worst N{}) | {:.2}% | {:.2}% |",
            if cache {
                "cache program"
            } else {
                "no cache program"
            },
            if cache { " > one operation" } else { "" },
            worst(1),
            worst(2),
        );
    }
}

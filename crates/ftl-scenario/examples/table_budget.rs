//! Lent-table memory of the core: the per-GiB formula, checked against
//! `FullFtl::lend_bytes` for the simulator's preset drives and the bare-metal
//! scenario (`cargo xtask budget` prints this).

use std::mem::size_of;

use firmware_core::ftl::tables::{BlockMeta, OpEntry, PlaneState, SlotMeta};
use firmware_core::persist::map_dirty::DirtyLink;
use firmware_core::persist::tp::{meta_page_bytes, META_BUFS};
use firmware_core::tech::dawid::lidf::TpEntry;
use firmware_core::{Config, FlushPolicy, FullFtl};
use sim_harness::config::{presets, SimConfig};

const GIB: f64 = (1u64 << 30) as f64;

/// Most alignment padding the count may add: under 8 B for each of fewer
/// than 32 tables.
const PADDING_BOUND: u64 = 256;

/// Lent bytes from first principles (geometry and tunables, not `TableSizes`).
fn formula(c: &Config) -> u64 {
    let g = &c.geometry;
    let planes =
        u64::from(g.channels) * u64::from(g.dies_per_channel) * u64::from(g.planes_per_die);
    let blocks = planes * u64::from(g.blocks_per_plane);
    let units_per_block = u64::from(g.pages_per_block) * u64::from(g.units_per_page);
    let units = blocks * units_per_block;
    let slots = u64::from(c.write_buffer_units)
        + u64::from(c.read_slots)
        + u64::from(c.gc_slots_per_plane) * planes;
    4 * u64::from(c.logical_units)
        + 4 * units
        + size_of::<BlockMeta>() as u64 * blocks
        + planes * (4 * (units_per_block + 1) + size_of::<PlaneState>() as u64)
        + size_of::<SlotMeta>() as u64 * slots
        + size_of::<OpEntry>() as u64 * u64::from(c.max_inflight)
        + persistence(c)
}

/// Mapping persistence: per translation page a GTD entry (4 B), a sequence
/// number (8 B), flags (1 B), in-flight count (2 B) and dirty-list link,
/// plus the metadata page buffers; LIDF adds its entry and 6 B per page.
fn persistence(c: &Config) -> u64 {
    let p = &c.persist;
    if p.map_entries_per_page == 0 {
        return 0;
    }
    let tps = u64::from(c.logical_units.div_ceil(p.map_entries_per_page));
    let per_tp = 4 + 8 + 1 + 2 + size_of::<DirtyLink>() as u64;
    let bufs = (META_BUFS * meta_page_bytes(p)) as u64;
    let lidf = if p.flush_policy == FlushPolicy::Lidf {
        tps * (size_of::<TpEntry>() as u64 + 6)
    } else {
        0
    };
    tps * per_tp + bufs + lidf
}

fn physical_bytes(c: &Config) -> f64 {
    let g = &c.geometry;
    f64::from(g.total_pages()) * f64::from(g.page_bytes)
}

fn main() -> Result<(), String> {
    println!(
        "element sizes: l2p/p2l/bucket entry 4 B, BlockMeta {} B, PlaneState {} B, SlotMeta {} B, OpEntry {} B",
        size_of::<BlockMeta>(),
        size_of::<PlaneState>(),
        size_of::<SlotMeta>(),
        size_of::<OpEntry>()
    );
    println!(
        "formula: bytes = 4 L + 4 U + {} B + P (4 (U/B + 1) + {}) + {} S + {} O",
        size_of::<BlockMeta>(),
        size_of::<PlaneState>(),
        size_of::<SlotMeta>(),
        size_of::<OpEntry>()
    );
    println!("  L logical units, U physical units, B blocks, P planes, S buffer slots, O max in-flight ops");
    println!(
        "  plus, with mapping persistence, T ({} + {}) + {} M bytes (T translation pages, M bytes per metadata page; LIDF adds T ({} + 6))",
        15,
        size_of::<DirtyLink>(),
        META_BUFS,
        size_of::<TpEntry>()
    );
    println!(
        "per GiB of flash, 4 KiB units, over-provisioning r, E-byte blocks: 262144 (4 + 4/(1+r)) + {} * 2^30/E bytes",
        size_of::<BlockMeta>()
    );
    for r in [0.07f64, 0.15, 0.33] {
        let per_gib = 262_144.0 * (4.0 + 4.0 / (1.0 + r))
            + size_of::<BlockMeta>() as f64 * GIB / (4.0 * 1024.0 * 1024.0);
        println!(
            "  r = {r:.2}, 4 MiB blocks: {:.0} bytes = {:.2} MiB per GiB ({:.3} % of capacity) + fixed P/S/O terms",
            per_gib,
            per_gib / (1024.0 * 1024.0),
            per_gib / GIB * 100.0
        );
    }
    println!(
        "{:<16} {:>9} {:>15} {:>15} {:>6} {:>13}",
        "config", "flash GiB", "formula B", "bytes() B", "match", "B per GiB"
    );
    let mut configs: Vec<(String, Config)> = presets()
        .iter()
        .map(|p| {
            SimConfig::preset(p.name)
                .and_then(|s| s.to_core_config())
                .map(|c| (p.name.to_string(), c))
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    configs.push(("qemu-scenario".into(), ftl_scenario::CONFIG));
    let mut all = true;
    for (name, c) in &configs {
        let bytes = FullFtl::lend_bytes(c).map_err(|e| e.to_string())? as u64;
        let f = formula(c);
        let gib = physical_bytes(c) / GIB;
        // The count adds each table's worst alignment padding (below 8 B a table).
        let ok = f <= bytes && bytes - f < PADDING_BOUND;
        all &= ok;
        println!(
            "{name:<16} {gib:>9.3} {f:>15} {bytes:>15} {:>6} {:>13.0}",
            if ok { "yes" } else { "NO" },
            bytes as f64 / gib
        );
    }
    if all {
        println!(
            "formula matches FullFtl::lend_bytes() for every config, up to alignment padding (< {PADDING_BOUND} B)"
        );
        Ok(())
    } else {
        Err("formula and FullFtl::lend_bytes() disagree".into())
    }
}

//! Upper and lower bounds that keep every quantity derived from a
//! configuration finite and representable (nanosecond times in `u64`, the
//! reliability model's `f32`s, table sizes), checked by
//! [`SimConfig::validate`] before anything is built. Limits the core only
//! finds when it builds its tables are repeated here so a bad value is an
//! input error naming its key, not a failed run.

use super::{ConfigError, SimConfig};

/// Longest NAND array time (tR, tPROG, tBERS): 10 s, far beyond any chip,
/// so that per-block sums of nanoseconds stay far below `u64::MAX`.
pub const MAX_ARRAY_TIME_US: f64 = 1e7;
/// Longest command or skew time (`t_cmd_ns`, `t_dl_ns`): 10 s.
pub const MAX_BUS_TIME_NS: f64 = 1e10;
/// Slowest bus or host rate, MT/s or MiB/s: one page then still moves in
/// well under a day of simulated time.
pub const MIN_RATE: f64 = 0.001;
/// Fastest bus or host rate, MT/s or MiB/s (a petabyte per second).
pub const MAX_RATE: f64 = 1e9;
/// Longest retention period: a century (the reliability model works in `f32`).
pub const MAX_RETENTION_MONTHS: f64 = 1200.0;
/// Largest endurance multiplier of the wordline model.
pub const MAX_ENDURANCE_SCALE: f64 = 1e6;
/// Deepest host queue: the 65,536 entries of the largest NVMe queue.
pub const MAX_QUEUE_DEPTH: u32 = 65_536;
/// Most NAND operations in flight: far more than any simulated array can
/// keep busy; larger values would only cost memory.
pub const MAX_INFLIGHT: u32 = 1 << 20;
/// Bytes of a translation page's header (the core's `META_HEADER`).
const META_HEADER_BYTES: u32 = firmware_core::persist::tp::META_HEADER as u32;
/// Bytes of one mapping entry in a translation page.
const MAP_ENTRY_BYTES: u32 = 4;
/// Pages per block and wordline geometry the wordline model knows (the
/// paper chip: 192 wordlines of 3 pages).
const WL_MODEL_PAGES_PER_BLOCK: u32 = 576;
const WL_MODEL_PAGES_PER_WORDLINE: u8 = 3;

/// A number as given, in scientific notation when it is huge.
fn num(v: f64) -> String {
    if v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn check(key: &str, reason: String) -> Result<(), ConfigError> {
    Err(ConfigError::check(key, reason))
}

/// Checks every range [`SimConfig::validate`] does not check elsewhere.
pub(super) fn check_ranges(c: &SimConfig) -> Result<(), ConfigError> {
    check_timing(c)?;
    check_host_and_ftl(c)?;
    check_nand(c)
}

fn check_timing(c: &SimConfig) -> Result<(), ConfigError> {
    let t = &c.timing;
    for (key, v) in [
        ("timing.t_read_us", t.t_read_us),
        ("timing.t_prog_us", t.t_prog_us),
        ("timing.t_erase_us", t.t_erase_us),
    ] {
        if v > MAX_ARRAY_TIME_US {
            return check(
                key,
                format!(
                    "{} is above the largest array time, {MAX_ARRAY_TIME_US} us (10 s)",
                    num(v)
                ),
            );
        }
    }
    for (key, v) in [
        ("timing.t_cmd_ns", t.t_cmd_ns),
        ("timing.t_dl_ns", t.t_dl_ns),
    ] {
        if v > MAX_BUS_TIME_NS {
            return check(
                key,
                format!(
                    "{} is above the largest bus time, {MAX_BUS_TIME_NS} ns (10 s)",
                    num(v)
                ),
            );
        }
    }
    for (key, v) in [
        ("timing.channel_mts", t.channel_mts),
        ("timing.dram_mib_s", t.dram_mib_s),
        ("timing.host_mib_s", t.host_mib_s),
    ] {
        if !(MIN_RATE..=MAX_RATE).contains(&v) {
            return check(
                key,
                format!(
                    "{} is outside the rates simulated, {MIN_RATE} to {MAX_RATE}",
                    num(v)
                ),
            );
        }
    }
    Ok(())
}

fn check_host_and_ftl(c: &SimConfig) -> Result<(), ConfigError> {
    if c.host.queue_depth > MAX_QUEUE_DEPTH {
        return check(
            "host.queue_depth",
            format!(
                "{} is above {MAX_QUEUE_DEPTH}, the deepest NVMe queue",
                c.host.queue_depth
            ),
        );
    }
    let f = &c.ftl;
    if f.max_inflight > MAX_INFLIGHT {
        return check(
            "ftl.max_inflight",
            format!(
                "{} is above {MAX_INFLIGHT} (no simulated array keeps more busy)",
                f.max_inflight
            ),
        );
    }
    let epp = f.map_entries_per_page;
    let page = c.geometry.page_bytes;
    let max_epp = page.saturating_sub(META_HEADER_BYTES) / MAP_ENTRY_BYTES;
    if epp > max_epp {
        return check(
            "ftl.map_entries_per_page",
            format!(
                "{epp} entries of {MAP_ENTRY_BYTES} bytes plus a {META_HEADER_BYTES}-byte header \
                 do not fit a {page}-byte page; at most {max_epp}"
            ),
        );
    }
    Ok(())
}

fn check_nand(c: &SimConfig) -> Result<(), ConfigError> {
    let n = &c.nand;
    if n.retention_months > MAX_RETENTION_MONTHS {
        return check(
            "nand.retention_months",
            format!(
                "{} is above {MAX_RETENTION_MONTHS} (a century)",
                num(n.retention_months)
            ),
        );
    }
    if n.endurance_scale > MAX_ENDURANCE_SCALE {
        return check(
            "nand.endurance_scale",
            format!("{} is above {MAX_ENDURANCE_SCALE}", num(n.endurance_scale)),
        );
    }
    if !has_wordline_geometry(c) {
        let needs = if n.endurance_scale != 1.0 {
            Some("nand.endurance_scale")
        } else if c.erase.mode != super::EraseModeKey::Normal {
            Some("erase.mode")
        } else {
            None
        };
        if let Some(key) = needs {
            return Err(wordline_geometry_error(c, key));
        }
    }
    check_factory_bad(c)
}

/// Whether the geometry is the one the wordline model knows (lifetime
/// runs, GuardedErase, BPM and endurance scaling need it).
pub fn has_wordline_geometry(c: &SimConfig) -> bool {
    c.geometry.pages_per_block == WL_MODEL_PAGES_PER_BLOCK
        && c.geometry.pages_per_wordline == WL_MODEL_PAGES_PER_WORDLINE
}

/// The error for `key`, whose value needs the wordline model, on a
/// geometry the model does not know.
pub fn wordline_geometry_error(c: &SimConfig, key: &str) -> ConfigError {
    let g = &c.geometry;
    ConfigError::check(
        key,
        format!(
            "needs the wordline model, whose blocks are {WL_MODEL_PAGES_PER_BLOCK} pages \
             of {WL_MODEL_PAGES_PER_WORDLINE} per wordline; geometry has {} pages of {}",
            g.pages_per_block, g.pages_per_wordline
        ),
    )
}

/// Factory-bad blocks are drawn at random: their expected number must fit
/// in the over-provisioning that the GC reserve leaves, or the drive cannot
/// hold its logical capacity.
fn check_factory_bad(c: &SimConfig) -> Result<(), ConfigError> {
    let r = c.nand.factory_bad_ratio;
    if r == 0.0 {
        return Ok(());
    }
    let blocks = f64::from(c.geometry.blocks_per_plane);
    let spare = c.ftl.op_ratio / (1.0 + c.ftl.op_ratio);
    let reserve = f64::from(firmware_core::config::reserve_blocks_per_plane(
        c.ftl.gc_trigger_blocks,
        c.ftl.gc_reserve_blocks,
    )) / blocks;
    let max = spare - reserve;
    if r >= max {
        return check(
            "nand.factory_bad_ratio",
            format!(
                "{r} leaves no room for the logical capacity: bad blocks must stay below the \
                 over-provisioning share {spare:.4} minus the GC reserve {reserve:.4} = {max:.4}"
            ),
        );
    }
    Ok(())
}

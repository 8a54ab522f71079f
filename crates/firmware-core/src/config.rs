//! Run-time configuration of the core, checked before any table is touched.

use crate::error::Error;
use crate::medium::addr::Geometry;
use crate::tech::rcftl::policy::CopybackPolicy;

/// Tunables of the FTL core. Sizes of the lent tables follow from these.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Shape of the NAND array.
    pub geometry: Geometry,
    /// Exported capacity in mapping units.
    pub logical_units: u32,
    /// Write-buffer capacity in mapping units.
    pub write_buffer_units: u32,
    /// Buffer slots reserved for host reads in flight.
    pub read_slots: u32,
    /// Buffer slots reserved for each plane's garbage collection.
    pub gc_slots_per_plane: u32,
    /// Free blocks per plane that only GC may take (forward-progress reserve).
    pub gc_reserve_blocks: u32,
    /// GC starts in a plane when its free blocks drop to this many or fewer.
    pub gc_trigger_blocks: u32,
    /// Static wear levelling moves a cold block when max - min P/E in a plane exceeds this (0 = off).
    pub wl_threshold: u32,
    /// Erases in a plane between two static wear-levelling checks.
    pub wl_check_interval: u32,
    /// Operations the core may have in flight at once.
    pub max_inflight: u32,
    /// How GC migrates data: copyback modes, thresholds and selector.
    pub copyback: CopybackPolicy,
    /// GuardedErase / BPM (off by default).
    pub guard: crate::tech::longftl::config::GuardConfig,
    /// Mapping persistence and the power-loss budget (off by default).
    pub persist: PersistConfig,
    /// Copy command service: physical (default) or copyless remap.
    pub copy: CopyConfig,
    /// Superblock write order and reserved list pages (off by default).
    pub superblock: crate::tech::reparo::config::SuperblockConfig,
    /// Host-guided placement handles (off by default).
    pub placement: crate::tech::placement::config::PlacementConfig,
    /// Where GC puts a victim's pages: its own plane (default) or another
    /// way of its channel (`crossway` feature).
    pub gc_destination: crate::tech::crossway::config::GcDestination,
}

/// How [`crate::Ftl::copy`] serves a copy command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CopyMode {
    /// Every unit is copied physically by the driver (read, then write
    /// through the write buffer): the baseline, and the default.
    #[default]
    Physical,
    /// Copyless copy (seed 003): the destination is remapped to the
    /// source's physical unit, with reference counts and a shadow OOB.
    Remap,
}

/// Copy command settings ([`crate::tech::copyless::refcount`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyConfig {
    /// Remap or physical copy.
    pub mode: CopyMode,
    /// Bits of each physical unit's reference count (1..=8); a unit holds at
    /// most `2^n - 1` tags, further copies of it are physical.
    pub refcount_bits: u8,
    /// Shadow OOB records (tags of shared units held at once); a copy that
    /// needs a record when none is free is physical.
    pub shadow_entries: u32,
}

impl CopyConfig {
    /// Physical copies only: no tables, behaviour as without copy support.
    pub const PHYSICAL: CopyConfig = CopyConfig {
        mode: CopyMode::Physical,
        refcount_bits: 4,
        shadow_entries: 0,
    };

    /// Whether copies are served by remapping.
    pub fn remap(&self) -> bool {
        self.mode == CopyMode::Remap
    }
}

impl Default for CopyConfig {
    fn default() -> Self {
        CopyConfig::PHYSICAL
    }
}

/// Order in which buffered host writes go to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FlushPolicy {
    /// Oldest first.
    #[default]
    Fifo,
    /// Least increase of dirtiness first (Dawid's LIDF, see [`crate::tech::dawid::lidf`]).
    Lidf,
}

/// Mapping persistence: the L2P table kept on flash as translation pages,
/// the capacitor budget that protects dirty ones, and recovery on mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PersistConfig {
    /// Mapping entries per translation page; 0 turns persistence off (the
    /// drive then cannot survive a power cut).
    pub map_entries_per_page: u32,
    /// Share of translation pages the capacitor can flush at a power cut, in
    /// thousandths (1000: the whole table is protected, no map writes while
    /// running).
    pub protect_permille: u32,
    /// Write-buffer flush order.
    pub flush_policy: FlushPolicy,
    /// With mapping persistence, flushing starts when this share
    /// (thousandths) of the write buffer is occupied; 0 flushes every full
    /// page at once.
    pub flush_start_permille: u32,
    /// Written metadata-region blocks per plane above which the region is
    /// cleaned (0: sized automatically, about twice the translation pages).
    pub meta_blocks_per_plane: u32,
    /// Under partial protection, GC relocations dirty translation pages
    /// outside the capacitor budget: a relocated unit's old copy stays
    /// readable until its victim is erased, so the flash copy of its page
    /// is still right after a cut. Victims then wait to be erased until a
    /// sweep has written every page they made stale (`ftl::deferred`).
    pub gc_outside_budget: bool,
    /// Program failures the power-cut flush absorbs: a page whose program
    /// fails is programmed again into a fresh block, and the capacitor
    /// pays for this many programs beyond the flush itself
    /// ([`crate::Ftl::cut_capacity`]). 0 for a medium whose programs do
    /// not fail.
    pub cut_retries: u32,
}

impl PersistConfig {
    /// Persistence off.
    pub const OFF: PersistConfig = PersistConfig {
        map_entries_per_page: 0,
        protect_permille: 1000,
        flush_policy: FlushPolicy::Fifo,
        flush_start_permille: 0,
        meta_blocks_per_plane: 0,
        gc_outside_budget: false,
        cut_retries: 0,
    };

    /// Whether the mapping table is persisted.
    pub fn enabled(&self) -> bool {
        self.map_entries_per_page > 0
    }
}

impl Default for PersistConfig {
    fn default() -> Self {
        PersistConfig::OFF
    }
}

impl Config {
    /// A configuration with the usual defaults for `geometry` and over-provisioning `op_ratio`
    /// ((physical - logical) / logical).
    pub fn with_op_ratio(geometry: Geometry, op_ratio: f64) -> Result<Self, Error> {
        geometry.validate()?;
        if !(op_ratio.is_finite() && op_ratio > 0.0) {
            return Err(Error::InvalidConfig(&"op_ratio must be positive"));
        }
        let physical = f64::from(geometry.total_units());
        let logical = physical / (1.0 + op_ratio);
        // Truncation toward zero is the intended rounding.
        let logical_units = logical as u32;
        let cfg = Config {
            geometry,
            logical_units,
            write_buffer_units: 1024,
            read_slots: 256,
            gc_slots_per_plane: 2 * u32::from(geometry.units_per_page),
            gc_reserve_blocks: 2,
            gc_trigger_blocks: 3,
            wl_threshold: 0,
            wl_check_interval: 64,
            max_inflight: 4096,
            copyback: CopybackPolicy::OFF_CHIP,
            guard: crate::tech::longftl::config::GuardConfig::OFF,
            persist: PersistConfig::OFF,
            copy: CopyConfig::PHYSICAL,
            superblock: crate::tech::reparo::config::SuperblockConfig::OFF,
            placement: crate::tech::placement::config::PlacementConfig::OFF,
            gc_destination: crate::tech::crossway::config::GcDestination::Plane,
        };
        Ok(cfg)
    }

    /// Checks the configuration for values that would break forward progress.
    pub fn validate(&self) -> Result<(), Error> {
        let g = &self.geometry;
        g.validate()?;
        if self.logical_units == 0 {
            return Err(Error::InvalidConfig(&"logical capacity is zero"));
        }
        if self.gc_reserve_blocks < 1 {
            return Err(Error::InvalidConfig(
                &"gc reserve must be at least one block",
            ));
        }
        if self.gc_trigger_blocks < self.gc_reserve_blocks {
            return Err(Error::InvalidConfig(&"gc trigger below gc reserve"));
        }
        if self.gc_trigger_blocks.saturating_add(2) > g.blocks_per_plane {
            return Err(Error::InvalidConfig(
                &"too few blocks per plane for the gc thresholds",
            ));
        }
        if self.write_buffer_units < u32::from(g.units_per_page) {
            return Err(Error::InvalidConfig(&"write buffer smaller than one page"));
        }
        // GC may hold a partly filled page (up to units_per_page - 1 units)
        // while it reads the next victim page (up to units_per_page units):
        // with fewer slots both wait for each other.
        let upp = u32::from(g.units_per_page);
        if self.gc_slots_per_plane < upp.saturating_mul(2).saturating_sub(1) {
            return Err(Error::InvalidConfig(
                &"gc slots per plane below 2 x units per page - 1",
            ));
        }
        if self.max_inflight > crate::medium::nand::OpId::CORE_INDEXES {
            return Err(Error::InvalidConfig(
                &"max_inflight above 65535 (the operation index is 16 bits)",
            ));
        }
        if self.read_slots == 0 || self.max_inflight < 4 {
            return Err(Error::InvalidConfig(
                &"read slots or in-flight operations too few",
            ));
        }
        if u64::from(self.total_slots_u64()) > u64::from(u16::MAX) {
            return Err(Error::InvalidConfig(&"too many buffer slots (limit 65535)"));
        }
        if self.copy.remap() {
            if self.copy.refcount_bits == 0 || self.copy.refcount_bits > 8 {
                return Err(Error::InvalidConfig(&"copy refcount bits must be 1..=8"));
            }
            if self.copy.shadow_entries == u32::MAX {
                return Err(Error::InvalidConfig(&"copy shadow entries below 2^32 - 1"));
            }
        }
        check_superblock(self)?;
        self.placement.check(
            self.superblock.enabled || self.superblock.list_pages,
            self.persist.flush_policy == FlushPolicy::Lidf,
            self.copyback.mode != crate::tech::rcftl::policy::CopybackMode::OffChip,
        )?;
        // Usable space per plane must exceed the logical share plus the GC reserve,
        // or GC cannot guarantee progress.
        let reserve_units = u64::from(self.reserve_blocks_per_plane())
            .saturating_mul(u64::from(g.planes()))
            .saturating_mul(u64::from(g.units_per_block()));
        if u64::from(self.logical_units).saturating_add(reserve_units) > u64::from(g.total_units())
        {
            return Err(Error::InvalidConfig(
                &"over-provisioning below the gc reserve (logical + reserve > physical)",
            ));
        }
        Ok(())
    }

    /// Blocks per plane the logical space must leave over: GC's trigger
    /// plus the block it works in, or the GC reserve plus the open blocks a
    /// plane's room check sets aside (`Ftl::has_room`), whichever is more.
    /// With fewer, a drive written to its logical capacity can have a plane
    /// at its room limit that GC cannot relieve, and writes fail.
    pub fn reserve_blocks_per_plane(&self) -> u32 {
        reserve_blocks_per_plane(self.gc_trigger_blocks, self.gc_reserve_blocks)
    }

    fn total_slots_u64(&self) -> u32 {
        self.write_buffer_units
            .saturating_add(self.read_slots)
            .saturating_add(
                self.gc_slots_per_plane
                    .saturating_mul(self.geometry.planes()),
            )
    }

    /// Total buffer slots the driver must provide (write buffer + reads + GC).
    pub fn total_slots(&self) -> u32 {
        self.total_slots_u64()
    }
}

/// Open blocks a plane's room check sets aside: the host and GC active
/// blocks, and one that filled with programs still in flight. Public so a
/// caller's capacity message can name it.
pub const OPEN_MARGIN: u32 = 3;

/// [`Config::reserve_blocks_per_plane`] from the two settings it depends on,
/// for a caller that checks a configuration before it builds one.
pub fn reserve_blocks_per_plane(gc_trigger_blocks: u32, gc_reserve_blocks: u32) -> u32 {
    gc_trigger_blocks
        .saturating_add(1)
        .max(gc_reserve_blocks.saturating_add(OPEN_MARGIN))
}

/// Checks the superblock settings against the rest of the configuration.
fn check_superblock(cfg: &Config) -> Result<(), Error> {
    if !cfg.superblock.list_pages {
        return Ok(());
    }
    if cfg.geometry.pages_per_block < 2 {
        return Err(Error::InvalidConfig(
            &"list pages need at least two pages per block",
        ));
    }
    if cfg.persist.map_entries_per_page != 0 {
        return Err(Error::InvalidConfig(
            &"list pages are not recovered after a power cut: turn persistence off",
        ));
    }
    if cfg.guard.enabled() || cfg.copy.remap() {
        return Err(Error::InvalidConfig(
            &"list pages need every page of a block usable and no copyless copy",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_nand::{small_geometry, with_core};
    use crate::Lpn;

    /// Every over-provisioning the check accepts holds its whole logical
    /// capacity under random overwrites. On 16-block planes the room check
    /// keeps 5 blocks (GC reserve 2 plus 3 open) out of the logical space;
    /// when the check kept only `gc_trigger_blocks + 1`, 35 % and 40 % were
    /// accepted and then failed writes with `OutOfSpace`.
    #[test]
    fn accepted_over_provisioning_holds_the_logical_capacity() {
        let mut ran = 0;
        for op in [0.3, 0.35, 0.4, 0.45, 0.5, 0.55] {
            let mut cfg = Config::with_op_ratio(small_geometry(1), op).unwrap();
            cfg.write_buffer_units = 8;
            cfg.read_slots = 4;
            cfg.max_inflight = 32;
            if cfg.validate().is_err() {
                assert!(op < 0.5, "op {op} refused");
                continue;
            }
            ran += 1;
            with_core(cfg, |ftl, drv| {
                let n = cfg.logical_units;
                let mut x = 7u32;
                for i in 0..u64::from(n) * 6 {
                    // Fill every unit once, then overwrite at random.
                    let l = if i < u64::from(n) {
                        i as u32
                    } else {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        (x >> 8) % n
                    };
                    let r = drv.write(ftl, Lpn(l), i + 1);
                    assert!(r.is_ok(), "op {op}, write {i} of unit {l}: {r:?}");
                }
            });
        }
        assert_eq!(ran, 2, "0.5 and 0.55 are accepted");
    }
}

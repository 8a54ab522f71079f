//! Sections `[zns]` and `[fdp]` and the key `host.interface`: the host
//! interface the drive exports (conventional, zoned namespace, flexible
//! data placement) and its shape.

use serde::{Deserialize, Serialize};

use super::ConfigError;
use firmware_core::tech::zns::zone::{ZoneGeometry, MARKERS_PER_ZONE, MAX_ACTIVE};

/// `host.interface` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InterfaceKey {
    /// A conventional namespace: any LBA, any order (the default).
    #[default]
    Conventional,
    /// A zoned namespace (NVMe ZNS): sequential zones, no device GC of zoned data.
    Zns,
    /// Flexible data placement (NVMe FDP): writes carry a placement handle.
    Fdp,
}

/// Zoned namespace shape (section `[zns]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZnsSection {
    /// Zone size in bytes; 0 = one erase block per plane (an erase-block group).
    pub zone_bytes: u64,
    /// Writable bytes per zone; 0 = the zone size.
    pub zone_capacity_bytes: u64,
    /// Most zones open at once.
    pub max_open: u32,
    /// Most zones active (open or closed) at once, at most 64.
    pub max_active: u32,
}

impl Default for ZnsSection {
    fn default() -> Self {
        ZnsSection {
            zone_bytes: 0,
            zone_capacity_bytes: 0,
            max_open: 8,
            max_active: 8,
        }
    }
}

/// Flexible data placement (section `[fdp]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FdpSection {
    /// Reclaim-unit handles (placement identifiers 0..handles), 1..=64.
    pub handles: u32,
    /// Reclaim-unit size in bytes; 0 = one erase block per plane, the only
    /// size the core implements (each handle fills one block per plane).
    pub reclaim_unit_bytes: u64,
}

impl Default for FdpSection {
    fn default() -> Self {
        FdpSection {
            handles: 4,
            reclaim_unit_bytes: 0,
        }
    }
}

/// Bytes of one erase block in every plane (a zone's and a reclaim unit's natural size).
pub fn block_group_bytes(planes: u64, pages_per_block: u64, page_bytes: u64) -> u64 {
    planes * pages_per_block * page_bytes
}

impl ZnsSection {
    /// The zoned namespace over `logical` units of `unit` bytes; the zones
    /// and their marker units fit the logical capacity.
    pub fn geometry(
        &self,
        logical: u32,
        unit: u64,
        group: u64,
    ) -> Result<ZoneGeometry, ConfigError> {
        let zone = if self.zone_bytes == 0 {
            group
        } else {
            self.zone_bytes
        };
        if zone == 0 || !zone.is_multiple_of(unit) {
            return Err(ConfigError::check(
                "zns.zone_bytes",
                format!("{zone} is not a positive multiple of the mapping unit {unit}"),
            ));
        }
        let cap = if self.zone_capacity_bytes == 0 {
            zone
        } else {
            self.zone_capacity_bytes
        };
        if cap > zone || !cap.is_multiple_of(unit) {
            return Err(ConfigError::check(
                "zns.zone_capacity_bytes",
                format!("{cap} must be a multiple of {unit} at most zns.zone_bytes {zone}"),
            ));
        }
        let size = u32::try_from(zone / unit)
            .map_err(|_| ConfigError::check("zns.zone_bytes", "zone too large"))?;
        let zones = logical / (size + MARKERS_PER_ZONE);
        if zones == 0 {
            return Err(ConfigError::check(
                "zns.zone_bytes",
                format!("a zone of {zone} bytes is larger than the logical capacity"),
            ));
        }
        if self.max_active == 0 || self.max_active > MAX_ACTIVE {
            return Err(ConfigError::check("zns.max_active", "must be 1..=64"));
        }
        if self.max_open == 0 || self.max_open > self.max_active {
            return Err(ConfigError::check(
                "zns.max_open",
                "must be 1..=zns.max_active",
            ));
        }
        Ok(ZoneGeometry {
            zones,
            size,
            cap: (cap / unit) as u32,
            max_open: self.max_open,
            max_active: self.max_active,
        })
    }
}

impl FdpSection {
    /// Checks the handles and the reclaim-unit size (`group`: one block per plane).
    pub fn check(&self, group: u64) -> Result<(), ConfigError> {
        if self.handles == 0 || self.handles > 64 {
            return Err(ConfigError::check("fdp.handles", "must be 1..=64"));
        }
        if self.reclaim_unit_bytes != 0 && self.reclaim_unit_bytes != group {
            return Err(ConfigError::check(
                "fdp.reclaim_unit_bytes",
                format!(
                    "{} is not 0 or one erase block per plane ({group} bytes), the reclaim unit the core fills",
                    self.reclaim_unit_bytes
                ),
            ));
        }
        Ok(())
    }
}

//! Section `[copy]`: how the device serves host copy commands (copyless
//! copy, seed 003).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `copy.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyModeSetting {
    /// Each unit is read and written again inside the device (baseline).
    Physical,
    /// The destination is remapped to the source's physical unit
    /// (reference counts and shadow OOB; no NAND operation).
    Remap,
}

/// Copy command settings (section `[copy]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CopySection {
    /// `remap` or `physical`.
    pub mode: CopyModeSetting,
    /// Bits of each physical unit's reference count, 1..=8.
    pub refcount_bits: u8,
    /// Shadow OOB records (tags of shared units held at once).
    pub shadow_oob_entries: u32,
}

impl Default for CopySection {
    fn default() -> Self {
        CopySection {
            mode: CopyModeSetting::Physical,
            refcount_bits: 4,
            shadow_oob_entries: 65536,
        }
    }
}

impl CopySection {
    /// The core's copy configuration.
    pub fn to_core(&self) -> Result<firmware_core::CopyConfig, ConfigError> {
        if self.refcount_bits == 0 || self.refcount_bits > 8 {
            return Err(ConfigError::check("copy.refcount_bits", "must be 1..=8"));
        }
        if self.shadow_oob_entries == u32::MAX {
            return Err(ConfigError::check(
                "copy.shadow_oob_entries",
                "must be below 2^32 - 1",
            ));
        }
        Ok(firmware_core::CopyConfig {
            mode: match self.mode {
                CopyModeSetting::Physical => firmware_core::CopyMode::Physical,
                CopyModeSetting::Remap => firmware_core::CopyMode::Remap,
            },
            refcount_bits: self.refcount_bits,
            shadow_entries: self.shadow_oob_entries,
        })
    }
}

//! Section `[erase]`: GuardedErase (longFTL) and the BPM baseline.

use firmware_core::tech::longftl::gerase::{EraseMode, GEraseScope, GModeParams, GuardConfig};
use firmware_core::tech::longftl::gerase_select::MAX_MODES;
use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `erase.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EraseModeKey {
    /// Normal block erases only (baseline).
    Normal,
    /// GuardedErase with gErase modes (longFTL).
    Gerase,
    /// Bad-page management: weak wordlines retired for good.
    Bpm,
}

/// `erase.gerase_scope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopeKey {
    /// gErase for host active blocks only.
    Host,
    /// gErase for every allocation.
    All,
}

/// How victims are erased (section `[erase]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EraseSection {
    /// `normal`, `gerase` or `bpm`.
    pub mode: EraseModeKey,
    /// `auto` (WAF-driven selector) or a fixed mode `0`..`9`.
    pub gerase_mode: String,
    /// `host` or `all`.
    pub gerase_scope: ScopeKey,
    /// Capacity BPM retires, in percent of a block's wordlines.
    pub bpm_capacity_loss_pct: f64,
    /// Observation intervals each WAF value of the monitor spans (1 = the
    /// paper's single interval of GC over 5% of the blocks).
    pub waf_window: u8,
}

impl Default for EraseSection {
    fn default() -> Self {
        EraseSection {
            mode: EraseModeKey::Normal,
            gerase_mode: "auto".to_string(),
            gerase_scope: ScopeKey::Host,
            bpm_capacity_loss_pct: 2.1,
            waf_window: 1,
        }
    }
}

impl EraseSection {
    /// The fixed gErase mode, `None` for `auto`.
    pub fn fixed_mode(&self) -> Result<Option<u8>, ConfigError> {
        match self.gerase_mode.trim() {
            "auto" => Ok(None),
            t => t
                .parse::<u8>()
                .ok()
                .filter(|&m| usize::from(m) < MAX_MODES)
                .map(Some)
                .ok_or_else(|| ConfigError::check("erase.gerase_mode", "expected auto or 0..9")),
        }
    }

    /// The core's guard settings for blocks of `wls` wordlines and an ECC
    /// limit of `ecc_limit`; the gErase modes are derived from the paper
    /// chip's wordline profile (`nand_model::wordline`).
    pub fn to_guard(&self, wls: u32, ecc_limit: u16) -> Result<GuardConfig, ConfigError> {
        let fixed_mode = self.fixed_mode()?;
        if !(1..=firmware_core::tech::longftl::waf_monitor::MAX_WINDOW as u8)
            .contains(&self.waf_window)
        {
            return Err(ConfigError::check(
                "erase.waf_window",
                "must be within 1..16",
            ));
        }
        if !(0.0..=50.0).contains(&self.bpm_capacity_loss_pct) {
            return Err(ConfigError::check(
                "erase.bpm_capacity_loss_pct",
                "must be within 0..50",
            ));
        }
        let mode = match self.mode {
            EraseModeKey::Normal => return Ok(GuardConfig::OFF),
            EraseModeKey::Gerase => EraseMode::GErase,
            EraseModeKey::Bpm => EraseMode::Bpm,
        };
        let derived = nand_model::wordline::WlProfile::paper_chip()
            .gerase_modes()
            .ok_or_else(|| ConfigError::check("erase.mode", "gErase mode derivation failed"))?;
        let mut modes = [GModeParams::default(); MAX_MODES];
        for (m, d) in modes.iter_mut().zip(derived.iter()) {
            *m = GModeParams {
                protected_wls: d.protected_wls as u16,
                relief_permille: (d.relief_ratio * 1000.0).round() as u16,
                max_pe: (d.max_pe_gain * 10_000.0).round() as u32,
            };
        }
        let wls_per_block = u16::try_from(wls)
            .ok()
            .filter(|&w| w > 0 && w <= 256)
            .ok_or_else(|| {
                ConfigError::check(
                    "geometry.pages_per_block",
                    "erase.mode gerase/bpm needs at most 256 wordlines per block",
                )
            })?;
        let ecc_limit = u8::try_from(ecc_limit)
            .ok()
            .filter(|&e| e >= firmware_core::tech::longftl::weak_wl::SORTED_FROM)
            .ok_or_else(|| {
                ConfigError::check("nand.ecc_limit", "erase.mode gerase/bpm needs 10..=255")
            })?;
        Ok(GuardConfig {
            mode,
            fixed_mode,
            scope: match self.gerase_scope {
                ScopeKey::Host => GEraseScope::Host,
                ScopeKey::All => GEraseScope::All,
            },
            bpm_retired_wls: (self.bpm_capacity_loss_pct / 100.0 * f64::from(wls)).round() as u16,
            modes,
            wls_per_block,
            ecc_limit,
            interval_victims: 0,
            waf_window: self.waf_window,
        })
    }
}

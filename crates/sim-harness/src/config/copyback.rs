//! Section `[copyback]`: how GC migrates valid data (rcFTL and its baselines).

use firmware_core::tech::rcftl::copyback::{CopybackMode, CopybackPolicy, Selector};
use firmware_core::tech::rcftl::ctt::{CopybackConfig, CtModel, Retention, MAX_CT};
use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `copyback.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModeKey {
    /// Read, ECC-correct and program every page (baseline).
    OffChip,
    /// FastGC: per-page counters, one P/E-only threshold.
    Fastgc,
    /// rcFTL with per-page quota.
    RcftlPerPage,
    /// rcFTL with per-block quota and several GC active blocks per plane.
    Rcftl,
    /// Copyback without the EPM bound (shows uncorrectable reads appear).
    Unchecked,
}

/// `copyback.selector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SelectorKey {
    /// Copyback whenever the EPM allows (`rcFTL-`).
    Greedy,
    /// Data migration mode selector on write-buffer utilisation.
    Dmms,
}

/// `copyback.table`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKey {
    /// Seed 000 Table 1: CT by P/E (2D MLC).
    Rcopyback,
    /// Seed 001 Table 6: CTT by P/E, block BER class and retention (3D TLC).
    Rcpb,
}

/// How GC migrates valid data (section `[copyback]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CopybackSection {
    /// `off-chip`, `fastgc`, `rcftl-per-page`, `rcftl` or `unchecked`.
    pub mode: ModeKey,
    /// `greedy` or `dmms`.
    pub selector: SelectorKey,
    /// Threshold table: `rcopyback` (seed 000) or `rcpb` (seed 001).
    pub table: TableKey,
    /// Retention requirement of the thresholds, in months: 12 or 3.
    pub retention_months: u32,
    /// Cap on every copyback threshold (rcFTLn); 0 turns copyback off.
    pub max_threshold: u8,
    /// A page is copied back only with at least this many live mapping units
    /// (0: all units of the page).
    pub min_live_units: u8,
}

impl Default for CopybackSection {
    fn default() -> Self {
        CopybackSection {
            mode: ModeKey::OffChip,
            selector: SelectorKey::Dmms,
            table: TableKey::Rcpb,
            retention_months: 12,
            max_threshold: MAX_CT,
            min_live_units: 0,
        }
    }
}

impl CopybackSection {
    /// Checks the values and builds the core's policy; `window_ns` is one
    /// average block-write time (the DMMS averaging window).
    pub fn to_policy(&self, window_ns: u64) -> Result<CopybackPolicy, ConfigError> {
        let retention = match self.retention_months {
            12 => Retention::OneYear,
            3 => Retention::ThreeMonths,
            m => {
                return Err(ConfigError::check(
                    "copyback.retention_months",
                    format!("the threshold tables have 12 and 3 months, got {m}"),
                ))
            }
        };
        if self.max_threshold > MAX_CT {
            return Err(ConfigError::check(
                "copyback.max_threshold",
                format!("at most {MAX_CT}, got {}", self.max_threshold),
            ));
        }
        let mode = match self.mode {
            ModeKey::OffChip => CopybackMode::OffChip,
            ModeKey::Fastgc => CopybackMode::FastGc,
            ModeKey::RcftlPerPage => CopybackMode::RcftlPerPage,
            ModeKey::Rcftl => CopybackMode::Rcftl,
            ModeKey::Unchecked => CopybackMode::Unchecked,
        };
        let model = match (self.mode, self.table) {
            // FastGC is block-unaware: Table 1 already is; of Table 6 it
            // takes the worst-block row.
            (ModeKey::Fastgc, TableKey::Rcpb) => CtModel::FastGc,
            (_, TableKey::Rcopyback) => CtModel::Rcopyback,
            (_, TableKey::Rcpb) => CtModel::Rcpb,
        };
        Ok(CopybackPolicy {
            mode,
            selector: match self.selector {
                SelectorKey::Greedy => Selector::Greedy,
                SelectorKey::Dmms => Selector::Dmms,
            },
            thresholds: CopybackConfig {
                model,
                retention,
                max_threshold: self.max_threshold,
            },
            min_live_units: self.min_live_units,
            dmms_window_ns: window_ns.max(1_000),
            ..CopybackPolicy::OFF_CHIP
        })
    }
}

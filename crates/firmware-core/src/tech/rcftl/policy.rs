//! rcFTL's configuration: the migration mode, the selector and the
//! threshold table. Always built, so a configuration names every mode even
//! in a build without the `rcftl` feature (which then refuses all but
//! off-chip).

use crate::tech::rcftl::ctt::{BerClassifier, CopybackConfig};

/// Most quota levels (GC active blocks) a plane keeps in [`CopybackMode::Rcftl`],
/// the off-chip level `Q_init` included. Seed 001 Fig. 21 uses five.
pub const MAX_LEVELS: usize = 8;

/// How GC migrates valid pages (`copyback.mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum CopybackMode {
    /// Every page through the controller (read, ECC, program): the baseline.
    #[default]
    OffChip,
    /// FastGC: per-page copyback counters against one P/E-only threshold.
    FastGc,
    /// rcFTL with per-page quota (the memory-hungry variant).
    RcftlPerPage,
    /// rcFTL with per-block quota and one GC active block per quota level.
    Rcftl,
    /// Copyback whenever the selector allows, with no error bound. For showing
    /// that the reliability model bites; never for real use.
    Unchecked,
}

impl CopybackMode {
    /// Whether this mode keeps one byte of state per flash page (lent table).
    pub const fn per_page(self) -> bool {
        matches!(self, CopybackMode::FastGc | CopybackMode::RcftlPerPage)
    }

    /// Whether this mode ever copies back.
    pub const fn copies_back(self) -> bool {
        !matches!(self, CopybackMode::OffChip)
    }

    /// Whether thresholds depend on the block's BER class (so blocks are classified).
    pub const fn uses_ber_class(self) -> bool {
        matches!(self, CopybackMode::RcftlPerPage | CopybackMode::Rcftl)
    }
}

/// How the migration mode of a victim is chosen (`copyback.selector`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Selector {
    /// Copyback whenever the EPM allows (the papers' `rcFTL-`).
    #[default]
    Greedy,
    /// DMMS: background GC copies back only while the moving average of
    /// write-buffer utilisation is above half; urgent GC always copies back.
    Dmms,
}

/// The copyback part of the core configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopybackPolicy {
    /// Migration mode.
    pub mode: CopybackMode,
    /// Mode selector.
    pub selector: Selector,
    /// Threshold table, retention and cap.
    pub thresholds: CopybackConfig,
    /// Boundaries of the block BER classes.
    pub classifier: BerClassifier,
    /// A page is copied back only if at least this many of its mapping units
    /// are live (a copyback moves the whole page; dead units stay dead space).
    /// 0 means all of them.
    pub min_live_units: u8,
    /// DMMS averaging window in ns: one average block-write time.
    pub dmms_window_ns: u64,
}

impl CopybackPolicy {
    /// The off-chip baseline.
    pub const OFF_CHIP: CopybackPolicy = CopybackPolicy {
        mode: CopybackMode::OffChip,
        selector: Selector::Greedy,
        thresholds: CopybackConfig::RCFTL,
        classifier: BerClassifier::DEFAULT,
        min_live_units: 0,
        dmms_window_ns: 64_000_000,
    };
}

impl Default for CopybackPolicy {
    fn default() -> Self {
        Self::OFF_CHIP
    }
}

/// Copybacks a plane keeps in flight at most. A copyback cannot be called
/// back once issued, so its units are programmed even if the host overwrites
/// them while it waits behind other work on the die; deciding each page just
/// in time keeps that waste small, and two keep the die busy.
pub const MAX_COPYBACKS_IN_FLIGHT: u16 = 2;

//! longFTL's configuration: the erase mode, the gE(n) modes and the WAF
//! window. Always built, so a configuration names every mode even in a
//! build without the `longftl` feature (which then refuses all but normal
//! erases).

/// gErase modes gE(0)..gE(9) (seed 001 Table 2).
pub const MAX_MODES: usize = 10;

/// How victims are erased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EraseMode {
    /// Normal block erase only (the baseline).
    Normal,
    /// GuardedErase with gErase modes (longFTL).
    GErase,
    /// Bad-page management: weak wordlines retired for good.
    Bpm,
}

/// Which allocations gErase applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GEraseScope {
    /// Host active blocks only (the paper's preferred policy).
    Host,
    /// Every allocation, host and GC.
    All,
}

/// One gErase mode as the core uses it (derived in `nand-model`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GModeParams {
    /// Wordlines erased in low-stress mode when the mode applies.
    pub protected_wls: u16,
    /// Share of a block's erases that apply it, in thousandths.
    pub relief_permille: u16,
    /// Expected maximum P/E cycles of a block under the mode.
    pub max_pe: u32,
}

/// GuardedErase / BPM settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuardConfig {
    /// Erase policy.
    pub mode: EraseMode,
    /// Fixed gErase mode, or `None` for the WAF-driven selector.
    pub fixed_mode: Option<u8>,
    /// Which allocations gErase applies to.
    pub scope: GEraseScope,
    /// Wordlines per block BPM retires.
    pub bpm_retired_wls: u16,
    /// gE(0)..gE(9); gE(0) is the normal erase.
    pub modes: [GModeParams; MAX_MODES],
    /// Wordlines per block (pages per block / pages per wordline).
    pub wls_per_block: u16,
    /// ECC limit in bit errors (the detector sorts 10..=limit).
    pub ecc_limit: u8,
    /// GC victims per WAF observation interval; 0 = 5% of all blocks.
    pub interval_victims: u32,
    /// Intervals each WAF value spans (1 = the paper's single interval).
    pub waf_window: u8,
}

impl GuardConfig {
    /// Normal erases only: no detector, no extra tables.
    pub const OFF: GuardConfig = GuardConfig {
        mode: EraseMode::Normal,
        fixed_mode: None,
        scope: GEraseScope::Host,
        bpm_retired_wls: 0,
        modes: [GModeParams {
            protected_wls: 0,
            relief_permille: 0,
            max_pe: 1,
        }; MAX_MODES],
        wls_per_block: 0,
        ecc_limit: 0,
        interval_victims: 0,
        waf_window: 1,
    };

    /// Whether the core needs the detector and per-block guard state.
    pub fn enabled(&self) -> bool {
        self.mode != EraseMode::Normal
    }
}

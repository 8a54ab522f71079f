//! Sections `[controller]` and `[reparo]`: the multi-core controller and
//! Reparo's die-failure recovery (seed 001, Ch. 5). Used by `ftl raid` and
//! `ftl experiment reparo`; single-drive runs ignore them.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The multi-core controller (section `[controller]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerSection {
    /// Flash cores `N` the master core stripes LBAs over (`lba % N`); each
    /// owns `1/N` of the dies.
    pub flash_cores: u32,
}

impl Default for ControllerSection {
    fn default() -> Self {
        ControllerSection { flash_cores: 4 }
    }
}

/// `reparo.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReparoModeKey {
    /// Rebuild-Assist replacement of the whole drive.
    Baseline,
    /// Isolated die recovery.
    Idr,
    /// Cooperative die recovery.
    Cdr,
    /// CDR with P2L entrustment and marks.
    CdrStar,
}

/// `reparo.p2l`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum P2lKey {
    /// No entrustment.
    None,
    /// Page-level entrustment (neighbour page's spare area).
    Page,
    /// Block-level entrustment (last page of the neighbour block).
    Block,
}

/// Reparo recovery (section `[reparo]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReparoSection {
    /// `baseline`, `idr`, `cdr` or `cdr-star`.
    pub mode: ReparoModeKey,
    /// `none`, `page` or `block`: where CDR* finds the LBAs of a failed die.
    pub p2l: P2lKey,
    /// Bad blocks past which the detector declares a die failed.
    pub n_bad_die: u32,
}

impl Default for ReparoSection {
    fn default() -> Self {
        ReparoSection {
            mode: ReparoModeKey::CdrStar,
            p2l: P2lKey::Block,
            n_bad_die: 16,
        }
    }
}

impl ReparoSection {
    /// The harness mode.
    pub fn mode(&self) -> crate::reparo::Mode {
        match self.mode {
            ReparoModeKey::Baseline => crate::reparo::Mode::Baseline,
            ReparoModeKey::Idr => crate::reparo::Mode::Idr,
            ReparoModeKey::Cdr => crate::reparo::Mode::Cdr,
            ReparoModeKey::CdrStar => crate::reparo::Mode::CdrStar,
        }
    }

    /// The P2L entrustment.
    pub fn p2l(&self) -> firmware_core::tech::reparo::p2l::P2lMode {
        match self.p2l {
            P2lKey::None => firmware_core::tech::reparo::p2l::P2lMode::None,
            P2lKey::Page => firmware_core::tech::reparo::p2l::P2lMode::Page,
            P2lKey::Block => firmware_core::tech::reparo::p2l::P2lMode::Block,
        }
    }

    /// Checks the combination: CDR* needs an entrustment.
    pub fn check(&self, controller: &ControllerSection) -> Result<(), ConfigError> {
        if controller.flash_cores < 2 {
            return Err(ConfigError::check(
                "controller.flash_cores",
                "Reparo needs at least two flash cores",
            ));
        }
        if self.mode == ReparoModeKey::CdrStar && self.p2l == P2lKey::None {
            return Err(ConfigError::check(
                "reparo.p2l",
                "cdr-star identifies through P2L entrustment: page or block",
            ));
        }
        Ok(())
    }
}

//! Section `[gc]`: how GC page copies cross the channel (seed 002).

use serde::{Deserialize, Serialize};

use crate::gc_merge::CopyMode;

/// `gc.copy_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopyModeKey {
    /// Internal copy-back in one plane; data out only for the ECC check.
    Icb,
    /// External copy-back through the controller within one way.
    Lcb,
    /// External copy-back through the controller across ways.
    Gcb,
    /// Direct data transfer: the destination way latches the page while the
    /// source drives the channel; only corrected bytes are sent again.
    Dgcb,
}

impl CopyModeKey {
    /// The copy mode of the merge models.
    pub fn mode(self) -> CopyMode {
        match self {
            CopyModeKey::Icb => CopyMode::Icb,
            CopyModeKey::Lcb => CopyMode::Lcb,
            CopyModeKey::Gcb => CopyMode::Gcb,
            CopyModeKey::Dgcb => CopyMode::Dgcb,
        }
    }
}

/// `gc.destination`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcDestinationKey {
    /// The victim's own plane (the core's baseline).
    Plane,
    /// The least busy other way of the victim's channel, when one has GC
    /// space to spare (the core's `crossway` technique); with `gcb` and
    /// `dgcb` only: ICB and LCB copy within one device by definition.
    Channel,
}

/// GC copy timing (section `[gc]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GcSection {
    /// `icb`, `lcb`, `gcb` or `dgcb`.
    pub copy_mode: CopyModeKey,
    /// Pages one GC transaction copies before it yields (1 or more).
    pub transaction_pages: u32,
    /// `plane` or `channel`: where GC puts a victim's pages.
    pub destination: GcDestinationKey,
}

impl GcSection {
    /// Whether GC pages cross between ways: destination `channel` with a
    /// copy mode that leaves the device (`gcb`, `dgcb`).
    pub fn cross_way(&self) -> bool {
        self.destination == GcDestinationKey::Channel
            && matches!(self.copy_mode, CopyModeKey::Gcb | CopyModeKey::Dgcb)
    }
}

impl Default for GcSection {
    fn default() -> Self {
        GcSection {
            copy_mode: CopyModeKey::Gcb,
            transaction_pages: 128,
            destination: GcDestinationKey::Plane,
        }
    }
}

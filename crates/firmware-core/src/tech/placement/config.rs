//! Configuration of host-guided placement (reclaim-unit handles).

/// Host-guided placement: writes carry a handle, and each handle fills its
/// own blocks (FDP's reclaim-unit handles; ZNS's active zones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacementConfig {
    /// Handles (0: off, every host write in one stream, the default).
    pub handles: u8,
}

impl PlacementConfig {
    /// Off: one host stream, as without placement support.
    pub const OFF: PlacementConfig = PlacementConfig { handles: 0 };

    /// Whether writes are placed by handle.
    pub fn enabled(&self) -> bool {
        self.handles > 0
    }
}

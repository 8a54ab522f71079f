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

    /// Refuses placement beside another host placement or flush order
    /// (superblocks, list pages, LIDF), beside copyback (both hold GC
    /// blocks of their own), and more than 64 handles.
    /// `superblocks`: superblocks or list pages are on; `lidf`: the LIDF
    /// flush order is; `copyback`: a copyback mode is.
    pub fn check(
        &self,
        superblocks: bool,
        lidf: bool,
        copyback: bool,
    ) -> Result<(), crate::error::Error> {
        use crate::error::Error;
        if !self.enabled() {
            return Ok(());
        }
        if self.handles > 64 {
            return Err(Error::InvalidConfig(&"placement handles above 64"));
        }
        if superblocks {
            return Err(Error::InvalidConfig(
                &"placement handles do not combine with superblocks or list pages",
            ));
        }
        if lidf {
            return Err(Error::InvalidConfig(
                &"placement handles do not combine with buffer.flush_policy lidf",
            ));
        }
        if copyback {
            return Err(Error::InvalidConfig(
                &"placement handles do not combine with copyback modes",
            ));
        }
        Ok(())
    }

    /// Whether writes are placed by handle.
    pub fn enabled(&self) -> bool {
        self.handles > 0
    }
}

//! Reparo's configuration in the core: superblocks and list pages. Always
//! built, so a configuration names them even in a build without the
//! `reparo` feature (which then refuses them).

use crate::config::Config;
use crate::error::Error;

/// Superblock settings (off by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SuperblockConfig {
    /// The host stream fills superblocks superpage by superpage instead of
    /// taking planes round-robin with independent open blocks.
    pub enabled: bool,
    /// The last page of every block is a list page, programmed empty by the
    /// core once the block's data pages are claimed.
    pub list_pages: bool,
}

impl SuperblockConfig {
    /// Round-robin planes, no list pages.
    pub const OFF: SuperblockConfig = SuperblockConfig {
        enabled: false,
        list_pages: false,
    };

    /// Checks the settings against the rest of the configuration.
    pub(crate) fn check(&self, cfg: &Config) -> Result<(), Error> {
        if !self.list_pages {
            return Ok(());
        }
        if cfg.geometry.pages_per_block < 2 {
            return Err(Error::InvalidConfig(
                "list pages need at least two pages per block",
            ));
        }
        if cfg.persist.map_entries_per_page != 0 {
            return Err(Error::InvalidConfig(
                "list pages are not recovered after a power cut: turn persistence off",
            ));
        }
        if cfg.guard.enabled() || cfg.copy.remap() {
            return Err(Error::InvalidConfig(
                "list pages need every page of a block usable and no copyless copy",
            ));
        }
        Ok(())
    }
}

//! Reparo's configuration in the core: superblocks and list pages. Always
//! built, so a configuration names them even in a build without the
//! `reparo` feature (which then refuses them).

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
}

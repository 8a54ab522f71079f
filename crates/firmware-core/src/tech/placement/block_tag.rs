//! Handles across a power cut: each block's handle is the tag the core
//! keeps with it on flash ([`crate::ftl::hooks::Placement::block_tag`]): in
//! the spare area of every page programmed into it and in its checkpoint
//! block-table entry. Mount hands it back, so GC keeps the handles apart
//! for data written before the cut as it did before.

use super::handles::HasPlacement;
use crate::ftl::Ftl;
use crate::medium::addr::BlockId;

/// The tag recorded for block `b`: the handle whose data it holds (0 with
/// placement off).
pub fn block_tag<'a, H: HasPlacement<'a>>(f: &Ftl<'_, H>, b: BlockId) -> u8 {
    f.h.placement()
        .and_then(|p| p.t.block_handle.get(b.0 as usize).copied())
        .unwrap_or(0)
}

/// Mount read block `b`'s tag: it holds that handle's data again. A tag
/// beyond the configured handles (the drive was written with more) counts
/// as handle 0.
pub fn block_tag_mounted<'a, H: HasPlacement<'a>>(f: &mut Ftl<'_, H>, b: BlockId, tag: u8) {
    if let Some(p) = f.h.placement_mut() {
        let h = if tag < p.handles { tag } else { 0 };
        if let Some(e) = p.t.block_handle.get_mut(b.0 as usize) {
            *e = h;
        }
    }
}

//! Shared helpers of the integration tests.
#![allow(dead_code)]

use firmware_core::medium::addr::MAX_UNITS_PER_PAGE;
use firmware_core::{Geometry, Lpn, PageKind, Spare, UnitMask};

/// A small array: 2 dies x 2 planes x 16 blocks x 16 pages, 2 units per page.
pub fn small_geo() -> Geometry {
    Geometry {
        channels: 1,
        dies_per_channel: 2,
        planes_per_die: 2,
        blocks_per_plane: 16,
        pages_per_block: 16,
        page_bytes: 8192,
        pages_per_wordline: 2,
        units_per_page: 2,
    }
}

/// A spare with the given seq and mask, lpns derived from the seq.
pub fn spare(seq: u64, mask: u8) -> Spare {
    let mut lpns = [Lpn(0); MAX_UNITS_PER_PAGE];
    for (i, l) in lpns.iter_mut().enumerate().take(2) {
        *l = Lpn((seq as u32).wrapping_mul(7).wrapping_add(i as u32));
    }
    Spare {
        seq,
        kind: PageKind::Data,
        units: UnitMask(mask),
        lpns,
        erase_count: 0,
        ..Spare::default()
    }
}

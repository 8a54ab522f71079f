//! The geometry as the core holds it: [`Geometry`] with the divisors of
//! its hot conversions (page to block, block to plane, unit to page)
//! turned into shifts where they are powers of two, as most geometries'
//! are. A shift takes a cycle where a division takes tens; the quotient
//! is the same. The firmware divides (the smaller code).

use core::ops::Deref;

use crate::medium::addr::{BlockId, Geometry, PlaneId, Ppn, Pun};

/// `log2` of a divisor that is a power of two, or [`Shift::DIVIDE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shift(u8);

impl Shift {
    /// The divisor is not a power of two (or is zero): divide.
    const DIVIDE: Shift = Shift(u8::MAX);

    fn of(d: u32) -> Shift {
        if !cfg!(target_arch = "arm") && d.is_power_of_two() {
            Shift(d.trailing_zeros() as u8)
        } else {
            Shift::DIVIDE
        }
    }

    /// `a` over the divisor: shifted if it allows, else `divide()`.
    #[inline(always)]
    fn quotient(self, a: u32, divide: impl FnOnce() -> u32) -> u32 {
        match a.checked_shr(u32::from(self.0)) {
            Some(q) if !cfg!(target_arch = "arm") => q,
            _ => divide(),
        }
    }
}

/// [`Geometry`] and the shifts of its hot divisors; dereferences to the
/// geometry for everything else.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geo {
    g: Geometry,
    pages_per_block: Shift,
    units_per_block: Shift,
    blocks_per_plane: Shift,
    pages_per_plane: Shift,
    units_per_page: Shift,
}

impl Geo {
    /// The shifts of `g`'s divisors.
    pub(crate) fn new(g: Geometry) -> Geo {
        Geo {
            g,
            pages_per_block: Shift::of(g.pages_per_block),
            units_per_block: Shift::of(g.units_per_block()),
            blocks_per_plane: Shift::of(g.blocks_per_plane),
            pages_per_plane: Shift::of(g.pages_per_block.wrapping_mul(g.blocks_per_plane)),
            units_per_page: Shift::of(u32::from(g.units_per_page)),
        }
    }

    /// [`Geometry::block_of`].
    #[inline(always)]
    pub(crate) fn block_of(&self, p: Ppn) -> BlockId {
        BlockId(self.pages_per_block.quotient(p.0, || self.g.block_of(p).0))
    }

    /// [`Geometry::block_of_unit`].
    #[inline(always)]
    pub(crate) fn block_of_unit(&self, u: Pun) -> BlockId {
        BlockId(
            self.units_per_block
                .quotient(u.0, || self.g.block_of_unit(u).0),
        )
    }

    /// [`Geometry::plane_of`].
    #[inline(always)]
    pub(crate) fn plane_of(&self, b: BlockId) -> PlaneId {
        PlaneId(self.blocks_per_plane.quotient(b.0, || self.g.plane_of(b).0))
    }

    /// [`Geometry::plane_of_page`].
    #[inline(always)]
    pub(crate) fn plane_of_page(&self, p: Ppn) -> PlaneId {
        PlaneId(
            self.pages_per_plane
                .quotient(p.0, || self.g.plane_of_page(p).0),
        )
    }

    /// [`Geometry::page_of_unit`].
    #[inline(always)]
    pub(crate) fn page_of_unit(&self, u: Pun) -> Ppn {
        Ppn(self
            .units_per_page
            .quotient(u.0, || self.g.page_of_unit(u).0))
    }
}

impl Deref for Geo {
    type Target = Geometry;

    #[inline(always)]
    fn deref(&self) -> &Geometry {
        &self.g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(g: Geometry) {
        let f = Geo::new(g);
        let pages = g.pages_per_block * g.blocks_per_plane * 2;
        for p in (0..pages).step_by(7).chain([0, 1, pages - 1]) {
            let p = Ppn(p);
            assert_eq!(f.block_of(p), g.block_of(p));
            assert_eq!(f.plane_of_page(p), g.plane_of_page(p));
            assert_eq!(f.plane_of(g.block_of(p)), g.plane_of(g.block_of(p)));
            let u = g.pun(p, g.units_per_page - 1);
            assert_eq!(f.block_of_unit(u), g.block_of_unit(u));
            assert_eq!(f.page_of_unit(u), g.page_of_unit(u));
        }
    }

    #[test]
    fn shifts_agree_with_divisions() {
        let base = Geometry {
            channels: 2,
            dies_per_channel: 1,
            planes_per_die: 1,
            blocks_per_plane: 64,
            pages_per_block: 128,
            page_bytes: 16384,
            pages_per_wordline: 1,
            units_per_page: 4,
        };
        check(base);
        // Divisors that are not powers of two divide.
        check(Geometry {
            blocks_per_plane: 48,
            pages_per_block: 1152,
            units_per_page: 3,
            page_bytes: 12288,
            ..base
        });
        check(Geometry {
            pages_per_block: 96,
            units_per_page: 1,
            page_bytes: 4096,
            ..base
        });
    }
}

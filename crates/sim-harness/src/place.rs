//! Where an operation runs: its block, plane, die and channel.
//!
//! The core's geometry decodes an address with a division per level, which
//! is right for a controller (a Cortex-M divides in a few cycles) but costs
//! the simulator a dozen divisions per operation. Here each level's divisor
//! is fixed when the timing model is built and turned into a shift (powers
//! of two) or one wide multiplication (Lemire, Kaser and Kurz, "Faster
//! remainder by direct computation", 2019), exact for every `u32` dividend.
//! The results are the geometry's own, which a test checks.

use firmware_core::{Geometry, NandCmd};

/// Division of any `u32` by a divisor fixed at construction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Divisor {
    /// `ceil(2^64 / d)` for a divisor that is not a power of two, else 0.
    m: u64,
    /// log2 of a power-of-two divisor (32 for a zero divisor, whose
    /// quotient is 0 as in the core's geometry).
    shift: u32,
}

impl Divisor {
    /// The divisor `d`.
    pub(crate) fn new(d: u32) -> Self {
        if d == 0 {
            Divisor { m: 0, shift: 32 }
        } else if d.is_power_of_two() {
            Divisor {
                m: 0,
                shift: d.trailing_zeros(),
            }
        } else {
            Divisor {
                m: u64::MAX / u64::from(d) + 1,
                shift: 0,
            }
        }
    }

    /// `x / d`.
    #[inline(always)]
    pub(crate) fn div(self, x: u32) -> u32 {
        if self.m == 0 {
            (u64::from(x) >> self.shift) as u32
        } else {
            ((u128::from(self.m) * u128::from(x)) >> 64) as u32
        }
    }
}

/// An operation's block and the plane, die and channel it sits on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// Block (the source block of a copyback).
    pub block: u32,
    /// Plane holding the block.
    pub plane: u32,
    /// Die holding the plane.
    pub die: u32,
    /// Channel the die sits on.
    pub ch: u32,
}

/// Decodes places for one geometry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoder {
    pages_per_block: Divisor,
    blocks_per_plane: Divisor,
    planes_per_die: Divisor,
    dies_per_channel: Divisor,
}

impl Decoder {
    /// The decoder of geometry `g`.
    pub(crate) fn new(g: &Geometry) -> Self {
        Decoder {
            pages_per_block: Divisor::new(g.pages_per_block),
            blocks_per_plane: Divisor::new(g.blocks_per_plane),
            planes_per_die: Divisor::new(u32::from(g.planes_per_die)),
            dies_per_channel: Divisor::new(u32::from(g.dies_per_channel)),
        }
    }

    /// Where block `block` sits.
    #[inline(always)]
    pub(crate) fn block(&self, block: u32) -> Place {
        let plane = self.blocks_per_plane.div(block);
        let die = self.planes_per_die.div(plane);
        Place {
            block,
            plane,
            die,
            ch: self.dies_per_channel.div(die),
        }
    }

    /// Where `op` runs.
    #[inline(always)]
    pub(crate) fn op(&self, cmd: &NandCmd) -> Place {
        let block = match *cmd {
            NandCmd::Read { page, .. }
            | NandCmd::Program { page, .. }
            | NandCmd::ProgramMeta { page, .. }
            | NandCmd::ReadMeta { page, .. } => self.pages_per_block.div(page.0),
            NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. } => block.0,
            NandCmd::Copyback { src, .. } => self.pages_per_block.div(src.0),
        };
        self.block(block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firmware_core::{BlockId, DieId, Ppn};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn divides_exactly(x in any::<u32>(), d in 0u32..5000) {
            prop_assert_eq!(Divisor::new(d).div(x), x.checked_div(d).unwrap_or(0));
        }

        #[test]
        fn divides_exactly_by_large_divisors(x in any::<u32>(), d in any::<u32>()) {
            prop_assert_eq!(Divisor::new(d).div(x), x.checked_div(d).unwrap_or(0));
        }

        /// The decoder gives the geometry's own answers, on shapes with and
        /// without power-of-two sizes.
        #[test]
        fn agrees_with_the_geometry(
            channels in 1u16..9,
            dies_per_channel in 1u16..9,
            planes_per_die in 1u16..5,
            blocks_per_plane in 1u32..1100,
            pages_per_block in 1u32..1200,
            pick in any::<u64>(),
        ) {
            let g = Geometry {
                channels,
                dies_per_channel,
                planes_per_die,
                blocks_per_plane,
                pages_per_block,
                page_bytes: 16384,
                pages_per_wordline: 1,
                units_per_page: 4,
            };
            let d = Decoder::new(&g);
            let pages = u64::from(g.total_blocks()) * u64::from(pages_per_block);
            let page = Ppn((pick % pages) as u32);
            let block = g.block_of(page);
            let place = d.block(d.pages_per_block.div(page.0));
            prop_assert_eq!(place.block, block.0);
            prop_assert_eq!(place.plane, g.plane_of(block).0);
            let die: DieId = g.die_of(BlockId(place.block));
            prop_assert_eq!(place.die, die.0);
            prop_assert_eq!(place.ch, g.channel_of_die(die));
        }
    }
}

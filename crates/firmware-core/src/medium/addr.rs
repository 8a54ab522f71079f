//! Typed addresses and the device geometry.
//!
//! Physical pages are numbered block-major: `ppn = block * pages_per_block + page`,
//! and blocks plane-major: `block = plane * blocks_per_plane + block_in_plane`,
//! where the flat plane index is `(channel * dies_per_channel + die) * planes_per_die + plane`.
//! All numbers are plain `u32` inside a newtype, so a logical unit can never be
//! passed where a physical page is expected.

use crate::error::{rare, Error};

/// Most mapping units one flash page can hold (for example 32 KiB pages of 4 KiB units).
pub const MAX_UNITS_PER_PAGE: usize = 8;

/// Index `i` (a unit's place among a page's units, below
/// `Geometry::units_per_page`, which the geometry's check keeps at most
/// [`MAX_UNITS_PER_PAGE`]) into a per-page array: the mask keeps it in
/// range, so the array is indexed without a range test on a hot path.
#[inline(always)]
pub(crate) const fn in_page(i: usize) -> usize {
    i & (MAX_UNITS_PER_PAGE - 1)
}

/// A logical page number: one mapping unit of the host address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lpn(pub u32);

/// A flat physical page number (see the module docs for the numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Ppn(pub u32);

/// A flat physical block number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BlockId(pub u32);

/// A flat plane number: the unit of garbage collection and copyback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PlaneId(pub u32);

/// A flat die number (`channel * dies_per_channel + die`): the unit of NAND busy time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DieId(pub u32);

/// A physical mapping unit: `ppn * units_per_page + offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pun(pub u32);

// Flat-number arithmetic. A validated geometry keeps every flat number below
// 2^31, so the wrapping operations never wrap; a zero divisor (possible only in
// a geometry that was never validated) gives 0 instead of a panic.
#[inline(always)]
fn mul(a: u32, b: u32) -> u32 {
    a.wrapping_mul(b)
}
#[inline(always)]
fn add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b)
}
#[inline(always)]
fn div(a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or(0)
}
#[inline(always)]
fn rem(a: u32, b: u32) -> u32 {
    a.checked_rem(b).unwrap_or(0)
}

/// `x` written with three digits, lowest first, in radices `a`, `b`, `c`,
/// read back with the digits reversed: `x0 + a (x1 + b x2)` becomes
/// `x2 + c (x1 + b x0)`. A plane number is (plane, die, channel) lowest
/// first and a round-robin position the same digits the other way round.
fn reverse_digits(x: u32, a: u32, b: u32, c: u32) -> u32 {
    let rest = div(x, a);
    add(mul(add(mul(rem(x, a), b), rem(rest, b)), c), div(rest, b))
}

/// A fully decoded physical page address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageAddr {
    /// Channel (bus) index.
    pub channel: u16,
    /// Die (way) index on the channel.
    pub die: u16,
    /// Plane index in the die.
    pub plane: u16,
    /// Block index in the plane.
    pub block: u32,
    /// Page index in the block.
    pub page: u32,
}

/// The shape of the NAND array the FTL manages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Independent buses.
    pub channels: u16,
    /// Dies (ways) sharing one channel.
    pub dies_per_channel: u16,
    /// Planes per die.
    pub planes_per_die: u16,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Program pages per erase block.
    pub pages_per_block: u32,
    /// Data bytes per page (spare area excluded).
    pub page_bytes: u32,
    /// Pages sharing one wordline (1 SLC, 2 MLC, 3 TLC).
    pub pages_per_wordline: u8,
    /// Mapping units per page (`page_bytes / mapping_unit_bytes`).
    pub units_per_page: u8,
}

impl Geometry {
    /// Checks that every dimension is non-zero and that flat numbers fit in 31 bits.
    pub fn validate(&self) -> Result<(), Error> {
        if self.channels == 0
            || self.dies_per_channel == 0
            || self.planes_per_die == 0
            || self.blocks_per_plane == 0
            || self.pages_per_block == 0
            || self.page_bytes == 0
            || self.pages_per_wordline == 0
        {
            return Err(Error::InvalidConfig(&"geometry dimension is zero"));
        }
        if self.units_per_page == 0 || usize::from(self.units_per_page) > MAX_UNITS_PER_PAGE {
            return Err(Error::InvalidConfig(&"units per page out of range"));
        }
        if !self
            .pages_per_block
            .is_multiple_of(u32::from(self.pages_per_wordline))
        {
            return Err(Error::InvalidConfig(
                &"pages per block not a multiple of pages per wordline",
            ));
        }
        let units = u64::from(self.total_blocks_u64_checked()?)
            .saturating_mul(u64::from(self.pages_per_block))
            .saturating_mul(u64::from(self.units_per_page));
        if units >= (1u64 << 31) {
            return Err(Error::InvalidConfig(
                &"too many physical units for 31-bit numbering",
            ));
        }
        Ok(())
    }

    fn total_blocks_u64_checked(&self) -> Result<u32, Error> {
        let b = u64::from(self.channels)
            .saturating_mul(u64::from(self.dies_per_channel))
            .saturating_mul(u64::from(self.planes_per_die))
            .saturating_mul(u64::from(self.blocks_per_plane));
        u32::try_from(b).map_err(|_| Error::InvalidConfig(&"too many blocks"))
    }

    /// Number of dies in the array.
    pub fn dies(&self) -> u32 {
        mul(u32::from(self.channels), u32::from(self.dies_per_channel))
    }

    /// Number of planes in the array.
    pub fn planes(&self) -> u32 {
        mul(self.dies(), u32::from(self.planes_per_die))
    }

    /// Number of erase blocks in the array.
    pub fn total_blocks(&self) -> u32 {
        mul(self.planes(), self.blocks_per_plane)
    }

    /// Number of pages in the array.
    pub fn total_pages(&self) -> u32 {
        mul(self.total_blocks(), self.pages_per_block)
    }

    /// Number of physical mapping units in the array.
    pub fn total_units(&self) -> u32 {
        mul(self.total_pages(), u32::from(self.units_per_page))
    }

    /// Mapping units per erase block.
    pub fn units_per_block(&self) -> u32 {
        mul(self.pages_per_block, u32::from(self.units_per_page))
    }

    /// Mapping unit size in bytes.
    pub fn unit_bytes(&self) -> u32 {
        div(self.page_bytes, u32::from(self.units_per_page))
    }

    /// Block containing a page.
    #[inline]
    pub fn block_of(&self, p: Ppn) -> BlockId {
        BlockId(div(p.0, self.pages_per_block))
    }

    /// Page index inside its block.
    #[inline]
    pub fn page_in_block(&self, p: Ppn) -> u32 {
        rem(p.0, self.pages_per_block)
    }

    /// Page `page` of block `b`.
    #[inline]
    pub fn ppn(&self, b: BlockId, page: u32) -> Ppn {
        Ppn(add(mul(b.0, self.pages_per_block), page))
    }

    /// Block holding a physical unit: one division where
    /// `block_of(page_of_unit(u))` takes two (the same quotient).
    #[inline]
    pub fn block_of_unit(&self, u: Pun) -> BlockId {
        BlockId(div(u.0, self.units_per_block()))
    }

    /// Plane holding a page: one division where `plane_of(block_of(p))`
    /// takes two (the same quotient).
    #[inline]
    pub fn plane_of_page(&self, p: Ppn) -> PlaneId {
        PlaneId(div(p.0, mul(self.pages_per_block, self.blocks_per_plane)))
    }

    /// Plane holding a block.
    #[inline]
    pub fn plane_of(&self, b: BlockId) -> PlaneId {
        PlaneId(div(b.0, self.blocks_per_plane))
    }

    /// Die holding a plane.
    #[inline]
    pub fn die_of_plane(&self, p: PlaneId) -> DieId {
        DieId(div(p.0, u32::from(self.planes_per_die)))
    }

    /// Die holding a block.
    #[inline]
    pub fn die_of(&self, b: BlockId) -> DieId {
        self.die_of_plane(self.plane_of(b))
    }

    /// Channel a die sits on.
    #[inline]
    pub fn channel_of_die(&self, d: DieId) -> u32 {
        div(d.0, u32::from(self.dies_per_channel))
    }

    /// Plane at position `v` of the round robin that spreads host pages:
    /// channels vary fastest, then dies, then planes, so consecutive pages
    /// land on different buses.
    pub fn round_robin_plane(&self, v: u32) -> PlaneId {
        PlaneId(reverse_digits(
            v,
            u32::from(self.channels),
            u32::from(self.dies_per_channel),
            u32::from(self.planes_per_die),
        ))
    }

    /// Round-robin position of plane `p` (the inverse of
    /// [`Geometry::round_robin_plane`]).
    pub fn round_robin_position(&self, p: PlaneId) -> u32 {
        reverse_digits(
            p.0,
            u32::from(self.planes_per_die),
            u32::from(self.dies_per_channel),
            u32::from(self.channels),
        )
    }

    /// First block of a plane.
    #[inline]
    pub fn first_block(&self, p: PlaneId) -> BlockId {
        BlockId(mul(p.0, self.blocks_per_plane))
    }

    /// Physical unit `offset` of page `p`.
    #[inline]
    pub fn pun(&self, p: Ppn, offset: u8) -> Pun {
        Pun(add(
            mul(p.0, u32::from(self.units_per_page)),
            u32::from(offset),
        ))
    }

    /// Page holding a physical unit.
    #[inline]
    pub fn page_of_unit(&self, u: Pun) -> Ppn {
        Ppn(div(u.0, u32::from(self.units_per_page)))
    }

    /// Offset of a physical unit inside its page.
    #[inline]
    pub fn unit_offset(&self, u: Pun) -> u8 {
        // The remainder is below units_per_page, which is a u8.
        rem(u.0, u32::from(self.units_per_page)) as u8
    }

    /// Wordline index of a page inside its block.
    #[inline]
    pub fn wordline_of(&self, page_in_block: u32) -> u32 {
        div(page_in_block, u32::from(self.pages_per_wordline))
    }

    /// Decodes a flat page number.
    pub fn decode(&self, p: Ppn) -> PageAddr {
        let block = self.block_of(p);
        let plane = self.plane_of(block);
        let die = self.die_of_plane(plane);
        PageAddr {
            channel: div(die.0, u32::from(self.dies_per_channel)) as u16,
            die: rem(die.0, u32::from(self.dies_per_channel)) as u16,
            plane: rem(plane.0, u32::from(self.planes_per_die)) as u16,
            block: rem(block.0, self.blocks_per_plane),
            page: self.page_in_block(p),
        }
    }

    /// Encodes a decoded address, checking every field against the geometry.
    pub fn encode(&self, a: PageAddr) -> Result<Ppn, Error> {
        if a.channel >= self.channels
            || a.die >= self.dies_per_channel
            || a.plane >= self.planes_per_die
            || a.block >= self.blocks_per_plane
            || a.page >= self.pages_per_block
        {
            return Err(rare(Error::AddressOutOfRange));
        }
        let die = add(
            mul(u32::from(a.channel), u32::from(self.dies_per_channel)),
            u32::from(a.die),
        );
        let plane = add(mul(die, u32::from(self.planes_per_die)), u32::from(a.plane));
        let block = add(mul(plane, self.blocks_per_plane), a.block);
        Ok(Ppn(add(mul(block, self.pages_per_block), a.page)))
    }
}

/// A set of unit offsets inside one page (bit i = unit i).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct UnitMask(pub u8);

impl UnitMask {
    /// All `n` units of a page.
    pub fn full(n: u8) -> Self {
        if usize::from(n) >= 8 {
            UnitMask(0xff)
        } else {
            UnitMask((1u8 << n).wrapping_sub(1))
        }
    }
    /// Whether unit `i` is in the set.
    #[inline]
    pub fn contains(self, i: u8) -> bool {
        i < 8 && self.0 & (1 << i) != 0
    }
    /// Adds unit `i`.
    #[inline]
    pub fn insert(&mut self, i: u8) {
        if i < 8 {
            self.0 |= 1 << i;
        }
    }
    /// Number of units in the set.
    // One out-of-line copy on Arm: a Cortex-M4 has no population-count
    // instruction, so each inlined count is a dozen instructions. Elsewhere
    // it is one instruction, cheaper than the call.
    #[cfg_attr(target_arch = "arm", inline(never))]
    #[cfg_attr(not(target_arch = "arm"), inline)]
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }
    /// True when no unit is in the set.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            dies_per_channel: 3,
            planes_per_die: 2,
            blocks_per_plane: 10,
            pages_per_block: 12,
            page_bytes: 16384,
            pages_per_wordline: 3,
            units_per_page: 4,
        }
    }

    /// The order the round robin visits planes in: channel fastest.
    fn visit_order(g: &Geometry) -> std::vec::Vec<u32> {
        let mut out = std::vec::Vec::new();
        for pl in 0..u32::from(g.planes_per_die) {
            for d in 0..u32::from(g.dies_per_channel) {
                for c in 0..u32::from(g.channels) {
                    out.push(
                        (c * u32::from(g.dies_per_channel) + d) * u32::from(g.planes_per_die) + pl,
                    );
                }
            }
        }
        out
    }

    #[test]
    fn round_robin_positions_follow_channels_then_dies_then_planes() {
        for (ch, dies, planes) in [(1, 1, 1), (2, 2, 1), (8, 4, 2), (3, 5, 7), (8, 8, 2)] {
            let g = Geometry {
                channels: ch,
                dies_per_channel: dies,
                planes_per_die: planes,
                ..geo()
            };
            for (v, &p) in visit_order(&g).iter().enumerate() {
                assert_eq!(
                    g.round_robin_plane(v as u32),
                    PlaneId(p),
                    "{ch}x{dies}x{planes} at {v}"
                );
                assert_eq!(g.round_robin_position(PlaneId(p)), v as u32);
            }
        }
    }

    #[test]
    fn encode_decode_round_trip() {
        let g = geo();
        g.validate().unwrap();
        for p in 0..g.total_pages() {
            let a = g.decode(Ppn(p));
            assert_eq!(g.encode(a).unwrap(), Ppn(p));
        }
        assert_eq!(g.total_pages(), 2 * 3 * 2 * 10 * 12);
    }

    #[test]
    fn one_division_lookups_match_the_two_step_ones() {
        for upp in [1u8, 3, 4] {
            let g = Geometry {
                units_per_page: upp,
                ..geo()
            };
            g.validate().unwrap();
            for u in 0..g.total_units() {
                let u = Pun(u);
                assert_eq!(g.block_of_unit(u), g.block_of(g.page_of_unit(u)), "{u:?}");
            }
            for p in 0..g.total_pages() {
                let p = Ppn(p);
                assert_eq!(g.plane_of_page(p), g.plane_of(g.block_of(p)), "{p:?}");
            }
        }
    }

    #[test]
    fn encode_rejects_out_of_range() {
        let g = geo();
        let a = PageAddr {
            channel: 2,
            die: 0,
            plane: 0,
            block: 0,
            page: 0,
        };
        assert_eq!(g.encode(a), Err(Error::AddressOutOfRange));
    }

    #[test]
    fn validate_rejects_zero_and_oversize() {
        let mut g = geo();
        g.channels = 0;
        assert!(g.validate().is_err());
        let mut g = geo();
        g.units_per_page = 9;
        assert!(g.validate().is_err());
        let mut g = geo();
        g.pages_per_block = 13;
        assert!(g.validate().is_err());
    }

    #[test]
    fn unit_mask_ops() {
        let mut m = UnitMask::default();
        m.insert(0);
        m.insert(3);
        assert!(m.contains(3) && !m.contains(1));
        assert_eq!(m.count(), 2);
        assert_eq!(UnitMask::full(4).0, 0b1111);
        assert_eq!(UnitMask::full(8).0, 0xff);
    }
}

//! Compact per-block, per-page and per-unit records, and where they live.
//!
//! The medium keeps three arrays: one [`BlockRec`] per erase block, one
//! [`PageRec`] per page (sequence number, kind, unit mask, carried copyback
//! errors: 11 bytes) and one [`UnitRec`] per mapping unit (stamp and logical
//! unit: 12 bytes). A page of one unit therefore costs 23 bytes. The arrays come
//! from a [`Storage`]: [`VecStorage`] allocates them (feature `std`),
//! [`LentStorage`] borrows caller-provided slices (bare metal).

use firmware_core::Geometry;

/// State of one erase block. Opaque; [`BlockRec::INIT`] fills lent arrays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockRec {
    pub(crate) pe: u32,
    pub(crate) next_page: u32,
    pub(crate) quality: f32,
    pub(crate) class: u8,
    pub(crate) flags: u8,
    /// Erase count the spare area of the block's first page carries (what
    /// the FTL wrote there; the chip's own `pe` is ground truth).
    pub(crate) ec_hdr: u32,
}

impl BlockRec {
    /// Initial value for a lent array (the medium overwrites it when it starts).
    pub const INIT: BlockRec = BlockRec {
        pe: 0,
        next_page: 0,
        quality: 1.0,
        class: 1,
        flags: 0,
        ec_hdr: 0,
    };
}

impl Default for BlockRec {
    fn default() -> Self {
        BlockRec::INIT
    }
}

/// The stored spare area of one page, packed to 11 bytes. Opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, packed)]
pub struct PageRec {
    pub(crate) seq: u64,
    /// Bits 0-1: page state; bits 2-3: page kind.
    pub(crate) meta: u8,
    pub(crate) mask: u8,
    /// Raw bit errors carried in by copybacks (saturating).
    pub(crate) carried: u8,
}

impl PageRec {
    /// Initial value for a lent array (any content is fine: pages above a block's
    /// write pointer are never looked at).
    pub const INIT: PageRec = PageRec {
        seq: 0,
        meta: 0,
        mask: 0,
        carried: 0,
    };
}

/// One stored mapping unit: its stamp and the logical unit from the spare area,
/// packed to 12 bytes. Opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, packed)]
pub struct UnitRec {
    pub(crate) stamp: u64,
    pub(crate) lpn: u32,
}

impl UnitRec {
    /// Initial value for a lent array (any content is fine).
    pub const INIT: UnitRec = UnitRec { stamp: 0, lpn: 0 };
}

const _: () = assert!(core::mem::size_of::<PageRec>() == 11);
const _: () = assert!(core::mem::size_of::<UnitRec>() == 12);

/// How many records of each kind a geometry needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StorageSizes {
    /// Length of the [`BlockRec`] array (erase blocks).
    pub blocks: usize,
    /// Length of the [`PageRec`] array (pages).
    pub pages: usize,
    /// Length of the [`UnitRec`] array (mapping units).
    pub units: usize,
}

impl StorageSizes {
    /// The array lengths `geo` needs.
    pub fn for_geometry(geo: &Geometry) -> Self {
        StorageSizes {
            blocks: geo.total_blocks() as usize,
            pages: geo.total_pages() as usize,
            units: geo.total_units() as usize,
        }
    }

    /// Total bytes of the three arrays.
    pub fn bytes(&self) -> usize {
        self.blocks * core::mem::size_of::<BlockRec>()
            + self.pages * core::mem::size_of::<PageRec>()
            + self.units * core::mem::size_of::<UnitRec>()
    }
}

/// Where the medium's arrays live. Implemented by [`VecStorage`] and
/// [`LentStorage`]; the medium logic is written once against this trait.
pub trait Storage {
    /// Shared views of the block, page and unit arrays.
    fn split(&self) -> (&[BlockRec], &[PageRec], &[UnitRec]);
    /// Mutable views of the block, page and unit arrays.
    fn split_mut(&mut self) -> (&mut [BlockRec], &mut [PageRec], &mut [UnitRec]);
    /// Bytes a metadata page may hold here (0: no metadata pages).
    fn meta_capacity(&self) -> usize {
        0
    }
    /// Stores the bytes of metadata page `page` (at most `meta_capacity`).
    fn put_meta(&mut self, page: u32, bytes: &[u8]) {
        let _ = (page, bytes);
    }
    /// The bytes last stored for metadata page `page`.
    fn meta(&self, page: u32) -> Option<&[u8]> {
        let _ = page;
        None
    }
}

/// Arrays lent by the caller, for a medium without a heap.
///
/// Size them with [`StorageSizes::for_geometry`]; longer slices are fine.
pub struct LentStorage<'a> {
    blocks: &'a mut [BlockRec],
    pages: &'a mut [PageRec],
    units: &'a mut [UnitRec],
}

impl<'a> LentStorage<'a> {
    /// Wraps the three lent arrays (lengths are checked when the medium is built).
    pub fn new(
        blocks: &'a mut [BlockRec],
        pages: &'a mut [PageRec],
        units: &'a mut [UnitRec],
    ) -> Self {
        LentStorage {
            blocks,
            pages,
            units,
        }
    }
}

impl Storage for LentStorage<'_> {
    #[inline]
    fn split(&self) -> (&[BlockRec], &[PageRec], &[UnitRec]) {
        (self.blocks, self.pages, self.units)
    }
    #[inline]
    fn split_mut(&mut self) -> (&mut [BlockRec], &mut [PageRec], &mut [UnitRec]) {
        (self.blocks, self.pages, self.units)
    }
}

/// Heap-allocated arrays sized for one geometry.
#[cfg(feature = "std")]
#[derive(Clone)]
pub struct VecStorage {
    blocks: std::vec::Vec<BlockRec>,
    pages: std::vec::Vec<PageRec>,
    units: std::vec::Vec<UnitRec>,
    /// Bytes of metadata pages, by page number (only pages ever written so).
    meta: std::collections::HashMap<u32, std::vec::Vec<u8>>,
    page_bytes: usize,
}

#[cfg(feature = "std")]
impl VecStorage {
    /// Allocates the arrays `geo` needs.
    pub fn new(geo: &Geometry) -> Self {
        let s = StorageSizes::for_geometry(geo);
        VecStorage {
            blocks: std::vec![BlockRec::INIT; s.blocks],
            pages: std::vec![PageRec::INIT; s.pages],
            units: std::vec![UnitRec::INIT; s.units],
            meta: std::collections::HashMap::new(),
            page_bytes: geo.page_bytes as usize,
        }
    }
}

#[cfg(feature = "std")]
impl Storage for VecStorage {
    #[inline]
    fn split(&self) -> (&[BlockRec], &[PageRec], &[UnitRec]) {
        (&self.blocks, &self.pages, &self.units)
    }
    #[inline]
    fn split_mut(&mut self) -> (&mut [BlockRec], &mut [PageRec], &mut [UnitRec]) {
        (&mut self.blocks, &mut self.pages, &mut self.units)
    }
    fn meta_capacity(&self) -> usize {
        self.page_bytes
    }
    fn put_meta(&mut self, page: u32, bytes: &[u8]) {
        let e = self.meta.entry(page).or_default();
        e.clear();
        e.extend_from_slice(bytes);
    }
    fn meta(&self, page: u32) -> Option<&[u8]> {
        self.meta.get(&page).map(|v| v.as_slice())
    }
}

/// Prints the array lengths, not their contents.
fn debug_lengths<S: Storage>(
    s: &S,
    name: &str,
    f: &mut core::fmt::Formatter<'_>,
) -> core::fmt::Result {
    let (b, p, u) = s.split();
    f.debug_struct(name)
        .field("blocks", &b.len())
        .field("pages", &p.len())
        .field("units", &u.len())
        .finish()
}

impl core::fmt::Debug for LentStorage<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        debug_lengths(self, "LentStorage", f)
    }
}

#[cfg(feature = "std")]
impl core::fmt::Debug for VecStorage {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        debug_lengths(self, "VecStorage", f)
    }
}

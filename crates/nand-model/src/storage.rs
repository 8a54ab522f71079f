//! Compact per-block, per-page and per-unit records, and where they live.
//!
//! The medium keeps three arrays: one [`BlockRec`] per erase block, one
//! [`PageRec`] per page (sequence number, kind, unit mask, carried copyback
//! errors: 11 bytes) and one [`UnitRec`] per mapping unit (stamp and logical
//! unit: 12 bytes). A page of one unit therefore costs 23 bytes. The arrays come
//! from a [`Storage`]: [`VecStorage`] allocates them (feature `std`),
//! [`LentStorage`] borrows caller-provided slices (bare metal).
//!
//! Metadata pages (translation pages, power-cut records) carry bytes rather
//! than unit stamps. [`VecStorage`] keeps them in a map; [`LentStorage`] keeps
//! them in an optional [`LentMeta`]: a fixed number of page-sized slots lent by
//! the caller, a slot freed when its block is erased.

use firmware_core::{Error, Geometry};

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
    /// Tag byte the spare area of the block's first page carries
    /// (`Spare::tag`: the FTL's placement handle), kept as `ec_hdr` is.
    pub(crate) tag_hdr: u8,
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
        tag_hdr: 0,
    };
}

impl BlockRec {
    /// Length of [`BlockRec::to_bytes`].
    pub const BYTES: usize = 19;

    /// The record as little-endian bytes (for a medium kept in a file).
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0..4].copy_from_slice(&self.pe.to_le_bytes());
        b[4..8].copy_from_slice(&self.next_page.to_le_bytes());
        b[8..12].copy_from_slice(&self.quality.to_le_bytes());
        b[12] = self.class;
        b[13] = self.flags;
        b[14..18].copy_from_slice(&self.ec_hdr.to_le_bytes());
        b[18] = self.tag_hdr;
        b
    }

    /// The record [`BlockRec::to_bytes`] wrote.
    pub fn from_bytes(b: &[u8; Self::BYTES]) -> Self {
        let w = |i: usize| [b[i], b[i + 1], b[i + 2], b[i + 3]];
        BlockRec {
            pe: u32::from_le_bytes(w(0)),
            next_page: u32::from_le_bytes(w(4)),
            quality: f32::from_le_bytes(w(8)),
            class: b[12],
            flags: b[13],
            ec_hdr: u32::from_le_bytes(w(14)),
            tag_hdr: b[18],
        }
    }
}

impl Default for BlockRec {
    fn default() -> Self {
        BlockRec::INIT
    }
}

/// The stored spare area of one page, packed to 11 bytes. Opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, bytemuck::Zeroable)]
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

impl PageRec {
    /// Length of [`PageRec::to_bytes`].
    pub const BYTES: usize = 11;

    /// The record as little-endian bytes (for a medium kept in a file).
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        let seq = self.seq;
        b[0..8].copy_from_slice(&seq.to_le_bytes());
        b[8] = self.meta;
        b[9] = self.mask;
        b[10] = self.carried;
        b
    }

    /// The record [`PageRec::to_bytes`] wrote.
    pub fn from_bytes(b: &[u8; Self::BYTES]) -> Self {
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&b[0..8]);
        PageRec {
            seq: u64::from_le_bytes(seq),
            meta: b[8],
            mask: b[9],
            carried: b[10],
        }
    }
}

/// One stored mapping unit: its stamp and the logical unit from the spare area,
/// packed to 12 bytes. Opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, bytemuck::Zeroable)]
#[repr(C, packed)]
pub struct UnitRec {
    pub(crate) stamp: u64,
    pub(crate) lpn: u32,
}

impl UnitRec {
    /// Initial value for a lent array (any content is fine).
    pub const INIT: UnitRec = UnitRec { stamp: 0, lpn: 0 };
}

impl UnitRec {
    /// Length of [`UnitRec::to_bytes`].
    pub const BYTES: usize = 12;

    /// The record as little-endian bytes (for a medium kept in a file).
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        let (stamp, lpn) = (self.stamp, self.lpn);
        b[0..8].copy_from_slice(&stamp.to_le_bytes());
        b[8..12].copy_from_slice(&lpn.to_le_bytes());
        b
    }

    /// The record [`UnitRec::to_bytes`] wrote.
    pub fn from_bytes(b: &[u8; Self::BYTES]) -> Self {
        let mut stamp = [0u8; 8];
        stamp.copy_from_slice(&b[0..8]);
        UnitRec {
            stamp: u64::from_le_bytes(stamp),
            lpn: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
        }
    }
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
    /// Whether [`Storage::put_meta`] can keep `len` bytes for `page` now. The
    /// medium asks before programming, so a full store refuses the program
    /// instead of losing the bytes of a page it reports written.
    fn meta_room(&self, page: u32, len: usize) -> bool {
        let _ = page;
        len <= self.meta_capacity()
    }
    /// Pages `first..first + count` (one block) were erased: their metadata
    /// bytes can go. Stores with room to spare may keep them (nothing reads
    /// the bytes of a page that is not a programmed metadata page).
    fn forget_meta(&mut self, first: u32, count: u32) {
        let _ = (first, count);
    }
    /// Whether this store keeps the entrusted LBAs of spare areas
    /// (`Spare::entrusted`, Reparo's page-level P2L entrustment). The medium
    /// refuses a program that carries some when it does not, rather than
    /// lose them.
    fn keeps_entrusted(&self) -> bool {
        false
    }
    /// Stores the entrusted LBA of unit `unit` (plus one; 0: none).
    fn put_entrusted(&mut self, unit: usize, v: u32) {
        let _ = (unit, v);
    }
    /// The entrusted LBA of unit `unit` (plus one; 0: none).
    fn entrusted(&self, unit: usize) -> u32 {
        let _ = unit;
        0
    }
}

/// Slot value of [`LentMeta`] for "holds no page".
const NO_PAGE: u32 = u32::MAX;

/// Caller-lent room for metadata pages: `slots` page buffers of `page_bytes`
/// each, and the page number each holds. A program takes the slot its page
/// already has, else a free one; an erase frees the slots of its block. Size
/// it for the most metadata pages the FTL keeps written at once (its
/// metadata region at its largest); a program finding no slot fails with
/// `BadAddress`.
pub struct LentMeta<'a> {
    bytes: &'a mut [u8],
    pages: &'a mut [u32],
    page_bytes: usize,
    used: usize,
    peak: usize,
}

impl<'a> LentMeta<'a> {
    /// Wraps `pages.len()` slots over `bytes` (at least [`LentMeta::bytes_for`]
    /// long); every slot starts free, whatever the slices held.
    pub fn new(
        bytes: &'a mut [u8],
        pages: &'a mut [u32],
        page_bytes: usize,
    ) -> Result<Self, Error> {
        if bytes.len() < Self::bytes_for(pages.len(), page_bytes) {
            return Err(Error::TableTooSmall(&"nand-model metadata page bytes"));
        }
        pages.fill(NO_PAGE);
        Ok(LentMeta {
            bytes,
            pages,
            page_bytes,
            used: 0,
            peak: 0,
        })
    }

    /// No metadata room (the medium then refuses metadata programs).
    pub fn none() -> LentMeta<'static> {
        LentMeta {
            bytes: &mut [],
            pages: &mut [],
            page_bytes: 0,
            used: 0,
            peak: 0,
        }
    }

    /// Bytes `slots` slots of `page_bytes` need.
    pub const fn bytes_for(slots: usize, page_bytes: usize) -> usize {
        slots.saturating_mul(page_bytes)
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.pages.len()
    }

    /// Slots holding a page now.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Most slots held at once so far: how close the lent room came to full.
    pub fn peak(&self) -> usize {
        self.peak
    }

    fn find(&self, page: u32) -> Option<usize> {
        self.pages.iter().position(|&p| p == page)
    }

    fn slot_for(&self, page: u32) -> Option<usize> {
        self.find(page).or_else(|| self.find(NO_PAGE))
    }

    fn capacity(&self) -> usize {
        if self.pages.is_empty() {
            0
        } else {
            self.page_bytes
        }
    }

    fn put(&mut self, page: u32, data: &[u8]) {
        let Some(i) = self.slot_for(page) else {
            return;
        };
        let pb = self.page_bytes;
        let Some(dst) = self.bytes.get_mut(i * pb..(i + 1) * pb) else {
            return;
        };
        let n = data.len().min(pb);
        dst[..n].copy_from_slice(&data[..n]);
        dst[n..].fill(0);
        if self.pages[i] == NO_PAGE {
            self.pages[i] = page;
            self.used += 1;
            self.peak = self.peak.max(self.used);
        }
    }

    fn get(&self, page: u32) -> Option<&[u8]> {
        let i = self.find(page)?;
        self.bytes
            .get(i * self.page_bytes..(i + 1) * self.page_bytes)
    }

    fn forget(&mut self, first: u32, count: u32) {
        let end = first.saturating_add(count);
        for p in self.pages.iter_mut() {
            if *p != NO_PAGE && (first..end).contains(p) {
                *p = NO_PAGE;
                self.used -= 1;
            }
        }
    }
}

/// Arrays lent by the caller, for a medium without a heap.
///
/// Size them with [`StorageSizes::for_geometry`]; longer slices are fine.
pub struct LentStorage<'a> {
    blocks: &'a mut [BlockRec],
    pages: &'a mut [PageRec],
    units: &'a mut [UnitRec],
    meta: LentMeta<'a>,
}

impl<'a> LentStorage<'a> {
    /// Wraps the three lent arrays (lengths are checked when the medium is
    /// built), with no room for metadata pages.
    pub fn new(
        blocks: &'a mut [BlockRec],
        pages: &'a mut [PageRec],
        units: &'a mut [UnitRec],
    ) -> Self {
        LentStorage {
            blocks,
            pages,
            units,
            meta: LentMeta::none(),
        }
    }

    /// Adds lent room for metadata pages, which mapping persistence needs.
    pub fn with_meta(mut self, meta: LentMeta<'a>) -> Self {
        self.meta = meta;
        self
    }

    /// The metadata room (for its fill level).
    pub fn meta_store(&self) -> &LentMeta<'a> {
        &self.meta
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
    fn meta_capacity(&self) -> usize {
        self.meta.capacity()
    }
    fn put_meta(&mut self, page: u32, bytes: &[u8]) {
        self.meta.put(page, bytes);
    }
    fn meta(&self, page: u32) -> Option<&[u8]> {
        self.meta.get(page)
    }
    fn meta_room(&self, page: u32, len: usize) -> bool {
        len <= self.meta.capacity() && self.meta.slot_for(page).is_some()
    }
    fn forget_meta(&mut self, first: u32, count: u32) {
        self.meta.forget(first, count);
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
    /// Entrusted LBAs per unit (plus one), allocated on first use: only
    /// page-level P2L entrustment writes them.
    entrusted: std::vec::Vec<u32>,
}

#[cfg(feature = "std")]
impl VecStorage {
    /// The first non-zero entrusted entry: makes the array, then stores it.
    #[cold]
    #[inline(never)]
    fn entrust_first(&mut self, unit: usize, v: u32) {
        self.entrusted = std::vec![0; self.units.len()];
        if let Some(e) = self.entrusted.get_mut(unit) {
            *e = v;
        }
    }

    /// Allocates the arrays `geo` needs. The page and unit records (all
    /// but a few bytes per block) come zeroed from the allocator, so the
    /// operating system backs them with memory only where a page is
    /// written: a short run on a large drive pays for what it touches
    /// (in 2 MiB pieces once an array reaches a GiB, see
    /// [`crate::huge::advise_ordered`]).
    pub fn new(geo: &Geometry) -> Self {
        let s = StorageSizes::for_geometry(geo);
        const _: () = assert!(PageRec::INIT.seq == 0 && PageRec::INIT.meta == 0);
        const _: () = assert!(PageRec::INIT.mask == 0 && PageRec::INIT.carried == 0);
        const _: () = assert!(UnitRec::INIT.stamp == 0 && UnitRec::INIT.lpn == 0);
        let mut pages = bytemuck::zeroed_vec(s.pages);
        let mut units = bytemuck::zeroed_vec(s.units);
        crate::huge::advise_ordered(&mut pages);
        crate::huge::advise_ordered(&mut units);
        VecStorage {
            blocks: std::vec![BlockRec::INIT; s.blocks],
            pages,
            units,
            meta: std::collections::HashMap::new(),
            page_bytes: geo.page_bytes as usize,
            entrusted: std::vec::Vec::new(),
        }
    }

    /// Metadata pages whose bytes the store holds now (at most the
    /// programmed metadata pages of blocks not erased since).
    pub fn meta_pages(&self) -> usize {
        self.meta.len()
    }

    /// Wraps arrays saved earlier (a medium kept in a file), with no
    /// metadata pages yet ([`Storage::put_meta`] adds them). Lengths are
    /// checked when the medium is built.
    pub fn from_records(
        geo: &Geometry,
        blocks: std::vec::Vec<BlockRec>,
        pages: std::vec::Vec<PageRec>,
        units: std::vec::Vec<UnitRec>,
    ) -> Self {
        VecStorage {
            blocks,
            pages,
            units,
            meta: std::collections::HashMap::new(),
            page_bytes: geo.page_bytes as usize,
            entrusted: std::vec::Vec::new(),
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
    /// Drops the erased block's metadata bytes: region blocks return to the
    /// free pool, so keeping them would grow the store by a page for every
    /// translation page ever written.
    fn forget_meta(&mut self, first: u32, count: u32) {
        if self.meta.is_empty() {
            return;
        }
        for page in first..first.saturating_add(count) {
            self.meta.remove(&page);
        }
    }
    fn keeps_entrusted(&self) -> bool {
        true
    }
    #[inline]
    fn put_entrusted(&mut self, unit: usize, v: u32) {
        // Every program stores its units' entries, nearly always 0 with the
        // array never made: that case stays a test at the caller.
        if let Some(e) = self.entrusted.get_mut(unit) {
            *e = v;
        } else if v != 0 && self.entrusted.is_empty() {
            self.entrust_first(unit, v);
        }
    }
    fn entrusted(&self, unit: usize) -> u32 {
        self.entrusted.get(unit).copied().unwrap_or(0)
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

//! Full-data pages: a medium that keeps every byte programmed into it.
//!
//! [`SimMedium`] stores a compact 64-bit stamp per mapping unit, which is all a
//! simulation with an oracle needs and keeps a 16 GiB drive at about 100 MiB.
//! A client that must read back the exact bytes it wrote (a block-device
//! server driven by a real file system, for example) needs the payload itself:
//! [`FullDataMedium`] wraps a [`SimMedium`] and adds a side store of `B` bytes
//! per physical mapping unit.
//!
//! Every rule of the medium (program order, erased reads, the copyback plane
//! rule and error carry-over, the reliability model, fault injection, torn
//! pages, die failure, the counters) is left to the inner [`SimMedium`]: each
//! operation runs there first, and only when it succeeds are bytes moved in or
//! out of the side store. So a [`FullDataMedium`] returns exactly the results a
//! [`SimMedium`] would for the same sequence of operations.
//!
//! # Stamps
//!
//! The inner medium is programmed with the [`FullUnit::digest`] of each unit (a
//! 64-bit hash of its bytes), so its stamps still identify unit contents (a
//! zeroed unit has digest 0, like an unprogrammed unit of the stamp medium).
//!
//! # Memory
//!
//! The side store costs `B` bytes per physical mapping unit (the page size per
//! page), on top of the inner medium's `11 + 12 * units_per_page` bytes per page
//! and 16 bytes per erase block for the store's block table. It is allocated
//! lazily, one erase block at a time, on the first program or copyback into the
//! block, and never freed: a drive whose every block has been written once
//! holds its full raw capacity in memory (a 16 GiB drive needs 16 GiB plus
//! over-provisioning).

use firmware_core::medium::addr::MAX_UNITS_PER_PAGE;
use firmware_core::{BlockId, Error, Geometry, Nand, NandResult, Ppn, Spare, UnitMask};

use crate::config::{FaultConfig, ReliabilityConfig};
use crate::hash::splitmix64;
use crate::medium::{SimMedium, TornProgram};

/// The content of one mapping unit of `B` bytes: the [`Nand::Unit`] of
/// [`FullDataMedium`].
///
/// `Default` is all zeros, which is also what units outside a page's unit mask
/// read as.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct FullUnit<const B: usize>([u8; B]);

impl<const B: usize> Default for FullUnit<B> {
    /// A zeroed unit.
    fn default() -> Self {
        FullUnit([0; B])
    }
}

impl<const B: usize> core::fmt::Debug for FullUnit<B> {
    /// The size, the first 8 bytes and the digest (units are large).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "FullUnit<{B}>({:02x?}.. digest {:#018x})",
            &self.0[..B.min(8)],
            self.digest()
        )
    }
}

impl<const B: usize> From<[u8; B]> for FullUnit<B> {
    fn from(bytes: [u8; B]) -> Self {
        FullUnit(bytes)
    }
}

impl<const B: usize> FullUnit<B> {
    /// Size of the unit in bytes.
    pub const BYTES: usize = B;

    /// Wraps `bytes`.
    #[inline]
    pub const fn from_bytes(bytes: [u8; B]) -> Self {
        FullUnit(bytes)
    }

    /// The unit's bytes.
    #[inline]
    pub const fn as_bytes(&self) -> &[u8; B] {
        &self.0
    }

    /// The unit's bytes, writable.
    #[inline]
    pub fn as_bytes_mut(&mut self) -> &mut [u8; B] {
        &mut self.0
    }

    /// Unwraps the bytes.
    #[inline]
    pub const fn into_bytes(self) -> [u8; B] {
        self.0
    }

    /// A 64-bit hash of the bytes: the stamp [`FullDataMedium`] stores for the
    /// unit in its inner medium. A zeroed unit has digest 0.
    pub fn digest(&self) -> u64 {
        // Four independent lanes over 32-byte blocks keep the multiply chains short.
        const K: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut lanes = [0u64; 4];
        let mut nonzero = false;
        let mut blocks = self.0.chunks_exact(32);
        for blk in &mut blocks {
            for (l, w) in lanes.iter_mut().zip(blk.chunks_exact(8)) {
                let mut b8 = [0u8; 8];
                b8.copy_from_slice(w);
                let w = u64::from_le_bytes(b8);
                nonzero |= w != 0;
                *l = (l.rotate_left(29) ^ w).wrapping_mul(K);
            }
        }
        let rest = blocks.remainder();
        for (i, w) in rest.chunks(8).enumerate() {
            let mut b8 = [0u8; 8];
            b8[..w.len()].copy_from_slice(w);
            let w = u64::from_le_bytes(b8);
            nonzero |= w != 0;
            let l = &mut lanes[i % 4];
            *l = (l.rotate_left(29) ^ w).wrapping_mul(K);
        }
        if !nonzero {
            return 0;
        }
        let mut h = B as u64;
        for l in lanes {
            h = splitmix64(h ^ l);
        }
        // Keep 0 for the zeroed unit only.
        h | u64::from(h == 0)
    }
}

/// A strict simulated NAND medium that stores full unit payloads.
///
/// Every operation is delegated to an inner [`SimMedium`] (so every rule, fault
/// and counter is the stamp medium's); on success the unit bytes are copied
/// into or out of a side store of `B` bytes per physical unit, allocated per
/// erase block on first use (see the [module documentation](self) for the
/// memory cost). `B` must be the mapping unit size,
/// `page_bytes / units_per_page`.
///
/// Fault injection and statistics go through [`FullDataMedium::inner_mut`] and
/// [`FullDataMedium::inner`]. Anything that only marks the array
/// (`fail_next_program`, `fail_die`, `tear_erase`, `set_pe`, ...) is fine
/// there; programs and copybacks made directly on the inner medium bypass the
/// side store, so use [`FullDataMedium::tear_program`] rather than the inner
/// one.
#[derive(Clone)]
pub struct FullDataMedium<const B: usize> {
    inner: SimMedium,
    /// Pages per block.
    ppb: u32,
    /// Units per page.
    upp: usize,
    /// Units per block.
    upb: usize,
    /// One array of `upb` units per erase block, allocated on first write.
    blocks: Vec<Option<Box<[[u8; B]]>>>,
}

impl<const B: usize> core::fmt::Debug for FullDataMedium<B> {
    /// The inner medium and how much of the side store is allocated.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FullDataMedium")
            .field("unit_bytes", &B)
            .field("store_bytes", &self.store_bytes())
            .field("inner", &self.inner)
            .finish()
    }
}

impl<const B: usize> FullDataMedium<B> {
    /// Builds a fresh medium for `geo` (see [`SimMedium::new`]). Fails with
    /// `InvalidConfig` if `B` is not `page_bytes / units_per_page`.
    pub fn new(geo: Geometry, rel: ReliabilityConfig, fault: FaultConfig) -> Result<Self, Error> {
        Self::check_unit_size(&geo)?;
        Self::from_medium(SimMedium::new(geo, rel, fault)?)
    }

    /// Wraps an existing stamp medium (for example one whose blocks were aged
    /// with `set_initial_pe`). Pages it already holds read back as zeros. Fails
    /// with `InvalidConfig` if `B` is not `page_bytes / units_per_page`.
    pub fn from_medium(inner: SimMedium) -> Result<Self, Error> {
        let geo = *inner.geometry();
        Self::check_unit_size(&geo)?;
        let upp = usize::from(geo.units_per_page);
        Ok(FullDataMedium {
            ppb: geo.pages_per_block,
            upp,
            upb: geo.pages_per_block as usize * upp,
            blocks: vec![None; geo.total_blocks() as usize],
            inner,
        })
    }

    /// Whether `B` is the mapping unit size of `geo`.
    fn check_unit_size(geo: &Geometry) -> Result<(), Error> {
        let upp = u64::from(geo.units_per_page);
        if B == 0 || upp == 0 || (B as u64).checked_mul(upp) != Some(u64::from(geo.page_bytes)) {
            return Err(Error::InvalidConfig(
                &"full-data unit size must equal page_bytes / units_per_page",
            ));
        }
        Ok(())
    }

    /// The stamp medium that applies every rule (for statistics and inspection).
    pub fn inner(&self) -> &SimMedium {
        &self.inner
    }

    /// The stamp medium, writable (for fault injection; see the type documentation).
    pub fn inner_mut(&mut self) -> &mut SimMedium {
        &mut self.inner
    }

    /// Gives the stamp medium back, dropping the side store.
    pub fn into_inner(self) -> SimMedium {
        self.inner
    }

    /// The geometry the medium was built for.
    pub fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }

    /// The inner medium's operation counters.
    pub fn stats(&self) -> &crate::Stats {
        self.inner.stats()
    }

    /// Bytes of side store allocated so far (`B` per unit of every block written
    /// at least once).
    pub fn store_bytes(&self) -> usize {
        self.blocks.iter().flatten().count() * self.upb * B
    }

    /// Side-store bytes once every block has been written: `B` per physical unit.
    pub fn max_store_bytes(geo: &Geometry) -> u64 {
        u64::from(geo.total_units()) * B as u64
    }

    /// A program of `page` interrupted by power loss (see
    /// [`SimMedium::tear_program`]); the bytes are kept when `outcome` is
    /// [`TornProgram::Intact`] (otherwise the page never reads back correctly).
    pub fn tear_program(
        &mut self,
        page: Ppn,
        data: &[FullUnit<B>],
        spare: &Spare,
        outcome: TornProgram,
    ) -> Result<(), firmware_core::NandError> {
        let (stamps, k) = Self::stamps(data, spare.units);
        self.inner
            .tear_program(page, &stamps[..k], spare, outcome)?;
        if outcome == TornProgram::Intact {
            self.store_page(page, spare.units, data);
        }
        Ok(())
    }

    /// Digests of the units in `data` (as many as the mask uses) and how many
    /// entries to pass on, so the inner medium sees `data`'s length.
    #[inline]
    fn stamps(data: &[FullUnit<B>], units: UnitMask) -> ([u64; MAX_UNITS_PER_PAGE], usize) {
        let mut stamps = [0u64; MAX_UNITS_PER_PAGE];
        let k = data.len().min(MAX_UNITS_PER_PAGE);
        let n = (units.count() as usize).min(k);
        for (s, d) in stamps.iter_mut().zip(data).take(n) {
            *s = d.digest();
        }
        (stamps, k)
    }

    /// Block index and index of the page's first unit inside the block's array.
    #[inline]
    fn locate(&self, page: Ppn) -> (usize, usize) {
        let b = (page.0 / self.ppb) as usize;
        let off = (page.0 % self.ppb) as usize * self.upp;
        (b, off)
    }

    /// The unit array of block `b`, allocated (zeroed) on first use.
    #[inline]
    fn block_mut(&mut self, b: usize) -> &mut [[u8; B]] {
        let upb = self.upb;
        self.blocks[b].get_or_insert_with(|| vec![[0u8; B]; upb].into_boxed_slice())
    }

    /// Copies a programmed page's units in (zeros outside the mask).
    fn store_page(&mut self, page: Ppn, units: UnitMask, data: &[FullUnit<B>]) {
        let (b, off) = self.locate(page);
        let upp = self.upp;
        let dst = &mut self.block_mut(b)[off..off + upp];
        let mut src = data.iter();
        for (i, d) in dst.iter_mut().enumerate() {
            *d = match (units.0 & (1 << i) != 0).then(|| src.next()).flatten() {
                Some(u) => u.0,
                None => [0; B],
            };
        }
    }
}

impl<const B: usize> Nand for FullDataMedium<B> {
    type Unit = FullUnit<B>;

    /// Reads through the inner medium (which decides every error), then copies
    /// the stored bytes of `units` into `out` in mask order. On error `out` is
    /// left as it was.
    #[inline]
    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [FullUnit<B>]) -> NandResult {
        let mut stamps = [0u64; MAX_UNITS_PER_PAGE];
        let k = out.len().min(MAX_UNITS_PER_PAGE);
        let r = self.inner.read(page, units, &mut stamps[..k])?;
        let (b, off) = self.locate(page);
        let stored = self.blocks[b].as_deref();
        let mut dst = out.iter_mut();
        for i in 0..self.upp {
            if units.0 & (1 << i) != 0 {
                if let Some(o) = dst.next() {
                    o.0 = stored.map_or([0; B], |s| s[off + i]);
                }
            }
        }
        Ok(r)
    }

    /// Programs the inner medium with the units' digests, then stores the bytes
    /// (units outside `spare.units` are stored as zeros).
    #[inline]
    fn program(&mut self, page: Ppn, data: &[FullUnit<B>], spare: &Spare) -> NandResult {
        let (stamps, k) = Self::stamps(data, spare.units);
        let r = self.inner.program(page, &stamps[..k], spare)?;
        self.store_page(page, spare.units, data);
        Ok(r)
    }

    /// Erases `block` in the inner medium. The stored bytes stay but can no
    /// longer be read: the inner medium reports the pages erased.
    #[inline]
    fn erase(&mut self, block: BlockId) -> NandResult {
        self.inner.erase(block)
    }

    /// Copies back through the inner medium (plane rule, program order, error
    /// carry-over), then copies the source's bytes of the units in
    /// `spare.units` to the destination; the others become zeros.
    #[inline]
    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        self.inner.program_meta(page, bytes, spare)
    }

    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        self.inner.read_meta(page, out)
    }

    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        let r = self.inner.copyback(src, dst, spare)?;
        let (sb, soff) = self.locate(src);
        let (db, doff) = self.locate(dst);
        let upp = self.upp;
        let mask = spare.units.0;
        let wanted = |i: usize| mask & (1 << i) != 0;
        if self.blocks[sb].is_none() {
            // Never written through this wrapper: the source reads as zeros.
            self.block_mut(db)[doff..doff + upp].fill([0; B]);
        } else if sb == db {
            let blk = self.block_mut(db);
            for i in 0..upp {
                if wanted(i) {
                    blk.copy_within(soff + i..soff + i + 1, doff + i);
                } else {
                    blk[doff + i] = [0; B];
                }
            }
        } else {
            self.block_mut(db);
            let (s, d) = if sb < db {
                let (lo, hi) = self.blocks.split_at_mut(db);
                (&lo[sb], &mut hi[0])
            } else {
                let (lo, hi) = self.blocks.split_at_mut(sb);
                (&hi[0], &mut lo[db])
            };
            if let (Some(s), Some(d)) = (s.as_deref(), d.as_deref_mut()) {
                let from = &s[soff..soff + upp];
                for (i, (o, u)) in d[doff..doff + upp].iter_mut().zip(from).enumerate() {
                    *o = if wanted(i) { *u } else { [0; B] };
                }
            }
        }
        Ok(r)
    }
}

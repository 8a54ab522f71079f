//! The full-data medium kept in an image file.
//!
//! Every rule (program order, erased reads, the copyback plane rule, the
//! reliability and fault models) is the in-memory [`SimMedium`]'s, loaded
//! from the file's records when the image opens. After each operation that
//! changed the array, the changed records and bytes are written through to
//! the file in an order that makes every prefix a legal NAND state:
//!
//! * a program (or copyback) writes the page's bytes, its unit records and
//!   its page record first, all above the block's write pointer where
//!   nothing is read, and the block record (the write pointer) last: killed
//!   before that write, the page was never programmed; after it, it was;
//! * an erase writes only the block record (erase count, write pointer 0):
//!   one small write, so the block is erased or not.
//!
//! Every record is written as an entry with a CRC-32C of its address and
//! content ([`super::layout`]), and every unit of page data with a CRC-32C
//! of its address, its page's program sequence number and its bytes (kept
//! in the unit's entry). Opening the image checks every entry of the
//! programmed pages and the bytes of metadata pages; a data read checks the
//! bytes it returns. Whatever fails a check is reported as
//! [`NandError::Uncorrectable`], never as data: the core then fails the
//! host read (an NBD `EIO`) or, in GC, loses the unit, as for a worn page.
//! A metadata page whose record is intact but whose bytes fail reads as
//! zeros, which fail the core's seal: the core knows from the spare area
//! which translation page it was and reads that page's units as errors.
//! A unit whose bytes are [`poison_pattern`] is stored with a complemented
//! CRC, so it too reads as an error: that is how a payload found damaged in
//! the capacitor region reaches the medium (see [`super::journal`]).
//!
//! In deferred mode (the capacitor flush at power-on, see [`super`]) the
//! writes are collected instead, to be saved and applied as one batch.

use std::fs::File;
use std::os::unix::fs::FileExt;

use firmware_core::medium::addr::MAX_UNITS_PER_PAGE;
use firmware_core::{BlockId, Nand, NandError, NandResult, PageKind, Ppn, Spare, UnitMask};
use nand_model::{
    BlockRec, FaultConfig, FullUnit, Medium, PageRec, ReliabilityConfig, SimMedium, Storage,
    UnitRec, VecStorage,
};

use super::layout::{
    block_entry, checked, data_crc, page_entry, read_zero_filled, unit_entry, Layout, BLOCK_ENTRY,
    PAGE_ENTRY, UNIT_ENTRY,
};
use super::ImageError;

/// Writes made in deferred mode: (file offset, bytes), in order.
pub type Redo = Vec<(u64, Vec<u8>)>;

/// Bit of [`FileMedium`]'s damage marks: the page's own entry (or its
/// block's) failed its check, so nothing of the page can be trusted.
const WHOLE_PAGE: u16 = 1 << 8;

/// The bytes of a unit that must read as an error (a payload found damaged
/// in the capacitor region is replaced by them): a fixed pseudo-random
/// pattern a host is not expected to write.
pub fn poison_pattern(unit_bytes: usize) -> Vec<u8> {
    let mut x = 0x5EED_BAD0_DA7A_F00Du64;
    let mut out = Vec::with_capacity(unit_bytes + 8);
    while out.len() < unit_bytes {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(unit_bytes);
    out
}

/// A full-data medium in an image file. See the [module documentation](self).
pub struct FileMedium<const B: usize> {
    inner: SimMedium,
    file: File,
    lay: Layout,
    upp: usize,
    ppb: u32,
    /// Collected writes while deferred.
    redo: Option<Redo>,
    /// The first I/O error (operations then fail with `DieFailed`).
    failed: Option<String>,
    /// CRC of each physical unit's bytes, as its entry holds it.
    dcrc: Vec<u32>,
    /// Per page: units whose entry failed its check (bits 0-7) and
    /// [`WHOLE_PAGE`]. Cleared when the page is programmed or erased again.
    bad: Vec<u16>,
    /// [`poison_pattern`] for `B`-byte units.
    poison: Vec<u8>,
    /// Checks failed: damaged entries found at open, damaged metadata
    /// pages, refused reads.
    detected: u64,
}

fn read_at(file: &File, off: u64, len: usize) -> Result<Vec<u8>, ImageError> {
    let mut b = vec![0u8; len];
    read_zero_filled(file, &mut b, off)
        .map_err(|e| ImageError::Io(format!("reading the image at byte {off}: {e}")))?;
    Ok(b)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    b.get(i..i + 4)
        .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(i..i + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

impl<const B: usize> FileMedium<B> {
    /// A new medium (fresh records from the models, with `initial_pe`) whose
    /// entries are written to `file` at once.
    pub fn create(
        file: File,
        lay: Layout,
        rel: ReliabilityConfig,
        fault: FaultConfig,
        initial_pe: u32,
    ) -> Result<Self, ImageError> {
        let mut inner = SimMedium::new(lay.geo, rel, fault).map_err(ImageError::Core)?;
        if initial_pe > 0 {
            inner.set_initial_pe(initial_pe);
        }
        let m = Self::wrap(inner, file, lay);
        let (blocks, pages, units) = m.inner.storage().split();
        let put = |off: u64, b: Vec<u8>| {
            m.file
                .write_all_at(&b, off)
                .map_err(|e| ImageError::Io(format!("writing the medium records: {e}")))
        };
        let ppb = lay.geo.pages_per_block as usize;
        put(
            lay.blocks_off,
            (0u32..)
                .zip(blocks)
                .flat_map(|(b, r)| block_entry(b, &r.to_bytes()))
                .collect(),
        )?;
        // Entries of unprogrammed pages are never checked; they are written
        // valid all the same.
        put(
            lay.pages_rec_off,
            (0u32..)
                .zip(pages)
                .flat_map(|(p, r)| {
                    let pe = blocks
                        .get(p as usize / ppb)
                        .map_or(0, |b| u32_at(&b.to_bytes(), 0));
                    page_entry(p, pe, &r.to_bytes())
                })
                .collect(),
        )?;
        put(
            lay.units_off,
            (0u64..)
                .zip(units)
                .flat_map(|(u, r)| unit_entry(u, 0, &r.to_bytes(), 0))
                .collect(),
        )?;
        Ok(m)
    }

    /// The medium saved in `file`, every entry of its programmed pages and
    /// the bytes of its metadata pages checked: what fails a check is
    /// marked damaged and reads as an error.
    pub fn load(
        file: File,
        lay: Layout,
        rel: ReliabilityConfig,
        fault: FaultConfig,
    ) -> Result<Self, ImageError> {
        let g = lay.geo;
        let (nb, np, nu) = (
            g.total_blocks() as usize,
            g.total_pages() as usize,
            g.total_units() as usize,
        );
        let (ppb, upp) = (g.pages_per_block as usize, usize::from(g.units_per_page));
        let mut bad = vec![0u16; np];
        let mut dcrc = vec![0u32; nu];
        let mut detected = 0u64;
        let raw = read_at(&file, lay.blocks_off, nb * BLOCK_ENTRY)?;
        let mut blocks = Vec::with_capacity(nb);
        // Per block: erase count and write pointer, when its entry checks.
        let mut bstate: Vec<Option<(u32, u32)>> = Vec::with_capacity(nb);
        for (b, c) in (0u32..).zip(raw.chunks_exact(BLOCK_ENTRY)) {
            match checked::<BLOCK_ENTRY, { BlockRec::BYTES }>(c, |r| block_entry(b, r)) {
                Some(r) => {
                    bstate.push(Some((u32_at(&r, 0), u32_at(&r, 4))));
                    blocks.push(BlockRec::from_bytes(&r));
                }
                None => {
                    // Unknown state: every page written and unreadable,
                    // until the core erases the block.
                    detected += 1;
                    let mut r = BlockRec::INIT.to_bytes();
                    r[4..8].copy_from_slice(&g.pages_per_block.to_le_bytes());
                    bstate.push(None);
                    blocks.push(BlockRec::from_bytes(&r));
                    for m in bad.iter_mut().skip(b as usize * ppb).take(ppb) {
                        *m = WHOLE_PAGE;
                    }
                }
            }
        }
        let raw_p = read_at(&file, lay.pages_rec_off, np * PAGE_ENTRY)?;
        let raw_u = read_at(&file, lay.units_off, nu * UNIT_ENTRY)?;
        let mut pages = Vec::with_capacity(np);
        let mut units = Vec::with_capacity(nu);
        for (p, c) in (0u32..).zip(raw_p.chunks_exact(PAGE_ENTRY)) {
            let pi = p as usize;
            let prec: [u8; PageRec::BYTES] = c[..PageRec::BYTES].try_into().unwrap_or_default();
            let ucs = raw_u
                .get(pi * upp * UNIT_ENTRY..(pi + 1) * upp * UNIT_ENTRY)
                .unwrap_or(&[]);
            let programmed = match bstate.get(pi / ppb).copied().flatten() {
                Some((_, wp)) => ((pi % ppb) as u32) < wp,
                None => false,
            };
            let mut seq = None;
            if programmed {
                let pe = bstate
                    .get(pi / ppb)
                    .copied()
                    .flatten()
                    .map_or(0, |(pe, _)| pe);
                match checked::<PAGE_ENTRY, { PageRec::BYTES }>(c, |r| page_entry(p, pe, r)) {
                    Some(r) => seq = Some(u64_at(&r, 0)),
                    None => {
                        detected += 1;
                        bad[pi] = WHOLE_PAGE;
                    }
                }
            }
            pages.push(PageRec::from_bytes(&prec));
            for (i, uc) in ucs.chunks_exact(UNIT_ENTRY).enumerate() {
                let u = (pi * upp + i) as u64;
                let rec: [u8; UnitRec::BYTES] = uc[..UnitRec::BYTES].try_into().unwrap_or_default();
                let dc = u32_at(uc, UnitRec::BYTES);
                if let Some(seq) = seq {
                    if unit_entry(u, seq, &rec, dc)[..] != uc[..] {
                        detected += 1;
                        bad[pi] |= 1 << i;
                    }
                }
                dcrc[u as usize] = dc;
                units.push(UnitRec::from_bytes(&rec));
            }
        }
        let store = VecStorage::from_records(&g, blocks, pages, units);
        let m = Medium::resume(g, rel, fault, store).map_err(ImageError::Core)?;
        // Metadata pages: their bytes come from the page store, checked.
        let meta: Vec<(u32, u64)> = (0..g.total_pages())
            .filter(|&p| bad.get(p as usize) == Some(&0))
            .filter_map(|p| {
                m.peek_spare(Ppn(p))
                    .filter(|s| matches!(s.kind, PageKind::Map | PageKind::Meta))
                    .map(|s| (p, s.seq))
            })
            .collect();
        let mut store = m.into_storage();
        for (p, seq) in meta {
            let b = read_at(&file, lay.page(p), g.page_bytes as usize)?;
            let first = p as usize * upp;
            let ok = b.chunks_exact(B).enumerate().all(|(i, chunk)| {
                let u = first + i;
                dcrc.get(u) == Some(&data_crc(u as u64, seq, chunk))
            });
            if ok {
                store.put_meta(p, &b);
            } else {
                // The page's record is intact, so the core learns what the
                // page was (a translation page, the cut record) and takes
                // it as damaged through its own seal, which zeros fail:
                // its units read as errors instead of as an older copy.
                detected += 1;
                store.put_meta(p, &vec![0u8; b.len()]);
            }
        }
        let inner = Medium::resume(g, rel, fault, store).map_err(ImageError::Core)?;
        let mut m = Self::wrap(inner, file, lay);
        m.dcrc = dcrc;
        m.bad = bad;
        m.detected = detected;
        Ok(m)
    }

    fn wrap(inner: SimMedium, file: File, lay: Layout) -> Self {
        let g = lay.geo;
        FileMedium {
            inner,
            file,
            upp: usize::from(g.units_per_page),
            ppb: g.pages_per_block,
            lay,
            redo: None,
            failed: None,
            dcrc: vec![0; g.total_units() as usize],
            bad: vec![0; g.total_pages() as usize],
            poison: poison_pattern(B),
            detected: 0,
        }
    }

    /// The in-memory medium that applies every rule (counters, inspection).
    pub fn inner(&self) -> &SimMedium {
        &self.inner
    }

    /// Checks that failed since the medium was loaded: damaged entries and
    /// metadata pages found at open, and reads refused since.
    pub fn detected_corruptions(&self) -> u64 {
        self.detected
    }

    /// Pages marked damaged at open and not rewritten since.
    pub fn damaged_pages(&self) -> usize {
        self.bad.iter().filter(|&&m| m != 0).count()
    }

    /// From now on, collect the writes instead of making them.
    pub fn defer(&mut self) {
        self.redo = Some(Vec::new());
    }

    /// The writes collected since [`FileMedium::defer`]; writes go to the
    /// file again from now on.
    pub fn take_redo(&mut self) -> Redo {
        self.redo.take().unwrap_or_default()
    }

    /// The first I/O error, if any.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    fn put(&mut self, off: u64, bytes: &[u8]) {
        if let Some(r) = &mut self.redo {
            r.push((off, bytes.to_vec()));
            return;
        }
        if let Err(e) = self.file.write_all_at(bytes, off) {
            self.failed
                .get_or_insert_with(|| format!("writing the medium at byte {off}: {e}"));
        }
    }

    fn block_bytes(&self, b: u32) -> [u8; BlockRec::BYTES] {
        let (blocks, _, _) = self.inner.storage().split();
        blocks
            .get(b as usize)
            .map_or([0; BlockRec::BYTES], |r| r.to_bytes())
    }

    /// Program sequence number of page `p` as its record holds it.
    fn page_seq(&self, p: u32) -> u64 {
        let (_, pages, _) = self.inner.storage().split();
        pages
            .get(p as usize)
            .map_or(0, |r| u64_at(&r.to_bytes(), 0))
    }

    /// Writes page `p`'s bytes, unit entries (with the CRC of each unit's
    /// bytes; complemented for the units of `poisoned` and for units equal
    /// to the poison pattern) and page entry, then the block entry: see the
    /// module documentation for why in that order.
    fn write_page(&mut self, p: u32, bytes: &[u8], poisoned: u8) {
        self.put(self.lay.page(p), bytes);
        let seq = self.page_seq(p);
        let first = p as usize * self.upp;
        let mut entries = Vec::with_capacity(self.upp * UNIT_ENTRY);
        for i in 0..self.upp {
            let u = first + i;
            let chunk = bytes.get(i * B..(i + 1) * B).unwrap_or(&[]);
            let mut dc = data_crc(u as u64, seq, chunk);
            if poisoned & (1 << i) != 0 || chunk == &self.poison[..] {
                dc = !dc;
            }
            if let Some(d) = self.dcrc.get_mut(u) {
                *d = dc;
            }
            let (_, _, units) = self.inner.storage().split();
            let rec = units.get(u).map_or([0; UnitRec::BYTES], |r| r.to_bytes());
            entries.extend_from_slice(&unit_entry(u as u64, seq, &rec, dc));
        }
        self.put(self.lay.unit_rec(first as u64), &entries);
        let b = p / self.ppb;
        let brec = self.block_bytes(b);
        let (_, pages, _) = self.inner.storage().split();
        if let Some(prec) = pages.get(p as usize).map(|r| r.to_bytes()) {
            let pe = u32_at(&brec, 0);
            self.put(self.lay.page_rec(p), &page_entry(p, pe, &prec));
        }
        self.put(self.lay.block_rec(b), &block_entry(b, &brec));
        if let Some(m) = self.bad.get_mut(p as usize) {
            *m = 0;
        }
    }

    /// Reads page `p`'s bytes from the page store.
    fn page_bytes(&mut self, p: u32) -> Vec<u8> {
        let mut b = vec![0u8; self.lay.geo.page_bytes as usize];
        if let Err(e) = read_zero_filled(&self.file, &mut b, self.lay.page(p)) {
            self.failed
                .get_or_insert_with(|| format!("reading page {p}: {e}"));
        }
        b
    }

    /// Units of `mask` on page `p` whose entries or bytes (`bytes`, the
    /// page as stored) fail their checks.
    fn damaged_units(&self, p: u32, mask: UnitMask, bytes: &[u8]) -> u8 {
        let marks = self.bad.get(p as usize).copied().unwrap_or(0);
        if marks & WHOLE_PAGE != 0 {
            return mask.0;
        }
        let seq = self.page_seq(p);
        let first = p as usize * self.upp;
        let mut out = (marks as u8) & mask.0;
        for (i, chunk) in bytes.chunks_exact(B).enumerate().take(self.upp) {
            if mask.0 & (1 << i) != 0 && out & (1 << i) == 0 {
                let u = first + i;
                if self.dcrc.get(u) != Some(&data_crc(u as u64, seq, chunk)) {
                    out |= 1 << i;
                }
            }
        }
        out
    }

    /// The page's bytes as stored: the units of `mask` in order from
    /// `data`, zeros elsewhere.
    fn layout_units(&self, mask: UnitMask, data: &[FullUnit<B>]) -> Vec<u8> {
        let mut out = vec![0u8; self.upp * B];
        let mut src = data.iter();
        for (i, chunk) in out.chunks_exact_mut(B).enumerate() {
            if mask.0 & (1 << i) != 0 {
                if let Some(u) = src.next() {
                    chunk.copy_from_slice(u.as_bytes());
                }
            }
        }
        out
    }

    /// Runs `op` on the inner medium and writes page `p` through if the
    /// block record changed (the page was consumed, whatever the result);
    /// `bytes` gives the page's bytes and the units to store poisoned.
    fn consuming(
        &mut self,
        p: u32,
        bytes: impl FnOnce(&mut Self) -> (Vec<u8>, u8),
        op: impl FnOnce(&mut SimMedium) -> NandResult,
    ) -> NandResult {
        if self.failed.is_some() {
            return Err(NandError::DieFailed);
        }
        let before = self.block_bytes(p / self.ppb);
        let r = op(&mut self.inner);
        if self.block_bytes(p / self.ppb) != before {
            let (b, poisoned) = bytes(self);
            self.write_page(p, &b, poisoned);
        }
        r
    }
}

impl<const B: usize> Nand for FileMedium<B> {
    type Unit = FullUnit<B>;

    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [FullUnit<B>]) -> NandResult {
        if self.failed.is_some() {
            return Err(NandError::DieFailed);
        }
        if self
            .bad
            .get(page.0 as usize)
            .is_some_and(|m| m & WHOLE_PAGE != 0)
        {
            self.detected += 1;
            return Err(NandError::Uncorrectable);
        }
        let mut stamps = [0u64; MAX_UNITS_PER_PAGE];
        let k = out.len().min(MAX_UNITS_PER_PAGE);
        let r = self.inner.read(page, units, &mut stamps[..k])?;
        let bytes = self.page_bytes(page.0);
        if self.damaged_units(page.0, units, &bytes) != 0 {
            self.detected += 1;
            return Err(NandError::Uncorrectable);
        }
        let mut dst = out.iter_mut();
        for (i, chunk) in bytes.chunks_exact(B).enumerate().take(self.upp) {
            if units.0 & (1 << i) != 0 {
                if let Some(o) = dst.next() {
                    o.as_bytes_mut().copy_from_slice(chunk);
                }
            }
        }
        Ok(r)
    }

    fn program(&mut self, page: Ppn, data: &[FullUnit<B>], spare: &Spare) -> NandResult {
        let n = (spare.units.count() as usize).min(data.len());
        let mut stamps = [0u64; MAX_UNITS_PER_PAGE];
        for (s, d) in stamps.iter_mut().zip(data).take(n) {
            *s = d.digest();
        }
        let k = data.len().min(MAX_UNITS_PER_PAGE);
        let bytes = self.layout_units(spare.units, data);
        self.consuming(
            page.0,
            |_| (bytes, 0),
            |m| m.program(page, &stamps[..k], spare),
        )
    }

    fn erase(&mut self, block: BlockId) -> NandResult {
        if self.failed.is_some() {
            return Err(NandError::DieFailed);
        }
        let before = self.block_bytes(block.0);
        let r = self.inner.erase(block);
        let after = self.block_bytes(block.0);
        if after != before {
            self.put(self.lay.block_rec(block.0), &block_entry(block.0, &after));
            let first = block.0 as usize * self.ppb as usize;
            for m in self.bad.iter_mut().skip(first).take(self.ppb as usize) {
                *m = 0;
            }
        }
        r
    }

    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        let mask = spare.units;
        let upp = self.upp;
        self.consuming(
            dst.0,
            |s| {
                let from = s.page_bytes(src.0);
                // What fails its check at the source is stored poisoned:
                // a copy never makes damaged bytes valid.
                let poisoned = s.damaged_units(src.0, mask, &from);
                let mut to = vec![0u8; upp * B];
                for (i, (t, f)) in to.chunks_exact_mut(B).zip(from.chunks_exact(B)).enumerate() {
                    if mask.0 & (1 << i) != 0 {
                        t.copy_from_slice(f);
                    }
                }
                (to, poisoned)
            },
            |m| m.copyback(src, dst, spare),
        )
    }

    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        let pb = self.lay.geo.page_bytes as usize;
        let mut stored = vec![0u8; pb];
        let n = bytes.len().min(pb);
        stored[..n].copy_from_slice(&bytes[..n]);
        self.consuming(
            page.0,
            |_| (stored, 0),
            |m| m.program_meta(page, bytes, spare),
        )
    }

    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        if self.failed.is_some() {
            return Err(NandError::DieFailed);
        }
        let marks = self.bad.get(page.0 as usize).copied().unwrap_or(0);
        if marks & WHOLE_PAGE != 0 {
            self.detected += 1;
            return Err(NandError::Uncorrectable);
        }
        let mut r = self.inner.read_meta(page, out)?;
        // Units whose entry is damaged: their logical unit is unknown, so
        // the spare area does not claim them.
        r.spare.units.0 &= !(marks as u8);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::test_files::{temp, tiny_geo as geo};
    use firmware_core::Lpn;

    const B: usize = 4096;

    fn load(f: &File) -> FileMedium<B> {
        let lay = Layout::new(geo());
        FileMedium::load(
            f.try_clone().unwrap(),
            lay,
            ReliabilityConfig::default(),
            FaultConfig::default(),
        )
        .unwrap()
    }

    fn spare(seq: u64) -> Spare {
        let mut s = Spare {
            seq,
            units: UnitMask(0b11),
            ..Spare::default()
        };
        s.lpns[0] = Lpn(1);
        s.lpns[1] = Lpn(2);
        s
    }

    /// Applies the first `k` of `writes` to a copy of `base`.
    fn prefix(base: &[u8], writes: &Redo, k: usize, name: &str) -> (std::path::PathBuf, File) {
        let (p, f) = temp(name);
        f.write_all_at(base, 0).unwrap();
        for (off, b) in writes.iter().take(k) {
            f.write_all_at(b, *off).unwrap();
        }
        (p, f)
    }

    #[test]
    fn a_kill_between_any_two_writes_leaves_a_legal_nand_state() {
        let lay = Layout::new(geo());
        let (path, f) = temp("base");
        f.set_len(lay.cap_off).unwrap();
        let mut m = FileMedium::<B>::create(
            f.try_clone().unwrap(),
            lay,
            ReliabilityConfig::default(),
            FaultConfig::default(),
            0,
        )
        .unwrap();
        let data = [
            FullUnit::<B>::from_bytes([7; B]),
            FullUnit::from_bytes([9; B]),
        ];
        let page = Ppn(4); // block 1, page 0
                           // A program, its writes held back.
        let base = std::fs::read(&path).unwrap();
        m.defer();
        m.program(page, &data, &spare(1)).unwrap();
        let writes = m.take_redo();
        assert!(
            writes.len() >= 3,
            "bytes, records, block record: {writes:?}"
        );
        for k in 0..=writes.len() {
            let (p, c) = prefix(&base, &writes, k, "prog");
            let mut r = load(&c);
            let mut out = [FullUnit::<B>::default(); 2];
            if k < writes.len() {
                // Never programmed: erased, and programmable again.
                assert_eq!(
                    r.read(page, UnitMask(0b11), &mut out),
                    Err(NandError::Erased)
                );
                r.program(page, &data, &spare(2)).unwrap();
            } else {
                r.read(page, UnitMask(0b11), &mut out).unwrap();
                assert_eq!(out, data);
            }
            std::fs::remove_file(p).unwrap();
        }
        // An erase of the programmed block: one write, erased or not.
        for (off, b) in &writes {
            f.write_all_at(b, *off).unwrap();
        }
        let mut m = load(&f);
        let base = std::fs::read(&path).unwrap();
        m.defer();
        m.erase(BlockId(1)).unwrap();
        let writes = m.take_redo();
        assert_eq!(writes.len(), 1);
        for k in 0..=1 {
            let (p, c) = prefix(&base, &writes, k, "erase");
            let mut r = load(&c);
            let mut out = [FullUnit::<B>::default(); 2];
            let got = r.read(page, UnitMask(0b11), &mut out);
            assert_eq!(got.is_ok(), k == 0, "after {k} writes: {got:?}");
            assert_eq!(r.inner().pe_count(BlockId(1)), k as u32);
            std::fs::remove_file(p).unwrap();
        }
        std::fs::remove_file(path).unwrap();
    }
}

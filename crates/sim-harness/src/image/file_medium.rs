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

use super::layout::Layout;
use super::ImageError;

/// Writes made in deferred mode: (file offset, bytes), in order.
pub type Redo = Vec<(u64, Vec<u8>)>;

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
}

fn read_at(file: &File, off: u64, len: usize) -> Result<Vec<u8>, ImageError> {
    let mut b = vec![0u8; len];
    file.read_exact_at(&mut b, off)
        .map_err(|e| ImageError::Invalid(format!("truncated or unreadable at byte {off}: {e}")))?;
    Ok(b)
}

impl<const B: usize> FileMedium<B> {
    /// A new medium (fresh records from the models, with `initial_pe`) whose
    /// records are written to `file` at once.
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
        put(
            lay.blocks_off,
            blocks.iter().flat_map(|r| r.to_bytes()).collect(),
        )?;
        put(
            lay.pages_rec_off,
            pages.iter().flat_map(|r| r.to_bytes()).collect(),
        )?;
        put(
            lay.units_off,
            units.iter().flat_map(|r| r.to_bytes()).collect(),
        )?;
        Ok(m)
    }

    /// The medium saved in `file`.
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
        let raw = read_at(&file, lay.blocks_off, nb * BlockRec::BYTES)?;
        let blocks: Vec<BlockRec> = raw
            .chunks_exact(BlockRec::BYTES)
            .map(|c| BlockRec::from_bytes(c.try_into().unwrap_or(&[0; BlockRec::BYTES])))
            .collect();
        let raw = read_at(&file, lay.pages_rec_off, np * PageRec::BYTES)?;
        let pages: Vec<PageRec> = raw
            .chunks_exact(PageRec::BYTES)
            .map(|c| PageRec::from_bytes(c.try_into().unwrap_or(&[0; PageRec::BYTES])))
            .collect();
        let raw = read_at(&file, lay.units_off, nu * UnitRec::BYTES)?;
        let units: Vec<UnitRec> = raw
            .chunks_exact(UnitRec::BYTES)
            .map(|c| UnitRec::from_bytes(c.try_into().unwrap_or(&[0; UnitRec::BYTES])))
            .collect();
        let store = VecStorage::from_records(&g, blocks, pages, units);
        let m = Medium::resume(g, rel, fault, store).map_err(ImageError::Core)?;
        // Metadata pages: their bytes come from the page store.
        let meta: Vec<u32> = (0..g.total_pages())
            .filter(|&p| {
                m.peek_spare(Ppn(p))
                    .is_some_and(|s| matches!(s.kind, PageKind::Map | PageKind::Meta))
            })
            .collect();
        let mut store = m.into_storage();
        for p in meta {
            let b = read_at(&file, lay.page(p), g.page_bytes as usize)?;
            store.put_meta(p, &b);
        }
        let inner = Medium::resume(g, rel, fault, store).map_err(ImageError::Core)?;
        Ok(Self::wrap(inner, file, lay))
    }

    fn wrap(inner: SimMedium, file: File, lay: Layout) -> Self {
        FileMedium {
            inner,
            file,
            upp: usize::from(lay.geo.units_per_page),
            ppb: lay.geo.pages_per_block,
            lay,
            redo: None,
            failed: None,
        }
    }

    /// The in-memory medium that applies every rule (counters, inspection).
    pub fn inner(&self) -> &SimMedium {
        &self.inner
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

    /// Writes page `p`'s bytes (when given), unit and page records, then
    /// the block record: see the module documentation for why in that order.
    fn write_page(&mut self, p: u32, bytes: Option<&[u8]>) {
        if let Some(b) = bytes {
            self.put(self.lay.page(p), b);
        }
        let (_, pages, units) = self.inner.storage().split();
        let first = p as usize * self.upp;
        let urecs: Vec<u8> = units
            .get(first..first + self.upp)
            .unwrap_or(&[])
            .iter()
            .flat_map(|u| u.to_bytes())
            .collect();
        let prec = pages.get(p as usize).map(|r| r.to_bytes());
        self.put(self.lay.unit_rec(first as u64), &urecs);
        if let Some(prec) = prec {
            self.put(self.lay.page_rec(p), &prec);
        }
        let b = p / self.ppb;
        let brec = self.block_bytes(b);
        self.put(self.lay.block_rec(b), &brec);
    }

    /// Reads page `p`'s bytes from the page store.
    fn page_bytes(&mut self, p: u32) -> Vec<u8> {
        let mut b = vec![0u8; self.lay.geo.page_bytes as usize];
        if let Err(e) = self.file.read_exact_at(&mut b, self.lay.page(p)) {
            self.failed
                .get_or_insert_with(|| format!("reading page {p}: {e}"));
        }
        b
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
    /// block record changed (the page was consumed, whatever the result).
    fn consuming(
        &mut self,
        p: u32,
        bytes: impl FnOnce(&mut Self) -> Option<Vec<u8>>,
        op: impl FnOnce(&mut SimMedium) -> NandResult,
    ) -> NandResult {
        if self.failed.is_some() {
            return Err(NandError::DieFailed);
        }
        let before = self.block_bytes(p / self.ppb);
        let r = op(&mut self.inner);
        if self.block_bytes(p / self.ppb) != before {
            let b = bytes(self);
            self.write_page(p, b.as_deref());
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
        let mut stamps = [0u64; MAX_UNITS_PER_PAGE];
        let k = out.len().min(MAX_UNITS_PER_PAGE);
        let r = self.inner.read(page, units, &mut stamps[..k])?;
        let bytes = self.page_bytes(page.0);
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
            |_| Some(bytes),
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
            self.put(self.lay.block_rec(block.0), &after);
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
                let mut to = vec![0u8; upp * B];
                for (i, (t, f)) in to.chunks_exact_mut(B).zip(from.chunks_exact(B)).enumerate() {
                    if mask.0 & (1 << i) != 0 {
                        t.copy_from_slice(f);
                    }
                }
                Some(to)
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
            |_| Some(stored),
            |m| m.program_meta(page, bytes, spare),
        )
    }

    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        if self.failed.is_some() {
            return Err(NandError::DieFailed);
        }
        self.inner.read_meta(page, out)
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

//! A tiny strict medium for the core's own tests (the full model lives in
//! `nand-model`): shared by the integration tests (`tests/common`) and the
//! unit tests of the technique folders (`crate::test_nand`).
#![allow(dead_code)]

use firmware_core::{
    BlockId, Geometry, Nand, NandError, NandResult, Ppn, ReadReport, Spare, UnitMask,
};

/// Vec-backed medium with program-order checks and scheduled failures.
pub struct TestNand {
    pub g: Geometry,
    pages: std::vec::Vec<Option<(std::vec::Vec<u64>, Spare)>>,
    next: std::vec::Vec<u32>,
    bad: std::vec::Vec<bool>,
    pub pe: std::vec::Vec<u32>,
    /// Fail the program when this counter hits zero (counts programs).
    pub fail_program_every: u64,
    pub fail_erase_every: u64,
    programs: u64,
    erases: u64,
    meta: std::collections::HashMap<u32, std::vec::Vec<u8>>,
    /// Every successful program, in order: page and spare.
    pub log: std::vec::Vec<(Ppn, Spare)>,
}

impl TestNand {
    pub fn new(g: Geometry) -> Self {
        let pages = g.total_pages() as usize;
        let blocks = g.total_blocks() as usize;
        TestNand {
            g,
            pages: std::vec![None; pages],
            next: std::vec![0; blocks],
            bad: std::vec![false; blocks],
            pe: std::vec![0; blocks],
            fail_program_every: 0,
            fail_erase_every: 0,
            programs: 0,
            erases: 0,
            meta: Default::default(),
            log: std::vec::Vec::new(),
        }
    }
}

impl Nand for TestNand {
    type Unit = u64;

    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [u64]) -> NandResult {
        let p = self
            .pages
            .get(page.0 as usize)
            .ok_or(NandError::BadAddress)?;
        let Some((data, spare)) = p else {
            return Err(NandError::Erased);
        };
        let mut j = 0;
        for off in 0..self.g.units_per_page {
            if units.contains(off) {
                out[j] = data[off as usize];
                j += 1;
            }
        }
        Ok(ReadReport {
            bit_errors: 0,
            spare: *spare,
        })
    }

    fn program(&mut self, page: Ppn, data: &[u64], spare: &Spare) -> NandResult {
        let b = self.g.block_of(page).0 as usize;
        if self.bad[b] {
            return Err(NandError::ProgramFailed);
        }
        if self.g.page_in_block(page) != self.next[b] {
            return Err(NandError::ProgramOrder);
        }
        self.next[b] += 1;
        self.programs += 1;
        if self.fail_program_every != 0 && self.programs.is_multiple_of(self.fail_program_every) {
            self.bad[b] = true;
            return Err(NandError::ProgramFailed);
        }
        let mut full = std::vec![0u64; self.g.units_per_page as usize];
        let mut j = 0;
        for off in 0..self.g.units_per_page {
            if spare.units.contains(off) {
                full[off as usize] = data[j];
                j += 1;
            }
        }
        self.pages[page.0 as usize] = Some((full, *spare));
        self.log.push((page, *spare));
        Ok(ReadReport::default())
    }

    fn erase(&mut self, block: BlockId) -> NandResult {
        let b = block.0 as usize;
        if self.bad[b] {
            return Err(NandError::EraseFailed);
        }
        self.erases += 1;
        if self.fail_erase_every != 0 && self.erases.is_multiple_of(self.fail_erase_every) {
            self.bad[b] = true;
            return Err(NandError::EraseFailed);
        }
        let ppb = self.g.pages_per_block as usize;
        for p in &mut self.pages[b * ppb..(b + 1) * ppb] {
            *p = None;
        }
        self.next[b] = 0;
        self.pe[b] += 1;
        Ok(ReadReport::default())
    }

    /// Same plane only; the destination is consumed even when the source
    /// cannot be read (it then holds zeros), as the `Nand` contract says.
    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        let (sb, db) = (self.g.block_of(src), self.g.block_of(dst));
        if self.g.plane_of(sb) != self.g.plane_of(db) {
            return Err(NandError::BadAddress);
        }
        let upp = self.g.units_per_page;
        let mut full = [0u64; 8];
        let read = self.read(src, UnitMask::full(upp), &mut full[..upp as usize]);
        let mut data = [0u64; 8];
        let mut j = 0;
        for off in 0..upp {
            if spare.units.contains(off) {
                data[j] = full[off as usize];
                j += 1;
            }
        }
        self.program(dst, &data[..j], spare)?;
        read
    }

    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        let mut sp = *spare;
        sp.units = UnitMask(0);
        self.program(page, &[], &sp)?;
        self.meta.insert(page.0, bytes.to_vec());
        Ok(ReadReport::default())
    }

    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        let r = self.read(page, UnitMask(0), &mut [])?;
        out.fill(0);
        if let Some(b) = self.meta.get(&page.0) {
            let n = b.len().min(out.len());
            out[..n].copy_from_slice(&b[..n]);
        }
        Ok(r)
    }
}

/// A small geometry: 2 channels x 2 planes x 16 blocks x 8 pages.
pub fn small_geometry(units_per_page: u8) -> Geometry {
    Geometry {
        channels: 2,
        dies_per_channel: 1,
        planes_per_die: 2,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_bytes: 4096 * units_per_page as u32,
        pages_per_wordline: 1,
        units_per_page,
    }
}

/// A formatted core on a [`TestNand`] for a configuration: runs `f` with
/// the core and its synchronous driver and returns what `f` returns (the
/// memory is lent for the call).
pub fn with_core<R>(
    cfg: firmware_core::Config,
    f: impl FnOnce(&mut firmware_core::FullFtl<'_>, &mut firmware_core::SyncDriver<'_, TestNand>) -> R,
) -> R {
    let mut mem = std::vec![0u8; firmware_core::FullFtl::lend_bytes(&cfg).unwrap()];
    let mut data = std::vec![0u64; cfg.total_slots() as usize];
    let mut nand = TestNand::new(cfg.geometry);
    let mut ftl = firmware_core::FullFtl::new(cfg, &mut mem).unwrap();
    let mut drv = firmware_core::SyncDriver::new(&mut nand, &mut data);
    drv.format(&mut ftl).unwrap();
    f(&mut ftl, &mut drv)
}

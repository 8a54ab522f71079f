//! P2L entrustment to a neighbouring die (seed 001, Sec. 5.5, Figs. 31
//! and 32): the modes, their cost counters, and the record of every unit's
//! LBA the controller keeps in RAM.
//!
//! Every page's LBAs are also kept where a die failure cannot take them with
//! the data: in the spare area of the neighbour page of the same superpage
//! ([`P2lMode::Page`], [`crate::tech::reparo::p2l_page`]) or in a list page of the
//! neighbour die ([`P2lMode::Block`], [`crate::tech::reparo::p2l_list`]), both read back
//! with real medium reads. [`P2lRecord`], over a lent slice with one entry
//! per physical unit, is written when a program is issued and cleared when
//! an erase succeeds: it holds the lists of blocks not yet on flash (open
//! blocks, complete ones waiting for a list page, pages written outside a
//! superpage run), and the lists are built from it.
//!
//! Entrusted lists include LBAs that were overwritten since, so every
//! candidate is checked against the L2P table; the check counts as a
//! candidate.

use crate::error::{rare, Error, OrRare};
use crate::ftl::die_fail::L2pEntry;
use crate::ftl::hooks::Hooks;
use crate::ftl::Ftl;
use crate::medium::addr::{BlockId, Geometry, Lpn, Ppn, Pun};
use crate::medium::nand::Spare;

/// Where a page's LBAs are entrusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum P2lMode {
    /// No entrustment: the *Identifier* scans the L2P table.
    #[default]
    None,
    /// Page-level entrustment into the neighbour page's spare area.
    Page,
    /// Block-level entrustment into the last page of the neighbour block.
    Block,
}

/// Work done by one identification through entrusted P2L lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct P2lCost {
    /// NAND page reads on the neighbour die.
    pub page_reads: u64,
    /// Entrusted LBAs checked against the L2P table.
    pub candidates: u64,
    /// Failed LBAs found.
    pub found: u64,
    /// Failed blocks identified from lists held in the controller's RAM
    /// (blocks still open, or waiting for a list page): no read.
    pub ram_blocks: u64,
    /// Failed pages identified from the record because no page held their
    /// LBAs (page-level entrustment): no read.
    pub ram_pages: u64,
}

impl P2lCost {
    /// Both costs added up.
    pub fn plus(self, o: P2lCost) -> P2lCost {
        P2lCost {
            page_reads: self.page_reads.wrapping_add(o.page_reads),
            candidates: self.candidates.wrapping_add(o.candidates),
            found: self.found.wrapping_add(o.found),
            ram_blocks: self.ram_blocks.wrapping_add(o.ram_blocks),
            ram_pages: self.ram_pages.wrapping_add(o.ram_pages),
        }
    }

    /// Checks one entrusted candidate: `lpn`, said to live in `pun`,
    /// counting it, and calls `found` if it is failed.
    pub(crate) fn check<H: Hooks>(
        &mut self,
        ftl: &Ftl<'_, H>,
        lpn: Lpn,
        pun: Pun,
        found: &mut impl FnMut(Lpn),
    ) {
        self.candidates = self.candidates.wrapping_add(1);
        if unit_failed(ftl, lpn, pun) {
            self.found = self.found.wrapping_add(1);
            found(lpn);
        }
    }
}

/// Progress of one *Identifier* run over the retired dies (shared by the
/// block- and page-level identifiers, which read the medium step by step).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IdentJob {
    /// Under way.
    pub(crate) active: bool,
    /// Ended normally; the cost is not taken yet.
    pub(crate) finished: bool,
    /// Next block or page to look at.
    pub(crate) cursor: u32,
    /// A read is out.
    pub(crate) reading: bool,
    /// Work so far.
    pub(crate) cost: P2lCost,
}

impl IdentJob {
    /// A run from the first block or page.
    pub(crate) fn started() -> IdentJob {
        IdentJob {
            active: true,
            ..IdentJob::default()
        }
    }

    /// The run looked at everything.
    pub(crate) fn finish(&mut self) {
        self.active = false;
        self.finished = true;
    }

    /// The finished run's work, once (`None` while it runs or after it
    /// was taken).
    pub(crate) fn take_result(&mut self) -> Option<P2lCost> {
        if self.active || !self.finished {
            return None;
        }
        self.finished = false;
        Some(self.cost)
    }
}

/// Entrusted LBA of each physical unit (`lpn + 1`, 0 when none).
pub struct P2lRecord<'a> {
    units: &'a mut [u32],
}

impl<'a> P2lRecord<'a> {
    /// A record over `units` (one entry per physical unit of the core).
    pub fn new(units: &'a mut [u32]) -> P2lRecord<'a> {
        units.fill(0);
        P2lRecord { units }
    }

    /// Records the LBAs a program of `page` carries.
    pub fn on_program<H: Hooks>(&mut self, ftl: &Ftl<'_, H>, page: Ppn, spare: &Spare) {
        let g = ftl.config().geometry;
        for off in 0..g.units_per_page {
            if !spare.units.contains(off) {
                continue;
            }
            let pun = g.pun(page, off);
            if let (Some(e), Some(l)) = (
                self.units.get_mut(pun.0 as usize),
                spare.lpns.get(usize::from(off)),
            ) {
                *e = l.0.wrapping_add(1);
            }
        }
    }

    /// Forgets the lists of an erased block.
    pub fn on_erase<H: Hooks>(&mut self, ftl: &Ftl<'_, H>, block: BlockId) {
        let upb = ftl.config().geometry.units_per_block() as usize;
        let first = (block.0 as usize).saturating_mul(upb);
        if let Some(s) = self.units.get_mut(first..first.wrapping_add(upb)) {
            s.fill(0);
        }
    }

    /// The entries (`lpn + 1`, 0 for none) of block `b`'s units.
    pub fn block_entries(&self, g: &Geometry, b: BlockId) -> Result<&[u32], Error> {
        let upb = g.units_per_block() as usize;
        let first = (b.0 as usize).saturating_mul(upb);
        self.units
            .get(first..first.wrapping_add(upb))
            .or_rare(Error::AddressOutOfRange)
    }

    /// Whether any unit of block `b` was programmed since its last erase.
    pub fn block_programmed(&self, g: &Geometry, b: BlockId) -> Result<bool, Error> {
        Ok(self.block_entries(g, b)?.iter().any(|&e| e != 0))
    }

    /// Identifies the failed LBAs of page `page` from the record (no page
    /// holds them), checking each against the L2P table.
    pub fn identify_page<H: Hooks>(
        &self,
        ftl: &Ftl<'_, H>,
        page: Ppn,
        mut found: impl FnMut(Lpn),
    ) -> Result<P2lCost, Error> {
        let g = ftl.config().geometry;
        let mut cost = P2lCost::default();
        for off in 0..g.units_per_page {
            let pun = g.pun(page, off);
            let Some(&e) = self.units.get(pun.0 as usize) else {
                return Err(rare(Error::AddressOutOfRange));
            };
            if let Some(lpn) = e.checked_sub(1) {
                cost.check(ftl, Lpn(lpn), pun, &mut found);
            }
        }
        Ok(cost)
    }

    /// Identifies the failed LBAs of block `b` from the record (a list held
    /// in RAM), checking each against the L2P table.
    pub fn identify_block<H: Hooks>(
        &self,
        ftl: &Ftl<'_, H>,
        b: BlockId,
        mut found: impl FnMut(Lpn),
    ) -> Result<P2lCost, Error> {
        let g = ftl.config().geometry;
        let first = g.pun(g.ppn(b, 0), 0).0;
        let mut cost = P2lCost::default();
        for (i, &e) in self.block_entries(&g, b)?.iter().enumerate() {
            if let Some(lpn) = e.checked_sub(1) {
                let pun = Pun(first.saturating_add(u32::try_from(i).unwrap_or(u32::MAX)));
                cost.check(ftl, Lpn(lpn), pun, &mut found);
            }
        }
        Ok(cost)
    }
}

/// Whether `lpn`, entrusted as living in unit `pun`, is failed: its L2P
/// entry still points there (the die holding it failed), or it was lost.
pub(crate) fn unit_failed<H: Hooks>(ftl: &Ftl<'_, H>, lpn: Lpn, pun: Pun) -> bool {
    match ftl.l2p_entry(lpn) {
        Ok(L2pEntry::Flash(p)) => p == pun,
        Ok(L2pEntry::Lost) => true,
        _ => false,
    }
}

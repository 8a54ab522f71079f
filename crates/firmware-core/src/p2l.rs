//! P2L entrustment to a neighbouring die (seed 001, Sec. 5.5, Figs. 31
//! and 32) and the *Identifier* that reads it back after a die failure.
//!
//! Every page's LBAs are also kept on another die, so they survive the
//! failure of the die holding the data. [`P2lRecord`] is that entrusted copy,
//! over a lent slice with one entry per physical unit: it is written when a
//! program is issued and cleared when an erase succeeds, and it is read only
//! through [`P2lRecord::identify`], which charges the NAND reads the
//! neighbour die would serve:
//!
//! * [`P2lMode::Page`]: each page's LBAs sit in the spare area of its
//!   neighbour page in the same superpage: one read per programmed page of
//!   the failed die;
//! * [`P2lMode::Block`]: the last page of each block holds the LBA list of
//!   its neighbour block: one read per programmed block of the failed die.
//!
//! Entrusted lists include LBAs that were overwritten since, so every
//! candidate is checked against the L2P table; the check counts as a
//! candidate. The neighbour of die `d` is die `(d + 1) % D` of the same core;
//! when both failed the entrusted copy is gone and identification fails.

use crate::addr::{BlockId, DieId, Lpn, Ppn, Pun};
use crate::die_fail::L2pEntry;
use crate::error::Error;
use crate::ftl::Ftl;
use crate::nand::Spare;

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
    pub fn on_program(&mut self, ftl: &Ftl<'_>, page: Ppn, spare: &Spare) {
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
                *e = l.0.saturating_add(1);
            }
        }
    }

    /// Forgets the lists of an erased block.
    pub fn on_erase(&mut self, ftl: &Ftl<'_>, block: BlockId) {
        let upb = ftl.config().geometry.units_per_block() as usize;
        let first = (block.0 as usize).saturating_mul(upb);
        if let Some(s) = self.units.get_mut(first..first.saturating_add(upb)) {
            s.fill(0);
        }
    }

    /// Finds the failed LBAs of die `die` from the entrusted lists, calling
    /// `found` once for each (unordered), and returns the work done.
    /// `neighbour_failed` says whether the neighbour die is gone too.
    pub fn identify(
        &self,
        ftl: &Ftl<'_>,
        mode: P2lMode,
        die: DieId,
        neighbour_failed: bool,
        mut found: impl FnMut(Lpn),
    ) -> Result<P2lCost, Error> {
        if mode == P2lMode::None {
            return Err(Error::InvalidConfig("p2l: no entrustment configured"));
        }
        if neighbour_failed {
            return Err(Error::InvalidConfig("p2l: the neighbour die failed too"));
        }
        let g = ftl.config().geometry;
        let per_die = u32::from(g.planes_per_die).saturating_mul(g.blocks_per_plane);
        let first = die.0.checked_mul(per_die).ok_or(Error::AddressOutOfRange)?;
        let upp = u32::from(g.units_per_page);
        let mut cost = P2lCost::default();
        for b in first..first.saturating_add(per_die) {
            let mut block_read = false;
            for page in 0..g.pages_per_block {
                let ppn = g.ppn(BlockId(b), page);
                let base = g.pun(ppn, 0).0;
                let mut page_read = false;
                for u in 0..upp {
                    let pun = Pun(base.saturating_add(u));
                    let Some(&e) = self.units.get(pun.0 as usize) else {
                        return Err(Error::AddressOutOfRange);
                    };
                    let Some(lpn) = e.checked_sub(1) else {
                        continue;
                    };
                    page_read = true;
                    cost.candidates = cost.candidates.saturating_add(1);
                    let lpn = Lpn(lpn);
                    let failed = match ftl.l2p_entry(lpn) {
                        Ok(L2pEntry::Flash(p)) => p == pun,
                        Ok(L2pEntry::Lost) => true,
                        _ => false,
                    };
                    if failed {
                        cost.found = cost.found.saturating_add(1);
                        found(lpn);
                    }
                }
                if page_read {
                    block_read = true;
                    if mode == P2lMode::Page {
                        cost.page_reads = cost.page_reads.saturating_add(1);
                    }
                }
            }
            if block_read && mode == P2lMode::Block {
                cost.page_reads = cost.page_reads.saturating_add(1);
            }
        }
        Ok(cost)
    }
}

//! Page-level P2L entrustment on the medium (seed 001, Sec. 5.5, Fig. 31).
//!
//! In superblock order ([`crate::tech::reparo::superblock`]) the host programs of one
//! superpage leave the core back to back. [`PageEntrust`] holds them until
//! the superpage's run ends (another kind of operation, another page
//! offset, a die already in the run, or nothing more to send), then writes
//! into each page's spare area the LBAs of the next page of the run, on
//! another die (the last page takes the first's): Fig. 31's die 0 holding
//! die 1's LBAs. No extra program is needed.
//!
//! The controller keeps, per page, which page holds its LBAs. After a die
//! fails, the *Identifier* ([`PageEntrust::next_read`],
//! [`PageEntrust::read_done`]) reads the spare area of the holder of every
//! programmed page of the failed die (one real read per page, which is why
//! the thesis finds it slower than block-level lists) and checks each LBA
//! against the L2P table. Pages with no holder (relocated by GC, written
//! alone, or whose holder was erased or lost with its die) are identified
//! from the controller's per-unit record instead, at no read.

use crate::error::{Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::Ftl;
use crate::medium::addr::{Geometry, Lpn, Ppn, UnitMask, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{NandCmd, NandOp, NandResult, Origin, PageKind, Slot};
use crate::tech::reparo::p2l::{IdentJob, P2lCost, P2lRecord};
use crate::tech::reparo::p2l_list::IDENT_ID;

/// Pages one superpage run may hold back at most.
pub const RUN: usize = 32;

/// Words of [`PageEntrust`]'s lent table for `pages` pages: per page, the
/// page holding its LBAs and the page whose LBAs it holds.
pub const fn page_words(pages: usize) -> usize {
    pages.saturating_mul(2)
}

/// Page-level entrustment: the superpage run being held, the operations
/// ready to leave, the holder table and the *Identifier*'s reads.
pub struct PageEntrust<'a> {
    g: Geometry,
    /// Per page: holding page plus one (0: none).
    holder: &'a mut [u32],
    /// Per page: page whose LBAs it holds, plus one (0: none).
    held: &'a mut [u32],
    run: heapless::Vec<NandOp, RUN>,
    ready: heapless::Deque<NandOp, { RUN + 1 }>,
    /// Pages of a full superpage run: the dies still in service.
    width: usize,
    job: IdentJob,
}

fn is_host_data(op: &NandOp) -> Option<Ppn> {
    match op.cmd {
        NandCmd::Program { page, spare, .. }
            if op.origin == Origin::Host
                && spare.kind == PageKind::Data
                && !spare.units.is_empty() =>
        {
            Some(page)
        }
        _ => None,
    }
}

impl<'a> PageEntrust<'a> {
    /// Entrustment for `ftl`'s geometry over `words` ([`page_words`] long).
    pub fn new<H: Hooks>(ftl: &Ftl<'_, H>, words: &'a mut [u32]) -> Result<PageEntrust<'a>, Error> {
        let g = ftl.config().geometry;
        if !ftl.config().superblock.enabled {
            return Err(Error::InvalidConfig(
                &"p2l pages: page-level entrustment needs superblocks",
            ));
        }
        let pages = g.total_pages() as usize;
        let words = words
            .get_mut(..page_words(pages))
            .or_rare(Error::TableTooSmall(&"p2l pages: holder table"))?;
        words.fill(0);
        let (holder, held) = words.split_at_mut(pages);
        Ok(PageEntrust {
            g,
            holder,
            held,
            run: heapless::Vec::new(),
            ready: heapless::Deque::new(),
            width: (g.dies() as usize).clamp(1, RUN),
            job: IdentJob::default(),
        })
    }

    /// Page holding the LBAs of `page`, if any.
    pub fn holder(&self, page: Ppn) -> Option<Ppn> {
        self.holder
            .get(page.0 as usize)
            .and_then(|h| h.checked_sub(1))
            .map(Ppn)
    }

    fn set(table: &mut [u32], page: Ppn, v: u32) {
        if let Some(e) = table.get_mut(page.0 as usize) {
            *e = v;
        }
    }

    /// The next operation to send, taking operations from `next` (the
    /// FTL's queue) and holding a superpage run back until it spans every
    /// die in service, another kind of operation or page offset comes, or
    /// [`PageEntrust::release`] is called (as a write buffer that fills a
    /// superpage before programming it).
    pub fn next_op(&mut self, mut next: impl FnMut() -> Option<NandOp>) -> Option<NandOp> {
        loop {
            if let Some(op) = self.ready.pop_front() {
                return Some(op);
            }
            let op = next()?;
            self.offer(op);
            if self.run.len() >= self.width {
                self.end_run();
            }
        }
    }

    /// Sends the run held so far (the driver is idle, a flush or a die
    /// retirement waits for it).
    pub fn release(&mut self) {
        self.end_run();
    }

    /// Whether programs are held back.
    pub fn holding(&self) -> bool {
        !self.run.is_empty()
    }

    /// Dies in service changed: a full run spans `dies` pages.
    pub fn set_dies(&mut self, dies: u32) {
        self.width = (dies as usize).clamp(1, RUN);
    }

    fn joins_run(&self, page: Ppn) -> bool {
        let Some(first) = self.run.first().and_then(is_host_data) else {
            return true;
        };
        let g = &self.g;
        let die = g.die_of(g.block_of(page));
        self.run.len() < RUN
            && g.page_in_block(first) == g.page_in_block(page)
            && self
                .run
                .iter()
                .filter_map(is_host_data)
                .all(|p| g.die_of(g.block_of(p)) != die)
    }

    fn offer(&mut self, op: NandOp) {
        match is_host_data(&op) {
            Some(page) if self.joins_run(page) => {
                let _ = self.run.push(op);
            }
            Some(_) => {
                self.end_run();
                let _ = self.run.push(op);
            }
            None => {
                self.end_run();
                let _ = self.ready.push_back(op);
            }
        }
    }

    /// Writes the run's entrusted LBAs (each page takes the next page's)
    /// and moves it to the ready queue.
    fn end_run(&mut self) {
        let n = self.run.len();
        let mut pages = [Ppn(0); RUN];
        let mut lbas = [([Lpn(0); MAX_UNITS_PER_PAGE], UnitMask(0)); RUN];
        for (i, op) in self.run.iter().enumerate() {
            if let (NandCmd::Program { page, spare, .. }, Some(p), Some(l)) =
                (op.cmd, pages.get_mut(i), lbas.get_mut(i))
            {
                *p = page;
                *l = (spare.lpns, spare.units);
            }
        }
        for (i, op) in self.run.iter_mut().enumerate() {
            let j = i.wrapping_add(1).checked_rem(n).unwrap_or(i);
            let (Some(&mine), Some(&theirs), Some(&(lpns, units))) =
                (pages.get(i), pages.get(j), lbas.get(j))
            else {
                continue;
            };
            if n > 1 {
                if let NandCmd::Program { spare, .. } = &mut op.cmd {
                    spare.entrusted = lpns;
                    spare.entrusted_units = units;
                }
                Self::set(self.holder, theirs, mine.0.wrapping_add(1));
                Self::set(self.held, mine, theirs.0.wrapping_add(1));
            } else {
                Self::set(self.holder, mine, 0);
                Self::set(self.held, mine, 0);
            }
        }
        for op in self.run.iter() {
            let _ = self.ready.push_back(*op);
        }
        self.run.clear();
    }

    /// A program of `page` failed: the page it was to hold loses its holder.
    pub fn on_program_failed(&mut self, page: Ppn) {
        self.forget_holding(page);
    }

    fn forget_holding(&mut self, page: Ppn) {
        self.drop_held_by(page);
        Self::set(self.held, page, 0);
    }

    /// The page whose LBAs `page` holds has no holder any more.
    fn drop_held_by(&mut self, page: Ppn) {
        if let Some(j) = self
            .held
            .get(page.0 as usize)
            .and_then(|h| h.checked_sub(1))
        {
            if self.holder.get(j as usize) == Some(&page.0.wrapping_add(1)) {
                Self::set(self.holder, Ppn(j), 0);
            }
        }
    }

    /// Block `b` was erased: its pages hold nothing and are held nowhere.
    pub fn on_erase(&mut self, b: crate::medium::addr::BlockId) {
        for i in 0..self.g.pages_per_block {
            let page = self.g.ppn(b, i);
            self.forget_holding(page);
            Self::set(self.holder, page, 0);
        }
    }

    /// Die `d` was retired: what its pages held is gone.
    pub fn on_retire_die(&mut self, d: crate::medium::addr::DieId) {
        let per_die = u32::from(self.g.planes_per_die).saturating_mul(self.g.blocks_per_plane);
        let first = d.0.saturating_mul(per_die);
        for b in first..first.wrapping_add(per_die) {
            for i in 0..self.g.pages_per_block {
                self.drop_held_by(self.g.ppn(crate::medium::addr::BlockId(b), i));
            }
        }
    }

    /// Starts identifying the failed LBAs of the retired dies.
    pub fn start(&mut self) {
        self.job = IdentJob::started();
    }

    /// Whether an identification run is under way.
    pub fn running(&self) -> bool {
        self.job.active
    }

    /// The finished run's work, once.
    pub fn take_result(&mut self) -> Option<P2lCost> {
        self.job.take_result()
    }

    /// Advances the run: pages with no holder are identified from the
    /// record at once; returns the next holder-page read (spare area only),
    /// or `None` when a read is out or the run has finished.
    pub fn next_read<H: Hooks>(
        &mut self,
        ftl: &Ftl<'_, H>,
        record: &P2lRecord<'_>,
        retired: &[bool],
        mut found: impl FnMut(Lpn),
    ) -> Result<Option<NandOp>, Error> {
        if !self.job.active || self.job.reading {
            return Ok(None);
        }
        let total = self.g.total_pages();
        let upp = usize::from(self.g.units_per_page);
        while self.job.cursor < total {
            let page = Ppn(self.job.cursor);
            let die = self.g.die_of(self.g.block_of(page));
            if !retired.get(die.0 as usize).copied().unwrap_or(false) {
                self.job.cursor = self.job.cursor.wrapping_add(1);
                continue;
            }
            let block = self.g.block_of(page);
            let at = (self.g.page_in_block(page) as usize).saturating_mul(upp);
            let entries = record.block_entries(&self.g, block)?;
            let programmed = entries
                .get(at..at.wrapping_add(upp))
                .is_some_and(|s| s.iter().any(|&e| e != 0));
            if !programmed {
                self.job.cursor = self.job.cursor.wrapping_add(1);
                continue;
            }
            match self.holder(page) {
                None => {
                    let c = record.identify_page(ftl, page, &mut found)?;
                    self.job.cost = self.job.cost.plus(P2lCost { ram_pages: 1, ..c });
                    self.job.cursor = self.job.cursor.wrapping_add(1);
                }
                Some(h) => {
                    self.job.reading = true;
                    return Ok(Some(NandOp {
                        id: IDENT_ID,
                        cmd: NandCmd::Read {
                            page: h,
                            units: UnitMask::default(),
                            dst: [Slot(0); MAX_UNITS_PER_PAGE],
                        },
                        origin: Origin::Meta,
                    }));
                }
            }
        }
        self.job.finish();
        Ok(None)
    }

    /// The holder read of the current page finished: its spare area's
    /// entrusted LBAs are checked against the L2P table. A failed read (the
    /// holder's die failed too) ends the run with an error.
    pub fn read_done<H: Hooks>(
        &mut self,
        ftl: &Ftl<'_, H>,
        result: &NandResult,
        mut found: impl FnMut(Lpn),
    ) -> Result<(), Error> {
        self.job.reading = false;
        self.job.cost.page_reads = self.job.cost.page_reads.wrapping_add(1);
        let page = Ppn(self.job.cursor);
        self.job.cursor = self.job.cursor.wrapping_add(1);
        let report = match result {
            Ok(r) => r,
            Err(_) => {
                self.job.active = false;
                return Err(Error::InvalidConfig(
                    &"p2l pages: a holder page is unreadable (its die failed too)",
                ));
            }
        };
        let spare = report.spare;
        for off in 0..self.g.units_per_page {
            if !spare.entrusted_units.contains(off) {
                continue;
            }
            let Some(&lpn) = spare.entrusted.get(usize::from(off)) else {
                continue;
            };
            self.job
                .cost
                .check(ftl, lpn, self.g.pun(page, off), &mut found);
        }
        Ok(())
    }
}

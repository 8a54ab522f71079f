//! Multi-core controller pieces (seed 001, Sec. 2.3 and Ch. 5): the master
//! core's LBA striping with Reparo's CDR redirection, and one flash core
//! (an [`Ftl`] over its own dies with the die-failure [`Detector`], the
//! entrusted P2L record and the failed-LBA marks).
//!
//! The master core stripes host LBA `l` to `core_(l % N)` as local LPN
//! `l / N` (dropping the common low bits). Once `reparo_CDR` adjusts the
//! logical spaces ([`crate::tech::reparo::handler::Cdr`]), redirected LBAs go to a helper's
//! hidden space: hidden number `h` is local LPN `h / N` of `core_(h % N)`,
//! right after the core's `|LS| / N` host-visible LPNs.
//!
//! A [`FlashCore`] is sans-IO like the core it wraps: the driver polls
//! operations ([`FlashCore::poll_op`]: the FTL's, then detector probes, whose
//! id is [`PROBE_ID`]) and hands results back ([`FlashCore::complete`]).
//! Failed program, erase and read results feed the detector; a failed die
//! is retired from the FTL as soon as no operation is in flight
//! ([`FlashCore::maintain`], which returns the dies it retired, for the host
//! to poll like SMART).

use crate::error::{rare, Error, OrRare};
use crate::ftl::die_fail::L2pEntry;
use crate::ftl::hooks::Hooks;
use crate::ftl::Ftl;
use crate::medium::addr::{DieId, Lpn, UnitMask, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{NandCmd, NandOp, NandResult, OpId, Origin, Slot};
use crate::tech::reparo::die_detect::Detector;
use crate::tech::reparo::handler::{Cdr, Route};
use crate::tech::reparo::p2l::{P2lCost, P2lMode, P2lRecord};
use crate::tech::reparo::p2l_list::{BlockLists, ListLend, IDENT_ID, LIST_BUF_BASE};
use crate::tech::reparo::p2l_page::PageEntrust;

/// Operation id of detector probes: a wrapper id ([`OpId::wrapper`]), which
/// the core never issues.
pub const PROBE_ID: OpId = OpId::wrapper(0);

/// Where the master core sends a host LBA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Flash core.
    pub core: u32,
    /// LPN in that core's space.
    pub lpn: Lpn,
}

/// Most CDR adjustments (die failures) the master core stacks.
pub const MAX_CDR_ROUNDS: usize = 8;

/// One CDR adjustment in force: the redirection of one die failure.
///
/// Round `i` (the `i`-th failure handled by CDR) selects its LBAs at
/// positions `i N .. (i + 1) N` of each redirection unit instead of
/// `0 .. N`: the victim's LBA `l` is routed as `l - i N^2` through the
/// round's [`Cdr`], so the rounds redirect disjoint LBAs (while
/// `(i + 1) N <= D_ssd - 1`), and its hidden slots follow the earlier
/// rounds' (`i * floor(alpha) * N` further on). Every round uses Eq. 5.4
/// with the shape before the first failure, the approximation the paper
/// evaluates for repeated failures.
#[derive(Clone, Copy, Debug)]
struct Round {
    cdr: Cdr,
    /// `i N^2`.
    shift: u64,
    /// `i * floor(alpha) * N`.
    hidden_base: u64,
}

impl Round {
    /// The global hidden number `lba` is redirected to in this round.
    fn hidden(&self, lba: u64) -> Option<u64> {
        let v = u64::from(self.cdr.victim());
        let n = u64::from(self.cdr.shape().cores);
        if lba.checked_rem(n)? != v {
            return None;
        }
        match self.cdr.route(lba.checked_sub(self.shift)?)? {
            Route::Redirected(h) => h.lba.checked_add(self.hidden_base),
            Route::Stays { .. } => None,
        }
    }
}

/// The master core's static striping, with CDR redirection after die
/// failures.
#[derive(Clone, Debug)]
pub struct Master {
    cores: u32,
    logical: u64,
    rounds: heapless::Vec<Round, MAX_CDR_ROUNDS>,
}

impl Master {
    /// Striping of `logical` host LBAs (a multiple of `cores`) over `cores`.
    pub fn new(cores: u32, logical: u64) -> Result<Master, Error> {
        if cores == 0 || logical.checked_rem(u64::from(cores)) != Some(0) {
            return Err(Error::InvalidConfig(
                &"controller: logical space must be a multiple of the flash cores",
            ));
        }
        Ok(Master {
            cores,
            logical,
            rounds: heapless::Vec::new(),
        })
    }

    /// Flash cores `N`.
    pub fn cores(&self) -> u32 {
        self.cores
    }

    /// Host-visible LBAs.
    pub fn logical(&self) -> u64 {
        self.logical
    }

    /// Host-visible LPNs per core, `|LS| / N`.
    pub fn per_core(&self) -> u64 {
        self.logical.checked_div(u64::from(self.cores)).unwrap_or(0)
    }

    /// Adds the CDR adjustment of one more die failure (on core
    /// `cdr.victim()`); its redirections start at once.
    pub fn set_cdr(&mut self, cdr: Cdr) -> Result<(), Error> {
        let s = cdr.shape();
        if s.cores != self.cores || s.logical != self.logical {
            return Err(Error::InvalidConfig(&"controller: CDR shape differs"));
        }
        let i = self.rounds.len() as u64;
        let n = u64::from(self.cores);
        // Positions i N .. (i + 1) N must fit in a unit of D_ssd - 1.
        let end = i.wrapping_add(1).saturating_mul(n);
        if end > u64::from(s.dies).saturating_sub(1) {
            return Err(Error::InvalidConfig(&"controller: too many CDR rounds"));
        }
        let round = Round {
            cdr,
            shift: i.saturating_mul(n).saturating_mul(n),
            hidden_base: i.saturating_mul(cdr.alpha_floor()).saturating_mul(n),
        };
        self.rounds
            .push(round)
            .map_err(|_| Error::InvalidConfig(&"controller: too many CDR rounds"))
    }

    /// The first CDR adjustment in force, if any.
    pub fn cdr(&self) -> Option<&Cdr> {
        self.rounds.first().map(|r| &r.cdr)
    }

    /// CDR adjustments in force.
    pub fn cdr_rounds(&self) -> usize {
        self.rounds.len()
    }

    /// Hidden LPNs a helper needs for `rounds` adjustments of `cdr`'s size.
    pub fn hidden_per_core(cdr: &Cdr, rounds: u64) -> u64 {
        cdr.alpha_floor().saturating_mul(rounds)
    }

    fn redirected(&self, lba: u64) -> Option<u64> {
        self.rounds.iter().find_map(|r| r.hidden(lba))
    }

    /// The home of a host LBA now.
    pub fn route(&self, lba: u64) -> Result<Target, Error> {
        if lba >= self.logical {
            return Err(rare(Error::LpnOutOfRange));
        }
        let n = u64::from(self.cores);
        let global = self.redirected(lba).unwrap_or(lba);
        let core = u32::try_from(global.checked_rem(n).or_rare(Error::LpnOutOfRange)?)
            .map_err(|_| rare(Error::LpnOutOfRange))?;
        let lpn = u32::try_from(global.checked_div(n).or_rare(Error::LpnOutOfRange)?)
            .map_err(|_| rare(Error::LpnOutOfRange))?;
        Ok(Target {
            core,
            lpn: Lpn(lpn),
        })
    }

    /// The static (pre-redirection) home of a host LBA: where its data was
    /// written before CDR moved it.
    pub fn static_home(&self, lba: u64) -> Result<Target, Error> {
        let n = u64::from(self.cores);
        if lba >= self.logical {
            return Err(rare(Error::LpnOutOfRange));
        }
        Ok(Target {
            core: u32::try_from(lba.checked_rem(n).or_rare(Error::LpnOutOfRange)?)
                .map_err(|_| rare(Error::LpnOutOfRange))?,
            lpn: Lpn(
                u32::try_from(lba.checked_div(n).or_rare(Error::LpnOutOfRange)?)
                    .map_err(|_| rare(Error::LpnOutOfRange))?,
            ),
        })
    }

    /// Whether `lba` is a CDR fake failure (redirected by any round).
    pub fn is_fake_failure(&self, lba: u64) -> bool {
        lba < self.logical && self.redirected(lba).is_some()
    }

    /// Whether `lba` is redirected by the latest round only (the fake
    /// failures the latest die failure adds).
    pub fn is_new_fake_failure(&self, lba: u64) -> bool {
        lba < self.logical && self.rounds.last().and_then(|r| r.hidden(lba)).is_some()
    }

    /// Victim cores of the rounds in force, in order.
    pub fn victims(&self) -> impl Iterator<Item = u32> + '_ {
        self.rounds.iter().map(|r| r.cdr.victim())
    }
}

/// Identification work of one flash core (the time model's inputs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdentifyStats {
    /// L2P entries checked by range scans.
    pub l2p_scanned: u64,
    /// Mark bits checked by range queries (CDR*).
    pub marks_scanned: u64,
    /// Failed LBAs found by scans or marks.
    pub found: u64,
    /// Work of P2L identifications.
    pub p2l: P2lCost,
    /// Die-detector probe reads.
    pub probes: u64,
}

/// What a scan needs to tell a failed L2P entry: the geometry and the
/// retired dies. Plain data, so every core (or thread) can scan its region
/// of the shared area with its own copy (CDR's parallel *Identifier*).
#[derive(Clone, Copy, Debug)]
pub struct FailureView {
    g: crate::medium::addr::Geometry,
    retired: [bool; crate::tech::reparo::die_detect::MAX_DIES],
}

impl FailureView {
    /// Whether an L2P entry names a failed LBA: lost, or on a retired die.
    pub fn is_failed(&self, e: L2pEntry) -> bool {
        match e {
            L2pEntry::Lost => true,
            L2pEntry::Flash(p) => {
                let d = self.g.die_of(self.g.block_of_unit(p));
                self.retired.get(d.0 as usize).copied().unwrap_or(false)
            }
            _ => false,
        }
    }

    /// Scans one region of the shared area whose first entry is local LPN
    /// `base`, calling `found` for each failed LPN in order; returns the
    /// entries checked.
    pub fn scan_region(&self, region: &[L2pEntry], base: u32, mut found: impl FnMut(Lpn)) -> u64 {
        let mut l = base;
        for &e in region {
            if self.is_failed(e) {
                found(Lpn(l));
            }
            l = l.wrapping_add(1);
        }
        region.len() as u64
    }
}

/// Memory a flash core borrows besides the FTL tables.
pub struct CoreLend<'a> {
    /// One entry per physical unit (entrusted P2L).
    pub entrust: &'a mut [u32],
    /// One bit per logical unit (failed-LBA marks), `logical_units / 32`
    /// words rounded up.
    pub marks: &'a mut [u32],
    /// Block-level list pages: holders and page buffers (may be empty
    /// unless the FTL reserves list pages, see [`crate::tech::reparo::superblock`]).
    pub lists: ListLend<'a>,
    /// Page-level entrustment's holder table
    /// ([`crate::tech::reparo::p2l_page::page_words`] words; empty: page-level
    /// entrustment off).
    pub pages: &'a mut [u32],
}

/// One flash core: its FTL, die-failure detector and Reparo state.
pub struct FlashCore<'a, H> {
    /// The FTL of this core's dies.
    pub ftl: Ftl<'a, H>,
    det: Detector,
    entrust: P2lRecord<'a>,
    marks: &'a mut [u32],
    retired: [bool; crate::tech::reparo::die_detect::MAX_DIES],
    to_retire: heapless::Deque<DieId, 8>,
    probe_out: bool,
    stats: IdentifyStats,
    lists: Option<BlockLists<'a>>,
    pages: Option<PageEntrust<'a>>,
    ident_page: Option<crate::medium::addr::Ppn>,
    /// An error met while polling, handed back by the next call that can.
    fault: Option<Error>,
}

impl<'a, H: Hooks> FlashCore<'a, H> {
    /// Wraps `ftl`; dies fail past `n_bad_die` bad blocks.
    pub fn new(ftl: Ftl<'a, H>, lend: CoreLend<'a>, n_bad_die: u32) -> Result<Self, Error> {
        let g = ftl.config().geometry;
        if lend.entrust.len() < g.total_units() as usize {
            return Err(Error::TableTooSmall(&"controller: entrusted p2l"));
        }
        if lend.marks.len() < (ftl.logical_units() as usize).div_ceil(32) {
            return Err(Error::TableTooSmall(&"controller: failed-lba marks"));
        }
        lend.marks.fill(0);
        let lists = if ftl.config().superblock.list_pages {
            Some(BlockLists::new(&ftl, lend.lists)?)
        } else {
            None
        };
        let pages = if lend.pages.is_empty() {
            None
        } else {
            Some(PageEntrust::new(&ftl, lend.pages)?)
        };
        Ok(FlashCore {
            det: Detector::new(g, n_bad_die)?,
            ftl,
            entrust: P2lRecord::new(lend.entrust),
            marks: lend.marks,
            retired: [false; crate::tech::reparo::die_detect::MAX_DIES],
            to_retire: heapless::Deque::new(),
            probe_out: false,
            stats: IdentifyStats::default(),
            lists,
            pages,
            ident_page: None,
            fault: None,
        })
    }

    /// The detector (bad-block counts, failed dies).
    pub fn detector(&self) -> &Detector {
        &self.det
    }

    /// Identification counters.
    pub fn identify_stats(&self) -> IdentifyStats {
        IdentifyStats {
            probes: self.det.probes(),
            ..self.stats
        }
    }

    /// Next operation for the driver: the FTL's first, then a probe.
    pub fn poll_op(&mut self) -> Option<NandOp> {
        let mut next = match self.pages.as_mut() {
            Some(pe) => {
                let ftl = &mut self.ftl;
                pe.next_op(|| ftl.poll_op())
            }
            None => self.ftl.poll_op(),
        };
        // Worked on in place: an operation is large, and each copy of it
        // is a long run of loads and stores on a 32-bit core.
        if let Some(op) = next.as_mut() {
            match &op.cmd {
                NandCmd::Program { page, spare, .. }
                | NandCmd::Copyback {
                    dst: page, spare, ..
                } => self.entrust.on_program(&self.ftl, *page, spare),
                _ => {}
            }
            if let Some(l) = self.lists.as_mut() {
                if let Err(e) = l.on_emit(&self.ftl, &self.entrust, &self.retired, op) {
                    self.fault.get_or_insert(e);
                }
            }
            return next;
        }
        if let Some(pe) = self.pages.as_mut() {
            let marks = &mut *self.marks;
            match pe.next_read(&self.ftl, &self.entrust, &self.retired, |lpn| {
                mark(marks, lpn)
            }) {
                Ok(Some(op)) => return Some(op),
                Ok(None) => {}
                Err(e) => {
                    self.fault.get_or_insert(e);
                }
            }
        }
        if let Some(l) = self.lists.as_mut() {
            let marks = &mut *self.marks;
            match l.next_read(&self.ftl, &self.entrust, &self.retired, |lpn| {
                mark(marks, lpn)
            }) {
                Ok(Some(op)) => {
                    if let NandCmd::ReadMeta { page, .. } = op.cmd {
                        self.ident_page = Some(page);
                    }
                    return Some(op);
                }
                Ok(None) => {}
                Err(e) => {
                    self.fault.get_or_insert(e);
                }
            }
        }
        if self.probe_out {
            return None;
        }
        let block = self.det.next_probe()?;
        self.probe_out = true;
        let page = self.ftl.config().geometry.ppn(block, 0);
        Some(NandOp {
            id: PROBE_ID,
            cmd: NandCmd::Read {
                page,
                units: UnitMask::default(),
                dst: [Slot(0); MAX_UNITS_PER_PAGE],
            },
            origin: Origin::Meta,
        })
    }

    /// Hands back the result of an operation from [`FlashCore::poll_op`].
    pub fn complete(&mut self, id: OpId, result: NandResult, now: u64) -> Result<(), Error> {
        if let Some(e) = self.fault.take() {
            return Err(e);
        }
        if id == IDENT_ID && self.pages.as_ref().is_some_and(|p| p.running()) {
            let marks = &mut *self.marks;
            return match self.pages.as_mut() {
                Some(pe) => pe.read_done(&self.ftl, &result, |lpn| mark(marks, lpn)),
                None => Err(rare(Error::Corrupt(
                    &"identification read without page entrustment",
                ))),
            };
        }
        if id == IDENT_ID {
            let page = self
                .ident_page
                .take()
                .or_rare(Error::Corrupt(&"identification read not issued"))?;
            let marks = &mut *self.marks;
            return match self.lists.as_mut() {
                Some(l) => l.read_done(&self.ftl, page, &result, &self.retired, |lpn| {
                    mark(marks, lpn)
                }),
                None => Err(rare(Error::Corrupt(
                    &"identification read without list pages",
                ))),
            };
        }
        if let Some(l) = self.lists.as_mut() {
            l.on_complete(id, &result);
        }
        if id == PROBE_ID {
            self.probe_out = false;
            self.det.probe_done(&result);
            self.queue_failed();
            return Ok(());
        }
        let g = self.ftl.config().geometry;
        if let Some(cmd) = self.ftl.peek_op(id) {
            let block = match cmd {
                NandCmd::Read { page, .. }
                | NandCmd::ReadMeta { page, .. }
                | NandCmd::Program { page, .. }
                | NandCmd::ProgramMeta { page, .. }
                | NandCmd::Copyback { dst: page, .. } => g.block_of(page),
                NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. } => block,
            };
            match (&result, cmd) {
                (Err(e), _) => {
                    if let (Some(pe), NandCmd::Program { page, .. }) = (self.pages.as_mut(), cmd) {
                        pe.on_program_failed(page);
                    }
                    self.det.on_failure(block, *e)
                }
                (Ok(_), NandCmd::Erase { .. } | NandCmd::GuardedErase { .. }) => {
                    self.entrust.on_erase(&self.ftl, block);
                    if let Some(l) = self.lists.as_mut() {
                        l.on_erase(block, &self.retired);
                    }
                    if let Some(pe) = self.pages.as_mut() {
                        pe.on_erase(block);
                    }
                }
                _ => {}
            }
            self.queue_failed();
        }
        self.ftl.complete(id, result, now)
    }

    fn queue_failed(&mut self) {
        while let Some(d) = self.det.poll_event() {
            let _ = self.to_retire.push_back(d);
        }
    }

    /// Retires newly failed dies once the FTL is idle; returns the dies
    /// retired now (at most 8). Call it when the driver has drained the
    /// operations.
    pub fn maintain(&mut self) -> Result<heapless::Vec<DieId, 8>, Error> {
        let mut out = heapless::Vec::new();
        if !self.to_retire.is_empty() {
            // Retirement waits for every operation: send held programs.
            self.release_held();
        }
        if self.probe_out {
            return Ok(out);
        }
        while let Some(&d) = self.to_retire.front() {
            match self.ftl.retire_die(d) {
                Ok(_) => {}
                Err(Error::Busy) => break,
                Err(e) => return Err(e),
            }
            self.to_retire.pop_front();
            self.note_retired(d);
            let _ = out.push(d);
        }
        Ok(out)
    }

    /// Retires die `d` at once, without detection (a drive built in its
    /// repaired state). Call it with no operation in flight.
    pub fn retire_die_now(&mut self, d: DieId) -> Result<(), Error> {
        self.ftl.retire_die(d)?;
        self.note_retired(d);
        Ok(())
    }

    /// Die `d` is out of service: the entrusted copies it held go back to
    /// RAM, and superpage runs span one die fewer.
    fn note_retired(&mut self, d: DieId) {
        if let Some(r) = self.retired.get_mut(d.0 as usize) {
            *r = true;
        }
        if let Some(l) = self.lists.as_mut() {
            l.on_retire_die(d);
        }
        let dies = self.ftl.config().geometry.dies() as usize;
        let live = self.retired.iter().take(dies).filter(|&&r| !r).count();
        if let Some(pe) = self.pages.as_mut() {
            pe.on_retire_die(d);
            pe.set_dies(u32::try_from(live).unwrap_or(1));
        }
    }

    /// Whether die `d` was detected failed and retired.
    pub fn is_retired(&self, d: DieId) -> bool {
        self.retired.get(d.0 as usize).copied().unwrap_or(false)
    }

    /// Whether any die of this core was retired.
    pub fn has_failed_die(&self) -> bool {
        self.retired.iter().any(|&r| r)
    }

    fn entry_failed(&self, e: L2pEntry) -> bool {
        self.failure_view().is_failed(e)
    }

    /// The geometry and retired dies, for scans of the shared area.
    pub fn failure_view(&self) -> FailureView {
        FailureView {
            g: self.ftl.config().geometry,
            retired: self.retired,
        }
    }

    /// CDR: copies the L2P entries of local LPNs `first..` into the shared
    /// area `shared` (as many as fit and exist); returns how many.
    pub fn copy_to_shared(&mut self, first: u32, shared: &mut [L2pEntry]) -> Result<usize, Error> {
        let end = self.ftl.logical_units();
        let mut n = 0usize;
        for (i, slot) in shared.iter_mut().enumerate() {
            let l = u32::try_from(i)
                .ok()
                .and_then(|i| first.checked_add(i))
                .filter(|&l| l < end);
            let Some(l) = l else { break };
            *slot = self.ftl.l2p_entry(Lpn(l))?;
            n = i.wrapping_add(1);
        }
        self.stats.l2p_scanned = self.stats.l2p_scanned.wrapping_add(n as u64);
        Ok(n)
    }

    /// Counts failed LBAs the helpers found in the shared area.
    pub fn note_found(&mut self, n: u64) {
        self.stats.found = self.stats.found.wrapping_add(n);
    }

    /// Whether local `lpn` is failed: its L2P entry points into a retired
    /// die, or its data was lost. Not counted as identification work.
    pub fn is_failed(&self, lpn: Lpn) -> Result<bool, Error> {
        Ok(self.entry_failed(self.ftl.l2p_entry(lpn)?))
    }

    /// L2P scan of local LPNs `first..first + count` (the *Identifier* of
    /// IDR and CDR), calling `found` for each failed one in order.
    pub fn scan(
        &mut self,
        first: u32,
        count: u32,
        mut found: impl FnMut(Lpn),
    ) -> Result<(), Error> {
        let end = first.saturating_add(count).min(self.ftl.logical_units());
        for l in first..end {
            self.stats.l2p_scanned = self.stats.l2p_scanned.wrapping_add(1);
            if self.entry_failed(self.ftl.l2p_entry(Lpn(l))?) {
                self.stats.found = self.stats.found.wrapping_add(1);
                found(Lpn(l));
            }
        }
        Ok(())
    }

    /// CDR*: starts identifying the failed LBAs of every retired die from
    /// the entrusted P2L copies of `mode`: list pages ([`P2lMode::Block`],
    /// [`crate::tech::reparo::p2l_list`]) or neighbour spare areas ([`P2lMode::Page`],
    /// [`crate::tech::reparo::p2l_page`]). The reads come out of [`FlashCore::poll_op`]
    /// (id [`IDENT_ID`]); once they are done, [`FlashCore::identify_result`]
    /// gives the work. Copies still in RAM cost no read.
    pub fn start_identify(&mut self, mode: P2lMode) -> Result<(), Error> {
        match mode {
            P2lMode::Block => self
                .lists
                .as_mut()
                .or_rare(Error::InvalidConfig(
                    &"p2l: block-level entrustment needs list pages (superblock.list_pages)",
                ))?
                .start(),
            P2lMode::Page => self
                .pages
                .as_mut()
                .or_rare(Error::InvalidConfig(
                    &"p2l: page-level entrustment needs its holder table (CoreLend::pages)",
                ))?
                .start(),
            P2lMode::None => return Err(Error::InvalidConfig(&"p2l: no entrustment configured")),
        }
        Ok(())
    }

    /// The work of the finished identification (counted into
    /// [`FlashCore::identify_stats`] once), or `None` while reads are left.
    pub fn identify_result(&mut self) -> Result<Option<P2lCost>, Error> {
        if let Some(e) = self.fault.take() {
            return Err(e);
        }
        if self.lists.as_ref().is_some_and(|l| l.running())
            || self.pages.as_ref().is_some_and(|p| p.running())
        {
            return Ok(None);
        }
        let c = match self.lists.as_mut().and_then(|l| l.take_result()) {
            Some(c) => Some(c),
            None => self.pages.as_mut().and_then(|p| p.take_result()),
        };
        if let Some(c) = c {
            self.stats.p2l = self.stats.p2l.plus(c);
        }
        Ok(c)
    }

    /// Sends the programs page-level entrustment holds back for a superpage
    /// run. Call it when the driver has nothing else to do, or before
    /// waiting for the FTL (a flush, a full write buffer).
    pub fn release_held(&mut self) {
        if let Some(pe) = self.pages.as_mut() {
            pe.release();
        }
    }

    /// Whether page-level entrustment holds programs back.
    pub fn holding(&self) -> bool {
        self.pages.as_ref().is_some_and(|p| p.holding())
    }

    /// The bytes of the metadata buffer an operation from
    /// [`FlashCore::poll_op`] names (list pages, or the FTL's own).
    pub fn meta_for(&mut self, op: &NandOp) -> &mut [u8] {
        let buf = match op.cmd {
            NandCmd::ProgramMeta { buf, .. } | NandCmd::ReadMeta { buf, .. } => buf,
            _ => return &mut [],
        };
        if buf.0 >= LIST_BUF_BASE {
            return match self.lists.as_mut().and_then(|l| l.meta(buf)) {
                Some(b) => b,
                None => &mut [],
            };
        }
        self.ftl.meta_for(op)
    }

    /// Range query over the marks of a P2L identification
    /// ([`FlashCore::start_identify`]): calls
    /// `found` for each marked local LPN of `first..first + count` that is
    /// still failed (a host rewrite clears it), in order.
    pub fn scan_marks(
        &mut self,
        first: u32,
        count: u32,
        mut found: impl FnMut(Lpn),
    ) -> Result<(), Error> {
        let end = first.saturating_add(count).min(self.ftl.logical_units());
        for l in first..end {
            self.stats.marks_scanned = self.stats.marks_scanned.wrapping_add(1);
            let w = self.marks.get((l / 32) as usize).copied().unwrap_or(0);
            if w & (1u32 << (l % 32)) != 0 && self.is_failed(Lpn(l))? {
                self.stats.found = self.stats.found.wrapping_add(1);
                found(Lpn(l));
            }
        }
        Ok(())
    }
}

/// Sets the failed-LBA mark of `lpn`.
fn mark(marks: &mut [u32], lpn: Lpn) {
    if let Some(m) = marks.get_mut((lpn.0 / 32) as usize) {
        *m |= 1u32 << (lpn.0 % 32);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::tech::reparo::handler::SsdShape;

    #[test]
    fn master_stripes_and_redirects_as_figure_30() {
        let mut m = Master::new(4, 60).unwrap();
        assert_eq!(m.per_core(), 15);
        let t = |core, lpn| Target {
            core,
            lpn: Lpn(lpn),
        };
        assert_eq!(m.route(7).unwrap(), t(3, 1));
        assert_eq!(m.route(58).unwrap(), t(2, 14));
        assert!(m.route(60).is_err());
        let cdr = Cdr::new(
            SsdShape {
                cores: 4,
                dies: 16,
                logical: 60,
                die_capacity: 6,
            },
            3,
        )
        .unwrap();
        m.set_cdr(cdr).unwrap();
        // _60, _61, _62 are local LPN 15 (the first hidden slot) of cores 0-2.
        assert_eq!(m.route(3).unwrap(), t(0, 15));
        assert_eq!(m.route(7).unwrap(), t(1, 15));
        assert_eq!(m.route(11).unwrap(), t(2, 15));
        assert_eq!(m.static_home(11).unwrap(), t(3, 2));
        assert_eq!(m.route(15).unwrap(), t(3, 3));
        assert!(m.is_fake_failure(11) && !m.is_fake_failure(15));
        assert!(Master::new(4, 61).is_err());
        let other = Cdr::new(
            SsdShape {
                cores: 4,
                dies: 16,
                logical: 64,
                die_capacity: 6,
            },
            3,
        )
        .unwrap();
        assert!(m.set_cdr(other).is_err());
        // A second failure on core 3: positions 4..8 of each unit, LBAs
        // 19, 23 and 27 as _64, _65 and _66 (the slots after round 0's).
        m.set_cdr(cdr).unwrap();
        assert_eq!(m.route(19).unwrap(), t(0, 16));
        assert_eq!(m.route(23).unwrap(), t(1, 16));
        assert_eq!(m.route(27).unwrap(), t(2, 16));
        assert_eq!(m.route(3).unwrap(), t(0, 15));
        assert_eq!(m.route(31).unwrap(), t(3, 7));
        let new: std::vec::Vec<u64> = (0..60).filter(|&l| m.is_new_fake_failure(l)).collect();
        assert_eq!(new, [19, 23, 27]);
        let all: std::vec::Vec<u64> = (0..60).filter(|&l| m.is_fake_failure(l)).collect();
        assert_eq!(all, [3, 7, 11, 19, 23, 27]);
        // A third round fits (positions 8..12 < 15), a fourth does not.
        m.set_cdr(cdr).unwrap();
        assert!(m.set_cdr(cdr).is_err());
    }
}

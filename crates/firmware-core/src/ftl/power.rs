//! Power loss: the flush the capacitor pays for when the supply fails.
//!
//! On [`Ftl::power_fail`] every operation in flight is abandoned (the driver
//! delivers no completion for it: it was torn or never started) and the core
//! emits, in order:
//!
//! 1. every unit still in the write buffer (acknowledged data is always
//!    protected), packed into pages of **fresh** blocks (open blocks may end in
//!    torn or skipped pages, so nothing is appended to them);
//! 2. every translation page that is dirty or was being written back: at most
//!    `B` by the budget kept in [`crate::ftl::persist`];
//! 3. one **power-cut record**: the blocks step 1 wrote (recovery reads their
//!    spare areas, newest data of their units), the blocks whose erase was
//!    in flight (recovery erases them again) and the blocks whose first page
//!    was being programmed (a torn first program can read as erased yet
//!    refuse the next program, so recovery erases such a block when its
//!    first page reads erased), and the erase counts of free blocks, which
//!    have no first page to carry them;
//! 4. the checkpoint (`checkpoint.rs`): the block table, then, once every
//!    program before it has completed, the anchor page naming it.
//!
//! A cut while the core settles after a mount (see [`crate::ftl::mount`]) skips
//! step 2: the mapping has not changed since the mount, so the record names
//! the blocks that mount replayed again, and the next mount rebuilds the same
//! table.
//!
//! Steps 2 to 4 go to erased metadata-region blocks (the anchor to its own
//! block), of which the core always keeps enough. [`Ftl::cut_capacity`] is
//! the most this flush can program: write-buffer pages + `B` + 1 + the
//! table pages + 1, plus the retries of failed programs the configuration
//! asks the capacitor to pay for (`PersistConfig::cut_retries`). A harness
//! gives the capacitor that much energy and checks the core never asks for
//! more.
//!
//! A program of the flush that fails is programmed again into a fresh
//! block (a data page, a translation page, the record; the failed block
//! takes no further page). The flush keeps one data and one metadata page
//! in flight at a time, so a failure costs one retry and not one per page
//! queued behind it in the same block; the record waits for every program
//! before it (it names the blocks retried data went to) and the table for
//! the record. A failed table page leaves the checkpoint without its
//! anchor: the next mount reads every block's first page instead. [`Ftl::shutdown`] runs the same
//! flush on an idle core with an empty buffer: a clean shutdown.

use crate::error::{rare, Error};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, SlotState, NIL};
use crate::ftl::{Ftl, Phase};
use crate::map::loc::Loc;
use crate::medium::addr::{in_page, BlockId, Lpn, PlaneId, Ppn, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{MetaBuf, NandCmd, NandResult, Origin, PageKind, Slot, Spare};
use crate::persist::cut::{CutPhase, CutState, CUT_TAG, IF_ERASED};
use crate::persist::tp::{
    get_u32, put_u32, seal, F_MOVING, F_RESERVED, F_WRITING, MAGIC_CUT, META_HEADER,
};

impl<H: Hooks> Ftl<'_, H> {
    /// The supply failed at `now`. Operations handed out before are
    /// abandoned: the driver must not complete them. The core then emits the
    /// capacitor flush (see the module documentation); drive it like any
    /// other operations until [`Ftl::cut_finished`]. Host commands are refused
    /// from now on. Without mapping persistence, or before format or mount
    /// finished, nothing is emitted (nothing acknowledged can be lost then
    /// only when persistence is on).
    pub fn power_fail(&mut self, now: u64) -> Result<(), Error> {
        self.last_now = now;
        let was_ready = self.phase.ready();
        let was_settling = self.phase == Phase::Settling;
        self.phase = Phase::Dying;
        // Erases in flight: their blocks may be torn.
        let mut erases: heapless::Vec<u32, 1024> = heapless::Vec::new();
        for e in self.t.ops.iter().take(self.cfg.max_inflight as usize) {
            let entry = match (e.kind, e.cmd) {
                (
                    OpKind::Erase | OpKind::MapErase | OpKind::MountErase,
                    NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. },
                ) => block.0,
                // A first page torn while programming may read as erased yet
                // refuse a program: mount erases the block if it reads erased.
                (OpKind::Free | OpKind::Cut, _) => continue,
                (
                    _,
                    NandCmd::Program { page, .. }
                    | NandCmd::ProgramMeta { page, .. }
                    | NandCmd::Copyback { dst: page, .. },
                ) if self.g.page_in_block(page) == 0 => self.g.block_of(page).0 | IF_ERASED,
                _ => continue,
            };
            erases
                .push(entry)
                .map_err(|_| rare(Error::Corrupt(&"too many erases in flight")))?;
        }
        self.abandon_ops()?;
        self.cut = CutState::default();
        if was_settling && !self.mnt.released {
            self.cut.settling = true;
            self.cut.regions = self.mnt.carried.clone();
        }
        if !self.ps.on || !was_ready {
            self.cut.phase = CutPhase::Done;
            return Ok(());
        }
        self.ps.reset_buffers();
        self.ps.reserved = 0;
        self.ps.inflight.fill(0);
        self.ps.writing = 0;
        for tp in 0..self.ps.n_tp {
            let tp = crate::persist::Tpn(tp);
            let f = self.ps.flag(tp);
            if f & F_WRITING != 0 {
                self.ps.dirty.update(tp)?;
            }
            self.ps
                .set_flag(tp, F_WRITING | F_MOVING | F_RESERVED, false);
        }
        let Some(record) = self.ps.buf_alloc() else {
            return Err(rare(Error::Corrupt(
                &"no metadata buffer for the cut record",
            )));
        };
        let cap = self.record_capacity();
        if erases.len() > cap {
            return Err(rare(Error::Corrupt(&"cut record cannot list every erase")));
        }
        if let Some(b) = self.ps.buf_mut(record) {
            b.fill(0xff);
            for (i, blk) in erases.iter().enumerate() {
                put_u32(b, META_HEADER.wrapping_add(i.saturating_mul(4)), *blk);
            }
        }
        self.cut.record = record;
        self.cut.n_erase = erases.len() as u32;
        self.cut.data_block = NIL;
        self.cut.meta_block = NIL;
        self.cut.phase = CutPhase::Data;
        self.pump_dying()
    }

    /// Clean shutdown at `now`: with no operation in flight and the write
    /// buffer flushed (`Error::Busy` otherwise), writes what a power cut
    /// would (dirty translation pages, record) and the checkpoint (block
    /// table, anchor). Drive it until [`Ftl::cut_finished`]; the next mount
    /// reads only the checkpoint.
    pub fn shutdown(&mut self, now: u64) -> Result<(), Error> {
        if !self.ps.on {
            return Err(Error::InvalidConfig(&"shutdown needs mapping persistence"));
        }
        if !self.is_ready() || self.inflight() > 0 || self.buffered_units() > 0 {
            return Err(Error::Busy);
        }
        self.power_fail(now)
    }

    /// Whether the power-cut flush has been emitted and has completed.
    pub fn cut_finished(&self) -> bool {
        self.cut.phase == CutPhase::Done && self.cut.outstanding == 0
    }

    /// Programs the power-cut flush emitted so far.
    pub fn cut_programs(&self) -> u32 {
        self.cut.emitted
    }

    /// The most programs a power-cut flush can need: write-buffer pages,
    /// the translation-page budget and the record. The capacitor is sized for it.
    pub fn cut_capacity(&self) -> u32 {
        if !self.ps.on {
            return 0;
        }
        let upp = u32::from(self.g.units_per_page).max(1);
        self.cfg
            .write_buffer_units
            .div_ceil(upp)
            .wrapping_add(self.ps.budget)
            .wrapping_add(1)
            .wrapping_add(self.table_pages())
            .wrapping_add(u32::from(self.table_pages() > 0))
            .wrapping_add(self.cfg.persist.cut_retries)
    }

    fn record_capacity(&self) -> usize {
        self.ps.page_bytes.saturating_sub(META_HEADER) / 4
    }

    /// Forgets every operation in flight: entries are freed with a new
    /// generation, so a late completion is refused.
    fn abandon_ops(&mut self) -> Result<(), Error> {
        for e in self.t.ops.iter_mut().take(self.cfg.max_inflight as usize) {
            e.generation = e.generation.wrapping_add(1);
        }
        self.outbound = crate::ftl::tables::Fifo::EMPTY;
        self.init_ops()
    }

    /// Emits as much of the power-cut flush as resources allow.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn pump_dying(&mut self) -> Result<(), Error> {
        loop {
            if self.ops_available() == 0 {
                return Ok(());
            }
            match self.cut.phase {
                CutPhase::Idle | CutPhase::Done => return Ok(()),
                CutPhase::Data => {
                    if self.cut.data_busy {
                        return Ok(());
                    }
                    if !self.cut_data_page()? {
                        self.cut.phase = if self.cut.settling {
                            CutPhase::Record
                        } else {
                            CutPhase::Tps
                        };
                    }
                }
                CutPhase::Tps => {
                    if self.ps.buf_free == 0 || self.cut.meta_busy {
                        return Ok(());
                    }
                    let Some(tp) = self.ps.dirty.pop_oldest()? else {
                        self.cut.phase = CutPhase::Record;
                        continue;
                    };
                    let page = self.cut_meta_page()?;
                    self.cut_emit_tp(tp, page)?;
                }
                CutPhase::Record => {
                    // The record names every block the data went to,
                    // retries included: it waits for every program before it.
                    if self.cut.outstanding > 0 {
                        return Ok(());
                    }
                    let page = self.cut_meta_page()?;
                    let buf = self.cut.record;
                    let n_erase = self.cut.n_erase;
                    let at = n_erase as usize;
                    let cap = self.record_capacity();
                    if at.wrapping_add(self.cut.regions.len()) > cap {
                        return Err(rare(Error::Corrupt(&"cut record overflow")));
                    }
                    let regions = self.cut.regions.clone();
                    let Some(b) = self.ps.buf_mut(buf) else {
                        return Err(rare(Error::Corrupt(&"cut record buffer")));
                    };
                    for (i, r) in regions.iter().enumerate() {
                        let off = META_HEADER.wrapping_add(at.wrapping_add(i).saturating_mul(4));
                        put_u32(b, off, *r);
                    }
                    let n_free = self.record_free_counts(buf, at.wrapping_add(regions.len()))?;
                    let Some(b) = self.ps.buf_mut(buf) else {
                        return Err(rare(Error::Corrupt(&"cut record buffer")));
                    };
                    seal(b, MAGIC_CUT, n_erase | (n_free << 16), regions.len() as u32);
                    let mut spare = Spare {
                        kind: PageKind::Meta,
                        seq: self.next_seq(),
                        ..Spare::default()
                    };
                    if let Some(l) = spare.lpns.get_mut(0) {
                        *l = Lpn(CUT_TAG);
                    }
                    self.cut_emit_meta(page, buf, spare)?;
                    self.cut.phase = CutPhase::Table;
                }
                CutPhase::Table => {
                    // The table describes the blocks as the flush left
                    // them, after any retry.
                    if self.cut.meta_busy || (self.cut.table.is_empty() && self.cut.outstanding > 0)
                    {
                        return Ok(());
                    }
                    let n = self.table_pages();
                    if self.cut.table.is_empty() {
                        for _ in 0..n {
                            let page = self.cut_meta_page()?;
                            self.cut
                                .table
                                .push(page.0)
                                .map_err(|_| rare(Error::Corrupt(&"block table too large")))?;
                        }
                    }
                    let i = self.cut.table_emitted;
                    if i >= n {
                        self.cut.phase = CutPhase::Anchor;
                        continue;
                    }
                    let Some(buf) = self.ps.buf_alloc() else {
                        return Ok(());
                    };
                    let page = Ppn(self.cut.table.get(i as usize).copied().unwrap_or(NIL));
                    self.cut.table_emitted = i.wrapping_add(1);
                    self.table_encode(buf, i)?;
                    let spare = Spare {
                        kind: PageKind::Meta,
                        seq: self.next_seq(),
                        ..Spare::default()
                    };
                    self.cut_emit_meta(page, buf, spare)?;
                }
                CutPhase::Anchor => {
                    if self.table_pages() == 0 {
                        self.cut.phase = CutPhase::Done;
                        continue;
                    }
                    // Last, once everything it names is on flash.
                    if self.cut.outstanding > 0 {
                        return Ok(());
                    }
                    let Some(buf) = self.ps.buf_alloc() else {
                        return Ok(());
                    };
                    self.cut.phase = CutPhase::Done;
                    let anchor = if self.cut.table_failed {
                        None
                    } else {
                        self.anchor_cut_page()
                    };
                    let Some(page) = anchor else {
                        self.ps.buf_release(buf);
                        continue;
                    };
                    let table = self.cut.table.clone();
                    self.anchor_cut_emit(page, buf, &table)?;
                }
            }
        }
    }

    /// Appends (block, erase count) pairs of erased blocks to the record
    /// from entry `at` on, as many as fit: they carry no erase-count header,
    /// so this is how their wear survives the cut. Returns the pairs.
    fn record_free_counts(&mut self, buf: MetaBuf, at: usize) -> Result<u32, Error> {
        // One entry after the pairs holds the threshold below.
        let room = self.record_capacity().saturating_sub(at).saturating_sub(1) / 2;
        let room = room.min(usize::from(u16::MAX));
        let mut n = 0usize;
        // First the blocks mount erases (again): their count after the erase.
        for i in 0..self.cut.n_erase {
            if n >= room {
                break;
            }
            let e = self.ps.buf(buf).map_or(u32::MAX, |b| {
                get_u32(b, META_HEADER.wrapping_add((i as usize).saturating_mul(4)))
            });
            let blk = e & !IF_ERASED;
            if blk >= self.g.total_blocks() {
                continue;
            }
            let pe = self.blk(BlockId(blk))?.pe;
            let pe = if e & IF_ERASED != 0 {
                pe
            } else {
                pe.wrapping_add(1)
            };
            self.record_pair(buf, at.wrapping_add(n.saturating_mul(2)), blk, pe)?;
            n = n.wrapping_add(1);
        }
        // If not every erased block fits, name the most worn: the smallest
        // threshold whose blocks fit. Mount gives the others at most the
        // threshold less one, so a worn block is never taken for a cool one.
        let left = room.saturating_sub(n);
        let (mut lo, mut hi) = (0u32, 0u32);
        for blk in 0..self.g.total_blocks() {
            if let Some(pe) = self.unwritten_pe(BlockId(blk))? {
                hi = hi.max(pe.wrapping_add(1));
            }
        }
        while lo < hi {
            let mid = lo.wrapping_add(hi.saturating_sub(lo) / 2);
            let mut count = 0usize;
            for blk in 0..self.g.total_blocks() {
                if self.unwritten_pe(BlockId(blk))?.is_some_and(|pe| pe >= mid) {
                    count = count.wrapping_add(1);
                }
            }
            if count <= left {
                hi = mid;
            } else {
                lo = mid.wrapping_add(1);
            }
        }
        let threshold = lo;
        for blk in 0..self.g.total_blocks() {
            if n >= room {
                break;
            }
            let Some(pe) = self.unwritten_pe(BlockId(blk))? else {
                continue;
            };
            if pe < threshold {
                continue;
            }
            self.record_pair(buf, at.wrapping_add(n.saturating_mul(2)), blk, pe)?;
            n = n.wrapping_add(1);
        }
        let off = META_HEADER.wrapping_add(at.wrapping_add(n.saturating_mul(2)).saturating_mul(4));
        if let Some(b) = self.ps.buf_mut(buf) {
            put_u32(b, off, threshold);
        }
        Ok(n as u32)
    }

    /// Writes the (block, erase count) pair at entry `i` of the record.
    fn record_pair(&mut self, buf: MetaBuf, i: usize, blk: u32, pe: u32) -> Result<(), Error> {
        let off = META_HEADER.wrapping_add(i.saturating_mul(4));
        let Some(b) = self.ps.buf_mut(buf) else {
            return Err(rare(Error::Corrupt(&"cut record buffer")));
        };
        put_u32(b, off, blk);
        put_u32(b, off.wrapping_add(4), pe);
        Ok(())
    }

    /// Erase count of a block with no written first page (free, or an
    /// erased region or open block), `None` for any other.
    fn unwritten_pe(&self, b: BlockId) -> Result<Option<u32>, Error> {
        let m = self.blk(b)?;
        let unwritten = m.state == BlockState::Free
            || (m.next_page == 0 && matches!(m.state, BlockState::Meta | BlockState::Open));
        Ok(unwritten.then_some(m.pe))
    }

    /// Emits one metadata page of the flush (record, table, anchor) and
    /// counts it against the capacitor.
    pub(crate) fn cut_emit_meta(
        &mut self,
        page: Ppn,
        buf: MetaBuf,
        spare: Spare,
    ) -> Result<(), Error> {
        self.emit(
            OpKind::Cut,
            NandCmd::ProgramMeta { page, buf, spare },
            Origin::Meta,
            0,
            0,
        )?;
        self.cut.meta_busy = true;
        self.cut_count();
        Ok(())
    }

    /// Emits translation page `tp` of the flush into `page` and counts it
    /// against the capacitor; the next metadata page waits for it.
    fn cut_emit_tp(&mut self, tp: crate::persist::Tpn, page: Ppn) -> Result<(), Error> {
        self.tp_emit(tp, page, OpKind::Cut)?;
        self.cut.meta_busy = true;
        self.cut_count();
        Ok(())
    }

    fn cut_count(&mut self) {
        self.cut.emitted = self.cut.emitted.wrapping_add(1);
        self.cut.outstanding = self.cut.outstanding.wrapping_add(1);
        self.stats.cut_programs = self.stats.cut_programs.wrapping_add(1);
    }

    /// Programs one page of buffered units. False: nothing left.
    fn cut_data_page(&mut self) -> Result<bool, Error> {
        let upp = u32::from(self.g.units_per_page);
        let w = self.cfg.write_buffer_units;
        let mut src = [Slot(0); MAX_UNITS_PER_PAGE];
        let mut spare = Spare {
            kind: PageKind::Data,
            ..Spare::default()
        };
        let mut n = 0u8;
        while u32::from(n) < upp && self.cut.slot_cursor < w {
            let i = self.cut.slot_cursor;
            self.cut.slot_cursor = i.wrapping_add(1);
            let idx = u16::try_from(i).map_err(|_| rare(Error::Corrupt(&"slot index")))?;
            let m = *self.slot(Slot(idx))?;
            if !matches!(m.state, SlotState::WbPending | SlotState::WbProgramming) {
                continue;
            }
            if self.loc(Lpn(m.lpn))? != Loc::Buffer(Slot(idx)) {
                continue;
            }
            if let (Some(d), Some(l)) = (
                src.get_mut(in_page(usize::from(n))),
                spare.lpns.get_mut(in_page(usize::from(n))),
            ) {
                *d = Slot(idx);
                *l = Lpn(m.lpn);
            }
            spare.units.insert(n);
            n = n.wrapping_add(1);
        }
        if n == 0 {
            return Ok(false);
        }
        let page = self.cut_data_target()?;
        spare.seq = self.next_seq();
        self.cut_emit_data(page, src, spare, n)?;
        Ok(true)
    }

    /// Emits one data page of the flush (`n` units) and counts it against
    /// the capacitor; the next data page waits for it.
    fn cut_emit_data(
        &mut self,
        page: Ppn,
        src: [Slot; MAX_UNITS_PER_PAGE],
        spare: Spare,
        n: u8,
    ) -> Result<(), Error> {
        self.emit(
            OpKind::Cut,
            NandCmd::Program { page, src, spare },
            Origin::Host,
            n,
            0,
        )?;
        self.cut.data_busy = true;
        self.cut_count();
        Ok(())
    }

    /// Takes the next page of block `b` (`NIL`: none) the flush is filling,
    /// if it has one left.
    fn cut_next_in(&mut self, b: u32) -> Result<Option<Ppn>, Error> {
        if b == NIL {
            return Ok(None);
        }
        let ppb = self.g.pages_per_block;
        let m = self.blk_mut(BlockId(b))?;
        if u32::from(m.next_page) >= ppb {
            return Ok(None);
        }
        let page = u32::from(m.next_page);
        m.next_page = m.next_page.wrapping_add(1);
        Ok(Some(self.g.ppn(BlockId(b), page)))
    }

    /// Next page of a fresh block for buffered data.
    fn cut_data_target(&mut self) -> Result<Ppn, Error> {
        if let Some(page) = self.cut_next_in(self.cut.data_block)? {
            return Ok(page);
        }
        // The plane with the most room left takes the block: cut after cut,
        // the flush would otherwise fill the same planes with valid data
        // (GC never moves data across planes). A plane keeps its last free
        // block, GC's next destination: without it, GC after the mount could
        // not finish its victim and nothing would free a block.
        let mut best: Option<(PlaneId, u64)> = None;
        for p in 0..self.g.planes() {
            let p = PlaneId(p);
            if self.pl(p)?.free_count <= 1 {
                continue;
            }
            let room = self
                .room_units(p)?
                .saturating_sub(u64::from(self.pl(p)?.valid_units));
            if best.is_none_or(|(_, r)| room > r) {
                best = Some((p, room));
            }
        }
        let found = match best {
            Some((p, _)) => self.free_pop_coolest(p, 0, None)?,
            None => None,
        };
        let b = match found {
            Some(b) => b,
            // No free data block anywhere: an erased region block (the cut
            // reserve counts the write buffer's pages for this).
            None => {
                let b = self.cut_erased_region()?;
                self.ps.erased_blocks = self.ps.erased_blocks.saturating_sub(1);
                b
            }
        };
        {
            let m = self.blk_mut(b)?;
            m.state = BlockState::Open;
            m.next_page = 1;
        }
        self.cut
            .regions
            .push(b.0)
            .map_err(|_| rare(Error::Corrupt(&"power-cut flush needs too many blocks")))?;
        self.cut.data_block = b.0;
        Ok(self.g.ppn(b, 0))
    }

    /// Next erased region page for the power-cut flush.
    fn cut_meta_page(&mut self) -> Result<Ppn, Error> {
        if let Some(page) = self.cut_next_in(self.cut.meta_block)? {
            return Ok(page);
        }
        let b = match self.cut_erased_region() {
            Ok(b) => {
                self.ps.erased_blocks = self.ps.erased_blocks.saturating_sub(1);
                b
            }
            // Failed programs used up the region's erased blocks: a free
            // data block joins the region (mount knows it by its pages).
            Err(e) => match self.cut_free_block()? {
                Some(b) => b,
                None => return Err(e),
            },
        };
        {
            let m = self.blk_mut(b)?;
            m.state = BlockState::Meta;
            m.next_page = 1;
        }
        self.cut.meta_block = b.0;
        Ok(self.g.ppn(b, 0))
    }

    /// A free block of the plane with the most free blocks, leaving each
    /// plane its last (GC's next destination); `None` if there is none.
    fn cut_free_block(&mut self) -> Result<Option<BlockId>, Error> {
        let mut best: Option<(PlaneId, u32)> = None;
        for p in 0..self.g.planes() {
            let p = PlaneId(p);
            let free = self.pl(p)?.free_count;
            if free > 1 && best.is_none_or(|(_, f)| free > f) {
                best = Some((p, free));
            }
        }
        match best {
            Some((p, _)) => self.free_pop_coolest(p, 0, None),
            None => Ok(None),
        }
    }

    fn cut_erased_region(&mut self) -> Result<BlockId, Error> {
        for b in 0..self.g.total_blocks() {
            let m = self.blk(BlockId(b))?;
            if m.state == BlockState::Meta && m.next_page == 0 && m.pending == 0 {
                let p = self.g.plane_of(BlockId(b));
                if self.pl(p)?.meta_active != b {
                    return Ok(BlockId(b));
                }
            }
        }
        Err(Error::Corrupt(
            &"no erased region block for the power-cut flush",
        ))
    }

    /// Completion of a power-cut flush operation. A failed program is
    /// programmed again into a fresh block (the failed block refuses every
    /// later program): a data page, a translation page or the record, each
    /// of which the next mount needs. A failed block-table page leaves
    /// the checkpoint without its anchor (mount then reads the first pages),
    /// and a failed anchor page is one mount skips.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn cut_done(&mut self, cmd: &NandCmd, result: NandResult) -> Result<(), Error> {
        self.cut.outstanding = self.cut.outstanding.saturating_sub(1);
        let failed = result.is_err();
        match *cmd {
            NandCmd::Program { page, src, spare } => {
                self.cut.data_busy = false;
                if failed {
                    let b = self.cut_block_failed(page)?;
                    if self.cut.data_block == b {
                        self.cut.data_block = NIL;
                    }
                    let page = self.cut_data_target()?;
                    let spare = Spare {
                        seq: self.next_seq(),
                        ..spare
                    };
                    let n = spare.units.count() as u8;
                    self.cut_emit_data(page, src, spare, n)?;
                }
            }
            NandCmd::ProgramMeta { page, buf, spare } => {
                let anchor = self.anchor_index(self.g.block_of(page)).is_some();
                if !anchor {
                    self.cut.meta_busy = false;
                }
                let table = self.cut.table.contains(&page.0);
                if failed && !anchor {
                    let b = self.cut_block_failed(page)?;
                    if self.cut.meta_block == b {
                        self.cut.meta_block = NIL;
                    }
                }
                if failed && !anchor && !table {
                    let to = self.cut_meta_page()?;
                    if buf == self.cut.record || spare.kind != PageKind::Map {
                        let spare = Spare {
                            seq: self.next_seq(),
                            ..spare
                        };
                        return self.cut_emit_meta(to, buf, spare);
                    }
                    // A translation page: encoded again from the table.
                    self.ps.buf_release(buf);
                    let tp = spare
                        .lpns
                        .first()
                        .ok_or(rare(Error::Corrupt(&"translation page without its number")))?;
                    return self.cut_emit_tp(crate::persist::Tpn(tp.0), to);
                }
                if failed && table {
                    self.cut.table_failed = true;
                }
                if buf != self.cut.record {
                    self.ps.buf_release(buf);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Closes the block of `page`, whose program failed, so the flush
    /// takes no more pages from it; returns the block.
    fn cut_block_failed(&mut self, page: Ppn) -> Result<u32, Error> {
        let b = self.g.block_of(page);
        let ppb = u16::try_from(self.g.pages_per_block)
            .map_err(|_| Error::InvalidConfig(&"pages per block above 65535"))?;
        self.blk_mut(b)?.next_page = ppb;
        Ok(b.0)
    }

    /// Host units in the write buffer that a cut would flush.
    pub fn buffered_units(&self) -> u32 {
        let w = self.cfg.write_buffer_units as usize;
        self.t
            .slots
            .iter()
            .take(w)
            .filter(|m| matches!(m.state, SlotState::WbPending | SlotState::WbProgramming))
            .count() as u32
    }
}

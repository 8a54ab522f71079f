//! The FTL state machine: public API, host data path and scheduling.
//!
//! Data path of one host write: [`Ftl::write`] takes a write-buffer slot and
//! points the L2P entry at it (the old flash copy is invalidated at once); the
//! scheduler packs buffered units into pages and programs them round-robin
//! over planes (channel first, for parallelism); the program's completion
//! points the L2P entry at flash, unless the unit was overwritten meanwhile.

mod adopt;
mod blocks;
mod buffer;
mod checkpoint;
mod deferred;
#[cfg(feature = "reparo")]
pub mod die_fail;
mod gc;
pub mod hooks;
pub mod host;
pub mod lend;
pub(crate) mod mapping;
pub mod mount;
mod ops;
pub mod persist;
pub mod power;
mod round_robin;
mod state;
pub mod tables;
mod wear;

use crate::config::{Config, OPEN_MARGIN};
use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::host::{CopyProgress, CopyStop, HostCompletion, ReadStart, ReadStatus, Tag};
use crate::ftl::tables::{
    BlockMeta, BlockState, Fifo, OpKind, PlaneState, SlotMeta, SlotState, TableSizes, Tables, NIL,
    NIL16,
};
use crate::map::loc::{Loc, P2L_NONE};
use crate::medium::addr::{in_page, BlockId, Lpn, PlaneId, UnitMask, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{NandCmd, NandResult, OpId, Origin, PageKind, Slot, Spare};
pub use ops::OpView;
pub use state::{Ftl, Phase, Stats, Stream};

impl<'a, H: Hooks> Ftl<'a, H> {
    /// Bytes of lent memory [`Ftl::new`] needs for `cfg`: every table of
    /// the core and of the hook set `H`, alignment included.
    pub fn lend_bytes(cfg: &Config) -> Result<usize, Error>
    where
        H: hooks::Build<'a>,
    {
        let mut s = lend::Lend::counting();
        Tables::lend(cfg, &mut s)?;
        H::lend(cfg, &mut s)?;
        Ok(s.bytes())
    }

    /// Builds a core whose every table is carved out of `mem`, at least
    /// [`Ftl::lend_bytes`] long; its contents on entry do not matter. A core
    /// built again over the same memory after the first is dropped (a
    /// remount) refuses completions of operations the first one emitted.
    /// Call [`Ftl::format`] or [`Ftl::mount`] before host commands.
    pub fn new(cfg: Config, mem: &'a mut [u8]) -> Result<Self, Error>
    where
        H: hooks::Build<'a>,
    {
        let sizes = TableSizes::for_config(&cfg)?;
        let mut carver = lend::Lend::carving(mem);
        let mut t = Tables::lend(&cfg, &mut carver)?;
        let ht = H::lend(&cfg, &mut carver)?;
        let pt = core::mem::replace(&mut t.persist, crate::persist::tp::PersistTables::none());
        let wb_pages = cfg
            .write_buffer_units
            .div_ceil(u32::from(cfg.geometry.units_per_page).max(1));
        let ps = crate::persist::tp::Persist::new(&cfg, pt, wb_pages)?;
        let mut f = Ftl {
            h: H::build(&cfg, ht)?,
            cfg,
            g: crate::medium::shift::Geo::new(cfg.geometry),
            data_pages: 0,
            data_units: 0,
            room_blocks: cfg
                .geometry
                .blocks_per_plane
                .saturating_sub(cfg.gc_reserve_blocks)
                .saturating_sub(OPEN_MARGIN),
            t,
            stats: Stats::default(),
            wb_free: NIL16,
            wb_free_count: 0,
            read_free: NIL16,
            op_free: NIL16,
            op_free_count: 0,
            outbound: Fifo::EMPTY,
            pending: Fifo::EMPTY,
            pending_dead: 0,
            done: Fifo::EMPTY,
            handed_out: NIL16,
            attn_head: NIL,
            attn_tail: NIL,
            seq: 0,
            cursor_v: 0,
            ready_bits: [0; state::READY_BITS / 32],
            ready_planes: 0,
            format_cursor: 0,
            format_pending: 0,
            phase: Phase::Formatting,
            admit_seq: 0,
            flushes: heapless::Vec::new(),
            flush_done: heapless::Deque::new(),
            force_flush: false,
            defer_pump: false,
            pump_owed: false,
            last_now: 0,
            format_pe: 0,
            ps,
            cut: crate::persist::cut::CutState::default(),
            mnt: crate::persist::mount::MountState::default(),
            anc: crate::persist::checkpoint::AnchorState::default(),
        };
        for e in f.t.l2p.iter_mut().take(sizes.l2p) {
            *e = Loc::Unmapped.encode();
        }
        for e in f.t.p2l.iter_mut().take(sizes.p2l) {
            *e = P2L_NONE;
        }
        for b in f.t.blocks.iter_mut().take(sizes.blocks) {
            *b = BlockMeta {
                next: NIL,
                prev: NIL,
                ..BlockMeta::default()
            };
        }
        for h in f.t.buckets.iter_mut().take(sizes.buckets) {
            *h = NIL;
        }
        for p in f.t.planes.iter_mut().take(sizes.planes) {
            *p = PlaneState::default();
        }
        f.data_pages = H::data_end(&f);
        f.data_units = f.data_pages.saturating_mul(u32::from(f.g.units_per_page));
        f.init_slots()?;
        f.init_ops()?;
        Ok(f)
    }

    /// Starts a low-level format: every block is erased; blocks that fail are retired.
    /// The device is ready once all erases have completed (see [`Ftl::is_ready`]).
    pub fn format(&mut self, now: u64) -> Result<(), Error> {
        self.format_aged(now, 0)
    }

    /// [`Ftl::format`] of a drive whose blocks have already seen `pe`
    /// program/erase cycles (their counts carried over from earlier life).
    pub fn format_aged(&mut self, now: u64, pe: u32) -> Result<(), Error> {
        self.format_pe = pe;
        self.last_now = now;
        self.phase = Phase::Formatting;
        self.format_cursor = 0;
        self.format_pending = 0;
        self.anc = crate::persist::checkpoint::AnchorState::default();
        self.pump()
    }

    /// Where the core is in its life.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Running becomes settling while the metadata region lacks the cut
    /// reserve (see [`Phase::Settling`]).
    pub(crate) fn settle_if_short(&mut self) {
        if !self.cut_reserve_ok() {
            self.phase = Phase::Settling;
        }
    }

    /// Whether format (or mount) has finished and host commands are accepted.
    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Running
    }

    /// The hook set: the techniques' state and what they report.
    pub fn hooks(&self) -> &H {
        &self.h
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Counters since creation (or the last [`Ftl::reset_stats`]).
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Zeroes the counters (after preconditioning, for example).
    pub fn reset_stats(&mut self) {
        self.stats = Stats {
            bad_blocks: self.stats.bad_blocks,
            epm_active_blocks_max: self.stats.epm_active_blocks_max,
            ..Stats::default()
        };
    }

    /// Exported capacity in mapping units.
    pub fn logical_units(&self) -> u32 {
        self.cfg.logical_units
    }

    /// Operations handed out and not yet completed, plus those not yet polled.
    pub fn inflight(&self) -> u32 {
        self.cfg.max_inflight.saturating_sub(self.op_free_count)
    }

    /// Free write-buffer slots.
    pub fn write_buffer_free(&self) -> u32 {
        self.wb_free_count
    }

    /// Free blocks of a plane.
    pub fn free_blocks(&self, p: PlaneId) -> Result<u32, Error> {
        Ok(self.pl(p)?.free_count)
    }

    /// Program/erase count and state of a block, as the core tracks them.
    pub fn block_info(&self, b: BlockId) -> Result<(u32, BlockState, u16), Error> {
        let m = self.blk(b)?;
        Ok((m.pe, m.state, m.valid))
    }

    /// Where a logical unit lives now (for tests and tools that check the
    /// core against ground truth, such as power-cut and die-failure runs).
    pub fn location(&self, lpn: Lpn) -> Result<crate::map::loc::Loc, Error> {
        self.loc(lpn)
    }

    fn release_handed_out(&mut self) -> Result<(), Error> {
        if self.handed_out != NIL16 {
            let s = Slot(self.handed_out);
            self.handed_out = NIL16;
            self.read_release(s)?;
        }
        Ok(())
    }

    pub(crate) fn check_host(&mut self, lpn: Lpn, now: u64) -> Result<(), Error> {
        self.last_now = now;
        self.release_handed_out()?;
        if self.phase != Phase::Running {
            return Err(Error::NotReady);
        }
        if lpn.0 >= self.cfg.logical_units {
            return Err(rare(Error::LpnOutOfRange));
        }
        Ok(())
    }

    /// Accepts one mapping unit of host data. Returns the slot the driver must
    /// fill before its next call into the core; the write is then durable as far
    /// as the host is concerned (the buffer is capacitor-backed).
    /// `Err(Busy)` means the write buffer is full: retry after a completion.
    pub fn write(&mut self, lpn: Lpn, now: u64) -> Result<Slot, Error> {
        self.check_host(lpn, now)?;
        self.admit_seq = self.admit_seq.wrapping_add(1);
        let seq = self.admit_seq;
        if let Loc::Buffer(s) = self.loc(lpn)? {
            let m = self.slot_mut(s)?;
            if m.state == SlotState::WbPending {
                m.aux = seq;
                self.stats.host_write_units = self.stats.host_write_units.wrapping_add(1);
                return Ok(s);
            }
        }
        let Some(s) = self.wb_alloc()? else {
            return Err(Error::Busy);
        };
        if let Loc::Flash(p) = self.loc(lpn)? {
            H::release(self, p, lpn)?;
        }
        self.set_loc(lpn, Loc::Buffer(s))?;
        *self.slot_mut(s)? = SlotMeta {
            lpn: lpn.0,
            aux: seq,
            next: NIL16,
            state: SlotState::WbPending,
        };
        self.pending_push_back(s)?;
        self.stats.host_write_units = self.stats.host_write_units.wrapping_add(1);
        H::buffer_use(self);
        self.pump()?;
        Ok(s)
    }

    /// Whether [`Ftl::write`] of `lpn` would now answer `Busy`: the write
    /// buffer has no free slot and `lpn` has no unflushed one to overwrite.
    /// A refused write changes nothing the host can see, so a driver holding
    /// a blocked write can ask this instead of retrying after every
    /// completion. The answer changes only when a call frees buffer space.
    pub fn write_would_block(&self, lpn: Lpn) -> bool {
        if self.phase != Phase::Running || lpn.0 >= self.cfg.logical_units || self.wb_free != NIL16
        {
            return false;
        }
        match self.loc(lpn) {
            Ok(Loc::Buffer(s)) => self.slot(s).is_ok_and(|m| m.state != SlotState::WbPending),
            Ok(_) => true,
            // Let the write itself report it.
            Err(_) => false,
        }
    }

    /// Starts a host read of one mapping unit.
    pub fn read(&mut self, tag: Tag, lpn: Lpn, now: u64) -> Result<ReadStart, Error> {
        self.check_host(lpn, now)?;
        let start = match self.loc(lpn)? {
            Loc::Unmapped => ReadStart::Unmapped,
            Loc::Lost => ReadStart::Lost,
            Loc::Buffer(s) => ReadStart::Buffered(s),
            Loc::Flash(pun) => {
                let page = self.g.page_of_unit(pun);
                let off = self.g.unit_offset(pun);
                if !self.can_join_read(page, off) && self.ops_available() == 0 {
                    return Err(Error::Busy);
                }
                let Some(s) = self.read_alloc()? else {
                    return Err(Error::Busy);
                };
                *self.slot_mut(s)? = SlotMeta {
                    lpn: tag.0,
                    aux: pun.0,
                    next: NIL16,
                    state: SlotState::Reading,
                };
                if !self.join_read(page, off, s)? {
                    let mut units = UnitMask::default();
                    units.insert(off);
                    let mut dst = [Slot(0); MAX_UNITS_PER_PAGE];
                    dst[0] = s;
                    self.emit_read(OpKind::HostRead, (page, units, dst), Origin::Host, 1, tag.0)?;
                }
                ReadStart::Issued
            }
        };
        self.stats.host_read_units = self.stats.host_read_units.wrapping_add(1);
        Ok(start)
    }

    /// Discards one mapping unit; later reads return zeros. `Err(Busy)`: the
    /// translation-page budget is full; retry after a completion.
    pub fn trim(&mut self, lpn: Lpn, now: u64) -> Result<(), Error> {
        self.check_host(lpn, now)?;
        if !self.map_may_touch(lpn)? {
            return Err(Error::Busy);
        }
        self.release_loc(lpn)?;
        self.set_loc(lpn, Loc::Unmapped)
    }

    /// Copies `len` mapping units from `src..src+len` to `dst..dst+len`,
    /// by remapping where the ownership hook can (copyless copy, see
    /// [`crate::tech::copyless::copy`]); the units it cannot serve come back
    /// as [`CopyStop::Physical`] for the driver to copy. Overlapping ranges
    /// (other than `src == dst`, a no-op) are refused.
    pub fn copy(&mut self, src: Lpn, dst: Lpn, len: u32, now: u64) -> Result<CopyProgress, Error> {
        let last = len.saturating_sub(1);
        let src_end = src.0.checked_add(last).or_rare(Error::LpnOutOfRange)?;
        let dst_end = dst.0.checked_add(last).or_rare(Error::LpnOutOfRange)?;
        self.check_host(src, now)?;
        if len == 0 {
            return Ok(CopyProgress {
                remapped: 0,
                stop: CopyStop::Done,
            });
        }
        if src_end >= self.cfg.logical_units || dst_end >= self.cfg.logical_units {
            return Err(rare(Error::LpnOutOfRange));
        }
        if src != dst && src.0 <= dst_end && dst.0 <= src_end {
            return Err(Error::BadRequest(&"copy ranges overlap"));
        }
        let mut done = 0u32;
        while done < len {
            let s = Lpn(src.0.wrapping_add(done));
            let d = Lpn(dst.0.wrapping_add(done));
            if let Some(stop) = H::copy_unit(self, s, d)? {
                if matches!(stop, CopyStop::Physical(_)) {
                    self.stats.copy_fallback_units = self.stats.copy_fallback_units.wrapping_add(1);
                }
                return Ok(CopyProgress {
                    remapped: done,
                    stop,
                });
            }
            done = done.wrapping_add(1);
            self.stats.copy_remapped_units = self.stats.copy_remapped_units.wrapping_add(1);
        }
        self.pump()?;
        Ok(CopyProgress {
            remapped: done,
            stop: CopyStop::Done,
        })
    }

    /// Asks for everything written so far to reach flash; a
    /// [`HostCompletion::Flush`] with `tag` follows. Partly filled pages are padded.
    pub fn flush(&mut self, tag: Tag, now: u64) -> Result<(), Error> {
        self.last_now = now;
        self.release_handed_out()?;
        if !self.is_ready() {
            return Err(Error::NotReady);
        }
        let target = self.admit_seq;
        if self.flushes.push((tag, target)).is_err() {
            return Err(Error::Busy);
        }
        self.force_flush = true;
        self.check_flushes()?;
        self.pump()
    }

    /// Next finished host command, if any.
    #[cfg_attr(not(target_arch = "arm"), inline)]
    pub fn poll_completion(&mut self) -> Option<HostCompletion> {
        self.release_handed_out().ok()?;
        if let Some(tag) = self.flush_done.pop_front() {
            return Some(HostCompletion::Flush { tag });
        }
        let i = self.done.pop(self.t.slots).ok().flatten()?;
        let m = self.t.slots.get_mut(usize::from(i))?;
        let status = if m.state == SlotState::ReadDone {
            ReadStatus::Ok
        } else {
            ReadStatus::MediaError
        };
        m.state = SlotState::ReadHandedOut;
        let tag = Tag(m.lpn);
        self.handed_out = i;
        Some(HostCompletion::Read {
            tag,
            slot: Slot(i),
            status,
        })
    }

    /// Hands the core the result of an operation it emitted. New work (GC,
    /// buffer flushes) starts once the driver has taken every queued
    /// operation ([`Ftl::poll_op`]): a completion that arrives while some
    /// still wait only records its result (and whatever its handler emits),
    /// so a driver working through a queue pays for one scheduling pass, not
    /// one per operation. A driver that takes every operation as soon as it
    /// is queued sees the core schedule after each completion.
    pub fn complete(&mut self, id: OpId, result: NandResult, now: u64) -> Result<(), Error> {
        self.complete_in(id, result, now)
    }

    /// [`Ftl::complete`]'s body, inlined on the host into
    /// [`crate::SyncDriver`], whose loop is little more than the call.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn complete_in(
        &mut self,
        id: OpId,
        result: NandResult,
        now: u64,
    ) -> Result<(), Error> {
        self.last_now = now;
        self.release_handed_out()?;
        // The entry, checked live, copied and freed under a new generation
        // onto the free stack through one lookup.
        let idx = (id.0 & 0xffff) as u16;
        let Some(slot) = self.t.ops.get_mut(usize::from(idx)) else {
            return Err(rare(Error::UnknownOp));
        };
        if slot.kind == OpKind::Free || u32::from(slot.generation) != id.0 >> 16 {
            return Err(rare(Error::UnknownOp));
        }
        let e = *slot;
        slot.kind = OpKind::Free;
        slot.generation = slot.generation.wrapping_add(1);
        crate::list::stack_push_entry(slot, &mut self.op_free, idx);
        self.op_free_count = self.op_free_count.wrapping_add(1);
        // Operations the driver has not taken yet (not ones this completion
        // emits): new work waits for them, and the pump below passes.
        self.defer_pump = self.outbound.len > 0;
        let r = match e.kind {
            OpKind::Free => Err(rare(Error::UnknownOp)),
            OpKind::Cut => self.cut_done(&e.cmd, result),
            OpKind::MapProgram | OpKind::MapMove | OpKind::MapSweep => {
                self.map_program_done(e.kind, &e.cmd, e.tag, e.count, result)
            }
            OpKind::MapErase => self.map_erase_done(&e.cmd, result),
            OpKind::MountHead
            | OpKind::MountRegion
            | OpKind::MountRecord
            | OpKind::MountReplay
            | OpKind::MountErase
            | OpKind::MountAnchor
            | OpKind::MountTable
            | OpKind::MountSeal
            | OpKind::MountSealErase => self.mount_done(e.kind, &e.cmd, e.tag, result),
            OpKind::HostRead => self.host_read_done(&e.cmd, result),
            OpKind::HostProgram => self.host_program_done(&e.cmd, e.count, result),
            OpKind::GcRead => self.gc_read_done(&e.cmd, e.count, result),
            OpKind::GcProgram => self.gc_program_done(&e.cmd, e.count, e.tag, result),
            OpKind::Erase => self.erase_done(&e.cmd, result),
            OpKind::FormatErase => self.format_erase_done(&e.cmd, result),
            OpKind::Migrate => H::migrate_done(self, &e.cmd, e.tag, result),
            OpKind::Probe => H::probe_done(self, &e.cmd, result),
        };
        if r.is_err() {
            // Whatever failed, the next pump runs.
            self.defer_pump = false;
            return r;
        }
        self.pump()
    }

    /// Runs the scheduling pass a completion put off because operations
    /// were still queued, if no pass has run since; does nothing otherwise.
    /// For a driver that wants the core to schedule after every completion
    /// anyway (a simulation keeping the order its recorded figures came
    /// from): it calls this after each [`Ftl::complete`].
    pub fn schedule(&mut self, now: u64) -> Result<(), Error> {
        if !self.pump_owed {
            return Ok(());
        }
        self.last_now = now;
        self.pump()
    }

    fn host_read_done(&mut self, cmd: &NandCmd, result: NandResult) -> Result<(), Error> {
        let NandCmd::Read {
            dst, units, page, ..
        } = cmd
        else {
            return Err(rare(Error::Corrupt(&"host read op is not a read")));
        };
        H::read_done(self, *page, &result)?;
        let ok = result.is_ok();
        for s in dst.iter().take(units.count() as usize) {
            if !ok {
                self.stats.host_read_errors = self.stats.host_read_errors.wrapping_add(1);
            }
            self.slot_mut(*s)?.state = if ok {
                SlotState::ReadDone
            } else {
                SlotState::ReadFailed
            };
            self.done.push_back(self.t.slots, s.0)?;
        }
        Ok(())
    }

    fn host_program_done(
        &mut self,
        cmd: &NandCmd,
        count: u8,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::Program { page, src, spare } = cmd else {
            return Err(rare(Error::Corrupt(&"host program op is not a program")));
        };
        let b = self.g.block_of(*page);
        {
            let m = self.blk_mut(b)?;
            m.pending = m.pending.saturating_sub(1);
        }
        self.map_release_page(spare);
        let failed = result.is_err();
        for (j, (s, lpn)) in src
            .iter()
            .zip(spare.lpns.iter())
            .take(usize::from(count))
            .enumerate()
        {
            let current = self.loc(*lpn)? == Loc::Buffer(*s);
            if current && !failed {
                let pun = self.g.pun(*page, j as u8);
                self.set_loc(*lpn, Loc::Flash(pun))?;
                self.validate_unit(pun, *lpn)?;
                H::programmed_unit(self, pun)?;
                self.wb_release(*s)?;
            } else if current {
                self.slot_mut(*s)?.state = SlotState::WbPending;
                self.pending_push_front(*s)?;
            } else {
                self.wb_release(*s)?;
            }
        }
        if failed {
            self.stats.program_failures = self.stats.program_failures.wrapping_add(1);
            self.retire_block(b)?;
        } else {
            H::page_programmed(self, *page)?;
        }
        self.block_settle(b)?;
        H::buffer_use(self);
        self.check_flushes()
    }

    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    fn format_erase_done(&mut self, cmd: &NandCmd, result: NandResult) -> Result<(), Error> {
        let NandCmd::Erase { block } = cmd else {
            return Err(rare(Error::Corrupt(&"format op is not an erase")));
        };
        self.format_pending = self.format_pending.saturating_sub(1);
        if result.is_ok() {
            let base = self.format_pe;
            let m = self.blk_mut(*block)?;
            m.pe = m.pe.max(base).wrapping_add(1);
            if self.anchor_index(*block).is_some() {
                // Kept for the checkpoint's anchor pages.
                self.blk_mut(*block)?.state = BlockState::Anchor;
                let p = self.g.plane_of(*block);
                let pl = self.pl_mut(p)?;
                pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
            } else {
                self.free_push(*block)?;
            }
        } else {
            if let Some(i) = self.anchor_index(*block) {
                if let Some(b) = self.anc.bad.get_mut(usize::from(i)) {
                    *b = true;
                }
            }
            self.blk_mut(*block)?.state = BlockState::Bad;
            self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
            let p = self.g.plane_of(*block);
            let pl = self.pl_mut(p)?;
            pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
        }
        if self.format_pending == 0 && self.format_cursor >= self.g.total_blocks() {
            self.phase = Phase::Running;
            self.region_fill()?;
            self.settle_if_short();
        }
        Ok(())
    }

    /// Queues a plane for GC / retirement / wear-levelling attention.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn attend(&mut self, p: PlaneId) -> Result<(), Error> {
        let tail = self.attn_tail;
        let pl = self.pl_mut(p)?;
        if pl.in_attn {
            return Ok(());
        }
        pl.in_attn = true;
        pl.attn_next = NIL;
        if tail == NIL {
            self.attn_head = p.0;
        } else {
            self.pl_mut(PlaneId(tail))?.attn_next = p.0;
        }
        self.attn_tail = p.0;
        Ok(())
    }

    fn attn_pop(&mut self) -> Result<Option<PlaneId>, Error> {
        if self.attn_head == NIL {
            return Ok(None);
        }
        let p = PlaneId(self.attn_head);
        let pl = self.pl_mut(p)?;
        let next = pl.attn_next;
        pl.in_attn = false;
        pl.attn_next = NIL;
        self.attn_head = next;
        if next == NIL {
            self.attn_tail = NIL;
        }
        Ok(Some(p))
    }

    /// One GC turn for each queued plane; planes re-queued during their
    /// turn wait for the next pump, so this always ends. Out of line on
    /// the host: inlined, it doubled the pass around it.
    #[cfg_attr(not(target_arch = "arm"), inline(never))]
    fn gc_turns(&mut self) -> Result<(), Error> {
        let mut turns = self.g.planes();
        // Without an operation entry a turn can start nothing, and a plane
        // whose turn used the last one may have stopped short: either stays
        // queued, since only its own completions would queue it again.
        while turns > 0 && self.ops_available() > 0 {
            turns = turns.saturating_sub(1);
            let Some(p) = self.attn_pop()? else { break };
            self.gc_step(p)?;
            if self.ops_available() == 0 {
                self.attend(p)?;
            }
        }
        Ok(())
    }

    /// Emits whatever work can start now: format erases, GC, buffer flushes.
    /// Passes once after a completion that found operations still queued
    /// (`defer_pump`, see [`Ftl::complete`]).
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn pump(&mut self) -> Result<(), Error> {
        if core::mem::take(&mut self.defer_pump) {
            self.pump_owed = true;
            return Ok(());
        }
        self.pump_now()
    }

    /// Emits format erases while operation entries last.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    fn pump_format(&mut self) -> Result<(), Error> {
        let total = self.g.total_blocks();
        while self.format_cursor < total && self.ops_available() > 0 {
            let block = BlockId(self.format_cursor);
            self.emit(
                OpKind::FormatErase,
                NandCmd::Erase { block },
                Origin::Meta,
                0,
                0,
            )?;
            self.format_cursor = self.format_cursor.wrapping_add(1);
            self.format_pending = self.format_pending.wrapping_add(1);
        }
        Ok(())
    }

    /// The part of a pass that runs while settling: writes the mapping back
    /// and keeps the metadata region until it holds the cut reserve again.
    /// Returns whether the rest of the pass runs (the core is running).
    #[cfg_attr(not(target_arch = "arm"), inline(never))]
    fn pump_settling(&mut self) -> Result<bool, Error> {
        self.map_write_back()?;
        self.region_maintain()?;
        if !self.cut_reserve_ok() {
            // GC would change the mapping the carried record describes;
            // once released, it runs, and host work still waits.
            if self.settle_release()? {
                self.gc_turns()?;
            }
            return Ok(false);
        }
        self.phase = Phase::Running;
        self.mnt.carried.clear();
        self.mnt.released = false;
        Ok(true)
    }

    /// The pass [`Self::pump`] runs when nothing put it off.
    fn pump_now(&mut self) -> Result<(), Error> {
        self.pump_owed = false;
        if self.phase == Phase::Dying {
            return self.pump_dying();
        }
        if self.mnt.step != crate::persist::mount::MountStep::Idle {
            return self.pump_mount();
        }
        if !self.phase.ready() {
            return self.pump_format();
        }
        if self.phase == Phase::Settling && !self.pump_settling()? {
            return Ok(());
        }
        // On the host, the common passes (no plane waiting, less than a page
        // buffered) are answered here, before the callee sets up its frame;
        // the firmware keeps the smaller code.
        if cfg!(target_arch = "arm") || self.attn_head != NIL {
            self.gc_turns()?;
        }
        if self.deferred_on() {
            self.deferred_step()?;
        }
        H::emit_due(self)?;
        H::host_page_done(self)?;
        if cfg!(target_arch = "arm") || self.flush_may_start() {
            self.flush_buffer()?;
        }
        Ok(())
    }

    /// Re-evaluates whether plane `p`'s host stream can take a page now.
    pub(crate) fn refresh_ready(&mut self, p: PlaneId) -> Result<(), Error> {
        let ready = self.host_ready_now(p)?;
        let pl = self.pl_mut(p)?;
        if ready != pl.host_ready {
            pl.host_ready = ready;
            // One ready plane more, or one fewer (this one was counted).
            self.ready_planes = self
                .ready_planes
                .wrapping_add(if ready { 1 } else { u32::MAX });
            let v = self.g.round_robin_position(p);
            round_robin::mark(&mut self.ready_bits, v, ready);
        }
        Ok(())
    }

    /// Whether plane `p`'s host stream can take a page now: it has room and
    /// an open host block, or may open one.
    fn host_ready_now(&self, p: PlaneId) -> Result<bool, Error> {
        Ok(self.has_room(p)? && (self.pl(p)?.host_active != NIL || self.host_may_open(p)?))
    }

    /// Whether the host stream of plane `p` may open a free block: never the
    /// last one, and only above the GC reserve counted by [`Self::gc_free`].
    pub(crate) fn host_may_open(&self, p: PlaneId) -> Result<bool, Error> {
        Ok(self.pl(p)?.free_count > 1 && self.gc_free(p)? > self.cfg.gc_reserve_blocks)
    }

    /// The space GC can write to in plane `p`, in blocks: free blocks plus
    /// the erased pages left in GC blocks the migration hook holds open
    /// (whole blocks' worth; rcFTL's lower quota levels). Those pages are GC
    /// destinations as good as a free block (GC puts off-chip data there
    /// when the plane is down to its reserve), so the GC trigger and reserve
    /// count them: otherwise every extra active block would shrink the spare
    /// space and raise the WAF.
    pub(crate) fn gc_free(&self, p: PlaneId) -> Result<u32, Error> {
        let ppb = self.g.pages_per_block.max(1);
        Ok(self
            .pl(p)?
            .free_count
            .wrapping_add(H::held_erased_pages(self, p)?.div_ceil(ppb)))
    }

    /// Whether plane `p` needs GC: its GC space ([`Self::gc_free`]) is at the
    /// trigger, or the host can no longer open a block there.
    pub(crate) fn gc_wanted(&self, p: PlaneId) -> Result<bool, Error> {
        Ok(self.gc_free(p)? <= self.cfg.gc_trigger_blocks || !self.host_may_open(p)?)
    }

    /// The GC active block of plane `p`, opening one if a free block is
    /// left: where relocated data goes unless the migration hook says
    /// otherwise.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn gc_target(&mut self, p: PlaneId) -> Result<Option<BlockId>, Error> {
        let b = self.pl(p)?.gc_active;
        if b != NIL {
            return Ok(Some(BlockId(b)));
        }
        let Some(b) = self.open_block_for(p, Stream::Gc, 0)? else {
            return Ok(None);
        };
        self.pl_mut(p)?.gc_active = b.0;
        self.note_gc_blocks(p)?;
        Ok(Some(b))
    }

    /// Records how many GC blocks plane `p` has open (the GC active block
    /// and those the migration hook holds) in `epm_active_blocks_max`.
    pub(crate) fn note_gc_blocks(&mut self, p: PlaneId) -> Result<(), Error> {
        let open = H::held_blocks(self, p)?.wrapping_add(u32::from(self.pl(p)?.gc_active != NIL));
        if open > self.stats.epm_active_blocks_max {
            self.stats.epm_active_blocks_max = open;
        }
        Ok(())
    }

    /// GC block `b` of plane `p` filled or went bad: it is no longer a
    /// destination, of the core or of the migration hook.
    pub(crate) fn gc_block_closed(&mut self, p: PlaneId, b: BlockId) -> Result<(), Error> {
        let pl = self.pl_mut(p)?;
        if pl.gc_active == b.0 {
            pl.gc_active = NIL;
        }
        H::gc_block_closed(self, p, b)?;
        self.refresh_ready(p)
    }

    /// Whether plane `p` may take more data. GC moves data only within a
    /// plane, so a plane must never fill with valid data: while its valid
    /// units stay below its good blocks minus the GC reserve and
    /// [`OPEN_MARGIN`] open blocks, some full block holds a dead unit whenever
    /// the plane is down to its reserve (or an open copyback level block can
    /// be emptied instead, see `gc::choose_victim`), so GC can always gain
    /// space. Host writes (and new copyback quota levels) go to other planes
    /// until overwrites free room here.
    pub(crate) fn has_room(&self, p: PlaneId) -> Result<bool, Error> {
        Ok(u64::from(self.pl(p)?.valid_units) < self.room_units(p)?)
    }

    /// The valid units plane `p` may hold (see [`Self::has_room`]).
    pub(crate) fn room_units(&self, p: PlaneId) -> Result<u64, Error> {
        let pl = self.pl(p)?;
        Ok(self
            .room_for(pl.lost_blocks)
            .saturating_sub(u64::from(pl.skipped_units)))
    }

    /// [`Self::room_units`] of a plane that lost `lost_blocks` blocks and
    /// has no wordlines skipped.
    #[inline]
    pub(crate) fn room_for(&self, lost_blocks: u32) -> u64 {
        // `room_blocks` less the lost ones is the blocks per plane less the
        // lost ones, the GC reserve and the open margin, each saturating.
        let blocks = self.room_blocks.saturating_sub(lost_blocks);
        u64::from(blocks).wrapping_mul(u64::from(self.data_units))
    }

    /// Pages of a block that hold data (all, unless the placement hook keeps
    /// the last for itself).
    #[inline]
    pub(crate) fn data_end(&self) -> u32 {
        self.data_pages
    }

    /// Data units a block holds: [`Self::data_end`] pages of units.
    pub(crate) fn data_units_per_block(&self) -> u32 {
        self.data_units
    }

    /// Finds a plane whose host stream can take a page now, opening a block if needed.
    fn host_target(&mut self) -> Result<Option<BlockId>, Error> {
        if self.ready_planes == 0 {
            return Ok(None);
        }
        H::host_target(self)
    }

    /// Whether [`Self::flush_buffer`] may find a page to program: a plane
    /// ready, an operation entry above the host's floor, and a page's worth
    /// of live units buffered (or any with a flush forced). Its tests
    /// without side effects, asked before the call, the cheapest first:
    /// under sustained GC most passes find a page buffered and no entry or
    /// plane for it.
    #[inline(always)]
    fn flush_may_start(&self) -> bool {
        self.host_may_emit()
            && (page_ready(
                self.pending_live(),
                u32::from(self.g.units_per_page),
                self.partial_page_ok(),
            ) || (self.wb_free == NIL16 && self.pending_dead > 0))
    }

    /// Whether a flush may program a page it cannot fill: a host flush
    /// asked for it, or the write buffer has no free slot. Trimmed units
    /// leave the buffer only as the flush passes them, so a full buffer
    /// of few live units must not wait for a full page or the start share.
    #[inline(always)]
    pub(crate) fn partial_page_ok(&self) -> bool {
        self.force_flush || self.wb_free == NIL16
    }

    /// Whether a host page may be emitted now: a plane is ready for it and
    /// more operation entries are free than the quarter kept for GC and
    /// metadata (the host's floor).
    #[inline(always)]
    fn host_may_emit(&self) -> bool {
        self.ready_planes != 0 && self.ops_available() > self.cfg.max_inflight / 4
    }

    /// Programs full pages from the write buffer (and a padded last page when flushing).
    fn flush_buffer(&mut self) -> Result<(), Error> {
        let upp = u32::from(self.g.units_per_page);
        loop {
            let live = self.pending_live();
            let partial = self.partial_page_ok();
            if live == 0 && self.wb_free == NIL16 && self.pending_dead > 0 {
                // Only trimmed units: passing them frees their slots.
                if let Some(s) = self.pending_pop_live()? {
                    self.pending_unpop(&[s])?;
                }
                return Ok(());
            }
            if !page_ready(live, upp, partial) {
                return Ok(());
            }
            // With the mapping persisted, flushing may wait until the buffer
            // is filled to its start share (Dawid: half), so LIDF has writes
            // to choose from.
            let start = self.cfg.persist.flush_start_permille;
            if self.ps.on && start > 0 && !partial {
                let need = u64::from(self.cfg.write_buffer_units)
                    .saturating_mul(u64::from(start.min(1000)))
                    / 1000;
                if u64::from(live) < need.max(u64::from(upp)) {
                    return Ok(());
                }
            }
            if !self.host_may_emit() {
                return Ok(());
            }
            let mut src = [Slot(0); MAX_UNITS_PER_PAGE];
            let mut spare = Spare {
                kind: PageKind::Data,
                ..Spare::default()
            };
            let mut n = 0u8;
            while u32::from(n) < upp {
                let Some(s) = self.pending_pop_live()? else {
                    break;
                };
                let m = self.slot_mut(s)?;
                m.state = SlotState::WbProgramming;
                let lpn = Lpn(m.lpn);
                let i = in_page(usize::from(n));
                if let (Some(d), Some(l)) = (src.get_mut(i), spare.lpns.get_mut(i)) {
                    *d = s;
                    *l = lpn;
                }
                spare.units.insert(n);
                n = n.wrapping_add(1);
            }
            if n == 0 {
                return Ok(());
            }
            // The page's translation pages must fit the budget; a page whose
            // TPs are all dirty or reserved already costs nothing and goes
            // even when the budget is full.
            let units = src
                .get(..usize::from(n))
                .or_rare(Error::Corrupt(&"host page has more units than slots"))?;
            if !self.map_room_for(&spare)? {
                self.pending_unpop(units)?;
                return Ok(());
            }
            let Some(b) = self.host_target()? else {
                self.pending_unpop(units)?;
                return Ok(());
            };
            self.stats.pad_units = self
                .stats
                .pad_units
                .wrapping_add(u64::from(upp.saturating_sub(u32::from(n))));
            let (page, pe) = self.claim_page(b, Stream::Host)?;
            spare.seq = self.next_seq();
            self.map_reserve_page(&spare);
            self.emit_in(
                Some((b, pe)),
                OpKind::HostProgram,
                NandCmd::Program { page, src, spare },
                Origin::Host,
                n,
                0,
            )?;
            H::emit_due(self)?;
            H::host_page_done(self)?;
        }
    }

    /// Claims the next page of an open block and closes the stream's slot
    /// when the block fills. Returns the page and the block's erase count,
    /// which the page's spare area carries ([`Self::emit_in`]). The block's
    /// entry is read, then written, with no store between, so on the host
    /// one range test serves both.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn claim_page(
        &mut self,
        b: BlockId,
        stream: Stream,
    ) -> Result<(crate::medium::addr::Ppn, u32), Error> {
        let end = self.data_end();
        let page = {
            let m = self.blk(b)?;
            if m.state != BlockState::Open || u32::from(m.next_page) >= end {
                return Err(rare(Error::Corrupt(
                    &"programming a block that is not open",
                )));
            }
            u32::from(m.next_page)
        };
        let next = u16::try_from(H::usable_page(self, b, page.wrapping_add(1)))
            .map_err(|_| rare(Error::Corrupt(&"next page beyond a block")))?;
        let pe = {
            let m = self.blk_mut(b)?;
            m.pending = m.pending.wrapping_add(1);
            m.next_page = next;
            m.pe
        };
        let next = u32::from(next);
        let p = self.g.plane_of(b);
        // The placement hook may keep a filled block as its plane's host
        // block for a while (a superblock member waiting for its list page).
        let keep = next >= end && H::data_pages_claimed(self, b, stream)?;
        if next >= end && !keep {
            let pl = self.pl_mut(p)?;
            match stream {
                Stream::Host if pl.host_active == b.0 => pl.host_active = NIL,
                Stream::Host => {}
                Stream::Gc => self.gc_block_closed(p, b)?,
            }
            self.refresh_ready(p)?;
        } else if stream == Stream::Gc && H::holds(self, p, b)? {
            // A page of a held GC block fewer: `gc_free` may drop.
            self.refresh_ready(p)?;
            if self.gc_wanted(p)? {
                self.attend(p)?;
            }
        }
        Ok((self.g.ppn(b, page), pe))
    }

    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Completes flushes whose data has all left the write buffer.
    fn check_flushes(&mut self) -> Result<(), Error> {
        let w = self.cfg.write_buffer_units as usize;
        let mut i = 0;
        while i < self.flushes.len() {
            let Some(&(tag, target)) = self.flushes.get(i) else {
                break;
            };
            // A unit admitted at or before the flush (sequence numbers wrap).
            let blocked = self.t.slots.iter().take(w).any(|m| {
                matches!(m.state, SlotState::WbPending | SlotState::WbProgramming)
                    && target.wrapping_sub(m.aux) < 0x8000_0000
            });
            if blocked {
                i = i.wrapping_add(1);
                continue;
            }
            self.flushes.swap_remove(i);
            if self.flush_done.push_back(tag).is_err() {
                return Err(rare(Error::Corrupt(&"flush completion queue full")));
            }
        }
        if self.flushes.is_empty() {
            self.force_flush = false;
        }
        Ok(())
    }

    /// Checks every cross-table invariant (slow: for tests and debugging).
    ///
    /// L2P and P2L agree both ways, every block's valid count equals its live
    /// units, and every full block is on the bucket list of its valid count.
    pub fn audit(&self) -> Result<(), Error> {
        let upb = self.g.units_per_block();
        let total_units = self.g.total_units();
        for (l, w) in self
            .t
            .l2p
            .iter()
            .take(self.cfg.logical_units as usize)
            .enumerate()
        {
            if let Loc::Flash(p) = Loc::decode(*w) {
                if p.0 >= total_units {
                    return Err(rare(Error::Corrupt(&"l2p points outside the array")));
                }
                if !H::audit(self, p, Lpn(l as u32))? {
                    return Err(rare(Error::Corrupt(&"l2p and p2l disagree")));
                }
            }
        }
        // Per plane: each block's valid count against its live units, the
        // space counters, the host-ready flag, its bit and the valid-count
        // buckets.
        let mut ready: u32 = 0;
        for p in 0..self.g.planes() {
            let (mut valid, mut lost) = (0u32, 0u32);
            let first = p.saturating_mul(self.g.blocks_per_plane);
            for b in first..first.wrapping_add(self.g.blocks_per_plane) {
                let mut live = 0u32;
                for u in 0..upb {
                    let pun = crate::medium::addr::Pun(b.wrapping_mul(upb).wrapping_add(u));
                    if let Some(l) = self.p2l(pun)? {
                        if self.loc(l)? != Loc::Flash(pun) {
                            return Err(rare(Error::Corrupt(&"p2l entry not referenced by l2p")));
                        }
                        live = live.wrapping_add(1);
                    }
                }
                let m = self.blk(BlockId(b))?;
                // Region blocks count live translation pages, not units.
                let counted = if m.state == BlockState::Meta {
                    0
                } else {
                    u32::from(m.valid)
                };
                if counted != live {
                    return Err(rare(Error::Corrupt(&"valid count differs from live units")));
                }
                valid = valid.wrapping_add(counted);
                if matches!(
                    m.state,
                    BlockState::Bad | BlockState::Retiring | BlockState::Meta | BlockState::Anchor
                ) {
                    lost = lost.wrapping_add(1);
                }
            }
            let pl = self.pl(PlaneId(p))?;
            if (valid, lost) != (pl.valid_units, pl.lost_blocks) {
                return Err(rare(Error::Corrupt(&"plane space counters are off")));
            }
            let want = self.host_ready_now(PlaneId(p))?;
            if pl.host_ready != want {
                return Err(rare(Error::Corrupt(&"plane host-ready flag is stale")));
            }
            let v = self.g.round_robin_position(PlaneId(p));
            if round_robin::bit(&self.ready_bits, v).is_some_and(|b| b != want) {
                return Err(rare(Error::Corrupt(&"host-ready bitmap is stale")));
            }
            ready = ready.wrapping_add(u32::from(want));
            for v in 0..=upb {
                let mut cur = self.bucket_head(PlaneId(p), v as u16)?;
                while cur != NIL {
                    let m = self.blk(BlockId(cur))?;
                    let key = u32::from(self.bucket_key(BlockId(cur))?);
                    if m.state != BlockState::Full || key != v {
                        return Err(rare(Error::Corrupt(&"bucket list holds a wrong block")));
                    }
                    cur = m.next;
                }
            }
        }
        if ready != self.ready_planes {
            return Err(rare(Error::Corrupt(&"host-ready plane count is off")));
        }
        Ok(())
    }
}

/// Whether `queued` units make a page to program (`upp` units a page):
/// a full page, or any when `partial` (a flush or a drain) allows a
/// padded one. The first test of both page builders, the write buffer's
/// and GC's, and of the host's checks before calling them.
#[inline(always)]
pub(crate) fn page_ready(queued: u32, upp: u32, partial: bool) -> bool {
    queued != 0 && (queued >= upp || partial)
}

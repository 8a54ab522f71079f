//! The in-flight operation table and the outbound queue the driver drains.
//!
//! An [`OpId`] is `generation << 16 | index`: a completion for an entry that was
//! already completed (or never issued) is detected and refused.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{stack_push, OpEntry, OpKind, NIL16};
use crate::ftl::Ftl;
use crate::list::stack_pop_entry;
use crate::medium::addr::{BlockId, Ppn, UnitMask, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{NandCmd, NandOp, OpId, Origin, Slot};

impl<H: Hooks> Ftl<'_, H> {
    /// Fills the free stack of operation entries.
    pub(crate) fn init_ops(&mut self) -> Result<(), Error> {
        self.op_free = NIL16;
        let n = self.cfg.max_inflight;
        let mut i = n;
        while i > 0 {
            i = i.saturating_sub(1);
            let idx =
                u16::try_from(i).map_err(|_| Error::InvalidConfig(&"max_inflight above 65535"))?;
            let e = self
                .t
                .ops
                .get_mut(usize::from(idx))
                .or_rare(Error::TableTooSmall(&"ops"))?;
            *e = OpEntry {
                generation: e.generation,
                ..OpEntry::default()
            };
            stack_push(self.t.ops, &mut self.op_free, idx)?;
        }
        self.op_free_count = n;
        Ok(())
    }

    /// Operation entries available.
    #[inline]
    pub(crate) fn ops_available(&self) -> u32 {
        self.op_free_count
    }

    /// Records an operation and queues it for the driver.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn emit(
        &mut self,
        kind: OpKind,
        cmd: NandCmd,
        origin: Origin,
        count: u8,
        tag: u32,
    ) -> Result<(), Error> {
        let block = match &cmd {
            NandCmd::Program { page, .. }
            | NandCmd::ProgramMeta { page, .. }
            | NandCmd::Copyback { dst: page, .. } => {
                let b = self.g.block_of(*page);
                Some((b, self.blk(b)?.pe))
            }
            _ => None,
        };
        self.emit_in(block, kind, cmd, origin, count, tag)
    }

    /// [`Self::emit`] of an operation whose programmed page's block and
    /// that block's erase count the caller has at hand (`block`; `None`
    /// for one that programs nothing): the spare area takes them without
    /// the block being found from the page, or looked up, again.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn emit_in(
        &mut self,
        block: Option<(BlockId, u32)>,
        kind: OpKind,
        cmd: NandCmd,
        origin: Origin,
        count: u8,
        tag: u32,
    ) -> Result<(), Error> {
        let mut cmd = cmd;
        if let (
            Some((b, pe)),
            NandCmd::Program { spare, .. }
            | NandCmd::ProgramMeta { spare, .. }
            | NandCmd::Copyback { spare, .. },
        ) = (block, &mut cmd)
        {
            spare.erase_count = pe;
            spare.tag = H::block_tag(self, b);
        }
        self.queue_op(|e| {
            e.kind = kind;
            e.cmd = cmd;
            e.origin = origin;
            e.count = count;
            e.tag = tag;
        })?;
        self.count_emitted(&cmd, origin, count);
        Ok(())
    }

    /// Takes a free operation entry, has `fill` write it and queues it for
    /// the driver ([`Error::Busy`] when no entry is free).
    ///
    /// The entry is looked up once: popped off the free stack, filled and
    /// linked as the outbound queue's new tail through the same reference.
    #[inline(always)]
    fn queue_op(&mut self, fill: impl FnOnce(&mut OpEntry)) -> Result<(), Error> {
        let Some((i, e)) = stack_pop_entry(self.t.ops, &mut self.op_free, &"stack head")? else {
            return Err(Error::Busy);
        };
        self.op_free_count = self.op_free_count.saturating_sub(1);
        fill(e);
        e.next = NIL16;
        // `Fifo::push_back_unlinked`, spelled out: through the call the
        // host's relocation path came out 121 instructions per host write
        // longer (harsh shape).
        let q = &mut self.outbound;
        if q.tail == NIL16 {
            q.head = i;
        } else {
            self.t
                .ops
                .get_mut(usize::from(q.tail))
                .or_rare(Error::Corrupt(&"fifo tail"))?
                .next = i;
        }
        q.tail = i;
        q.len = q.len.wrapping_add(1);
        Ok(())
    }

    /// [`Self::emit`] of a read (no erase count or tag to stamp). On the
    /// host the command is written into its entry where it sits: a move of
    /// a whole command copies the largest variant's bytes, five times a
    /// read's.
    #[inline(always)]
    pub(crate) fn emit_read(
        &mut self,
        kind: OpKind,
        (page, units, dst): (Ppn, UnitMask, [Slot; MAX_UNITS_PER_PAGE]),
        origin: Origin,
        count: u8,
        tag: u32,
    ) -> Result<(), Error> {
        if cfg!(target_arch = "arm") {
            return self.emit(kind, NandCmd::Read { page, units, dst }, origin, count, tag);
        }
        self.queue_op(|e| {
            e.kind = kind;
            e.cmd = NandCmd::Read { page, units, dst };
            e.origin = origin;
            e.count = count;
            e.tag = tag;
        })?;
        self.stats.nand_reads = self.stats.nand_reads.wrapping_add(1);
        Ok(())
    }

    /// Next operation for the driver, oldest first.
    pub fn poll_op(&mut self) -> Option<NandOp> {
        self.poll_op_view().map(|v| NandOp {
            id: v.id,
            cmd: *v.cmd,
            origin: v.origin,
        })
    }

    /// [`Self::poll_op`] for a driver that executes the operation before
    /// it completes anything: the command is lent from the operation table
    /// instead of copied out (it stays there until [`Ftl::complete`]), with
    /// the metadata buffer it names ([`Ftl::meta_for`]).
    pub fn poll_op_view(&mut self) -> Option<OpView<'_>> {
        // The outbound queue's head, popped through the entry it names.
        let i = self.outbound.head;
        if i == NIL16 {
            return None;
        }
        let e = self.t.ops.get(usize::from(i))?;
        self.outbound.pop_linked(e.next);
        Some(OpView {
            id: OpId((u32::from(e.generation) << 16) | u32::from(i)),
            cmd: &e.cmd,
            origin: e.origin,
            meta: self.ps.buf_for(&e.cmd),
        })
    }

    /// The command and origin of operation `id`, emitted and not yet
    /// completed: it stays in the operation table until [`Ftl::complete`],
    /// so a driver that schedules an operation later than it takes it reads
    /// it here instead of keeping a copy. `None` for an id that names no
    /// operation in flight.
    #[inline]
    pub fn op_in_flight(&self, id: OpId) -> Option<(&NandCmd, Origin)> {
        let i = self.op_index(id).ok()?;
        let e = self.t.ops.get(usize::from(i))?;
        Some((&e.cmd, e.origin))
    }

    /// Whether a polling pass has anything to do: an operation for
    /// [`Ftl::poll_op`], a host completion for [`Ftl::poll_completion`], or
    /// a read slot handed out that the next poll releases. A driver may
    /// skip the pass when this is false; the core is the same either way.
    #[inline]
    pub fn has_output(&self) -> bool {
        self.outbound.len > 0
            || self.done.len > 0
            || !self.flush_done.is_empty()
            || self.handed_out != crate::list::NIL16
    }

    /// Operations emitted but not yet taken by [`Ftl::poll_op`].
    pub fn ops_queued(&self) -> usize {
        usize::from(self.outbound.len)
    }

    /// Whether a host read of unit `off` of `page` can ride on the newest queued
    /// operation: a host read of the same page, not yet taken by the driver.
    pub(crate) fn can_join_read(&self, page: crate::medium::addr::Ppn, off: u8) -> bool {
        let Some(e) = self.t.ops.get(usize::from(self.outbound.tail)) else {
            return false;
        };
        matches!(e.cmd, NandCmd::Read { page: p, units, .. }
            if e.kind == OpKind::HostRead && p == page && !units.contains(off))
    }

    /// Adds unit `off` of `page`, read into slot `s`, to the newest queued host
    /// read of that page (keeping slots in mask order). Returns false when there
    /// is no such read, so the caller emits a new one.
    pub(crate) fn join_read(
        &mut self,
        page: crate::medium::addr::Ppn,
        off: u8,
        s: Slot,
    ) -> Result<bool, Error> {
        if !self.can_join_read(page, off) {
            return Ok(false);
        }
        let e = self
            .t
            .ops
            .get_mut(usize::from(self.outbound.tail))
            .or_rare(Error::Corrupt(&"outbound tail"))?;
        let NandCmd::Read { units, dst, .. } = &mut e.cmd else {
            return Ok(false);
        };
        // Position of `off` among the set bits: the slots follow mask order.
        let below = UnitMask(units.0 & ((1u8 << off).wrapping_sub(1))).count() as usize;
        let n = units.count() as usize;
        let mut i = n;
        while i > below {
            let prev = *dst
                .get(i.saturating_sub(1))
                .or_rare(Error::Corrupt(&"read dst"))?;
            *dst.get_mut(i).or_rare(Error::Corrupt(&"read dst"))? = prev;
            i = i.saturating_sub(1);
        }
        *dst.get_mut(below).or_rare(Error::Corrupt(&"read dst"))? = s;
        units.insert(off);
        e.count = e.count.wrapping_add(1);
        Ok(true)
    }

    /// The table index of in-flight operation `id`: refuses an id whose
    /// entry was already completed (or never issued).
    #[inline(always)]
    pub(crate) fn op_index(&self, id: OpId) -> Result<u16, Error> {
        let idx = (id.0 & 0xffff) as u16;
        let generation = (id.0 >> 16) as u16;
        match self.t.ops.get(usize::from(idx)) {
            Some(e) if e.kind != OpKind::Free && e.generation == generation => Ok(idx),
            _ => Err(rare(Error::UnknownOp)),
        }
    }

    /// Counts an emitted operation; `count` is the units a program carries
    /// (every emitter passes its spare area's unit count).
    fn count_emitted(&mut self, cmd: &NandCmd, origin: Origin, count: u8) {
        let s = &mut self.stats;
        match cmd {
            NandCmd::Read { .. } | NandCmd::ReadMeta { .. } => {
                s.nand_reads = s.nand_reads.wrapping_add(1)
            }
            NandCmd::ProgramMeta { .. } => s.nand_programs = s.nand_programs.wrapping_add(1),
            NandCmd::Program { .. } => {
                s.nand_programs = s.nand_programs.wrapping_add(1);
                let n = u64::from(count);
                match origin {
                    Origin::Host => s.host_program_units = s.host_program_units.wrapping_add(n),
                    Origin::Meta => {}
                    _ => {
                        s.gc_program_units = s.gc_program_units.wrapping_add(n);
                        s.offchip_copy_pages = s.offchip_copy_pages.wrapping_add(1);
                    }
                }
            }
            NandCmd::Erase { .. } | NandCmd::GuardedErase { .. } => {
                s.nand_erases = s.nand_erases.wrapping_add(1)
            }
            NandCmd::Copyback { spare, .. } => {
                s.nand_copybacks = s.nand_copybacks.wrapping_add(1);
                let n = u64::from(spare.units.count());
                s.gc_program_units = s.gc_program_units.wrapping_add(n);
            }
        }
    }
}

/// The next operation, lent by [`Ftl::poll_op_view`].
pub struct OpView<'f> {
    /// Identifier to pass back with the result.
    pub id: OpId,
    /// The command, in the operation table.
    pub cmd: &'f NandCmd,
    /// Why it was issued.
    pub origin: Origin,
    /// The metadata buffer the command names; empty for data operations.
    pub meta: &'f mut [u8],
}

impl<H: Hooks> Ftl<'_, H> {
    /// Look-ahead hint, one completion earlier than
    /// [`Ftl::prefetch_completion`]: start fetching the table entry of `id`,
    /// so that hint finds it in the cache. Never changes behaviour.
    #[inline]
    pub fn prefetch_op(&self, id: OpId) {
        crate::medium::hint::prefetch_entry(self.t.ops, usize::from((id.0 & 0xffff) as u16));
    }

    /// Look-ahead hint: the driver will complete `id` next; start fetching the
    /// table entries its completion will check. Never changes behaviour.
    pub fn prefetch_completion(&self, id: OpId) {
        let Some(e) = self.t.ops.get(usize::from((id.0 & 0xffff) as u16)) else {
            return;
        };
        match (&e.kind, &e.cmd) {
            (OpKind::HostProgram | OpKind::GcProgram, NandCmd::Program { spare, .. }) => {
                for l in spare.lpns.iter().take(usize::from(e.count)) {
                    self.prefetch_l2p(*l);
                }
            }
            (OpKind::GcRead, NandCmd::Read { dst, .. }) => {
                for s in dst.iter().take(usize::from(e.count)) {
                    if let Some(m) = self.t.slots.get(usize::from(s.0)) {
                        self.prefetch_p2l(crate::medium::addr::Pun(m.aux));
                    }
                }
            }
            _ => {}
        }
    }
}

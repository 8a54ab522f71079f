//! Garbage collection, per plane: greedy victim selection, relocation through
//! per-plane GC slots into the plane's GC active block, and erase.
//!
//! Data path of one GC migration: the victim's valid units are read into GC
//! slots (`GcRead`), queued in the plane's holding FIFO, packed into pages of
//! the GC active block (`GcProgram`); on completion each unit is remapped only
//! if the host has not overwritten it meanwhile. Once the victim holds no
//! valid unit it is erased and returns to the free list.
//!
//! Forward progress: hosts may not take a plane's last free block nor dip
//! below `gc_reserve_blocks` of GC space (`Ftl::gc_free`); GC slots are
//! reserved per plane, so GC never waits for the host; a plane never fills
//! with valid data (`Ftl::has_room`). A victim holds at least a page's worth
//! of dead units: GC pads the last page it writes for a victim, so a fuller
//! block would cost a whole block of pages and GC would erase without
//! gaining. When no block qualifies, GC waits and host writes go to planes
//! that can take them until overwrites free units here.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::hooks::MigrateStep;
use crate::ftl::tables::{BlockState, OpKind, PlaneState, SlotState, NIL, NIL16};
use crate::ftl::{page_ready, Ftl, Stream};
use crate::list::stack_pop_entry;
use crate::map::loc::p2l_owner;
use crate::medium::addr::{in_page, BlockId, Lpn, PlaneId, Pun, UnitMask, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{NandCmd, NandResult, Origin, PageKind, Slot, Spare};

/// Victim erases in flight over all planes at most (a share per plane).
const ERASES_IN_FLIGHT: u32 = 512;

impl<H: Hooks> Ftl<'_, H> {
    /// Does whatever GC work plane `p` can start now.
    pub(crate) fn gc_step(&mut self, p: PlaneId) -> Result<(), Error> {
        let ppb = self.g.pages_per_block;
        loop {
            if self.pl(p)?.victim == NIL && !self.choose_victim(p)? {
                // Nothing to reclaim, but relocated data may still wait for a page.
                return self.gc_program_holding(p, true).map(|_| ());
            }
            let victim = BlockId(self.pl(p)?.victim);
            self.gc_issue_reads(p, victim)?;
            // `PlaneState::victim_read_out`, written out: through the call,
            // the firmware's inliner lays this loop out 400 B larger.
            let done = {
                let pl = self.pl(p)?;
                pl.victim_cursor >= ppb && pl.gc_reads == 0
            };
            if cfg!(target_arch = "arm") || self.holding_may_program(p, done)? {
                self.gc_program_holding(p, done)?;
            }
            if !(done && self.blk(victim)?.valid == 0) {
                return Ok(());
            }
            if !self.finish_victim(p, victim)? {
                return Ok(());
            }
        }
    }

    /// Picks the next victim of plane `p`: retiring blocks first, then greedy GC
    /// when free blocks run low, then a wear-levelling candidate.
    #[cfg_attr(not(target_arch = "arm"), inline(never))]
    fn choose_victim(&mut self, p: PlaneId) -> Result<bool, Error> {
        let (victim, origin) = if let Some(b) = self.take_retiring(p)? {
            (b, Origin::Retire)
        } else if let Some(b) = self.take_wl_candidate(p)? {
            (b, Origin::WearLevel)
        } else if self.gc_wanted(p)? {
            match self.greedy_victim(p)? {
                Some(b) => (b, Origin::Gc),
                None => match H::reclaim_open(self, p)? {
                    Some(b) => (b, Origin::Gc),
                    None => return Ok(false),
                },
            }
        } else {
            return Ok(false);
        };
        if origin != Origin::Retire {
            if self.blk(victim)?.state == BlockState::Full {
                self.bucket_remove(victim)?;
            }
            self.blk_mut(victim)?.state = BlockState::Victim;
        }
        H::victim_chosen(self, p);
        let pl = self.pl_mut(p)?;
        pl.victim = victim.0;
        pl.victim_origin = origin;
        pl.victim_cursor = 0;
        Ok(true)
    }

    /// Takes plane `p`'s wear-levelling candidate when the plane has GC
    /// space above its reserve to move it (also while GC is wanted, or
    /// sustained writes would starve levelling and pin young blocks).
    fn take_wl_candidate(&mut self, p: PlaneId) -> Result<Option<BlockId>, Error> {
        let c = self.pl(p)?.wl_candidate;
        if c == NIL || self.gc_free(p)? <= self.cfg.gc_reserve_blocks {
            return Ok(None);
        }
        self.pl_mut(p)?.wl_candidate = NIL;
        Ok((self.blk(BlockId(c))?.state == BlockState::Full).then_some(BlockId(c)))
    }

    /// Issues reads of the victim's valid units while GC slots and op entries last.
    fn gc_issue_reads(&mut self, p: PlaneId, victim: BlockId) -> Result<(), Error> {
        let ppb = self.g.pages_per_block;
        let upp = self.g.units_per_page;
        // Only this loop moves the cursor while it runs: keep it in a local
        // and store each step.
        let (origin, mut cursor, mut free_slots, in_flight, held) = {
            let pl = self.pl(p)?;
            (
                pl.victim_origin,
                pl.victim_cursor,
                u32::from(pl.gc_free_count),
                pl.gc_reads,
                pl.hold.len,
            )
        };
        if !cfg!(target_arch = "arm")
            && self.reads_blocked(p, free_slots)
            && self.scan_idle(victim, in_flight, held)?
        {
            return Ok(());
        }
        while cursor < ppb {
            let page = self.g.ppn(victim, cursor);
            // The scan reads the victim's P2L entries in order: fetch the
            // line 16 entries (64 B) ahead.
            self.prefetch_p2l(Pun(self.g.pun(page, 0).0.wrapping_add(16)));
            let first = self.g.pun(page, 0);
            let mut units = UnitMask::default();
            let mut lpns = [Lpn(0); MAX_UNITS_PER_PAGE];
            for (off, d) in (0..upp).zip(lpns.iter_mut()) {
                if let Some(l) = self.p2l(Pun(first.0.wrapping_add(u32::from(off))))? {
                    units.insert(off);
                    *d = l;
                }
            }
            let need = units.count();
            if need > 0 {
                if self.ops_available() == 0 {
                    return Ok(());
                }
                match H::try_migrate(self, p, victim, page, units)? {
                    MigrateStep::Issued => {
                        cursor = cursor.wrapping_add(1);
                        self.pl_mut(p)?.victim_cursor = cursor;
                        continue;
                    }
                    MigrateStep::Wait => return Ok(()),
                    MigrateStep::OffChip => {}
                }
                if free_slots < need {
                    return Ok(());
                }
                cursor = cursor.wrapping_add(1);
                let dst = self.gc_take_slots(p, first, (units, &lpns), cursor)?;
                free_slots = free_slots.saturating_sub(need);
                self.emit_read(OpKind::GcRead, (page, units, dst), origin, need as u8, 0)?;
                self.stats.gc_read_units = self.stats.gc_read_units.wrapping_add(u64::from(need));
                // With a read now in flight, the rest of this scan is the
                // pass `scan_idle` skips: stop after this page, before the
                // next one's P2L lookup and hook call. The firmware scans
                // on (smaller code).
                if !cfg!(target_arch = "arm") && self.reads_blocked(p, free_slots) {
                    break;
                }
                continue;
            }
            cursor = cursor.wrapping_add(1);
            self.pl_mut(p)?.victim_cursor = cursor;
        }
        Ok(())
    }

    /// Takes plane `p`'s GC slots for the live units `units` (owners
    /// `lpns`, by offset) of the victim page whose first unit is `first`,
    /// marks them reading, and counts the read about to be issued, with
    /// the scan's cursor moved on to `cursor`: the plane and each slot are
    /// looked up once. The caller saw enough free slots. Returns the slots
    /// in unit order, as the read's destinations.
    #[inline(always)]
    fn gc_take_slots(
        &mut self,
        p: PlaneId,
        first: Pun,
        (units, lpns): (UnitMask, &[Lpn; MAX_UNITS_PER_PAGE]),
        cursor: u32,
    ) -> Result<[Slot; MAX_UNITS_PER_PAGE], Error> {
        let upp = self.g.units_per_page;
        let t = &mut self.t;
        let pl = t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        let mut dst = [Slot(0); MAX_UNITS_PER_PAGE];
        let mut j = 0usize;
        for off in 0..upp {
            if !units.contains(off) {
                continue;
            }
            let lpn = *lpns
                .get(in_page(usize::from(off)))
                .or_rare(Error::Corrupt(&"gc unit vanished"))?;
            // Popped off the plane's free stack, and filled, through one
            // lookup of the slot.
            let (i, m) = stack_pop_entry(t.slots, &mut pl.gc_free_head, &"gc slot count")?
                .or_rare(Error::Corrupt(&"gc slot count"))?;
            pl.gc_free_count = pl.gc_free_count.saturating_sub(1);
            m.lpn = lpn.0;
            m.aux = first.0.wrapping_add(u32::from(off));
            m.state = SlotState::GcReading;
            if let Some(d) = dst.get_mut(in_page(j)) {
                *d = Slot(i);
            }
            j = j.wrapping_add(1);
        }
        pl.gc_reads = pl.gc_reads.wrapping_add(1);
        pl.victim_cursor = cursor;
        Ok(dst)
    }

    /// Whether a pass of [`Self::gc_issue_reads`] over `victim`, when its
    /// plane's reads are blocked ([`Self::reads_blocked`]), can change
    /// nothing but the cursor. Its scan would stop at the first live page:
    /// there is no slot for it, and the hook moves nothing in-plane.
    /// Passing the dead pages before that one may take the cursor to the
    /// victim's end, which finishes nothing while the victim still holds
    /// valid units and the drain that follows would program no partial
    /// page (a read is still in flight, or the held units fill whole
    /// pages). The next pass that has a slot, or finds the victim empty,
    /// passes the same dead pages (a victim's dead pages stay dead). What
    /// skipping moves is only when a victim whose remaining pages are all
    /// dead is found read out: the completion of its last read programs
    /// what it queued at once ([`Self::turn_only_programs`]) and the turn
    /// after that program finishes the victim, where the scanned cursor
    /// would have had the read's own turn do both. The firmware scans
    /// instead (smaller code).
    ///
    /// `reads` and `held` are the plane's GC reads in flight and units held.
    #[inline(always)]
    fn scan_idle(&self, victim: BlockId, reads: u16, held: u16) -> Result<bool, Error> {
        let upp = u16::from(self.g.units_per_page);
        let no_drain = reads > 0 || upp == 1 || held.checked_rem(upp) == Some(0);
        Ok(no_drain && self.blk(victim)?.valid > 0)
    }

    /// Whether plane `p` can issue no GC read now: none of its GC slots is
    /// free (`free` is their count) and the migration hook has no in-plane
    /// move to issue instead.
    #[inline(always)]
    fn reads_blocked(&self, p: PlaneId, free: u32) -> bool {
        free == 0 && !H::in_plane(self, p)
    }

    /// Whether [`Self::gc_program_holding`] may find a page to program for
    /// plane `p`: its first test, asked before the call on the host.
    #[inline(always)]
    fn holding_may_program(&self, p: PlaneId, drain: bool) -> Result<bool, Error> {
        let held = u32::from(self.pl(p)?.hold.len);
        Ok(page_ready(held, u32::from(self.g.units_per_page), drain))
    }

    /// Programs relocated units into the plane's GC active block, a page at a time;
    /// with `drain`, a last partial page too. Returns the units left held.
    fn gc_program_holding(&mut self, p: PlaneId, drain: bool) -> Result<u16, Error> {
        let upp = u16::from(self.g.units_per_page);
        loop {
            let (held, origin) = {
                let pl = self.pl(p)?;
                (pl.hold.len, pl.victim_origin)
            };
            if !page_ready(u32::from(held), u32::from(upp), drain) || self.ops_available() == 0 {
                return Ok(held);
            }
            let budgeted = !self.deferred_on();
            if budgeted && !self.map_room_for_page()? {
                return Ok(held);
            }
            let Some(BlockId(dest)) = H::offchip_target(self, p)? else {
                return Ok(held);
            };
            let mut src = [Slot(0); MAX_UNITS_PER_PAGE];
            let mut spare = Spare {
                kind: PageKind::Data,
                ..Spare::default()
            };
            let mut n = 0u8;
            // Translation pages the other tags of shared units will dirty
            // (partial protection only, see `copy.rs`).
            let mut extra = 0u32;
            let shares = budgeted && H::shares(self);
            if shares || cfg!(target_arch = "arm") {
                // Only a hook that shares units has translation pages
                // beyond the data page's to count: unit by unit, while
                // they fit. (The firmware keeps this one loop.)
                while u16::from(n) < upp {
                    let i = self.pl(p)?.hold.head;
                    if i == NIL16 {
                        break;
                    }
                    let more = if shares {
                        H::extra_tps(self, Pun(self.slot(Slot(i))?.aux))?
                    } else {
                        0
                    };
                    if more > 0 && !H::room_for_extra(self, extra.wrapping_add(more))? {
                        break;
                    }
                    extra = extra.wrapping_add(more);
                    n = self.pop_held(p, (n, n.wrapping_add(1)), &mut src, &mut spare)?;
                }
            } else {
                n = self.pop_held(p, (0, self.g.units_per_page), &mut src, &mut spare)?;
            }
            if n == 0 {
                return Ok(held);
            }
            H::reserve_extra(self, extra, true);
            let pad = u64::from(upp.saturating_sub(u16::from(n)));
            self.stats.pad_units = self.stats.pad_units.wrapping_add(pad);
            let (page, pe) = self.claim_page(BlockId(dest), Stream::Gc)?;
            spare.seq = self.next_seq();
            if budgeted {
                self.map_reserve_page(&spare);
            }
            self.emit_in(
                Some((BlockId(dest), pe)),
                OpKind::GcProgram,
                NandCmd::Program { page, src, spare },
                origin,
                n,
                extra,
            )?;
            H::emit_due(self)?;
        }
    }

    /// Pops held units off plane `p`'s holding FIFO into places `from..to`
    /// of a GC page being built (`src` and `spare`), oldest first, until
    /// the FIFO is empty; marks them programming. The plane and each slot
    /// are looked up once. Returns the page's unit count after it.
    #[inline(always)]
    fn pop_held(
        &mut self,
        p: PlaneId,
        (from, to): (u8, u8),
        src: &mut [Slot; MAX_UNITS_PER_PAGE],
        spare: &mut Spare,
    ) -> Result<u8, Error> {
        let t = &mut self.t;
        let pl = t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        let mut n = from;
        while n < to {
            let i = pl.hold.head;
            if i == NIL16 {
                break;
            }
            let m = t
                .slots
                .get_mut(usize::from(i))
                .or_rare(Error::Corrupt(&"fifo head"))?;
            m.state = SlotState::GcProgramming;
            pl.hold.pop_linked(m.next);
            if let (Some(d), Some(l)) = (
                src.get_mut(in_page(usize::from(n))),
                spare.lpns.get_mut(in_page(usize::from(n))),
            ) {
                *d = Slot(i);
                *l = Lpn(m.lpn);
            }
            spare.units.insert(n);
            n = n.wrapping_add(1);
        }
        Ok(n)
    }

    /// Erases (or retires) an emptied victim; with relocations outside the
    /// budget it waits for the next sweep instead (`deferred.rs`). Returns
    /// false if no op entry was free.
    #[cfg_attr(not(target_arch = "arm"), inline(never))]
    fn finish_victim(&mut self, p: PlaneId, victim: BlockId) -> Result<bool, Error> {
        let origin = self.pl(p)?.victim_origin;
        let retiring = self.blk(victim)?.state == BlockState::Retiring;
        if self.deferred_on() {
            self.defer_victim(victim)?;
        } else if retiring {
            self.retire_now(victim)?;
        } else {
            if !self.erase_allowed(p)? {
                return Ok(false);
            }
            self.emit_victim_erase(p, victim, origin)?;
        }
        if !retiring {
            match origin {
                Origin::WearLevel => self.stats.wl_moves = self.stats.wl_moves.wrapping_add(1),
                _ => self.stats.gc_victims = self.stats.gc_victims.wrapping_add(1),
            }
        }
        self.pl_mut(p)?.victim = NIL;
        Ok(true)
    }

    /// Whether plane `p` may start another victim erase now. Victims
    /// without valid data (a zone reset, a large trim) would otherwise be
    /// erased all at once, beyond what a cut record lists (`power_fail`).
    #[inline(always)]
    pub(crate) fn erase_allowed(&self, p: PlaneId) -> Result<bool, Error> {
        let cap = ERASES_IN_FLIGHT
            .checked_div(self.g.planes())
            .unwrap_or(1)
            .max(1);
        Ok(self.ops_available() > 0 && u32::from(self.pl(p)?.erasing) < cap)
    }

    /// Emits the erase of emptied victim `victim` of plane `p`.
    #[inline(always)]
    pub(crate) fn emit_victim_erase(
        &mut self,
        p: PlaneId,
        victim: BlockId,
        origin: Origin,
    ) -> Result<(), Error> {
        let pl = self.pl_mut(p)?;
        pl.erasing = pl.erasing.wrapping_add(1);
        let cmd = H::victim_erase(self, p, victim)?;
        self.emit(OpKind::Erase, cmd, origin, 0, 0)
    }

    /// Retires emptied block `b` for good.
    #[inline(always)]
    pub(crate) fn retire_now(&mut self, b: BlockId) -> Result<(), Error> {
        H::forget(self, b)?;
        self.blk_mut(b)?.state = BlockState::Bad;
        self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
        Ok(())
    }

    /// A GC read finished: queue live units for programming, or record them
    /// lost. `count` is the units it read (the number of its mask's bits).
    pub(crate) fn gc_read_done(
        &mut self,
        cmd: &NandCmd,
        count: u8,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::Read { page, dst, .. } = cmd else {
            return Err(rare(Error::Corrupt(&"gc read op is not a read")));
        };
        let p = self.g.plane_of_page(*page);
        // The observer sees the read first: it looks at nothing of the
        // plane's GC state, which the one lookup below then updates.
        H::read_done(self, *page, &result)?;
        // Units still live where they were read (every unit, as a rule) are
        // held through one lookup of the plane; the first that is not, and
        // all after it, take the general path below in the same order.
        // The firmware takes the general path for every unit (smaller code).
        let ok = !cfg!(target_arch = "arm") && result.is_ok();
        let (held, quick) = self.hold_live(p, dst, count, ok)?;
        let only_programs = if !cfg!(target_arch = "arm") && held == usize::from(count) {
            quick && !H::in_plane(self, p)
        } else {
            self.drop_or_hold(p, dst, (held, count), &result)?;
            self.turn_only_programs(p)?
        };
        if only_programs {
            // The plane's turn would only program what this read queued
            // (a unit it dropped freed a slot, so it would read too):
            // program it now and spare the turn, unless some is left.
            if self.gc_program_holding(p, false)? == 0 {
                return Ok(());
            }
        }
        self.attend(p)
    }

    /// [`Self::gc_read_done`]'s general path for the units of `dst` from
    /// the first `held` on (of `count`): each is held if still live under
    /// its owner, recorded lost if the read failed, or its slot freed.
    #[cfg_attr(not(target_arch = "arm"), inline(never))]
    fn drop_or_hold(
        &mut self,
        p: PlaneId,
        dst: &[Slot; MAX_UNITS_PER_PAGE],
        (held, count): (usize, u8),
        result: &NandResult,
    ) -> Result<(), Error> {
        for s in dst.iter().take(usize::from(count)).skip(held) {
            let (lpn, from) = {
                let m = self.slot(*s)?;
                (Lpn(m.lpn), Pun(m.aux))
            };
            match (&result, self.reloc_tag(lpn, from)?) {
                (Ok(_), Some(t)) => {
                    // Retagged, held and linked as the holding FIFO's new
                    // tail through one lookup of the slot.
                    let m = self.slot_mut(*s)?;
                    m.lpn = t.0;
                    m.state = SlotState::GcHolding;
                    m.next = NIL16;
                    let pl = self
                        .t
                        .planes
                        .get_mut(p.0 as usize)
                        .or_rare(Error::AddressOutOfRange)?;
                    pl.hold.push_back_unlinked(self.t.slots, s.0)?;
                }
                (Err(_), Some(t)) => {
                    self.lose_unit(from, t)?;
                    self.gc_slot_release(p, *s)?;
                }
                (_, None) => {
                    self.gc_slot_release(p, *s)?;
                }
            }
        }
        Ok(())
    }

    /// [`Self::gc_read_done`]'s common case, through one lookup of plane
    /// `p`: counts the read finished and, if it succeeded (`ok`), queues
    /// its units (the first `count` of `dst`) on the plane's holding FIFO,
    /// in order, while each is still live where it was read (its P2L entry
    /// still names the unit's owner, so [`Self::reloc_tag`] would name that
    /// owner). It stops at the first unit it cannot tell live so, leaving
    /// that unit and the rest untouched. Returns how many it queued, and
    /// the plane's side of [`Self::turn_only_programs`] after them.
    #[inline(always)]
    fn hold_live(
        &mut self,
        p: PlaneId,
        dst: &[Slot; MAX_UNITS_PER_PAGE],
        count: u8,
        ok: bool,
    ) -> Result<(usize, bool), Error> {
        let (ppb, upp) = (self.g.pages_per_block, u32::from(self.g.units_per_page));
        let t = &mut self.t;
        let pl = t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        pl.gc_reads = pl.gc_reads.saturating_sub(1);
        let mut n = 0usize;
        let live_units = if ok { usize::from(count) } else { 0 };
        for s in dst.iter().take(live_units) {
            let Some(m) = t.slots.get_mut(usize::from(s.0)) else {
                break;
            };
            // `Ftl::reloc_tag`'s first test, on the table alone.
            let owner = t.p2l.get(m.aux as usize).and_then(|&w| p2l_owner(w));
            if owner != Some(Lpn(m.lpn)) {
                break;
            }
            m.state = SlotState::GcHolding;
            m.next = NIL16;
            pl.hold.push_back_unlinked(t.slots, s.0)?;
            n = n.wrapping_add(1);
        }
        Ok((n, only_programs_here(pl, ppb, upp)))
    }

    /// Whether the GC turn of plane `p` would do nothing but program its
    /// held units: it has a victim it is still reading (not done, so no
    /// last page to pad and no erase to start), no free GC slot to issue a
    /// read into and no in-plane move to issue instead, and a page's worth
    /// held. Its next turn comes with the completion of that program.
    #[inline(always)]
    fn turn_only_programs(&self, p: PlaneId) -> Result<bool, Error> {
        let (ppb, upp) = (self.g.pages_per_block, u32::from(self.g.units_per_page));
        Ok(only_programs_here(self.pl(p)?, ppb, upp) && !H::in_plane(self, p))
    }

    /// A GC program finished: remap units still current, or requeue them on failure.
    /// `extra` is what the program reserved for the other tags of shared
    /// units (`copy.rs`).
    pub(crate) fn gc_program_done(
        &mut self,
        cmd: &NandCmd,
        count: u8,
        extra: u32,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::Program { page, src, spare } = cmd else {
            return Err(rare(Error::Corrupt(&"gc program op is not a program")));
        };
        let budgeted = !self.deferred_on();
        if budgeted {
            self.map_release_page(spare);
            H::reserve_extra(self, extra, false);
        }
        let b = self.g.block_of(*page);
        let p = self.g.plane_of(b);
        // The plane the units came from (another way's, for a cross-way
        // destination): its holding FIFO and GC slots take them back.
        let sp = H::source_plane(self, p, src[0])?;
        {
            let m = self.blk_mut(b)?;
            m.pending = m.pending.saturating_sub(1);
        }
        if result.is_err() {
            // Requeue in reverse so the original order is kept at the head.
            for s in src.iter().take(usize::from(count)).rev() {
                self.slot_mut(*s)?.state = SlotState::GcHolding;
                let pl = self
                    .t
                    .planes
                    .get_mut(sp.0 as usize)
                    .or_rare(Error::AddressOutOfRange)?;
                pl.hold.push_front(self.t.slots, s.0)?;
            }
            self.stats.program_failures = self.stats.program_failures.wrapping_add(1);
            self.retire_block(b)?;
        } else {
            H::page_programmed(self, *page)?;
            // Outside the budget the remaps only mark their pages stale.
            self.ps.def.touching = !budgeted;
            let r = self.gc_remap(*page, (b, p), src, count, sp);
            self.ps.def.touching = false;
            r?;
        }
        self.block_settle(b)?;
        if sp != p {
            self.attend(sp)?;
        }
        self.attend(p)
    }

    /// Remaps the units a GC program wrote to `page` (of block and plane
    /// `at`) that are still current; they came from plane `sp`.
    #[inline(always)]
    fn gc_remap(
        &mut self,
        page: crate::medium::addr::Ppn,
        at: (BlockId, PlaneId),
        src: &[Slot; MAX_UNITS_PER_PAGE],
        count: u8,
        sp: PlaneId,
    ) -> Result<(), Error> {
        for (j, s) in src.iter().take(usize::from(count)).enumerate() {
            // The slot is read and freed through one lookup: nothing below
            // looks at it.
            let (lpn, from) = self.gc_slot_release(sp, *s)?;
            if let Some(t) = self.reloc_tag(lpn, from)? {
                let to = self.g.pun(page, j as u8);
                self.move_unit(from, sp, to, at, t)?;
            } else {
                self.stats.gc_stale_units = self.stats.gc_stale_units.wrapping_add(1);
            }
        }
        Ok(())
    }

    /// A victim erase finished: the block is free again, or bad.
    #[cfg_attr(not(target_arch = "arm"), inline(never))]
    pub(crate) fn erase_done(&mut self, cmd: &NandCmd, result: NandResult) -> Result<(), Error> {
        let (NandCmd::Erase { block } | NandCmd::GuardedErase { block, .. }) = cmd else {
            return Err(rare(Error::Corrupt(&"erase op is not an erase")));
        };
        let p = self.g.plane_of(*block);
        let pl = self.pl_mut(p)?;
        pl.erasing = pl.erasing.saturating_sub(1);
        if result.is_ok() {
            H::erased(self, cmd)?;
            {
                let m = self.blk_mut(*block)?;
                m.pe = m.pe.wrapping_add(1);
            }
            self.free_push(*block)?;
            self.wear_tick(p)?;
        } else {
            H::forget(self, *block)?;
            self.blk_mut(*block)?.state = BlockState::Bad;
            let pl = self.pl_mut(p)?;
            pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
            self.refresh_ready(p)?;
            self.stats.erase_failures = self.stats.erase_failures.wrapping_add(1);
            self.stats.grown_bad_blocks = self.stats.grown_bad_blocks.wrapping_add(1);
            self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
        }
        self.attend(p)
    }
}

/// The plane's side of [`Ftl::turn_only_programs`] (all but the migration
/// hook's in-plane moves): a victim still being read, no free GC slot, and
/// a page's worth held (`ppb` pages per block, `upp` units per page).
#[inline(always)]
fn only_programs_here(pl: &PlaneState, ppb: u32, upp: u32) -> bool {
    pl.victim != NIL
        && !pl.victim_read_out(ppb)
        && pl.gc_free_count == 0
        && page_ready(u32::from(pl.hold.len), upp, false)
}

//! Buffer slots: the write buffer, read staging and per-plane GC staging.
//!
//! Slots are indices into the driver's data pool; the core only tracks what
//! each holds. The pool is cut into fixed classes so that reads and GC can
//! always make progress however full the write buffer is:
//! `[0, W)` write buffer, `[W, W+R)` host reads, then `G` slots per plane for GC.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{stack_pop, stack_push, stack_push_entry, SlotMeta, SlotState, NIL16};
use crate::ftl::Ftl;
use crate::medium::addr::{Lpn, PlaneId, Pun};
use crate::medium::nand::Slot;

impl<H: Hooks> Ftl<'_, H> {
    #[inline]
    pub(crate) fn slot(&self, s: Slot) -> Result<&SlotMeta, Error> {
        self.t
            .slots
            .get(usize::from(s.0))
            .or_rare(Error::Corrupt(&"slot index"))
    }

    #[inline]
    pub(crate) fn slot_mut(&mut self, s: Slot) -> Result<&mut SlotMeta, Error> {
        self.t
            .slots
            .get_mut(usize::from(s.0))
            .or_rare(Error::Corrupt(&"slot index"))
    }

    /// Lays out the slot classes and fills every free stack.
    pub(crate) fn init_slots(&mut self) -> Result<(), Error> {
        let w = self.cfg.write_buffer_units;
        let r = self.cfg.read_slots;
        let g = self.cfg.gc_slots_per_plane;
        self.wb_free = NIL16;
        self.read_free = NIL16;
        let total = self.cfg.total_slots();
        // Push in reverse so the lowest index is handed out first.
        let mut i = total;
        while i > 0 {
            i = i.saturating_sub(1);
            let idx = u16::try_from(i).map_err(|_| Error::InvalidConfig(&"slot count"))?;
            *self.slot_mut(Slot(idx))? = SlotMeta::default();
            if i < w {
                stack_push(self.t.slots, &mut self.wb_free, idx)?;
            } else if i < w.wrapping_add(r) {
                stack_push(self.t.slots, &mut self.read_free, idx)?;
            } else {
                let p = i
                    .saturating_sub(w.wrapping_add(r))
                    .checked_div(g)
                    .unwrap_or(0);
                let pl = self
                    .t
                    .planes
                    .get_mut(p as usize)
                    .or_rare(Error::Corrupt(&"gc slot plane"))?;
                stack_push(self.t.slots, &mut pl.gc_free_head, idx)?;
                pl.gc_free_count = pl.gc_free_count.wrapping_add(1);
            }
        }
        self.wb_free_count = w;
        Ok(())
    }

    /// Takes a free write-buffer slot.
    pub(crate) fn wb_alloc(&mut self) -> Result<Option<Slot>, Error> {
        let s = stack_pop(self.t.slots, &mut self.wb_free)?.map(Slot);
        if s.is_some() {
            self.wb_free_count = self.wb_free_count.saturating_sub(1);
        }
        Ok(s)
    }

    /// Returns a write-buffer slot.
    pub(crate) fn wb_release(&mut self, s: Slot) -> Result<(), Error> {
        // Freed and pushed on the free stack through one lookup.
        let m = self
            .t
            .slots
            .get_mut(usize::from(s.0))
            .or_rare(Error::Corrupt(&"slot index"))?;
        m.state = SlotState::Free;
        stack_push_entry(m, &mut self.wb_free, s.0);
        self.wb_free_count = self.wb_free_count.wrapping_add(1);
        Ok(())
    }

    /// Takes a free read slot.
    pub(crate) fn read_alloc(&mut self) -> Result<Option<Slot>, Error> {
        Ok(stack_pop(self.t.slots, &mut self.read_free)?.map(Slot))
    }

    /// Returns a read slot.
    pub(crate) fn read_release(&mut self, s: Slot) -> Result<(), Error> {
        self.slot_mut(s)?.state = SlotState::Free;
        stack_push(self.t.slots, &mut self.read_free, s.0)
    }

    /// Returns a GC slot to plane `p`, and what it held: the owner and the
    /// source unit of the relocated data.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn gc_slot_release(&mut self, p: PlaneId, s: Slot) -> Result<(Lpn, Pun), Error> {
        // Freed and pushed on the plane's free stack through one lookup.
        let m = self
            .t
            .slots
            .get_mut(usize::from(s.0))
            .or_rare(Error::Corrupt(&"slot index"))?;
        let pl = self
            .t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        m.state = SlotState::Free;
        stack_push_entry(m, &mut pl.gc_free_head, s.0);
        pl.gc_free_count = pl.gc_free_count.wrapping_add(1);
        Ok((Lpn(m.lpn), Pun(m.aux)))
    }

    /// Appends a write-buffer slot to the flush queue.
    pub(crate) fn pending_push_back(&mut self, s: Slot) -> Result<(), Error> {
        H::queue(self, s, false)
    }

    /// Puts a slot back at the head of the flush queue (after a failed program).
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn pending_push_front(&mut self, s: Slot) -> Result<(), Error> {
        H::queue(self, s, true)
    }

    /// Puts units taken by [`Self::pending_pop_live`] for a page that is not
    /// programmed after all back where they were (`units` in the order they
    /// were taken).
    pub(crate) fn pending_unpop(&mut self, units: &[Slot]) -> Result<(), Error> {
        for s in units.iter().rev() {
            self.slot_mut(*s)?.state = SlotState::WbPending;
            H::put_back(self, *s)?;
        }
        Ok(())
    }

    /// Takes the next live unit of the flush queue (in the flush order's
    /// order, oldest first by default), freeing trimmed ones on the way.
    pub(crate) fn pending_pop_live(&mut self) -> Result<Option<Slot>, Error> {
        while let Some(i) = H::take(self)? {
            let s = Slot(i);
            match self.slot(s)?.state {
                SlotState::WbPending => {
                    H::taken(self, s)?;
                    return Ok(Some(s));
                }
                SlotState::WbDead => {
                    self.pending_dead = self.pending_dead.saturating_sub(1);
                    self.wb_release(s)?;
                }
                _ => {
                    return Err(rare(Error::Corrupt(
                        &"flush queue holds a slot in the wrong state",
                    )))
                }
            }
        }
        Ok(None)
    }

    /// Live units waiting in the flush queue.
    #[inline]
    pub(crate) fn pending_live(&self) -> u32 {
        H::queued(self).saturating_sub(self.pending_dead)
    }
}

//! Deferred victim erases: GC relocations outside the capacitor budget
//! (see `persist::deferred` for why this is safe across a power cut).
//!
//! A relocation marks its translation page stale ([`F_LAZY`]) instead of
//! dirty; an emptied victim waits unerased. When victims gather (as many
//! as there are planes) or a plane runs low on free blocks, a sweep writes
//! every stale page, once each, as the region has room, waits for those
//! writes, then erases the victims that waited when it started. Many
//! relocations land in one page between sweeps, so a sweep writes far
//! fewer pages than relocations, where the budget would have written about
//! one page per relocated unit.

use crate::error::{rare, Error};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::Ftl;
use crate::medium::addr::{BlockId, Lpn};
use crate::medium::nand::Origin;
use crate::persist::deferred::SweepPhase;
use crate::persist::tp::F_LAZY;
use crate::persist::Tpn;

impl<H: Hooks> Ftl<'_, H> {
    /// Whether GC relocations stay outside the capacitor budget and victims
    /// wait for a sweep before their erase. After a cut, a relocated unit
    /// may then mount mapped to its old copy in such a victim (same data).
    pub fn defers_victim_erases(&self) -> bool {
        self.deferred_on()
    }

    /// Whether a relocation's mapping change is outside the budget now
    /// (never without the `deferred-erase` feature, so a build without it
    /// carries none of this code).
    #[inline]
    pub(crate) fn deferred_on(&self) -> bool {
        cfg!(feature = "deferred-erase") && self.ps.def.on
    }

    /// A GC relocation changed `lpn`'s mapping: its page is stale.
    pub(crate) fn map_stale(&mut self, lpn: Lpn) {
        self.mark_stale(self.ps.tp_of(lpn));
    }

    /// Marks page `tp` stale (counted once).
    fn mark_stale(&mut self, tp: Tpn) {
        if self.ps.flag(tp) & F_LAZY == 0 {
            self.ps.set_flag(tp, F_LAZY, true);
            self.ps.def.stale = self.ps.def.stale.wrapping_add(1);
        }
    }

    /// An emptied victim waits for the next sweep instead of its erase.
    pub(crate) fn defer_victim(&mut self, victim: BlockId) -> Result<(), Error> {
        self.blk_mut(victim)?.next = NIL;
        let tail = self.ps.def.tail;
        if tail == NIL {
            self.ps.def.head = victim.0;
        } else {
            self.blk_mut(BlockId(tail))?.next = victim.0;
        }
        self.ps.def.tail = victim.0;
        self.ps.def.waiting = self.ps.def.waiting.wrapping_add(1);
        let p = self.g.plane_of(victim);
        if self.pl(p)?.free_count <= self.cfg.gc_reserve_blocks.saturating_add(1) {
            self.ps.def.wanted = true;
        }
        Ok(())
    }

    /// Runs the sweep as far as resources allow (from `pump`).
    pub(crate) fn deferred_step(&mut self) -> Result<(), Error> {
        loop {
            match self.ps.def.phase {
                SweepPhase::Idle => {
                    let d = &self.ps.def;
                    if d.waiting == 0 || !(d.wanted || d.waiting >= self.g.planes()) {
                        return Ok(());
                    }
                    let d = &mut self.ps.def;
                    d.wanted = false;
                    d.victims = d.waiting;
                    d.cursor = 0;
                    d.phase = SweepPhase::Scanning;
                    self.stats.map_sweeps = self.stats.map_sweeps.wrapping_add(1);
                }
                SweepPhase::Scanning => {
                    if !self.sweep_scan()? {
                        return Ok(());
                    }
                    // Writes from now on belong to the next sweep.
                    self.ps.def.gen ^= 1;
                    self.ps.def.phase = SweepPhase::Draining;
                }
                SweepPhase::Draining => {
                    let old = usize::from(self.ps.def.gen ^ 1);
                    if self.ps.def.inflight.get(old).copied().unwrap_or(0) > 0 {
                        return Ok(());
                    }
                    let d = &mut self.ps.def;
                    if d.rescan {
                        d.rescan = false;
                        d.cursor = 0;
                        d.phase = SweepPhase::Scanning;
                    } else {
                        d.phase = SweepPhase::Erasing;
                    }
                }
                SweepPhase::Erasing => {
                    if !self.sweep_erase()? {
                        return Ok(());
                    }
                    self.ps.def.phase = SweepPhase::Idle;
                }
            }
        }
    }

    /// Writes stale pages from the cursor on. Returns true once the scan
    /// has passed the last page.
    fn sweep_scan(&mut self) -> Result<bool, Error> {
        while self.ps.def.cursor < self.ps.n_tp {
            let tp = Tpn(self.ps.def.cursor);
            if self.ps.flag(tp) & F_LAZY != 0 {
                if self.ps.buf_free == 0 || self.ops_available() == 0 {
                    return Ok(false);
                }
                let Some(page) = self.region_page_avoiding(self.ps.cleaning)? else {
                    self.region_maintain()?;
                    return Ok(false);
                };
                self.tp_emit(tp, page, OpKind::MapSweep)?;
            }
            self.ps.def.cursor = self.ps.def.cursor.wrapping_add(1);
        }
        Ok(true)
    }

    /// Erases (or retires) the victims the sweep covers. Returns true when
    /// all are done.
    fn sweep_erase(&mut self) -> Result<bool, Error> {
        while self.ps.def.victims > 0 {
            let b = BlockId(self.ps.def.head);
            if b.0 == NIL {
                return Err(rare(Error::Corrupt(
                    &"deferred victim list shorter than its count",
                )));
            }
            let p = self.g.plane_of(b);
            let retiring = self.blk(b)?.state == BlockState::Retiring;
            if !retiring && !self.erase_allowed(p)? {
                return Ok(false);
            }
            let next = self.blk(b)?.next;
            self.blk_mut(b)?.next = NIL;
            let d = &mut self.ps.def;
            d.head = next;
            if next == NIL {
                d.tail = NIL;
            }
            d.waiting = d.waiting.saturating_sub(1);
            d.victims = d.victims.saturating_sub(1);
            if retiring {
                self.retire_now(b)?;
            } else {
                self.emit_victim_erase(p, b, Origin::Gc)?;
            }
        }
        Ok(true)
    }

    /// A write of page `tp` is about to be encoded: if the page is stale
    /// (or a sweep writes it), the write takes over the obligation. Returns
    /// the op's tag for [`Self::stale_write_done`]: 0 for none, else one
    /// plus the generation.
    pub(crate) fn stale_write_start(&mut self, tp: Tpn, kind: OpKind) -> u8 {
        let carries = match kind {
            OpKind::MapSweep => true,
            OpKind::MapProgram | OpKind::MapMove => self.ps.flag(tp) & F_LAZY != 0,
            _ => false,
        };
        if !carries {
            return 0;
        }
        if self.ps.flag(tp) & F_LAZY != 0 {
            self.ps.set_flag(tp, F_LAZY, false);
            self.ps.def.stale = self.ps.def.stale.saturating_sub(1);
        }
        let d = &mut self.ps.def;
        if let Some(n) = d.inflight.get_mut(usize::from(d.gen)) {
            *n = n.wrapping_add(1);
        }
        d.gen.wrapping_add(1)
    }

    /// Completion of a write that carried a stale page's obligation (`tag`
    /// from [`Self::stale_write_start`]): the page is on flash, or stale
    /// again and the sweep scans once more.
    pub(crate) fn stale_write_done(&mut self, tp: Tpn, tag: u8, ok: bool) {
        let Some(gen) = tag.checked_sub(1) else {
            return;
        };
        let d = &mut self.ps.def;
        if let Some(n) = d.inflight.get_mut(usize::from(gen)) {
            *n = n.saturating_sub(1);
        }
        if !ok {
            d.rescan = true;
            self.mark_stale(tp);
        }
    }
}

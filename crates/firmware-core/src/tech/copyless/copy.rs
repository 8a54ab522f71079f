//! The host copy command and the copyless-copy hooks of the data path.
//!
//! [`Ftl::copy`] serves a copy of `len` mapping units. With
//! [`CopyMode::Remap`](crate::config::CopyMode::Remap) each destination unit
//! is remapped to its source's physical unit ([`crate::tech::copyless::refcount`]): the
//! unit's reference count grows, the tag goes to the shadow OOB, and no NAND
//! operation is emitted. The destination's L2P entry changes like a write's,
//! so its translation page turns dirty and reaches flash by the same path.
//!
//! A unit that cannot be remapped stops the command with
//! [`CopyStop::Physical`]: the driver copies that unit itself (read the
//! source, write the destination through the write buffer) and calls again
//! for the rest. That happens
//!
//! * for every unit with [`CopyMode::Physical`](crate::config::CopyMode::Physical);
//! * when the source's count is already `2^n - 1`;
//! * when the shadow OOB has no free record for the new tag (records are
//!   never evicted: they are a shared unit's only reverse mapping);
//! * when the source is still in the write buffer. Its data is not on flash
//!   yet, so there is no physical unit to share; the driver's copy of the
//!   buffered data costs one buffer slot and, later, one unit program, which
//!   is what the host would pay without copyless copy. A remap that waited
//!   for the flush instead would stall the host behind the whole buffer.
//!
//! Copy-on-write: an overwrite or trim of a tag releases it ([`Ftl::write`],
//! [`Ftl::trim`]); the unit stays valid (and in its block's valid count)
//! until its count reaches zero. The P2L entry of a shared unit names one of
//! its tags; GC and wear levelling relocate a shared unit once and remap
//! every tag the shadow OOB lists. Mount rebuilds counts and shadow records
//! from the recovered L2P table: every logical unit mapped to a physical one
//! is one tag of it.

use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::mapping::Loc;
use crate::ftl::tables::{BlockState, SlotState};
use crate::ftl::Ftl;
use crate::medium::addr::{Lpn, Pun};
use crate::tech::copyless::refcount::{CopyOutcome, Release};

/// Why a unit of a copy must be copied physically by the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyFallback {
    /// Copies are configured physical.
    Mode,
    /// The source unit's reference count is at its maximum.
    CountOverflow,
    /// The shadow OOB has no free record.
    ShadowFull,
    /// The source is still in the write buffer (not on flash yet).
    SourceBuffered,
    /// With partial mapping protection: the source unit is being relocated
    /// (its block is a GC, wear-levelling or retirement victim), whose
    /// translation-page reservation counted its tags when it started.
    Relocating,
}

/// Where a copy command stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyStop {
    /// Every unit is done.
    Done,
    /// The unit after the remapped ones must be copied physically; then call
    /// [`Ftl::copy`] again for the units after it.
    Physical(CopyFallback),
    /// The translation-page budget is full: retry the rest after a completion.
    Busy,
}

/// Result of [`Ftl::copy`]: units `0..remapped` are done, then `stop` says
/// what happens with unit `remapped`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyProgress {
    /// Leading units served without NAND operations (remapped, or copied
    /// from an unmapped or lost source).
    pub remapped: u32,
    /// Why the command stopped.
    pub stop: CopyStop,
}

impl<H: Hooks> Ftl<'_, H> {
    /// Copies `len` mapping units from `src..src+len` to `dst..dst+len`,
    /// by remapping where configured and possible (see the module docs).
    /// Overlapping ranges (other than `src == dst`, a no-op) are refused.
    pub fn copy(&mut self, src: Lpn, dst: Lpn, len: u32, now: u64) -> Result<CopyProgress, Error> {
        let last = len.saturating_sub(1);
        let src_end = src.0.checked_add(last).ok_or(Error::LpnOutOfRange)?;
        let dst_end = dst.0.checked_add(last).ok_or(Error::LpnOutOfRange)?;
        self.check_host(src, now)?;
        if len == 0 {
            return Ok(CopyProgress {
                remapped: 0,
                stop: CopyStop::Done,
            });
        }
        if src_end >= self.cfg.logical_units || dst_end >= self.cfg.logical_units {
            return Err(Error::LpnOutOfRange);
        }
        if src != dst && src.0 <= dst_end && dst.0 <= src_end {
            return Err(Error::BadRequest("copy ranges overlap"));
        }
        let mut done = 0u32;
        while done < len {
            let s = Lpn(src.0.wrapping_add(done));
            let d = Lpn(dst.0.wrapping_add(done));
            let stop = self.copy_unit(s, d)?;
            if let Some(stop) = stop {
                if matches!(stop, CopyStop::Physical(_)) {
                    self.stats.copy_fallback_units =
                        self.stats.copy_fallback_units.saturating_add(1);
                }
                return Ok(CopyProgress {
                    remapped: done,
                    stop,
                });
            }
            done = done.saturating_add(1);
            self.stats.copy_remapped_units = self.stats.copy_remapped_units.saturating_add(1);
        }
        self.pump()?;
        Ok(CopyProgress {
            remapped: done,
            stop: CopyStop::Done,
        })
    }

    /// One unit of [`Ftl::copy`]; `Some` stops the command.
    fn copy_unit(&mut self, s: Lpn, d: Lpn) -> Result<Option<CopyStop>, Error> {
        let Some(cc) = self.cc.as_ref() else {
            return Ok(Some(CopyStop::Physical(CopyFallback::Mode)));
        };
        if s == d {
            return Ok(None);
        }
        let from = self.loc(s)?;
        if let Loc::Flash(p) = from {
            if self.loc(d)? == Loc::Flash(p) {
                return Ok(None);
            }
            let c = cc.count(p)?;
            if c >= cc.counts().max() || u32::from(c) >= self.cc_tag_limit() {
                return Ok(Some(CopyStop::Physical(CopyFallback::CountOverflow)));
            }
            if self.cc_partial() {
                let state = self.blk(self.g.block_of(self.g.page_of_unit(p)))?.state;
                if matches!(state, BlockState::Victim | BlockState::Retiring) {
                    return Ok(Some(CopyStop::Physical(CopyFallback::Relocating)));
                }
            }
            let need = if c == 1 { 2 } else { 1 };
            if cc.shadow().free() < need {
                return Ok(Some(CopyStop::Physical(CopyFallback::ShadowFull)));
            }
        }
        if matches!(from, Loc::Buffer(_)) {
            return Ok(Some(CopyStop::Physical(CopyFallback::SourceBuffered)));
        }
        if !self.map_may_touch(d)? {
            return Ok(Some(CopyStop::Busy));
        }
        self.release_loc(d)?;
        match from {
            Loc::Flash(p) => {
                let primary = self.p2l(p)?.ok_or(Error::Corrupt("copy source not live"))?;
                let src_tag = if self.cc_count(p)? == 1 { primary } else { s };
                let cc = self.cc.as_mut().ok_or(Error::Corrupt("copy tables"))?;
                match cc.copy(p, src_tag, d)? {
                    CopyOutcome::Remapped(_) => {}
                    CopyOutcome::Fallback(_) => {
                        return Err(Error::Corrupt("copy refused after its checks"))
                    }
                }
                self.set_loc(d, Loc::Flash(p))?;
            }
            other => self.set_loc(d, other)?,
        }
        Ok(None)
    }

    /// Whether the capacitor protects only part of the translation pages:
    /// then relocating a shared unit, which dirties one translation page per
    /// tag, must fit the dirty budget like a page program does.
    pub(crate) fn cc_partial(&self) -> bool {
        self.cc.is_some() && self.ps.on && self.ps.budget < self.ps.n_tp
    }

    /// Most tags a unit may have: with partial protection, few enough that
    /// relocating it (a page's translation pages plus one per other tag)
    /// always fits the dirty budget once write-backs have emptied it.
    fn cc_tag_limit(&self) -> u32 {
        if self.cc_partial() {
            let upp = u32::from(self.g.units_per_page);
            self.ps.budget.saturating_sub(upp).saturating_add(1).max(1)
        } else {
            u32::MAX
        }
    }

    /// Translation pages beyond the P2L tag's that relocating `p` may
    /// dirty (its other tags), with partial protection; else 0.
    pub(crate) fn cc_extra_tps(&self, p: Pun) -> Result<u32, Error> {
        if !self.cc_partial() {
            return Ok(0);
        }
        Ok(u32::from(self.cc_count(p)?.saturating_sub(1)))
    }

    /// Whether `extra` translation pages beyond a data page's fit the dirty
    /// budget now (see [`Self::cc_partial`]); if not, write-backs start.
    pub(crate) fn cc_room_for(&mut self, extra: u32) -> Result<bool, Error> {
        if extra == 0 {
            return Ok(true);
        }
        let upp = u32::from(self.g.units_per_page);
        let need = self.ps.used().saturating_add(upp).saturating_add(extra);
        if need <= self.ps.budget {
            return Ok(true);
        }
        self.ps.waiting = true;
        // Write-backs stop once a page fits; here a page and `extra` more
        // must, so they run against a budget short by `extra`.
        let budget = self.ps.budget;
        self.ps.budget = budget.saturating_sub(extra);
        let r = self.map_write_back();
        self.ps.budget = budget;
        r?;
        Ok(false)
    }

    /// Reserves (`true`) or releases `n` translation pages for the extra tags
    /// of a relocation in flight.
    pub(crate) fn cc_reserve(&mut self, n: u32, take: bool) {
        self.ps.reserved = if take {
            self.ps.reserved.saturating_add(n)
        } else {
            self.ps.reserved.saturating_sub(n)
        };
    }

    fn cc_count(&self, p: Pun) -> Result<u8, Error> {
        match &self.cc {
            Some(cc) => cc.count(p),
            None => Ok(u8::from(self.p2l(p)?.is_some())),
        }
    }

    /// Drops whatever `lpn` maps to (overwrite, trim or copy onto it): a
    /// pending buffered copy dies, a flash copy loses this tag.
    pub(crate) fn release_loc(&mut self, lpn: Lpn) -> Result<(), Error> {
        match self.loc(lpn)? {
            Loc::Flash(p) => self.release_flash(p, lpn)?,
            Loc::Buffer(s) => {
                let m = self.slot_mut(s)?;
                if m.state == SlotState::WbPending {
                    m.state = SlotState::WbDead;
                    self.pending_dead = self.pending_dead.saturating_add(1);
                }
            }
            Loc::Unmapped | Loc::Lost => {}
        }
        Ok(())
    }

    /// Tag `lpn` of physical unit `p` is overwritten or trimmed. Without
    /// copyless copy (or when `lpn` was its last tag) the unit dies; else
    /// it loses one reference and the P2L names a remaining tag.
    pub(crate) fn release_flash(&mut self, p: Pun, lpn: Lpn) -> Result<(), Error> {
        let Some(cc) = self.cc.as_mut() else {
            return self.invalidate_unit(p);
        };
        match cc.release(p, lpn)? {
            Release::Reclaimable => self.invalidate_unit(p),
            Release::Sole(t) => self.set_p2l(p, t),
            Release::Shared(_) => {
                let t = cc
                    .tags(p)
                    .next()
                    .ok_or(Error::Corrupt("shared unit without shadow tags"))?;
                if self.p2l(p)? == Some(lpn) {
                    self.set_p2l(p, t)?;
                }
                Ok(())
            }
        }
    }

    /// A unit was programmed with new data for one logical unit.
    pub(crate) fn cc_program(&mut self, p: Pun) -> Result<(), Error> {
        match self.cc.as_mut() {
            Some(cc) => cc.program(p),
            None => Ok(()),
        }
    }

    /// The tag a relocation of `from` (read for `lpn`) must follow, if the
    /// unit is still live: `lpn` itself, or with copyless copy the unit's
    /// current P2L tag (the one read for may have been released meanwhile
    /// while others still share the unit).
    pub(crate) fn reloc_tag(&self, lpn: Lpn, from: Pun) -> Result<Option<Lpn>, Error> {
        if self.loc(lpn)? == Loc::Flash(from) {
            return Ok(Some(lpn));
        }
        if self.cc.is_none() {
            return Ok(None);
        }
        Ok(match self.p2l(from)? {
            Some(l) if self.loc(l)? == Loc::Flash(from) => Some(l),
            _ => None,
        })
    }

    /// GC, wear levelling or retirement moved live unit `from` (P2L tag
    /// `lpn`) to `to`: every tag now maps there, counts and shadow records
    /// move along, and `from` dies.
    pub(crate) fn move_unit(&mut self, from: Pun, to: Pun, lpn: Lpn) -> Result<(), Error> {
        self.invalidate_unit(from)?;
        self.set_loc(lpn, Loc::Flash(to))?;
        self.validate_unit(to, lpn)?;
        let Some(cc) = self.cc.as_mut() else {
            return Ok(());
        };
        cc.relocate(from, to)?;
        let mut c = cc.cursor(to);
        while let Some(t) = self.cc.as_ref().and_then(|cc| cc.next_tag(&mut c)) {
            if t != lpn {
                self.set_loc(t, Loc::Flash(to))?;
            }
        }
        Ok(())
    }

    /// Live unit `from` (P2L tag `lpn`) could not be read during relocation:
    /// every tag of it is lost.
    pub(crate) fn lose_unit(&mut self, from: Pun, lpn: Lpn) -> Result<(), Error> {
        if let Some(cc) = self.cc.as_ref() {
            let mut c = cc.cursor(from);
            while let Some(t) = self.cc.as_ref().and_then(|cc| cc.next_tag(&mut c)) {
                if t != lpn {
                    self.set_loc(t, Loc::Lost)?;
                    self.stats.lost_units = self.stats.lost_units.saturating_add(1);
                }
            }
            if let Some(cc) = self.cc.as_mut() {
                cc.forget(from)?;
            }
        }
        self.invalidate_unit(from)?;
        self.set_loc(lpn, Loc::Lost)?;
        self.stats.lost_units = self.stats.lost_units.saturating_add(1);
        Ok(())
    }

    /// Mount: logical unit `lpn` maps to `p` in the recovered L2P table. The
    /// first such unit validates `p`; with copyless copy each further one is
    /// another tag (count and shadow record rebuilt).
    pub(crate) fn mount_tag(&mut self, p: Pun, lpn: Lpn) -> Result<(), Error> {
        if let Some(first) = self.p2l(p)? {
            let cc = self
                .cc
                .as_mut()
                .ok_or(Error::Corrupt("unit validated twice"))?;
            return match cc.copy(p, first, lpn)? {
                CopyOutcome::Remapped(_) => Ok(()),
                CopyOutcome::Fallback(_) => {
                    Err(Error::Corrupt("mount: shared units exceed the copy tables"))
                }
            };
        }
        self.validate_unit(p, lpn)?;
        self.cc_program(p)
    }

    /// Audit of one L2P entry `lpn -> p`: the P2L names it, or (copyless
    /// copy) the shadow OOB lists it as a tag of the shared unit.
    pub(crate) fn audit_tag(&self, p: Pun, lpn: Lpn) -> Result<bool, Error> {
        let primary = self.p2l(p)?;
        match &self.cc {
            None => Ok(primary == Some(lpn)),
            Some(cc) => {
                let c = cc.count(p)?;
                if primary.is_none() || c == 0 {
                    return Ok(false);
                }
                if c == 1 {
                    return Ok(primary == Some(lpn));
                }
                let shadow = cc.shadow();
                Ok(shadow.contains(p, lpn)?
                    && primary.map_or(Ok(false), |l| shadow.contains(p, l))?)
            }
        }
    }
}

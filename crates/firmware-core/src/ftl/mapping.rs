//! Page-level mapping: the L2P table, the P2L table (which doubles as the
//! valid bitmap) and the valid counts they imply.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::SlotState;
use crate::ftl::Ftl;
use crate::map::loc::{p2l_owner, Loc, P2L_NONE};
use crate::medium::addr::{BlockId, Lpn, PlaneId, Pun};
use crate::medium::hint::prefetch;

impl<H: Hooks> Ftl<'_, H> {
    /// Current location of a logical unit.
    #[inline]
    pub(crate) fn loc(&self, lpn: Lpn) -> Result<Loc, Error> {
        self.t
            .l2p
            .get(lpn.0 as usize)
            .map(|w| Loc::decode(*w))
            .or_rare(Error::LpnOutOfRange)
    }

    /// Points a logical unit at a new location (no valid-count bookkeeping).
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn set_loc(&mut self, lpn: Lpn, loc: Loc) -> Result<(), Error> {
        let e = self
            .t
            .l2p
            .get_mut(lpn.0 as usize)
            .or_rare(Error::LpnOutOfRange)?;
        *e = loc.encode();
        if !matches!(loc, Loc::Buffer(_)) {
            self.map_touch(lpn)?;
        }
        Ok(())
    }

    /// Logical unit stored at a physical unit, if it is live.
    #[inline]
    pub(crate) fn p2l(&self, pun: Pun) -> Result<Option<Lpn>, Error> {
        let w = *self
            .t
            .p2l
            .get(pun.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        Ok(p2l_owner(w))
    }

    /// Marks a physical unit as holding `lpn` and counts it valid in its block.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn validate_unit(&mut self, pun: Pun, lpn: Lpn) -> Result<(), Error> {
        let b = self.g.block_of_unit(pun);
        self.p2l_fill(pun, lpn)?;
        self.adjust_valid(b, self.g.plane_of(b), true)
    }

    /// Names `lpn` at dead unit `pun` in the P2L (no count changes).
    #[inline(always)]
    fn p2l_fill(&mut self, pun: Pun, lpn: Lpn) -> Result<(), Error> {
        let e = self
            .t
            .p2l
            .get_mut(pun.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        if *e != P2L_NONE {
            return Err(rare(Error::Corrupt(&"unit validated twice")));
        }
        *e = lpn.0;
        Ok(())
    }

    /// Marks a physical unit as dead and uncounts it from its block.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn invalidate_unit(&mut self, pun: Pun) -> Result<(), Error> {
        let b = self.g.block_of_unit(pun);
        self.p2l_clear(pun)?;
        self.adjust_valid(b, self.g.plane_of(b), false)
    }

    /// Marks live unit `pun` dead in the P2L (no count changes).
    #[inline(always)]
    fn p2l_clear(&mut self, pun: Pun) -> Result<(), Error> {
        let e = self
            .t
            .p2l
            .get_mut(pun.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        if *e == P2L_NONE {
            return Err(rare(Error::Corrupt(&"unit invalidated twice")));
        }
        *e = P2L_NONE;
        Ok(())
    }

    /// Names another tag of a live shared unit in the P2L (no valid-count
    /// change; see `copy.rs`).
    #[cfg(feature = "copyless")]
    pub(crate) fn set_p2l(&mut self, pun: Pun, lpn: Lpn) -> Result<(), Error> {
        let e = self
            .t
            .p2l
            .get_mut(pun.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        if *e == P2L_NONE {
            return Err(rare(Error::Corrupt(&"retagging a dead unit")));
        }
        *e = lpn.0;
        Ok(())
    }

    /// Drops whatever `lpn` maps to (overwrite, trim or copy onto it): a
    /// pending buffered write dies, a flash unit loses this owner.
    pub(crate) fn release_loc(&mut self, lpn: Lpn) -> Result<(), Error> {
        match self.loc(lpn)? {
            Loc::Flash(p) => H::release(self, p, lpn)?,
            Loc::Buffer(s) => {
                let m = self.slot_mut(s)?;
                if m.state == SlotState::WbPending {
                    m.state = SlotState::WbDead;
                    self.pending_dead = self.pending_dead.wrapping_add(1);
                }
            }
            Loc::Unmapped | Loc::Lost => {}
        }
        Ok(())
    }

    /// The owner a relocation of `from` (read for `lpn`) must follow, if the
    /// unit is still live: `lpn` itself, or whom the ownership hook names.
    ///
    /// The victim's P2L entry still naming `lpn` answers first: the two
    /// tables agree on every live unit (`audit` checks both directions), and
    /// GC reads the victim's P2L in order while `lpn`'s L2P entry is a
    /// random line, on a large drive a miss to DRAM. Only a mismatch (an
    /// overwritten unit, another owner of a shared unit) asks the L2P.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn reloc_tag(&self, lpn: Lpn, from: Pun) -> Result<Option<Lpn>, Error> {
        if self.p2l(from)? == Some(lpn) {
            return Ok(Some(lpn));
        }
        self.reloc_tag_by_l2p(lpn, from)
    }

    /// [`Self::reloc_tag`] when the victim's P2L entry names another owner
    /// or none: the rare case, kept out of the completions' loops.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    fn reloc_tag_by_l2p(&self, lpn: Lpn, from: Pun) -> Result<Option<Lpn>, Error> {
        if self.loc(lpn)? == Loc::Flash(from) {
            return Ok(Some(lpn));
        }
        H::reloc_other(self, from)
    }

    /// GC, wear levelling or retirement moved live unit `from` (owner
    /// `lpn`) of plane `fp` to `to` of block and plane `(tb, tp)`: `lpn`
    /// maps there, `from` dies. The callers (GC's remap, the copyback
    /// completion) have the planes and the new block at hand, so only
    /// `from`'s block is found from the unit.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn move_unit(
        &mut self,
        from: Pun,
        fp: PlaneId,
        to: Pun,
        (tb, tp): (BlockId, PlaneId),
        lpn: Lpn,
    ) -> Result<(), Error> {
        if cfg!(target_arch = "arm") {
            // The firmware keeps one path, the smaller code: each unit's
            // place is found from the unit, as everywhere else.
            self.invalidate_unit(from)?;
            self.set_loc(lpn, Loc::Flash(to))?;
            self.validate_unit(to, lpn)?;
        } else {
            self.p2l_clear(from)?;
            self.adjust_block_valid(self.g.block_of_unit(from), false)?;
            self.set_loc(lpn, Loc::Flash(to))?;
            self.p2l_fill(to, lpn)?;
            self.adjust_block_valid(tb, true)?;
            // Within one plane (GC's usual move) the plane's count, and so
            // its host readiness, ends where it began: only a move across
            // planes changes the two planes' counts.
            if fp != tp {
                self.adjust_plane_valid(fp, false)?;
                self.adjust_plane_valid(tp, true)?;
            }
        }
        H::unit_moved(self, from, to, lpn)
    }

    /// Live unit `from` (owner `lpn`) could not be read during relocation:
    /// its data is lost.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn lose_unit(&mut self, from: Pun, lpn: Lpn) -> Result<(), Error> {
        H::unit_lost(self, from, lpn)?;
        self.invalidate_unit(from)?;
        self.set_loc(lpn, Loc::Lost)?;
        self.stats.lost_units = self.stats.lost_units.wrapping_add(1);
        Ok(())
    }

    /// Mount: logical unit `lpn` maps to `p` in the recovered L2P table. The
    /// first such unit validates `p`; each further one is another owner, if
    /// the ownership hook shares units.
    pub(crate) fn mount_tag(&mut self, p: Pun, lpn: Lpn) -> Result<(), Error> {
        if let Some(first) = self.p2l(p)? {
            return H::mount_share(self, p, first, lpn);
        }
        self.validate_unit(p, lpn)?;
        H::programmed_unit(self, p)
    }
}

impl<H: Hooks> Ftl<'_, H> {
    /// Look-ahead hint, stage 1: the driver will soon touch `lpn`; start fetching
    /// its L2P entry. Issue it a command ahead of [`Ftl::prefetch_location`],
    /// which comes a command ahead of [`Ftl::prefetch_buckets`].
    /// Hints never change behaviour; on targets without a prefetch instruction
    /// (or with tables in SRAM) they do nothing.
    #[inline]
    pub fn prefetch_mapping(&self, lpn: Lpn) {
        prefetch(self.t.l2p, lpn.0 as usize);
    }

    /// Look-ahead hint, stage 2: read `lpn`'s (by now cached) L2P entry and start
    /// fetching the P2L entry and block metadata an overwrite of it will touch.
    #[inline]
    pub fn prefetch_location(&self, lpn: Lpn) {
        if let Ok(Loc::Flash(p)) = self.loc(lpn) {
            prefetch(self.t.p2l, p.0 as usize);
            let b = self.g.block_of_unit(p);
            prefetch(self.t.blocks, b.0 as usize);
        }
    }

    /// Look-ahead hint, stage 3: with `lpn`'s block metadata cached by stage
    /// 2, start fetching the valid-count bucket entries an overwrite of it
    /// moves the block between, and its neighbours on its bucket list.
    #[inline]
    pub fn prefetch_buckets(&self, lpn: Lpn) {
        if let Ok(Loc::Flash(p)) = self.loc(lpn) {
            let b = self.g.block_of_unit(p);
            self.prefetch_bucket_of(b);
        }
    }

    /// Starts fetching the P2L entry of `pun` (GC's scan of a victim, ahead).
    #[inline(always)]
    pub(crate) fn prefetch_p2l(&self, pun: Pun) {
        prefetch(self.t.p2l, pun.0 as usize);
    }

    /// Starts fetching the L2P entry of a unit relocation will check later.
    #[inline]
    pub(crate) fn prefetch_l2p(&self, lpn: Lpn) {
        prefetch(self.t.l2p, lpn.0 as usize);
    }
}

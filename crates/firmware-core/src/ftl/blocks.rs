//! Block pools: per-plane free lists, active (open) blocks per write stream,
//! and the valid-count buckets that make greedy victim selection O(1).
//!
//! Every `Full` block sits on the bucket list of its plane for its valid count.
//! A change of valid count moves it between lists in constant time; the
//! greedy victim is the head of the lowest non-empty bucket.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockMeta, BlockState, PlaneState, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::{BlockId, PlaneId};

impl<H: Hooks> Ftl<'_, H> {
    #[inline]
    pub(crate) fn blk(&self, b: BlockId) -> Result<&BlockMeta, Error> {
        self.t
            .blocks
            .get(b.0 as usize)
            .or_rare(Error::AddressOutOfRange)
    }

    #[inline]
    pub(crate) fn blk_mut(&mut self, b: BlockId) -> Result<&mut BlockMeta, Error> {
        self.t
            .blocks
            .get_mut(b.0 as usize)
            .or_rare(Error::AddressOutOfRange)
    }

    #[inline]
    pub(crate) fn pl(&self, p: PlaneId) -> Result<&PlaneState, Error> {
        self.t
            .planes
            .get(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)
    }

    #[inline]
    pub(crate) fn pl_mut(&mut self, p: PlaneId) -> Result<&mut PlaneState, Error> {
        self.t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)
    }

    fn bucket_index(&self, p: PlaneId, valid: u16) -> usize {
        // Bounded by the bucket table size, which TableSizes computed without overflow.
        let per = (self.g.units_per_block() as usize).wrapping_add(1);
        (p.0 as usize)
            .saturating_mul(per)
            .wrapping_add(usize::from(valid))
    }

    pub(crate) fn bucket_head(&self, p: PlaneId, valid: u16) -> Result<u32, Error> {
        self.t
            .buckets
            .get(self.bucket_index(p, valid))
            .copied()
            .or_rare(Error::Corrupt(&"bucket index"))
    }

    fn set_bucket_head(&mut self, p: PlaneId, valid: u16, v: u32) -> Result<(), Error> {
        let i = self.bucket_index(p, valid);
        *self
            .t
            .buckets
            .get_mut(i)
            .or_rare(Error::Corrupt(&"bucket index"))? = v;
        Ok(())
    }

    /// The bucket a `Full` block sits in: its valid units plus the units
    /// its skipped wordlines cannot hold, so the greedy victim is the block
    /// with the most invalid units.
    #[inline]
    pub(crate) fn bucket_key(&self, b: BlockId) -> Result<u16, Error> {
        Ok(self.blk(b)?.valid.wrapping_add(H::skip_units(self, b)))
    }

    /// Look-ahead hint: starts fetching what a valid-count change of `Full`
    /// block `b` touches (the heads of its bucket and the one below, and its
    /// list neighbours). Never changes behaviour.
    #[inline]
    pub(crate) fn prefetch_bucket_of(&self, b: BlockId) {
        use crate::medium::hint::prefetch;
        let (Ok(m), Ok(key)) = (self.blk(b), self.bucket_key(b)) else {
            return;
        };
        if m.state != BlockState::Full {
            return;
        }
        let i = self.bucket_index(self.g.plane_of(b), key);
        prefetch(self.t.buckets, i);
        prefetch(self.t.buckets, i.wrapping_sub(1));
        prefetch(self.t.blocks, m.prev as usize);
        prefetch(self.t.blocks, m.next as usize);
    }

    /// Links a `Full` block into its valid-count bucket.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn bucket_insert(&mut self, b: BlockId) -> Result<(), Error> {
        let p = self.g.plane_of(b);
        let valid = self.bucket_key(b)?;
        let head = self.bucket_head(p, valid)?;
        {
            let m = self.blk_mut(b)?;
            m.prev = NIL;
            m.next = head;
        }
        if head != NIL {
            self.blk_mut(BlockId(head))?.prev = b.0;
        }
        self.set_bucket_head(p, valid, b.0)?;
        let pl = self.pl_mut(p)?;
        if valid < pl.min_bucket_hint {
            pl.min_bucket_hint = valid;
        }
        Ok(())
    }

    /// Unlinks a `Full` block from its valid-count bucket.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn bucket_remove(&mut self, b: BlockId) -> Result<(), Error> {
        let p = self.g.plane_of(b);
        let valid = self.bucket_key(b)?;
        let (prev, next) = {
            let m = self.blk(b)?;
            (m.prev, m.next)
        };
        if prev == NIL {
            if self.bucket_head(p, valid)? != b.0 {
                return Err(rare(Error::Corrupt(&"bucket list head")));
            }
            self.set_bucket_head(p, valid, next)?;
        } else {
            self.blk_mut(BlockId(prev))?.next = next;
        }
        if next != NIL {
            self.blk_mut(BlockId(next))?.prev = prev;
        }
        let m = self.blk_mut(b)?;
        m.prev = NIL;
        m.next = NIL;
        Ok(())
    }

    /// Counts one unit more (`inc`) or fewer in block `b`, moving a full
    /// block between bucket lists; its plane's count is the caller's.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn adjust_block_valid(&mut self, b: BlockId, inc: bool) -> Result<(), Error> {
        let m = self.blk_mut(b)?;
        if m.state == BlockState::Full {
            self.bucket_remove(b)?;
            let m = self.blk_mut(b)?;
            m.valid = step_valid(m.valid, inc)?;
            self.bucket_insert(b)?;
        } else {
            // Not on a bucket list (open blocks and victims: most calls).
            m.valid = step_valid(m.valid, inc)?;
        }
        Ok(())
    }

    /// Adds or removes one valid unit from block `b` of plane `p`, keeping
    /// bucket lists in order.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn adjust_valid(&mut self, b: BlockId, p: PlaneId, inc: bool) -> Result<(), Error> {
        self.adjust_block_valid(b, inc)?;
        self.adjust_plane_valid(p, inc)
    }

    /// Counts one unit more (`inc`) or fewer in plane `p`, refreshing its
    /// host readiness when the count is next to the plane's room.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn adjust_plane_valid(&mut self, p: PlaneId, inc: bool) -> Result<(), Error> {
        let pl = self
            .t
            .planes
            .get_mut(p.0 as usize)
            .or_rare(Error::AddressOutOfRange)?;
        pl.valid_units = if inc {
            pl.valid_units.wrapping_add(1)
        } else {
            pl.valid_units.saturating_sub(1)
        };
        let (valid, lost, skipped) = (
            u64::from(pl.valid_units),
            pl.lost_blocks,
            u64::from(pl.skipped_units),
        );
        // Only a count next to the plane's room can flip its host readiness.
        if valid.abs_diff(self.room_for(lost).saturating_sub(skipped)) <= 1 {
            self.refresh_ready(p)?;
        }
        Ok(())
    }

    /// The greedy victim of a plane: the full block with the fewest valid units,
    /// provided moving it gains space. GC pads the last page it writes for a
    /// victim, so a victim must hold at most a page's worth of units fewer
    /// than a block: one more and moving it takes a whole block of pages
    /// and GC would erase forever without gaining any.
    pub(crate) fn greedy_victim(&mut self, p: PlaneId) -> Result<Option<BlockId>, Error> {
        let ub = u16::try_from(self.data_units_per_block())
            .map_err(|_| rare(Error::Corrupt(&"units per block")))?;
        let limit = ub.saturating_sub(u16::from(self.g.units_per_page));
        let mut v = self.pl(p)?.min_bucket_hint;
        while v <= limit {
            let h = self.bucket_head(p, v)?;
            if h != NIL {
                self.pl_mut(p)?.min_bucket_hint = v;
                return Ok(Some(BlockId(h)));
            }
            v = v.wrapping_add(1);
        }
        self.pl_mut(p)?.min_bucket_hint = v;
        Ok(None)
    }

    /// Returns an erased block to its plane's free list.
    pub(crate) fn free_push(&mut self, b: BlockId) -> Result<(), Error> {
        let p = self.g.plane_of(b);
        let head = self.pl(p)?.free_head;
        {
            let m = self.blk_mut(b)?;
            m.state = BlockState::Free;
            m.next = head;
            m.prev = NIL;
            m.valid = 0;
            m.next_page = 0;
            m.pending = 0;
        }
        let pl = self.pl_mut(p)?;
        pl.free_head = b.0;
        pl.free_count = pl.free_count.wrapping_add(1);
        self.refresh_ready(p)
    }

    /// Takes the free block with the lowest P/E count (dynamic wear
    /// levelling) among those whose copyback threshold is at least `min_ct`.
    /// With GuardedErase, blocks whose guard flag matches `guarded` come
    /// first, and fewer gErase counts break P/E ties (gErase levelling).
    pub(crate) fn free_pop_coolest(
        &mut self,
        p: PlaneId,
        min_ct: u8,
        guarded: Option<bool>,
    ) -> Result<Option<BlockId>, Error> {
        let mut prev = NIL;
        let mut cur = self.pl(p)?.free_head;
        let (mut best, mut best_prev) = (NIL, NIL);
        let mut best_key = (true, u32::MAX, u16::MAX);
        while cur != NIL {
            let m = self.blk(BlockId(cur))?;
            let b = BlockId(cur);
            let (miss, count) = H::free_rank(self, b, guarded);
            let key = (miss, m.pe, count);
            if (best == NIL || key < best_key) && (min_ct == 0 || H::block_fits(self, b, min_ct)?) {
                best = cur;
                best_prev = prev;
                best_key = key;
            }
            prev = cur;
            cur = m.next;
        }
        if best == NIL {
            return Ok(None);
        }
        let next = self.blk(BlockId(best))?.next;
        if best_prev == NIL {
            self.pl_mut(p)?.free_head = next;
        } else {
            self.blk_mut(BlockId(best_prev))?.next = next;
        }
        let pl = self.pl_mut(p)?;
        pl.free_count = pl.free_count.saturating_sub(1);
        let m = self.blk_mut(BlockId(best))?;
        m.next = NIL;
        Ok(Some(BlockId(best)))
    }

    /// Opens a free block of plane `p` for `stream`. Host streams may not dip into
    /// the GC reserve; GC streams may.
    pub(crate) fn open_block(
        &mut self,
        p: PlaneId,
        stream: Stream,
    ) -> Result<Option<BlockId>, Error> {
        self.open_block_for(p, stream, 0)
    }

    /// [`Self::open_block`] restricted to free blocks whose copyback
    /// threshold is at least `min_ct`: a copyback destination must take the
    /// chain that lands in it.
    pub(crate) fn open_block_for(
        &mut self,
        p: PlaneId,
        stream: Stream,
        min_ct: u8,
    ) -> Result<Option<BlockId>, Error> {
        let free = self.pl(p)?.free_count;
        let blocked = match stream {
            Stream::Host => !self.host_may_open(p)?,
            Stream::Gc => free == 0,
        };
        if blocked {
            return Ok(None);
        }
        let pref = H::open_preference(self, stream);
        let Some(b) = self.free_pop_coolest(p, min_ct, pref)? else {
            return Ok(None);
        };
        H::opened(self, b);
        let first = u16::try_from(H::usable_page(self, b, 0))
            .map_err(|_| rare(Error::Corrupt(&"first usable page beyond a block")))?;
        {
            let m = self.blk_mut(b)?;
            m.state = BlockState::Open;
            m.stream = stream as u8;
            m.valid = 0;
            m.next_page = first;
            m.pending = 0;
        }
        H::block_opened(self, b)?;
        if self.gc_wanted(p)? {
            self.attend(p)?;
        }
        self.refresh_ready(p)?;
        Ok(Some(b))
    }

    /// Called when a program of block `b` finished: closes full blocks and
    /// retires empty bad ones.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn block_settle(&mut self, b: BlockId) -> Result<(), Error> {
        let ppb = self.g.pages_per_block;
        let m = *self.blk(b)?;
        if m.pending != 0 {
            return Ok(());
        }
        match m.state {
            BlockState::Open if u32::from(m.next_page) >= ppb => {
                self.blk_mut(b)?.state = BlockState::Full;
                self.bucket_insert(b)?;
                let p = self.g.plane_of(b);
                if self.gc_wanted(p)? {
                    self.attend(p)?;
                }
            }
            BlockState::Retiring => self.attend(self.g.plane_of(b))?,
            _ => {}
        }
        Ok(())
    }

    /// Marks a block that failed a program as retiring: no more writes go to it,
    /// and GC empties it before it is retired for good.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn retire_block(&mut self, b: BlockId) -> Result<(), Error> {
        let p = self.g.plane_of(b);
        let state = self.blk(b)?.state;
        match state {
            BlockState::Retiring | BlockState::Bad | BlockState::Meta | BlockState::Anchor => {
                return Ok(())
            }
            BlockState::Full => {
                self.bucket_remove(b)?;
                H::forget(self, b)?;
            }
            BlockState::Free | BlockState::Unknown | BlockState::Victim => {
                return Err(rare(Error::Corrupt(
                    &"retiring a block that was not written",
                )))
            }
            BlockState::Open => H::forget(self, b)?,
        }
        let head = self.pl(p)?.retire_head;
        {
            let m = self.blk_mut(b)?;
            m.state = BlockState::Retiring;
            m.next = head;
            m.prev = NIL;
        }
        let pl = self.pl_mut(p)?;
        pl.retire_head = b.0;
        pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
        if pl.host_active == b.0 {
            pl.host_active = NIL;
        }
        self.gc_block_closed(p, b)?;
        self.refresh_ready(p)?;
        self.stats.grown_bad_blocks = self.stats.grown_bad_blocks.wrapping_add(1);
        self.attend(p)
    }

    /// Takes the first retiring block of a plane whose programs have all finished.
    pub(crate) fn take_retiring(&mut self, p: PlaneId) -> Result<Option<BlockId>, Error> {
        let mut prev = NIL;
        let mut cur = self.pl(p)?.retire_head;
        while cur != NIL {
            let m = *self.blk(BlockId(cur))?;
            if m.pending == 0 {
                if prev == NIL {
                    self.pl_mut(p)?.retire_head = m.next;
                } else {
                    self.blk_mut(BlockId(prev))?.next = m.next;
                }
                self.blk_mut(BlockId(cur))?.next = NIL;
                return Ok(Some(BlockId(cur)));
            }
            prev = cur;
            cur = m.next;
        }
        Ok(None)
    }
}

/// A block's valid count one up or down.
#[inline]
fn step_valid(valid: u16, inc: bool) -> Result<u16, Error> {
    if inc {
        valid
            .checked_add(1)
            .or_rare(Error::Corrupt(&"valid count overflow"))
    } else {
        valid
            .checked_sub(1)
            .or_rare(Error::Corrupt(&"valid count underflow"))
    }
}

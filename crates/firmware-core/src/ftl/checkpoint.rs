//! Checkpoint: a block table and an anchor, so mount need not read a page of
//! every block.
//!
//! Without it, mount learns each block's class (erased, data, metadata
//! region, bad) and erase count by reading its first page ([`MountStep::Heads`]).
//! With mapping persistence on, every power-cut flush (and so every clean
//! shutdown, [`Ftl::shutdown`]) ends with
//!
//! 1. the **block table**: one metadata-region page per
//!    `(page_bytes - 16) / 4` blocks, each entry a class (4 bits), the
//!    block's tag (8 bits, `Placement::block_tag`: a placement handle) and
//!    an erase count (20 bits), taken from the DRAM tables once the flush
//!    has allocated its blocks;
//! 2. an **anchor page** naming those table pages, programmed last, once
//!    everything before it has completed, into one of two **anchor blocks**
//!    (blocks 0 and 1 of plane 0, kept out of every other use).
//!
//! Mount first reads the anchor blocks ([`MountStep::Anchor`]). If the newest
//! readable anchor page is a checkpoint, it reads the block table
//! ([`MountStep::Table`]) instead of every block's first page, and then the
//! metadata region, the record and the pages the flush wrote, as before.
//! After a clean shutdown nothing but the checkpoint (anchor, table,
//! region) is read: the flush wrote no data. Before mount changes anything on
//! flash it programs a **dirty marker** after the checkpoint
//! ([`MountStep::Seal`]): from then on the table no longer describes the
//! drive, and a mount after a cut whose flush could not finish its anchor
//! (capacitor exhausted, anchor torn) finds the marker newest and falls back
//! to reading every block's first page.
//!
//! The anchor blocks alternate: when the active one has fewer than two
//! pages left, the seal erases the other and continues there.
//!
//! [`MountStep::Heads`]: crate::persist::mount::MountStep::Heads
//! [`MountStep::Anchor`]: crate::persist::mount::MountStep::Anchor
//! [`MountStep::Table`]: crate::persist::mount::MountStep::Table
//! [`MountStep::Seal`]: crate::persist::mount::MountStep::Seal

use crate::error::{rare, Error};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::Ftl;
use crate::medium::addr::{BlockId, PlaneId, Ppn};
use crate::medium::nand::{MetaBuf, NandCmd, NandError, NandResult, PageKind, Spare};
use crate::persist::checkpoint::{
    ANCHOR_TAG, C_ANCHOR, C_BAD, C_DATA, C_FREE, C_META, KIND_CHECKPOINT, KIND_DIRTY, MAGIC_ANCHOR,
    MAGIC_TABLE, PE_MASK, TAG_SHIFT,
};
use crate::persist::mount::MountStep;
use crate::persist::tp::{entries_per_page, table_pages_for};
use crate::persist::tp::{get_u32, put_u32, seal, unseal, META_HEADER, STREAM_META};

impl<H: Hooks> Ftl<'_, H> {
    /// Whether the drive keeps anchor blocks (mapping persistence on).
    pub(crate) fn anchors_on(&self) -> bool {
        self.ps.on && table_pages_for(self.ps.page_bytes, &self.g) > 0
    }

    /// Anchor block `i` (0 or 1): blocks 0 and 1 of plane 0.
    pub(crate) fn anchor_block(&self, i: u8) -> BlockId {
        BlockId(self.g.first_block(PlaneId(0)).0.wrapping_add(u32::from(i)))
    }

    /// Which anchor block `b` is, if any.
    pub(crate) fn anchor_index(&self, b: BlockId) -> Option<u8> {
        if !self.anchors_on() {
            return None;
        }
        (0..2u8).find(|i| self.anchor_block(*i) == b)
    }

    /// Block-table entries per page.
    fn table_entries(&self) -> u32 {
        entries_per_page(self.ps.page_bytes)
    }

    /// Pages of one block table (0 without anchors).
    pub(crate) fn table_pages(&self) -> u32 {
        if !self.ps.on {
            return 0;
        }
        table_pages_for(self.ps.page_bytes, &self.g)
    }

    /// Block-table entry of block `b` as mount should see it.
    fn table_entry(&self, b: BlockId) -> Result<u32, Error> {
        let m = self.blk(b)?;
        let class = match m.state {
            BlockState::Free | BlockState::Unknown => C_FREE,
            BlockState::Open | BlockState::Meta if m.next_page == 0 && m.pending == 0 => C_FREE,
            BlockState::Open | BlockState::Full | BlockState::Victim | BlockState::Retiring => {
                C_DATA
            }
            BlockState::Meta => C_META,
            BlockState::Bad => C_BAD,
            BlockState::Anchor => C_ANCHOR,
        };
        let tag = u32::from(H::block_tag(self, b)) << TAG_SHIFT;
        Ok(class << 28 | tag | m.pe.min(PE_MASK))
    }

    /// Fills buffer `buf` with block-table page `i` and seals it.
    pub(crate) fn table_encode(&mut self, buf: MetaBuf, i: u32) -> Result<(), Error> {
        const NO_BUF: Error = Error::Corrupt(&"block table buffer");
        let per = self.table_entries();
        let first = i.saturating_mul(per);
        let n = per.min(self.g.total_blocks().saturating_sub(first));
        self.ps.buf_mut(buf).ok_or(NO_BUF)?.fill(0xff);
        for j in 0..n {
            let e = self.table_entry(BlockId(first.wrapping_add(j)))?;
            let at = META_HEADER.wrapping_add((j as usize).saturating_mul(4));
            put_u32(self.ps.buf_mut(buf).ok_or(NO_BUF)?, at, e);
        }
        seal(self.ps.buf_mut(buf).ok_or(NO_BUF)?, MAGIC_TABLE, i, n);
        Ok(())
    }

    /// Mount: applies block-table page read into `buf`; false if it is not
    /// the page expected.
    pub(crate) fn table_apply(&mut self, buf: MetaBuf, want: u32) -> Result<bool, Error> {
        let per = self.table_entries();
        let (i, n) = match self.ps.buf(buf).and_then(|d| unseal(d, MAGIC_TABLE)) {
            Some(x) => x,
            None => return Ok(false),
        };
        let first = i.saturating_mul(per);
        if i != want || n != per.min(self.g.total_blocks().saturating_sub(first)) {
            return Ok(false);
        }
        for j in 0..n {
            let e = self.ps.buf(buf).map_or(u32::MAX, |d| {
                get_u32(d, META_HEADER.wrapping_add((j as usize).saturating_mul(4)))
            });
            let state = match e >> 28 {
                C_FREE => BlockState::Free,
                C_DATA => BlockState::Full,
                C_META => BlockState::Meta,
                C_BAD => BlockState::Bad,
                C_ANCHOR => BlockState::Anchor,
                _ => return Ok(false),
            };
            let b = BlockId(first.wrapping_add(j));
            let m = self.blk_mut(b)?;
            m.state = state;
            m.pe = e & PE_MASK;
            m.stream = if state == BlockState::Meta {
                STREAM_META
            } else {
                0
            };
            H::block_tag_mounted(self, b, (e >> TAG_SHIFT) as u8);
        }
        Ok(true)
    }

    /// Fills `buf` with an anchor page: a checkpoint naming `table`, or a
    /// dirty marker.
    fn anchor_encode(&mut self, buf: MetaBuf, table: Option<&[u32]>) -> Result<(), Error> {
        let Some(b) = self.ps.buf_mut(buf) else {
            return Err(rare(Error::Corrupt(&"anchor buffer")));
        };
        b.fill(0xff);
        let (kind, n) = match table {
            Some(t) => {
                for (i, p) in t.iter().enumerate() {
                    put_u32(b, META_HEADER.wrapping_add(i.saturating_mul(4)), *p);
                }
                (KIND_CHECKPOINT, t.len() as u32)
            }
            None => (KIND_DIRTY, 0),
        };
        seal(b, MAGIC_ANCHOR, kind, n);
        Ok(())
    }

    fn anchor_spare(&mut self) -> Spare {
        let mut spare = Spare {
            kind: PageKind::Meta,
            seq: self.next_seq(),
            ..Spare::default()
        };
        if let Some(l) = spare.lpns.get_mut(0) {
            *l = crate::medium::addr::Lpn(ANCHOR_TAG);
        }
        spare
    }

    /// Power-cut flush: the page the anchor goes to, if the active anchor
    /// block has one left.
    pub(crate) fn anchor_cut_page(&mut self) -> Option<Ppn> {
        let a = self.anc.active;
        if !self.anchors_on()
            || self.anc.bad.get(usize::from(a)).copied().unwrap_or(true)
            || self.anc.next_page >= self.g.pages_per_block
        {
            return None;
        }
        let page = self.g.ppn(self.anchor_block(a), self.anc.next_page);
        self.anc.next_page = self.anc.next_page.wrapping_add(1);
        Some(page)
    }

    /// Power-cut flush: emits the anchor page naming `table` at `page`.
    pub(crate) fn anchor_cut_emit(
        &mut self,
        page: Ppn,
        buf: MetaBuf,
        table: &[u32],
    ) -> Result<(), Error> {
        self.anchor_encode(buf, Some(table))?;
        let spare = self.anchor_spare();
        self.cut_emit_meta(page, buf, spare)
    }

    /// Mount: emits the next seal operation: an erase of the other anchor
    /// block when the active one cannot take the marker and the next
    /// checkpoint, else the dirty marker itself.
    pub(crate) fn seal_emit(&mut self) -> Result<(), Error> {
        let ppb = self.g.pages_per_block;
        let a = self.anc.active;
        let bad = |i: u8| self.anc.bad.get(usize::from(i)).copied().unwrap_or(true);
        let (a_bad, other_bad) = (bad(a), bad(a ^ 1));
        let roomy = !a_bad && !self.anc.seal_failed && self.anc.next_page.wrapping_add(2) <= ppb;
        if !roomy && !self.anc.seal_switched && !other_bad {
            self.anc.seal_switched = true;
            self.anc.seal_failed = false;
            let other = a ^ 1;
            let block = self.anchor_block(other);
            return self.mount_emit(
                OpKind::MountSealErase,
                NandCmd::Erase { block },
                u32::from(other),
            );
        }
        // No other block to move to: one page left will do for the marker.
        if a_bad || self.anc.seal_failed || self.anc.next_page >= ppb {
            return Err(rare(Error::Corrupt(&"no anchor block can take the seal")));
        }
        let Some(buf) = self.ps.buf_alloc() else {
            return Err(rare(Error::Corrupt(&"no metadata buffer for the seal")));
        };
        self.anchor_encode(buf, None)?;
        let page = self.g.ppn(self.anchor_block(a), self.anc.next_page);
        self.anc.next_page = self.anc.next_page.wrapping_add(1);
        // The marker must outrank the checkpoint it stales: continue from
        // the highest sequence number mount has seen.
        self.seq = self.seq.max(self.mnt.max_seq);
        let spare = self.anchor_spare();
        self.mount_emit(
            OpKind::MountSeal,
            NandCmd::ProgramMeta { page, buf, spare },
            0,
        )
    }

    /// Mount: reads page `page` of anchor block `i`.
    pub(crate) fn anchor_read(&mut self, i: u8, page: u32) -> Result<(), Error> {
        let Some(buf) = self.ps.buf_alloc() else {
            return Err(rare(Error::Corrupt(&"no metadata buffer for the anchor")));
        };
        let page = self.g.ppn(self.anchor_block(i), page);
        self.mount_emit(
            OpKind::MountAnchor,
            NandCmd::ReadMeta { page, buf },
            u32::from(i),
        )
    }

    /// Mount: an anchor page read finished; keeps the newest and reads on
    /// until the first erased page.
    pub(crate) fn anchor_read_done(
        &mut self,
        cmd: &NandCmd,
        tag: u32,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::ReadMeta { page, buf } = *cmd else {
            return Err(rare(Error::Corrupt(&"mount anchor op")));
        };
        let i = u8::try_from(tag).map_err(|_| rare(Error::Corrupt(&"anchor index")))?;
        let idx = usize::from(i);
        let pib = self.g.page_in_block(page);
        let next = match result {
            Ok(r) => {
                self.note_seq(r.spare.seq);
                let tagged = r.spare.kind == PageKind::Meta
                    && r.spare.lpns.first().is_some_and(|l| l.0 == ANCHOR_TAG);
                let parsed = if tagged {
                    self.ps.buf(buf).and_then(|d| unseal(d, MAGIC_ANCHOR))
                } else {
                    None
                };
                let newer = self.anc.newest_kind == NIL || r.spare.seq > self.anc.newest_seq;
                match parsed {
                    Some((kind, _)) if newer => {
                        if let Some(old) = self.anc.newest_buf.replace(buf) {
                            self.ps.buf_release(old);
                        }
                        self.anc.newest_seq = r.spare.seq;
                        self.anc.newest_kind = kind;
                        self.anc.newest_block = i;
                    }
                    None if tagged => {
                        // Damaged: an older checkpoint must not stand in for it.
                        self.mnt.anchor_damaged_seq = self.mnt.anchor_damaged_seq.max(r.spare.seq);
                        self.ps.buf_release(buf);
                    }
                    _ => self.ps.buf_release(buf),
                }
                true
            }
            Err(NandError::Erased) => {
                self.ps.buf_release(buf);
                if let Some(w) = self.anc.written.get_mut(idx) {
                    *w = pib;
                }
                false
            }
            Err(NandError::FactoryBad | NandError::DieFailed | NandError::BadAddress) => {
                self.ps.buf_release(buf);
                if let Some(b) = self.anc.bad.get_mut(idx) {
                    *b = true;
                }
                false
            }
            // Torn: read on.
            Err(_) => {
                self.ps.buf_release(buf);
                true
            }
        };
        let following = pib.wrapping_add(1);
        if next && following < self.g.pages_per_block {
            self.anchor_read(i, following)?;
        } else if next {
            if let Some(w) = self.anc.written.get_mut(idx) {
                *w = self.g.pages_per_block;
            }
        }
        Ok(())
    }

    /// Mount: both anchor blocks read. Picks where the next anchor page
    /// goes and whether the block table can be trusted.
    pub(crate) fn anchor_scanned(&mut self) -> Result<(), Error> {
        let newest = self.anc.newest_kind != NIL;
        let first_good = if self.anc.bad.first().copied().unwrap_or(true) {
            1
        } else {
            0
        };
        self.anc.active = if newest {
            self.anc.newest_block
        } else {
            first_good
        };
        self.anc.next_page = self
            .anc
            .written
            .get(usize::from(self.anc.active))
            .copied()
            .unwrap_or(self.g.pages_per_block);
        for i in 0..2u8 {
            let bad = self.anc.bad.get(usize::from(i)).copied().unwrap_or(true);
            let b = self.anchor_block(i);
            self.blk_mut(b)?.state = if bad {
                BlockState::Bad
            } else {
                BlockState::Anchor
            };
        }
        let pages = self
            .anc
            .newest_buf
            .and_then(|b| self.ps.buf(b))
            .and_then(|d| unseal(d, MAGIC_ANCHOR))
            .map(|(_, n)| n);
        self.mnt.cursor = 0;
        let trusted = self.mnt.anchor_damaged_seq < self.anc.newest_seq;
        if trusted && self.anc.newest_kind == KIND_CHECKPOINT && pages == Some(self.table_pages()) {
            self.mnt.step = MountStep::Table;
        } else {
            if let Some(b) = self.anc.newest_buf.take() {
                self.ps.buf_release(b);
            }
            self.mnt.step = MountStep::Heads;
        }
        Ok(())
    }

    /// Mount: the seal's erase of anchor block `tag` finished.
    pub(crate) fn seal_erase_done(&mut self, tag: u32, ok: bool) -> Result<(), Error> {
        let i = u8::try_from(tag).map_err(|_| rare(Error::Corrupt(&"anchor index")))?;
        let b = self.anchor_block(i);
        let m = self.blk_mut(b)?;
        m.pe = m.pe.wrapping_add(1);
        if ok {
            self.anc.active = i;
            self.anc.next_page = 0;
        } else {
            m.state = BlockState::Bad;
            if let Some(x) = self.anc.bad.get_mut(usize::from(i)) {
                *x = true;
            }
        }
        Ok(())
    }
}

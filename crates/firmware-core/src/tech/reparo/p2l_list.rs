//! Block-level P2L entrustment on flash (seed 001, Sec. 5.5, Fig. 32).
//!
//! The last page of every block is a list page ([`crate::tech::reparo::superblock`]):
//! when the core programs one, [`BlockLists::on_emit`] turns the empty
//! program into a metadata program carrying the LBA lists of the blocks of
//! the neighbour die (the next die that has not failed, same plane index)
//! whose data pages are complete. Lists of blocks still being written, and
//! of complete blocks no list page has taken yet, stay in the controller's
//! RAM (the [`P2lRecord`]); they survive a die failure because the
//! controller does.
//!
//! After a die fails, the *Identifier* ([`BlockLists::next_read`],
//! [`BlockLists::read_done`]) reads one list page for each failed block
//! whose list is on flash (a page may carry several lists), takes the rest
//! from RAM, and checks every listed LBA against the L2P table.
//!
//! List page layout, little-endian 32-bit words: magic, list count, then
//! per list: block id, entry count, and one entry per data unit of that
//! block in unit order (`lpn + 1`, 0 for none).

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::Ftl;
use crate::medium::addr::{BlockId, Geometry, Lpn, PlaneId, Ppn, Pun};
use crate::medium::nand::{MetaBuf, NandCmd, NandOp, NandResult, OpId, Origin, PageKind};
use crate::tech::reparo::p2l::{IdentJob, P2lCost, P2lRecord};

/// Page buffers for list pages being programmed or read.
pub const LIST_BUFS: usize = 4;
/// [`MetaBuf`] numbers of the list buffers start here (the FTL's own
/// metadata buffers are numbered from 0).
pub const LIST_BUF_BASE: u16 = 0xFF00;
/// Complete blocks per plane whose lists may wait for a list page; more
/// stay in RAM for good.
pub const PENDING: usize = 8;
/// Operation id of the *Identifier*'s list-page reads.
pub const IDENT_ID: OpId = OpId::wrapper(1);
/// First word of a list page.
const MAGIC: u32 = 0x5032_4C4C;
/// Holder value: the block's list is in RAM only.
const IN_RAM: u32 = 0;

/// Words of [`ListLend::holders`] for a core of `blocks` blocks in
/// `planes` planes: one per block (the page holding its list), then a
/// queue of [`PENDING`] lists plus its length per plane (the complete
/// blocks waiting for a list page).
pub const fn holder_words(blocks: usize, planes: usize) -> usize {
    blocks.wrapping_add(planes.saturating_mul(PENDING.wrapping_add(1)))
}

/// Memory the block-level lists borrow.
pub struct ListLend<'a> {
    /// [`holder_words`] words: per block the page holding its list plus
    /// one (0: in RAM), then the per-plane queues of waiting lists.
    pub holders: &'a mut [u32],
    /// [`LIST_BUFS`] page buffers, `page_bytes` each.
    pub bufs: &'a mut [u8],
}

/// Block-level P2L lists: which page holds each block's list, the lists
/// waiting for a list page, and the *Identifier*'s reads.
pub struct BlockLists<'a> {
    g: Geometry,
    data_units: u32,
    holders: &'a mut [u32],
    bufs: &'a mut [u8],
    buf_ops: [Option<OpId>; LIST_BUFS],
    /// Per plane: queue length, then [`PENDING`] block ids.
    pending: &'a mut [u32],
    job: IdentJob,
}

/// Top bit of a holder word: the block was identified in the current run.
const DONE: u32 = 1 << 31;

impl<'a> BlockLists<'a> {
    /// Lists for `ftl`'s geometry over lent memory.
    pub fn new<H: Hooks>(ftl: &Ftl<'_, H>, lend: ListLend<'a>) -> Result<BlockLists<'a>, Error> {
        let g = ftl.config().geometry;
        let blocks = g.total_blocks() as usize;
        if lend.holders.len() < holder_words(blocks, g.planes() as usize) {
            return Err(Error::TableTooSmall(&"p2l lists: holders"));
        }
        if lend.bufs.len() < LIST_BUFS.saturating_mul(g.page_bytes as usize) {
            return Err(Error::TableTooSmall(&"p2l lists: page buffers"));
        }
        let data_units = ftl.data_units_per_block();
        if (data_units as usize).saturating_add(4) > (g.page_bytes / 4) as usize {
            return Err(Error::InvalidConfig(
                &"p2l lists: a block's list does not fit in a page",
            ));
        }
        lend.holders.fill(IN_RAM);
        let (holders, pending) = lend.holders.split_at_mut(blocks);
        Ok(BlockLists {
            g,
            data_units,
            holders,
            pending,
            bufs: lend.bufs,
            buf_ops: [None; LIST_BUFS],
            job: IdentJob::default(),
        })
    }

    /// Page holding `b`'s list, if it is on flash.
    pub fn holder(&self, b: BlockId) -> Option<Ppn> {
        let h = self.holders.get(b.0 as usize).copied().unwrap_or(IN_RAM) & !DONE;
        h.checked_sub(1).map(Ppn)
    }

    fn set_holder(&mut self, b: BlockId, v: u32) {
        if let Some(h) = self.holders.get_mut(b.0 as usize) {
            *h = v;
        }
    }

    /// The plane whose lists the list pages of plane `q` carry: same plane
    /// index on the next die that has not failed (`None`: no other die).
    fn neighbour(&self, q: PlaneId, retired: &[bool]) -> Option<PlaneId> {
        let ppd = u32::from(self.g.planes_per_die);
        let planes = self.g.planes();
        let mut n = q.0;
        for _ in 1..self.g.dies() {
            n = n.wrapping_add(ppd).checked_rem(planes)?;
            let die = self.g.die_of_plane(PlaneId(n));
            if !retired.get(die.0 as usize).copied().unwrap_or(false) {
                return Some(PlaneId(n));
            }
        }
        None
    }

    /// Plane `p`'s queue: its length word and its [`PENDING`] slots.
    fn queue(&mut self, p: usize) -> Option<(&mut u32, &mut [u32])> {
        let words = PENDING.wrapping_add(1);
        let start = p.checked_mul(words)?;
        self.pending
            .get_mut(start..start.checked_add(words)?)?
            .split_first_mut()
    }

    /// The block ids waiting in plane `p`'s queue.
    fn waiting(&self, p: usize) -> &[u32] {
        let start = p.saturating_mul(PENDING.wrapping_add(1));
        let len = self.pending.get(start).copied().unwrap_or(0) as usize;
        self.pending
            .get(start.wrapping_add(1)..start.wrapping_add(1).wrapping_add(len))
            .unwrap_or(&[])
    }

    fn push_pending(&mut self, b: BlockId) {
        let p = self.g.plane_of(b).0 as usize;
        let Some((len, q)) = self.queue(p) else {
            return;
        };
        let n = *len as usize;
        if q.get(..n).is_some_and(|s| s.contains(&b.0)) {
            return;
        }
        // A full queue leaves the list in RAM for good.
        if let Some(slot) = q.get_mut(n) {
            *slot = b.0;
            *len = len.wrapping_add(1);
        }
    }

    fn drop_pending(&mut self, b: BlockId) {
        let p = self.g.plane_of(b).0 as usize;
        let Some((len, q)) = self.queue(p) else {
            return;
        };
        let n = *len as usize;
        if let Some(i) = q.get(..n).and_then(|s| s.iter().position(|&x| x == b.0)) {
            if let Some(s) = q.get_mut(i..n) {
                s.rotate_left(1);
            }
            *len = len.saturating_sub(1);
        }
    }

    /// Looks at an operation on its way to the medium: a data program that
    /// completes a block queues the block's list; an empty list-page
    /// program becomes a metadata program carrying the neighbour die's
    /// waiting lists (left as it is when none wait or no buffer is free).
    pub fn on_emit<H: Hooks>(
        &mut self,
        ftl: &Ftl<'_, H>,
        record: &P2lRecord<'_>,
        retired: &[bool],
        op: &mut NandOp,
    ) -> Result<(), Error> {
        let last_data = ftl.data_end().saturating_sub(1);
        match op.cmd {
            NandCmd::Program { page, spare, .. }
            | NandCmd::Copyback {
                dst: page, spare, ..
            } if spare.kind == PageKind::Data
                && !spare.units.is_empty()
                && self.g.page_in_block(page) == last_data =>
            {
                self.push_pending(self.g.block_of(page));
            }
            NandCmd::Program { page, spare, .. }
                if spare.kind == PageKind::Meta
                    && spare.units.is_empty()
                    && self.g.page_in_block(page) == ftl.data_end() =>
            {
                self.fill(record, retired, op, page, spare)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn fill(
        &mut self,
        record: &P2lRecord<'_>,
        retired: &[bool],
        op: &mut NandOp,
        page: Ppn,
        spare: crate::medium::nand::Spare,
    ) -> Result<(), Error> {
        let q = self.g.plane_of_page(page);
        let Some(n) = self.neighbour(q, retired) else {
            return Ok(());
        };
        let ni = n.0 as usize;
        let waiting = self.waiting(ni).len();
        if waiting == 0 {
            return Ok(());
        }
        // The identification read keeps the last buffer.
        let Some(bi) = (0..LIST_BUFS.saturating_sub(1))
            .find(|&i| self.buf_ops.get(i).is_some_and(|o| o.is_none()))
        else {
            return Ok(());
        };
        let pb = self.g.page_bytes as usize;
        let words = pb / 4;
        let per_list = (self.data_units as usize).wrapping_add(2);
        let fit = words.saturating_sub(2).checked_div(per_list).unwrap_or(0);
        let take = waiting.min(fit);
        let mut listed = [0u32; PENDING];
        if let (Some(src), Some(d)) = (self.waiting(ni).get(..take), listed.get_mut(..take)) {
            d.copy_from_slice(src);
        }
        {
            let start = bi.saturating_mul(pb);
            let buf = self
                .bufs
                .get_mut(start..start.wrapping_add(pb))
                .or_rare(Error::Corrupt(&"list buffer"))?;
            buf.fill(0);
            let mut w = Words { buf, at: 0 };
            w.put(MAGIC)?;
            w.put(take as u32)?;
            for &b in listed.get(..take).unwrap_or(&[]) {
                w.put(b)?;
                w.put(self.data_units)?;
                let entries = record.block_entries(&self.g, BlockId(b))?;
                for &e in entries.get(..self.data_units as usize).unwrap_or(&[]) {
                    w.put(e)?;
                }
            }
        }
        for &b in listed.get(..take).unwrap_or(&[]) {
            self.set_holder(BlockId(b), page.0.wrapping_add(1));
        }
        if let Some((len, qs)) = self.queue(ni) {
            if let Some(s) = qs.get_mut(..waiting) {
                s.rotate_left(take);
            }
            *len = len.saturating_sub(u32::try_from(take).unwrap_or(u32::MAX));
        }
        if let Some(o) = self.buf_ops.get_mut(bi) {
            *o = Some(op.id);
        }
        let buf = MetaBuf(LIST_BUF_BASE.wrapping_add(u16::try_from(bi).unwrap_or(0)));
        op.cmd = NandCmd::ProgramMeta { page, buf, spare };
        Ok(())
    }

    /// The bytes of list buffer `buf`, for the driver.
    pub fn meta(&mut self, buf: MetaBuf) -> Option<&mut [u8]> {
        let i = usize::from(buf.0.checked_sub(LIST_BUF_BASE)?);
        let pb = self.g.page_bytes as usize;
        let start = i.checked_mul(pb)?;
        self.bufs.get_mut(start..start.checked_add(pb)?)
    }

    /// A list-page program finished: frees its buffer; if it failed, its
    /// lists go back to RAM.
    pub fn on_complete(&mut self, id: OpId, result: &NandResult) {
        let Some(bi) = self.buf_ops.iter().position(|o| *o == Some(id)) else {
            return;
        };
        if let Some(o) = self.buf_ops.get_mut(bi) {
            *o = None;
        }
        if result.is_ok() {
            return;
        }
        let pb = self.g.page_bytes as usize;
        let start = bi.saturating_mul(pb);
        let mut failed = [0u32; PENDING];
        let mut n = 0usize;
        if let Some(buf) = self.bufs.get(start..start.wrapping_add(pb)) {
            let _ = parse(buf, |b, _| {
                if let Some(f) = failed.get_mut(n) {
                    *f = b;
                    n = n.wrapping_add(1);
                }
            });
        }
        for &b in failed.get(..n).unwrap_or(&[]) {
            self.set_holder(BlockId(b), IN_RAM);
        }
    }

    /// Block `b` was erased: its list goes, and the lists its list page
    /// carried go back to waiting.
    pub fn on_erase(&mut self, b: BlockId, retired: &[bool]) {
        self.set_holder(b, IN_RAM);
        self.drop_pending(b);
        let q = self.g.plane_of(b);
        if let Some(n) = self.neighbour(q, retired) {
            let g = self.g;
            self.requeue_held_in(n, |h| g.block_of(h) == b);
        }
    }

    /// Die `d` was retired: the lists its list pages carried go back to
    /// waiting, for list pages of the live die before it.
    pub fn on_retire_die(&mut self, d: crate::medium::addr::DieId) {
        let g = self.g;
        for n in 0..g.planes() {
            let n = PlaneId(n);
            if g.die_of_plane(n) != d {
                self.requeue_held_in(n, |h| g.die_of(g.block_of(h)) == d);
            }
        }
    }

    /// Blocks of plane `n` whose list sits in a page `held` accepts go back
    /// to waiting (or RAM).
    fn requeue_held_in(&mut self, n: PlaneId, held: impl Fn(Ppn) -> bool) {
        let first = self.g.first_block(n).0;
        for x in first..first.wrapping_add(self.g.blocks_per_plane) {
            if let Some(h) = self.holder(BlockId(x)) {
                if held(h) {
                    self.set_holder(BlockId(x), IN_RAM);
                    self.push_pending(BlockId(x));
                }
            }
        }
    }

    /// Starts an identification run over the retired dies.
    pub fn start(&mut self) {
        for h in self.holders.iter_mut() {
            *h &= !DONE;
        }
        self.job = IdentJob::started();
    }

    /// Whether an identification run is under way.
    pub fn running(&self) -> bool {
        self.job.active
    }

    /// The finished run's work, once (`None` while it runs or after it
    /// was taken).
    pub fn take_result(&mut self) -> Option<P2lCost> {
        self.job.take_result()
    }

    fn is_done(&self, b: u32) -> bool {
        self.holders.get(b as usize).is_some_and(|h| h & DONE != 0)
    }

    fn mark_done(&mut self, b: u32) {
        if let Some(h) = self.holders.get_mut(b as usize) {
            *h |= DONE;
        }
    }

    /// Advances the run: identifies blocks whose lists are in RAM at once
    /// (calling `found` for each failed LBA) and returns the next list-page
    /// read, or `None` when a read is out or the run has finished.
    pub fn next_read<H: Hooks>(
        &mut self,
        ftl: &Ftl<'_, H>,
        record: &P2lRecord<'_>,
        retired: &[bool],
        mut found: impl FnMut(Lpn),
    ) -> Result<Option<NandOp>, Error> {
        if !self.job.active || self.job.reading {
            return Ok(None);
        }
        let total = self.g.total_blocks();
        while self.job.cursor < total {
            let b = self.job.cursor;
            let die = self.g.die_of(BlockId(b));
            if !retired.get(die.0 as usize).copied().unwrap_or(false) || self.is_done(b) {
                self.job.cursor = b.wrapping_add(1);
                continue;
            }
            if !record.block_programmed(&self.g, BlockId(b))? {
                self.job.cursor = b.wrapping_add(1);
                continue;
            }
            match self.holder(BlockId(b)) {
                None => {
                    let c = record.identify_block(ftl, BlockId(b), &mut found)?;
                    self.job.cost = self.job.cost.plus(P2lCost { ram_blocks: 1, ..c });
                    self.mark_done(b);
                    self.job.cursor = b.wrapping_add(1);
                }
                Some(page) => {
                    self.job.reading = true;
                    let buf = MetaBuf(
                        LIST_BUF_BASE
                            .wrapping_add(u16::try_from(LIST_BUFS.saturating_sub(1)).unwrap_or(0)),
                    );
                    return Ok(Some(NandOp {
                        id: IDENT_ID,
                        cmd: NandCmd::ReadMeta { page, buf },
                        origin: Origin::Meta,
                    }));
                }
            }
        }
        self.job.finish();
        Ok(None)
    }

    /// A list-page read of the run finished: every list in the page that
    /// belongs to a failed block held there is checked against the L2P
    /// table. A failed read (the holder's die failed too) ends the run with
    /// an error.
    pub fn read_done<H: Hooks>(
        &mut self,
        ftl: &Ftl<'_, H>,
        page: Ppn,
        result: &NandResult,
        retired: &[bool],
        mut found: impl FnMut(Lpn),
    ) -> Result<(), Error> {
        self.job.reading = false;
        self.job.cost.page_reads = self.job.cost.page_reads.wrapping_add(1);
        if result.is_err() {
            self.job.active = false;
            return Err(Error::InvalidConfig(
                &"p2l lists: a list page is unreadable (its die failed too)",
            ));
        }
        let pb = self.g.page_bytes as usize;
        let start = LIST_BUFS.saturating_sub(1).saturating_mul(pb);
        let buf = self
            .bufs
            .get(start..start.wrapping_add(pb))
            .or_rare(Error::Corrupt(&"list buffer"))?;
        let g = self.g;
        let mut lists = [0u32; PENDING];
        let mut nl = 0usize;
        let mut cost = P2lCost::default();
        let holders = &*self.holders;
        let ok = parse(buf, |b, entries| {
            let block = BlockId(b);
            let die = g.die_of(block);
            let mine = holders.get(b as usize).copied().unwrap_or(IN_RAM) & !DONE
                == page.0.wrapping_add(1);
            if !mine || !retired.get(die.0 as usize).copied().unwrap_or(false) {
                return;
            }
            // A block's units are numbered consecutively.
            let first = g.pun(g.ppn(block, 0), 0).0;
            for (i, e) in entries.enumerate() {
                if let Some(lpn) = e.checked_sub(1) {
                    let pun = Pun(first.saturating_add(u32::try_from(i).unwrap_or(u32::MAX)));
                    cost.check(ftl, Lpn(lpn), pun, &mut found);
                }
            }
            if let Some(l) = lists.get_mut(nl) {
                *l = b;
                nl = nl.wrapping_add(1);
            }
        });
        if !ok {
            self.job.active = false;
            return Err(rare(Error::Corrupt(&"p2l lists: malformed list page")));
        }
        let listed = lists.get(..nl).unwrap_or(&[]);
        if !listed.contains(&self.job.cursor) {
            self.job.active = false;
            return Err(rare(Error::Corrupt(
                &"p2l lists: the list page lacks the block's list",
            )));
        }
        for &b in listed {
            self.mark_done(b);
        }
        self.job.cost = self.job.cost.plus(cost);
        Ok(())
    }
}

/// Little-endian word writer over a page buffer.
struct Words<'b> {
    buf: &'b mut [u8],
    at: usize,
}

impl Words<'_> {
    fn put(&mut self, v: u32) -> Result<(), Error> {
        let end = self.at.wrapping_add(4);
        let d = self
            .buf
            .get_mut(self.at..end)
            .or_rare(Error::Corrupt(&"list page overflow"))?;
        d.copy_from_slice(&v.to_le_bytes());
        self.at = end;
        Ok(())
    }
}

fn word(buf: &[u8], i: usize) -> Option<u32> {
    let s = buf.get(i.checked_mul(4)?..i.checked_mul(4)?.checked_add(4)?)?;
    Some(u32::from_le_bytes([
        *s.first()?,
        *s.get(1)?,
        *s.get(2)?,
        *s.get(3)?,
    ]))
}

/// Calls `each(block, entries)` for every list of a list page; false if
/// the page is not a well-formed list page.
fn parse(buf: &[u8], mut each: impl FnMut(u32, &mut dyn Iterator<Item = u32>)) -> bool {
    if word(buf, 0) != Some(MAGIC) {
        return false;
    }
    let Some(count) = word(buf, 1) else {
        return false;
    };
    let mut at = 2usize;
    for _ in 0..count {
        let (Some(b), Some(n)) = (word(buf, at), word(buf, at.wrapping_add(1))) else {
            return false;
        };
        let first = at.wrapping_add(2);
        let end = first.wrapping_add(n as usize);
        if word(buf, end.saturating_sub(1)).is_none() && n > 0 {
            return false;
        }
        let mut it = (first..end).filter_map(|i| word(buf, i));
        each(b, &mut it);
        at = end;
    }
    true
}

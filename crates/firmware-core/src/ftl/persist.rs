//! Mapping persistence: the L2P table on flash as translation pages, the
//! capacitor budget over dirty ones, and the metadata region that holds them.
//!
//! The whole L2P table lives in DRAM; flash keeps a copy cut into
//! translation pages (TPs) of `map_entries_per_page` entries. A mapping
//! change that reaches flash (a program completes, a trim, a loss) makes its
//! TP dirty. The capacitor can write at most `B` TPs at a power cut (see
//! [`crate::ftl::power`]), so the core keeps
//!
//! ```text
//! dirty TPs + TPs being written back + TPs in-flight programs may dirty <= B
//! ```
//!
//! Before a data program is emitted it reserves the TPs its units belong to
//! (a TP already dirty or reserved costs nothing more); when the sum would
//! pass `B`, the least recently updated dirty TPs that no program in flight
//! will dirty again are written back (up to a batch as wide as the dies,
//! spread over the planes' open region blocks) and the program waits. With
//! `B` = every TP nothing is written while running (full protection).
//!
//! TPs and recovery records go to a **metadata region**: a few blocks per
//! plane taken from the free pool at format, written as a log and cleaned by
//! rewriting their live TPs from DRAM. Enough erased region pages are always
//! kept for the power-cut flush. A TP page carries a header, the entries and a
//! CRC-32; its spare area names the TP and carries the program sequence
//! number, so the newest copy wins at recovery ([`crate::ftl::mount`]).

use crate::error::{rare, Error};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::{Ftl, Phase};
use crate::map::loc::Loc;
use crate::medium::addr::{BlockId, Lpn, PlaneId, Ppn};
use crate::medium::nand::{MetaBuf, NandCmd, NandResult, Origin, PageKind, Spare};
use crate::persist::tp::{
    get_u32, put_u32, seal, unseal, ENTRY_LOST, ENTRY_UNMAPPED, F_MOVING, F_RESERVED, F_WRITING,
    MAGIC_TP, META_HEADER, STREAM_META,
};
use crate::persist::Tpn;

impl<H: Hooks> Ftl<'_, H> {
    /// A mapping entry reached flash state `loc` (not a buffer slot): its TP is dirty.
    #[inline]
    pub(crate) fn map_touch(&mut self, lpn: Lpn) -> Result<(), Error> {
        if self.deferred_on() && self.ps.def.touching {
            self.map_stale(lpn);
        } else if self.ps.on {
            let tp = self.ps.tp_of(lpn);
            self.ps.mark_dirty(tp)?;
            H::tp_dirty(self, tp, true)?;
        }
        Ok(())
    }

    /// Distinct TPs of the logical units of one page.
    fn tps_of(&self, lpns: &[Lpn]) -> ([Tpn; crate::medium::addr::MAX_UNITS_PER_PAGE], usize) {
        let mut out = [Tpn(0); crate::medium::addr::MAX_UNITS_PER_PAGE];
        let mut n = 0usize;
        for l in lpns {
            let tp = self.ps.tp_of(*l);
            if !out.iter().take(n).any(|t| *t == tp) {
                if let Some(o) = out.get_mut(n) {
                    *o = tp;
                    n = n.wrapping_add(1);
                }
            }
        }
        (out, n)
    }

    /// Whether one more data page (up to a page of TPs) fits in the budget
    /// now; if not, write-backs start and the caller waits.
    pub(crate) fn map_room_for_page(&mut self) -> Result<bool, Error> {
        if !self.ps.on {
            return Ok(true);
        }
        // A page's units dirty at most a page of TPs. On a drive with fewer
        // TPs than a page has units the budget (one per TP at most) is
        // below a page, and a page costing `upp` would never fit: there it
        // costs the clean TPs it can dirty. (Everywhere, that tighter bound
        // would spare needless write-backs, but it changes the steady state
        // fast preconditioning reproduces: not yet.)
        let upp = u32::from(self.g.units_per_page);
        let cost = if self.ps.n_tp < upp {
            upp.min(self.ps.n_tp.saturating_sub(self.ps.dirty.count()))
        } else {
            upp
        };
        if self.ps.used().saturating_add(cost) <= self.budget_now() {
            return Ok(true);
        }
        self.ps.waiting = true;
        self.map_write_back()?;
        Ok(false)
    }

    /// Whether the data page described by `spare` (its units filled in)
    /// fits in the budget now: each of its TPs that is neither dirty nor
    /// reserved by programs in flight costs one unit. If not, write-backs
    /// start and the caller waits.
    pub(crate) fn map_room_for(&mut self, spare: &Spare) -> Result<bool, Error> {
        if !self.ps.on {
            return Ok(true);
        }
        let (tps, k) = self.tps_of_page(spare);
        let cost = tps
            .iter()
            .take(k)
            .filter(|tp| !self.ps.dirty.is_dirty(**tp) && self.ps.flag(**tp) & F_RESERVED == 0)
            .count();
        let cost = u32::try_from(cost).unwrap_or(u32::MAX);
        if cost == 0 || self.ps.used().saturating_add(cost) <= self.budget_now() {
            return Ok(true);
        }
        self.ps.waiting = true;
        self.map_write_back()?;
        Ok(false)
    }

    /// Distinct TPs of the units a data page carries.
    fn tps_of_page(
        &self,
        spare: &Spare,
    ) -> ([Tpn; crate::medium::addr::MAX_UNITS_PER_PAGE], usize) {
        let mut lpns = [Lpn(0); crate::medium::addr::MAX_UNITS_PER_PAGE];
        let mut n = 0usize;
        for (i, l) in spare.lpns.iter().enumerate() {
            if u8::try_from(i).is_ok_and(|i| spare.units.contains(i)) {
                if let Some(d) = lpns.get_mut(n) {
                    *d = *l;
                    n = n.wrapping_add(1);
                }
            }
        }
        self.tps_of(lpns.get(..n).unwrap_or(&[]))
    }

    /// Reserves the TPs of the units of a data page about to be programmed
    /// (after [`Self::map_room_for_page`] or [`Self::map_room_for`] said yes): a TP holds one unit of
    /// budget while any program that will dirty it is in flight, however
    /// many, so a run of pages of one TP (as LIDF flushes) costs one.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn map_reserve_page(&mut self, spare: &Spare) {
        if self.ps.on {
            self.map_inflight(spare, true);
        }
    }

    /// Releases what [`Self::map_reserve_page`] reserved.
    #[cfg_attr(not(target_arch = "arm"), inline(always))]
    pub(crate) fn map_release_page(&mut self, spare: &Spare) {
        if self.ps.on {
            self.map_inflight(spare, false);
        }
    }

    /// Counts (or uncounts) the programs in flight of each TP of a page,
    /// with the mapping persisted.
    fn map_inflight(&mut self, spare: &Spare, take: bool) {
        let (tps, k) = self.tps_of_page(spare);
        for tp in tps.iter().take(k) {
            let dirty = self.ps.dirty.is_dirty(*tp);
            let Some(c) = self.ps.inflight.get_mut(tp.0 as usize) else {
                continue;
            };
            let (was, now) = (
                *c,
                if take {
                    c.wrapping_add(1)
                } else {
                    c.saturating_sub(1)
                },
            );
            *c = now;
            let flagged = self.ps.flag(*tp) & F_RESERVED != 0;
            if was == 0 && now > 0 && !dirty && !flagged {
                self.ps.set_flag(*tp, F_RESERVED, true);
                self.ps.reserved = self.ps.reserved.wrapping_add(1);
            } else if was > 0 && now == 0 && flagged {
                self.ps.set_flag(*tp, F_RESERVED, false);
                self.ps.reserved = self.ps.reserved.saturating_sub(1);
            }
        }
    }

    /// A trim or loss would dirty `lpn`'s TP: whether the budget allows it now.
    pub(crate) fn map_may_touch(&mut self, lpn: Lpn) -> Result<bool, Error> {
        if !self.ps.on || self.ps.dirty.is_dirty(self.ps.tp_of(lpn)) {
            return Ok(true);
        }
        if self.ps.used() < self.budget_now() {
            return Ok(true);
        }
        self.ps.waiting = true;
        self.map_write_back()?;
        Ok(false)
    }

    /// Writes back least recently updated dirty TPs while the budget is
    /// tight, up to a batch as wide as the dies program in parallel; only
    /// TPs no data program in flight will dirty again (see
    /// [`Persist::oldest_idle_dirty`]).
    pub(crate) fn map_write_back(&mut self) -> Result<(), Error> {
        if !self.ps.on || !self.phase.ready() {
            return Ok(());
        }
        // The budget is short of one page's worth of room: write back a
        // batch as wide as the dies, so the write-backs program in parallel
        // and the next ones wait a whole batch of data pages.
        let room = u32::from(self.g.units_per_page);
        if self.ps.used().saturating_add(room) <= self.budget_now() {
            return Ok(());
        }
        let batch = self.g.dies().max(1);
        let mut issued = 0u32;
        while issued < batch {
            if self.ps.buf_free == 0 || self.ops_available() == 0 {
                break;
            }
            let Some(tp) = self.ps.oldest_idle_dirty()? else {
                break;
            };
            let Some(page) = self.region_page_avoiding(self.ps.cleaning)? else {
                self.region_maintain()?;
                break;
            };
            self.ps.take_for_write_back(tp)?;
            H::tp_dirty(self, tp, false)?;
            self.tp_emit(tp, page, OpKind::MapProgram)?;
            issued = issued.wrapping_add(1);
        }
        if issued > 0 {
            self.stats.map_flushes = self.stats.map_flushes.wrapping_add(1);
        }
        Ok(())
    }

    /// Encodes TP `tp` from the DRAM table into a buffer and emits its program.
    pub(crate) fn tp_emit(&mut self, tp: Tpn, page: Ppn, kind: OpKind) -> Result<(), Error> {
        let Some(buf) = self.ps.buf_alloc() else {
            return Err(rare(Error::Corrupt(&"no metadata buffer")));
        };
        let stale = if self.deferred_on() {
            self.stale_write_start(tp, kind)
        } else {
            0
        };
        self.tp_encode(tp, buf)?;
        let mut spare = Spare {
            kind: PageKind::Map,
            ..Spare::default()
        };
        if let Some(l) = spare.lpns.get_mut(0) {
            *l = Lpn(tp.0);
        }
        spare.seq = self.next_seq();
        self.emit(
            kind,
            NandCmd::ProgramMeta { page, buf, spare },
            Origin::Meta,
            stale,
            tp.0,
        )
    }

    fn tp_encode(&mut self, tp: Tpn, buf: MetaBuf) -> Result<(), Error> {
        let epp = self.ps.epp as usize;
        let first = (tp.0 as usize).saturating_mul(epp);
        let logical = self.cfg.logical_units as usize;
        let n = epp.min(logical.saturating_sub(first));
        let Some(l2p) = self.t.l2p.get(first..first.wrapping_add(n)) else {
            return Err(rare(Error::Corrupt(&"tp range")));
        };
        let Some(b) = (if let Some(start) = usize::from(buf.0).checked_mul(self.ps.page_bytes) {
            self.ps
                .meta
                .get_mut(start..start.saturating_add(self.ps.page_bytes))
        } else {
            None
        }) else {
            return Err(rare(Error::Corrupt(&"metadata buffer")));
        };
        b.fill(0xff);
        for (i, w) in l2p.iter().enumerate() {
            let v = match Loc::decode(*w) {
                Loc::Flash(p) => p.0,
                Loc::Lost => ENTRY_LOST,
                Loc::Unmapped | Loc::Buffer(_) => ENTRY_UNMAPPED,
            };
            put_u32(b, META_HEADER.wrapping_add(i.saturating_mul(4)), v);
        }
        seal(b, MAGIC_TP, tp.0, n as u32);
        Ok(())
    }

    /// Applies a TP page read at mount to the DRAM table.
    pub(crate) fn tp_decode(&mut self, buf: MetaBuf) -> Result<Option<Tpn>, Error> {
        let Some(b) = self.ps.buf(buf) else {
            return Err(rare(Error::Corrupt(&"metadata buffer")));
        };
        let Some((tp, n)) = unseal(b, MAGIC_TP) else {
            return Ok(None);
        };
        let epp = self.ps.epp as usize;
        let first = (tp as usize).saturating_mul(epp);
        let units = self.g.total_units();
        if tp >= self.ps.n_tp || n as usize > epp {
            return Ok(None);
        }
        for i in 0..n as usize {
            let v = get_u32(b, META_HEADER.wrapping_add(i.saturating_mul(4)));
            let loc = match v {
                ENTRY_UNMAPPED => Loc::Unmapped,
                ENTRY_LOST => Loc::Lost,
                p if p < units => Loc::Flash(crate::medium::addr::Pun(p)),
                _ => {
                    return Err(rare(Error::Corrupt(
                        &"translation page entry outside the array",
                    )))
                }
            };
            if let Some(e) = self.t.l2p.get_mut(first.wrapping_add(i)) {
                *e = loc.encode();
            }
        }
        Ok(Some(Tpn(tp)))
    }

    /// Completion of a TP write (write-back, region move or power-cut flush).
    pub(crate) fn map_program_done(
        &mut self,
        kind: OpKind,
        cmd: &NandCmd,
        tp: u32,
        stale: u8,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::ProgramMeta { page, buf, spare } = cmd else {
            return Err(rare(Error::Corrupt(&"map op is not a metadata program")));
        };
        self.ps.buf_release(*buf);
        let tp = Tpn(tp);
        let b = self.g.block_of(*page);
        {
            let m = self.blk_mut(b)?;
            m.pending = m.pending.saturating_sub(1);
        }
        if kind == OpKind::MapProgram {
            self.ps.writing = self.ps.writing.saturating_sub(1);
            self.ps.writes_add(tp, false);
        }
        if kind == OpKind::MapMove {
            self.ps.set_flag(tp, F_MOVING, false);
        }
        if self.deferred_on() {
            self.stale_write_done(tp, stale, result.is_ok());
            if kind == OpKind::MapSweep && result.is_ok() {
                self.stats.map_sweep_programs = self.stats.map_sweep_programs.wrapping_add(1);
            }
        }
        if result.is_err() {
            self.stats.program_failures = self.stats.program_failures.wrapping_add(1);
            // The block is done for: close it so cleaning empties it.
            let ppb = self.g.pages_per_block;
            self.blk_mut(b)?.next_page = u16::try_from(ppb)
                .map_err(|_| Error::InvalidConfig(&"pages per block above 65535"))?;
            let p = self.g.plane_of(b);
            if self.pl(p)?.meta_active == b.0 {
                self.pl_mut(p)?.meta_active = NIL;
            }
            // The DRAM copy is still the truth: the TP is dirty again (a
            // sweep's page is stale again instead, see above).
            if kind != OpKind::MapSweep {
                self.ps.mark_dirty(tp)?;
                H::tp_dirty(self, tp, true)?;
            }
        } else if spare.seq > self.ps.tp_seq.get(tp.0 as usize).copied().unwrap_or(0) {
            let old = self.ps.gtd.get(tp.0 as usize).copied().unwrap_or(NIL);
            if old != NIL {
                let ob = self.g.block_of(Ppn(old));
                let m = self.blk_mut(ob)?;
                m.valid = m.valid.saturating_sub(1);
            }
            if let Some(e) = self.ps.gtd.get_mut(tp.0 as usize) {
                *e = page.0;
            }
            if let Some(e) = self.ps.tp_seq.get_mut(tp.0 as usize) {
                *e = spare.seq;
            }
            let m = self.blk_mut(b)?;
            m.valid = m.valid.wrapping_add(1);
            self.stats.map_programs = self.stats.map_programs.wrapping_add(1);
        }
        self.region_maintain()?;
        if self.ps.waiting {
            self.ps.waiting = false;
            for p in 0..self.g.planes() {
                self.attend(PlaneId(p))?;
            }
        }
        Ok(())
    }

    /// Region blocks of plane `p`, as an iterator over block ids.
    fn region_blocks(&self, p: PlaneId) -> impl Iterator<Item = BlockId> + '_ {
        let first = self.g.first_block(p).0;
        (first..first.wrapping_add(self.g.blocks_per_plane))
            .map(BlockId)
            .filter(|b| self.blk(*b).is_ok_and(|m| m.state == BlockState::Meta))
    }

    fn is_erased_region(&self, b: BlockId, p: PlaneId) -> bool {
        self.blk(b)
            .is_ok_and(|m| m.state == BlockState::Meta && m.next_page == 0 && m.pending == 0)
            && self.pl(p).is_ok_and(|pl| pl.meta_active != b.0)
    }

    /// Erased region pages outside the open region blocks.
    pub(crate) fn region_erased_pages(&self) -> Result<u32, Error> {
        Ok(self.ps.erased_blocks.saturating_mul(self.g.pages_per_block))
    }

    /// Erased region pages the region keeps: the cut reserve and two blocks
    /// of headroom for write-backs and cleaning.
    fn region_want(&self) -> u32 {
        self.ps
            .cut_reserve_pages
            .wrapping_add(self.g.pages_per_block.saturating_mul(2))
    }

    /// Whether a write-back or move may open an erased block now: the cut
    /// reserve must stay whole (while settling, one erased block for the
    /// record; once released, what a cut would write now).
    fn may_open_region(&self) -> Result<bool, Error> {
        let ppb = self.g.pages_per_block;
        let reserve = if self.phase == Phase::Settling && self.mnt.released {
            self.settle_cut_pages()
        } else if self.phase == Phase::Settling || (self.phase == Phase::Dying && self.cut.settling)
        {
            // Settling after a mount, a cut writes only its record.
            ppb
        } else {
            self.ps.cut_reserve_pages
        };
        Ok(self.region_erased_pages()? >= reserve.wrapping_add(ppb))
    }

    /// Region pages a cut needs while settling with the buffer empty: the
    /// dirty translation pages, the record and the block table.
    fn settle_cut_pages(&self) -> u32 {
        self.ps
            .used()
            .wrapping_add(1)
            .wrapping_add(self.table_pages())
    }

    /// The translation-page budget in force. Settling with the region
    /// starved (or released), it also keeps a cut within the erased region
    /// pages, a block to spare for write-backs and cleaning: write-backs
    /// then bring the dirty pages down to where GC may be released.
    pub(crate) fn budget_now(&self) -> u32 {
        if self.phase != Phase::Settling || !(self.mnt.released || self.region_starved()) {
            return self.ps.budget;
        }
        let erased = self.region_erased_pages().unwrap_or(0);
        let room = erased
            .saturating_sub(1)
            .saturating_sub(self.table_pages())
            .saturating_sub(self.g.pages_per_block);
        room.min(self.ps.budget)
    }

    /// No plane can give the region a free block (`region_fill` leaves
    /// each plane one, GC's next destination).
    fn region_starved(&self) -> bool {
        (0..self.g.planes()).all(|p| self.pl(PlaneId(p)).is_ok_and(|pl| pl.free_count <= 1))
    }

    /// Settling with the metadata region starved (no plane can give it a
    /// free block, so cleaning alone may never reach the cut reserve):
    /// whether GC may run. It may once the replay's translation pages are
    /// written back far enough that a cut could write the rest as a running
    /// core does; the replayed blocks are then no longer carried, and GC
    /// frees blocks for the region while host commands still wait.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn settle_release(&mut self) -> Result<bool, Error> {
        if self.mnt.released {
            return Ok(true);
        }
        if !self.region_starved() {
            return Ok(false);
        }
        let need = self.settle_cut_pages().wrapping_add(self.g.pages_per_block);
        if self.ps.used() > self.ps.budget || self.region_erased_pages()? < need {
            return Ok(false);
        }
        self.mnt.released = true;
        self.mnt.carried.clear();
        Ok(true)
    }

    /// Next plane in the round-robin order of TP writes.
    fn next_region_plane(&mut self) -> PlaneId {
        let p = PlaneId(self.ps.cursor);
        self.ps.cursor = self
            .ps
            .cursor
            .wrapping_add(1)
            .checked_rem(self.g.planes())
            .unwrap_or(0);
        p
    }

    /// The next region page for a TP write (write-back or move), never in
    /// `avoid` (the block being cleaned). The planes take turns, each with
    /// its own open region block (opened while the cut reserve allows), so
    /// a batch of write-backs spreads over the dies instead of queueing on
    /// the one die of a single open block.
    pub(crate) fn region_page_avoiding(&mut self, avoid: u32) -> Result<Option<Ppn>, Error> {
        let planes = self.g.planes();
        let ppb = self.g.pages_per_block;
        for _ in 0..planes {
            let p = self.next_region_plane();
            let active = self.pl(p)?.meta_active;
            if active != NIL && active != avoid {
                let m = self.blk(BlockId(active))?;
                if u32::from(m.next_page) < ppb {
                    return self.region_take(BlockId(active)).map(Some);
                }
                self.pl_mut(p)?.meta_active = NIL;
            }
            if self.pl(p)?.meta_active != NIL || !self.may_open_region()? {
                continue;
            }
            let found = self.region_blocks(p).find(|b| self.is_erased_region(*b, p));
            if let Some(b) = found {
                self.pl_mut(p)?.meta_active = b.0;
                let page = self.region_take(b)?;
                self.region_fill()?;
                return Ok(Some(page));
            }
        }
        self.region_fill()?;
        Ok(None)
    }

    fn region_take(&mut self, b: BlockId) -> Result<Ppn, Error> {
        let m = self.blk_mut(b)?;
        let page = u32::from(m.next_page);
        if page == 0 {
            self.ps.erased_blocks = self.ps.erased_blocks.saturating_sub(1);
        }
        let m = self.blk_mut(b)?;
        m.next_page = m.next_page.wrapping_add(1);
        m.pending = m.pending.wrapping_add(1);
        Ok(self.g.ppn(b, page))
    }

    /// Takes free blocks into the region until it has its erased pages,
    /// from the planes with the most free blocks (never below the GC
    /// reserve); short of them, cleaning and GC catch up later.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn region_fill(&mut self) -> Result<(), Error> {
        if !self.ps.on || self.phase == Phase::Dying {
            return Ok(());
        }
        let want = self.region_want();
        // A region that cannot open a block for write-backs or cleaning
        // above the cut reserve (or, settling, reach the reserve) starves:
        // the budget then holds GC's programs and host writes, and nothing
        // else frees a block (settling, GC is held off). It may then take a
        // plane's GC reserve down to one block, GC's next destination.
        let ppb = self.g.pages_per_block;
        let starved = self.phase == Phase::Settling
            || self.region_erased_pages()? < self.ps.cut_reserve_pages.wrapping_add(ppb);
        let keep = if starved {
            1
        } else {
            self.cfg.gc_reserve_blocks.wrapping_add(1)
        };
        while self.region_erased_pages()? < want {
            let mut best = (NIL, 0u32);
            for p in 0..self.g.planes() {
                let f = self.pl(PlaneId(p))?.free_count;
                if f > keep && f > best.1 {
                    best = (p, f);
                }
            }
            if best.0 == NIL {
                break;
            }
            let p = PlaneId(best.0);
            let Some(b) = self.free_pop_coolest(p, 0, None)? else {
                break;
            };
            let m = self.blk_mut(b)?;
            m.state = BlockState::Meta;
            m.stream = STREAM_META;
            m.valid = 0;
            m.next_page = 0;
            m.pending = 0;
            let pl = self.pl_mut(p)?;
            pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
            self.ps.erased_blocks = self.ps.erased_blocks.wrapping_add(1);
            self.ps.region_blocks = self.ps.region_blocks.wrapping_add(1);
            self.refresh_ready(p)?;
            if self.gc_wanted(p)? {
                self.attend(p)?;
            }
        }
        Ok(())
    }

    /// Whether a power-cut flush fits the capacitor now: the region holds
    /// its erased pages and the dirty translation pages are within budget
    /// (after a mount's replay they may not be yet).
    pub(crate) fn cut_reserve_ok(&self) -> bool {
        !self.ps.on
            || (self.ps.used() <= self.ps.budget
                && self
                    .region_erased_pages()
                    .is_ok_and(|e| e >= self.ps.cut_reserve_pages))
    }

    /// Cleans the region when its written blocks pass their limit: the
    /// written block with the fewest live TPs has them rewritten from DRAM,
    /// then is erased.
    pub(crate) fn region_maintain(&mut self) -> Result<(), Error> {
        if !self.ps.on || !self.phase.ready() {
            return Ok(());
        }
        let ppb = self.g.pages_per_block;
        if self.ps.cleaning == NIL {
            let written = self.ps.region_blocks.saturating_sub(self.ps.erased_blocks);
            if written.saturating_mul(ppb) <= self.ps.written_limit_pages
                && self.region_erased_pages()? >= self.region_want()
            {
                return Ok(());
            }
            let mut best = (NIL, u16::MAX);
            for p in 0..self.g.planes() {
                let p = PlaneId(p);
                let active = self.pl(p)?.meta_active;
                for b in self.region_blocks(p) {
                    let m = self.blk(b)?;
                    if b.0 != active && m.next_page > 0 && m.pending == 0 && m.valid < best.1 {
                        best = (b.0, m.valid);
                    }
                }
            }
            if best.0 == NIL {
                return Ok(());
            }
            self.ps.cleaning = best.0;
        }
        let victim = BlockId(self.ps.cleaning);
        let m = *self.blk(victim)?;
        if m.valid == 0 && m.pending == 0 {
            if self.ops_available() == 0 {
                return Ok(());
            }
            self.ps.cleaning = NIL;
            // Pending until the erase completes, so it is not chosen again.
            self.blk_mut(victim)?.pending = 1;
            return self.emit(
                OpKind::MapErase,
                NandCmd::Erase { block: victim },
                Origin::Meta,
                0,
                0,
            );
        }
        // Move the live TPs still in the victim.
        for tp in 0..self.ps.n_tp {
            let at = self.ps.gtd.get(tp as usize).copied().unwrap_or(NIL);
            if at == NIL || self.g.block_of(Ppn(at)) != victim {
                continue;
            }
            if self.ps.flag(Tpn(tp)) & (F_MOVING | F_WRITING) != 0 {
                continue;
            }
            if self.ps.buf_free == 0 || self.ops_available() == 0 {
                break;
            }
            let Some(page) = self.region_page_avoiding(victim.0)? else {
                break;
            };
            self.ps.set_flag(Tpn(tp), F_MOVING, true);
            self.tp_emit(Tpn(tp), page, OpKind::MapMove)?;
        }
        Ok(())
    }

    /// Completion of a region block erase: back to the free pool when the
    /// region has its erased pages, else an erased region block.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn map_erase_done(
        &mut self,
        cmd: &NandCmd,
        result: NandResult,
    ) -> Result<(), Error> {
        let NandCmd::Erase { block } = cmd else {
            return Err(rare(Error::Corrupt(&"map erase op is not an erase")));
        };
        let p = self.g.plane_of(*block);
        if result.is_ok() {
            {
                let m = self.blk_mut(*block)?;
                m.pe = m.pe.wrapping_add(1);
                m.next_page = 0;
                m.valid = 0;
                m.pending = 0;
            }
            if self.region_erased_pages()? >= self.region_want() {
                self.ps.region_blocks = self.ps.region_blocks.saturating_sub(1);
                let pl = self.pl_mut(p)?;
                pl.lost_blocks = pl.lost_blocks.saturating_sub(1);
                self.free_push(*block)?;
            } else {
                self.ps.erased_blocks = self.ps.erased_blocks.wrapping_add(1);
            }
        } else {
            self.stats.erase_failures = self.stats.erase_failures.wrapping_add(1);
            self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
            // Stays counted in `lost_blocks`, now as a bad block.
            self.blk_mut(*block)?.state = BlockState::Bad;
            self.ps.region_blocks = self.ps.region_blocks.saturating_sub(1);
            self.region_fill()?;
        }
        self.region_maintain()?;
        self.map_write_back()
    }

    /// The metadata buffer an operation names (empty for data operations).
    pub fn meta_for(&mut self, op: &crate::medium::nand::NandOp) -> &mut [u8] {
        self.ps.buf_for(&op.cmd)
    }

    /// Internal counters of mapping persistence, for diagnostics: dirty,
    /// being written back, reserved, budget, erased region blocks, region
    /// blocks, block being cleaned, free metadata buffers.
    pub fn persist_state(&self) -> [u32; 8] {
        [
            self.ps.dirty.count(),
            self.ps.writing,
            self.ps.reserved,
            self.ps.budget,
            self.ps.erased_blocks,
            self.ps.region_blocks,
            self.ps.cleaning,
            self.ps.buf_free.count_ones(),
        ]
    }

    /// Dirty translation pages now, and the most the capacitor covers.
    pub fn map_dirty_pages(&self) -> (u32, u32) {
        (self.ps.used(), self.ps.budget)
    }
}

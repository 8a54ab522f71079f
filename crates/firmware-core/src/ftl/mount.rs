//! Recovery on mount: rebuilding the tables from flash after a power cut.
//!
//! Mount is a named sequence of steps. Every step only reads, except the
//! re-erase, which is idempotent, and the seal, after which mount no longer
//! trusts the checkpoint; so a power cut during mount loses nothing and the
//! next mount starts again from the first step.
//!
//! 0. [`MountStep::Anchor`]: read the two anchor blocks for the newest
//!    anchor page (`checkpoint.rs`); if it is a checkpoint,
//!    [`MountStep::Table`] reads its block table: every block's class and
//!    erase count, and step 1 is skipped.
//! 1. [`MountStep::Heads`] (no usable checkpoint): read the spare area of
//!    every block's first page: erased, data, metadata region, or bad; and
//!    the block's erase count and tag, which every program writes into the
//!    spare area (the checkpoint's table carries both too).
//! 2. [`MountStep::Region`]: read every page of the metadata-region blocks;
//!    the newest intact copy (sequence number, CRC) of each translation page
//!    fills its part of the L2P table; note the newest power-cut record.
//! 3. [`MountStep::Record`]: read that record.
//! 4. [`MountStep::Replay`]: read the spare areas of the pages the last
//!    power-cut flush wrote; their units are the newest data of their
//!    logical units (their translation pages become dirty).
//! 5. [`MountStep::Erase`]: erase again the blocks whose erase the cut tore,
//!    and the blocks whose first-page program it tore if that page reads
//!    erased (such a page may refuse the next program). After a
//!    checkpoint, [`MountStep::Seal`] then programs a dirty marker after it,
//!    so a later mount does not take the table for the drive once anything
//!    has been written.
//! 6. Rebuild: P2L table, valid counts, free lists and GC lists follow from
//!    the L2P table; the metadata region is topped up. With copyless copy
//!    a physical unit may be named by several logical units: the first is
//!    its P2L tag, each further one adds to its reference count and shadow
//!    OOB (`copy.rs`, `Ftl::mount_tag`).
//! 7. Settle: the translation pages the replay dirtied may exceed the
//!    budget, so the core first writes them back (and cleans the region)
//!    with host commands and GC held off; the mapping does not change
//!    meanwhile, so a cut now only writes a record naming the replayed
//!    blocks again. Then host commands are accepted.
//!
//! Damaged metadata (a page that reads but fails its magic or CRC) is never
//! taken for good data: a damaged newest anchor page or block-table page
//! sends mount to step 1; a TP whose newest copy is damaged loses its units
//! (they read back as media errors, not as an older copy's data); a damaged
//! newest power-cut record (its spare area says what it was) refuses the
//! mount with [`Error::Corrupt`], since the blocks its flush wrote are unknown.
//!
//! Mount costs the anchor pages and the table (or one read per block
//! without a checkpoint), one read per region page and one per replayed
//! page; [`crate::Stats::mount_ops`] counts them, and
//! [`crate::Stats::mount_head_reads`] and
//! [`crate::Stats::mount_replay_reads`] the reads outside the checkpoint.

use crate::error::{rare, Error};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::{Ftl, Phase};
use crate::map::loc::Loc;
use crate::medium::addr::{BlockId, Lpn, PlaneId, Ppn};
use crate::medium::nand::{MetaBuf, NandCmd, NandError, NandResult, Origin, PageKind};
use crate::persist::cut::{CUT_TAG, IF_ERASED, TP_DAMAGED};
use crate::persist::mount::{MountState, MountStep, PE_UNKNOWN};
use crate::persist::tp::{get_u32, unseal, MAGIC_CUT, META_HEADER, NO_BUF, STREAM_META};
use crate::persist::Tpn;

impl<H: Hooks> Ftl<'_, H> {
    /// Starts mounting a drive that was formatted before (with mapping
    /// persistence), on a core fresh from [`Ftl::new`]. Drive the emitted
    /// operations as usual; [`Ftl::is_ready`] turns true when done.
    pub fn mount(&mut self, now: u64) -> Result<(), Error> {
        if !self.ps.on {
            return Err(Error::InvalidConfig(&"mount needs mapping persistence"));
        }
        self.mount_from(now)
    }

    /// [`Ftl::mount`] without its persistence check (also [`Ftl::adopt`]).
    pub(crate) fn mount_from(&mut self, now: u64) -> Result<(), Error> {
        H::mounting(self)?;
        self.last_now = now;
        self.phase = Phase::Mounting;
        self.format_cursor = self.g.total_blocks();
        self.mnt = MountState {
            step: if self.anchors_on() {
                MountStep::Anchor
            } else {
                MountStep::Heads
            },
            best_cut: NIL,
            ..MountState::default()
        };
        self.anc = crate::persist::checkpoint::AnchorState::default();
        self.pump()
    }

    /// The mount step in progress ([`MountStep::Idle`] when not mounting).
    pub fn mount_step(&self) -> MountStep {
        self.mnt.step
    }

    pub(crate) fn mount_emit(&mut self, kind: OpKind, cmd: NandCmd, tag: u32) -> Result<(), Error> {
        self.emit(kind, cmd, Origin::Meta, 0, tag)?;
        self.mnt.inflight = self.mnt.inflight.wrapping_add(1);
        self.stats.mount_ops = self.stats.mount_ops.wrapping_add(1);
        match kind {
            OpKind::MountHead => {
                self.stats.mount_head_reads = self.stats.mount_head_reads.wrapping_add(1)
            }
            OpKind::MountReplay => {
                self.stats.mount_replay_reads = self.stats.mount_replay_reads.wrapping_add(1)
            }
            _ => {}
        }
        Ok(())
    }

    /// Emits the reads of the current step, and moves on when a step is done.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn pump_mount(&mut self) -> Result<(), Error> {
        loop {
            match self.mnt.step {
                MountStep::Idle => return Ok(()),
                MountStep::Anchor => {
                    if self.mnt.cursor == 0 {
                        self.mnt.cursor = 1;
                        for i in 0..2u8 {
                            self.anchor_read(i, 0)?;
                        }
                    }
                    if self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    self.anchor_scanned()?;
                }
                MountStep::Table => {
                    let n = self.table_pages();
                    while self.mnt.cursor < n && self.ops_available() > 0 && self.ps.buf_free != 0 {
                        let i = self.mnt.cursor;
                        self.mnt.cursor = self.mnt.cursor.wrapping_add(1);
                        let at = self.anc.newest_buf.and_then(|b| self.ps.buf(b)).map_or(
                            u32::MAX,
                            |d| {
                                get_u32(d, META_HEADER.wrapping_add((i as usize).saturating_mul(4)))
                            },
                        );
                        if at >= self.g.total_pages() {
                            self.anc.table_failed = true;
                            continue;
                        }
                        let Some(buf) = self.ps.buf_alloc() else {
                            break;
                        };
                        let page = Ppn(at);
                        self.mount_emit(OpKind::MountTable, NandCmd::ReadMeta { page, buf }, i)?;
                    }
                    if self.mnt.cursor < n || self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    if let Some(b) = self.anc.newest_buf.take() {
                        self.ps.buf_release(b);
                    }
                    self.mnt.cursor = 0;
                    if self.anc.table_failed {
                        self.mnt.step = MountStep::Heads;
                    } else {
                        self.stats.checkpoint_mounts = self.stats.checkpoint_mounts.wrapping_add(1);
                        self.mnt.step = MountStep::Region;
                    }
                }
                MountStep::Seal => {
                    if self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    if self.mnt.sealed {
                        self.mnt.step = MountStep::Idle;
                        return self.rebuild();
                    }
                    if self.ops_available() == 0 {
                        return Ok(());
                    }
                    self.seal_emit()?;
                    return Ok(());
                }
                MountStep::Heads => {
                    let total = self.g.total_blocks();
                    while self.mnt.cursor < total && self.ops_available() > 0 {
                        let b = BlockId(self.mnt.cursor);
                        self.mnt.cursor = self.mnt.cursor.wrapping_add(1);
                        if let Some(i) = self.anchor_index(b) {
                            let bad = self.anc.bad.get(usize::from(i)).copied().unwrap_or(true);
                            let m = self.blk_mut(b)?;
                            m.state = if bad {
                                BlockState::Bad
                            } else {
                                BlockState::Anchor
                            };
                            continue;
                        }
                        let page = self.g.ppn(b, 0);
                        self.mount_emit(
                            OpKind::MountHead,
                            NandCmd::ReadMeta { page, buf: NO_BUF },
                            b.0,
                        )?;
                    }
                    if self.mnt.cursor < total || self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    // Without persistence (an adopted medium) there is no region.
                    self.mnt.step = if self.ps.on {
                        MountStep::Region
                    } else {
                        MountStep::Record
                    };
                    self.mnt.cursor = 0;
                }
                MountStep::Region => {
                    let total = self.g.total_blocks();
                    while self.mnt.cursor < total
                        && self.ops_available() > 0
                        && self.ps.buf_free != 0
                    {
                        let b = BlockId(self.mnt.cursor);
                        self.mnt.cursor = self.mnt.cursor.wrapping_add(1);
                        if self.blk(b)?.state != BlockState::Meta {
                            continue;
                        }
                        let Some(buf) = self.ps.buf_alloc() else {
                            break;
                        };
                        let page = self.g.ppn(b, 0);
                        self.mount_emit(OpKind::MountRegion, NandCmd::ReadMeta { page, buf }, b.0)?;
                    }
                    if self.mnt.cursor < total || self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    if self.mnt.cut_damaged_seq > self.mnt.best_cut_seq {
                        // The blocks the last flush wrote are unknown: their
                        // units would read back older data.
                        return Err(rare(Error::Corrupt(&"newest power-cut record damaged")));
                    }
                    self.damaged_tps_lost()?;
                    self.mnt.step = MountStep::Record;
                    self.mnt.cursor = 0;
                    if self.mnt.best_cut != NIL {
                        let Some(buf) = self.ps.buf_alloc() else {
                            return Err(rare(Error::Corrupt(&"no metadata buffer for the record")));
                        };
                        let page = Ppn(self.mnt.best_cut);
                        self.mount_emit(OpKind::MountRecord, NandCmd::ReadMeta { page, buf }, 0)?;
                    }
                }
                MountStep::Record => {
                    if self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    self.mnt.step = MountStep::Replay;
                    self.mnt.cursor = 0;
                }
                MountStep::Replay => {
                    while self.mnt.cursor < self.mnt.n_regions && self.ops_available() > 0 {
                        let b = self.record_entry(self.mnt.n_erase.wrapping_add(self.mnt.cursor));
                        self.mnt.cursor = self.mnt.cursor.wrapping_add(1);
                        if b >= self.g.total_blocks() {
                            continue;
                        }
                        let page = self.g.ppn(BlockId(b), 0);
                        self.mount_emit(
                            OpKind::MountReplay,
                            NandCmd::ReadMeta { page, buf: NO_BUF },
                            b,
                        )?;
                    }
                    if self.mnt.cursor < self.mnt.n_regions || self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    self.mnt.step = MountStep::Erase;
                    self.mnt.cursor = 0;
                }
                MountStep::Erase => {
                    while self.mnt.cursor < self.mnt.n_erase && self.ops_available() > 0 {
                        let e = self.record_entry(self.mnt.cursor);
                        self.mnt.cursor = self.mnt.cursor.wrapping_add(1);
                        let b = e & !IF_ERASED;
                        if b >= self.g.total_blocks() {
                            continue;
                        }
                        // A torn first program: erase only what reads erased.
                        if e & IF_ERASED != 0 && self.blk(BlockId(b))?.state != BlockState::Free {
                            continue;
                        }
                        self.mount_emit(
                            OpKind::MountErase,
                            NandCmd::Erase { block: BlockId(b) },
                            b,
                        )?;
                    }
                    if self.mnt.cursor < self.mnt.n_erase || self.mnt.inflight > 0 {
                        return Ok(());
                    }
                    self.mnt.carried.clear();
                    for i in 0..self.mnt.n_regions {
                        let b = self.record_entry(self.mnt.n_erase.wrapping_add(i));
                        if b < self.g.total_blocks() {
                            self.mnt.carried.push(b).map_err(|_| {
                                rare(Error::Corrupt(&"record lists too many blocks"))
                            })?;
                        }
                    }
                    // Erase counts of the blocks that were free at the cut.
                    let base = self.mnt.n_erase.wrapping_add(self.mnt.n_regions);
                    for i in 0..self.mnt.n_free {
                        let at = base.wrapping_add(i.saturating_mul(2));
                        let b = self.record_entry(at);
                        let pe = self.record_entry(at.wrapping_add(1));
                        if b < self.g.total_blocks() {
                            let m = self.blk_mut(BlockId(b))?;
                            if m.state == BlockState::Free && m.pe == PE_UNKNOWN {
                                m.pe = pe;
                            }
                        }
                    }
                    self.mnt.pe_below =
                        self.record_entry(base.wrapping_add(self.mnt.n_free.saturating_mul(2)));
                    if let Some(buf) = self.mnt.record.take() {
                        self.ps.buf_release(buf);
                    }
                    if self.anc.newest_kind == crate::persist::checkpoint::KIND_CHECKPOINT {
                        // The checkpoint stops describing the drive as soon
                        // as anything is written: mark it stale first.
                        self.mnt.step = MountStep::Seal;
                        continue;
                    }
                    self.mnt.step = MountStep::Idle;
                    return self.rebuild();
                }
            }
        }
    }

    fn record_entry(&self, i: u32) -> u32 {
        match self.mnt.record.and_then(|b| self.ps.buf(b)) {
            Some(b) => get_u32(b, META_HEADER.wrapping_add((i as usize).saturating_mul(4))),
            None => u32::MAX,
        }
    }

    pub(crate) fn note_seq(&mut self, s: u64) {
        self.mnt.max_seq = self.mnt.max_seq.max(s);
    }

    /// Completion of a mount operation.
    #[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
    pub(crate) fn mount_done(
        &mut self,
        kind: OpKind,
        cmd: &NandCmd,
        tag: u32,
        result: NandResult,
    ) -> Result<(), Error> {
        self.mnt.inflight = self.mnt.inflight.saturating_sub(1);
        let b = BlockId(tag);
        match kind {
            OpKind::MountHead => {
                let state = match result {
                    Ok(r) => {
                        self.note_seq(r.spare.seq);
                        match r.spare.kind {
                            PageKind::Map | PageKind::Meta => BlockState::Meta,
                            PageKind::Data | PageKind::Pad => BlockState::Full,
                        }
                    }
                    Err(NandError::Erased) => BlockState::Free,
                    Err(NandError::FactoryBad | NandError::DieFailed | NandError::BadAddress) => {
                        BlockState::Bad
                    }
                    // Written but unreadable (torn): holds nothing live.
                    Err(_) => BlockState::Full,
                };
                let (pe, tag) = match &result {
                    Ok(r) => (r.spare.erase_count, r.spare.tag),
                    Err(_) => (PE_UNKNOWN, 0),
                };
                let m = self.blk_mut(b)?;
                m.pe = pe;
                m.state = state;
                m.stream = if state == BlockState::Meta {
                    STREAM_META
                } else {
                    0
                };
                H::block_tag_mounted(self, b, tag);
            }
            OpKind::MountRegion => {
                let NandCmd::ReadMeta { page, buf } = *cmd else {
                    return Err(rare(Error::Corrupt(&"mount region op")));
                };
                let ppb = self.g.pages_per_block;
                let pib = self.g.page_in_block(page);
                let more = match result {
                    Ok(r) => {
                        self.note_seq(r.spare.seq);
                        self.region_page_read(page, buf, &r.spare)?;
                        true
                    }
                    Err(NandError::Uncorrectable) => true,
                    Err(_) => false,
                };
                let next = pib.wrapping_add(1);
                if more && next < ppb {
                    let page = self.g.ppn(b, next);
                    self.mount_emit(OpKind::MountRegion, NandCmd::ReadMeta { page, buf }, tag)?;
                } else {
                    self.ps.buf_release(buf);
                }
            }
            OpKind::MountRecord => {
                let NandCmd::ReadMeta { buf, .. } = *cmd else {
                    return Err(rare(Error::Corrupt(&"mount record op")));
                };
                let parsed = if result.is_ok() {
                    self.ps.buf(buf).and_then(|d| unseal(d, MAGIC_CUT))
                } else {
                    None
                };
                match parsed {
                    Some((a, n_regions)) => {
                        self.mnt.record = Some(buf);
                        self.mnt.n_erase = a & 0xffff;
                        self.mnt.n_free = a >> 16;
                        self.mnt.n_regions = n_regions;
                    }
                    None => self.ps.buf_release(buf),
                }
            }
            OpKind::MountReplay => {
                let NandCmd::ReadMeta { page, .. } = *cmd else {
                    return Err(rare(Error::Corrupt(&"mount replay op")));
                };
                let ppb = self.g.pages_per_block;
                let more = match result {
                    Ok(r) => {
                        self.note_seq(r.spare.seq);
                        if r.spare.kind == PageKind::Data {
                            self.replay_page(page, &r.spare)?;
                        }
                        true
                    }
                    Err(NandError::Uncorrectable) => true,
                    Err(_) => false,
                };
                let next = self.g.page_in_block(page).wrapping_add(1);
                if more && next < ppb {
                    let page = self.g.ppn(b, next);
                    self.mount_emit(
                        OpKind::MountReplay,
                        NandCmd::ReadMeta { page, buf: NO_BUF },
                        tag,
                    )?;
                }
            }
            OpKind::MountErase => {
                let m = self.blk_mut(b)?;
                m.pe = m.pe.wrapping_add(1);
                m.state = if result.is_ok() {
                    BlockState::Free
                } else {
                    BlockState::Bad
                };
            }
            OpKind::MountAnchor => self.anchor_read_done(cmd, tag, result)?,
            OpKind::MountTable => {
                let NandCmd::ReadMeta { buf, .. } = *cmd else {
                    return Err(rare(Error::Corrupt(&"mount table op")));
                };
                if result.is_err() || !self.table_apply(buf, tag)? {
                    self.anc.table_failed = true;
                }
                self.ps.buf_release(buf);
            }
            OpKind::MountSeal => {
                if let NandCmd::ProgramMeta { buf, .. } = *cmd {
                    self.ps.buf_release(buf);
                }
                if result.is_ok() {
                    self.mnt.sealed = true;
                } else {
                    self.anc.seal_failed = true;
                }
            }
            OpKind::MountSealErase => self.seal_erase_done(tag, result.is_ok())?,
            _ => return Err(rare(Error::Corrupt(&"not a mount op"))),
        }
        Ok(())
    }

    fn region_page_read(
        &mut self,
        page: Ppn,
        buf: MetaBuf,
        spare: &crate::medium::nand::Spare,
    ) -> Result<(), Error> {
        match spare.kind {
            PageKind::Map => {
                let tp = spare.lpns.first().map_or(u32::MAX, |l| l.0);
                let newer = self
                    .ps
                    .tp_seq
                    .get(tp as usize)
                    .is_some_and(|s| spare.seq > *s);
                if newer {
                    // The newest copy so far; if it fails its check, no
                    // older copy may stand in for it (see `damaged_tps_lost`).
                    let at = if self.tp_decode(buf)? == Some(Tpn(tp)) {
                        page.0
                    } else {
                        TP_DAMAGED
                    };
                    if let Some(e) = self.ps.gtd.get_mut(tp as usize) {
                        *e = at;
                    }
                    if let Some(e) = self.ps.tp_seq.get_mut(tp as usize) {
                        *e = spare.seq;
                    }
                }
            }
            PageKind::Meta => {
                let ok = self
                    .ps
                    .buf(buf)
                    .and_then(|d| unseal(d, MAGIC_CUT))
                    .is_some();
                if ok && spare.seq >= self.mnt.best_cut_seq {
                    self.mnt.best_cut = page.0;
                    self.mnt.best_cut_seq = spare.seq;
                } else if !ok && spare.lpns.first().is_some_and(|l| l.0 == CUT_TAG) {
                    self.mnt.cut_damaged_seq = self.mnt.cut_damaged_seq.max(spare.seq);
                }
            }
            PageKind::Data | PageKind::Pad => {}
        }
        Ok(())
    }

    /// Region read: every TP whose newest copy failed its check loses its
    /// units (they read back as media errors, never as older data) and is
    /// written again from DRAM once mounted.
    fn damaged_tps_lost(&mut self) -> Result<(), Error> {
        let epp = self.ps.epp;
        for tp in 0..self.ps.n_tp {
            let Some(e) = self.ps.gtd.get_mut(tp as usize) else {
                break;
            };
            if *e != TP_DAMAGED {
                continue;
            }
            *e = NIL;
            let first = tp.saturating_mul(epp);
            let end = first.saturating_add(epp).min(self.cfg.logical_units);
            for l in first..end {
                self.set_loc(Lpn(l), Loc::Lost)?;
            }
            let n = u64::from(end.saturating_sub(first));
            self.stats.lost_units = self.stats.lost_units.wrapping_add(n);
        }
        Ok(())
    }

    fn replay_page(&mut self, page: Ppn, spare: &crate::medium::nand::Spare) -> Result<(), Error> {
        for (i, lpn) in spare.lpns.iter().enumerate() {
            let Ok(i) = u8::try_from(i) else { break };
            if !spare.units.contains(i) || lpn.0 >= self.cfg.logical_units {
                continue;
            }
            let pun = self.g.pun(page, i);
            self.set_loc(*lpn, Loc::Flash(pun))?;
            self.map_touch(*lpn)?;
        }
        Ok(())
    }

    /// Derives every other table from the L2P table and the block classes.
    fn rebuild(&mut self) -> Result<(), Error> {
        let ppb = u16::try_from(self.g.pages_per_block)
            .map_err(|_| Error::InvalidConfig(&"pages per block above 65535"))?;
        let total = self.g.total_blocks();
        // Blocks whose count neither a first page nor the record gave (free
        // blocks the record had no room for, unreadable first pages) take the
        // mean, so wear levelling neither favours nor shuns them.
        let (mut sum, mut n) = (0u64, 0u64);
        for b in 0..total {
            let m = self.blk(BlockId(b))?;
            if m.pe != PE_UNKNOWN {
                sum = sum.wrapping_add(u64::from(m.pe));
                n = n.wrapping_add(1);
            }
        }
        let mean = u32::try_from(sum.checked_div(n).unwrap_or(0)).unwrap_or(0);
        let mean = if self.mnt.pe_below > 0 && self.mnt.pe_below != u32::MAX {
            mean.min(self.mnt.pe_below.saturating_sub(1))
        } else {
            mean
        };
        for b in 0..total {
            let m = self.blk_mut(BlockId(b))?;
            if m.pe == PE_UNKNOWN {
                m.pe = mean;
            }
        }
        // Data blocks take units while not on any list.
        for b in 0..total {
            let m = self.blk_mut(BlockId(b))?;
            m.valid = 0;
            m.pending = 0;
            m.next = NIL;
            m.prev = NIL;
            match m.state {
                BlockState::Full => {
                    m.state = BlockState::Open;
                    m.next_page = ppb;
                }
                BlockState::Meta => m.next_page = ppb,
                _ => {}
            }
        }
        for tp in 0..self.ps.n_tp {
            let at = self.ps.gtd.get(tp as usize).copied().unwrap_or(NIL);
            if at != NIL {
                let m = self.blk_mut(self.g.block_of(Ppn(at)))?;
                if m.state == BlockState::Meta {
                    m.valid = m.valid.wrapping_add(1);
                }
            }
        }
        for l in 0..self.cfg.logical_units {
            // The L2P table is walked in order but its units land all over
            // the P2L table: fetch the entry of the unit 16 ahead.
            if let Ok(Loc::Flash(q)) = self.loc(Lpn(l.wrapping_add(16))) {
                self.prefetch_p2l(q);
            }
            if let Loc::Flash(p) = self.loc(Lpn(l))? {
                let b = self.g.block_of_unit(p);
                let claimed = !H::shares(self) && self.p2l(p)?.is_some();
                if claimed {
                    // Two logical units name one physical unit: only a
                    // power-cut flush cut short between translation pages
                    // (a capacitor short of its budget) leaves that. Which
                    // one is current is unknown, so both are lost rather
                    // than one reading the other's data.
                    if let Some(first) = self.p2l(p)? {
                        self.invalidate_unit(p)?;
                        for lpn in [first, Lpn(l)] {
                            self.set_loc(lpn, Loc::Lost)?;
                            self.map_touch(lpn)?;
                        }
                        self.stats.lost_units = self.stats.lost_units.wrapping_add(2);
                    }
                } else if self.blk(b)?.state == BlockState::Open {
                    self.mount_tag(p, Lpn(l))?;
                } else {
                    self.set_loc(Lpn(l), Loc::Lost)?;
                    self.map_touch(Lpn(l))?;
                    self.stats.lost_units = self.stats.lost_units.wrapping_add(1);
                }
            }
        }
        for b in 0..total {
            let b = BlockId(b);
            let p = self.g.plane_of(b);
            match self.blk(b)?.state {
                BlockState::Open => {
                    self.blk_mut(b)?.state = BlockState::Full;
                    self.bucket_insert(b)?;
                }
                BlockState::Free | BlockState::Unknown => self.free_push(b)?,
                BlockState::Meta => {
                    self.ps.region_blocks = self.ps.region_blocks.wrapping_add(1);
                    let pl = self.pl_mut(p)?;
                    pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
                }
                BlockState::Bad => {
                    self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
                    let pl = self.pl_mut(p)?;
                    pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
                }
                BlockState::Anchor => {
                    let pl = self.pl_mut(p)?;
                    pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
                }
                BlockState::Full | BlockState::Victim | BlockState::Retiring => {}
            }
        }
        self.seq = self.seq.max(self.mnt.max_seq);
        // Host commands (and GC) wait until the region can take a power-cut
        // flush and the dirty translation pages fit the budget.
        self.phase = Phase::Running;
        self.settle_if_short();
        self.region_fill()?;
        self.region_maintain()?;
        self.phase = Phase::Running;
        self.settle_if_short();
        for p in 0..self.g.planes() {
            self.refresh_ready(PlaneId(p))?;
            self.attend(PlaneId(p))?;
        }
        self.map_write_back()
    }
}

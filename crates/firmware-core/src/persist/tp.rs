//! Translation pages and their budget as data: the lent persistence
//! tables, the page format (CRC-sealed headers), and the dirty, writing and
//! reserved counts of the capacitor budget. The state machine that writes
//! them back is the core's (`ftl::persist`).

use crate::config::PersistConfig;
use crate::error::{rare, Error};
use crate::list::NIL;
use crate::medium::addr::Lpn;
use crate::medium::nand::MetaBuf;
use crate::persist::map_dirty::{DirtyLink, MapDirty};
use crate::persist::Tpn;

/// Metadata page buffers the core keeps (at most 64: a bitmask tracks them).
pub const META_BUFS: usize = 32;

/// Header bytes of a metadata page: magic, two fields, CRC-32.
pub const META_HEADER: usize = 16;

/// Magic of a translation page.
pub(crate) const MAGIC_TP: u32 = 0x3147_5054; // "TPG1"
/// Magic of a power-cut record.
pub(crate) const MAGIC_CUT: u32 = 0x3154_5543; // "CUT1"
/// `MetaBuf` of a read that only wants the spare area.
pub(crate) const NO_BUF: MetaBuf = MetaBuf(u16::MAX);

/// TP flags, low bits: write-backs of this TP in flight (counted in the budget).
pub(crate) const F_WRITING: u8 = 0x1f;

/// TP flag: a GC relocation outside the budget made the flash copy stale;
/// a sweep must write it before the victim is erased (`persist::deferred`).
pub(crate) const F_LAZY: u8 = 0x20;

/// TP flag: holds a unit of budget (in `reserved`) for the data programs in
/// flight that will dirty it; set only while the TP is not dirty, since a
/// dirty TP already holds its unit.
pub(crate) const F_RESERVED: u8 = 0x40;

/// TP flag: written back during region cleaning (not counted in the budget).
pub(crate) const F_MOVING: u8 = 0x80;

/// Block `stream` value of metadata-region blocks.
pub(crate) const STREAM_META: u8 = 2;

/// Entry value of an unmapped unit in a TP.
pub(crate) const ENTRY_UNMAPPED: u32 = u32::MAX;

/// Entry value of a lost unit in a TP.
pub(crate) const ENTRY_LOST: u32 = u32::MAX - 1;

pub(crate) const CRC: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// Memory the caller lends for mapping persistence (empty when it is off).
pub struct PersistTables<'a> {
    /// Page holding each TP's newest flash copy (`NIL`: none yet).
    pub gtd: &'a mut [u32],
    /// Sequence number of that copy.
    pub tp_seq: &'a mut [u64],
    /// Per-TP flags.
    pub tp_flags: &'a mut [u8],
    /// LRU links of the dirty set.
    pub tp_links: &'a mut [DirtyLink],
    /// `META_BUFS` metadata page buffers, back to back.
    pub meta: &'a mut [u8],
    /// Data programs in flight per TP (one TP of budget is reserved while
    /// any is); sized like `gtd`.
    pub tp_inflight: &'a mut [u16],
}

impl PersistTables<'static> {
    /// No persistence tables (for configurations with persistence off).
    pub fn none() -> Self {
        PersistTables {
            gtd: &mut [],
            tp_seq: &mut [],
            tp_flags: &mut [],
            tp_links: &mut [],
            meta: &mut [],
            tp_inflight: &mut [],
        }
    }
}

/// Sizes of the persistence tables for a configuration.
pub(crate) fn sizes(p: &PersistConfig, logical_units: u32) -> (usize, usize) {
    if !p.enabled() {
        return (0, 0);
    }
    let n_tp = logical_units.div_ceil(p.map_entries_per_page) as usize;
    (n_tp, META_BUFS.saturating_mul(meta_page_bytes(p)))
}

/// Bytes of one metadata page: header plus four bytes per entry.
pub fn meta_page_bytes(p: &PersistConfig) -> usize {
    META_HEADER.saturating_add((p.map_entries_per_page as usize).saturating_mul(4))
}

/// Run-time state of mapping persistence.
pub(crate) struct Persist<'a> {
    pub(crate) on: bool,
    pub(crate) epp: u32,
    pub(crate) n_tp: u32,
    /// TPs the capacitor can write at a cut.
    pub(crate) budget: u32,
    pub(crate) page_bytes: usize,
    pub(crate) dirty: MapDirty<'a>,
    pub(crate) gtd: &'a mut [u32],
    pub(crate) tp_seq: &'a mut [u64],
    pub(crate) flags: &'a mut [u8],
    pub(crate) meta: &'a mut [u8],
    /// Free metadata buffers (bit i: buffer i).
    pub(crate) buf_free: u64,
    /// Write-backs in flight counted in the budget.
    pub(crate) writing: u32,
    /// TPs in-flight data programs may still dirty (flag [`F_RESERVED`]),
    /// plus the extra TPs copyless copy reserves.
    pub(crate) reserved: u32,
    /// Written region pages above which cleaning starts.
    pub(crate) written_limit_pages: u32,
    /// Blocks in the region.
    pub(crate) region_blocks: u32,
    /// Region pages kept erased for the power-cut flush.
    pub(crate) cut_reserve_pages: u32,
    /// Next plane for a TP write.
    pub(crate) cursor: u32,
    /// Region block being cleaned (`NIL`: none).
    pub(crate) cleaning: u32,
    /// Some data program waits for budget.
    pub(crate) waiting: bool,
    /// Erased region blocks that are not open.
    pub(crate) erased_blocks: u32,
    /// Data programs in flight per TP.
    pub(crate) inflight: &'a mut [u16],
    /// Deferred victim erases (GC relocations outside the budget).
    pub(crate) def: crate::persist::deferred::Deferred,
}

impl<'a> Persist<'a> {
    /// Sets up persistence for `cfg` over lent tables.
    pub(crate) fn new(
        cfg: &crate::config::Config,
        t: PersistTables<'a>,
        write_buffer_pages: u32,
    ) -> Result<Self, Error> {
        let p = &cfg.persist;
        let (n_tp, meta_len) = sizes(p, cfg.logical_units);
        if t.gtd.len() < n_tp
            || t.tp_seq.len() < n_tp
            || t.tp_flags.len() < n_tp
            || t.tp_links.len() < n_tp
            || t.tp_inflight.len() < n_tp
            || t.meta.len() < meta_len
        {
            return Err(Error::TableTooSmall(&"persist"));
        }
        let n_tp32 = u32::try_from(n_tp).map_err(|_| Error::InvalidConfig(&"too many TPs"))?;
        let g = &cfg.geometry;
        let upp = u32::from(g.units_per_page);
        // A data program may dirty up to `upp` TPs: the budget must let two
        // of them wait for one write-back batch.
        let raw = MapDirty::budget_for(n_tp32, p.protect_permille.min(1000));
        let budget = raw
            .max(upp.saturating_mul(2).saturating_add(1))
            .min(n_tp32.max(1));
        let ppb = g.pages_per_block.max(1);
        let table_pages = if p.enabled() {
            table_pages_for(meta_page_bytes(p), g)
        } else {
            0
        };
        let cut_reserve_pages = budget
            .saturating_add(1)
            .saturating_add(write_buffer_pages)
            .saturating_add(table_pages);
        let written_limit_pages = if p.meta_blocks_per_plane > 0 {
            p.meta_blocks_per_plane
                .saturating_mul(g.planes())
                .saturating_mul(ppb)
        } else {
            // Twice the live TPs plus one open block per plane: the
            // emptiest written block is then at most about half live.
            n_tp32
                .saturating_mul(2)
                .saturating_add(g.planes().saturating_mul(ppb))
        };
        // The power-cut flush writes the whole buffer into fresh blocks,
        // each listed in the cut record.
        if p.enabled()
            && write_buffer_pages.div_ceil(ppb) >= crate::persist::cut::MAX_CUT_BLOCKS as u32
        {
            return Err(Error::InvalidConfig(
                &"write buffer larger than a power-cut flush can list",
            ));
        }
        if p.enabled() {
            // The region at its largest: written pages at the cleaning limit,
            // the erased pages it keeps, and an open block per plane.
            let pages = written_limit_pages
                .saturating_add(cut_reserve_pages)
                .saturating_add(ppb.saturating_mul(2));
            let blocks = u64::from(pages.div_ceil(ppb).saturating_add(g.planes()));
            let upb = u64::from(g.units_per_block());
            let reserve = u64::from(cfg.reserve_blocks_per_plane())
                .saturating_mul(u64::from(g.planes()))
                .saturating_mul(upb);
            let need = u64::from(cfg.logical_units)
                .saturating_add(reserve)
                .saturating_add(blocks.saturating_mul(upb));
            if need > u64::from(g.total_units()) {
                return Err(Error::InvalidConfig(
                    &"over-provisioning below the gc reserve plus the metadata region",
                ));
            }
        }
        let links: &'a mut [DirtyLink] = if n_tp == 0 { &mut [] } else { t.tp_links };
        let dirty = if n_tp == 0 {
            MapDirty::new(links, 1)?
        } else {
            MapDirty::new(links, budget)?
        };
        let mut ps = Persist {
            on: p.enabled(),
            epp: p.map_entries_per_page,
            n_tp: n_tp32,
            budget,
            page_bytes: meta_page_bytes(p),
            dirty,
            gtd: t.gtd,
            tp_seq: t.tp_seq,
            flags: t.tp_flags,
            meta: t.meta,
            buf_free: 0,
            writing: 0,
            reserved: 0,
            written_limit_pages,
            region_blocks: 0,
            cut_reserve_pages,
            cursor: 0,
            cleaning: NIL,
            waiting: false,
            erased_blocks: 0,
            inflight: t.tp_inflight,
            def: crate::persist::deferred::Deferred {
                on: p.enabled() && p.gc_outside_budget && budget < n_tp32,
                ..Default::default()
            },
        };
        ps.reset_tables(n_tp);
        if ps.on && ps.page_bytes > g.page_bytes as usize {
            return Err(Error::InvalidConfig(
                &"translation page larger than a flash page",
            ));
        }
        Ok(ps)
    }

    /// All TPs without a flash copy, clean, and every buffer free.
    pub(crate) fn reset_tables(&mut self, n_tp: usize) {
        for e in self.gtd.iter_mut().take(n_tp) {
            *e = NIL;
        }
        for e in self.tp_seq.iter_mut().take(n_tp) {
            *e = 0;
        }
        for e in self.flags.iter_mut().take(n_tp) {
            *e = 0;
        }
        for e in self.inflight.iter_mut().take(n_tp) {
            *e = 0;
        }
        self.reset_buffers();
    }

    /// Every metadata buffer free again.
    pub(crate) fn reset_buffers(&mut self) {
        self.buf_free = if META_BUFS >= 64 {
            u64::MAX
        } else {
            (1u64 << META_BUFS).wrapping_sub(1)
        };
    }

    pub(crate) fn tp_of(&self, lpn: Lpn) -> Tpn {
        Tpn(lpn.0.checked_div(self.epp).unwrap_or(0))
    }

    pub(crate) fn buf_alloc(&mut self) -> Option<MetaBuf> {
        if self.buf_free == 0 {
            return None;
        }
        let i = self.buf_free.trailing_zeros();
        self.buf_free &= !(1u64 << i);
        u16::try_from(i).ok().map(MetaBuf)
    }

    pub(crate) fn buf_release(&mut self, b: MetaBuf) {
        if usize::from(b.0) < META_BUFS {
            self.buf_free |= 1u64 << b.0;
        }
    }

    /// The metadata buffer command `cmd` names; empty for data commands
    /// (and for a buffer out of range, which the medium then refuses).
    pub(crate) fn buf_for(&mut self, cmd: &crate::medium::nand::NandCmd) -> &mut [u8] {
        use crate::medium::nand::NandCmd;
        match *cmd {
            NandCmd::ProgramMeta { buf, .. } | NandCmd::ReadMeta { buf, .. } => {
                self.buf_mut(buf).unwrap_or(&mut [])
            }
            _ => &mut [],
        }
    }

    pub(crate) fn buf_mut(&mut self, b: MetaBuf) -> Option<&mut [u8]> {
        let start = usize::from(b.0).checked_mul(self.page_bytes)?;
        self.meta
            .get_mut(start..start.checked_add(self.page_bytes)?)
    }

    pub(crate) fn buf(&self, b: MetaBuf) -> Option<&[u8]> {
        let start = usize::from(b.0).checked_mul(self.page_bytes)?;
        self.meta.get(start..start.checked_add(self.page_bytes)?)
    }

    pub(crate) fn flag(&self, tp: Tpn) -> u8 {
        self.flags.get(tp.0 as usize).copied().unwrap_or(0)
    }

    /// One more (or one fewer) write-back of `tp` in flight.
    pub(crate) fn writes_add(&mut self, tp: Tpn, more: bool) {
        if let Some(x) = self.flags.get_mut(tp.0 as usize) {
            let n = *x & F_WRITING;
            let n = if more {
                n.saturating_add(1).min(F_WRITING)
            } else {
                n.saturating_sub(1)
            };
            *x = (*x & !F_WRITING) | n;
        }
    }

    pub(crate) fn set_flag(&mut self, tp: Tpn, f: u8, on: bool) {
        if let Some(x) = self.flags.get_mut(tp.0 as usize) {
            if on {
                *x |= f;
            } else {
                *x &= !f;
            }
        }
    }

    /// Makes `tp` dirty (most recently updated). A unit its in-flight
    /// programs reserved passes to the dirty set.
    pub(crate) fn mark_dirty(&mut self, tp: Tpn) -> Result<(), Error> {
        self.dirty.update(tp)?;
        if self.flag(tp) & F_RESERVED != 0 {
            self.set_flag(tp, F_RESERVED, false);
            self.reserved = self.reserved.saturating_sub(1);
        }
        Ok(())
    }

    /// The least recently updated dirty TP that no data program in flight
    /// will dirty again: the one to write back next. A TP with programs in
    /// flight is left dirty: writing it back would free no budget (it would
    /// hold a unit as being written and another as reserved) and its
    /// programs would dirty it again, so it would be written twice.
    pub(crate) fn oldest_idle_dirty(&self) -> Result<Option<Tpn>, Error> {
        let inflight = &*self.inflight;
        self.dirty
            .oldest_where(|tp| inflight.get(tp.0 as usize).copied().unwrap_or(0) == 0)
    }

    /// Takes dirty TP `tp` for a write-back: it stays in the budget as
    /// being written, and again as reserved if data programs that will
    /// dirty it are still in flight.
    pub(crate) fn take_for_write_back(&mut self, tp: Tpn) -> Result<(), Error> {
        if !self.dirty.take(tp)? {
            return Err(rare(Error::Corrupt(
                &"writing back a clean translation page",
            )));
        }
        self.writing = self.writing.saturating_add(1);
        self.writes_add(tp, true);
        let busy = self.inflight.get(tp.0 as usize).is_some_and(|c| *c > 0);
        if busy && self.flag(tp) & F_RESERVED == 0 {
            self.set_flag(tp, F_RESERVED, true);
            self.reserved = self.reserved.saturating_add(1);
        }
        Ok(())
    }

    /// Budget in use: dirty, being written back, reserved.
    pub(crate) fn used(&self) -> u32 {
        self.dirty
            .count()
            .saturating_add(self.writing)
            .saturating_add(self.reserved)
    }
}

/// Writes a little-endian u32 at `at`.
pub(crate) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    if let Some(d) = at.checked_add(4).and_then(|e| b.get_mut(at..e)) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// Reads a little-endian u32 at `at` (0 past the end).
pub(crate) fn get_u32(b: &[u8], at: usize) -> u32 {
    at.checked_add(4)
        .and_then(|e| b.get(at..e))
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, u32::from_le_bytes)
}

/// Seals a metadata page: `magic`, two fields, then the CRC of everything else.
pub(crate) fn seal(b: &mut [u8], magic: u32, a: u32, c: u32) {
    put_u32(b, 0, magic);
    put_u32(b, 4, a);
    put_u32(b, 8, c);
    let crc = page_crc(b);
    put_u32(b, 12, crc);
}

pub(crate) fn page_crc(b: &[u8]) -> u32 {
    let mut d = CRC.digest();
    d.update(b.get(..12).unwrap_or(&[]));
    d.update(b.get(META_HEADER..).unwrap_or(&[]));
    d.finalize()
}

/// Checks a metadata page's magic and CRC; returns its two fields.
pub(crate) fn unseal(b: &[u8], magic: u32) -> Option<(u32, u32)> {
    if b.len() < META_HEADER || get_u32(b, 0) != magic || get_u32(b, 12) != page_crc(b) {
        return None;
    }
    Some((get_u32(b, 4), get_u32(b, 8)))
}

/// Entries of the checkpoint's block table per metadata page of `page_bytes`.
pub(crate) fn entries_per_page(page_bytes: usize) -> u32 {
    u32::try_from(page_bytes.saturating_sub(META_HEADER) / 4).unwrap_or(0)
}

/// Pages of the block table of geometry `g` with metadata pages of
/// `page_bytes`; 0 when the drive cannot keep anchors (too few blocks per
/// plane, or a table one anchor page cannot list).
pub(crate) fn table_pages_for(page_bytes: usize, g: &crate::medium::addr::Geometry) -> u32 {
    let per = entries_per_page(page_bytes);
    if per == 0 || g.blocks_per_plane < 8 {
        return 0;
    }
    let n = g.total_blocks().div_ceil(per);
    if n as usize > crate::persist::cut::MAX_TABLE_PAGES || n > per {
        0
    } else {
        n
    }
}

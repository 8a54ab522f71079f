//! GuardedErase in the data path (longFTL, seed 001 §3.3), and the
//! bad-page-management (BPM) baseline it is compared with.
//!
//! When GC erases a victim, the block is erased with the current gErase mode
//! gE(n) = (`n_WL` wordlines, relief ratio `f`) if the block is *due*: its
//! gErase count is below `f` times its erase count. That per-block ratio is
//! the gErase-count levelling of §3.3.2: blocks with fewer gErase counts than
//! their share are the ones protected. The `n_WL` weakest wordlines come from
//! the weak-wordline detector ([`crate::tech::longftl::weak_wl`]), fed by the ECC reports of
//! every host and GC read. They are erased in low-stress mode
//! ([`NandCmd::GuardedErase`]) and skipped by the page allocator until the
//! next erase, which is the capacity the mode costs.
//!
//! Scope `host` (the paper's choice, §3.3.4): a plane keeps at most one
//! guarded block on its free list, host active blocks take guarded blocks
//! first and GC active blocks unguarded ones, so gErase goes to host
//! allocations. Scope `all` guards every due erase and ignores the flag when
//! allocating (Fig. 16's "maximised relief").
//!
//! Mode `auto`: every GC victim feeds the [`WafMonitor`]; each finished
//! interval goes to the [`ModeSelector`], and a mode change restarts the
//! monitor.
//!
//! BPM retires wordlines for good instead: each block keeps up to
//! `bpm_retired_wls` of its weakest wordlines (those the detector has seen at
//! 10 or more bit errors) out of service, and erases normally.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::lend::Lend;
use crate::ftl::tables::{BlockState, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::{BlockId, PlaneId, Ppn};
use crate::medium::nand::{NandCmd, NandResult, WlSet, MAX_WLS};
pub use crate::tech::longftl::config::{
    EraseMode, GEraseScope, GModeParams, GuardConfig, MAX_MODES,
};
use crate::tech::longftl::gerase_select::ModeSelector;
use crate::tech::longftl::waf_monitor::WafMonitor;
use crate::tech::longftl::weak_wl::{WeakWl, WeakWlTables, WlEntry, SORTED_FROM};

/// Per-block guard state (lent by the caller, see [`GuardTables`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuardMeta {
    /// Wordlines the allocator skips this cycle (low-stress or retired).
    pub skip: WlSet,
    /// Mapping units those wordlines hold.
    pub skip_units: u16,
    /// Erases done with a gErase mode.
    pub gerase_count: u16,
    /// The last erase was a guarded one (and the block has not been opened).
    pub guarded: bool,
}

/// Memory the guard state runs in.
pub struct GuardTables<'a> {
    /// Weak-wordline lists.
    pub wl: WeakWlTables<'a>,
    /// One entry per block.
    pub blocks: &'a mut [GuardMeta],
}

impl GuardTables<'static> {
    /// No tables (the guard is off).
    pub fn none() -> Self {
        GuardTables {
            wl: WeakWlTables {
                entries: &mut [],
                heads: &mut [],
            },
            blocks: &mut [],
        }
    }
}

/// Lengths of the [`GuardTables`] slices a configuration needs (all zero
/// when the guard is off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuardSizes {
    /// Weak-wordline entries.
    pub wl_entries: usize,
    /// Weak-wordline list heads.
    pub wl_heads: usize,
    /// Guard entries.
    pub blocks: usize,
}

impl GuardSizes {
    /// Sizes for `cfg`.
    pub fn for_config(cfg: &crate::config::Config) -> GuardSizes {
        if !cfg.guard.enabled() {
            return GuardSizes::default();
        }
        let blocks = cfg.geometry.total_blocks() as usize;
        GuardSizes {
            wl_entries: blocks.saturating_mul(usize::from(cfg.guard.wls_per_block)),
            wl_heads: blocks.saturating_mul(WeakWl::lists(cfg.guard.ecc_limit)),
            blocks,
        }
    }
}

/// Modes the history keeps (the report shows the first ones).
const HISTORY: usize = 64;

/// Guarded free blocks a plane keeps for its host stream (scope `host`).
const HOST_GUARDED_FREE: u32 = 1;

/// Blocks of room a plane keeps above its valid data before it lets a
/// block skip wordlines (GC needs space to gain space).
const HEADROOM_BLOCKS: u64 = 2;

/// The guard's run-time state inside the core.
pub struct Guard<'a> {
    cfg: GuardConfig,
    wld: WeakWl<'a>,
    meta: &'a mut [GuardMeta],
    waf: WafMonitor,
    sel: ModeSelector,
    mode: usize,
    history: heapless::Vec<u8, HISTORY>,
    last_host: u64,
    last_programmed: u64,
}

impl<'a> GuardTables<'a> {
    /// Carves the tables `cfg` needs (none with the guard off).
    pub fn lend(cfg: &crate::config::Config, l: &mut Lend<'a>) -> Result<Self, Error> {
        let s = GuardSizes::for_config(cfg);
        Ok(GuardTables {
            wl: WeakWlTables {
                entries: l.slice(s.wl_entries, WlEntry::default(), &"wl_entries")?,
                heads: l.slice(s.wl_heads, 0u16, &"wl_heads")?,
            },
            blocks: l.slice(s.blocks, GuardMeta::default(), &"guard")?,
        })
    }
}

impl<'a> Guard<'a> {
    /// GuardedErase or BPM (as `cfg.guard` says) over its tables, or `None`
    /// when the guard is off (normal erases need no state).
    pub fn new(cfg: &crate::config::Config, t: GuardTables<'a>) -> Result<Option<Self>, Error> {
        let gc = cfg.guard;
        if !gc.enabled() {
            return Ok(None);
        }
        let g = &cfg.geometry;
        let need = GuardSizes::for_config(cfg);
        if t.blocks.len() < need.blocks {
            return Err(Error::TableTooSmall(&"guard blocks"));
        }
        if usize::from(gc.wls_per_block) > MAX_WLS
            || u32::from(gc.wls_per_block).saturating_mul(u32::from(g.pages_per_wordline))
                != g.pages_per_block
        {
            return Err(Error::InvalidConfig(
                &"guard: wordlines per block must match the geometry (at most 256)",
            ));
        }
        let mut max_pe = [1u32; MAX_MODES];
        for (p, m) in max_pe.iter_mut().zip(gc.modes.iter()) {
            *p = m.max_pe.max(1);
        }
        let interval = match gc.interval_victims {
            0 => (g.total_blocks() / 20).max(1),
            n => n,
        };
        let waf = WafMonitor::with_window(interval, usize::from(gc.waf_window.max(1)))?;
        let mode = usize::from(gc.fixed_mode.unwrap_or(0)).min(MAX_MODES.saturating_sub(1));
        let mut history = heapless::Vec::new();
        let _ = history.push(mode as u8);
        for m in t.blocks.iter_mut() {
            *m = GuardMeta::default();
        }
        Ok(Some(Guard {
            cfg: gc,
            wld: WeakWl::new(t.wl, gc.wls_per_block, gc.ecc_limit)?,
            meta: t.blocks,
            waf,
            sel: ModeSelector::new(&max_pe)?,
            mode,
            history,
            last_host: 0,
            last_programmed: 0,
        }))
    }

    /// The gErase modes used so far, oldest first.
    pub fn mode_history(&self) -> &[u8] {
        self.history.as_slice()
    }

    /// The stable WAF (thousandths) recorded for gErase mode `mode`, if any.
    pub fn mode_waf(&self, mode: usize) -> Option<u32> {
        self.sel.history(mode).map(|m| m.0)
    }
}

/// A hook set that carries GuardedErase (the assembly implements it).
pub trait HasLongftl<'a> {
    /// The guard's state, if the configuration turned it on.
    fn longftl(&self) -> Option<&Guard<'a>>;
    /// The same, mutable.
    fn longftl_mut(&mut self) -> Option<&mut Guard<'a>>;
}

/// Erases with a gErase mode of block `b` so far.
pub fn gerase_count<'a, H: Hooks + HasLongftl<'a>>(f: &Ftl<'_, H>, b: BlockId) -> u16 {
    gmeta(f, b).map_or(0, |m| m.gerase_count)
}

fn gmeta<'f, 'a: 'f, H: Hooks + HasLongftl<'a>>(
    f: &'f Ftl<'_, H>,
    b: BlockId,
) -> Option<&'f GuardMeta> {
    f.h.longftl()?.meta.get(b.0 as usize)
}

/// Mapping units block `b` cannot hold this cycle (skipped wordlines).
#[inline]
pub(crate) fn skip_units<'a, H: Hooks + HasLongftl<'a>>(f: &Ftl<'_, H>, b: BlockId) -> u16 {
    gmeta(f, b).map_or(0, |m| m.skip_units)
}

/// Whether block `b` is a guarded free block (erased with gErase).
pub(crate) fn is_guarded<'a, H: Hooks + HasLongftl<'a>>(f: &Ftl<'_, H>, b: BlockId) -> bool {
    gmeta(f, b).is_some_and(|m| m.guarded)
}

/// The first page at or after `page` on a wordline block `b` may hold.
pub(crate) fn usable_page<'a, H: Hooks + HasLongftl<'a>>(
    f: &Ftl<'_, H>,
    b: BlockId,
    page: u32,
) -> u32 {
    let Some(m) = gmeta(f, b) else {
        return page;
    };
    if m.skip.is_empty() {
        return page;
    }
    let ppw = u32::from(f.g.pages_per_wordline).max(1);
    let mut p = page;
    while p < f.g.pages_per_block {
        let wl = u16::try_from(p.checked_div(ppw).unwrap_or(0)).unwrap_or(u16::MAX);
        if !m.skip.contains(wl) {
            break;
        }
        p = p
            .wrapping_add(ppw)
            .saturating_sub(p.checked_rem(ppw).unwrap_or(0));
    }
    p
}

/// Feeds a read's ECC report to the weak-wordline detector.
pub(crate) fn guard_read<'a, H: Hooks + HasLongftl<'a>>(
    f: &mut Ftl<'_, H>,
    page: Ppn,
    result: &NandResult,
) -> Result<(), Error> {
    let (Some(g), Ok(rep)) = (f.h.longftl_mut(), result) else {
        return Ok(());
    };
    let b = f.g.block_of(page);
    let ppw = u32::from(f.g.pages_per_wordline).max(1);
    let pib = page.0.checked_rem(f.g.pages_per_block).unwrap_or(0);
    let wl = u16::try_from(pib.checked_div(ppw).unwrap_or(0))
        .map_err(|_| rare(Error::AddressOutOfRange))?;
    let errs = u8::try_from(rep.bit_errors).unwrap_or(u8::MAX);
    g.wld.report(b.0, wl, errs)
}

/// The erase command for victim `b` of plane `p` (see the module
/// documentation), counting GC victims for the WAF monitor.
pub(crate) fn victim_erase<'a, H: Hooks + HasLongftl<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
    b: BlockId,
) -> Result<NandCmd, Error> {
    let plain = NandCmd::Erase { block: b };
    let guarded_free = guarded_free(f, p)?;
    // Room left for skipped wordlines: the plane keeps HEADROOM_BLOCKS
    // blocks of room above its valid data, or GC could run dry.
    let headroom = f
        .room_units(p)?
        .wrapping_add(u64::from(skip_units(f, b)))
        .saturating_sub(u64::from(f.pl(p)?.valid_units))
        .saturating_sub(u64::from(f.g.units_per_block()).saturating_mul(HEADROOM_BLOCKS));
    let per_wl = u64::from(f.g.pages_per_wordline).saturating_mul(u64::from(f.g.units_per_page));
    let fits = |wls: usize| (wls as u64).saturating_mul(per_wl) <= headroom;
    let pe = f.blk(b)?.pe;
    let (host, programmed) = (
        f.stats.host_program_units,
        f.stats
            .host_program_units
            .wrapping_add(f.stats.gc_program_units),
    );
    let Some(g) = f.h.longftl_mut() else {
        return Ok(plain);
    };
    g.waf.host_written(host.saturating_sub(g.last_host));
    g.waf
        .programmed(programmed.saturating_sub(g.last_programmed));
    g.last_host = host;
    g.last_programmed = programmed;
    if let Some(o) = g.waf.victim().filter(|_| g.cfg.mode == EraseMode::GErase) {
        let next = match g.cfg.fixed_mode {
            Some(m) => usize::from(m),
            None => g.sel.observe(o),
        };
        if next != g.mode {
            g.mode = next;
            g.waf.restart();
            let _ = g.history.push(next as u8);
        }
    }
    let meta = *g.meta.get(b.0 as usize).or_rare(Error::AddressOutOfRange)?;
    let mut buf = [0u16; 64];
    match g.cfg.mode {
        EraseMode::Normal => Ok(plain),
        EraseMode::Bpm => {
            let want = usize::from(g.cfg.bpm_retired_wls).min(buf.len());
            let mut skip = meta.skip;
            if (skip.len() as usize) < want && fits(want) {
                let n = g.wld.weakest(b.0, &mut buf)?;
                for &wl in buf.iter().take(n) {
                    if skip.len() as usize >= want {
                        break;
                    }
                    if g.wld.errors(b.0, wl)? >= SORTED_FROM {
                        skip.insert(wl);
                    }
                }
            }
            if let Some(m) = g.meta.get_mut(b.0 as usize) {
                m.skip = skip;
            }
            if skip.is_empty() {
                return Ok(plain);
            }
            Ok(NandCmd::GuardedErase {
                block: b,
                low_stress: WlSet::EMPTY,
                retired: skip,
            })
        }
        EraseMode::GErase => {
            let mode = g.cfg.modes.get(g.mode).copied().unwrap_or_default();
            let n = usize::from(mode.protected_wls).min(buf.len());
            let due = n > 0
                && u64::from(meta.gerase_count).saturating_mul(1000)
                    < u64::from(mode.relief_permille).saturating_mul(u64::from(pe.wrapping_add(1)));
            let room =
                (g.cfg.scope == GEraseScope::All || guarded_free < HOST_GUARDED_FREE) && fits(n);
            if !(due && room) {
                return Ok(plain);
            }
            let got = g.wld.weakest(b.0, buf.get_mut(..n).unwrap_or(&mut []))?;
            let mut low_stress = WlSet::EMPTY;
            for &wl in buf.iter().take(got) {
                low_stress.insert(wl);
            }
            Ok(NandCmd::GuardedErase {
                block: b,
                low_stress,
                retired: WlSet::EMPTY,
            })
        }
    }
}

/// Guarded blocks on plane `p`'s free list.
fn guarded_free<'a, H: Hooks + HasLongftl<'a>>(f: &Ftl<'_, H>, p: PlaneId) -> Result<u32, Error> {
    if f.h.longftl().is_none() {
        return Ok(0);
    }
    let mut n = 0u32;
    let mut cur = f.pl(p)?.free_head;
    while cur != NIL {
        n = n.wrapping_add(u32::from(is_guarded(f, BlockId(cur))));
        cur = f.blk(BlockId(cur))?.next;
    }
    Ok(n)
}

/// A victim erase succeeded: record which wordlines the next cycle skips.
pub(crate) fn guard_erased<'a, H: Hooks + HasLongftl<'a>>(
    f: &mut Ftl<'_, H>,
    cmd: &NandCmd,
) -> Result<(), Error> {
    let (b, low) = match *cmd {
        NandCmd::GuardedErase {
            block, low_stress, ..
        } if !low_stress.is_empty() => (block, Some(low_stress)),
        NandCmd::GuardedErase { block, .. } | NandCmd::Erase { block } => (block, None),
        _ => return Ok(()),
    };
    let per_wl = u32::from(f.g.pages_per_wordline).saturating_mul(u32::from(f.g.units_per_page));
    let Some(g) = f.h.longftl_mut() else {
        return Ok(());
    };
    let bpm = g.cfg.mode == EraseMode::Bpm;
    let m = g
        .meta
        .get_mut(b.0 as usize)
        .or_rare(Error::AddressOutOfRange)?;
    let old = m.skip_units;
    match low {
        Some(set) => {
            m.skip = set;
            m.gerase_count = m.gerase_count.wrapping_add(1);
            m.guarded = true;
            f.stats.low_stress_wls = f.stats.low_stress_wls.wrapping_add(u64::from(set.len()));
            f.stats.guarded_erases = f.stats.guarded_erases.wrapping_add(1);
        }
        None if bpm => m.guarded = false,
        None => {
            m.skip = WlSet::EMPTY;
            m.guarded = false;
        }
    }
    m.skip_units = u16::try_from(m.skip.len().saturating_mul(per_wl)).unwrap_or(u16::MAX);
    let new = m.skip_units;
    let pl = f.pl_mut(f.g.plane_of(b))?;
    pl.skipped_units = pl
        .skipped_units
        .saturating_sub(u32::from(old))
        .wrapping_add(u32::from(new));
    Ok(())
}

/// Block `b` left service (bad or retiring): its skipped units no longer
/// count against the plane, since the whole block is lost.
pub(crate) fn guard_forget<'a, H: Hooks + HasLongftl<'a>>(
    f: &mut Ftl<'_, H>,
    b: BlockId,
) -> Result<(), Error> {
    let Some(g) = f.h.longftl_mut() else {
        return Ok(());
    };
    let m = g
        .meta
        .get_mut(b.0 as usize)
        .or_rare(Error::AddressOutOfRange)?;
    let old = m.skip_units;
    m.skip_units = 0;
    m.skip = WlSet::EMPTY;
    m.guarded = false;
    let pl = f.pl_mut(f.g.plane_of(b))?;
    pl.skipped_units = pl.skipped_units.saturating_sub(u32::from(old));
    Ok(())
}

/// Whether a free block's guard flag suits `stream` best, for the free
/// block choice: host streams take guarded blocks first and GC streams
/// unguarded ones (scope `host`); `None` when the flag does not matter.
pub(crate) fn guard_preference<'a, H: Hooks + HasLongftl<'a>>(
    f: &Ftl<'_, H>,
    stream: Stream,
) -> Option<bool> {
    let g = f.h.longftl()?;
    (g.cfg.mode == EraseMode::GErase && g.cfg.scope == GEraseScope::Host)
        .then_some(stream == Stream::Host)
}

/// A block was opened: it is no longer a guarded free block.
pub(crate) fn guard_opened<'a, H: Hooks + HasLongftl<'a>>(f: &mut Ftl<'_, H>, b: BlockId) {
    if let Some(m) = f.h.longftl_mut().and_then(|g| g.meta.get_mut(b.0 as usize)) {
        m.guarded = false;
    }
}

/// Checks the detector's lists of every block (tests, debugging).
pub fn audit_guard<'a, H: Hooks + HasLongftl<'a>>(f: &Ftl<'_, H>) -> Result<(), Error> {
    let Some(g) = f.h.longftl() else {
        return Ok(());
    };
    for b in 0..f.g.total_blocks() {
        g.wld.audit_block(b)?;
        let m = gmeta(f, BlockId(b)).copied().unwrap_or_default();
        let st = f.blk(BlockId(b))?.state;
        if matches!(st, BlockState::Bad | BlockState::Retiring) && m.skip_units != 0 {
            return Err(rare(Error::Corrupt(
                &"lost block still counts skipped units",
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! GuardedErase over the mechanism: a formatted core on the test
    //! medium, its hooks called as GC calls them.
    use super::*;
    use crate::config::Config;
    use crate::medium::nand::ReadReport;
    use crate::test_nand::{small_geometry, with_core};

    #[test]
    fn a_due_victim_is_erased_guarded_and_its_weakest_wordlines_are_skipped() {
        let mut cfg = Config::with_op_ratio(small_geometry(1), 0.5).unwrap();
        cfg.write_buffer_units = 8;
        cfg.read_slots = 4;
        cfg.max_inflight = 32;
        let mut modes = GuardConfig::OFF.modes;
        modes[1] = GModeParams {
            protected_wls: 2,
            relief_permille: 1000,
            max_pe: 100,
        };
        cfg.guard = GuardConfig {
            mode: EraseMode::GErase,
            fixed_mode: Some(1),
            scope: GEraseScope::All,
            modes,
            wls_per_block: 8,
            ecc_limit: 40,
            ..GuardConfig::OFF
        };
        with_core(cfg, |ftl, _| {
            let b = BlockId(5);
            let p = ftl.g.plane_of(b);
            // Reads of block 5 report wordlines 3 and 6 as the weakest.
            for (wl, errs) in [(1u32, 12u16), (3, 30), (6, 25), (7, 11)] {
                let page = ftl.g.ppn(b, wl);
                let rep = ReadReport {
                    bit_errors: errs,
                    ..ReadReport::default()
                };
                guard_read(ftl, page, &Ok(rep)).unwrap();
            }
            let cmd = victim_erase(ftl, p, b).unwrap();
            let NandCmd::GuardedErase { low_stress, .. } = cmd else {
                panic!("a due block is erased guarded: {cmd:?}");
            };
            assert!(low_stress.contains(3) && low_stress.contains(6));
            assert_eq!(low_stress.len(), 2);
            guard_erased(ftl, &cmd).unwrap();
            assert_eq!(ftl.stats().guarded_erases, 1);
            assert_eq!(ftl.stats().low_stress_wls, 2);
            assert_eq!(skip_units(ftl, b), 2, "two wordlines of one unit each");
            assert_eq!(usable_page(ftl, b, 3), 4, "wordline 3 is skipped");
            assert_eq!(usable_page(ftl, b, 6), 7, "wordline 6 is skipped");
            assert_eq!(usable_page(ftl, b, 2), 2);
            // Out of service, the block's skipped units stop counting.
            guard_forget(ftl, b).unwrap();
            assert_eq!(skip_units(ftl, b), 0);
        })
    }
}

//! GC by handle: a victim's valid units go to a GC block of the handle
//! whose data the victim holds, so relocated data stays apart as the
//! host's writes were (FDP's initially isolated reclaim units keep their
//! isolation through GC: without it GC mixes the handles again and the
//! WAF gain is lost).
//!
//! Handle 0 uses the core's GC active block; handles 1.. hold one GC
//! block per plane each, behind the [`crate::ftl::hooks::Migration`]
//! hooks for held blocks (their erased pages count as GC space). When a
//! plane is down to its GC reserve a handle without an open GC block
//! shares the core's (mixing then is safe, and space must not be pinned);
//! when GC finds no victim, a held block is emptied. Every function falls
//! back to the baseline's answer when placement is off.

use super::handles::{st, HasPlacement};
use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::{BlockId, PlaneId};

/// Index of handle `h`'s (1..) GC block of plane `p` in `gc_open`.
fn slot<H>(f: &Ftl<'_, H>, h: u8, p: PlaneId) -> usize {
    usize::from(h.saturating_sub(1))
        .saturating_mul(f.g.planes() as usize)
        .wrapping_add(p.0 as usize)
}

/// The held GC blocks of plane `p`.
fn held<'f, 'a: 'f, H: HasPlacement<'a>>(
    f: &'f Ftl<'_, H>,
    p: PlaneId,
) -> impl Iterator<Item = u32> + 'f {
    let planes = f.g.planes() as usize;
    let gc: &[u32] = f.h.placement().map_or(&[], |pm| &*pm.t.gc_open);
    gc.iter()
        .skip(p.0 as usize)
        .step_by(planes.max(1))
        .copied()
        .filter(|&b| b != NIL)
}

/// Where off-chip GC data of plane `p` goes: the GC block of the victim's
/// handle (opened while the plane is above its GC reserve), else the
/// core's GC active block.
pub fn offchip_target<'a, H: Hooks + HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
) -> Result<Option<BlockId>, Error> {
    let victim = f.pl(p)?.victim;
    let h = match f.h.placement() {
        Some(pm) => pm.t.block_handle.get(victim as usize).copied().unwrap_or(0),
        None => 0,
    };
    if h > 0 {
        let at = slot(f, h, p);
        let cur = st(f)?.t.gc_open.get(at).copied().unwrap_or(NIL);
        if cur != NIL {
            let m = f.blk(BlockId(cur))?;
            if m.state == BlockState::Open && u32::from(m.next_page) < f.data_end() {
                return Ok(Some(BlockId(cur)));
            }
        }
        if f.pl(p)?.free_count > f.cfg.gc_reserve_blocks {
            if let Some(b) = f.open_block(p, Stream::Gc)? {
                let pm = st(f)?;
                if let Some(e) = pm.t.gc_open.get_mut(at) {
                    *e = b.0;
                }
                if let Some(e) = pm.t.block_handle.get_mut(b.0 as usize) {
                    *e = h;
                }
                f.note_gc_blocks(p)?;
                return Ok(Some(b));
            }
        }
    }
    let b = f.gc_target(p)?;
    if let (Some(b), Some(pm)) = (b, f.h.placement_mut()) {
        if h == 0 {
            if let Some(e) = pm.t.block_handle.get_mut(b.0 as usize) {
                *e = 0;
            }
        }
    }
    Ok(b)
}

/// Held GC blocks of plane `p`.
pub fn held_blocks<'a, H: HasPlacement<'a>>(f: &Ftl<'_, H>, p: PlaneId) -> Result<u32, Error> {
    Ok(held(f, p).count() as u32)
}

/// Erased pages left in the held GC blocks of plane `p`.
pub fn held_erased_pages<'a, H: Hooks + HasPlacement<'a>>(
    f: &Ftl<'_, H>,
    p: PlaneId,
) -> Result<u32, Error> {
    let ppb = f.g.pages_per_block;
    let mut erased = 0u32;
    for b in held(f, p) {
        let next = u32::from(f.blk(BlockId(b))?.next_page);
        erased = erased.wrapping_add(ppb.saturating_sub(next));
    }
    Ok(erased)
}

/// Whether `b` is a held GC block of plane `p`.
pub fn holds<'a, H: HasPlacement<'a>>(
    f: &Ftl<'_, H>,
    p: PlaneId,
    b: BlockId,
) -> Result<bool, Error> {
    Ok(held(f, p).any(|x| x == b.0))
}

/// A held GC block of plane `p` to empty when GC finds no victim (the one
/// with the fewest valid units whose programs finished); it stops being
/// held and its data joins handle 0's.
pub fn reclaim_open<'a, H: Hooks + HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
    p: PlaneId,
) -> Result<Option<BlockId>, Error> {
    let mut idle: Option<(u16, u32)> = None;
    for b in held(f, p) {
        let m = f.blk(BlockId(b))?;
        if m.pending == 0 {
            let c = (m.valid, b);
            idle = Some(idle.map_or(c, |x| x.min(c)));
        }
    }
    let Some((_, b)) = idle else {
        return Ok(None);
    };
    f.gc_block_closed(p, BlockId(b))?;
    // Its data goes to the core's GC block: to a new block of its handle
    // it would be reclaimed again, and again.
    if let Some(e) = st(f)?.t.block_handle.get_mut(b as usize) {
        *e = 0;
    }
    Ok(Some(BlockId(b)))
}

/// GC block `b` of plane `p` filled or went bad: it is no longer held.
pub fn gc_block_closed<'a, H: HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
    _p: PlaneId,
    b: BlockId,
) -> Result<(), Error> {
    if let Some(pm) = f.h.placement_mut() {
        for e in pm.t.gc_open.iter_mut().filter(|e| **e == b.0) {
            *e = NIL;
        }
    }
    Ok(())
}

/// Every block of plane `p` was retired: no GC block of it stays held.
pub fn plane_retired<'a, H: HasPlacement<'a>>(f: &mut Ftl<'_, H>, p: PlaneId) -> Result<(), Error> {
    let planes = f.g.planes() as usize;
    if let Some(pm) = f.h.placement_mut() {
        for e in
            pm.t.gc_open
                .iter_mut()
                .skip(p.0 as usize)
                .step_by(planes.max(1))
        {
            *e = NIL;
        }
    }
    Ok(())
}

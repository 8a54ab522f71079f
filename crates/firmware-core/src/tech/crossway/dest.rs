//! The destination choice and the source plane of a cross-way GC program.

use core::cmp::Reverse;

use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::Ftl;
use crate::medium::addr::{BlockId, PlaneId, Pun};
use crate::medium::nand::Slot;

/// How busy plane `q` is from the core's view: GC reads in flight there and
/// programs pending on its open host and GC blocks.
fn busy<H: Hooks>(f: &Ftl<'_, H>, q: PlaneId) -> Result<u32, Error> {
    let pl = f.pl(q)?;
    let (host, gc, reads) = (pl.host_active, pl.gc_active, pl.gc_reads);
    let pending = |b: u32| f.blk(BlockId(b)).map_or(0, |m| u32::from(m.pending));
    Ok(u32::from(reads)
        .wrapping_add(pending(host))
        .wrapping_add(pending(gc)))
}

/// The GC destination block for pages of plane `p`: the GC active block of
/// the least busy other way of `p`'s channel (same plane index within its
/// die) that has GC space above its reserve, or at it with its GC block
/// open, and room for more valid data; ties go to the way
/// with more GC space. `None`: no way qualifies, GC stays in `p`.
pub(crate) fn target<H: Hooks>(f: &mut Ftl<'_, H>, p: PlaneId) -> Result<Option<BlockId>, Error> {
    let ppd = u32::from(f.g.planes_per_die).max(1);
    let dpc = u32::from(f.g.dies_per_channel).max(1);
    let die = p.0.checked_div(ppd).unwrap_or(0);
    let first_die = die.checked_div(dpc).unwrap_or(0).saturating_mul(dpc);
    let within = p.0.checked_rem(ppd).unwrap_or(0);
    let mut best: Option<(u32, u32, PlaneId)> = None;
    for d in first_die..first_die.wrapping_add(dpc) {
        let q = PlaneId(d.saturating_mul(ppd).wrapping_add(within));
        if d == die || !f.has_room(q)? {
            continue;
        }
        // Above its reserve, or at it with its GC block open (no free
        // block taken): the way's own GC keeps its reserve, as in the
        // baseline.
        let space = f.gc_free(q)?;
        let open = f.pl(q)?.gc_active != crate::ftl::tables::NIL;
        if space < f.cfg.gc_reserve_blocks || (space == f.cfg.gc_reserve_blocks && !open) {
            continue;
        }
        let b = busy(f, q)?;
        let better = match best {
            None => true,
            Some((bb, bs, _)) => (b, Reverse(space)) < (bb, Reverse(bs)),
        };
        if better {
            best = Some((b, space, q));
        }
    }
    match best {
        Some((_, _, q)) => f.gc_target(q),
        None => Ok(None),
    }
}

/// The plane GC slot `s` belongs to: the plane of the unit it was read
/// from (its `aux`), which a cross-way program does not share.
pub(crate) fn source_plane<H: Hooks>(f: &Ftl<'_, H>, s: Slot) -> Result<PlaneId, Error> {
    let from = Pun(f.slot(s)?.aux);
    Ok(f.g.plane_of(f.g.block_of(f.g.page_of_unit(from))))
}

//! The handles' state and data path (see [`super`]).

use crate::config::Config;
use crate::error::{Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::lend::Lend;
use crate::ftl::tables::{BlockState, Fifo, NIL};
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::{BlockId, Lpn, PlaneId};
use crate::medium::nand::Slot;

/// Handles at most (the handle is a byte in the slot table).
pub const MAX_HANDLES: u8 = 64;

/// The slices placement keeps its state in.
pub struct PlacementTables<'a> {
    queues: &'a mut [Fifo],
    pub(super) active: &'a mut [u32],
    cursor: &'a mut [u32],
    slot_handle: &'a mut [u8],
    host_units: &'a mut [u64],
    /// The handle whose data each block holds (GC keeps it with it).
    pub(super) block_handle: &'a mut [u8],
    /// GC blocks of handles 1.. per plane (handle 0's is the core's).
    pub(super) gc_open: &'a mut [u32],
}

impl<'a> PlacementTables<'a> {
    /// Carves the tables `cfg` needs (none when placement is off).
    pub fn lend(cfg: &Config, l: &mut Lend<'a>) -> Result<Self, Error> {
        let h = usize::from(cfg.placement.handles);
        let on = h > 0;
        let planes = if on {
            cfg.geometry.planes() as usize
        } else {
            0
        };
        let slots = if on {
            cfg.write_buffer_units as usize
        } else {
            0
        };
        let blocks = if on {
            cfg.geometry.total_blocks() as usize
        } else {
            0
        };
        Ok(PlacementTables {
            queues: l.slice(h, Fifo::EMPTY, &"placement queues")?,
            active: l.slice(h.saturating_mul(planes), NIL, &"placement blocks")?,
            cursor: l.slice(h, 0u32, &"placement cursors")?,
            slot_handle: l.slice(slots, 0u8, &"placement slots")?,
            host_units: l.slice(h, 0u64, &"placement units")?,
            block_handle: l.slice(blocks, 0u8, &"placement block handles")?,
            gc_open: l.slice(
                h.saturating_sub(1).saturating_mul(planes),
                NIL,
                &"placement gc blocks",
            )?,
        })
    }
}

/// Placement state: per-handle queues, open blocks and counters.
pub struct Placement<'a> {
    pub(super) t: PlacementTables<'a>,
    pub(super) handles: u8,
    /// Handle of the next write taken by the core.
    next: u8,
    /// Handle of the page being formed.
    page: Option<u8>,
    /// Units queued over every handle.
    queued: u32,
    /// Where the next page search starts.
    turn: u8,
}

impl<'a> Placement<'a> {
    /// Placement over its tables (`None` when it is off).
    pub fn new(cfg: &Config, t: PlacementTables<'a>) -> Result<Option<Self>, Error> {
        let handles = cfg.placement.handles;
        if handles == 0 {
            return Ok(None);
        }
        if handles > MAX_HANDLES {
            return Err(Error::InvalidConfig(&"placement handles above 64"));
        }
        Ok(Some(Placement {
            t,
            handles,
            next: 0,
            page: None,
            queued: 0,
            turn: 0,
        }))
    }

    /// Host units written through handle `h`.
    pub fn host_units(&self, h: u8) -> u64 {
        self.t.host_units.get(usize::from(h)).copied().unwrap_or(0)
    }

    /// Handles configured.
    pub fn handles(&self) -> u8 {
        self.handles
    }

    /// The handle whose data block `b` holds (GC moves its units to that
    /// handle's GC block).
    pub fn block_handle(&self, b: BlockId) -> u8 {
        self.t.block_handle.get(b.0 as usize).copied().unwrap_or(0)
    }
}

/// Hook sets that can hold placement.
pub trait HasPlacement<'a> {
    /// Placement, when on.
    fn placement(&self) -> Option<&Placement<'a>>;
    /// Placement, when on, mutably.
    fn placement_mut(&mut self) -> Option<&mut Placement<'a>>;
}

pub(super) fn st<'a, 'b, H: HasPlacement<'a>>(
    f: &'b mut Ftl<'_, H>,
) -> Result<&'b mut Placement<'a>, Error> {
    f.h.placement_mut()
        .or_rare(Error::Corrupt(&"placement hook without placement"))
}

/// A host write of `lpn` through handle `handle` ([`Ftl::write`] with a
/// placement identifier). Handles beyond the configured count are refused.
pub fn write<'a, H: Hooks + HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
    lpn: Lpn,
    handle: u8,
    now: u64,
) -> Result<Slot, Error> {
    if let Some(p) = f.h.placement_mut() {
        if handle >= p.handles {
            return Err(Error::BadRequest(
                &"placement handle beyond the configured handles",
            ));
        }
        p.next = handle;
    }
    let r = f.write(lpn, now);
    if let Some(p) = f.h.placement_mut() {
        p.next = 0;
    }
    r
}

/// Queues write-buffer slot `s` under its handle (a new write: the handle
/// of the write; back at the head after a failed program: the one it had).
pub fn queue<'a, H: Hooks + HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
    s: Slot,
    front: bool,
) -> Result<(), Error> {
    let slots = &mut *f.t.slots;
    let p =
        f.h.placement_mut()
            .or_rare(Error::Corrupt(&"placement hook without placement"))?;
    let i = usize::from(s.0);
    let h = if front {
        p.t.slot_handle.get(i).copied().unwrap_or(0)
    } else {
        let h = p.next;
        if let Some(e) = p.t.slot_handle.get_mut(i) {
            *e = h;
        }
        if let Some(n) = p.t.host_units.get_mut(usize::from(h)) {
            *n = n.wrapping_add(1);
        }
        h
    };
    let q =
        p.t.queues
            .get_mut(usize::from(h))
            .or_rare(Error::Corrupt(&"placement handle"))?;
    if front {
        q.push_front(slots, s.0)?;
    } else {
        q.push_back(slots, s.0)?;
    }
    p.queued = p.queued.wrapping_add(1);
    Ok(())
}

/// Takes the next slot: from the handle of the page being formed, or,
/// for a new page, from the next handle (round robin) with a page's worth
/// queued (any handle with data when the host flushes).
pub fn take<'a, H: Hooks + HasPlacement<'a>>(f: &mut Ftl<'_, H>) -> Result<Option<u16>, Error> {
    let upp = u16::from(f.g.units_per_page);
    let force = f.force_flush;
    let slots = &mut *f.t.slots;
    let p =
        f.h.placement_mut()
            .or_rare(Error::Corrupt(&"placement hook without placement"))?;
    let h = match p.page {
        Some(h) => h,
        None => {
            let mut pick = None;
            for k in 0..p.handles {
                let h = p.turn.wrapping_add(k).checked_rem(p.handles).unwrap_or(0);
                let len = p.t.queues.get(usize::from(h)).map_or(0, |q| q.len);
                if len >= upp || (force && len > 0) {
                    pick = Some(h);
                    break;
                }
            }
            let Some(h) = pick else { return Ok(None) };
            p.turn = h.wrapping_add(1).checked_rem(p.handles).unwrap_or(0);
            p.page = Some(h);
            h
        }
    };
    let q =
        p.t.queues
            .get_mut(usize::from(h))
            .or_rare(Error::Corrupt(&"placement handle"))?;
    let s = q.pop(slots)?;
    if s.is_some() {
        p.queued = p.queued.saturating_sub(1);
    }
    Ok(s)
}

/// A taken slot goes back to the head of its handle's queue (its page is
/// not programmed now); the page is formed anew next time.
pub fn put_back<'a, H: Hooks + HasPlacement<'a>>(f: &mut Ftl<'_, H>, s: Slot) -> Result<(), Error> {
    queue(f, s, true)?;
    let p = st(f)?;
    p.page = None;
    Ok(())
}

/// Slots queued over every handle.
pub fn queued<'a, H: Hooks + HasPlacement<'a>>(f: &Ftl<'_, H>) -> u32 {
    f.h.placement().map_or(0, |p| p.queued)
}

/// The open block of the handle of the page just formed, in the next
/// plane of the handle's round robin that has room, opening one there if
/// needed. A handle's blocks count against the plane's room: a plane
/// takes a new handle block only while its valid data leaves a block per
/// open handle block beyond the two the core's margin covers.
pub fn host_target<'a, H: Hooks + HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
) -> Result<Option<BlockId>, Error> {
    let planes = f.g.planes();
    let end = f.data_end();
    let (h, handles) = {
        let p = st(f)?;
        let h = p.page.take().unwrap_or(0);
        (h, u32::from(p.handles))
    };
    let base = (h as usize).saturating_mul(planes as usize);
    for _ in 0..planes {
        let pl = {
            let p = st(f)?;
            let c =
                p.t.cursor
                    .get_mut(usize::from(h))
                    .or_rare(Error::Corrupt(&"placement cursor"))?;
            let pl = *c;
            *c = if pl.wrapping_add(1) >= planes {
                0
            } else {
                pl.wrapping_add(1)
            };
            pl
        };
        let plane = PlaneId(pl);
        if !f.has_room(plane)? {
            continue;
        }
        let at = base.wrapping_add(pl as usize);
        let cur = st(f)?.t.active.get(at).copied().unwrap_or(NIL);
        if cur != NIL {
            let m = f.blk(BlockId(cur))?;
            if m.state == BlockState::Open && u32::from(m.next_page) < end {
                return Ok(Some(BlockId(cur)));
            }
            if let Some(e) = st(f)?.t.active.get_mut(at) {
                *e = NIL;
            }
        }
        let open = (0..handles)
            .filter(|&k| {
                f.h.placement().is_some_and(|p| {
                    p.t.active
                        .get(
                            (k as usize)
                                .saturating_mul(planes as usize)
                                .wrapping_add(pl as usize),
                        )
                        .is_some_and(|&b| b != NIL)
                })
            })
            .count() as u64;
        let open = open.wrapping_add(u64::from(super::gc::held_blocks(f, plane)?));
        // The core's margin covers its host block and one more.
        let spare = u64::from(f.data_units_per_block()).saturating_mul(open.saturating_sub(1));
        let valid = u64::from(f.pl(plane)?.valid_units);
        if valid.wrapping_add(spare) >= f.room_units(plane)? {
            continue;
        }
        if let Some(b) = f.open_block(plane, Stream::Host)? {
            let p = st(f)?;
            if let Some(e) = p.t.active.get_mut(at) {
                *e = b.0;
            }
            if let Some(e) = p.t.block_handle.get_mut(b.0 as usize) {
                *e = h;
            }
            return Ok(Some(b));
        }
    }
    Ok(None)
}

/// Block `b` has all its data pages claimed: it leaves its handle.
pub fn block_claimed<'a, H: Hooks + HasPlacement<'a>>(
    f: &mut Ftl<'_, H>,
    b: BlockId,
) -> Result<(), Error> {
    let p = st(f)?;
    for e in p.t.active.iter_mut() {
        if *e == b.0 {
            *e = NIL;
        }
    }
    Ok(())
}

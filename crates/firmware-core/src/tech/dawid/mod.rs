//! Dawid (seed 004): the LIDF flush order of the write buffer.
//!
//! It plugs into the core as its [`crate::ftl::hooks::FlushOrder`] hook:
//! each buffered write is filed under the translation page of its mapping
//! entry, and the buffer flushes the writes of one translation page at a
//! time, the page LIDF picks ([`lidf`]). The capacitor budget and the
//! partial protection of dirty translation pages belong to the persistence
//! mechanism (`persist::map_dirty`, `ftl::persist`), which runs with FIFO
//! too.

pub mod lidf;

use crate::config::{Config, FlushPolicy};
use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::lend::Lend;
use crate::ftl::tables::NIL16;
use crate::ftl::Ftl;
use crate::medium::addr::Lpn;
use crate::medium::nand::Slot;
use crate::persist::Tpn;
use lidf::{Lidf, LidfTables, TpEntry};

/// The LIDF flush order's state: the scheduler and one list of buffered
/// write slots per translation page, linked through the slots.
pub struct LidfOrder<'a> {
    lidf: Lidf<'a>,
    heads: &'a mut [u16],
    /// Buffered writes (live or dead) in those lists.
    len: u32,
}

/// The slices the LIDF flush order keeps its state in.
pub struct LidfOrderTables<'a> {
    lidf: LidfTables<'a>,
    heads: &'a mut [u16],
}

impl<'a> LidfOrder<'a> {
    /// Carves the tables `cfg` needs: an entry, a heap slot and a list head
    /// per translation page when persistence is on and the flush policy is
    /// LIDF; none otherwise.
    pub fn lend<L: Lend<'a>>(cfg: &Config, l: &mut L) -> Result<LidfOrderTables<'a>, Error> {
        let n = if cfg.persist.flush_policy == FlushPolicy::Lidf {
            crate::persist::tp::sizes(&cfg.persist, cfg.logical_units).0
        } else {
            0
        };
        Ok(LidfOrderTables {
            lidf: LidfTables {
                entries: l.slice(n, TpEntry::default(), "lidf")?,
                heap: l.slice(n, 0u32, "lidf_heap")?,
            },
            heads: l.slice(n, NIL16, "tp_heads")?,
        })
    }

    /// The LIDF order over its tables, or `None` when the buffer flushes FIFO.
    pub fn new(t: LidfOrderTables<'a>) -> Result<Option<Self>, Error> {
        if t.heads.is_empty() {
            return Ok(None);
        }
        t.heads.fill(NIL16);
        Ok(Some(LidfOrder {
            lidf: Lidf::new(t.lidf)?,
            heads: t.heads,
            len: 0,
        }))
    }
}

/// A hook set that carries the LIDF flush order (the assembly implements it).
pub trait HasLidf<'a> {
    /// The LIDF state, if the flush policy is LIDF.
    fn lidf(&self) -> Option<&LidfOrder<'a>>;
    /// The same, mutable.
    fn lidf_mut(&mut self) -> Option<&mut LidfOrder<'a>>;
}

fn order<'r, 'a, H: HasLidf<'a>>(f: &'r mut Ftl<'_, H>) -> Result<&'r mut LidfOrder<'a>, Error> {
    f.h.lidf_mut().ok_or(Error::Corrupt("lidf state missing"))
}

/// Files buffered write `s` under the translation page of its mapping entry.
pub(crate) fn push<'a, H: Hooks + HasLidf<'a>>(f: &mut Ftl<'_, H>, s: Slot) -> Result<(), Error> {
    let tp = f.ps.tp_of(Lpn(f.slot(s)?.lpn));
    let o = order(f)?;
    let head = o
        .heads
        .get_mut(tp.0 as usize)
        .ok_or(Error::Corrupt("lidf list"))?;
    let next = *head;
    *head = s.0;
    o.lidf.buffered_write(tp)?;
    o.len = o.len.saturating_add(1);
    f.slot_mut(s)?.next = next;
    Ok(())
}

/// The next buffered write of the translation page LIDF picks (one
/// already dirty, else the one covering the most buffered writes).
pub(crate) fn pop<'a, H: Hooks + HasLidf<'a>>(f: &mut Ftl<'_, H>) -> Result<Option<u16>, Error> {
    let o = order(f)?;
    let Some(tp) = o.lidf.next() else {
        return Ok(None);
    };
    let s = o
        .heads
        .get(tp.0 as usize)
        .copied()
        .ok_or(Error::Corrupt("lidf list"))?;
    if s == NIL16 {
        return Err(Error::Corrupt("LIDF counts a write its list lacks"));
    }
    let next = f.slot(Slot(s))?.next;
    let o = order(f)?;
    if let Some(h) = o.heads.get_mut(tp.0 as usize) {
        *h = next;
    }
    o.lidf.flushed(tp, 1)?;
    o.len = o.len.saturating_sub(1);
    Ok(Some(s))
}

/// Live write `s` left for a program: its program will dirty the page, so
/// from now on the rest of the page's writes are free and go next.
pub(crate) fn taken<'a, H: Hooks + HasLidf<'a>>(f: &mut Ftl<'_, H>, s: Slot) -> Result<(), Error> {
    let tp = f.ps.tp_of(Lpn(f.slot(s)?.lpn));
    order(f)?.lidf.set_dirty(tp, true)
}

/// Write `s`, taken for a page that is not programmed after all, goes back:
/// taken, it counted as dirty for LIDF; back, it is dirty only if its
/// mapping page is.
pub(crate) fn put_back<'a, H: Hooks + HasLidf<'a>>(
    f: &mut Ftl<'_, H>,
    s: Slot,
) -> Result<(), Error> {
    let tp = f.ps.tp_of(Lpn(f.slot(s)?.lpn));
    push(f, s)?;
    if !f.ps.dirty.is_dirty(tp) && f.ps.flag(tp) & crate::persist::tp::F_RESERVED == 0 {
        order(f)?.lidf.set_dirty(tp, false)?;
    }
    Ok(())
}

/// Buffered writes (live or dead) in the lists.
pub(crate) fn queued<'a, H: Hooks + HasLidf<'a>>(f: &Ftl<'_, H>) -> u32 {
    f.h.lidf().map_or(0, |o| o.len)
}

/// Translation page `tp` turned dirty, or was taken for a write-back.
pub(crate) fn tp_dirty<'a, H: Hooks + HasLidf<'a>>(
    f: &mut Ftl<'_, H>,
    tp: Tpn,
    dirty: bool,
) -> Result<(), Error> {
    match f.h.lidf_mut() {
        Some(o) => o.lidf.set_dirty(tp, dirty),
        None => Ok(()),
    }
}

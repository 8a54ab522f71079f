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
use crate::error::{rare, Error, OrRare};
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
    pub fn lend(cfg: &Config, l: &mut Lend<'a>) -> Result<LidfOrderTables<'a>, Error> {
        let n = if cfg.persist.flush_policy == FlushPolicy::Lidf {
            crate::persist::tp::sizes(&cfg.persist, cfg.logical_units).0
        } else {
            0
        };
        Ok(LidfOrderTables {
            lidf: LidfTables {
                entries: l.slice(n, TpEntry::default(), &"lidf")?,
                heap: l.slice(n, 0u32, &"lidf_heap")?,
            },
            heads: l.slice(n, NIL16, &"tp_heads")?,
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
    f.h.lidf_mut()
        .or_rare(Error::Corrupt(&"lidf state missing"))
}

/// Files buffered write `s` under the translation page of its mapping entry.
pub(crate) fn push<'a, H: Hooks + HasLidf<'a>>(f: &mut Ftl<'_, H>, s: Slot) -> Result<(), Error> {
    let tp = f.ps.tp_of(Lpn(f.slot(s)?.lpn));
    let o = order(f)?;
    let head = o
        .heads
        .get_mut(tp.0 as usize)
        .or_rare(Error::Corrupt(&"lidf list"))?;
    let next = *head;
    *head = s.0;
    o.lidf.buffered_write(tp)?;
    o.len = o.len.wrapping_add(1);
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
        .or_rare(Error::Corrupt(&"lidf list"))?;
    if s == NIL16 {
        return Err(rare(Error::Corrupt(&"LIDF counts a write its list lacks")));
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

#[cfg(test)]
mod tests {
    //! LIDF over the mechanism: a real core on the test medium, with the
    //! flush order seen through its hook functions.
    use super::*;
    use crate::config::PersistConfig;
    use crate::test_nand::with_core;
    use crate::FullFtl;
    use std::vec;

    /// Mapping entries per translation page.
    const TP: u32 = 256;

    fn config() -> Config {
        let g = crate::Geometry {
            channels: 1,
            dies_per_channel: 2,
            planes_per_die: 1,
            blocks_per_plane: 64,
            pages_per_block: 32,
            page_bytes: 16 * 1024,
            pages_per_wordline: 2,
            units_per_page: 4,
        };
        let mut cfg = Config::with_op_ratio(g, 0.33).unwrap();
        cfg.write_buffer_units = 16;
        cfg.read_slots = 4;
        cfg.max_inflight = 32;
        cfg.persist = PersistConfig {
            map_entries_per_page: TP,
            flush_policy: FlushPolicy::Lidf,
            // Nothing leaves the buffer while the test fills it.
            flush_start_permille: 900,
            ..cfg.persist
        };
        cfg
    }

    #[test]
    fn buffered_writes_leave_grouped_by_translation_page() {
        let cfg = config();
        with_core(cfg, |ftl, _| {
            // Interleave translation pages: 0, TP, 1, TP + 1, 2, TP + 2, 2 TP.
            let lpns = [0u32, TP, 1, TP + 1, 2, TP + 2, 2 * TP];
            for l in lpns {
                ftl.write(Lpn(l), 0).unwrap();
            }
            assert_eq!(queued(ftl), lpns.len() as u32);
            // LIDF takes every write of the translation page with the most
            // buffered writes before moving on: the order is by page, not by time.
            let mut taken_tps = vec![];
            while let Some(i) = pop(ftl).unwrap() {
                // As the buffer does: a write taken for a program dirties its
                // page, so the page's other writes cost nothing and go next.
                taken(ftl, Slot(i)).unwrap();
                taken_tps.push(ftl.slot(Slot(i)).unwrap().lpn / TP);
            }
            let mut runs = taken_tps.clone();
            runs.dedup();
            assert_eq!(runs.len(), 3, "one run per translation page: {taken_tps:?}");
            assert_eq!(taken_tps.len(), lpns.len());
            assert_eq!(queued(ftl), 0);
        })
    }

    #[test]
    fn fifo_builds_no_lidf_state() {
        let mut cfg = config();
        cfg.persist.flush_policy = FlushPolicy::Fifo;
        let mut mem = vec![0u8; FullFtl::lend_bytes(&cfg).unwrap()];
        let ftl = FullFtl::new(cfg, &mut mem).unwrap();
        assert!(ftl.hooks().lidf().is_none());
        let mut lidf_cfg = config();
        lidf_cfg.persist.flush_policy = FlushPolicy::Lidf;
        assert!(
            FullFtl::lend_bytes(&lidf_cfg).unwrap() > FullFtl::lend_bytes(&cfg).unwrap(),
            "LIDF lends its own tables"
        );
    }
}

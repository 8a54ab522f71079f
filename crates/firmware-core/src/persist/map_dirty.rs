//! Dirty translation pages under a capacitor budget (Dawid, seed 004 §3.2).
//!
//! The capacitor can flush at most `budget` dirty translation pages at a
//! power cut, so no more may be dirty in DRAM. Each mapping update marks its
//! translation page most recently used; when the dirty count exceeds the
//! budget the least recently used pages are written to flash, in batches as
//! large as the chips that program in parallel. The LRU order is an
//! intrusive list over one link pair per translation page, lent by the
//! caller.

use crate::error::{Error, OrRare};
use crate::persist::Tpn;

const NONE: u32 = u32::MAX;

/// LRU links of one translation page (lent by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyLink {
    prev: u32,
    next: u32,
    dirty: bool,
}

impl Default for DirtyLink {
    fn default() -> Self {
        DirtyLink {
            prev: NONE,
            next: NONE,
            dirty: false,
        }
    }
}

/// The dirty set: LRU order, count and budget.
pub struct MapDirty<'a> {
    l: &'a mut [DirtyLink],
    /// Least recently updated.
    head: u32,
    /// Most recently updated.
    tail: u32,
    count: u32,
    budget: u32,
}

impl<'a> MapDirty<'a> {
    /// All translation pages clean; at most `budget` (>= 1) may be dirty.
    pub fn new(links: &'a mut [DirtyLink], budget: u32) -> Result<Self, Error> {
        if budget == 0 || u32::try_from(links.len()).is_err() {
            return Err(Error::InvalidConfig(&"map protection budget of zero pages"));
        }
        links.fill(DirtyLink::default());
        Ok(MapDirty {
            l: links,
            head: NONE,
            tail: NONE,
            count: 0,
            budget,
        })
    }

    /// The budget `ratio` of `pages` translation pages allows (at least one).
    pub fn budget_for(pages: u32, ratio_permille: u32) -> u32 {
        let b = u64::from(pages).saturating_mul(u64::from(ratio_permille)) / 1000;
        u32::try_from(b).unwrap_or(u32::MAX).max(1)
    }

    fn link(&mut self, tp: u32) -> Result<&mut DirtyLink, Error> {
        self.l
            .get_mut(tp as usize)
            .or_rare(Error::AddressOutOfRange)
    }

    /// Whether `tp` is dirty.
    pub fn is_dirty(&self, tp: Tpn) -> bool {
        self.l.get(tp.0 as usize).is_some_and(|l| l.dirty)
    }

    /// Dirty translation pages now.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether more pages are dirty than the capacitor covers.
    pub fn over_budget(&self) -> bool {
        self.count > self.budget
    }

    /// A mapping entry of `tp` changed: `tp` is dirty and most recent.
    /// Returns true if it was clean before.
    pub fn update(&mut self, tp: Tpn) -> Result<bool, Error> {
        let was = self.link(tp.0)?.dirty;
        if was {
            self.unlink(tp.0)?;
        } else {
            self.count = self.count.wrapping_add(1);
        }
        let tail = self.tail;
        {
            let l = self.link(tp.0)?;
            l.dirty = true;
            l.prev = tail;
            l.next = NONE;
        }
        if tail == NONE {
            self.head = tp.0;
        } else {
            self.link(tail)?.next = tp.0;
        }
        self.tail = tp.0;
        Ok(!was)
    }

    fn unlink(&mut self, tp: u32) -> Result<(), Error> {
        let (prev, next) = {
            let l = self.link(tp)?;
            let p = (l.prev, l.next);
            l.prev = NONE;
            l.next = NONE;
            p
        };
        if prev == NONE {
            self.head = next;
        } else {
            self.link(prev)?.next = next;
        }
        if next == NONE {
            self.tail = prev;
        } else {
            self.link(next)?.prev = prev;
        }
        Ok(())
    }

    /// Takes the least recently updated page, whatever the budget; it counts
    /// as clean from now (the caller writes it).
    pub fn pop_oldest(&mut self) -> Result<Option<Tpn>, Error> {
        let tp = self.head;
        if tp == NONE {
            return Ok(None);
        }
        self.unlink(tp)?;
        self.link(tp)?.dirty = false;
        self.count = self.count.saturating_sub(1);
        Ok(Some(Tpn(tp)))
    }

    /// The least recently updated page for which `ok` holds.
    pub fn oldest_where(&self, mut ok: impl FnMut(Tpn) -> bool) -> Result<Option<Tpn>, Error> {
        let mut tp = self.head;
        while tp != NONE {
            if ok(Tpn(tp)) {
                return Ok(Some(Tpn(tp)));
            }
            tp = self
                .l
                .get(tp as usize)
                .or_rare(Error::AddressOutOfRange)?
                .next;
        }
        Ok(None)
    }

    /// Takes `tp` out of the dirty set (if it is in it): it counts as clean
    /// from now (the caller writes it). Returns whether it was dirty.
    pub fn take(&mut self, tp: Tpn) -> Result<bool, Error> {
        if !self.is_dirty(tp) {
            return Ok(false);
        }
        self.unlink(tp.0)?;
        self.link(tp.0)?.dirty = false;
        self.count = self.count.saturating_sub(1);
        Ok(true)
    }

    /// Takes up to `out.len()` least recently updated pages while the set
    /// is over budget; they count as clean from now (the caller writes
    /// them). Returns how many.
    pub fn evict(&mut self, out: &mut [Tpn]) -> Result<usize, Error> {
        let mut n = 0;
        while self.over_budget() && n < out.len() && self.head != NONE {
            let tp = self.head;
            self.unlink(tp)?;
            self.link(tp)?.dirty = false;
            self.count = self.count.saturating_sub(1);
            if let Some(slot) = out.get_mut(n) {
                *slot = Tpn(tp);
            }
            n = n.wrapping_add(1);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_least_recent_in_batches() {
        let mut links = [DirtyLink::default(); 8];
        let mut d = MapDirty::new(&mut links, 2).unwrap();
        for tp in [1, 2, 3, 1, 4] {
            d.update(Tpn(tp)).unwrap();
        }
        assert_eq!(d.count(), 4);
        let mut out = [Tpn(0); 1];
        assert_eq!(d.evict(&mut out).unwrap(), 1);
        assert_eq!(out[0], Tpn(2));
        let mut out = [Tpn(0); 4];
        assert_eq!(d.evict(&mut out).unwrap(), 1);
        assert_eq!(out[0], Tpn(3));
        assert!(!d.over_budget());
        let not_1 = |t: Tpn| t != Tpn(1);
        assert_eq!(d.oldest_where(not_1).unwrap(), Some(Tpn(4)));
        assert!(d.take(Tpn(4)).unwrap() && !d.take(Tpn(4)).unwrap());
        assert_eq!(d.oldest_where(not_1).unwrap(), None);
        assert_eq!(d.count(), 1);
        d.update(Tpn(4)).unwrap();
        assert!(d.is_dirty(Tpn(1)) && d.is_dirty(Tpn(4)) && !d.is_dirty(Tpn(2)));
        assert!(d.update(Tpn(9)).is_err());
        assert_eq!(MapDirty::budget_for(1000, 10), 10);
        assert_eq!(MapDirty::budget_for(5, 10), 1);
    }
}

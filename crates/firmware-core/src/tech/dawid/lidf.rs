//! LIDF, Least Increase of Dirtiness First (seed 004 §3.2): the order in
//! which buffered host writes go to flash when only part of the mapping
//! table is protected by the capacitor.
//!
//! Every buffered write belongs to the translation page holding its mapping
//! entry. Flushing it makes that page dirty; dirty pages beyond the
//! protected budget must themselves be written to flash. LIDF flushes first
//! the writes whose translation page is already dirty (the *zero-cost list*:
//! they add no dirtiness), then the writes of the translation page that
//! covers the most buffered writes (a *max-heap* keyed by that count), so each
//! translation-page write persists as many entries as possible.
//!
//! Both structures live in slices the caller lends, one entry per
//! translation page, so the scheduler sizes itself to the drive and never
//! allocates. Every operation is O(log T) in the number of translation pages
//! (heap) or O(1) (list).

use crate::error::{Error, OrRare};
use crate::persist::Tpn;

/// Marks "no translation page" in links and heap positions.
const NONE: u32 = u32::MAX;

/// Per-translation-page state, lent by the caller (see [`LidfTables`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpEntry {
    /// Buffered writes whose mapping entry is in this translation page.
    pub buffered: u32,
    /// Index in the heap, or `NONE`.
    heap_pos: u32,
    /// Zero-cost list links (`NONE` at the ends).
    prev: u32,
    next: u32,
    /// Whether the page is on the zero-cost list.
    in_zero: bool,
    /// Whether the translation page is dirty in DRAM.
    dirty: bool,
}

impl Default for TpEntry {
    fn default() -> Self {
        TpEntry {
            buffered: 0,
            heap_pos: NONE,
            prev: NONE,
            next: NONE,
            in_zero: false,
            dirty: false,
        }
    }
}

/// The memory LIDF runs in: one [`TpEntry`] and one heap slot per
/// translation page.
pub struct LidfTables<'a> {
    /// Per-translation-page state.
    pub entries: &'a mut [TpEntry],
    /// Heap storage (translation page numbers).
    pub heap: &'a mut [u32],
}

/// The LIDF scheduler state.
pub struct Lidf<'a> {
    e: &'a mut [TpEntry],
    heap: &'a mut [u32],
    heap_len: u32,
    zero_head: u32,
    zero_tail: u32,
}

impl<'a> Lidf<'a> {
    /// A scheduler over `t`; every translation page starts clean with no
    /// buffered write. The heap must have a slot per translation page.
    pub fn new(t: LidfTables<'a>) -> Result<Self, Error> {
        if t.heap.len() < t.entries.len() || u32::try_from(t.entries.len()).is_err() {
            return Err(Error::InvalidConfig(
                &"LIDF heap smaller than the translation pages",
            ));
        }
        t.entries.fill(TpEntry::default());
        Ok(Lidf {
            e: t.entries,
            heap: t.heap,
            heap_len: 0,
            zero_head: NONE,
            zero_tail: NONE,
        })
    }

    fn entry(&self, tp: u32) -> Result<&TpEntry, Error> {
        self.e.get(tp as usize).or_rare(Error::AddressOutOfRange)
    }

    fn entry_mut(&mut self, tp: u32) -> Result<&mut TpEntry, Error> {
        self.e
            .get_mut(tp as usize)
            .or_rare(Error::AddressOutOfRange)
    }

    /// Buffered writes of translation page `tp`.
    pub fn buffered(&self, tp: Tpn) -> Result<u32, Error> {
        Ok(self.entry(tp.0)?.buffered)
    }

    /// A host write whose mapping entry is in `tp` entered the buffer.
    pub fn buffered_write(&mut self, tp: Tpn) -> Result<(), Error> {
        let e = self.entry_mut(tp.0)?;
        e.buffered = e.buffered.wrapping_add(1);
        let (dirty, in_zero, pos) = (e.dirty, e.in_zero, e.heap_pos);
        if dirty {
            if !in_zero {
                self.zero_push(tp.0)?;
            }
        } else if pos == NONE {
            self.heap_push(tp.0)?;
        } else {
            self.sift_up(pos)?;
        }
        Ok(())
    }

    /// `n` buffered writes of `tp` reached flash (or were overwritten in the
    /// buffer): they no longer wait.
    pub fn flushed(&mut self, tp: Tpn, n: u32) -> Result<(), Error> {
        let e = self.entry_mut(tp.0)?;
        e.buffered = e
            .buffered
            .checked_sub(n)
            .or_rare(Error::Corrupt(&"LIDF count underflow"))?;
        let (left, in_zero, pos) = (e.buffered, e.in_zero, e.heap_pos);
        if in_zero {
            if left == 0 {
                self.zero_remove(tp.0)?;
            }
        } else if pos != NONE {
            if left == 0 {
                self.heap_remove(pos)?;
            } else {
                self.sift_down(pos)?;
            }
        }
        Ok(())
    }

    /// Translation page `tp` became dirty (`true`) or was written to flash
    /// (`false`): its buffered writes move between the zero-cost list and
    /// the heap.
    pub fn set_dirty(&mut self, tp: Tpn, dirty: bool) -> Result<(), Error> {
        let e = self.entry_mut(tp.0)?;
        if e.dirty == dirty {
            return Ok(());
        }
        e.dirty = dirty;
        let (buffered, pos, in_zero) = (e.buffered, e.heap_pos, e.in_zero);
        if buffered == 0 {
            return Ok(());
        }
        if dirty {
            if pos != NONE {
                self.heap_remove(pos)?;
            }
            self.zero_push(tp.0)
        } else {
            if in_zero {
                self.zero_remove(tp.0)?;
            }
            self.heap_push(tp.0)
        }
    }

    /// The translation page whose buffered writes should be flushed next:
    /// the oldest zero-cost page, else the page covering the most buffered
    /// writes. `None` when nothing is buffered.
    pub fn next(&self) -> Option<Tpn> {
        if self.zero_head != NONE {
            return Some(Tpn(self.zero_head));
        }
        if self.heap_len > 0 {
            return self.heap.first().map(|&t| Tpn(t));
        }
        None
    }

    fn zero_push(&mut self, tp: u32) -> Result<(), Error> {
        let tail = self.zero_tail;
        {
            let e = self.entry_mut(tp)?;
            e.in_zero = true;
            e.prev = tail;
            e.next = NONE;
        }
        if tail == NONE {
            self.zero_head = tp;
        } else {
            self.entry_mut(tail)?.next = tp;
        }
        self.zero_tail = tp;
        Ok(())
    }

    fn zero_remove(&mut self, tp: u32) -> Result<(), Error> {
        let (prev, next) = {
            let e = self.entry_mut(tp)?;
            e.in_zero = false;
            let links = (e.prev, e.next);
            e.prev = NONE;
            e.next = NONE;
            links
        };
        if prev == NONE {
            self.zero_head = next;
        } else {
            self.entry_mut(prev)?.next = next;
        }
        if next == NONE {
            self.zero_tail = prev;
        } else {
            self.entry_mut(next)?.prev = prev;
        }
        Ok(())
    }

    fn key(&self, i: u32) -> Result<u32, Error> {
        let tp = *self
            .heap
            .get(i as usize)
            .or_rare(Error::Corrupt(&"LIDF heap index"))?;
        Ok(self.entry(tp)?.buffered)
    }

    fn place(&mut self, i: u32, tp: u32) -> Result<(), Error> {
        *self
            .heap
            .get_mut(i as usize)
            .or_rare(Error::Corrupt(&"LIDF heap index"))? = tp;
        self.entry_mut(tp)?.heap_pos = i;
        Ok(())
    }

    fn swap(&mut self, a: u32, b: u32) -> Result<(), Error> {
        let ta = *self
            .heap
            .get(a as usize)
            .or_rare(Error::Corrupt(&"LIDF heap index"))?;
        let tb = *self
            .heap
            .get(b as usize)
            .or_rare(Error::Corrupt(&"LIDF heap index"))?;
        self.place(a, tb)?;
        self.place(b, ta)
    }

    fn heap_push(&mut self, tp: u32) -> Result<(), Error> {
        let i = self.heap_len;
        self.place(i, tp)?;
        self.heap_len = i.wrapping_add(1);
        self.sift_up(i)
    }

    fn heap_remove(&mut self, i: u32) -> Result<(), Error> {
        let last = self
            .heap_len
            .checked_sub(1)
            .or_rare(Error::Corrupt(&"LIDF heap empty"))?;
        let tp = *self
            .heap
            .get(i as usize)
            .or_rare(Error::Corrupt(&"LIDF heap index"))?;
        if i != last {
            self.swap(i, last)?;
        }
        self.heap_len = last;
        self.entry_mut(tp)?.heap_pos = NONE;
        if i < last {
            self.sift_up(i)?;
            self.sift_down(i)?;
        }
        Ok(())
    }

    fn sift_up(&mut self, mut i: u32) -> Result<(), Error> {
        while i > 0 {
            let parent = i.saturating_sub(1) / 2;
            if self.key(i)? <= self.key(parent)? {
                break;
            }
            self.swap(i, parent)?;
            i = parent;
        }
        Ok(())
    }

    fn sift_down(&mut self, mut i: u32) -> Result<(), Error> {
        loop {
            let l = i.saturating_mul(2).wrapping_add(1);
            if l >= self.heap_len {
                return Ok(());
            }
            let r = l.wrapping_add(1);
            let mut big = l;
            if r < self.heap_len && self.key(r)? > self.key(l)? {
                big = r;
            }
            if self.key(big)? <= self.key(i)? {
                return Ok(());
            }
            self.swap(i, big)?;
            i = big;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::persist::map_dirty::{DirtyLink, MapDirty};
    use std::vec;
    use std::vec::Vec;

    /// Runs `writes` (LPNs, in flush order) through a 2-page protection
    /// budget with m0 dirty, as in Fig. 1; returns the translation-page
    /// writes.
    fn count_map_flushes(writes: &[u32]) -> u32 {
        let mut links = [DirtyLink::default(); 5];
        let mut d = MapDirty::new(&mut links, 2).unwrap();
        d.update(Tpn(0)).unwrap();
        let mut flushes = 0;
        for &lpn in writes {
            d.update(Tpn(lpn / ENTRIES_PER_TP)).unwrap();
            let mut out = [Tpn(0); 1];
            while d.evict(&mut out).unwrap() == 1 {
                flushes += 1;
            }
        }
        flushes
    }

    const ENTRIES_PER_TP: u32 = 4;

    /// Seed 004 Fig. 1: five translation pages of four entries, m0 dirty,
    /// two protected, writes W(4) W(17) W(12) W(2) W(6) W(18) W(7).
    const FIG1: [u32; 7] = [4, 17, 12, 2, 6, 18, 7];

    #[test]
    fn fig1_fifo_flushes_five_translation_pages() {
        assert_eq!(count_map_flushes(&FIG1), 5);
    }

    #[test]
    fn fig1_lidf_flushes_two_translation_pages() {
        let mut entries = [TpEntry::default(); 5];
        let mut heap = [0u32; 5];
        let mut lidf = Lidf::new(LidfTables {
            entries: &mut entries,
            heap: &mut heap,
        })
        .unwrap();
        lidf.set_dirty(Tpn(0), true).unwrap();
        let mut buffer: Vec<u32> = FIG1.to_vec();
        for &lpn in &buffer {
            lidf.buffered_write(Tpn(lpn / ENTRIES_PER_TP)).unwrap();
        }
        let mut order = Vec::new();
        while let Some(tp) = lidf.next() {
            // Flush every buffered write of that translation page, oldest first.
            let mine: Vec<u32> = buffer
                .iter()
                .copied()
                .filter(|l| l / ENTRIES_PER_TP == tp.0)
                .collect();
            buffer.retain(|l| l / ENTRIES_PER_TP != tp.0);
            order.extend_from_slice(&mine);
            lidf.set_dirty(tp, true).unwrap();
            lidf.flushed(tp, mine.len() as u32).unwrap();
        }
        // W(2) first (m0 is dirty), then m1's three writes, then m4, then m3.
        assert_eq!(order, vec![2, 4, 6, 7, 17, 18, 12]);
        assert_eq!(count_map_flushes(&order), 2);
    }

    #[test]
    fn heap_orders_by_buffered_count_and_tracks_changes() {
        let mut entries = [TpEntry::default(); 8];
        let mut heap = [0u32; 8];
        let mut lidf = Lidf::new(LidfTables {
            entries: &mut entries,
            heap: &mut heap,
        })
        .unwrap();
        assert_eq!(lidf.next(), None);
        for (tp, n) in [(1u32, 2u32), (5, 4), (3, 1), (7, 3)] {
            for _ in 0..n {
                lidf.buffered_write(Tpn(tp)).unwrap();
            }
        }
        assert_eq!(lidf.next(), Some(Tpn(5)));
        lidf.flushed(Tpn(5), 2).unwrap();
        assert_eq!(lidf.next(), Some(Tpn(7)));
        // A dirty page jumps the queue whatever its count.
        lidf.set_dirty(Tpn(3), true).unwrap();
        assert_eq!(lidf.next(), Some(Tpn(3)));
        lidf.flushed(Tpn(3), 1).unwrap();
        assert_eq!(lidf.next(), Some(Tpn(7)));
        lidf.flushed(Tpn(7), 3).unwrap();
        lidf.flushed(Tpn(5), 2).unwrap();
        assert_eq!(lidf.next(), Some(Tpn(1)));
        lidf.flushed(Tpn(1), 2).unwrap();
        assert_eq!(lidf.next(), None);
        assert!(lidf.flushed(Tpn(1), 1).is_err());
        assert!(lidf.buffered_write(Tpn(8)).is_err());
    }

    proptest::proptest! {
        /// Against a plain model: `next` is a dirty page with buffered
        /// writes when there is one, otherwise a page with the most.
        #[test]
        fn next_matches_a_plain_model(ops in proptest::collection::vec((0u8..3, 0u32..16), 1..400)) {
            let mut entries = [TpEntry::default(); 16];
            let mut heap = [0u32; 16];
            let mut lidf = Lidf::new(LidfTables { entries: &mut entries, heap: &mut heap }).unwrap();
            let mut count = [0u32; 16];
            let mut dirty = [false; 16];
            for (op, tp) in ops {
                let t = tp as usize;
                match op {
                    0 => { lidf.buffered_write(Tpn(tp)).unwrap(); count[t] += 1; }
                    1 => {
                        if count[t] > 0 { lidf.flushed(Tpn(tp), 1).unwrap(); count[t] -= 1; }
                        else { proptest::prop_assert!(lidf.flushed(Tpn(tp), 1).is_err()); }
                    }
                    _ => { dirty[t] = !dirty[t]; lidf.set_dirty(Tpn(tp), dirty[t]).unwrap(); }
                }
                let zero: Vec<usize> = (0..16).filter(|&i| dirty[i] && count[i] > 0).collect();
                let max = (0..16).filter(|&i| !dirty[i]).map(|i| count[i]).max().unwrap_or(0);
                match lidf.next() {
                    None => proptest::prop_assert!(count.iter().all(|&c| c == 0)),
                    Some(Tpn(n)) => {
                        let n = n as usize;
                        if zero.is_empty() {
                            proptest::prop_assert!(!dirty[n] && count[n] == max && max > 0);
                        } else {
                            proptest::prop_assert!(zero.contains(&n));
                        }
                    }
                }
            }
        }
    }
}

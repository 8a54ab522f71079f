//! The weak wordline detector of longFTL (seed 001 §3.3.2, Fig. 11):
//! BER-sorted linked lists per block, so the N weakest wordlines of a block
//! come out in O(N).
//!
//! List `L_k` (k from 10 to the ECC limit) holds the wordlines whose last
//! reported bit-error count is k; `L_<10` holds the strong ones unsorted
//! (they are not candidates for protection). The lists are intrusive and
//! fixed size: one link pair per wordline and one head per (block, list),
//! all in slices the caller lends. They are updated lazily from the ECC
//! reports of reads the FTL does anyway.

use crate::error::{rare, Error, OrRare};

/// The error count below which wordlines are not sorted (the paper's 10).
pub const SORTED_FROM: u8 = 10;

const NIL: u16 = u16::MAX;

/// Per-wordline state (lent by the caller, see [`WeakWlTables`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WlEntry {
    prev: u16,
    next: u16,
    /// Last reported bit errors (clamped to the ECC limit).
    errs: u8,
}

impl Default for WlEntry {
    fn default() -> Self {
        WlEntry {
            prev: NIL,
            next: NIL,
            errs: 0,
        }
    }
}

/// The memory the detector runs in.
pub struct WeakWlTables<'a> {
    /// One entry per wordline of every tracked block (`blocks x wls_per_block`).
    pub entries: &'a mut [WlEntry],
    /// One head per list of every block (`blocks x WeakWl::lists(ecc_limit)`).
    pub heads: &'a mut [u16],
}

/// BER-sorted wordline lists of a set of blocks.
pub struct WeakWl<'a> {
    e: &'a mut [WlEntry],
    heads: &'a mut [u16],
    wls: u16,
    ecc_limit: u8,
    lists: usize,
    blocks: usize,
    /// Entries the last [`WeakWl::weakest`] call visited (for its O(N) bound).
    pub last_visited: usize,
}

impl<'a> WeakWl<'a> {
    /// Lists per block for an ECC limit of `ecc_limit` bit errors:
    /// `L_10 ..= L_limit` and `L_<10`.
    pub fn lists(ecc_limit: u8) -> usize {
        usize::from(ecc_limit.saturating_sub(SORTED_FROM)) + 2
    }

    /// Detector over `t` for blocks of `wls_per_block` wordlines; every
    /// wordline starts in `L_<10`.
    pub fn new(t: WeakWlTables<'a>, wls_per_block: u16, ecc_limit: u8) -> Result<Self, Error> {
        if wls_per_block == 0 || wls_per_block == NIL || ecc_limit < SORTED_FROM {
            return Err(Error::InvalidConfig(
                &"weak-WL lists: wordlines per block 1..65534, ECC limit >= 10",
            ));
        }
        let lists = Self::lists(ecc_limit);
        let blocks = t
            .entries
            .len()
            .checked_div(usize::from(wls_per_block))
            .unwrap_or(0);
        if blocks == 0 || t.heads.len() < blocks.saturating_mul(lists) {
            return Err(Error::InvalidConfig(&"weak-WL tables too small"));
        }
        let mut w = WeakWl {
            e: t.entries,
            heads: t.heads,
            wls: wls_per_block,
            ecc_limit,
            lists,
            blocks,
            last_visited: 0,
        };
        for b in 0..blocks {
            w.reset_block(b as u32)?;
        }
        Ok(w)
    }

    /// Blocks tracked.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    fn list_of(&self, errs: u8) -> usize {
        if errs < SORTED_FROM {
            self.lists.saturating_sub(1)
        } else {
            usize::from(errs.min(self.ecc_limit).saturating_sub(SORTED_FROM))
        }
    }

    fn head_index(&self, b: u32, list: usize) -> Result<usize, Error> {
        if b as usize >= self.blocks || list >= self.lists {
            return Err(rare(Error::AddressOutOfRange));
        }
        Ok((b as usize).saturating_mul(self.lists).wrapping_add(list))
    }

    fn idx(&self, b: u32, wl: u16) -> Result<usize, Error> {
        if b as usize >= self.blocks || wl >= self.wls {
            return Err(rare(Error::AddressOutOfRange));
        }
        Ok((b as usize)
            .saturating_mul(usize::from(self.wls))
            .wrapping_add(usize::from(wl)))
    }

    fn ent(&mut self, b: u32, wl: u16) -> Result<&mut WlEntry, Error> {
        let i = self.idx(b, wl)?;
        self.e.get_mut(i).or_rare(Error::AddressOutOfRange)
    }

    fn head(&self, b: u32, list: usize) -> Result<u16, Error> {
        let i = self.head_index(b, list)?;
        self.heads.get(i).copied().or_rare(Error::AddressOutOfRange)
    }

    fn set_head(&mut self, b: u32, list: usize, v: u16) -> Result<(), Error> {
        let i = self.head_index(b, list)?;
        *self.heads.get_mut(i).or_rare(Error::AddressOutOfRange)? = v;
        Ok(())
    }

    /// Puts every wordline of block `b` back in `L_<10` with no errors.
    pub fn reset_block(&mut self, b: u32) -> Result<(), Error> {
        for l in 0..self.lists {
            self.set_head(b, l, NIL)?;
        }
        for wl in 0..self.wls {
            *self.ent(b, wl)? = WlEntry::default();
            self.link(b, wl)?;
        }
        Ok(())
    }

    fn link(&mut self, b: u32, wl: u16) -> Result<(), Error> {
        let errs = self.ent(b, wl)?.errs;
        let list = self.list_of(errs);
        let head = self.head(b, list)?;
        {
            let e = self.ent(b, wl)?;
            e.prev = NIL;
            e.next = head;
        }
        if head != NIL {
            self.ent(b, head)?.prev = wl;
        }
        self.set_head(b, list, wl)
    }

    fn unlink(&mut self, b: u32, wl: u16) -> Result<(), Error> {
        let (prev, next, errs) = {
            let e = self.ent(b, wl)?;
            (e.prev, e.next, e.errs)
        };
        if prev == NIL {
            let list = self.list_of(errs);
            if self.head(b, list)? != wl {
                return Err(rare(Error::Corrupt(&"weak-WL list head")));
            }
            self.set_head(b, list, next)?;
        } else {
            self.ent(b, prev)?.next = next;
        }
        if next != NIL {
            self.ent(b, next)?.prev = prev;
        }
        Ok(())
    }

    /// Records the bit errors a read of wordline `wl` of block `b` reported
    /// (the most of its pages); moves it to the matching list.
    pub fn report(&mut self, b: u32, wl: u16, errs: u8) -> Result<(), Error> {
        let errs = errs.min(self.ecc_limit);
        let old = self.ent(b, wl)?.errs;
        if self.list_of(old) == self.list_of(errs) {
            self.ent(b, wl)?.errs = errs;
            return Ok(());
        }
        self.unlink(b, wl)?;
        self.ent(b, wl)?.errs = errs;
        self.link(b, wl)
    }

    /// Last reported bit errors of a wordline.
    pub fn errors(&self, b: u32, wl: u16) -> Result<u8, Error> {
        let i = self.idx(b, wl)?;
        Ok(self.e.get(i).or_rare(Error::AddressOutOfRange)?.errs)
    }

    /// Writes the weakest wordlines of block `b` into `out` (at most its
    /// length), most errors first, and returns how many: the sorted lists
    /// from `L_limit` down, then `L_<10` in list order. Visits only the
    /// entries it returns (plus the list heads).
    pub fn weakest(&mut self, b: u32, out: &mut [u16]) -> Result<usize, Error> {
        let mut n = 0usize;
        let mut list = 0usize;
        // Lists in order of decreasing errors: L_limit .. L_10, then L_<10.
        let order = self.lists;
        while list < order && n < out.len() {
            let l = if list.wrapping_add(1) == order {
                order.saturating_sub(1)
            } else {
                order.saturating_sub(2).saturating_sub(list)
            };
            let mut cur = self.head(b, l)?;
            while cur != NIL && n < out.len() {
                if let Some(slot) = out.get_mut(n) {
                    *slot = cur;
                }
                n = n.wrapping_add(1);
                cur = self.ent(b, cur)?.next;
            }
            list = list.wrapping_add(1);
        }
        self.last_visited = n;
        Ok(n)
    }

    /// Checks the lists of block `b`: every wordline in exactly one list,
    /// each in the list of its error count, links consistent.
    pub fn audit_block(&self, b: u32) -> Result<(), Error> {
        let mut seen = 0usize;
        for l in 0..self.lists {
            let mut prev = NIL;
            let mut cur = self.head(b, l)?;
            while cur != NIL {
                let e = self
                    .e
                    .get(self.idx(b, cur)?)
                    .or_rare(Error::AddressOutOfRange)?;
                if e.prev != prev || self.list_of(e.errs) != l {
                    return Err(rare(Error::Corrupt(&"weak-WL list out of order")));
                }
                seen = seen.wrapping_add(1);
                if seen > usize::from(self.wls) {
                    return Err(rare(Error::Corrupt(&"weak-WL list cycle")));
                }
                prev = cur;
                cur = e.next;
            }
        }
        if seen != usize::from(self.wls) {
            return Err(rare(Error::Corrupt(&"weak-WL lists miss a wordline")));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn tables(blocks: usize, wls: u16, ecc: u8) -> (Vec<WlEntry>, Vec<u16>) {
        (
            vec![WlEntry::default(); blocks * usize::from(wls)],
            vec![0; blocks * WeakWl::lists(ecc)],
        )
    }

    /// Fig. 11: WL 148 (most errors), then 144 and 152.
    #[test]
    fn fig11_three_weakest() {
        let (mut e, mut h) = tables(1, 192, 60);
        let mut w = WeakWl::new(
            WeakWlTables {
                entries: &mut e,
                heads: &mut h,
            },
            192,
            60,
        )
        .unwrap();
        for (wl, errs) in [(3, 4), (148, 41), (144, 38), (152, 38), (20, 12), (7, 9)] {
            w.report(0, wl, errs).unwrap();
        }
        let mut out = [0u16; 3];
        assert_eq!(w.weakest(0, &mut out).unwrap(), 3);
        assert_eq!(out[0], 148);
        let mut rest = [out[1], out[2]];
        rest.sort_unstable();
        assert_eq!(rest, [144, 152]);
        assert_eq!(w.last_visited, 3);
        w.audit_block(0).unwrap();
        assert!(w.report(1, 0, 5).is_err());
        assert!(w.report(0, 192, 5).is_err());
    }

    proptest::proptest! {
        /// Random reports keep every wordline in exactly one list, in the
        /// list of its count; the N weakest are the N largest counts (among
        /// sorted wordlines) and the query visits N entries.
        #[test]
        fn lists_stay_consistent(
            reports in proptest::collection::vec((0u32..3, 0u16..40, 0u8..80), 1..300),
            n in 1usize..12,
        ) {
            let (mut e, mut h) = tables(3, 40, 50);
            let mut w = WeakWl::new(WeakWlTables { entries: &mut e, heads: &mut h }, 40, 50).unwrap();
            let mut model = [[0u8; 40]; 3];
            for (b, wl, errs) in reports {
                w.report(b, wl, errs).unwrap();
                model[b as usize][usize::from(wl)] = errs.min(50);
            }
            for b in 0..3u32 {
                w.audit_block(b).unwrap();
                let mut out = vec![0u16; n];
                let got = w.weakest(b, &mut out).unwrap();
                proptest::prop_assert_eq!(got, n);
                proptest::prop_assert_eq!(w.last_visited, n);
                let mut want: Vec<u8> = model[b as usize].to_vec();
                want.sort_unstable_by(|a, c| c.cmp(a));
                for (i, &wl) in out.iter().enumerate() {
                    let errs = model[b as usize][usize::from(wl)];
                    proptest::prop_assert_eq!(w.errors(b, wl).unwrap(), errs);
                    // Sorted wordlines come out exactly in order.
                    if want[i] >= SORTED_FROM {
                        proptest::prop_assert_eq!(errs, want[i]);
                    } else {
                        proptest::prop_assert!(errs < SORTED_FROM);
                    }
                }
            }
        }
    }
}

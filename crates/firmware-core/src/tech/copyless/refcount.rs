//! Copyless copy (seed 003 §II): a copy becomes a remap of the destination
//! LBA to the source's physical unit, so no page is read or programmed.
//!
//! Two pieces of bookkeeping replace the valid bit and extend the OOB:
//!
//! * [`RefCounts`]: an n-bit reference count per physical unit (n = 1..=8),
//!   packed into lent `u32` words. Zero means invalid (reclaimable); a count
//!   of `2^n - 1` cannot grow, and the copy falls back to a physical copy.
//! * [`ShadowOob`]: the DRAM shadow OOB. For every *shared* unit (count >= 2)
//!   it holds the set of tag LBAs mapping to the unit, because the flash OOB
//!   holds only the LBA written with the page and cannot be rewritten. GC and
//!   wear levelling read it to remap every tag when they relocate the unit.
//!
//! [`CopylessMap`] combines both with the rules of the technique: a copy
//! increments the count and records the tag; an overwrite or trim of a tag
//! (copy-on-write) decrements it and drops the tag; a unit with count 1 keeps
//! no shadow entries, its single tag being the one the normal P2L holds.
//!
//! Everything lives in slices the caller lends ([`crate::Tables::copyless`]).
//! The FTL uses it when `Config::copy.mode` is
//! [`crate::config::CopyMode::Remap`]; see `copy.rs` for the host command and
//! the rules for buffered sources, GC and mount.

use crate::error::{rare, Error, OrRare};
use crate::medium::addr::{Lpn, Pun};

/// The "no entry" link and the unit number of a free shadow entry.
pub const NIL: u32 = u32::MAX;

/// Bits in one word of the lent count table.
const WORD_BITS: u32 = u32::BITS;

/// Result of [`RefCounts::inc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inc {
    /// The count grew to the value given.
    Counted(u8),
    /// The count is already `2^n - 1`; nothing changed. The caller must make a
    /// physical copy instead of a remap.
    Overflow,
}

/// n-bit reference counts, one per physical unit, packed into lent words.
///
/// A count never straddles two words (`32 / n` counts per word), so reading
/// one is a single load, shift and mask.
pub struct RefCounts<'a> {
    words: &'a mut [u32],
    bits: u32,
    per_word: u32,
    units: u32,
    max: u8,
}

impl<'a> RefCounts<'a> {
    fn per_word(bits: u8) -> Result<u32, Error> {
        if bits == 0 || bits > 8 {
            return Err(Error::InvalidConfig(&"reference count bits 1..=8"));
        }
        WORD_BITS
            .checked_div(u32::from(bits))
            .or_rare(Error::InvalidConfig(&"reference count bits 1..=8"))
    }

    /// Words of lent memory for `units` counts of `bits` bits.
    pub fn words_for(units: u32, bits: u8) -> Result<usize, Error> {
        let per = Self::per_word(bits)?;
        let words = units.div_ceil(per);
        Ok(words as usize)
    }

    /// Bytes of lent memory for `units` counts of `bits` bits (whole words).
    pub fn bytes_for(units: u32, bits: u8) -> Result<usize, Error> {
        Ok(Self::words_for(units, bits)?.saturating_mul(core::mem::size_of::<u32>()))
    }

    /// Counts of `bits` bits for `units` units over `words`, all zero.
    pub fn new(words: &'a mut [u32], units: u32, bits: u8) -> Result<Self, Error> {
        let per_word = Self::per_word(bits)?;
        if words.len() < Self::words_for(units, bits)? {
            return Err(Error::TableTooSmall(&"reference counts"));
        }
        words.fill(0);
        let max = u8::MAX
            .checked_shr(8u32.saturating_sub(u32::from(bits)))
            .unwrap_or(0);
        Ok(RefCounts {
            words,
            bits: u32::from(bits),
            per_word,
            units,
            max,
        })
    }

    /// The largest count, `2^n - 1`.
    pub fn max(&self) -> u8 {
        self.max
    }

    /// Units covered.
    pub fn units(&self) -> u32 {
        self.units
    }

    fn locate(&self, unit: Pun) -> Result<(usize, u32), Error> {
        if unit.0 >= self.units {
            return Err(rare(Error::AddressOutOfRange));
        }
        let word = unit.0.checked_div(self.per_word).unwrap_or(0);
        let slot = unit.0.checked_rem(self.per_word).unwrap_or(0);
        Ok((word as usize, slot.wrapping_mul(self.bits)))
    }

    /// The count of `unit`.
    pub fn get(&self, unit: Pun) -> Result<u8, Error> {
        let (w, shift) = self.locate(unit)?;
        let word = self
            .words
            .get(w)
            .copied()
            .or_rare(Error::AddressOutOfRange)?;
        let v = word.wrapping_shr(shift) & u32::from(self.max);
        Ok(v as u8)
    }

    /// Sets the count of `unit` (GC relocation moves a count as a whole).
    pub fn set(&mut self, unit: Pun, v: u8) -> Result<(), Error> {
        if v > self.max {
            return Err(rare(Error::Corrupt(&"reference count above 2^n - 1")));
        }
        let (w, shift) = self.locate(unit)?;
        let mask = u32::from(self.max).wrapping_shl(shift);
        let word = self.words.get_mut(w).or_rare(Error::AddressOutOfRange)?;
        *word = (*word & !mask) | u32::from(v).wrapping_shl(shift);
        Ok(())
    }

    /// Adds one tag to `unit`, or reports [`Inc::Overflow`] unchanged.
    pub fn inc(&mut self, unit: Pun) -> Result<Inc, Error> {
        let c = self.get(unit)?;
        if c >= self.max {
            return Ok(Inc::Overflow);
        }
        let n = c.wrapping_add(1);
        self.set(unit, n)?;
        Ok(Inc::Counted(n))
    }

    /// Removes one tag from `unit`; returns the new count (0: reclaimable).
    /// Decrementing a zero count is corruption: the caller released a tag the
    /// unit never had.
    pub fn dec(&mut self, unit: Pun) -> Result<u8, Error> {
        let c = self.get(unit)?;
        let n = c
            .checked_sub(1)
            .or_rare(Error::Corrupt(&"reference count below zero"))?;
        self.set(unit, n)?;
        Ok(n)
    }
}

/// One shadow OOB record: tag LBA `tag` maps to physical unit `unit`.
///
/// `#[repr(C)]`, plain `u32` fields and no checksum, so it can be persisted as
/// is: only `unit` and `tag` are state ([`ShadowEntry::to_le_bytes`]); the
/// chain link is rebuilt by [`ShadowOob::restore`]. A free record has
/// `unit == NIL`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowEntry {
    /// Physical unit, or [`NIL`] when the record is free.
    pub unit: u32,
    /// Tag LBA.
    pub tag: u32,
    next: u32,
}

impl Default for ShadowEntry {
    fn default() -> Self {
        ShadowEntry {
            unit: NIL,
            tag: 0,
            next: NIL,
        }
    }
}

impl ShadowEntry {
    /// Size of the persisted form.
    pub const PERSISTED_BYTES: usize = 8;

    /// Whether the record holds no tag.
    pub fn is_free(&self) -> bool {
        self.unit == NIL
    }

    /// Persisted form: `unit` then `tag`, little endian.
    pub fn to_le_bytes(&self) -> [u8; Self::PERSISTED_BYTES] {
        let u = self.unit.to_le_bytes();
        let t = self.tag.to_le_bytes();
        [u[0], u[1], u[2], u[3], t[0], t[1], t[2], t[3]]
    }

    /// Record from its persisted form (unlinked until [`ShadowOob::restore`]).
    pub fn from_le_bytes(b: [u8; Self::PERSISTED_BYTES]) -> Self {
        ShadowEntry {
            unit: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            tag: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            next: NIL,
        }
    }
}

/// The memory the shadow OOB runs in.
pub struct ShadowTables<'a> {
    /// Hash bucket heads (any non-zero length; about one per entry keeps
    /// chains short).
    pub heads: &'a mut [u32],
    /// The records; their number is the table's capacity in tags.
    pub entries: &'a mut [ShadowEntry],
}

/// Fixed-capacity shadow OOB: the tag LBAs of shared physical units.
///
/// Records of a unit hang off the bucket its number hashes to (intrusive
/// singly-linked chains through the lent records; free records form one more
/// chain), so finding a unit's tags walks one short chain, and adding or
/// moving records never allocates.
pub struct ShadowOob<'a> {
    heads: &'a mut [u32],
    e: &'a mut [ShadowEntry],
    free: u32,
    used: u32,
}

impl<'a> ShadowOob<'a> {
    /// An empty shadow OOB over `t`.
    pub fn new(t: ShadowTables<'a>) -> Result<Self, Error> {
        t.entries.fill(ShadowEntry::default());
        Self::restore(t)
    }

    /// A shadow OOB over records loaded from a persisted copy: keeps every
    /// record's `unit` and `tag` and rebuilds the chains and the free list.
    pub fn restore(t: ShadowTables<'a>) -> Result<Self, Error> {
        if t.heads.is_empty() || t.entries.len() >= NIL as usize {
            return Err(Error::InvalidConfig(
                &"shadow OOB: at least one bucket, fewer than 2^32 - 1 records",
            ));
        }
        t.heads.fill(NIL);
        let mut s = ShadowOob {
            heads: t.heads,
            e: t.entries,
            free: NIL,
            used: 0,
        };
        for i in (0..s.e.len()).rev() {
            let idx = i as u32;
            let unit = s.ent(idx)?.unit;
            if unit == NIL {
                s.ent_mut(idx)?.next = s.free;
                s.free = idx;
            } else {
                let b = s.bucket(unit)?;
                let head = s.head(b)?;
                s.ent_mut(idx)?.next = head;
                s.set_head(b, idx)?;
                s.used = s.used.wrapping_add(1);
            }
        }
        Ok(s)
    }

    /// Records in the table.
    pub fn capacity(&self) -> u32 {
        self.e.len() as u32
    }

    /// Records holding a tag.
    pub fn used(&self) -> u32 {
        self.used
    }

    /// Records free.
    pub fn free(&self) -> u32 {
        self.capacity().saturating_sub(self.used)
    }

    /// The lent records, for persisting them.
    pub fn entries(&self) -> &[ShadowEntry] {
        self.e
    }

    fn bucket(&self, unit: u32) -> Result<usize, Error> {
        let h = unit.wrapping_mul(0x9E37_79B1) as usize;
        h.checked_rem(self.heads.len())
            .or_rare(Error::Corrupt(&"shadow OOB without buckets"))
    }

    fn head(&self, b: usize) -> Result<u32, Error> {
        self.heads.get(b).copied().or_rare(Error::AddressOutOfRange)
    }

    fn set_head(&mut self, b: usize, v: u32) -> Result<(), Error> {
        *self.heads.get_mut(b).or_rare(Error::AddressOutOfRange)? = v;
        Ok(())
    }

    fn ent(&self, i: u32) -> Result<&ShadowEntry, Error> {
        self.e
            .get(i as usize)
            .or_rare(Error::Corrupt(&"shadow OOB link out of range"))
    }

    fn ent_mut(&mut self, i: u32) -> Result<&mut ShadowEntry, Error> {
        self.e
            .get_mut(i as usize)
            .or_rare(Error::Corrupt(&"shadow OOB link out of range"))
    }

    /// Finds the record of (`unit`, `tag`): (previous record or NIL, record).
    fn find(&self, unit: u32, tag: u32) -> Result<Option<(u32, u32)>, Error> {
        let mut prev = NIL;
        let mut i = self.head(self.bucket(unit)?)?;
        let mut steps = 0u32;
        while i != NIL {
            let e = self.ent(i)?;
            if e.unit == unit && e.tag == tag {
                return Ok(Some((prev, i)));
            }
            steps = steps.wrapping_add(1);
            if steps > self.capacity() {
                return Err(rare(Error::Corrupt(&"shadow OOB chain cycle")));
            }
            prev = i;
            i = e.next;
        }
        Ok(None)
    }

    fn unlink(&mut self, unit: u32, prev: u32, i: u32) -> Result<(), Error> {
        let next = self.ent(i)?.next;
        if prev == NIL {
            self.set_head(self.bucket(unit)?, next)
        } else {
            self.ent_mut(prev)?.next = next;
            Ok(())
        }
    }

    /// Whether `tag` is recorded for `unit`.
    pub fn contains(&self, unit: Pun, tag: Lpn) -> Result<bool, Error> {
        Ok(self.find(unit.0, tag.0)?.is_some())
    }

    /// Records `tag` for `unit`. `Ok(false)` when the table is full (nothing
    /// changed); a tag already recorded for the unit is corruption.
    pub fn add(&mut self, unit: Pun, tag: Lpn) -> Result<bool, Error> {
        if unit.0 == NIL {
            return Err(rare(Error::AddressOutOfRange));
        }
        if self.find(unit.0, tag.0)?.is_some() {
            return Err(rare(Error::Corrupt(&"shadow OOB tag recorded twice")));
        }
        let i = self.free;
        if i == NIL {
            return Ok(false);
        }
        let b = self.bucket(unit.0)?;
        let head = self.head(b)?;
        let e = self.ent_mut(i)?;
        let next_free = e.next;
        *e = ShadowEntry {
            unit: unit.0,
            tag: tag.0,
            next: head,
        };
        self.free = next_free;
        self.set_head(b, i)?;
        self.used = self.used.wrapping_add(1);
        Ok(true)
    }

    /// Drops `tag` from `unit`; `Ok(false)` when it was not recorded.
    pub fn remove(&mut self, unit: Pun, tag: Lpn) -> Result<bool, Error> {
        let Some((prev, i)) = self.find(unit.0, tag.0)? else {
            return Ok(false);
        };
        self.unlink(unit.0, prev, i)?;
        let free = self.free;
        *self.ent_mut(i)? = ShadowEntry {
            next: free,
            ..ShadowEntry::default()
        };
        self.free = i;
        self.used = self.used.saturating_sub(1);
        Ok(true)
    }

    /// The tags recorded for `unit` (most recent first).
    pub fn tags(&self, unit: Pun) -> Tags<'_> {
        let first = self
            .bucket(unit.0)
            .and_then(|b| self.head(b))
            .unwrap_or(NIL);
        Tags {
            e: self.e,
            unit: unit.0,
            i: first,
            budget: self.e.len(),
        }
    }

    /// A cursor over the tags of `unit` that does not borrow the table, so
    /// the caller may update other state between steps ([`Self::next_tag`]).
    pub fn cursor(&self, unit: Pun) -> TagCursor {
        let first = self
            .bucket(unit.0)
            .and_then(|b| self.head(b))
            .unwrap_or(NIL);
        TagCursor {
            unit: unit.0,
            i: first,
            budget: self.e.len(),
        }
    }

    /// The next tag of a [`TagCursor`]; valid while no record is added,
    /// removed or moved.
    pub fn next_tag(&self, c: &mut TagCursor) -> Option<Lpn> {
        let mut t = Tags {
            e: self.e,
            unit: c.unit,
            i: c.i,
            budget: c.budget,
        };
        let r = t.next();
        c.i = t.i;
        c.budget = t.budget;
        r
    }

    /// Number of tags recorded for `unit`.
    pub fn tag_count(&self, unit: Pun) -> usize {
        self.tags(unit).count()
    }

    /// Moves every tag of `from` to `to` (GC or wear-levelling relocation of
    /// a shared unit); returns how many moved. Reuses the records, so it never
    /// needs free space. `to` must have no tags yet.
    pub fn relocate(&mut self, from: Pun, to: Pun) -> Result<u32, Error> {
        if to.0 == NIL {
            return Err(rare(Error::AddressOutOfRange));
        }
        if from == to {
            return Ok(self.tag_count(from) as u32);
        }
        if self.tag_count(to) != 0 {
            return Err(rare(Error::Corrupt(
                &"shadow OOB relocation onto a shared unit",
            )));
        }
        // Detach the records of `from` into a private chain, then push them
        // onto the bucket of `to` (which may be the same bucket).
        let mut moved = NIL;
        let mut n = 0u32;
        let mut prev = NIL;
        let mut i = self.head(self.bucket(from.0)?)?;
        let mut steps = 0u32;
        while i != NIL {
            steps = steps.wrapping_add(1);
            if steps > self.capacity() {
                return Err(rare(Error::Corrupt(&"shadow OOB chain cycle")));
            }
            let (unit, next) = {
                let e = self.ent(i)?;
                (e.unit, e.next)
            };
            if unit == from.0 {
                self.unlink(from.0, prev, i)?;
                self.ent_mut(i)?.next = moved;
                moved = i;
                n = n.wrapping_add(1);
            } else {
                prev = i;
            }
            i = next;
        }
        let b = self.bucket(to.0)?;
        while moved != NIL {
            let head = self.head(b)?;
            let e = self.ent_mut(moved)?;
            let next = e.next;
            e.unit = to.0;
            e.next = head;
            self.set_head(b, moved)?;
            moved = next;
        }
        Ok(n)
    }
}

/// Detached position in one unit's tag chain ([`ShadowOob::cursor`]).
#[derive(Clone, Copy, Debug)]
pub struct TagCursor {
    unit: u32,
    i: u32,
    budget: usize,
}

/// Iterator over the tags of one unit ([`ShadowOob::tags`]). Stops early on a
/// corrupt link rather than panicking or looping.
pub struct Tags<'s> {
    e: &'s [ShadowEntry],
    unit: u32,
    i: u32,
    budget: usize,
}

impl Iterator for Tags<'_> {
    type Item = Lpn;

    fn next(&mut self) -> Option<Lpn> {
        while self.i != NIL && self.budget > 0 {
            self.budget = self.budget.saturating_sub(1);
            let e = self.e.get(self.i as usize)?;
            self.i = e.next;
            if e.unit == self.unit {
                return Some(Lpn(e.tag));
            }
        }
        None
    }
}

/// Why a copy was not done by remapping; the caller copies physically (read
/// the source, program a fresh unit, map the destination there with count 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// The source unit's count is already `2^n - 1`.
    CountOverflow,
    /// The shadow OOB has too few free records for the new tag(s).
    ShadowFull,
}

/// Result of [`CopylessMap::copy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyOutcome {
    /// The destination now maps to the source unit, whose count is given.
    Remapped(u8),
    /// Nothing changed; do a physical copy.
    Fallback(Fallback),
}

/// Result of [`CopylessMap::release`] (overwrite or trim of a tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// The unit has no tag left: it is invalid and may be reclaimed.
    Reclaimable,
    /// The unit is no longer shared: the given tag is its only one and its
    /// shadow records are gone. The caller must make it the unit's P2L tag,
    /// since the flash OOB may name a tag that was since overwritten.
    Sole(Lpn),
    /// The unit is still shared by the given number of tags.
    Shared(u8),
}

/// The memory a [`CopylessMap`] runs in.
pub struct CopylessTables<'a> {
    /// Reference count words ([`RefCounts::words_for`]).
    pub counts: &'a mut [u32],
    /// Shadow OOB bucket heads.
    pub shadow_heads: &'a mut [u32],
    /// Shadow OOB records: the most tags of shared units held at once.
    pub shadow: &'a mut [ShadowEntry],
}

impl CopylessTables<'static> {
    /// No tables (copies are physical).
    pub fn none() -> Self {
        CopylessTables {
            counts: &mut [],
            shadow_heads: &mut [],
            shadow: &mut [],
        }
    }
}

/// Copyless-copy bookkeeping: reference counts plus shadow OOB, kept
/// consistent by the rules of seed 003 §II.
///
/// The FTL calls [`program`](Self::program) when it writes a unit,
/// [`copy`](Self::copy) for a copy command, [`release`](Self::release) when a
/// tag is overwritten or trimmed, and [`relocate`](Self::relocate) after GC or
/// wear levelling moved a unit (having remapped every tag from
/// [`tags`](Self::tags), or the P2L tag of an unshared unit).
///
/// Full shadow table: a copy that needs records the table does not have is
/// refused with [`Fallback::ShadowFull`] and changes nothing, so the caller
/// makes a physical copy. Evicting records instead would lose the only
/// reverse mapping of a shared unit (the flash OOB cannot be rewritten), and
/// GC could then not remap all of its tags; a physical copy costs no more
/// than a copy without this technique. Releases and relocations only free or
/// reuse records, so copy-on-write and GC never fail for lack of space.
pub struct CopylessMap<'a> {
    counts: RefCounts<'a>,
    shadow: ShadowOob<'a>,
}

impl<'a> CopylessMap<'a> {
    /// Bookkeeping for `units` physical units with `bits`-bit counts, all
    /// units invalid and no tags recorded.
    pub fn new(t: CopylessTables<'a>, units: u32, bits: u8) -> Result<Self, Error> {
        Ok(CopylessMap {
            counts: RefCounts::new(t.counts, units, bits)?,
            shadow: ShadowOob::new(ShadowTables {
                heads: t.shadow_heads,
                entries: t.shadow,
            })?,
        })
    }

    /// The reference counts.
    pub fn counts(&self) -> &RefCounts<'a> {
        &self.counts
    }

    /// The shadow OOB.
    pub fn shadow(&self) -> &ShadowOob<'a> {
        &self.shadow
    }

    /// Count of `unit`.
    pub fn count(&self, unit: Pun) -> Result<u8, Error> {
        self.counts.get(unit)
    }

    /// Tags of a shared unit (none for a count of 0 or 1: the single tag of
    /// an unshared unit is in the P2L).
    pub fn tags(&self, unit: Pun) -> Tags<'_> {
        self.shadow.tags(unit)
    }

    /// A detached cursor over the tags of a shared unit ([`Self::next_tag`]).
    pub fn cursor(&self, unit: Pun) -> TagCursor {
        self.shadow.cursor(unit)
    }

    /// The next tag of a cursor from [`Self::cursor`].
    pub fn next_tag(&self, c: &mut TagCursor) -> Option<Lpn> {
        self.shadow.next_tag(c)
    }

    /// The unit's data is gone (uncorrectable read during relocation): drops
    /// its count and shadow records; returns the count it had.
    pub fn forget(&mut self, unit: Pun) -> Result<u8, Error> {
        let c = self.counts.get(unit)?;
        let mut left = self.shadow.capacity();
        while let Some(t) = self.shadow.tags(unit).next() {
            left = left
                .checked_sub(1)
                .or_rare(Error::Corrupt(&"shadow OOB chain cycle"))?;
            self.shadow.remove(unit, t)?;
        }
        self.counts.set(unit, 0)?;
        Ok(c)
    }

    /// A freshly programmed unit (host write or physical copy) now holds one
    /// tag, which the P2L records.
    pub fn program(&mut self, unit: Pun) -> Result<(), Error> {
        if self.counts.get(unit)? != 0 {
            return Err(rare(Error::Corrupt(&"programmed unit is still referenced")));
        }
        self.counts.set(unit, 1)
    }

    /// Copy of `src` (mapped to `unit`) to `dst`: records `dst` as another
    /// tag of `unit`. The caller has already released `dst`'s old mapping. A
    /// `dst` that already is a tag of `unit` changes nothing.
    pub fn copy(&mut self, unit: Pun, src: Lpn, dst: Lpn) -> Result<CopyOutcome, Error> {
        let c = self.counts.get(unit)?;
        if c == 0 {
            return Err(rare(Error::Corrupt(&"copy from an invalid unit")));
        }
        if c == 1 {
            if dst == src {
                return Ok(CopyOutcome::Remapped(c));
            }
        } else {
            if !self.shadow.contains(unit, src)? {
                return Err(rare(Error::Corrupt(
                    &"copy source is not a tag of its unit",
                )));
            }
            if self.shadow.contains(unit, dst)? {
                return Ok(CopyOutcome::Remapped(c));
            }
        }
        if c >= self.counts.max() {
            return Ok(CopyOutcome::Fallback(Fallback::CountOverflow));
        }
        let need = if c == 1 { 2 } else { 1 };
        if self.shadow.free() < need {
            return Ok(CopyOutcome::Fallback(Fallback::ShadowFull));
        }
        if c == 1 && !self.shadow.add(unit, src)? {
            return Err(rare(Error::Corrupt(&"shadow OOB free count")));
        }
        if !self.shadow.add(unit, dst)? {
            return Err(rare(Error::Corrupt(&"shadow OOB free count")));
        }
        match self.counts.inc(unit)? {
            Inc::Counted(n) => Ok(CopyOutcome::Remapped(n)),
            Inc::Overflow => Err(rare(Error::Corrupt(
                &"reference count overflow after check",
            ))),
        }
    }

    /// Tag `tag` of `unit` was overwritten or trimmed (copy-on-write: the new
    /// data goes to a fresh unit, the shared one loses a tag).
    pub fn release(&mut self, unit: Pun, tag: Lpn) -> Result<Release, Error> {
        let c = self.counts.get(unit)?;
        if c == 0 {
            return Err(rare(Error::Corrupt(&"release of an invalid unit")));
        }
        if c >= 2 && !self.shadow.remove(unit, tag)? {
            return Err(rare(Error::Corrupt(
                &"released tag is not in the shadow OOB",
            )));
        }
        let n = self.counts.dec(unit)?;
        match n {
            0 => Ok(Release::Reclaimable),
            1 => {
                let sole = self
                    .shadow
                    .tags(unit)
                    .next()
                    .or_rare(Error::Corrupt(&"shared unit without shadow tags"))?;
                self.shadow.remove(unit, sole)?;
                Ok(Release::Sole(sole))
            }
            _ => Ok(Release::Shared(n)),
        }
    }

    /// GC or wear levelling moved the data of `from` to the fresh unit `to`:
    /// the count and the shadow tags move with it and `from` becomes
    /// reclaimable.
    pub fn relocate(&mut self, from: Pun, to: Pun) -> Result<(), Error> {
        let c = self.counts.get(from)?;
        if c == 0 {
            return Err(rare(Error::Corrupt(&"relocation of an invalid unit")));
        }
        if from == to {
            return Ok(());
        }
        if self.counts.get(to)? != 0 {
            return Err(rare(Error::Corrupt(&"relocation onto a referenced unit")));
        }
        if c >= 2 {
            let moved = self.shadow.relocate(from, to)?;
            if moved != u32::from(c) {
                return Err(rare(Error::Corrupt(&"shadow tags disagree with the count")));
            }
        }
        self.counts.set(to, c)?;
        self.counts.set(from, 0)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::{BTreeSet, HashMap};
    use std::vec;
    use std::vec::Vec;

    struct Mem {
        counts: Vec<u32>,
        heads: Vec<u32>,
        shadow: Vec<ShadowEntry>,
    }

    impl Mem {
        fn new(units: u32, bits: u8, cap: usize, buckets: usize) -> Self {
            Mem {
                counts: vec![0; RefCounts::words_for(units, bits).unwrap()],
                heads: vec![0; buckets],
                shadow: vec![ShadowEntry::default(); cap],
            }
        }

        fn map(&mut self, units: u32, bits: u8) -> CopylessMap<'_> {
            CopylessMap::new(
                CopylessTables {
                    counts: &mut self.counts,
                    shadow_heads: &mut self.heads,
                    shadow: &mut self.shadow,
                },
                units,
                bits,
            )
            .unwrap()
        }
    }

    fn cp(m: &mut CopylessMap<'_>, u: u32, src: u32, dst: u32) -> CopyOutcome {
        m.copy(Pun(u), Lpn(src), Lpn(dst)).unwrap()
    }

    fn tagset(m: &CopylessMap<'_>, u: u32) -> BTreeSet<u32> {
        m.tags(Pun(u)).map(|l| l.0).collect()
    }

    #[test]
    fn sizes() {
        assert_eq!(RefCounts::words_for(64, 1).unwrap(), 2);
        assert_eq!(RefCounts::words_for(10, 3).unwrap(), 1);
        assert_eq!(RefCounts::words_for(11, 3).unwrap(), 2);
        assert_eq!(RefCounts::bytes_for(8, 8).unwrap(), 8);
        assert_eq!(RefCounts::bytes_for(9, 8).unwrap(), 12);
        assert_eq!(RefCounts::bytes_for(0, 4).unwrap(), 0);
        assert!(RefCounts::bytes_for(1, 0).is_err());
        assert!(RefCounts::bytes_for(1, 9).is_err());
        let mut w = vec![0u32; 1];
        assert_eq!(
            RefCounts::new(&mut w, 11, 3).err(),
            Some(Error::TableTooSmall(&"reference counts"))
        );
    }

    #[test]
    fn counts_are_packed_independently_and_saturate() {
        for bits in 1..=8u8 {
            let units = 40;
            let mut w = vec![0u32; RefCounts::words_for(units, bits).unwrap()];
            let mut c = RefCounts::new(&mut w, units, bits).unwrap();
            let max = c.max();
            assert_eq!(u32::from(max), (1u32 << bits) - 1);
            for u in 0..units {
                c.set(Pun(u), (u % (u32::from(max) + 1)) as u8).unwrap();
            }
            for u in 0..units {
                assert_eq!(c.get(Pun(u)).unwrap(), (u % (u32::from(max) + 1)) as u8);
            }
            c.set(Pun(3), max).unwrap();
            assert_eq!(c.inc(Pun(3)).unwrap(), Inc::Overflow);
            assert_eq!(c.get(Pun(3)).unwrap(), max);
            c.set(Pun(4), 0).unwrap();
            assert_eq!(
                c.dec(Pun(4)).err(),
                Some(Error::Corrupt(&"reference count below zero"))
            );
            if max > 1 {
                c.set(Pun(4), max - 1).unwrap();
                assert_eq!(c.inc(Pun(4)).unwrap(), Inc::Counted(max));
            }
            assert_eq!(c.dec(Pun(3)).unwrap(), max - 1);
            assert_eq!(c.get(Pun(units)).err(), Some(Error::AddressOutOfRange));
            assert!(c.set(Pun(0), max.saturating_add(1)).is_err() || max == u8::MAX);
        }
    }

    #[test]
    fn shadow_add_remove_list_and_full() {
        let mut heads = vec![0u32; 2];
        let mut e = vec![ShadowEntry::default(); 3];
        let mut s = ShadowOob::new(ShadowTables {
            heads: &mut heads,
            entries: &mut e,
        })
        .unwrap();
        assert!(s.add(Pun(5), Lpn(1)).unwrap());
        assert!(s.add(Pun(7), Lpn(2)).unwrap());
        assert!(s.add(Pun(5), Lpn(3)).unwrap());
        assert!(s.add(Pun(5), Lpn(1)).is_err(), "duplicate tag");
        assert!(!s.add(Pun(9), Lpn(4)).unwrap(), "full table refuses");
        assert_eq!(s.free(), 0);
        let t: BTreeSet<_> = s.tags(Pun(5)).collect();
        assert_eq!(t, [Lpn(1), Lpn(3)].into_iter().collect());
        assert!(s.remove(Pun(5), Lpn(1)).unwrap());
        assert!(!s.remove(Pun(5), Lpn(1)).unwrap());
        assert_eq!(s.free(), 1);
        assert_eq!(s.relocate(Pun(5), Pun(8)).unwrap(), 1);
        assert_eq!(s.tag_count(Pun(5)), 0);
        assert_eq!(s.tags(Pun(8)).collect::<Vec<_>>(), vec![Lpn(3)]);
        assert!(s.relocate(Pun(7), Pun(8)).is_err(), "target already shared");
        assert_eq!(s.tags(Pun(7)).collect::<Vec<_>>(), vec![Lpn(2)]);
    }

    #[test]
    fn shadow_restores_from_persisted_records() {
        let mut heads = vec![0u32; 4];
        let mut e = vec![ShadowEntry::default(); 6];
        let bytes: Vec<[u8; 8]> = {
            let mut s = ShadowOob::new(ShadowTables {
                heads: &mut heads,
                entries: &mut e,
            })
            .unwrap();
            for (u, t) in [(1, 10), (1, 11), (2, 20), (1, 12), (2, 21)] {
                assert!(s.add(Pun(u), Lpn(t)).unwrap());
            }
            s.remove(Pun(1), Lpn(11)).unwrap();
            s.entries().iter().map(ShadowEntry::to_le_bytes).collect()
        };
        let mut heads2 = vec![7u32; 3];
        let mut e2: Vec<ShadowEntry> = bytes.into_iter().map(ShadowEntry::from_le_bytes).collect();
        let s = ShadowOob::restore(ShadowTables {
            heads: &mut heads2,
            entries: &mut e2,
        })
        .unwrap();
        assert_eq!(s.used(), 4);
        let t1: BTreeSet<_> = s.tags(Pun(1)).map(|l| l.0).collect();
        let t2: BTreeSet<_> = s.tags(Pun(2)).map(|l| l.0).collect();
        assert_eq!(t1, [10, 12].into_iter().collect());
        assert_eq!(t2, [20, 21].into_iter().collect());
    }

    #[test]
    fn copy_records_both_tags_and_count_one_keeps_none() {
        let mut mem = Mem::new(8, 4, 8, 4);
        let mut m = mem.map(8, 4);
        m.program(Pun(2)).unwrap();
        assert_eq!(m.count(Pun(2)).unwrap(), 1);
        assert_eq!(
            m.shadow().used(),
            0,
            "an unshared unit has no shadow records"
        );
        assert_eq!(cp(&mut m, 2, 0, 5), CopyOutcome::Remapped(2));
        assert_eq!(tagset(&m, 2), [0, 5].into_iter().collect());
        assert_eq!(cp(&mut m, 2, 5, 6), CopyOutcome::Remapped(3));
        assert_eq!(tagset(&m, 2), [0, 5, 6].into_iter().collect());
        // Copy onto a tag the unit already has is a no-op.
        assert_eq!(cp(&mut m, 2, 0, 6), CopyOutcome::Remapped(3));
        assert_eq!(m.shadow().used(), 3);
        // A source that is not a tag of the shared unit is corruption.
        assert!(m.copy(Pun(2), Lpn(9), Lpn(7)).is_err());
        assert!(m.copy(Pun(3), Lpn(1), Lpn(7)).is_err(), "invalid unit");
        assert!(m.program(Pun(2)).is_err(), "referenced unit");
    }

    #[test]
    fn overwrite_and_trim_copy_on_write() {
        let mut mem = Mem::new(8, 4, 8, 4);
        let mut m = mem.map(8, 4);
        m.program(Pun(1)).unwrap();
        cp(&mut m, 1, 0, 1);
        cp(&mut m, 1, 0, 2);
        assert_eq!(m.release(Pun(1), Lpn(1)).unwrap(), Release::Shared(2));
        assert_eq!(tagset(&m, 1), [0, 2].into_iter().collect());
        assert!(m.release(Pun(1), Lpn(1)).is_err(), "not a tag any more");
        // Overwriting the originally written LBA leaves the copy as sole tag:
        // the caller must make it the P2L tag.
        assert_eq!(m.release(Pun(1), Lpn(0)).unwrap(), Release::Sole(Lpn(2)));
        assert_eq!(m.shadow().used(), 0);
        assert_eq!(m.count(Pun(1)).unwrap(), 1);
        assert_eq!(m.release(Pun(1), Lpn(2)).unwrap(), Release::Reclaimable);
        assert_eq!(m.count(Pun(1)).unwrap(), 0);
        assert!(m.release(Pun(1), Lpn(2)).is_err());
    }

    #[test]
    fn fallback_on_count_overflow() {
        let mut mem = Mem::new(4, 2, 16, 4);
        let mut m = mem.map(4, 2);
        m.program(Pun(0)).unwrap();
        assert_eq!(cp(&mut m, 0, 0, 1), CopyOutcome::Remapped(2));
        assert_eq!(cp(&mut m, 0, 0, 2), CopyOutcome::Remapped(3));
        assert_eq!(
            cp(&mut m, 0, 0, 3),
            CopyOutcome::Fallback(Fallback::CountOverflow)
        );
        assert_eq!(m.count(Pun(0)).unwrap(), 3);
        assert_eq!(tagset(&m, 0), [0, 1, 2].into_iter().collect());
        // One-bit counts are a plain valid bit: every copy falls back.
        let mut mem1 = Mem::new(4, 1, 16, 4);
        let mut m1 = mem1.map(4, 1);
        m1.program(Pun(0)).unwrap();
        assert_eq!(
            cp(&mut m1, 0, 0, 1),
            CopyOutcome::Fallback(Fallback::CountOverflow)
        );
    }

    #[test]
    fn fallback_when_shadow_full_and_release_never_needs_space() {
        let mut mem = Mem::new(4, 4, 3, 2);
        let mut m = mem.map(4, 4);
        m.program(Pun(0)).unwrap();
        m.program(Pun(1)).unwrap();
        assert_eq!(cp(&mut m, 0, 0, 2), CopyOutcome::Remapped(2));
        // Sharing unit 1 needs two records, one is left.
        assert_eq!(
            cp(&mut m, 1, 1, 3),
            CopyOutcome::Fallback(Fallback::ShadowFull)
        );
        assert_eq!(m.count(Pun(1)).unwrap(), 1);
        assert_eq!(m.shadow().used(), 2);
        // A shared unit needs one more record, which fits.
        assert_eq!(cp(&mut m, 0, 2, 4), CopyOutcome::Remapped(3));
        assert_eq!(
            cp(&mut m, 0, 2, 5),
            CopyOutcome::Fallback(Fallback::ShadowFull)
        );
        // Copy-on-write with a full table still works and frees a record.
        assert_eq!(m.release(Pun(0), Lpn(4)).unwrap(), Release::Shared(2));
        assert_eq!(m.shadow().free(), 1);
    }

    #[test]
    fn gc_relocation_moves_count_and_tags() {
        let mut mem = Mem::new(8, 3, 8, 1);
        let mut m = mem.map(8, 3);
        m.program(Pun(1)).unwrap();
        m.program(Pun(2)).unwrap();
        cp(&mut m, 1, 0, 1);
        cp(&mut m, 2, 2, 3);
        // All records share one bucket: relocation must move only unit 1's.
        m.relocate(Pun(1), Pun(5)).unwrap();
        assert_eq!(m.count(Pun(1)).unwrap(), 0);
        assert_eq!(m.count(Pun(5)).unwrap(), 2);
        assert_eq!(tagset(&m, 5), [0, 1].into_iter().collect());
        assert!(tagset(&m, 1).is_empty());
        assert_eq!(tagset(&m, 2), [2, 3].into_iter().collect());
        assert!(m.relocate(Pun(2), Pun(5)).is_err(), "target referenced");
        assert!(m.relocate(Pun(1), Pun(6)).is_err(), "source invalid");
        // An unshared unit moves its count only.
        m.program(Pun(7)).unwrap();
        m.relocate(Pun(7), Pun(6)).unwrap();
        assert_eq!(m.count(Pun(6)).unwrap(), 1);
        assert_eq!(m.shadow().used(), 4);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Write(u32),
        Copy(u32, u32),
        Trim(u32),
        Relocate(usize),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            1 => (0..LBAS).prop_map(Op::Write),
            3 => (0..LBAS, 0..LBAS).prop_map(|(a, b)| Op::Copy(a, b)),
            1 => (0..LBAS).prop_map(Op::Trim),
            1 => (0usize..64).prop_map(Op::Relocate),
        ]
    }

    const LBAS: u32 = 12;
    const UNITS: u32 = 16;

    /// Model: LBA -> unit. Counts and tag sets are recomputed from it.
    fn model_tags(model: &HashMap<u32, u32>, u: u32) -> BTreeSet<u32> {
        model
            .iter()
            .filter(|&(_, &v)| v == u)
            .map(|(&l, _)| l)
            .collect()
    }

    fn free_unit(m: &CopylessMap<'_>) -> u32 {
        (0..UNITS).find(|&u| m.count(Pun(u)).unwrap() == 0).unwrap()
    }

    /// Overwrite/trim of `lba` in both the map and the model.
    fn release(m: &mut CopylessMap<'_>, model: &mut HashMap<u32, u32>, lba: u32) {
        if let Some(u) = model.remove(&lba) {
            let r = m.release(Pun(u), Lpn(lba)).unwrap();
            let left = model_tags(model, u);
            match r {
                Release::Reclaimable => assert!(left.is_empty()),
                Release::Sole(t) => {
                    assert_eq!(left.len(), 1);
                    assert!(left.contains(&t.0));
                }
                Release::Shared(n) => {
                    assert!(left.len() >= 2);
                    assert_eq!(usize::from(n), left.len());
                }
            }
        }
    }

    proptest::proptest! {
        /// Random copy / overwrite / trim / GC-relocate sequences agree with a
        /// plain LBA -> unit model after every step.
        #[test]
        fn matches_model(
            bits in 1u8..=4,
            cap in 0usize..12,
            buckets in 1usize..6,
            ops in proptest::collection::vec(op(), 1..200),
        ) {
            let mut mem = Mem::new(UNITS, bits, cap, buckets);
            let mut m = mem.map(UNITS, bits);
            let max = (1usize << bits) - 1;
            let mut model: HashMap<u32, u32> = HashMap::new();
            for o in ops {
                match o {
                    Op::Write(l) => {
                        release(&mut m, &mut model, l);
                        let u = free_unit(&m);
                        m.program(Pun(u)).unwrap();
                        model.insert(l, u);
                    }
                    Op::Trim(l) => release(&mut m, &mut model, l),
                    Op::Copy(s, d) => {
                        let Some(&u) = model.get(&s) else { continue };
                        if model.get(&d) == Some(&u) {
                            let c = m.count(Pun(u)).unwrap();
                            proptest::prop_assert_eq!(
                                m.copy(Pun(u), Lpn(s), Lpn(d)).unwrap(),
                                CopyOutcome::Remapped(c)
                            );
                            continue;
                        }
                        release(&mut m, &mut model, d);
                        let n = model_tags(&model, u).len();
                        let used: usize = (0..UNITS)
                            .map(|x| model_tags(&model, x).len())
                            .filter(|&k| k >= 2)
                            .sum();
                        let need = if n == 1 { 2 } else { 1 };
                        let expect = if n >= max {
                            Some(Fallback::CountOverflow)
                        } else if used + need > cap {
                            Some(Fallback::ShadowFull)
                        } else {
                            None
                        };
                        match m.copy(Pun(u), Lpn(s), Lpn(d)).unwrap() {
                            CopyOutcome::Remapped(c) => {
                                proptest::prop_assert_eq!(expect, None);
                                proptest::prop_assert_eq!(usize::from(c), n + 1);
                                model.insert(d, u);
                            }
                            CopyOutcome::Fallback(f) => {
                                proptest::prop_assert_eq!(expect, Some(f));
                                let v = free_unit(&m);
                                m.program(Pun(v)).unwrap();
                                model.insert(d, v);
                            }
                        }
                    }
                    Op::Relocate(k) => {
                        let live: BTreeSet<u32> = model.values().copied().collect();
                        if live.is_empty() {
                            continue;
                        }
                        let from = *live.iter().nth(k % live.len()).unwrap();
                        let to = free_unit(&m);
                        let tags = model_tags(&model, from);
                        // GC: relocate once, remap every tag.
                        if tags.len() >= 2 {
                            proptest::prop_assert_eq!(tagset(&m, from), tags.clone());
                        }
                        m.relocate(Pun(from), Pun(to)).unwrap();
                        for t in tags {
                            model.insert(t, to);
                        }
                    }
                }
                let mut used = 0usize;
                for u in 0..UNITS {
                    let want = model_tags(&model, u);
                    proptest::prop_assert_eq!(usize::from(m.count(Pun(u)).unwrap()), want.len());
                    if want.len() >= 2 {
                        proptest::prop_assert_eq!(tagset(&m, u), want.clone());
                        used += want.len();
                    } else {
                        proptest::prop_assert!(tagset(&m, u).is_empty());
                    }
                }
                proptest::prop_assert_eq!(m.shadow().used() as usize, used);
            }
        }
    }
}

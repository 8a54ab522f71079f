//! Intrusive lists over lent slices: FIFOs and stacks threaded through the
//! entries' own `next` links, so no list allocates.

use crate::error::{Error, OrRare};

/// Intrusive-list terminator for block and plane links.
pub const NIL: u32 = u32::MAX;
/// Intrusive-list terminator for slot and operation links.
pub const NIL16: u16 = u16::MAX;

/// A FIFO threaded through the `next` links of slot or operation entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    /// Oldest entry (`NIL16` when empty).
    pub head: u16,
    /// Newest entry (`NIL16` when empty).
    pub tail: u16,
    /// Entries queued.
    pub len: u16,
}

impl Fifo {
    /// An empty queue.
    pub const EMPTY: Fifo = Fifo {
        head: NIL16,
        tail: NIL16,
        len: 0,
    };
}

/// Entries that carry an intrusive `next` link.
pub trait Linked {
    /// The entry's link.
    fn next(&self) -> u16;
    /// Sets the entry's link.
    fn set_next(&mut self, n: u16);
}

impl Fifo {
    /// Appends entry `i`.
    pub fn push_back<T: Linked>(&mut self, v: &mut [T], i: u16) -> Result<(), Error> {
        v.get_mut(usize::from(i))
            .or_rare(Error::Corrupt(&"fifo entry"))?
            .set_next(NIL16);
        self.push_back_unlinked(v, i)
    }

    /// Appends entry `i` whose link the caller has already set to `NIL16`
    /// (while it had the entry at hand), so only the tail is looked up.
    #[inline]
    pub fn push_back_unlinked<T: Linked>(&mut self, v: &mut [T], i: u16) -> Result<(), Error> {
        if self.tail == NIL16 {
            self.head = i;
        } else {
            v.get_mut(usize::from(self.tail))
                .or_rare(Error::Corrupt(&"fifo tail"))?
                .set_next(i);
        }
        self.tail = i;
        self.len = self.len.wrapping_add(1);
        Ok(())
    }

    /// Removes the oldest entry, whose link the caller read (`next`) while
    /// it had the entry at hand: [`Self::pop`] without looking it up.
    #[inline]
    pub fn pop_linked(&mut self, next: u16) {
        self.head = next;
        if next == NIL16 {
            self.tail = NIL16;
        }
        self.len = self.len.saturating_sub(1);
    }

    /// Prepends entry `i` (it becomes the oldest).
    pub fn push_front<T: Linked>(&mut self, v: &mut [T], i: u16) -> Result<(), Error> {
        v.get_mut(usize::from(i))
            .or_rare(Error::Corrupt(&"fifo entry"))?
            .set_next(self.head);
        if self.head == NIL16 {
            self.tail = i;
        }
        self.head = i;
        self.len = self.len.wrapping_add(1);
        Ok(())
    }

    /// Removes and returns the oldest entry.
    pub fn pop<T: Linked>(&mut self, v: &mut [T]) -> Result<Option<u16>, Error> {
        if self.head == NIL16 {
            return Ok(None);
        }
        let i = self.head;
        let n = v
            .get(usize::from(i))
            .or_rare(Error::Corrupt(&"fifo head"))?
            .next();
        self.pop_linked(n);
        Ok(Some(i))
    }
}

/// A LIFO stack threaded through `next` links (free lists).
pub fn stack_push<T: Linked>(v: &mut [T], head: &mut u16, i: u16) -> Result<(), Error> {
    stack_push_entry(
        v.get_mut(usize::from(i))
            .or_rare(Error::Corrupt(&"stack entry"))?,
        head,
        i,
    );
    Ok(())
}

/// [`stack_push`] of entry `i` the caller has at hand (`e`).
#[inline]
pub fn stack_push_entry<T: Linked>(e: &mut T, head: &mut u16, i: u16) {
    e.set_next(*head);
    *head = i;
}

/// Pops the top of a stack threaded through `next` links and hands over
/// the entry itself, looked up once (`None` when the stack is empty; a
/// head outside `v` is [`Error::Corrupt`] named `what`).
#[inline(always)]
pub fn stack_pop_entry<'v, T: Linked>(
    v: &'v mut [T],
    head: &mut u16,
    what: crate::error::Reason,
) -> Result<Option<(u16, &'v mut T)>, Error> {
    let i = *head;
    if i == NIL16 {
        return Ok(None);
    }
    let e = v.get_mut(usize::from(i)).or_rare(Error::Corrupt(what))?;
    *head = e.next();
    Ok(Some((i, e)))
}

/// Pops the top of a stack threaded through `next` links.
pub fn stack_pop<T: Linked>(v: &mut [T], head: &mut u16) -> Result<Option<u16>, Error> {
    Ok(stack_pop_entry(v, head, &"stack head")?.map(|(i, _)| i))
}

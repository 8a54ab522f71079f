//! The engine's event queue.
//!
//! An event is a time, a kind and an id; events come out in that order
//! (time first, then kind, then id), exactly as from one binary heap of
//! triples. Two things make it cheaper than such a heap:
//! - the triple is packed into one `u128`, so an ordering test is one wide
//!   comparison instead of three;
//! - events pushed with [`Events::push_in_order`] whose keys do not fall
//!   below the last such key (host transfers, which one link serialises)
//!   wait in a FIFO instead of the heap, so the heap holds only the
//!   operations the dies are working on.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One event: time in ns, kind, id.
pub(super) type Event = (u64, u8, u32);

#[inline(always)]
fn pack((t, kind, id): Event) -> u128 {
    (u128::from(t) << 64) | (u128::from(kind) << 32) | u128::from(id)
}

#[inline(always)]
fn unpack(k: u128) -> Event {
    ((k >> 64) as u64, (k >> 32) as u8, k as u32)
}

/// Pending events, earliest first.
pub(super) struct Events {
    heap: BinaryHeap<Reverse<u128>>,
    /// Keys in ascending order.
    fifo: VecDeque<u128>,
}

impl Events {
    /// An empty queue with room for `n` events before it grows.
    pub(super) fn with_capacity(n: usize) -> Self {
        Events {
            heap: BinaryHeap::with_capacity(n),
            fifo: VecDeque::with_capacity(n),
        }
    }

    /// Adds an event.
    #[inline]
    pub(super) fn push(&mut self, e: Event) {
        self.heap.push(Reverse(pack(e)));
    }

    /// Adds an event that usually comes no earlier than the last one added
    /// this way; one that does come earlier goes to the heap instead.
    #[inline]
    pub(super) fn push_in_order(&mut self, e: Event) {
        let k = pack(e);
        if self.fifo.back().is_none_or(|&b| b <= k) {
            self.fifo.push_back(k);
        } else {
            self.heap.push(Reverse(k));
        }
    }

    /// The earliest event's key, and whether it is the FIFO's.
    #[inline(always)]
    fn first(&self) -> Option<(u128, bool)> {
        match (self.heap.peek(), self.fifo.front()) {
            (Some(&Reverse(h)), Some(&f)) => Some(if f < h { (f, true) } else { (h, false) }),
            (Some(&Reverse(h)), None) => Some((h, false)),
            (None, Some(&f)) => Some((f, true)),
            (None, None) => None,
        }
    }

    /// The ids of the two earliest events now queued, each where that event
    /// is of kind `kind`: what prefetches can start on, one and two events
    /// ahead. It reads the heap's layout (the second smallest key is a
    /// child of the root), which the standard library does not promise, so
    /// it is a hint: never use it for anything but prefetching.
    #[inline]
    pub(super) fn next_two(&self, kind: u8) -> [Option<u32>; 2] {
        let h = self.heap.as_slice();
        let key = |r: Option<&Reverse<u128>>| r.map_or(u128::MAX, |r| r.0);
        let (h0, h1, h2) = (key(h.first()), key(h.get(1)), key(h.get(2)));
        // Most passes find the FIFO empty (host transfers are few at a time).
        let (first, second) = if self.fifo.is_empty() {
            (h0, h1.min(h2))
        } else {
            self.next_two_with_fifo(h0, h1.min(h2))
        };
        // Tested on the key itself: no event is decoded for a hint.
        let id = |k: u128| ((k >> 32) as u8 == kind && k != u128::MAX).then_some(k as u32);
        [id(first), id(second)]
    }

    /// [`Self::next_two`]'s keys with the FIFO not empty: `h0` is the
    /// heap's smallest key, `h1` its second smallest.
    fn next_two_with_fifo(&self, h0: u128, h1: u128) -> (u128, u128) {
        let f0 = self.fifo.front().copied().unwrap_or(u128::MAX);
        let f1 = self.fifo.get(1).copied().unwrap_or(u128::MAX);
        if h0 <= f0 {
            (h0, h1.min(f0))
        } else {
            (f0, h0.min(f1))
        }
    }

    /// Time of the earliest event.
    #[inline]
    pub(super) fn next_time(&self) -> Option<u64> {
        self.first().map(|(k, _)| (k >> 64) as u64)
    }

    /// Takes the earliest event.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Event> {
        let (_, from_fifo) = self.first()?;
        let k = if from_fifo {
            self.fifo.pop_front()
        } else {
            self.heap.pop().map(|Reverse(k)| k)
        };
        k.map(unpack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever mix of pushes, the queue gives the events in the order
        /// one heap of triples would.
        #[test]
        fn same_order_as_one_heap(
            steps in proptest::collection::vec((0u64..50, 0u8..3, 0u32..40, any::<bool>(), 0u8..4), 1..300)
        ) {
            let mut q = Events::with_capacity(4);
            let mut reference: BinaryHeap<Reverse<Event>> = BinaryHeap::new();
            for (t, kind, id, ordered, pops) in steps {
                let e = (t, kind, id);
                if ordered { q.push_in_order(e) } else { q.push(e) }
                reference.push(Reverse(e));
                for _ in 0..pops {
                    let mut sorted: Vec<Event> = reference.iter().map(|r| r.0).collect();
                    sorted.sort_unstable();
                    let of_kind = |e: Option<&Event>| e.filter(|e| e.1 == 1).map(|e| e.2);
                    prop_assert_eq!(q.next_two(1), [of_kind(sorted.first()), of_kind(sorted.get(1))]);
                    prop_assert_eq!(q.next_time(), reference.peek().map(|r| r.0.0));
                    prop_assert_eq!(q.pop(), reference.pop().map(|r| r.0));
                }
            }
            while let Some(Reverse(e)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(e));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }

    #[test]
    fn packing_keeps_the_triple() {
        let e = (u64::MAX - 3, 2, u32::MAX);
        assert_eq!(unpack(pack(e)), e);
        assert!(pack((1, 2, 0)) < pack((2, 0, 0)));
        assert!(pack((1, 0, 9)) < pack((1, 1, 0)));
    }
}

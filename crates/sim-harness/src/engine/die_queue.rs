//! Per-die operation queues, linked through the engine's records of the
//! operations in flight.

use firmware_core::NandResult;

/// What the engine keeps of one operation in flight.
#[derive(Clone, Copy)]
pub(super) struct InFlight {
    /// The medium's result, fed back at the operation's completion.
    pub(super) result: NandResult,
    /// Where it runs, decoded once when it is queued. The operation itself
    /// stays in the core's table until its completion (`Ftl::op_in_flight`).
    pub(super) place: crate::place::Place,
    /// The operation queued after this one on its die ([`NO_OP`]: none).
    pub(super) next: u32,
}

/// No operation: the end of a die's queue.
pub(super) const NO_OP: u32 = u32::MAX;

/// One die's operations: those queued, and how many are started and not
/// completed (two while a cache program overlaps the one before it). The
/// queue is a list through the operations' [`InFlight`] records, each
/// written when its operation is queued, so queueing and starting an
/// operation touch no memory but its own record and the die's.
#[derive(Clone)]
pub(super) struct DieQueue {
    /// Oldest queued operation ([`NO_OP`]: none).
    head: u32,
    /// Newest queued operation (stale once the queue runs empty: `head`
    /// says whether it is empty).
    tail: u32,
    /// Operations started on the die and not completed.
    pub(super) busy: u8,
}

impl DieQueue {
    pub(super) const EMPTY: DieQueue = DieQueue {
        head: NO_OP,
        tail: NO_OP,
        busy: 0,
    };

    /// The oldest queued operation.
    #[inline]
    pub(super) fn front(&self) -> Option<u32> {
        (self.head != NO_OP).then_some(self.head)
    }

    /// Queues operation `id`, whose record (`next` [`NO_OP`]) is written.
    #[inline]
    pub(super) fn push_back(&mut self, id: u32, in_flight: &mut [InFlight]) {
        match in_flight.get_mut((self.tail & 0xffff) as usize) {
            Some(t) if self.head != NO_OP => t.next = id,
            _ => self.head = id,
        }
        self.tail = id;
    }

    /// Takes the oldest queued operation.
    #[inline]
    pub(super) fn pop_front(&mut self, in_flight: &[InFlight]) -> Option<u32> {
        let id = self.front()?;
        self.head = in_flight
            .get((id & 0xffff) as usize)
            .map_or(NO_OP, |f| f.next);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firmware_core::ReadReport;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Any mix of queueing and starting on a few dies gives each die's
        /// operations back in the order a deque per die would, including
        /// after a queue has run empty (its stale tail must not be linked).
        #[test]
        fn same_order_as_a_deque_per_die(steps in proptest::collection::vec((0usize..3, any::<bool>()), 1..200)) {
            let mut in_flight = vec![
                InFlight { result: Ok(ReadReport::default()), place: Default::default(), next: NO_OP };
                256
            ];
            let mut dies = vec![DieQueue::EMPTY; 3];
            let mut reference = vec![VecDeque::new(); 3];
            let mut free: Vec<u32> = (0..256).rev().collect();
            for (die, push) in steps {
                if push {
                    let Some(idx) = free.pop() else { continue };
                    // Generation bits above the index, as the core's ids carry.
                    let id = idx | 0x3_0000;
                    in_flight[idx as usize].next = NO_OP;
                    dies[die].push_back(id, &mut in_flight);
                    reference[die].push_back(id);
                } else {
                    let got = dies[die].pop_front(&in_flight);
                    prop_assert_eq!(got, reference[die].pop_front());
                    if let Some(id) = got {
                        free.push(id & 0xffff);
                    }
                }
                prop_assert_eq!(dies[die].front(), reference[die].front().copied());
            }
        }
    }
}

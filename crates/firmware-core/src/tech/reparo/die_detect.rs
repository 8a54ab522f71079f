//! Reparo's die-failure *Detector* (seed 001, Sec. 5.3.1, Fig. 28).
//!
//! When a block `B` of die `D` goes bad, the detector reads the first page
//! of the blocks physically next to `B` (`B + 1`, `B + 2`, ... within the
//! die, wrapping). A probe that fails with anything but "erased" counts
//! another bad block and moves on to the next neighbour; a probe that
//! succeeds (or finds an erased page) ends the walk. Once the die's count of
//! accumulated bad blocks exceeds `N_bad_die` the die is failed: the event
//! is queued for the host to poll (as with SMART), and the flash core
//! retires the die.
//!
//! The detector is pure logic: the caller reports failures
//! ([`Detector::on_failure`]), asks for the next probe
//! ([`Detector::next_probe`]), executes it and reports the result
//! ([`Detector::probe_done`]). It holds no table larger than [`MAX_DIES`]
//! counters.

use crate::error::Error;
use crate::medium::addr::{BlockId, DieId, Geometry};
use crate::medium::nand::{NandError, NandResult};

/// Most dies one flash core may own.
pub const MAX_DIES: usize = 256;

/// Probes queued at once (one walk per die in progress).
const MAX_WALKS: usize = 16;

/// A probe walk in progress on one die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Walk {
    die: u32,
    /// Block (index within the die) to probe next.
    next: u32,
    /// Probes left before the walk gives up (one lap of the die).
    left: u32,
}

/// Die-failure detector of one flash core.
#[derive(Clone, Debug)]
pub struct Detector {
    g: Geometry,
    n_bad_die: u32,
    bad: [u16; MAX_DIES],
    failed: [bool; MAX_DIES],
    walks: heapless::Deque<Walk, MAX_WALKS>,
    inflight: Option<Walk>,
    events: heapless::Deque<DieId, 8>,
    probes: u64,
}

impl Detector {
    /// A detector for `g` that fails a die past `n_bad_die` bad blocks.
    pub fn new(g: Geometry, n_bad_die: u32) -> Result<Detector, Error> {
        if g.dies() as usize > MAX_DIES {
            return Err(Error::InvalidConfig(&"die detector: too many dies"));
        }
        Ok(Detector {
            g,
            n_bad_die,
            bad: [0; MAX_DIES],
            failed: [false; MAX_DIES],
            walks: heapless::Deque::new(),
            inflight: None,
            events: heapless::Deque::new(),
            probes: 0,
        })
    }

    fn blocks_per_die(&self) -> u32 {
        u32::from(self.g.planes_per_die).saturating_mul(self.g.blocks_per_plane)
    }

    /// Whether die `d` has been declared failed.
    pub fn is_failed(&self, d: DieId) -> bool {
        self.failed.get(d.0 as usize).copied().unwrap_or(false)
    }

    /// Bad blocks counted on die `d`.
    pub fn bad_blocks(&self, d: DieId) -> u32 {
        self.bad.get(d.0 as usize).map_or(0, |&c| u32::from(c))
    }

    /// Probe reads issued so far.
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// Counts one bad block on die `d`; declares the die failed past the
    /// threshold. Returns whether it just failed.
    fn count_bad(&mut self, d: u32) -> bool {
        let i = d as usize;
        let (Some(c), Some(f)) = (self.bad.get_mut(i), self.failed.get_mut(i)) else {
            return false;
        };
        *c = c.saturating_add(1);
        if !*f && u32::from(*c) > self.n_bad_die {
            *f = true;
            // A full queue drops the event; the die stays failed either way.
            let _ = self.events.push_back(DieId(d));
            return true;
        }
        false
    }

    /// An operation on `block` failed with `err` (a grown bad block). Counts
    /// it and starts a probe walk over its neighbours. Erased-page reads are
    /// not failures and are ignored.
    pub fn on_failure(&mut self, block: BlockId, err: NandError) {
        if err == NandError::Erased || block.0 >= self.g.total_blocks() {
            return;
        }
        let d = self.g.die_of(block).0;
        if self.is_failed(DieId(d)) {
            return;
        }
        self.count_bad(d);
        if self.is_failed(DieId(d)) || self.walks.iter().any(|w| w.die == d) {
            return;
        }
        let per_die = self.blocks_per_die().max(1);
        let within = block.0.checked_rem(per_die).unwrap_or(0);
        let next = within.saturating_add(1).checked_rem(per_die).unwrap_or(0);
        let _ = self.walks.push_back(Walk {
            die: d,
            next,
            left: per_die.saturating_sub(1),
        });
    }

    /// The next block whose first page to read, if a walk is waiting and no
    /// probe is in flight.
    pub fn next_probe(&mut self) -> Option<BlockId> {
        if self.inflight.is_some() {
            return None;
        }
        loop {
            let w = self.walks.pop_front()?;
            if w.left == 0 || self.is_failed(DieId(w.die)) {
                continue;
            }
            let block = w
                .die
                .checked_mul(self.blocks_per_die())
                .and_then(|x| x.checked_add(w.next))?;
            self.inflight = Some(w);
            self.probes = self.probes.saturating_add(1);
            return Some(BlockId(block));
        }
    }

    /// The probe issued last finished with `result`.
    pub fn probe_done(&mut self, result: &NandResult) {
        let Some(w) = self.inflight.take() else {
            return;
        };
        let bad = matches!(result, Err(e) if *e != NandError::Erased);
        if !bad {
            return;
        }
        if self.count_bad(w.die) {
            return;
        }
        let per_die = self.blocks_per_die().max(1);
        let next = w.next.saturating_add(1).checked_rem(per_die).unwrap_or(0);
        let _ = self.walks.push_front(Walk {
            die: w.die,
            next,
            left: w.left.saturating_sub(1),
        });
    }

    /// Next die-failure event for the host, oldest first.
    pub fn poll_event(&mut self) -> Option<DieId> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            dies_per_channel: 2,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_bytes: 16384,
            pages_per_wordline: 1,
            units_per_page: 4,
        }
    }

    #[test]
    fn walk_declares_die_failed_past_threshold() {
        let mut d = Detector::new(geo(), 4).unwrap();
        // Block 5 of die 1 (blocks 16..32) fails a program.
        d.on_failure(BlockId(21), NandError::ProgramFailed);
        assert_eq!(d.bad_blocks(DieId(1)), 1);
        let mut probed = std::vec::Vec::new();
        while let Some(b) = d.next_probe() {
            probed.push(b.0);
            d.probe_done(&Err(NandError::Uncorrectable));
        }
        // Four more bad blocks pass N_bad_die = 4.
        assert_eq!(probed, [22, 23, 24, 25]);
        assert!(d.is_failed(DieId(1)));
        assert_eq!(d.poll_event(), Some(DieId(1)));
        assert_eq!(d.poll_event(), None);
        assert!(!d.is_failed(DieId(0)));
    }

    #[test]
    fn healthy_neighbour_ends_the_walk() {
        let mut d = Detector::new(geo(), 4).unwrap();
        d.on_failure(BlockId(15), NandError::EraseFailed);
        // Wraps within die 0.
        assert_eq!(d.next_probe(), Some(BlockId(0)));
        d.probe_done(&Err(NandError::Erased));
        assert_eq!(d.next_probe(), None);
        assert!(!d.is_failed(DieId(0)));
        assert_eq!(d.poll_event(), None);
        // Reads of erased pages never count.
        d.on_failure(BlockId(3), NandError::Erased);
        assert_eq!(d.bad_blocks(DieId(0)), 1);
    }

    #[test]
    fn a_lap_without_threshold_stops() {
        let mut d = Detector::new(geo(), 100).unwrap();
        d.on_failure(BlockId(40), NandError::ProgramFailed);
        let mut n = 0;
        while d.next_probe().is_some() {
            d.probe_done(&Err(NandError::Uncorrectable));
            n += 1;
        }
        assert_eq!(n, 15);
        assert_eq!(d.bad_blocks(DieId(2)), 16);
        assert!(!d.is_failed(DieId(2)));
    }
}

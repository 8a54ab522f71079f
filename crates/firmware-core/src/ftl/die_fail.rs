//! Whole-die retirement and the read-only views Reparo needs from the core
//! (seed 001, Sec. 5.3.1, *Handler* of `reparo_IDR`).
//!
//! Once the detector ([`crate::tech::reparo::die_detect`]) declares a die failed,
//! [`Ftl::retire_die`] takes every block of the die out of service at once:
//! free, open and full blocks become bad, so the die's planes have no room
//! and the host and GC streams stripe over the remaining dies only. The L2P
//! entries that still point into the die are kept: they are exactly the
//! failed LBAs the *Identifier* looks for, reads of them fail on the medium,
//! and a host rewrite moves them to a healthy die.
//!
//! [`Ftl::l2p_entry`] and [`Ftl::unit_owner`] expose the L2P and P2L tables
//! read-only, and [`Ftl::peek_op`] shows an operation in flight, so the
//! flash-core wrapper can watch failures without touching the data path.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, OpKind, NIL};
use crate::ftl::Ftl;
use crate::map::loc::Loc;
use crate::medium::addr::{BlockId, DieId, Lpn, Pun};
use crate::medium::nand::{NandCmd, OpId};

/// Where the L2P table says a logical unit lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L2pEntry {
    /// Never written, or trimmed.
    Unmapped,
    /// Lost to an uncorrectable read during relocation.
    Lost,
    /// In the write buffer.
    Buffered,
    /// On flash at this physical unit.
    Flash(Pun),
}

impl<H: Hooks> Ftl<'_, H> {
    /// The L2P entry of `lpn`.
    pub fn l2p_entry(&self, lpn: Lpn) -> Result<L2pEntry, Error> {
        Ok(match self.loc(lpn)? {
            Loc::Unmapped => L2pEntry::Unmapped,
            Loc::Lost => L2pEntry::Lost,
            Loc::Buffer(_) => L2pEntry::Buffered,
            Loc::Flash(p) => L2pEntry::Flash(p),
        })
    }

    /// The logical unit whose live copy is physical unit `pun`, if any.
    pub fn unit_owner(&self, pun: Pun) -> Result<Option<Lpn>, Error> {
        self.p2l(pun)
    }

    /// The command of operation `id` while it is in flight (before its
    /// [`Ftl::complete`]), or `None` when `id` is not in flight.
    pub fn peek_op(&self, id: OpId) -> Option<NandCmd> {
        let idx = usize::try_from(id.0 & 0xffff).ok()?;
        let generation = u16::try_from(id.0 >> 16).ok()?;
        let e = self.t.ops.get(idx)?;
        (e.kind != OpKind::Free && e.generation == generation).then_some(e.cmd)
    }

    /// Takes every block of die `d` out of service (a failed die). Call it
    /// with no operation in flight (`Err(Busy)` otherwise). The block GC is
    /// emptying, if any, is left to GC (its reads and erase fail and retire
    /// it). Returns the number of blocks retired.
    pub fn retire_die(&mut self, d: DieId) -> Result<u32, Error> {
        if self.inflight() != 0 || self.ops_queued() != 0 {
            return Err(Error::Busy);
        }
        if d.0 >= self.g.dies() {
            return Err(rare(Error::AddressOutOfRange));
        }
        let per_die = u32::from(self.g.planes_per_die);
        let mut retired = 0u32;
        for k in 0..per_die {
            let p = crate::medium::addr::PlaneId(
                d.0.checked_mul(per_die)
                    .and_then(|x| x.checked_add(k))
                    .or_rare(Error::AddressOutOfRange)?,
            );
            let first = self.g.first_block(p).0;
            let victim = self.pl(p)?.victim;
            for b in first..first.wrapping_add(self.g.blocks_per_plane) {
                if b == victim {
                    continue;
                }
                let id = BlockId(b);
                let state = self.blk(id)?.state;
                let lost = match state {
                    BlockState::Bad
                    | BlockState::Retiring
                    | BlockState::Meta
                    | BlockState::Anchor => false,
                    BlockState::Full => {
                        self.bucket_remove(id)?;
                        true
                    }
                    BlockState::Free
                    | BlockState::Open
                    | BlockState::Unknown
                    | BlockState::Victim => true,
                };
                {
                    let m = self.blk_mut(id)?;
                    m.state = BlockState::Bad;
                    m.next = NIL;
                    m.prev = NIL;
                }
                if lost {
                    let pl = self.pl_mut(p)?;
                    pl.lost_blocks = pl.lost_blocks.wrapping_add(1);
                    retired = retired.wrapping_add(1);
                    self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
                } else if state == BlockState::Retiring {
                    self.stats.bad_blocks = self.stats.bad_blocks.wrapping_add(1);
                }
            }
            let pl = self.pl_mut(p)?;
            pl.free_head = NIL;
            pl.free_count = 0;
            pl.host_active = NIL;
            pl.gc_active = NIL;
            pl.retire_head = NIL;
            pl.wl_candidate = NIL;
            H::plane_retired(self, p)?;
            self.refresh_ready(p)?;
        }
        Ok(retired)
    }
}

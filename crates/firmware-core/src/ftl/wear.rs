//! Static wear levelling.
//!
//! Dynamic levelling comes from allocation (the coolest free block is opened
//! first). That alone leaves cold data pinning young blocks, so every
//! `wl_check_interval` erases a plane compares its hottest and coldest blocks;
//! if the spread exceeds `wl_threshold`, the coldest full block becomes a
//! candidate victim and GC moves its data when the plane has room, letting the
//! young block take hot data.

use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::tables::{BlockState, NIL};
use crate::ftl::Ftl;
use crate::medium::addr::{BlockId, PlaneId};

impl<H: Hooks> Ftl<'_, H> {
    /// Counts an erase in plane `p` and runs the levelling check when due.
    pub(crate) fn wear_tick(&mut self, p: PlaneId) -> Result<(), Error> {
        if self.cfg.wl_threshold == 0 {
            return Ok(());
        }
        let due = {
            let pl = self.pl_mut(p)?;
            pl.erases_since_wl = pl.erases_since_wl.wrapping_add(1);
            pl.erases_since_wl >= self.cfg.wl_check_interval
        };
        if !due {
            return Ok(());
        }
        self.pl_mut(p)?.erases_since_wl = 0;
        let first = self.g.first_block(p).0;
        let (mut min_pe, mut max_pe, mut coldest) = (u32::MAX, 0u32, NIL);
        for b in first..first.wrapping_add(self.g.blocks_per_plane) {
            let m = self.blk(BlockId(b))?;
            if m.state == BlockState::Bad {
                continue;
            }
            max_pe = max_pe.max(m.pe);
            if m.state == BlockState::Full && m.pe < min_pe {
                min_pe = m.pe;
                coldest = b;
            }
        }
        if coldest != NIL && max_pe.saturating_sub(min_pe) > self.cfg.wl_threshold {
            self.pl_mut(p)?.wl_candidate = coldest;
            self.attend(p)?;
        }
        Ok(())
    }

    /// Spread of P/E counts over the good blocks of the whole array (min, max).
    pub fn pe_spread(&self) -> (u32, u32) {
        let mut lo = u32::MAX;
        let mut hi = 0;
        for m in self.t.blocks.iter().take(self.g.total_blocks() as usize) {
            if m.state != BlockState::Bad && m.state != BlockState::Unknown {
                lo = lo.min(m.pe);
                hi = hi.max(m.pe);
            }
        }
        (if lo == u32::MAX { 0 } else { lo }, hi)
    }
}

//! Adopting a medium its driver wrote directly: a simulator builds a
//! drive's steady state (data pages and their spare areas) without running
//! every write, names where each logical unit lives, and the mount path
//! derives every other table (valid counts, free and GC lists) from that.

use crate::error::{rare, Error};
use crate::ftl::hooks::Hooks;
use crate::ftl::{Ftl, Phase};
use crate::map::loc::Loc;
use crate::medium::addr::{Lpn, Pun};
use crate::persist::mount::MountStep;

impl<H: Hooks> Ftl<'_, H> {
    /// Records that logical unit `lpn` lives in physical unit `pun`, on a
    /// core fresh from [`Ftl::new`] (neither formatted nor mounted), before
    /// [`Ftl::adopt`]. A unit whose block reads back erased is lost.
    pub fn adopt_unit(&mut self, lpn: Lpn, pun: Pun) -> Result<(), Error> {
        if self.phase != Phase::Formatting
            || self.format_cursor != 0
            || self.mnt.step != MountStep::Idle
        {
            return Err(Error::NotReady);
        }
        if pun.0 >= self.g.total_units() {
            return Err(rare(Error::AddressOutOfRange));
        }
        self.set_loc(lpn, Loc::Flash(pun))
    }

    /// Mounts a medium whose data pages the caller programmed (erase counts
    /// in the first pages' spare areas) after [`Ftl::adopt_unit`] named
    /// every live unit; works with mapping persistence off too. The
    /// translation pages the units dirty are written back before the core
    /// takes host commands. Drive the emitted operations as after
    /// [`Ftl::mount`].
    pub fn adopt(&mut self, now: u64) -> Result<(), Error> {
        if self.format_cursor != 0 || self.mnt.step != MountStep::Idle {
            return Err(Error::NotReady);
        }
        self.mount_from(now)
    }
}

//! The generic core made concrete: a table of [`FullFtl`]'s entry points,
//! kept in every build of this crate, so compiling the crate alone (an
//! object file with no caller, as `cargo xtask budget` measures it)
//! compiles the whole core with the techniques the features enable.
//! Without this the generic code would only be compiled by a caller and
//! the crate's stand-alone size would count nothing of it. A linker drops
//! the table from any program that does not use it.

use crate::config::Config;
use crate::error::Error;
#[cfg(feature = "reparo")]
use crate::ftl::die_fail::L2pEntry;
use crate::ftl::host::{CopyProgress, HostCompletion, ReadStart, Tag};
use crate::full::FullFtl;
#[cfg(feature = "reparo")]
use crate::medium::addr::DieId;
use crate::medium::addr::Lpn;
use crate::medium::nand::{NandOp, NandResult, OpId, Slot};

/// One function pointer per public entry point of the core.
#[allow(clippy::type_complexity)]
pub struct EntryPoints {
    /// [`FullFtl::lend_bytes`].
    pub lend_bytes: fn(&Config) -> Result<usize, Error>,
    /// [`FullFtl::new`].
    pub new: fn(Config, &'static mut [u8]) -> Result<FullFtl<'static>, Error>,
    /// [`FullFtl::format_aged`].
    pub format_aged: fn(&mut FullFtl<'static>, u64, u32) -> Result<(), Error>,
    /// [`FullFtl::mount`].
    pub mount: fn(&mut FullFtl<'static>, u64) -> Result<(), Error>,
    /// [`FullFtl::write`].
    pub write: fn(&mut FullFtl<'static>, Lpn, u64) -> Result<Slot, Error>,
    /// [`FullFtl::read`].
    pub read: fn(&mut FullFtl<'static>, Tag, Lpn, u64) -> Result<ReadStart, Error>,
    /// [`FullFtl::trim`].
    pub trim: fn(&mut FullFtl<'static>, Lpn, u64) -> Result<(), Error>,
    /// [`FullFtl::copy`].
    pub copy: fn(&mut FullFtl<'static>, Lpn, Lpn, u32, u64) -> Result<CopyProgress, Error>,
    /// [`FullFtl::flush`].
    pub flush: fn(&mut FullFtl<'static>, Tag, u64) -> Result<(), Error>,
    /// [`FullFtl::complete`].
    pub complete: fn(&mut FullFtl<'static>, OpId, NandResult, u64) -> Result<(), Error>,
    /// [`FullFtl::poll_op`].
    pub poll_op: fn(&mut FullFtl<'static>) -> Option<NandOp>,
    /// [`FullFtl::poll_completion`].
    pub poll_completion: fn(&mut FullFtl<'static>) -> Option<HostCompletion>,
    /// [`FullFtl::meta_for`].
    pub meta_for: for<'f> fn(&'f mut FullFtl<'static>, &NandOp) -> &'f mut [u8],
    /// [`FullFtl::power_fail`].
    pub power_fail: fn(&mut FullFtl<'static>, u64) -> Result<(), Error>,
    /// [`FullFtl::shutdown`].
    pub shutdown: fn(&mut FullFtl<'static>, u64) -> Result<(), Error>,
    /// [`FullFtl::retire_die`] (Reparo's views of the core).
    #[cfg(feature = "reparo")]
    pub retire_die: fn(&mut FullFtl<'static>, DieId) -> Result<u32, Error>,
    /// [`FullFtl::l2p_entry`] (Reparo's views of the core).
    #[cfg(feature = "reparo")]
    pub l2p_entry: fn(&FullFtl<'static>, Lpn) -> Result<L2pEntry, Error>,
    /// [`FullFtl::peek_op`] (Reparo's views of the core).
    #[cfg(feature = "reparo")]
    pub peek_op: fn(&FullFtl<'static>, OpId) -> Option<crate::medium::nand::NandCmd>,
    /// [`FullFtl::audit`].
    pub audit: fn(&FullFtl<'static>) -> Result<(), Error>,
}

/// [`FullFtl`]'s entry points (see the module documentation).
#[used]
pub static FULL_FTL: EntryPoints = EntryPoints {
    lend_bytes: FullFtl::lend_bytes,
    new: FullFtl::new,
    format_aged: FullFtl::format_aged,
    mount: FullFtl::mount,
    write: FullFtl::write,
    read: FullFtl::read,
    trim: FullFtl::trim,
    copy: FullFtl::copy,
    flush: FullFtl::flush,
    complete: FullFtl::complete,
    poll_op: FullFtl::poll_op,
    poll_completion: FullFtl::poll_completion,
    meta_for: FullFtl::meta_for,
    power_fail: FullFtl::power_fail,
    shutdown: FullFtl::shutdown,
    #[cfg(feature = "reparo")]
    retire_die: FullFtl::retire_die,
    #[cfg(feature = "reparo")]
    l2p_entry: FullFtl::l2p_entry,
    #[cfg(feature = "reparo")]
    peek_op: FullFtl::peek_op,
    audit: FullFtl::audit,
};

//! The synchronous read loop: issue one host read on the core and drive it
//! to completion before returning, as the tests, the scenarios and the
//! bare-metal firmware do. [`SyncCore`] is what the loop needs from its
//! caller (the core, a way to run the operations it queued, the data pool),
//! so drivers with their own event loop (probes, die retirement, step
//! labels in errors) share this one loop.

use firmware_core::{
    Error, FullFtl, HostCompletion, Lpn, ReadStart, ReadStatus, ReadValue, Slot, Tag,
};

/// A core driven synchronously, as [`read`] sees it. `'t` is the lifetime
/// of the tables lent to the core.
pub trait SyncCore<'t> {
    /// What one data-pool slot holds.
    type Unit: Copy;
    /// The caller's error.
    type Error;

    /// The core.
    fn ftl(&mut self) -> &mut FullFtl<'t>;
    /// Runs every queued operation to the end.
    fn run(&mut self) -> Result<(), Self::Error>;
    /// The unit in data-pool slot `slot`.
    fn unit(&self, slot: Slot) -> Result<Self::Unit, Self::Error>;
    /// The caller's error for an error of the core.
    fn core_error(&self, e: Error) -> Self::Error;
}

/// Reads `lpn` (host tag `lpn`): waits while the core is busy with queued
/// operations, then returns the buffered unit, or runs the medium reads and
/// takes the unit from the read's completion. Other completions polled on
/// the way are dropped.
pub fn read<'t, C: SyncCore<'t> + ?Sized>(
    c: &mut C,
    lpn: Lpn,
) -> Result<ReadValue<C::Unit>, C::Error> {
    let tag = Tag(lpn.0);
    let start = loop {
        match c.ftl().read(tag, lpn, 0) {
            Err(Error::Busy) if c.ftl().ops_queued() > 0 => c.run()?,
            Ok(s) => break s,
            Err(e) => return Err(c.core_error(e)),
        }
    };
    match start {
        ReadStart::Unmapped => Ok(ReadValue::Unmapped),
        ReadStart::Lost => Ok(ReadValue::Error),
        ReadStart::Buffered(s) => Ok(ReadValue::Data(c.unit(s)?)),
        ReadStart::Issued => {
            c.run()?;
            while let Some(done) = c.ftl().poll_completion() {
                if let HostCompletion::Read {
                    tag: t,
                    slot,
                    status,
                } = done
                {
                    if t == tag {
                        return Ok(match status {
                            ReadStatus::Ok => ReadValue::Data(c.unit(slot)?),
                            ReadStatus::MediaError => ReadValue::Error,
                        });
                    }
                }
            }
            Err(c.core_error(Error::Corrupt("read completion missing")))
        }
    }
}

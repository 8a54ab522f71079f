//! A synchronous driver: runs the core against any [`Nand`] medium, one
//! operation at a time, in emission order.
//!
//! This is the simplest correct event loop (and the one the bare-metal example
//! uses): drain [`Ftl::poll_op`], execute each operation on the medium, feed
//! the result back with [`Ftl::complete`], and hand host completions over.
//! Timing-aware drivers (the simulation harness) follow the same protocol but
//! complete operations in simulated-time order.

use crate::error::{rare, Error, OrRare};
use crate::ftl::hooks::Hooks;
use crate::ftl::host::{HostCompletion, ReadStart, ReadStatus, Tag};
use crate::ftl::Ftl;
use crate::medium::addr::{Lpn, MAX_UNITS_PER_PAGE};
use crate::medium::nand::{Nand, NandCmd, NandOp, NandResult, Slot};

/// What a read returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadValue<U> {
    /// The unit's data.
    Data(U),
    /// Never written or trimmed.
    Unmapped,
    /// The medium could not return it.
    Error,
}

/// Couples a core with a medium and the data pool its slots index.
pub struct SyncDriver<'n, N: Nand> {
    /// The medium.
    pub nand: &'n mut N,
    /// Data pool: one unit per buffer slot (at least `Config::total_slots`).
    pub data: &'n mut [N::Unit],
    /// Timestamp passed to the core (the driver owns time).
    pub now: u64,
}

/// Executes one operation on a medium, moving data between slots and pages.
/// `meta` is the metadata buffer the operation names ([`Ftl::meta_for`]);
/// it is empty for data operations.
pub fn execute<N: Nand>(
    nand: &mut N,
    data: &mut [N::Unit],
    meta: &mut [u8],
    op: &NandOp,
) -> NandResult {
    execute_cmd(nand, data, meta, &op.cmd)
}

/// [`execute`] of a command alone (as [`Ftl::poll_op_view`] lends it).
#[inline]
pub fn execute_cmd<N: Nand>(
    nand: &mut N,
    data: &mut [N::Unit],
    meta: &mut [u8],
    cmd: &NandCmd,
) -> NandResult {
    match cmd {
        NandCmd::Read { page, units, dst } => {
            let n = units.count() as usize;
            let mut buf = [N::Unit::default(); MAX_UNITS_PER_PAGE];
            let r = nand.read(*page, *units, buf.get_mut(..n).unwrap_or(&mut []));
            if r.is_ok() {
                for (s, u) in dst.iter().zip(buf.iter()).take(n) {
                    if let Some(d) = data.get_mut(usize::from(s.0)) {
                        *d = *u;
                    }
                }
            }
            r
        }
        NandCmd::Program { page, src, spare } => {
            let n = spare.units.count() as usize;
            let mut buf = [N::Unit::default(); MAX_UNITS_PER_PAGE];
            for (b, s) in buf.iter_mut().zip(src.iter()).take(n) {
                if let Some(d) = data.get(usize::from(s.0)) {
                    *b = *d;
                }
            }
            nand.program(*page, buf.get(..n).unwrap_or(&[]), spare)
        }
        NandCmd::Erase { block } => nand.erase(*block),
        NandCmd::GuardedErase {
            block,
            low_stress,
            retired,
        } => nand.guarded_erase(*block, low_stress, retired),
        NandCmd::Copyback { src, dst, spare } => nand.copyback(*src, *dst, spare),
        NandCmd::ProgramMeta { page, spare, .. } => nand.program_meta(*page, meta, spare),
        NandCmd::ReadMeta { page, .. } => nand.read_meta(*page, meta),
    }
}

impl<'n, N: Nand> SyncDriver<'n, N> {
    /// Couples a medium and a data pool.
    pub fn new(nand: &'n mut N, data: &'n mut [N::Unit]) -> Self {
        SyncDriver { nand, data, now: 0 }
    }

    /// Executes queued operations until the core has none left.
    pub fn run<H: Hooks>(&mut self, ftl: &mut Ftl<'_, H>) -> Result<(), Error> {
        while let Some(op) = ftl.poll_op_view() {
            let id = op.id;
            let r = execute_cmd(self.nand, self.data, op.meta, op.cmd);
            ftl.complete_in(id, r, self.now)?;
        }
        Ok(())
    }

    /// Formats the device and waits until it is ready.
    pub fn format<H: Hooks>(&mut self, ftl: &mut Ftl<'_, H>) -> Result<(), Error> {
        ftl.format(self.now)?;
        self.run(ftl)?;
        if ftl.is_ready() {
            Ok(())
        } else {
            Err(Error::NotReady)
        }
    }

    /// Writes one unit, waiting for buffer space if needed.
    pub fn write<H: Hooks>(
        &mut self,
        ftl: &mut Ftl<'_, H>,
        lpn: Lpn,
        unit: N::Unit,
    ) -> Result<(), Error> {
        loop {
            match ftl.write(lpn, self.now) {
                Ok(s) => {
                    *self
                        .data
                        .get_mut(usize::from(s.0))
                        .or_rare(Error::Corrupt(&"slot outside data pool"))? = unit;
                    return self.run(ftl);
                }
                Err(Error::Busy) => {
                    if ftl.ops_queued() == 0 {
                        return Err(Error::OutOfSpace);
                    }
                    self.run(ftl)?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads one unit (the synchronous read loop, [`read`]).
    pub fn read<H: Hooks>(
        &mut self,
        ftl: &mut Ftl<'_, H>,
        lpn: Lpn,
    ) -> Result<ReadValue<N::Unit>, Error> {
        read(&mut Driven { drv: self, ftl }, lpn)
    }

    /// Copies `len` units from `src` to `dst`: remapped by the core where it
    /// can, the other units copied physically here (read, then write through
    /// the write buffer, as a host without a copy command would). A source
    /// that reads as unmapped trims its destination; an unreadable one is
    /// reported as [`Error::Corrupt`] (the data is gone).
    pub fn copy<H: Hooks>(
        &mut self,
        ftl: &mut Ftl<'_, H>,
        src: Lpn,
        dst: Lpn,
        len: u32,
    ) -> Result<(), Error> {
        let mut done = 0u32;
        while done < len {
            let s = Lpn(src.0.saturating_add(done));
            let d = Lpn(dst.0.saturating_add(done));
            let left = len.saturating_sub(done);
            let p = ftl.copy(s, d, left, self.now)?;
            done = done.saturating_add(p.remapped);
            match p.stop {
                crate::ftl::host::CopyStop::Done => {}
                crate::ftl::host::CopyStop::Busy => {
                    if ftl.ops_queued() == 0 {
                        return Err(Error::OutOfSpace);
                    }
                    self.run(ftl)?;
                }
                crate::ftl::host::CopyStop::Physical(_) => {
                    let s = Lpn(src.0.saturating_add(done));
                    let d = Lpn(dst.0.saturating_add(done));
                    match self.read(ftl, s)? {
                        ReadValue::Data(u) => self.write(ftl, d, u)?,
                        ReadValue::Unmapped => self.trim(ftl, d)?,
                        ReadValue::Error => {
                            return Err(rare(Error::Corrupt(&"copy source unreadable")))
                        }
                    }
                    done = done.saturating_add(1);
                }
            }
        }
        self.run(ftl)
    }

    /// Trims one unit, waiting while the trim is refused for now (with
    /// partial mapping protection a trim waits for translation-page room).
    pub fn trim<H: Hooks>(&mut self, ftl: &mut Ftl<'_, H>, lpn: Lpn) -> Result<(), Error> {
        loop {
            match ftl.trim(lpn, self.now) {
                Ok(()) => return self.run(ftl),
                Err(Error::Busy) if ftl.ops_queued() > 0 => self.run(ftl)?,
                Err(e) => return Err(e),
            }
        }
    }

    /// Flushes the write buffer to flash and waits for it. `Err(OutOfSpace)`
    /// when failures left no plane room for the buffered data.
    pub fn flush<H: Hooks>(&mut self, ftl: &mut Ftl<'_, H>) -> Result<(), Error> {
        let tag = Tag(u32::MAX);
        ftl.flush(tag, self.now)?;
        self.run(ftl)?;
        while let Some(c) = ftl.poll_completion() {
            if c == (HostCompletion::Flush { tag }) {
                return Ok(());
            }
        }
        // Nothing left to wait for: the buffered data has no plane to go to.
        if ftl.ops_queued() == 0 {
            return Err(Error::OutOfSpace);
        }
        Err(Error::Corrupt(&"flush did not complete"))
    }

    /// Flushes, then shuts down cleanly ([`Ftl::shutdown`]) and waits until
    /// the checkpoint is on flash.
    pub fn shutdown<H: Hooks>(&mut self, ftl: &mut Ftl<'_, H>) -> Result<(), Error> {
        self.flush(ftl)?;
        self.run(ftl)?;
        ftl.shutdown(self.now)?;
        self.run(ftl)?;
        if ftl.cut_finished() {
            Ok(())
        } else {
            Err(Error::Corrupt(&"shutdown did not finish"))
        }
    }
}

/// What the synchronous read loop ([`read`]) needs from its caller: the
/// core, a way to run the operations it queued, and the data pool. Drivers
/// with an event loop of their own (probes, die retirement, errors labelled
/// with a step) implement it to share the one loop.
pub trait SyncCore<'t> {
    /// The hook set of the core.
    type Hooks: Hooks;
    /// What one data-pool slot holds.
    type Unit: Copy;
    /// The caller's error.
    type Error;

    /// The core.
    fn ftl(&mut self) -> &mut Ftl<'t, Self::Hooks>;
    /// Runs every queued operation to the end.
    fn run(&mut self) -> Result<(), Self::Error>;
    /// The unit in data-pool slot `slot`.
    fn unit(&self, slot: Slot) -> Result<Self::Unit, Self::Error>;
    /// The caller's error for an error of the core.
    fn core_error(&self, e: Error) -> Self::Error;
    /// The time the read is issued at.
    fn now(&self) -> u64 {
        0
    }
}

/// Reads `lpn` (host tag `lpn`) to the end: waits while the core is busy
/// with queued operations, then returns the buffered unit, or runs the
/// medium reads and takes the unit from the read's completion. Other
/// completions polled on the way are dropped.
pub fn read<'t, C: SyncCore<'t> + ?Sized>(
    c: &mut C,
    lpn: Lpn,
) -> Result<ReadValue<C::Unit>, C::Error> {
    let tag = Tag(lpn.0);
    let start = loop {
        let now = c.now();
        match c.ftl().read(tag, lpn, now) {
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
            Err(c.core_error(Error::Corrupt(&"read completion missing")))
        }
    }
}

/// A [`SyncDriver`] and the core it drives, as the read loop sees them.
struct Driven<'d, 'n, 'f, 't, N: Nand, H: Hooks> {
    drv: &'d mut SyncDriver<'n, N>,
    ftl: &'f mut Ftl<'t, H>,
}

impl<'t, N: Nand, H: Hooks> SyncCore<'t> for Driven<'_, '_, '_, 't, N, H> {
    type Hooks = H;
    type Unit = N::Unit;
    type Error = Error;

    fn ftl(&mut self) -> &mut Ftl<'t, H> {
        self.ftl
    }
    fn run(&mut self) -> Result<(), Error> {
        self.drv.run(self.ftl)
    }
    fn unit(&self, slot: Slot) -> Result<N::Unit, Error> {
        self.drv
            .data
            .get(usize::from(slot.0))
            .copied()
            .or_rare(Error::Corrupt(&"slot outside data pool"))
    }
    fn core_error(&self, e: Error) -> Error {
        e
    }
    fn now(&self) -> u64 {
        self.drv.now
    }
}

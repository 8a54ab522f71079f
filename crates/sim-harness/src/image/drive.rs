//! The drive an image power-on lends to the caller: the full-data drive
//! over the journaled file medium, recording every call.

use firmware_core::Error;

use super::journal::Call;
use super::recorded::Recorded;
use super::ImageError;
use crate::interactive::{Completion, Device, Drive};
use crate::sim::Outcome;
use crate::workload::HostOp;

/// An image drive: the full-data drive over the journaled file medium,
/// recording every call into the journal.
pub(super) struct ImageDrive<'a, const B: usize> {
    pub inner: Drive<'a, Recorded<B>, B>,
    /// Capacitor-region bytes that make a compaction due (0: never).
    pub compact_at: u64,
    /// Capacitor-region payload units found damaged at open (the medium
    /// counts its own detections).
    pub found_before: u64,
}

impl<const B: usize> ImageDrive<'_, B> {
    fn record(&mut self, c: &Call) {
        if let Some(j) = &mut self.inner.eng.nand.journal {
            j.call(c);
        }
    }

    fn check(&self) -> Result<(), Error> {
        match self.inner.eng.nand.failure() {
            Some(_) => Err(Error::Corrupt(&"image file I/O failed")),
            None => Ok(()),
        }
    }

    /// Starts the core (recorded) and steps it until it is ready.
    pub fn start(&mut self, mount: bool, initial_pe: u32) -> Result<(), ImageError> {
        self.record(&Call::Start { mount, initial_pe });
        self.inner.eng.start(mount, initial_pe)?;
        while !self.inner.eng.ftl.is_ready() {
            self.record(&Call::Step);
            if !self.inner.eng.step()? {
                return Err(ImageError::Core(Error::NotReady));
            }
        }
        self.record(&Call::BeginPhase);
        self.inner.eng.begin_phase();
        self.inner.eng.nand.flush();
        if let Some(e) = self.inner.eng.nand.failure() {
            return Err(ImageError::Io(e));
        }
        Ok(())
    }
}

impl<const B: usize> Device for ImageDrive<'_, B> {
    fn unit_bytes(&self) -> usize {
        B
    }

    fn logical_units(&self) -> u32 {
        self.inner.logical_units()
    }

    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    fn can_submit(&self) -> bool {
        self.inner.can_submit()
    }

    fn submit(
        &mut self,
        op: HostOp,
        lpn: u32,
        units: u32,
        data: Vec<u8>,
        at_ns: u64,
    ) -> Result<u32, Error> {
        if op == HostOp::Write && data.len() != units as usize * B {
            // Refused before the engine sees it: nothing to record.
            return self.inner.submit(op, lpn, units, data, at_ns);
        }
        let c = Call::Submit {
            op,
            lpn,
            units,
            at_ns,
            data,
        };
        self.record(&c);
        let Call::Submit { data, .. } = c else {
            return Err(Error::Corrupt(&"unreachable"));
        };
        let r = self.inner.submit(op, lpn, units, data, at_ns);
        self.check()?;
        r
    }

    fn next_event_ns(&self) -> Option<u64> {
        self.inner.next_event_ns()
    }

    fn step(&mut self) -> Result<bool, Error> {
        self.record(&Call::Step);
        let r = self.inner.step();
        self.check()?;
        r
    }

    fn poll(&mut self) -> Option<Completion> {
        self.inner.poll()
    }

    fn outcome(&self, wall_seconds: f64, total_wall_seconds: f64) -> Result<Outcome, Error> {
        let mut o = self.inner.outcome(wall_seconds, total_wall_seconds)?;
        o.run.detected_corruptions =
            self.found_before + self.inner.eng.nand.file.detected_corruptions();
        Ok(o)
    }

    fn sync(&mut self) -> Result<(), Error> {
        self.inner.eng.nand.flush();
        self.check()
    }

    fn compact_due(&self) -> bool {
        self.compact_at > 0
            && self
                .inner
                .eng
                .nand
                .journal
                .as_ref()
                .is_some_and(|j| j.end() >= self.compact_at)
    }
}

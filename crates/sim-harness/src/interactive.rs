//! Interactive driving of a simulated drive with real payloads.
//!
//! A batch run pulls its requests from a `RequestSource` and checks reads
//! against stamps. A block-device front end instead gets requests one by one
//! with their data and must hand read data back: [`open`] builds a full-data
//! drive from a [`Plan`] and lends it, as a [`Device`], to a closure that
//! submits requests ([`Device::submit`]), advances simulated time one event at
//! a time ([`Device::step`]) and collects completions with their data and
//! simulated completion time ([`Device::poll`]).
//!
//! It is the batch engine underneath (same request admission, die queues,
//! timing model and core driving); only the host side differs: a
//! [`PayloadHost`] copies written bytes into buffer slots, copies read units
//! out into the request's buffer, and checks every read against the digest of
//! the data last written to that unit (counted in the run's integrity figures).

use std::collections::VecDeque;

use firmware_core::{Error, Nand};
use nand_model::{FullDataMedium, FullUnit};

use crate::engine::{CoreStore, Engine, HostSide, ReadData};
use crate::sim::{outcome, Outcome, Plan, FULL_DATA_UNIT_ERROR};
use crate::workload::{HostOp, HostRequest};

/// A finished request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The id [`Device::submit`] returned.
    pub id: u32,
    /// Read data (`units` × unit size bytes); empty for other requests.
    pub data: Vec<u8>,
    /// False when a unit could not be read (media error or lost data).
    pub ok: bool,
    /// Simulated completion time, ns.
    pub done_ns: u64,
}

/// A simulated drive driven request by request.
pub trait Device {
    /// Bytes of one mapping unit.
    fn unit_bytes(&self) -> usize;
    /// Logical capacity in mapping units.
    fn logical_units(&self) -> u32;
    /// Current simulated time, ns.
    fn now_ns(&self) -> u64;
    /// Whether a request can be submitted now (fewer than the queue depth outstanding).
    fn can_submit(&self) -> bool;
    /// Starts `op` on `units` units from `lpn` at simulated time
    /// `max(at_ns, now)`; a write brings exactly `units` × unit size bytes.
    /// Returns the request id its [`Completion`] will carry.
    fn submit(
        &mut self,
        op: HostOp,
        lpn: u32,
        units: u32,
        data: Vec<u8>,
        at_ns: u64,
    ) -> Result<u32, Error>;
    /// Simulated time of the next event, if any.
    fn next_event_ns(&self) -> Option<u64>;
    /// Processes the earliest event; false when there is none.
    fn step(&mut self) -> Result<bool, Error>;
    /// The next finished request, if any.
    fn poll(&mut self) -> Option<Completion>;
    /// The run's figures so far (the same report a batch run gives).
    fn outcome(&self, wall_seconds: f64, total_wall_seconds: f64) -> Result<Outcome, Error>;
    /// Makes everything done so far survive a power cut: a drive kept in an
    /// image file writes its capacitor region (see [`crate::image`]). A
    /// front end calls it before acknowledging completions it polled.
    fn sync(&mut self) -> Result<(), Error> {
        Ok(())
    }
    /// Whether the drive would like to be left idle and restarted (an image
    /// drive whose capacitor region has grown large; see
    /// [`crate::image::Served::Compact`]).
    fn compact_due(&self) -> bool {
        false
    }
}

/// A full-data medium whose counters go into the run report.
pub trait FullMedium<const B: usize>: Nand<Unit = FullUnit<B>> {
    /// The medium's operation counters.
    fn counters(&self) -> nand_model::Stats;
}

impl<const B: usize> FullMedium<B> for FullDataMedium<B> {
    fn counters(&self) -> nand_model::Stats {
        *self.stats()
    }
}

/// Digest of a unit whose content this host side does not know (written
/// before a restart): reads of it are not checked.
const UNKNOWN: u64 = u64::MAX;

/// The host side of an interactive drive: real payloads of `B`-byte units.
pub struct PayloadHost<const B: usize> {
    /// Digest of the data last written to each logical unit (0: zeros;
    /// [`UNKNOWN`]: written before this host side existed).
    digests: Vec<u64>,
    /// Payload of the request about to begin.
    incoming: Vec<u8>,
    /// Payload of each engine request id.
    bufs: Vec<Vec<u8>>,
    /// Whether a unit of the request could not be read.
    failed: Vec<bool>,
    /// Whether the request is a read (its buffer goes back with the completion).
    reads: Vec<bool>,
    done: VecDeque<Completion>,
}

impl<const B: usize> PayloadHost<B> {
    /// A host side for `logical_units` never-written units.
    pub fn new(logical_units: u32) -> Self {
        PayloadHost {
            digests: vec![0; logical_units as usize],
            incoming: Vec::new(),
            bufs: Vec::new(),
            failed: Vec::new(),
            reads: Vec::new(),
            done: VecDeque::new(),
        }
    }

    /// A host side for a drive that already holds data (reopened from an
    /// image file): a unit is checked once this host side has written or
    /// trimmed it.
    pub fn reopened(logical_units: u32) -> Self {
        let mut h = Self::new(logical_units);
        h.digests.fill(UNKNOWN);
        h
    }

    /// Sets the payload of the request about to be submitted.
    pub fn set_incoming(&mut self, data: Vec<u8>) {
        self.incoming = data;
    }

    /// The next finished request, if any.
    pub fn pop_done(&mut self) -> Option<Completion> {
        self.done.pop_front()
    }
}

impl<const B: usize> HostSide<FullUnit<B>> for PayloadHost<B> {
    fn begin(&mut self, req: u32, r: &HostRequest) {
        let i = req as usize;
        if self.bufs.len() <= i {
            self.bufs.resize_with(i + 1, Vec::new);
            self.failed.resize(i + 1, false);
            self.reads.resize(i + 1, false);
        }
        let mut buf = std::mem::take(&mut self.incoming);
        if r.op == HostOp::Read {
            buf.clear();
            buf.resize(r.units as usize * B, 0);
        }
        self.bufs[i] = buf;
        self.failed[i] = false;
        self.reads[i] = r.op == HostOp::Read;
    }

    fn write_unit(&mut self, req: u32, k: u32, lpn: u32, unit: &mut FullUnit<B>) {
        let at = k as usize * B;
        let src = self.bufs[req as usize].get(at..at + B).unwrap_or(&[]);
        let dst = unit.as_bytes_mut();
        if src.len() == B {
            dst.copy_from_slice(src);
        } else {
            dst.fill(0);
        }
        self.digests[lpn as usize] = unit.digest();
    }

    fn trim_unit(&mut self, lpn: u32) {
        self.digests[lpn as usize] = 0;
    }

    fn copy_unit(&mut self, src: u32, dst: u32) {
        self.digests[dst as usize] = self.digests[src as usize];
    }

    fn expect(&self, lpn: u32) -> u64 {
        self.digests[lpn as usize]
    }

    fn read_unit(
        &mut self,
        req: u32,
        k: u32,
        data: ReadData<'_, FullUnit<B>>,
        expect: u64,
    ) -> bool {
        let at = k as usize * B;
        let dst = self.bufs[req as usize].get_mut(at..at + B);
        match (data, dst) {
            (ReadData::Unit(u), Some(dst)) => {
                dst.copy_from_slice(u.as_bytes());
                expect == UNKNOWN || u.digest() == expect
            }
            (ReadData::Zeros, Some(dst)) => {
                dst.fill(0);
                expect == 0 || expect == UNKNOWN
            }
            (ReadData::Lost, _) | (_, None) => {
                self.failed[req as usize] = true;
                false
            }
        }
    }

    fn done(&mut self, req: u32, now: u64) {
        let i = req as usize;
        let mut data = std::mem::take(&mut self.bufs[i]);
        if !self.reads[i] {
            data = Vec::new();
        }
        self.done.push_back(Completion {
            id: req,
            data,
            ok: !self.failed[i],
            done_ns: now,
        });
    }
}

/// A full-data drive of `B`-byte mapping units over medium `N`.
pub struct Drive<'a, N: FullMedium<B>, const B: usize> {
    /// The engine, its core and medium.
    pub eng: Engine<'a, N, PayloadHost<B>>,
    /// What the drive was built from.
    pub plan: Plan,
}

impl<N: FullMedium<B>, const B: usize> Device for Drive<'_, N, B> {
    fn unit_bytes(&self) -> usize {
        B
    }

    fn logical_units(&self) -> u32 {
        self.plan.core.logical_units
    }

    fn now_ns(&self) -> u64 {
        self.eng.now()
    }

    fn can_submit(&self) -> bool {
        self.eng.can_submit()
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
            return Err(Error::InvalidConfig(
                &"a write must bring exactly its units' bytes",
            ));
        }
        self.eng.host_mut().set_incoming(data);
        self.eng.submit(HostRequest {
            time_ns: at_ns,
            op,
            lpn,
            units,
            idle_ns: 0,
            window: 0,
            placement: 0,
        })
    }

    fn next_event_ns(&self) -> Option<u64> {
        self.eng.next_event_ns()
    }

    fn step(&mut self) -> Result<bool, Error> {
        self.eng.step()
    }

    fn poll(&mut self) -> Option<Completion> {
        self.eng.host_mut().pop_done()
    }

    fn outcome(&self, wall_seconds: f64, total_wall_seconds: f64) -> Result<Outcome, Error> {
        let nand = self.eng.nand.counters();
        outcome(
            &self.eng,
            &self.plan,
            nand,
            wall_seconds,
            total_wall_seconds,
        )
    }
}

/// Builds a fresh full-data drive from `plan` (whatever its `full_data`
/// setting), formats it and lends it to `f`. The mapping unit must be one of
/// `sim::FULL_DATA_UNIT_BYTES`.
pub fn open<R>(plan: &Plan, f: impl FnOnce(&mut dyn Device) -> R) -> Result<R, Error> {
    match plan.core.geometry.unit_bytes() {
        512 => open_with::<512, R>(plan, f),
        1024 => open_with::<1024, R>(plan, f),
        2048 => open_with::<2048, R>(plan, f),
        4096 => open_with::<4096, R>(plan, f),
        8192 => open_with::<8192, R>(plan, f),
        16384 => open_with::<16384, R>(plan, f),
        _ => Err(Error::InvalidConfig(&FULL_DATA_UNIT_ERROR)),
    }
}

/// [`open`] for `B`-byte units.
fn open_with<const B: usize, R>(
    plan: &Plan,
    f: impl FnOnce(&mut dyn Device) -> R,
) -> Result<R, Error> {
    let mut plan = *plan;
    plan.full_data = true;
    let mut store = CoreStore::<FullUnit<B>>::new(&plan.core)?;
    let medium = plan.full_medium::<B>()?;
    let host = PayloadHost::new(plan.core.logical_units);
    let eng = Engine::with_host(plan.core, &mut store, medium, plan.engine, host)?;
    let mut drive = Drive { eng, plan };
    Ok(f(&mut drive))
}

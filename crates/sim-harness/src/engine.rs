//! The discrete-event engine: host queue, FTL core, NAND medium and timing.
//!
//! The engine owns time. Host requests arrive at their trace times (never more
//! than `queue_depth` outstanding); each is split into mapping units and fed to
//! the core. Every NAND operation the core emits is executed on the medium at
//! once (emission order is a valid serial order, since the core only reads
//! pages whose programs completed) and its completion is delivered at the time
//! the timing model computes. Every host read is checked against what its
//! [`HostSide`] says was last written.
//!
//! The batch path ([`Engine::run`]) pulls requests from a `RequestSource` and
//! uses the [`StampOracle`] host side, on any medium whose unit type is a
//! [`StampUnit`]: the compact `u64` stamps of `nand_model::SimMedium` (the
//! fast default) or the full byte payloads of `nand_model::FullDataMedium`,
//! where every written unit is filled with a byte pattern derived from its
//! stamp and every read checks all its bytes. An interactive driver (see
//! `crate::interactive`) submits requests one by one ([`Engine::submit`]),
//! steps events ([`Engine::step`]) and moves real payloads through its own
//! host side; both share the same core-driving code.

use std::collections::VecDeque;

use firmware_core::driver::{execute, execute_cmd};
use firmware_core::{
    Config, CopyStop, Error, FullFtl, HostCompletion, Lpn, Nand, ReadReport, ReadStart, ReadStatus,
    Tag,
};

use nand_model::FullUnit;

use crate::hist::Histogram;
use crate::series::{Sample, Sampler, Snapshot};
use crate::timing::{OpRef, Timing, TimingParams};
use crate::workload::{HostOp, HostRequest, RequestSource};

mod die_queue;
mod events;
mod flows;

use die_queue::{DieQueue, InFlight, NO_OP};

pub use flows::{Arbitration, Flow, FlowSet, FlowStats, Flows};

/// Unit content the engine can derive from a stamp and check against one.
///
/// A stamp is `lpn << 32 | version` (0 for data never written). The engine
/// writes `from_stamp(stamp)` into the buffer slot of every host write and
/// checks every unit a host read returns with `matches(expected stamp)`.
pub trait StampUnit: Copy + Default {
    /// The unit holding `stamp`'s data. Stamp 0 gives `Self::default()`.
    fn from_stamp(s: u64) -> Self;

    /// Whether the unit holds exactly `stamp`'s data.
    fn matches(&self, s: u64) -> bool;

    /// Overwrites the unit with `stamp`'s data (in place, for large units).
    #[inline]
    fn set_stamp(&mut self, s: u64) {
        *self = Self::from_stamp(s);
    }
}

impl StampUnit for u64 {
    /// The stamp itself.
    #[inline(always)]
    fn from_stamp(s: u64) -> Self {
        s
    }

    #[inline(always)]
    fn matches(&self, s: u64) -> bool {
        *self == s
    }

    #[inline(always)]
    fn set_stamp(&mut self, s: u64) {
        *self = s;
    }
}

/// Word `k` of the byte pattern of stamp `s` (little-endian in the unit): the
/// stamp xored with a distinct odd multiple of the word index, so word 0 is
/// the stamp itself and no two words of a unit, nor of two stamps at the same
/// offset, are equal.
#[inline(always)]
fn pattern_word(s: u64, k: usize) -> u64 {
    s ^ (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl<const B: usize> StampUnit for FullUnit<B> {
    /// Zeros for stamp 0; otherwise 8-byte little-endian words, word `k` being
    /// `s ^ k * 0x9E37_79B9_7F4A_7C15` (wrapping), so word 0 is the stamp and
    /// every word of the unit differs (a short last word is truncated).
    #[inline]
    fn from_stamp(s: u64) -> Self {
        let mut u = FullUnit::default();
        u.set_stamp(s);
        u
    }

    /// Checks every byte against the pattern of `s`.
    #[inline]
    fn matches(&self, s: u64) -> bool {
        let bytes = self.as_bytes();
        if s == 0 {
            return bytes.iter().all(|&b| b == 0);
        }
        let mut words = bytes.chunks_exact(8);
        let mut ok = true;
        for (k, w) in (&mut words).enumerate() {
            let mut b8 = [0u8; 8];
            b8.copy_from_slice(w);
            ok &= u64::from_le_bytes(b8) == pattern_word(s, k);
        }
        let rest = words.remainder();
        let last = pattern_word(s, B / 8).to_le_bytes();
        ok && *rest == last[..rest.len()]
    }

    #[inline]
    fn set_stamp(&mut self, s: u64) {
        let bytes = self.as_bytes_mut();
        if s == 0 {
            bytes.fill(0);
            return;
        }
        for (k, w) in bytes.chunks_mut(8).enumerate() {
            let p = pattern_word(s, k).to_le_bytes();
            w.copy_from_slice(&p[..w.len()]);
        }
    }
}

/// Memory the engine lends to the core (the caller-lends-memory pattern):
/// one region the core carves all its tables from, and the slot data pool of
/// units `U` (`u64` stamps by default, `nand_model::FullUnit` for full-data
/// runs).
pub struct CoreStore<U = u64> {
    mem: nand_model::huge::GiantArray<u8>,
    data: Vec<U>,
}

impl<U: Copy + Default> CoreStore<U> {
    /// Allocates the region a configuration needs, and one unit per buffer slot.
    pub fn new(cfg: &Config) -> Result<Self, Error> {
        let bytes = FullFtl::lend_bytes(cfg)?;
        let slots = cfg.total_slots() as usize;
        // The mapping tables inside are touched at random: the largest
        // pages the system offers.
        let mem = nand_model::huge::GiantArray::zeroed(bytes);
        Ok(CoreStore {
            mem,
            data: vec![U::default(); slots],
        })
    }

    /// Bytes [`CoreStore::new`] would allocate for `cfg`, computed without
    /// allocating (for the memory check before a run): the core's lent
    /// region and the slot data pool.
    pub fn bytes_for(cfg: &Config) -> Result<u64, Error> {
        let core = FullFtl::lend_bytes(cfg)? as u64;
        let pool = u64::from(cfg.total_slots()).saturating_mul(std::mem::size_of::<U>() as u64);
        Ok(core.saturating_add(pool))
    }

    /// Lends the table region and the slot data pool.
    pub fn split(&mut self) -> (&mut [u8], &mut [U]) {
        (&mut self.mem, &mut self.data)
    }
}

/// What a read of one unit gave the host side.
#[derive(Clone, Copy, Debug)]
pub enum ReadData<'u, U> {
    /// The unit's data (in a buffer slot, valid only during the call).
    Unit(&'u U),
    /// The unit was never written or was trimmed: it reads as zeros.
    Zeros,
    /// The device could not return the unit (media error or lost data).
    Lost,
}

/// The host side of the engine: where written data comes from, where read
/// data goes, and what a read is expected to return.
///
/// The batch path uses [`StampOracle`] (stamped data, every read checked);
/// an interactive driver moves real payloads in and out of requests.
pub trait HostSide<U> {
    /// Request `req` (an engine request id) is starting.
    fn begin(&mut self, req: u32, r: &HostRequest);
    /// Unit `k` of write request `req`, logical unit `lpn`, took a buffer
    /// slot: fill `unit` with its data.
    fn write_unit(&mut self, req: u32, k: u32, lpn: u32, unit: &mut U);
    /// Logical unit `lpn` was trimmed.
    fn trim_unit(&mut self, lpn: u32);
    /// Logical unit `dst` now holds what `src` holds (a copy, remapped or
    /// physical; the engine moves the data of a physical copy itself).
    fn copy_unit(&mut self, src: u32, dst: u32);
    /// What a read of `lpn` issued now must return (checked by [`HostSide::read_unit`]).
    fn expect(&self, lpn: u32) -> u64;
    /// Unit `k` of read request `req` returned `data`; `expect` is what
    /// [`HostSide::expect`] said when the read was issued. Returns whether the
    /// data is right (`Lost` is counted apart and its result ignored).
    fn read_unit(&mut self, req: u32, k: u32, data: ReadData<'_, U>, expect: u64) -> bool;
    /// Request `req` completed at simulated time `now`.
    fn done(&mut self, req: u32, now: u64);
}

/// The batch host side: writes stamped data (`lpn << 32 | version`) and
/// checks every read against the stamp last written.
pub struct StampOracle {
    versions: nand_model::huge::GiantArray<u32>,
    write_seq: u32,
    /// Units whose data came from another unit by a copy: the stamp they
    /// hold (kept apart so runs without copies pay nothing for it).
    copied: std::collections::HashMap<u32, u64>,
}

impl StampOracle {
    /// An oracle of `logical_units` never-written units.
    pub fn new(logical_units: u32) -> Self {
        // One entry per logical unit, touched at random.
        let versions = nand_model::huge::GiantArray::zeroed(logical_units as usize);
        StampOracle {
            versions,
            write_seq: 0,
            copied: std::collections::HashMap::new(),
        }
    }
}

impl StampOracle {
    /// Records that `lpn` holds its first version (stamp `lpn << 32 | 1`):
    /// data a caller placed on the medium directly, as fast
    /// preconditioning does. Later writes take newer versions.
    pub fn adopt_first_version(&mut self, lpn: u32) {
        self.versions[lpn as usize] = 1;
        self.write_seq = self.write_seq.max(1);
    }

    /// Look-ahead hint: `lpn` will soon be written or read; start fetching
    /// its version. Never changes behaviour.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        firmware_core::medium::hint::prefetch(&self.versions, lpn as usize);
    }

    /// The stamp [`StampOracle::adopt_first_version`] expects `lpn` to hold.
    pub fn first_stamp(lpn: u32) -> u64 {
        stamp(lpn, 1)
    }
}

impl<U: StampUnit> HostSide<U> for StampOracle {
    #[inline]
    fn begin(&mut self, _req: u32, _r: &HostRequest) {}

    #[inline]
    fn write_unit(&mut self, _req: u32, _k: u32, lpn: u32, unit: &mut U) {
        // A global version keeps this a store (no load of the old value).
        self.write_seq = self.write_seq.wrapping_add(1).max(1);
        self.versions[lpn as usize] = self.write_seq;
        if !self.copied.is_empty() {
            self.copied.remove(&lpn);
        }
        unit.set_stamp(stamp(lpn, self.write_seq));
    }

    #[inline]
    fn trim_unit(&mut self, lpn: u32) {
        self.versions[lpn as usize] = 0;
        if !self.copied.is_empty() {
            self.copied.remove(&lpn);
        }
    }

    fn copy_unit(&mut self, src: u32, dst: u32) {
        let s = <Self as HostSide<U>>::expect(self, src);
        if s == 0 {
            <Self as HostSide<U>>::trim_unit(self, dst);
        } else {
            self.versions[dst as usize] = 1;
            self.copied.insert(dst, s);
        }
    }

    #[inline]
    fn expect(&self, lpn: u32) -> u64 {
        if let Some(s) = self.copied.get(&lpn) {
            return *s;
        }
        let v = self.versions[lpn as usize];
        if v == 0 {
            0
        } else {
            stamp(lpn, v)
        }
    }

    #[inline]
    fn read_unit(&mut self, _req: u32, _k: u32, data: ReadData<'_, U>, expect: u64) -> bool {
        match data {
            ReadData::Unit(u) => u.matches(expect),
            ReadData::Zeros => expect == 0,
            ReadData::Lost => false,
        }
    }

    #[inline]
    fn done(&mut self, _req: u32, _now: u64) {}
}

/// Engine parameters beyond the core configuration.
#[derive(Clone, Copy, Debug)]
pub struct EngineParams {
    /// Timing of the medium and buses.
    pub timing: TimingParams,
    /// Most host requests outstanding at once.
    pub queue_depth: u32,
    /// P/E cycles every block has before format (an aged drive).
    pub initial_pe: u32,
    /// Time-series step, ns (0: adaptive, see [`crate::series`]).
    pub sample_step_ns: u64,
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Host requests completed.
    pub requests: u64,
    /// Read requests completed.
    pub read_requests: u64,
    /// Write requests completed.
    pub write_requests: u64,
    /// Trim requests completed.
    pub trim_requests: u64,
    /// Flush requests completed.
    pub flush_requests: u64,
    /// Mapping units read.
    pub read_units: u64,
    /// Mapping units written.
    pub write_units: u64,
    /// Mapping units trimmed.
    pub trim_units: u64,
    /// Copy requests completed.
    pub copy_requests: u64,
    /// Mapping units copied (remapped or physically).
    pub copy_units: u64,
    /// Host reads checked against the oracle.
    pub read_checks: u64,
    /// Reads that returned other data than last written.
    pub mismatches: u64,
    /// Reads the device could not serve (media error or lost data).
    pub uncorrectable_reads: u64,
    /// Damage to a drive's image file found by its checksums (records,
    /// page data and capacitor-region payloads; see `image`): always 0
    /// for a drive in memory.
    pub detected_corruptions: u64,
    /// Request latency (arrival to completion), ns.
    pub latency: Histogram,
    /// Latency of read requests, ns.
    pub read_latency: Histogram,
    /// Latency of write requests, ns.
    pub write_latency: Histogram,
    /// Latency of flush requests, ns.
    pub flush_latency: Histogram,
    /// Host windows (see [`HostRequest::window`]): the duration of each
    /// window, recorded once per user write it groups, ns.
    pub window_latency: Histogram,
    /// Host windows closed.
    pub windows: u64,
    /// Simulated time the measured phase started.
    pub start_ns: u64,
    /// Simulated time of the last completion.
    pub end_ns: u64,
    /// Events the engine processed (NAND completions, host completions,
    /// cache-register releases).
    pub events: u64,
}

impl RunStats {
    /// Simulated seconds of the measured phase.
    pub fn sim_seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    arrival: u64,
    op: HostOp,
    lpn: u32,
    units: u32,
    issued: u32,
    pending: u32,
    /// Physical copy of unit `issued`: 0 not started, 1 source read in
    /// flight, 2 source data in the request's stash.
    phase: u8,
    /// Placement handle of a write.
    placement: u8,
    /// User writes of the host window this request closes (0: none).
    window: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct ReadTrack {
    req: u32,
    unit: u32,
    expect: u64,
    /// The read is the source half of a physical copy.
    copy: bool,
}

/// Bytes an [`Engine`] allocates beside its [`CoreStore`] for `cfg`, queue
/// depth `qd` and units of `unit_bytes`, at their largest: the event heap,
/// operation tables, request slots, the oracle and a full time series
/// (`fixed_step`: of a fixed sampling step, else of the adaptive one).
pub fn engine_bytes(cfg: &Config, qd: u32, unit_bytes: u64, fixed_step: bool) -> u64 {
    use std::mem::size_of;
    let inflight = u64::from(cfg.max_inflight);
    let qd = u64::from(qd.max(1));
    // An event is one u128 key, in the heap or (host transfers) the FIFO.
    let per_op = (size_of::<u128>() + size_of::<InFlight>() + size_of::<u32>()) as u64;
    let per_req =
        (size_of::<Outstanding>() + size_of::<u128>() + size_of::<u32>() + size_of::<ReadTrack>())
            as u64
            + unit_bytes;
    let rows = if fixed_step {
        crate::series::FIXED_MAX_ROWS
    } else {
        crate::series::ADAPTIVE_MAX_ROWS
    };
    let series = (rows * size_of::<Sample>() * 2) as u64;
    let oracle = u64::from(cfg.logical_units) * size_of::<u32>() as u64;
    inflight
        .saturating_add(qd)
        .saturating_mul(per_op)
        .saturating_add(qd.saturating_mul(per_req))
        .saturating_add(series)
        .saturating_add(oracle)
}

/// Tag bit of flush commands (read tags index the read table and stay below it).
const FLUSH_TAG: u32 = 1 << 31;

const EV_NAND: u8 = 0;
const EV_HOST_DONE: u8 = 1;
/// A die's cache register is free again (cache program); the id is the die.
const EV_DIE_ACCEPT: u8 = 2;

/// Stamp of a unit's data: the LPN and its write version.
#[inline]
fn stamp(lpn: u32, version: u32) -> u64 {
    (u64::from(lpn) << 32) | u64::from(version)
}

/// The engine over a medium `N`, with host side `H` (by default the stamp
/// oracle of the batch path, over a medium whose units are [`StampUnit`]s).
pub struct Engine<'a, N: Nand, H = StampOracle> {
    /// The FTL core.
    pub ftl: FullFtl<'a>,
    /// The medium.
    pub nand: N,
    data: &'a mut [N::Unit],
    /// Resource reservations.
    pub timing: Timing,
    heap: events::Events,
    /// Per operation in flight (by table index): its result and where it
    /// runs, both written when it is queued; one record, one lookup.
    in_flight: Vec<InFlight>,
    /// Per die: its queue and how many of its operations are started.
    dies: Vec<DieQueue>,
    geometry: firmware_core::Geometry,
    now: u64,
    logical_units: u32,
    host: H,
    reqs: Vec<Outstanding>,
    /// Per request: the source unit of a physical copy in progress.
    stash: Vec<N::Unit>,
    free_reqs: Vec<u32>,
    reads: Vec<ReadTrack>,
    free_reads: Vec<u32>,
    blocked: VecDeque<u32>,
    /// Copy requests waiting only for the source read of a physical copy.
    /// A copy inside the device holds its own queue slot and the dies it
    /// reads, nothing else: requests that touch neither its source nor its
    /// destination go past it (see [`Self::overlaps_parked`]).
    parked: Vec<u32>,
    outstanding: u32,
    /// When the last host request completed, ns (for idle gaps).
    last_done_ns: u64,
    /// Issue time of the first request of the open host window, if any
    /// request was issued since the last window closed.
    window_open: Option<u64>,
    qd: u32,
    unit_bytes: u64,
    write_buffer_units: u32,
    /// Measurements of the current phase.
    pub stats: RunStats,
    sampler: Sampler,
    /// Erase count of every block when the current phase began.
    phase_erases: Vec<Option<u32>>,
    /// Per-flow state while [`Engine::run`] replays flows.
    flow: flows::FlowState,
}

impl<'a, N: Nand> Engine<'a, N>
where
    N::Unit: StampUnit,
{
    /// Builds an engine with the stamp oracle, formats the device and waits until it is ready.
    pub fn new(
        cfg: Config,
        store: &'a mut CoreStore<N::Unit>,
        nand: N,
        p: EngineParams,
    ) -> Result<Self, Error> {
        let host = StampOracle::new(cfg.logical_units);
        Engine::with_host(cfg, store, nand, p, host)
    }

    /// Replays every request of `src`; `progress` is called now and then with requests done.
    /// Arrival times are offset by the current time, so phases follow each other.
    /// A source made of several flows ([`RequestSource::flows`]) replays
    /// them concurrently (see [`FlowSet`]).
    pub fn run(
        &mut self,
        src: &mut dyn RequestSource,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), Error> {
        if let Some(flows) = src.flows() {
            return self.run_flows(flows, progress);
        }
        let base = self.now;
        let mut next = src.next_request();
        // Three requests of look-ahead feed the core's prefetch hints in
        // three stages, each on what the one before brought in.
        let mut ahead1 = src.next_request();
        let mut ahead2 = src.next_request();
        let mut ahead3 = src.next_request();
        let mut done_since = 0u64;
        loop {
            let arrival = match next {
                // An idle gap starts when every earlier request has completed.
                Some(r) if r.idle_ns > 0 && self.outstanding > 0 => None,
                Some(r) if self.outstanding < self.qd => Some(
                    (r.time_ns + base)
                        .max(self.now)
                        .max(self.last_done_ns.saturating_add(r.idle_ns)),
                ),
                _ => None,
            };
            let event = self.heap.next_time();
            match (arrival, event) {
                (Some(a), ev) if ev.is_none_or(|t| a < t) => {
                    self.advance_to(a);
                    let Some(r) = next else { break };
                    if let Some(r1) = ahead1 {
                        self.ftl.prefetch_buckets(Lpn(r1.lpn));
                    }
                    if let Some(r2) = ahead2 {
                        self.ftl.prefetch_location(Lpn(r2.lpn));
                    }
                    if let Some(r3) = ahead3 {
                        self.ftl.prefetch_mapping(Lpn(r3.lpn));
                        self.host.prefetch(r3.lpn);
                    }
                    self.start_request(r, a)?;
                    next = ahead1;
                    ahead1 = ahead2;
                    ahead2 = ahead3;
                    ahead3 = src.next_request();
                }
                (_, Some(_)) => {
                    self.step_event()?;
                }
                (Some(_), None) | (None, None) => {
                    if next.is_some() || !self.blocked.is_empty() || !self.parked.is_empty() {
                        return Err(Error::OutOfSpace);
                    }
                    break;
                }
            }
            let done = self.stats.requests;
            if done >= done_since + 65536 {
                done_since = done;
                progress(done);
            }
        }
        progress(self.stats.requests);
        Ok(())
    }

    /// Reads every logical unit back and checks it against the oracle (a verify pass).
    pub fn verify_all(&mut self) -> Result<(), Error> {
        let n = self.logical_units;
        let chunk = 64u32;
        let mut reqs = Vec::with_capacity((n / chunk + 1) as usize);
        let mut l = 0;
        while l < n {
            let units = chunk.min(n - l);
            reqs.push(HostRequest {
                time_ns: 0,
                op: HostOp::Read,
                lpn: l,
                units,
                idle_ns: 0,
                window: 0,
                placement: 0,
            });
            l += units;
        }
        let mut src = crate::workload::VecSource::new(reqs);
        self.run(&mut src, &mut |_| {})
    }
}

impl<'a, N: Nand, H: HostSide<N::Unit>> Engine<'a, N, H> {
    /// Builds an engine with host side `host`, formats the device and waits until it is ready.
    pub fn with_host(
        cfg: Config,
        store: &'a mut CoreStore<N::Unit>,
        nand: N,
        p: EngineParams,
        host: H,
    ) -> Result<Self, Error> {
        let mut e = Self::unstarted(cfg, store, nand, p, host)?;
        e.start(false, p.initial_pe)?;
        while !e.ftl.is_ready() {
            if !e.step_event()? {
                return Err(Error::NotReady);
            }
        }
        e.begin_phase();
        Ok(e)
    }

    /// Builds an engine whose core has run nothing yet (not formatted, not
    /// mounted): a caller that must reproduce every step, such as a drive
    /// kept in an image file, starts it with [`Engine::start`] and steps it
    /// itself until `ftl.is_ready()`.
    pub fn unstarted(
        cfg: Config,
        store: &'a mut CoreStore<N::Unit>,
        nand: N,
        p: EngineParams,
        host: H,
    ) -> Result<Self, Error> {
        let (mem, data) = store.split();
        let ftl = FullFtl::new(cfg, mem)?;
        Ok(Self::around(ftl, nand, data, p, host))
    }

    /// Builds an engine around a core that already runs (formatted and
    /// ready, every operation completed), its medium and its data pool: a
    /// drive built and worked elsewhere, such as a repaired Reparo flash
    /// core, is then timed here. A new measured phase begins.
    pub fn adopt_running(
        ftl: FullFtl<'a>,
        nand: N,
        data: &'a mut [N::Unit],
        p: EngineParams,
        host: H,
    ) -> Result<Self, Error> {
        if ftl.ops_queued() != 0 || !ftl.is_ready() {
            return Err(Error::NotReady);
        }
        let mut e = Self::around(ftl, nand, data, p, host);
        e.begin_phase();
        Ok(e)
    }

    fn around(
        ftl: FullFtl<'a>,
        nand: N,
        data: &'a mut [N::Unit],
        p: EngineParams,
        host: H,
    ) -> Self {
        let cfg = *ftl.config();
        let qd = p.queue_depth.max(1);
        Engine {
            ftl,
            nand,
            data,
            timing: Timing::new(cfg.geometry, p.timing),
            heap: events::Events::with_capacity(cfg.max_inflight as usize + qd as usize),
            in_flight: vec![
                InFlight {
                    result: Ok(ReadReport::default()),
                    place: crate::place::Place::default(),
                    next: NO_OP,
                };
                cfg.max_inflight as usize
            ],
            dies: vec![DieQueue::EMPTY; cfg.geometry.dies() as usize],
            geometry: cfg.geometry,
            now: 0,
            logical_units: cfg.logical_units,
            host,
            reqs: vec![
                Outstanding {
                    arrival: 0,
                    op: HostOp::Read,
                    lpn: 0,
                    units: 0,
                    issued: 0,
                    pending: 0,
                    phase: 0,
                    placement: 0,
                    window: 0,
                };
                qd as usize
            ],
            stash: vec![N::Unit::default(); qd as usize],
            free_reqs: (0..qd).rev().collect(),
            reads: Vec::new(),
            free_reads: Vec::new(),
            blocked: VecDeque::new(),
            parked: Vec::new(),
            outstanding: 0,
            last_done_ns: 0,
            window_open: None,
            qd,
            unit_bytes: u64::from(cfg.geometry.unit_bytes()),
            write_buffer_units: cfg.write_buffer_units,
            stats: RunStats::default(),
            sampler: Sampler::new(0, p.sample_step_ns, Snapshot::default()),
            phase_erases: Vec::new(),
            flow: flows::FlowState::default(),
        }
    }

    /// Starts the core: mounts it from the medium (`mount`), or formats the
    /// medium with every block at `initial_pe` cycles. Events then run the
    /// operations; the core is ready when `ftl.is_ready()`.
    pub fn start(&mut self, mount: bool, initial_pe: u32) -> Result<(), Error> {
        if mount {
            self.ftl.mount(self.now)?;
        } else {
            self.ftl.format_aged(self.now, initial_pe)?;
        }
        self.drain()
    }

    /// Starts a core that has adopted a medium the caller wrote directly
    /// (`FullFtl::adopt`) and steps events until it takes host commands;
    /// then a new measured phase begins.
    pub fn start_adopted(&mut self) -> Result<(), Error> {
        self.ftl.adopt(self.now)?;
        self.drain()?;
        while !self.ftl.is_ready() {
            if !self.step_event()? {
                return Err(Error::NotReady);
            }
        }
        self.begin_phase();
        Ok(())
    }

    /// The supply fails now: operations in flight are abandoned (their
    /// completions are never delivered), and the core's capacitor flush runs
    /// on the medium, each operation at once in emission order, to its end.
    /// Returns the operations the flush used. The engine must not be used
    /// afterwards: the next power-on builds a new core and mounts it.
    pub fn cut_power(&mut self) -> Result<u64, Error> {
        self.ftl.power_fail(self.now)?;
        let mut ops = 0u64;
        while let Some(op) = self.ftl.poll_op() {
            ops += 1;
            let r = execute(&mut self.nand, self.data, self.ftl.meta_for(&op), &op);
            self.ftl.complete(op.id, r, self.now)?;
        }
        if !self.ftl.cut_finished() {
            return Err(Error::Corrupt(&"the power-cut flush did not finish"));
        }
        Ok(ops)
    }

    /// Gives the medium back (after [`Engine::cut_power`], to mount it again).
    pub fn into_medium(self) -> N {
        self.nand
    }

    /// Current simulated time, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Starts a new measured phase: counters of the engine, core and timing reset.
    pub fn begin_phase(&mut self) {
        self.stats = RunStats {
            start_ns: self.now,
            end_ns: self.now,
            ..RunStats::default()
        };
        self.window_open = None;
        self.ftl.reset_stats();
        self.timing.reset_busy();
        let step = self.sampler.fixed_step_ns();
        self.sampler = Sampler::new(self.now, step, self.snapshot());
        self.phase_erases = self.block_erase_counts();
    }

    /// Erase (P/E) count of every block by block number; `None` for bad
    /// and unknown blocks.
    pub fn block_erase_counts(&self) -> Vec<Option<u32>> {
        (0..self.geometry.total_blocks())
            .map(|b| {
                self.ftl
                    .block_info(firmware_core::BlockId(b))
                    .ok()
                    .filter(|(_, st, _)| {
                        !matches!(
                            st,
                            firmware_core::ftl::tables::BlockState::Bad
                                | firmware_core::ftl::tables::BlockState::Unknown
                        )
                    })
                    .map(|(pe, _, _)| pe)
            })
            .collect()
    }

    /// Erases of every block that is good now and was when the current
    /// phase began, during the phase (format and preconditioning excluded).
    pub fn phase_erase_counts(&self) -> Vec<u32> {
        self.block_erase_counts()
            .iter()
            .zip(&self.phase_erases)
            .filter_map(|(end, start)| Some(end.as_ref()?.saturating_sub((*start)?)))
            .collect()
    }

    /// The counters and state the time series samples.
    fn snapshot(&self) -> Snapshot {
        let f = self.ftl.stats();
        let free_blocks = (0..self.geometry.planes())
            .filter_map(|p| self.ftl.free_blocks(firmware_core::PlaneId(p)).ok())
            .map(u64::from)
            .sum();
        Snapshot {
            requests: self.stats.requests,
            read_units: self.stats.read_units,
            write_units: self.stats.write_units,
            host_write_units: f.host_write_units,
            program_units: f.host_program_units + f.gc_program_units,
            gc_victims: f.gc_victims,
            chan_busy_ns: self.timing.chans.iter().map(|c| c.busy).sum(),
            chan_busy_by: core::array::from_fn(|i| self.timing.chans.get(i).map_or(0, |c| c.busy)),
            gc_busy_ns: self.timing.chans.iter().map(|c| c.gc_busy).sum(),
            gc_window_ns: self.timing.chans.iter().map(|c| c.gc_window).sum(),
            free_blocks,
            buffer_used: self.write_buffer_units - self.ftl.write_buffer_free(),
        }
    }

    /// Moves simulated time to `t`, sampling the time series at every step
    /// boundary passed.
    #[inline(always)]
    fn advance_to(&mut self, t: u64) {
        if self.sampler.due(t) {
            let s = self.snapshot();
            self.sampler.record(t, s);
        }
        self.now = t;
    }

    /// The time series of the current phase, up to now.
    pub fn time_series(&self) -> Vec<Sample> {
        self.sampler.finish(self.now, self.snapshot())
    }

    /// Write-buffer size in mapping units (the time series' buffer total).
    pub fn write_buffer_units(&self) -> u32 {
        self.write_buffer_units
    }

    /// Whether another request can be submitted (fewer than the queue depth outstanding).
    pub fn can_submit(&self) -> bool {
        self.outstanding < self.qd
    }

    /// Requests outstanding.
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// Simulated time of the next event, if any.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.heap.next_time()
    }

    /// The host side.
    pub fn host(&self) -> &H {
        &self.host
    }

    /// The host side, mutably.
    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }

    /// Starts request `r` at simulated time `max(r.time_ns, now)` and returns
    /// its request id (given to the host side's calls). Fails with `Busy` at
    /// the queue depth and `LpnOutOfRange` beyond the logical capacity.
    pub fn submit(&mut self, r: HostRequest) -> Result<u32, Error> {
        if !self.can_submit() {
            return Err(Error::Busy);
        }
        let arrival = r.time_ns.max(self.now);
        self.advance_to(arrival);
        self.start_request(r, arrival)
    }

    /// Processes the earliest event (a NAND completion or a request's end).
    /// Returns false when none is left.
    pub fn step(&mut self) -> Result<bool, Error> {
        self.step_event()
    }

    fn start_request(&mut self, r: HostRequest, arrival: u64) -> Result<u32, Error> {
        let units = r.units.max(1);
        let lpn = r.lpn;
        if u64::from(lpn) + u64::from(units) > u64::from(self.logical_units) {
            return Err(Error::LpnOutOfRange);
        }
        if let HostOp::Copy { src } = r.op {
            if u64::from(src) + u64::from(units) > u64::from(self.logical_units) {
                return Err(Error::LpnOutOfRange);
            }
            if src != lpn && src < lpn + units && lpn < src + units {
                return Err(Error::BadRequest(&"copy ranges overlap"));
            }
        }
        let Some(id) = self.free_reqs.pop() else {
            return Err(Error::Busy);
        };
        self.outstanding += 1;
        self.host.begin(id, &r);
        self.reqs[id as usize] = Outstanding {
            arrival,
            op: r.op,
            lpn,
            units,
            issued: 0,
            pending: 0,
            phase: 0,
            placement: r.placement,
            window: r.window,
        };
        self.window_open.get_or_insert(arrival);
        if self.blocked.is_empty() && !self.overlaps_parked(id) {
            if !self.advance(id)? {
                self.hold(id);
            }
        } else {
            self.blocked.push_back(id);
        }
        self.drain()?;
        Ok(id)
    }

    /// Whether request `id` is a copy waiting for its source read.
    fn reading_source(&self, id: u32) -> bool {
        let q = &self.reqs[id as usize];
        matches!(q.op, HostOp::Copy { .. }) && q.phase == 1
    }

    /// Keeps request `id`, which could not be issued in full, for later: a
    /// copy waiting for its source read is parked, anything else blocks
    /// the requests behind it.
    fn hold(&mut self, id: u32) {
        if self.reading_source(id) {
            self.parked.push(id);
        } else {
            self.blocked.push_back(id);
        }
    }

    /// The logical ranges request `id` reads or writes: its own range, and
    /// a copy's source range.
    fn ranges(&self, id: u32) -> [(u32, u32); 2] {
        let q = &self.reqs[id as usize];
        let own = (q.lpn, q.lpn + q.units);
        match q.op {
            HostOp::Copy { src } => [own, (src, src + q.units)],
            _ => [own, own],
        }
    }

    /// Whether request `id` is a write whose next unit the core would
    /// refuse as busy now: retrying it would change nothing.
    fn write_would_block(&self, id: u32) -> bool {
        let q = &self.reqs[id as usize];
        matches!(q.op, HostOp::Write)
            && q.issued < q.units
            && !self.ftl.config().placement.enabled()
            && self.ftl.write_would_block(Lpn(q.lpn + q.issued))
    }

    /// Whether request `id` touches a range of a parked copy (then it waits
    /// behind it, in order). A flush waits for every parked copy.
    #[inline(always)]
    fn overlaps_parked(&self, id: u32) -> bool {
        !self.parked.is_empty() && self.overlaps_some_parked(id)
    }

    /// [`Self::overlaps_parked`] with a copy parked (rare: out of line).
    #[inline(never)]
    fn overlaps_some_parked(&self, id: u32) -> bool {
        if matches!(self.reqs[id as usize].op, HostOp::Flush) {
            return true;
        }
        let mine = self.ranges(id);
        self.parked.iter().any(|&p| {
            let theirs = self.ranges(p);
            mine.iter()
                .any(|a| theirs.iter().any(|b| a.0 < b.1 && b.0 < a.1))
        })
    }

    /// A host write of `lpn` with placement handle `handle` when the drive
    /// places writes by handle, else a plain write.
    fn place_write(&mut self, lpn: u32, handle: u8) -> Result<firmware_core::Slot, Error> {
        if self.ftl.config().placement.enabled() {
            firmware_core::tech::placement::handles::write(
                &mut self.ftl,
                Lpn(lpn),
                handle,
                self.now,
            )
        } else {
            self.ftl.write(Lpn(lpn), self.now)
        }
    }

    /// Issues what it can of a request. Returns false if the core said Busy.
    fn advance(&mut self, id: u32) -> Result<bool, Error> {
        let mut q = self.reqs[id as usize];
        while q.issued < q.units {
            let lpn = q.lpn + q.issued;
            match q.op {
                HostOp::Write => match self.place_write(lpn, q.placement) {
                    Ok(slot) => {
                        let unit = &mut self.data[usize::from(slot.0)];
                        self.host.write_unit(id, q.issued, lpn, unit);
                    }
                    Err(Error::Busy) => break,
                    Err(e) => return Err(e),
                },
                HostOp::Trim => match self.ftl.trim(Lpn(lpn), self.now) {
                    Ok(()) => self.host.trim_unit(lpn),
                    Err(Error::Busy) => break,
                    Err(e) => return Err(e),
                },
                HostOp::Flush => match self.ftl.flush(Tag(FLUSH_TAG | id), self.now) {
                    Ok(()) => q.pending += 1,
                    Err(Error::Busy) => break,
                    Err(e) => return Err(e),
                },
                HostOp::Copy { src } => {
                    self.reqs[id as usize] = q;
                    let done = self.copy_step(id, src + q.issued, lpn)?;
                    q = self.reqs[id as usize];
                    if !done {
                        break;
                    }
                }
                HostOp::Read => {
                    let tag = match self.free_reads.pop() {
                        Some(t) => t,
                        None => {
                            self.reads.push(ReadTrack::default());
                            (self.reads.len() - 1) as u32
                        }
                    };
                    let expect = self.host.expect(lpn);
                    let k = q.issued;
                    match self.ftl.read(Tag(tag), Lpn(lpn), self.now) {
                        Ok(start) => {
                            self.free_reads.push(tag);
                            match start {
                                ReadStart::Buffered(s) => {
                                    let data = ReadData::Unit(&self.data[usize::from(s.0)]);
                                    let ok = self.host.read_unit(id, k, data, expect);
                                    self.check(ok);
                                }
                                ReadStart::Unmapped => {
                                    let ok = self.host.read_unit(id, k, ReadData::Zeros, expect);
                                    self.check(ok);
                                }
                                ReadStart::Lost => {
                                    self.host.read_unit(id, k, ReadData::Lost, expect);
                                    self.stats.uncorrectable_reads += 1;
                                }
                                ReadStart::Issued => {
                                    self.free_reads.pop();
                                    self.reads[tag as usize] = ReadTrack {
                                        req: id,
                                        unit: k,
                                        expect,
                                        copy: false,
                                    };
                                    q.pending += 1;
                                }
                            }
                        }
                        Err(Error::Busy) => {
                            self.free_reads.push(tag);
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
            q.issued += 1;
        }
        self.reqs[id as usize] = q;
        if q.issued < q.units {
            return Ok(false);
        }
        if q.pending == 0 {
            self.finish_request(id);
        }
        Ok(true)
    }

    /// One unit of a copy request, `src` to `dst`. Returns false when it
    /// must wait: the core is busy (the request then blocks the ones behind
    /// it), or the source read of a physical copy is in flight (the request
    /// is parked, and only requests that touch its ranges wait for it).
    ///
    /// The core remaps the unit if it can. Otherwise the unit is copied
    /// inside the device: the source is read (a NAND read unless it is in
    /// the write buffer), then written to `dst` through the write buffer,
    /// with no host transfer.
    fn copy_step(&mut self, id: u32, src: u32, dst: u32) -> Result<bool, Error> {
        let phase = self.reqs[id as usize].phase;
        if phase == 0 {
            let p = self.ftl.copy(Lpn(src), Lpn(dst), 1, self.now)?;
            match p.stop {
                CopyStop::Done => {
                    self.host.copy_unit(src, dst);
                    return Ok(true);
                }
                CopyStop::Busy => return Ok(false),
                CopyStop::Physical(_) => {}
            }
            let Some(tag) = self.free_reads.pop().or_else(|| {
                self.reads.push(ReadTrack::default());
                Some((self.reads.len() - 1) as u32)
            }) else {
                return Ok(false);
            };
            let expect = self.host.expect(src);
            let k = self.reqs[id as usize].issued;
            match self.ftl.read(Tag(tag), Lpn(src), self.now) {
                Ok(start) => match start {
                    ReadStart::Issued => {
                        self.reads[tag as usize] = ReadTrack {
                            req: id,
                            unit: k,
                            expect,
                            copy: true,
                        };
                        self.reqs[id as usize].phase = 1;
                        return Ok(false);
                    }
                    ReadStart::Buffered(s) => {
                        self.free_reads.push(tag);
                        self.stash[id as usize] = self.data[usize::from(s.0)];
                        self.reqs[id as usize].phase = 2;
                    }
                    ReadStart::Unmapped => {
                        self.free_reads.push(tag);
                        return match self.ftl.trim(Lpn(dst), self.now) {
                            Ok(()) => {
                                self.host.copy_unit(src, dst);
                                Ok(true)
                            }
                            Err(Error::Busy) => Ok(false),
                            Err(e) => Err(e),
                        };
                    }
                    ReadStart::Lost => {
                        // The source is gone: the copy of this unit fails and
                        // the destination keeps its data.
                        self.free_reads.push(tag);
                        self.stats.uncorrectable_reads += 1;
                        return Ok(true);
                    }
                },
                Err(Error::Busy) => {
                    self.free_reads.push(tag);
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
        if self.reqs[id as usize].phase == 1 {
            return Ok(false);
        }
        match self.ftl.write(Lpn(dst), self.now) {
            Ok(slot) => {
                self.data[usize::from(slot.0)] = self.stash[id as usize];
                self.host.copy_unit(src, dst);
                self.reqs[id as usize].phase = 0;
                Ok(true)
            }
            Err(Error::Busy) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Counts one checked read; `ok` says whether it returned the expected data.
    fn check(&mut self, ok: bool) {
        self.stats.read_checks += 1;
        if !ok {
            self.stats.mismatches += 1;
        }
    }

    /// All units of a request are through the core: schedule its host transfer.
    fn finish_request(&mut self, id: u32) {
        let q = self.reqs[id as usize];
        let bytes = u64::from(q.units) * self.unit_bytes;
        let done = match q.op {
            HostOp::Trim | HostOp::Flush | HostOp::Copy { .. } => self.now,
            _ => self.timing.host_transfer(bytes, self.now),
        };
        // One host link serialises transfers, so these come in time order.
        self.heap.push_in_order((done, EV_HOST_DONE, id));
    }

    fn complete_request(&mut self, id: u32) {
        let q = self.reqs[id as usize];
        let s = &mut self.stats;
        s.requests += 1;
        let units = u64::from(q.units);
        match q.op {
            HostOp::Read => {
                s.read_requests += 1;
                s.read_units += units;
            }
            HostOp::Write => {
                s.write_requests += 1;
                s.write_units += units;
            }
            HostOp::Trim => {
                s.trim_requests += 1;
                s.trim_units += units;
            }
            HostOp::Flush => s.flush_requests += 1,
            HostOp::Copy { .. } => {
                s.copy_requests += 1;
                s.copy_units += units;
            }
        }
        let lat = self.now.saturating_sub(q.arrival);
        s.latency.record(lat);
        match q.op {
            HostOp::Read => s.read_latency.record(lat),
            HostOp::Write => s.write_latency.record(lat),
            HostOp::Flush => s.flush_latency.record(lat),
            HostOp::Trim | HostOp::Copy { .. } => {}
        }
        if q.window > 0 {
            let opened = self.window_open.take().unwrap_or(q.arrival);
            let span = self.now.saturating_sub(opened);
            for _ in 0..q.window {
                s.window_latency.record(span);
            }
            s.windows += 1;
        }
        s.end_ns = s.end_ns.max(self.now);
        if !self.flow.stats.is_empty() {
            self.flow.done(id, &q, lat, self.now);
        }
        self.outstanding -= 1;
        self.last_done_ns = self.now;
        self.free_reqs.push(id);
        self.host.done(id, self.now);
    }

    /// Processes the earliest event. Returns false when none is left.
    fn step_event(&mut self) -> Result<bool, Error> {
        let Some((t, kind, id)) = self.heap.pop() else {
            return Ok(false);
        };
        self.stats.events += 1;
        // Two stages of look-ahead: the next completion's mapping entries
        // and the records the engine reads for it (its table entry was
        // fetched one event ago), and the table entry of the one after it.
        let [next, after] = self.heap.next_two(EV_NAND);
        if let Some(next) = next {
            self.ftl.prefetch_completion(firmware_core::OpId(next));
            self.prefetch_event(next);
        }
        if let Some(after) = after {
            self.ftl.prefetch_op(firmware_core::OpId(after));
        }
        self.advance_to(self.now.max(t));
        if kind == EV_HOST_DONE {
            self.complete_request(id);
            return Ok(true);
        }
        if kind == EV_DIE_ACCEPT {
            self.start_cached(id as usize)?;
            return Ok(true);
        }
        let idx = (id & 0xffff) as usize;
        // The die is free again: start its next queued operation before anything else.
        let die = self.in_flight[idx].place.die as usize;
        let d = &mut self.dies[die];
        d.busy = d.busy.saturating_sub(1);
        if d.busy == 0 {
            self.start_next(die)?;
        }
        // Every entry is written when its operation is queued (`drain`).
        let r = self.in_flight[idx].result;
        self.ftl.complete(firmware_core::OpId(id), r, self.now)?;
        self.drain()?;
        // Parked copies whose source has arrived go on first (they came
        // before everything blocked that overlaps them).
        let mut i = 0;
        while i < self.parked.len() {
            let p = self.parked[i];
            if !self.reading_source(p) && self.advance(p)? {
                self.parked.remove(i);
            } else {
                i += 1;
            }
        }
        // Completions free buffer space: let blocked requests go on, in order.
        while let Some(&b) = self.blocked.front() {
            if self.overlaps_parked(b) || self.write_would_block(b) {
                break;
            }
            if !self.advance(b)? {
                if !self.reading_source(b) {
                    break;
                }
                self.blocked.pop_front();
                self.parked.push(b);
                continue;
            }
            self.blocked.pop_front();
        }
        // Passes at once unless a request above reached the core.
        self.drain()?;
        Ok(true)
    }

    /// Look-ahead hint for completion `id`: start fetching its result, and
    /// the operation and result of what its die starts next.
    #[inline]
    fn prefetch_event(&self, id: u32) {
        use firmware_core::medium::hint::prefetch_entry;
        let idx = (id & 0xffff) as usize;
        prefetch_entry(&self.in_flight, idx);
        let die = self.in_flight.get(idx).map_or(0, |p| p.place.die as usize);
        if let Some(q) = self.dies.get(die).and_then(DieQueue::front) {
            let q = (q & 0xffff) as usize;
            self.ftl.prefetch_op(firmware_core::OpId(q as u32));
            prefetch_entry(&self.in_flight, q);
        }
    }

    /// Hands emitted operations to the medium and timing model, and takes
    /// host completions. Most calls after a host request find nothing:
    /// that is answered here, before the pass sets up its frame.
    #[inline(always)]
    fn drain(&mut self) -> Result<(), Error> {
        if self.ftl.has_output() {
            self.drain_all()?;
        }
        Ok(())
    }

    /// [`Self::drain`]'s pass, while the core has output: host completions,
    /// then operations. One pass takes everything: neither handing a
    /// completion over nor queueing an operation calls into the core, so
    /// neither can give it more output.
    #[inline(never)]
    fn drain_all(&mut self) -> Result<(), Error> {
        while let Some(c) = self.ftl.poll_completion() {
            let req = match c {
                HostCompletion::Read { tag, slot, status } => {
                    match self.read_completed(tag, slot, status) {
                        Some(req) => req,
                        None => continue,
                    }
                }
                HostCompletion::Flush { tag } => tag.0 & !FLUSH_TAG,
            };
            let q = &mut self.reqs[req as usize];
            q.pending -= 1;
            if q.pending == 0 && q.issued == q.units {
                self.finish_request(req);
            }
        }
        while let Some(v) = self.ftl.poll_op_view() {
            // Functional effect now (emission order is a valid serial order);
            // timing when the die gets to it.
            let r = execute_cmd(&mut self.nand, self.data, v.meta, v.cmd);
            let idx = (v.id.0 & 0xffff) as usize;
            let at = self.timing.place(OpRef {
                cmd: v.cmd,
                origin: v.origin,
            });
            self.in_flight[idx] = InFlight {
                result: r,
                place: at,
                next: NO_OP,
            };
            let die = at.die as usize;
            let d = &mut self.dies[die];
            d.push_back(v.id.0, &mut self.in_flight);
            if d.busy == 0 {
                self.start_next(die)?;
            }
        }
        Ok(())
    }

    /// A host read's unit came back: checks it against what the host
    /// expects and returns its request, or `None` for the source half of a
    /// physical copy (that request goes on when the blocked requests are
    /// advanced).
    /// Out of line: a write-only run never takes it.
    #[inline(never)]
    fn read_completed(
        &mut self,
        tag: Tag,
        slot: firmware_core::Slot,
        status: ReadStatus,
    ) -> Option<u32> {
        let tr = self.reads[tag.0 as usize];
        if tr.copy {
            // Source half of a physical copy: keep the data for the write.
            self.free_reads.push(tag.0);
            let q = &mut self.reqs[tr.req as usize];
            match status {
                ReadStatus::Ok => {
                    // Checked when the destination is read.
                    self.stash[tr.req as usize] = self.data[usize::from(slot.0)];
                    q.phase = 2;
                }
                ReadStatus::MediaError => {
                    self.stats.uncorrectable_reads += 1;
                    q.phase = 0;
                    q.issued += 1;
                }
            }
            return None;
        }
        match status {
            ReadStatus::Ok => {
                let data = ReadData::Unit(&self.data[usize::from(slot.0)]);
                let ok = self.host.read_unit(tr.req, tr.unit, data, tr.expect);
                self.check(ok);
            }
            ReadStatus::MediaError => {
                self.host
                    .read_unit(tr.req, tr.unit, ReadData::Lost, tr.expect);
                self.stats.uncorrectable_reads += 1;
            }
        }
        self.free_reads.push(tag.0);
        Some(tr.req)
    }

    /// Starts the oldest queued operation of an idle die: it takes the channel
    /// and the die from now on, so reservations are made in time order.
    fn start_next(&mut self, die: usize) -> Result<(), Error> {
        let d = &mut self.dies[die];
        if let Some(id) = d.pop_front(&self.in_flight) {
            d.busy += 1;
            let idx = (id & 0xffff) as usize;
            // By reference, from the core's table: an operation is a few
            // cache lines, and only the ones the timing model reads need
            // to come in.
            let op = in_flight(&self.ftl, id)?;
            let f = &self.in_flight[idx];
            let place = f.place;
            let bits = f.result.as_ref().map_or(0, |r| r.bit_errors);
            let t = self.timing.schedule_at(op, place, self.now, bits);
            self.heap.push((t, EV_NAND, id));
            if let Some(at) = self.timing.cache_accept_at(op, place) {
                self.heap.push((at, EV_DIE_ACCEPT, die as u32));
            }
        }
        Ok(())
    }

    /// Cache program: the die's running program has taken its page from the
    /// cache register, so the next queued program of the same block may
    /// send its data in while the first one is busy.
    fn start_cached(&mut self, die: usize) -> Result<(), Error> {
        let d = &self.dies[die];
        let Some(id) = d.front() else {
            return Ok(());
        };
        if d.busy != 1 {
            return Ok(());
        }
        let idx = (id & 0xffff) as usize;
        let op = in_flight(&self.ftl, id)?;
        if self
            .timing
            .continues_cache_at(op, self.in_flight[idx].place)
        {
            self.start_next(die)?;
        }
        Ok(())
    }
}

/// Queued operation `id` as the timing model reads it, from the core's
/// table (`Ftl::op_in_flight`); an id the core no longer holds is
/// corruption of the engine's queues.
#[inline]
fn in_flight<'f>(ftl: &'f FullFtl<'_>, id: u32) -> Result<OpRef<'f>, Error> {
    let (cmd, origin) = ftl
        .op_in_flight(firmware_core::OpId(id))
        .ok_or(Error::Corrupt(&"a queued operation is not in flight"))?;
    Ok(OpRef { cmd, origin })
}

//! Concurrent I/O flows (MQSim's flows; NVMe submission queues): each flow
//! has its own request stream, queue depth and arbitration weight, and the
//! device's command slots (`host.queue_depth`) are shared among them. When
//! several flows have a request ready at the same time, the arbiter picks
//! one: round robin, or weighted round robin (smooth: a flow of weight 2
//! gets two of every three slots a flow of weight 1 competes for).
//!
//! A run with flows goes through [`Engine::run`] like any other: the
//! source's [`RequestSource::flows`] hands the engine a [`Flows`]
//! implementation, and the per-flow figures come back through it. Single
//! streams never enter this code.

use std::cmp::Reverse;

use firmware_core::{Error, Nand};

use super::{Engine, HostSide, Outstanding};
use crate::hist::Histogram;
use crate::workload::{HostOp, HostRequest, RequestSource};

/// How the device picks among flows with a request ready (`host.arbitration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Arbitration {
    /// Every flow in turn.
    #[default]
    RoundRobin,
    /// In proportion to the flows' weights.
    Weighted,
}

/// What the engine needs of a set of flows.
pub trait Flows {
    /// Number of flows.
    fn count(&self) -> usize;
    /// Next request of flow `i`, in its arrival order.
    fn next_request(&mut self, i: usize) -> Option<HostRequest>;
    /// Most requests flow `i` has outstanding at once.
    fn queue_depth(&self, i: usize) -> u32;
    /// Arbitration weight of flow `i` (at least 1).
    fn weight(&self, i: usize) -> u32;
    /// The arbitration among flows.
    fn arbitration(&self) -> Arbitration;
    /// Receives the per-flow figures at the end of the run.
    fn finish(&mut self, stats: Vec<FlowStats>);
}

/// What one flow measured.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Requests completed.
    pub requests: u64,
    /// Read requests completed.
    pub read_requests: u64,
    /// Write requests completed.
    pub write_requests: u64,
    /// Mapping units read.
    pub read_units: u64,
    /// Mapping units written.
    pub write_units: u64,
    /// Request latency (arrival to completion), ns.
    pub latency: Histogram,
    /// Latency of read requests, ns.
    pub read_latency: Histogram,
    /// Latency of write requests, ns.
    pub write_latency: Histogram,
    /// Simulated time the flow started.
    pub start_ns: u64,
    /// Simulated time of its last completion.
    pub end_ns: u64,
    /// Requests it completed while every flow was still submitting, i.e.
    /// until the first flow had submitted its last request (the window of
    /// contention, which a finishing flow's slow last requests do not stretch).
    pub contended_requests: u64,
    /// Length of that window, ns (the same for every flow).
    pub contended_ns: u64,
}

impl FlowStats {
    /// Simulated seconds from the start to the flow's last completion.
    pub fn sim_seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// Requests per simulated second over the flow's own span.
    pub fn iops(&self) -> f64 {
        per_second(self.requests, self.end_ns.saturating_sub(self.start_ns))
    }

    /// Requests per simulated second while every flow competed: what the
    /// arbitration gave this flow.
    pub fn contended_iops(&self) -> f64 {
        per_second(self.contended_requests, self.contended_ns)
    }

    fn record(&mut self, q: &Outstanding, lat: u64, now: u64) {
        self.requests += 1;
        self.latency.record(lat);
        match q.op {
            HostOp::Read => {
                self.read_requests += 1;
                self.read_units += u64::from(q.units);
                self.read_latency.record(lat);
            }
            HostOp::Write => {
                self.write_requests += 1;
                self.write_units += u64::from(q.units);
                self.write_latency.record(lat);
            }
            HostOp::Trim | HostOp::Flush | HostOp::Copy { .. } => {}
        }
        self.end_ns = self.end_ns.max(now);
    }
}

fn per_second(n: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

/// A set of flows over boxed request sources, itself a [`RequestSource`]
/// whose [`RequestSource::flows`] is the set (pass it to `sim::run`).
pub struct FlowSet<'s> {
    /// Each flow's source, queue depth and weight.
    pub flows: Vec<Flow<'s>>,
    /// The arbitration among them.
    pub arbitration: Arbitration,
    /// Per-flow figures, filled at the end of the run (same order).
    pub stats: Vec<FlowStats>,
}

/// One flow of a [`FlowSet`].
pub struct Flow<'s> {
    /// Its requests, times relative to the run's start.
    pub source: Box<dyn RequestSource + 's>,
    /// Most requests outstanding at once.
    pub queue_depth: u32,
    /// Arbitration weight (at least 1).
    pub weight: u32,
}

impl Flows for FlowSet<'_> {
    fn count(&self) -> usize {
        self.flows.len()
    }
    fn next_request(&mut self, i: usize) -> Option<HostRequest> {
        self.flows.get_mut(i)?.source.next_request()
    }
    fn queue_depth(&self, i: usize) -> u32 {
        self.flows.get(i).map_or(1, |f| f.queue_depth.max(1))
    }
    fn weight(&self, i: usize) -> u32 {
        self.flows.get(i).map_or(1, |f| f.weight.max(1))
    }
    fn arbitration(&self) -> Arbitration {
        self.arbitration
    }
    fn finish(&mut self, stats: Vec<FlowStats>) {
        self.stats = stats;
    }
}

impl RequestSource for FlowSet<'_> {
    fn next_request(&mut self) -> Option<HostRequest> {
        None
    }
    fn len_hint(&self) -> Option<u64> {
        self.flows
            .iter()
            .map(|f| f.source.len_hint())
            .sum::<Option<u64>>()
    }
    fn flows(&mut self) -> Option<&mut dyn Flows> {
        Some(self)
    }
}

/// Smooth weighted round robin among the flows arriving at `at`: each adds
/// its weight to its credit, the richest (lowest index on a tie) is picked
/// and pays the tied flows' total weight.
fn arbitrate(times: &[Option<u64>], at: u64, weights: &[i64], credit: &mut [i64]) -> usize {
    let tied = || (0..times.len()).filter(|i| times[*i] == Some(at));
    let total: i64 = tied().map(|i| weights[i]).sum();
    for i in tied() {
        credit[i] += weights[i];
    }
    let best = tied()
        .max_by_key(|i| (credit[*i], Reverse(*i)))
        .unwrap_or(0);
    credit[best] -= total;
    best
}

/// Per-flow state of a run with flows, kept by the engine.
#[derive(Default)]
pub(super) struct FlowState {
    /// Flow of each request id.
    pub(super) of_req: Vec<usize>,
    /// Requests outstanding per flow.
    pub(super) outstanding: Vec<u32>,
    /// Figures per flow.
    pub(super) stats: Vec<FlowStats>,
}

impl FlowState {
    /// Records the completion of request `id` (`q`, latency `lat`).
    pub(super) fn done(&mut self, id: u32, q: &Outstanding, lat: u64, now: u64) {
        let Some(&f) = self.of_req.get(id as usize) else {
            return;
        };
        if let (Some(s), Some(o)) = (self.stats.get_mut(f), self.outstanding.get_mut(f)) {
            s.record(q, lat, now);
            *o = o.saturating_sub(1);
        }
    }
}

impl<N: Nand, H: HostSide<N::Unit>> Engine<'_, N, H> {
    /// Replays the flows concurrently (see the module documentation);
    /// arrival times are offset by the current time.
    pub(super) fn run_flows(
        &mut self,
        flows: &mut dyn Flows,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), Error> {
        let base = self.now;
        let n = flows.count();
        self.flow = FlowState {
            of_req: vec![0; self.reqs.len()],
            outstanding: vec![0; n],
            stats: vec![
                FlowStats {
                    start_ns: base,
                    end_ns: base,
                    ..FlowStats::default()
                };
                n
            ],
        };
        let mut heads: Vec<Option<HostRequest>> = (0..n).map(|i| flows.next_request(i)).collect();
        let weights: Vec<i64> = (0..n)
            .map(|i| match flows.arbitration() {
                Arbitration::RoundRobin => 1,
                Arbitration::Weighted => i64::from(flows.weight(i)),
            })
            .collect();
        let mut credit = vec![0i64; n];
        let mut done_since = 0u64;
        let mut contended = false;
        loop {
            // The earliest arrival among flows that may submit; among the
            // flows arriving then, the arbiter picks one when it is admitted.
            let mut times: Vec<Option<u64>> = vec![None; n];
            if self.outstanding < self.qd {
                for (i, h) in heads.iter().enumerate() {
                    let Some(r) = h else { continue };
                    if self.flow.outstanding[i] >= flows.queue_depth(i)
                        || (r.idle_ns > 0 && self.outstanding > 0)
                    {
                        continue;
                    }
                    times[i] = Some(
                        (r.time_ns + base)
                            .max(self.now)
                            .max(self.last_done_ns.saturating_add(r.idle_ns)),
                    );
                }
            }
            let first = times.iter().flatten().min().copied();
            let event = self.heap.next_time();
            match (first, event) {
                (Some(a), ev) if ev.is_none_or(|t| a < t) => {
                    let i = arbitrate(&times, a, &weights, &mut credit);
                    let Some(r) = heads[i].take() else { break };
                    self.advance_to(a);
                    self.start_request_for(r, a, i)?;
                    heads[i] = flows.next_request(i);
                }
                (_, Some(_)) => {
                    self.step_event()?;
                }
                (Some(_), None) | (None, None) => {
                    if heads.iter().any(Option::is_some) || !self.blocked.is_empty() {
                        return Err(Error::OutOfSpace);
                    }
                    break;
                }
            }
            if !contended && heads.iter().any(Option::is_none) {
                contended = true;
                let window = self.now.saturating_sub(base);
                for s in &mut self.flow.stats {
                    s.contended_requests = s.requests;
                    s.contended_ns = window;
                }
            }
            let done = self.stats.requests;
            if done >= done_since + 65536 {
                done_since = done;
                progress(done);
            }
        }
        progress(self.stats.requests);
        flows.finish(std::mem::take(&mut self.flow.stats));
        self.flow = FlowState::default();
        Ok(())
    }

    /// Starts request `r` of flow `flow` at `arrival`.
    fn start_request_for(
        &mut self,
        r: HostRequest,
        arrival: u64,
        flow: usize,
    ) -> Result<u32, Error> {
        // The id the request will get is the next free one.
        let Some(&id) = self.free_reqs.last() else {
            return Err(Error::Busy);
        };
        if let Some(slot) = self.flow.of_req.get_mut(id as usize) {
            *slot = flow;
        }
        if let Some(o) = self.flow.outstanding.get_mut(flow) {
            *o += 1;
        }
        self.start_request(r, arrival)
    }
}

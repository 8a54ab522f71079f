//! Feeding a streamed trace to the simulator: a reader thread runs the
//! trace's second pass and converts its byte requests into mapping-unit
//! requests, in batches over a bounded channel, so parsing overlaps the
//! simulation and memory stays bounded whatever the trace's size.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use sim_harness::trace::{Prepared, TraceOp, TraceRequest, TraceStats};
use sim_harness::workload::{HostOp, HostRequest, RequestSource};

/// Requests per batch sent from the reader thread.
const BATCH: usize = 4096;

/// Batches in flight between the reader thread and the simulator.
const BATCHES_IN_FLIGHT: usize = 4;

/// Most bytes the feeds of `inputs` reader threads hold at once: the
/// batches in the channel, the one being filled and the one being used,
/// of the larger of the two request types.
pub fn feed_bytes(inputs: usize) -> u64 {
    let request = std::mem::size_of::<HostRequest>().max(std::mem::size_of::<TraceRequest>());
    (inputs.max(1) * (BATCHES_IN_FLIGHT + 2) * BATCH * request) as u64
}

/// Converts a byte request (already placed within the capacity by the
/// trace's capacity policy) to mapping units starting at unit `base`.
///
/// A read, write or trim covers every unit it touches. A copy moves
/// `ceil(len / unit)` units from the unit holding its source offset to the
/// unit holding its destination offset, so an unaligned destination does
/// not make the source longer than the bytes it copies.
///
/// A write keeps its placement identifier. Zone commands (append, Zone
/// Send) are for [`sim_harness::zone_replay`]; the replay refuses them
/// before running on any other namespace, so here they never occur.
pub fn to_units(r: &TraceRequest, unit: u64, base: u32) -> HostRequest {
    let first = r.offset_bytes / unit;
    let touched = (r.end_bytes() - 1) / unit - first + 1;
    let mut placement = 0;
    let (op, units) = match r.op {
        TraceOp::Read | TraceOp::Zone(_) => (HostOp::Read, touched),
        TraceOp::Write | TraceOp::Append => (HostOp::Write, touched),
        TraceOp::PlacedWrite { pid } => {
            placement = pid;
            (HostOp::Write, touched)
        }
        TraceOp::Trim => (HostOp::Trim, touched),
        TraceOp::Copy { src_bytes } => (
            HostOp::Copy {
                src: base + (src_bytes / unit) as u32,
            },
            r.len_bytes.div_ceil(unit),
        ),
    };
    HostRequest {
        time_ns: r.time_ns,
        op,
        lpn: base + first as u32,
        units: units as u32,
        idle_ns: 0,
        window: 0,
        placement,
    }
}

/// A [`RequestSource`] fed by a reader thread running a trace's second
/// pass; its items are `T`, core requests unless a zone replay takes the
/// trace's own requests.
pub struct StreamSource<T = HostRequest> {
    rx: Receiver<Result<Vec<T>, String>>,
    buf: std::vec::IntoIter<T>,
    records: u64,
    error: Option<String>,
    handle: Option<JoinHandle<TraceStats>>,
}

impl StreamSource {
    /// Starts the reader thread over `prepared`, converting requests to
    /// units of `unit` bytes from unit `base` (a flow's region).
    pub fn spawn(prepared: Prepared<'static>, unit: u64, base: u32) -> StreamSource {
        StreamSource::spawn_map(prepared, move |r| to_units(r, unit, base))
    }
}

impl<T: Send + 'static> StreamSource<T> {
    /// Starts the reader thread over `prepared`, converting each request
    /// with `conv`.
    pub fn spawn_map(
        prepared: Prepared<'static>,
        conv: impl Fn(&TraceRequest) -> T + Send + 'static,
    ) -> StreamSource<T> {
        let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
        let records = prepared.stats.records;
        let handle = std::thread::spawn(move || {
            let mut stats = prepared.stats.clone();
            let mut stream = match prepared.stream() {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return stats;
                }
            };
            let mut batch = Vec::with_capacity(BATCH);
            for r in &mut stream {
                match r {
                    Ok(r) => batch.push(conv(&r)),
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return stats;
                    }
                }
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(Ok(full)).is_err() {
                        break;
                    }
                }
            }
            if !batch.is_empty() {
                let _ = tx.send(Ok(batch));
            }
            stream.finish_stats(&mut stats);
            stats
        });
        StreamSource {
            rx,
            buf: Vec::new().into_iter(),
            records,
            error: None,
            handle: Some(handle),
        }
    }

    /// Waits for the reader thread: the trace's final statistics, or the
    /// error that stopped the stream (a malformed line found late).
    pub fn finish(mut self) -> Result<TraceStats, String> {
        // Drop the receiver first so a reader blocked on a full channel ends.
        let handle = self.handle.take();
        let error = self.error.take();
        drop(self);
        let stats = handle
            .map(|h| {
                h.join()
                    .map_err(|_| "trace reader thread panicked".to_string())
            })
            .transpose()?;
        match (error, stats) {
            (Some(e), _) => Err(e),
            (None, Some(s)) => Ok(s),
            (None, None) => Err("trace reader already finished".into()),
        }
    }
}

impl<T> Iterator for StreamSource<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(r) = self.buf.next() {
                return Some(r);
            }
            if self.error.is_some() {
                return None;
            }
            match self.rx.recv() {
                Ok(Ok(batch)) => self.buf = batch.into_iter(),
                Ok(Err(e)) => {
                    self.error = Some(e);
                    return None;
                }
                Err(_) => return None,
            }
        }
    }
}

impl<T> StreamSource<T> {
    /// The trace's request records (from its first pass).
    pub fn records(&self) -> u64 {
        self.records
    }
}

impl RequestSource for StreamSource {
    fn next_request(&mut self) -> Option<HostRequest> {
        self.next()
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.records)
    }
}

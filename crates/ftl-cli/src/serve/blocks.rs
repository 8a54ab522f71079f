//! Byte-range block operations on a unit-addressed drive.
//!
//! Each [`BlockOp`] becomes a short list of unit requests: a read of the
//! covering units (sliced on the way out), a write (after a read of the
//! covering units when the range is not unit-aligned: read-modify-write), a
//! trim of whole units plus read-modify-write of partial edge units (zeroing),
//! and a flush after a FUA write. Operations whose unit ranges overlap, one of
//! them writing, run one after the other in arrival order, so concurrent
//! read-modify-writes of one unit never lose each other's bytes.

use std::collections::{HashMap, VecDeque};

use firmware_core::Error;
use sim_harness::interactive::{Completion, Device};
use sim_harness::workload::HostOp;

use super::proto::{errno, BlockOp};

/// Bytes to lay over the units a write step covers.
#[derive(Debug)]
enum Patch {
    /// These bytes at this offset.
    Data(usize, Vec<u8>),
    /// This many zeros at this offset.
    Zeros(usize, usize),
}

/// One unit request of an operation.
#[derive(Debug)]
enum Step {
    Read(u32, u32),
    Write(u32, u32, Patch),
    Trim(u32, u32),
    Flush,
}

/// An operation in progress.
struct Job<T> {
    token: T,
    steps: VecDeque<Step>,
    /// Covering units `[first, end)`; empty for a flush.
    range: (u64, u64),
    writes: bool,
    /// Data of the last read step.
    last: Vec<u8>,
    /// The slice of `last` a read returns.
    reply: Option<(usize, usize)>,
    /// Whether the step in flight is a read.
    reading: bool,
}

impl<T> Job<T> {
    fn conflicts(&self, o: &Job<T>) -> bool {
        (self.writes || o.writes) && self.range.0 < o.range.1 && o.range.0 < self.range.1
    }
}

/// The job of `op` on `unit`-byte units: its unit requests, covering range,
/// whether it writes, and the reply slice of a read.
fn plan<T>(op: BlockOp, unit: u64, token: T) -> Job<T> {
    let job = |steps, range, writes, reply| Job {
        token,
        steps,
        range,
        writes,
        last: Vec::new(),
        reply,
        reading: false,
    };
    let mut steps = VecDeque::new();
    let cover = |off: u64, len: u64| (off / unit, (off + len).div_ceil(unit));
    let lpn = |u: u64| u as u32;
    match op {
        BlockOp::Flush => {
            steps.push_back(Step::Flush);
            job(steps, (0, 0), false, None)
        }
        BlockOp::Read { offset, len } => {
            let (a, b) = cover(offset, u64::from(len));
            steps.push_back(Step::Read(lpn(a), lpn(b - a)));
            let at = (offset - a * unit) as usize;
            job(steps, (a, b), false, Some((at, at + len as usize)))
        }
        BlockOp::Write { offset, data, fua } => {
            let (a, b) = cover(offset, data.len() as u64);
            let at = (offset - a * unit) as usize;
            if at != 0 || data.len() as u64 != (b - a) * unit {
                steps.push_back(Step::Read(lpn(a), lpn(b - a)));
            }
            steps.push_back(Step::Write(lpn(a), lpn(b - a), Patch::Data(at, data)));
            if fua {
                steps.push_back(Step::Flush);
            }
            job(steps, (a, b), true, None)
        }
        BlockOp::Zero { offset, len, fua } => {
            let (start, end) = (offset, offset + u64::from(len));
            let (a, b) = cover(start, u64::from(len));
            let (full_a, full_b) = (start.div_ceil(unit), end / unit);
            if full_a < full_b {
                steps.push_back(Step::Trim(lpn(full_a), lpn(full_b - full_a)));
            }
            // Partial edge units: zero their part by read-modify-write.
            let mut edge = |u: u64| {
                let lo = start.max(u * unit) - u * unit;
                let hi = end.min((u + 1) * unit) - u * unit;
                steps.push_back(Step::Read(lpn(u), 1));
                let zeros = Patch::Zeros(lo as usize, (hi - lo) as usize);
                steps.push_back(Step::Write(lpn(u), 1, zeros));
            };
            let head = start / unit;
            let head_partial = start % unit != 0 || end < (head + 1) * unit;
            if head_partial {
                edge(head);
            }
            let tail = end / unit;
            if end % unit != 0 && !(head_partial && tail == head) {
                edge(tail);
            }
            if fua {
                steps.push_back(Step::Flush);
            }
            job(steps, (a, b), true, None)
        }
    }
}

/// Runs byte-range operations on a [`Device`]; `T` identifies an operation
/// to its owner (it comes back with the operation's result).
pub struct Blocks<T> {
    unit: u64,
    waiting: VecDeque<Job<T>>,
    jobs: Vec<Option<Job<T>>>,
    free: Vec<usize>,
    inflight: HashMap<u32, usize>,
    ready: VecDeque<usize>,
    /// Finished operations: token, errno (0 = success) and read data.
    pub done: Vec<(T, u32, Vec<u8>)>,
}

impl<T> Blocks<T> {
    /// Operations on a drive of `unit`-byte mapping units.
    pub fn new(unit: usize) -> Self {
        Blocks {
            unit: unit as u64,
            waiting: VecDeque::new(),
            jobs: Vec::new(),
            free: Vec::new(),
            inflight: HashMap::new(),
            ready: VecDeque::new(),
            done: Vec::new(),
        }
    }

    /// Queues `op` (already checked against the export size).
    pub fn push(&mut self, op: BlockOp, token: T) {
        self.waiting.push_back(plan(op, self.unit, token));
    }

    /// No operation queued or in progress.
    pub fn idle(&self) -> bool {
        self.waiting.is_empty() && self.free.len() == self.jobs.len()
    }

    /// Starts what can start: waiting operations that conflict with no earlier
    /// one, then their unit requests while the drive takes them; `at_ns` is
    /// the arrival time given to the drive.
    pub fn pump(&mut self, dev: &mut dyn Device, at_ns: u64) -> Result<(), Error> {
        let mut i = 0;
        while i < self.waiting.len() {
            let job = &self.waiting[i];
            let blocked = self.jobs.iter().flatten().any(|j| j.conflicts(job))
                || self.waiting.iter().take(i).any(|j| j.conflicts(job));
            if blocked {
                i += 1;
                continue;
            }
            let Some(job) = self.waiting.remove(i) else {
                break;
            };
            let idx = match self.free.pop() {
                Some(k) => k,
                None => {
                    self.jobs.push(None);
                    self.jobs.len() - 1
                }
            };
            self.jobs[idx] = Some(job);
            self.ready.push_back(idx);
        }
        while dev.can_submit() {
            let Some(idx) = self.ready.pop_front() else {
                break;
            };
            let Some(job) = self.jobs[idx].as_mut() else {
                continue;
            };
            let Some(step) = job.steps.pop_front() else {
                continue;
            };
            job.reading = matches!(step, Step::Read(..));
            let (op, lpn, units, data) = match step {
                Step::Read(l, n) => (HostOp::Read, l, n, Vec::new()),
                Step::Trim(l, n) => (HostOp::Trim, l, n, Vec::new()),
                Step::Flush => (HostOp::Flush, 0, 1, Vec::new()),
                Step::Write(l, n, patch) => {
                    let bytes = n as usize * self.unit as usize;
                    let data = match patch {
                        Patch::Data(0, d) if d.len() == bytes => d,
                        Patch::Data(at, d) => {
                            let mut base = std::mem::take(&mut job.last);
                            base.resize(bytes, 0);
                            base[at..at + d.len()].copy_from_slice(&d);
                            base
                        }
                        Patch::Zeros(at, len) => {
                            let mut base = std::mem::take(&mut job.last);
                            base.resize(bytes, 0);
                            base[at..at + len].fill(0);
                            base
                        }
                    };
                    (HostOp::Write, l, n, data)
                }
            };
            let id = dev.submit(op, lpn, units, data, at_ns)?;
            self.inflight.insert(id, idx);
        }
        Ok(())
    }

    /// Takes a drive completion: the operation goes on with its next step or finishes.
    pub fn complete(&mut self, c: Completion) {
        let Some(idx) = self.inflight.remove(&c.id) else {
            return;
        };
        let Some(job) = self.jobs[idx].as_mut() else {
            return;
        };
        if !c.ok {
            self.finish(idx, errno::EIO);
            return;
        }
        if job.reading {
            job.last = c.data;
        }
        if job.steps.is_empty() {
            self.finish(idx, 0);
        } else {
            self.ready.push_back(idx);
        }
    }

    fn finish(&mut self, idx: usize, err: u32) {
        let Some(mut job) = self.jobs[idx].take() else {
            return;
        };
        self.free.push(idx);
        let data = match job.reply {
            Some((a, b)) if err == 0 => job.last.get(a..b).map(<[u8]>::to_vec),
            _ => None,
        };
        job.last = Vec::new();
        self.done.push((job.token, err, data.unwrap_or_default()));
    }

    /// Ends every operation with `err` (the drive failed).
    pub fn fail_all(&mut self, err: u32) {
        for job in self.waiting.drain(..) {
            self.done.push((job.token, err, Vec::new()));
        }
        for idx in 0..self.jobs.len() {
            self.finish(idx, err);
        }
        self.inflight.clear();
        self.ready.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(op: BlockOp) -> Vec<String> {
        plan(op, 4096, ())
            .steps
            .iter()
            .map(|s| match s {
                Step::Read(l, n) => format!("R{l}+{n}"),
                Step::Write(l, n, _) => format!("W{l}+{n}"),
                Step::Trim(l, n) => format!("T{l}+{n}"),
                Step::Flush => "F".into(),
            })
            .collect()
    }

    #[test]
    fn plans() {
        let w = |offset, len, fua| BlockOp::Write {
            offset,
            data: vec![1; len],
            fua,
        };
        assert_eq!(kinds(w(4096, 8192, false)), ["W1+2"]);
        assert_eq!(kinds(w(1000, 5000, true)), ["R0+2", "W0+2", "F"]);
        let z = |offset, len| BlockOp::Zero {
            offset,
            len,
            fua: false,
        };
        assert_eq!(kinds(z(0, 8192)), ["T0+2"]);
        assert_eq!(
            kinds(z(1000, 10000)),
            ["T1+1", "R0+1", "W0+1", "R2+1", "W2+1"]
        );
        assert_eq!(kinds(z(1000, 100)), ["R0+1", "W0+1"]);
        assert_eq!(kinds(z(0, 100)), ["R0+1", "W0+1"]);
        assert_eq!(kinds(z(4000, 200)), ["R0+1", "W0+1", "R1+1", "W1+1"]);
        assert_eq!(
            kinds(BlockOp::Read {
                offset: 4095,
                len: 2
            }),
            ["R0+2"]
        );
    }
}

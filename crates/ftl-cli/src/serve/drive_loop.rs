//! The drive thread: owns the simulated drive, takes operations from the
//! connections, advances simulated time and sends replies.
//!
//! With [`Pace::None`] events are processed as fast as the simulation runs;
//! with [`Pace::Device`] simulated time follows wall time from server start
//! (an event is processed once the wall clock reaches its simulated time), so
//! a reply leaves when the modelled device would have completed it.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use firmware_core::Error;
use sim_harness::interactive::Device;

use super::blocks::Blocks;
use super::conn::{Reply, ToDrive};
use super::proto::errno;

/// How replies are timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Pace {
    /// As fast as the simulation runs.
    #[default]
    None,
    /// At the modelled device latency (simulated time follows wall time).
    Device,
}

/// Longest wait for a message when nothing is due.
const IDLE_WAIT: Duration = Duration::from_millis(50);
/// Waits shorter than this are spun (yielding) rather than slept, since a
/// timed sleep often wakes tens of microseconds late.
const SPIN_BELOW: Duration = Duration::from_micros(300);
/// Events processed between looks at the inbox.
const EVENTS_PER_ROUND: u32 = 256;

/// Wall nanoseconds since `start`.
fn wall_ns(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Serves operations from `rx` on `dev` until a `Shutdown` (or every sender
/// is gone) and the work in flight is done: `Ok(false)`; or, when the drive
/// asks for a compaction ([`Device::compact_due`]), until it is idle:
/// `Ok(true)` (call again on the next power-on). A drive failure fails every
/// operation in flight with `EIO` and is returned.
pub fn run(
    dev: &mut dyn Device,
    rx: &Receiver<ToDrive>,
    pace: Pace,
    start: Instant,
) -> Result<bool, Error> {
    let mut blocks: Blocks<(u64, Sender<Reply>)> = Blocks::new(dev.unit_bytes());
    let result = serve(dev, rx, pace, start, &mut blocks);
    if result.is_err() {
        blocks.fail_all(errno::EIO);
    }
    send_replies(&mut blocks);
    result
}

fn serve(
    dev: &mut dyn Device,
    rx: &Receiver<ToDrive>,
    pace: Pace,
    start: Instant,
    blocks: &mut Blocks<(u64, Sender<Reply>)>,
) -> Result<bool, Error> {
    let mut stopping = false;
    loop {
        let due = |dev: &dyn Device| match (pace, dev.next_event_ns()) {
            (_, None) => None,
            (Pace::None, Some(_)) => Some(Duration::ZERO),
            (Pace::Device, Some(t)) => Some(Duration::from_nanos(t.saturating_sub(wall_ns(start)))),
        };
        let mut msg = match due(dev) {
            Some(Duration::ZERO) => rx.try_recv().ok(),
            Some(wait) if wait < SPIN_BELOW => spin(rx, Instant::now() + wait),
            wait => match rx.recv_timeout(wait.unwrap_or(IDLE_WAIT).min(IDLE_WAIT)) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    stopping = true;
                    None
                }
            },
        };
        while let Some(m) = msg {
            match m {
                ToDrive::Op { handle, reply, .. } if stopping => {
                    let _ = reply.send(Reply {
                        handle,
                        error: errno::ESHUTDOWN,
                        data: Vec::new(),
                    });
                }
                ToDrive::Op { op, handle, reply } => blocks.push(op, (handle, reply)),
                ToDrive::Shutdown => stopping = true,
            }
            msg = rx.try_recv().ok();
        }
        let at = |start| match pace {
            Pace::None => 0,
            Pace::Device => wall_ns(start),
        };
        blocks.pump(dev, at(start))?;
        for _ in 0..EVENTS_PER_ROUND {
            if due(dev) != Some(Duration::ZERO) {
                break;
            }
            dev.step()?;
            while let Some(c) = dev.poll() {
                blocks.complete(c);
            }
            blocks.pump(dev, at(start))?;
        }
        // What the replies acknowledge must survive a power cut first.
        dev.sync()?;
        send_replies(blocks);
        let idle = blocks.idle() && dev.next_event_ns().is_none();
        if stopping && idle {
            return Ok(false);
        }
        if idle && dev.compact_due() {
            return Ok(true);
        }
    }
}

/// Polls the inbox until a message comes or `until` passes.
fn spin(rx: &Receiver<ToDrive>, until: Instant) -> Option<ToDrive> {
    loop {
        if let Ok(m) = rx.try_recv() {
            return Some(m);
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::yield_now();
    }
}

/// Sends finished operations' replies (a gone connection is no error).
fn send_replies(blocks: &mut Blocks<(u64, Sender<Reply>)>) {
    for ((handle, reply), error, data) in blocks.done.drain(..) {
        let _ = reply.send(Reply {
            handle,
            error,
            data,
        });
    }
}

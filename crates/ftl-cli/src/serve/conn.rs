//! One NBD connection: handshake, then a reader (this thread) that parses
//! requests and sends them to the drive thread, and a writer thread that
//! sends the replies back in whatever order they complete.

use std::collections::HashMap;
use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::handshake::{self, Outcome};
use super::proto::{self, errno, Action, BlockOp, End};

/// Most requests of one connection waiting for their reply, error replies
/// included; the reader stops taking requests beyond it (with
/// [`Limits::max_queued_bytes`], bounds what a client that never reads its
/// replies can pin).
const MAX_INFLIGHT: u64 = 256;

/// A message to the drive thread.
pub enum ToDrive {
    /// An operation; its reply goes to `reply`.
    Op {
        /// The operation.
        op: BlockOp,
        /// Client cookie.
        handle: u64,
        /// Where the reply goes.
        reply: Sender<Reply>,
    },
    /// Finish what is in flight, then stop.
    Shutdown,
}

/// A reply to send.
pub struct Reply {
    /// Client cookie.
    pub handle: u64,
    /// errno (0: success).
    pub error: u32,
    /// Read data.
    pub data: Vec<u8>,
}

/// Counters of the NBD front end, for the report.
#[derive(Default)]
pub struct Counters {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections closed (both directions done).
    pub disconnects: AtomicU64,
    /// Read commands.
    pub reads: AtomicU64,
    /// Write commands.
    pub writes: AtomicU64,
    /// Flush commands.
    pub flushes: AtomicU64,
    /// Trim and write-zeroes commands.
    pub zeroes: AtomicU64,
    /// Commands answered with an error.
    pub errors: AtomicU64,
    /// Bytes read by clients.
    pub bytes_read: AtomicU64,
    /// Bytes written by clients.
    pub bytes_written: AtomicU64,
    /// Connections that broke the protocol or dropped mid-request.
    pub protocol_errors: AtomicU64,
    /// Connections closed at once because `--max-connections` were open.
    pub refused: AtomicU64,
    /// Connections closed because the handshake outlasted its timeout.
    pub handshake_timeouts: AtomicU64,
    /// Most bytes one connection had queued at once.
    pub peak_queued_bytes: AtomicU64,
}

impl Counters {
    /// Connections accepted and not closed yet.
    pub fn open(&self) -> u64 {
        let c = self.connections.load(Ordering::Relaxed);
        c.saturating_sub(self.disconnects.load(Ordering::Relaxed))
    }
}

/// Per-connection resource limits (`ftl serve` flags).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most request and reply bytes one connection may have queued; a
    /// request that would pass it waits until replies drain (one request
    /// is always admitted when nothing is queued).
    pub max_queued_bytes: u64,
    /// Longest a client may take from connecting to transmission.
    pub handshake_timeout: Duration,
}

/// What every connection shares.
#[derive(Clone)]
pub struct Shared {
    /// The drive thread's inbox.
    pub to_drive: Sender<ToDrive>,
    /// Front-end counters.
    pub counters: Arc<Counters>,
    /// Set when the server stops.
    pub stop: Arc<AtomicBool>,
    /// Export size in bytes.
    pub size: u64,
    /// Per-connection limits.
    pub limits: Limits,
}

/// Bytes and requests one connection has queued (parsed, not yet replied).
#[derive(Default)]
struct Queue {
    requests: AtomicU64,
    bytes: AtomicU64,
    /// The byte cost of each queued request, by handle (handles may repeat).
    costs: Mutex<HashMap<u64, Vec<u64>>>,
}

impl Queue {
    fn push(&self, handle: u64, cost: u64) {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.bytes.fetch_add(cost, Ordering::AcqRel);
        if cost > 0 {
            if let Ok(mut m) = self.costs.lock() {
                m.entry(handle).or_default().push(cost);
            }
        }
    }

    fn pop(&self, handle: u64) {
        let cost = self.costs.lock().ok().and_then(|mut m| {
            let v = m.get_mut(&handle)?;
            let c = v.pop();
            if v.is_empty() {
                m.remove(&handle);
            }
            c
        });
        self.bytes.fetch_sub(cost.unwrap_or(0), Ordering::AcqRel);
        self.requests.fetch_sub(1, Ordering::AcqRel);
    }

    /// Whether a request costing `cost` bytes must wait.
    fn full(&self, cost: u64, max_bytes: u64) -> bool {
        let bytes = self.bytes.load(Ordering::Acquire);
        self.requests.load(Ordering::Acquire) >= MAX_INFLIGHT
            || (bytes > 0 && bytes.saturating_add(cost) > max_bytes)
    }
}

/// The bytes a request holds while queued: its payload, or its read data.
fn cost(op: &BlockOp) -> u64 {
    match op {
        BlockOp::Read { len, .. } => u64::from(*len),
        BlockOp::Write { data, .. } => data.len() as u64,
        BlockOp::Zero { .. } | BlockOp::Flush => 0,
    }
}

/// A stream whose reads and writes fail with `TimedOut` once `until` passes
/// (the handshake deadline: a total, not a per-read, timeout).
struct Deadline<'a> {
    s: &'a TcpStream,
    until: Instant,
}

impl Deadline<'_> {
    fn left(&self) -> io::Result<Duration> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "handshake timeout"));
        }
        Ok(left)
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.s.set_read_timeout(Some(self.left()?))?;
        let mut s = self.s;
        s.read(buf)
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.s.set_write_timeout(Some(self.left()?))?;
        let mut s = self.s;
        s.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        let mut s = self.s;
        s.flush()
    }
}

/// Serves one accepted connection on a new thread.
pub fn spawn(stream: TcpStream, sh: Shared) {
    sh.counters.connections.fetch_add(1, Ordering::Relaxed);
    thread::spawn(move || {
        serve(&stream, &sh);
        let _ = stream.shutdown(Shutdown::Both);
        sh.counters.disconnects.fetch_add(1, Ordering::Relaxed);
    });
}

/// The connection's life; returns when both directions are done.
fn serve(stream: &TcpStream, sh: &Shared) {
    let _ = stream.set_nodelay(true);
    let mut s = Deadline {
        s: stream,
        until: Instant::now() + sh.limits.handshake_timeout,
    };
    match handshake::negotiate(&mut s, sh.size) {
        Ok(Outcome::Transmission) => {}
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) =>
        {
            sh.counters
                .handshake_timeouts
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
        Ok(Outcome::Close) | Err(_) => return,
    }
    if stream.set_read_timeout(None).is_err() || stream.set_write_timeout(None).is_err() {
        return;
    }
    let Ok(out) = stream.try_clone() else {
        return;
    };
    let (tx, rx) = mpsc::channel::<Reply>();
    let queue = Arc::new(Queue::default());
    let writer = {
        let queue = Arc::clone(&queue);
        let counters = Arc::clone(&sh.counters);
        thread::spawn(move || write_replies(out, rx, &queue, &counters))
    };
    read_requests(stream, sh, &tx, &queue);
    drop(tx);
    let _ = writer.join();
}

/// Parses requests until the client disconnects or breaks the protocol;
/// a request waits while the connection's queue is full.
fn read_requests(stream: &TcpStream, sh: &Shared, tx: &Sender<Reply>, queue: &Queue) {
    let mut r = std::io::BufReader::with_capacity(256 << 10, stream);
    let c = &sh.counters;
    loop {
        let inc = match proto::next_request(&mut r, sh.size) {
            Ok(inc) => inc,
            Err(End::Eof) => return,
            Err(End::Broken | End::BadMagic) => {
                c.protocol_errors.fetch_add(1, Ordering::Relaxed);
                let _ = stream.shutdown(Shutdown::Read);
                return;
            }
        };
        let bytes = match &inc.action {
            Action::Op(op) => cost(op),
            _ => 0,
        };
        while queue.full(bytes, sh.limits.max_queued_bytes) {
            if sh.stop.load(Ordering::Relaxed) {
                return;
            }
            thread::sleep(Duration::from_millis(1));
        }
        let answer = |error: u32| {
            queue.push(inc.handle, 0);
            let _ = tx.send(Reply {
                handle: inc.handle,
                error,
                data: Vec::new(),
            });
        };
        let op = match inc.action {
            Action::Disconnect => return,
            Action::Noop => {
                answer(0);
                continue;
            }
            Action::Fail(e) => {
                answer(e);
                continue;
            }
            Action::Op(op) => op,
        };
        match &op {
            BlockOp::Read { .. } => c.reads.fetch_add(1, Ordering::Relaxed),
            BlockOp::Write { data, .. } => {
                c.bytes_written
                    .fetch_add(data.len() as u64, Ordering::Relaxed);
                c.writes.fetch_add(1, Ordering::Relaxed)
            }
            BlockOp::Zero { .. } => c.zeroes.fetch_add(1, Ordering::Relaxed),
            BlockOp::Flush => c.flushes.fetch_add(1, Ordering::Relaxed),
        };
        queue.push(inc.handle, bytes);
        c.peak_queued_bytes
            .fetch_max(queue.bytes.load(Ordering::Acquire), Ordering::Relaxed);
        let msg = ToDrive::Op {
            op,
            handle: inc.handle,
            reply: tx.clone(),
        };
        if sh.to_drive.send(msg).is_err() {
            queue.pop(inc.handle);
            answer(errno::ESHUTDOWN);
            return;
        }
    }
}

/// Sends replies until every sender is gone; after a socket error, drops them.
fn write_replies(out: TcpStream, rx: Receiver<Reply>, queue: &Queue, c: &Counters) {
    let mut w = BufWriter::with_capacity(256 << 10, out);
    let mut ok = true;
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(r) = next {
            if r.error != 0 {
                c.errors.fetch_add(1, Ordering::Relaxed);
            }
            c.bytes_read
                .fetch_add(r.data.len() as u64, Ordering::Relaxed);
            if ok {
                let hdr = proto::simple_reply(r.error, r.handle);
                ok = w.write_all(&hdr).is_ok() && w.write_all(&r.data).is_ok();
            }
            let handle = r.handle;
            drop(r);
            queue.pop(handle);
            next = rx.try_recv().ok();
        }
        ok = ok && w.flush().is_ok();
    }
}

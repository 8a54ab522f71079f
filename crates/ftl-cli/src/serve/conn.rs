//! One NBD connection: handshake, then a reader (this thread) that parses
//! requests and sends them to the drive thread, and a writer thread that
//! sends the replies back in whatever order they complete.

use std::io::{BufWriter, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::handshake::{self, Outcome};
use super::proto::{self, errno, Action, BlockOp, End};

/// Most requests of one connection waiting for their reply, error replies
/// included; the reader stops taking requests beyond it (bounds the memory a
/// client that never reads its replies can pin).
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
    let mut s = stream;
    match handshake::negotiate(&mut s, sh.size) {
        Ok(Outcome::Transmission) => {}
        Ok(Outcome::Close) | Err(_) => return,
    }
    let Ok(out) = stream.try_clone() else {
        return;
    };
    let (tx, rx) = mpsc::channel::<Reply>();
    let pending = Arc::new(AtomicU64::new(0));
    let writer = {
        let pending = Arc::clone(&pending);
        let counters = Arc::clone(&sh.counters);
        thread::spawn(move || write_replies(out, rx, &pending, &counters))
    };
    read_requests(stream, sh, &tx, &pending);
    drop(tx);
    let _ = writer.join();
}

/// Parses requests until the client disconnects or breaks the protocol.
fn read_requests(stream: &TcpStream, sh: &Shared, tx: &Sender<Reply>, pending: &AtomicU64) {
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
        while pending.load(Ordering::Acquire) >= MAX_INFLIGHT {
            if sh.stop.load(Ordering::Relaxed) {
                return;
            }
            thread::sleep(Duration::from_millis(1));
        }
        let answer = |error: u32| {
            pending.fetch_add(1, Ordering::AcqRel);
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
        pending.fetch_add(1, Ordering::AcqRel);
        let msg = ToDrive::Op {
            op,
            handle: inc.handle,
            reply: tx.clone(),
        };
        if sh.to_drive.send(msg).is_err() {
            pending.fetch_sub(1, Ordering::AcqRel);
            answer(errno::ESHUTDOWN);
            return;
        }
    }
}

/// Sends replies until every sender is gone; after a socket error, drops them.
fn write_replies(out: TcpStream, rx: Receiver<Reply>, pending: &AtomicU64, c: &Counters) {
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
            pending.fetch_sub(1, Ordering::AcqRel);
            next = rx.try_recv().ok();
        }
        ok = ok && w.flush().is_ok();
    }
}

//! The NBD server's resource limits against misbehaving clients on
//! loopback: clients that never finish their handshake (or drip it a byte
//! at a time), more clients than `--max-connections`, and a client that
//! never reads its replies. Every loop is bounded.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::nbd::*;

/// Opens a TCP connection and reads the 18-byte greeting, if any.
fn raw(port: u16) -> (TcpStream, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut hello = Vec::new();
    let _ = (&mut s).take(18).read_to_end(&mut hello);
    (s, hello)
}

/// Reads until the server closes the connection (bounded by the read
/// timeout); true if it did close it.
fn closed_by_server(s: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).is_ok()
}

#[test]
fn stalled_handshakes_time_out_and_free_their_threads() {
    let server = start(&[
        "--handshake-timeout",
        "0.5",
        "--exit-after-disconnects",
        "3",
    ]);
    // Two clients that say nothing after the greeting.
    let mut quiet: Vec<TcpStream> = (0..2).map(|_| raw(server.port).0).collect();
    // One that drips its handshake a byte at a time, too slowly to finish.
    let (mut drip, hello) = raw(server.port);
    assert_eq!(&hello[..8], b"NBDMAGIC");
    let bytes = handshake_bytes();
    let mut sent = 0;
    for b in &bytes {
        if drip.write_all(&[*b]).is_err() {
            break;
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(150));
    }
    assert!(
        sent < bytes.len(),
        "the server waited for the whole slow handshake"
    );
    assert!(closed_by_server(&mut drip));
    for s in &mut quiet {
        assert!(closed_by_server(s), "an idle handshake was not closed");
    }
    let v = report(server);
    assert_eq!(v["nbd"]["handshake_timeouts"], 3, "{}", v["nbd"]);
    assert_eq!(v["nbd"]["disconnects"], 3, "{}", v["nbd"]);
}

#[test]
fn connections_beyond_the_limit_are_closed_at_once() {
    let server = start(&["--max-connections", "2", "--exit-after-disconnects", "3"]);
    let a = Client::connect(server.port);
    let b = Client::connect(server.port);
    // The third gets no greeting: accepted and closed.
    let (mut third, hello) = raw(server.port);
    assert!(hello.is_empty(), "a third connection was served: {hello:?}");
    assert!(closed_by_server(&mut third));
    // Once one client leaves, a new one is served (bounded retries while
    // the server notices the disconnect).
    drop(b);
    let mut served = None;
    for _ in 0..200 {
        let (s, hello) = raw(server.port);
        if hello.len() == 18 {
            served = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = served.expect("a connection is served again below the limit");
    c.write_all(&handshake_bytes()).unwrap();
    drop(c);
    drop(a);
    let v = report(server);
    let refused = v["nbd"]["refused_connections"].as_u64().unwrap();
    assert!(refused >= 1, "{}", v["nbd"]);
    assert_eq!(v["nbd"]["connections"], 3, "{}", v["nbd"]);
}

/// Requests of 1 MiB each that a client sends without reading a reply.
const STALLED_REQUESTS: u64 = 96;
const MIB: u32 = 1 << 20;

#[test]
fn a_client_that_never_reads_replies_pins_a_bounded_queue() {
    let server = start(&["--max-queued-bytes", "32M", "--exit-after-disconnects", "2"]);
    // Reads: every reply carries 1 MiB the client does not take.
    let mut c = Client::connect(server.port);
    for h in 0..STALLED_REQUESTS {
        c.send(READ, 0, h, h * u64::from(MIB), MIB, &[]);
    }
    // Writes from another thread (the server stops reading, so sending blocks).
    let mut w = Client::connect(server.port);
    let mut w_in = w.s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let data = vec![0x5a; MIB as usize];
        for h in 0..STALLED_REQUESTS {
            w.send(WRITE, 0, h, h * u64::from(MIB), MIB, &data);
        }
        w
    });
    std::thread::sleep(Duration::from_millis(500));
    // Now take every reply: nothing was lost while the queues were full.
    let mut seen = vec![false; STALLED_REQUESTS as usize];
    for _ in 0..STALLED_REQUESTS {
        let (err, h) = c.reply();
        assert_eq!(err, 0);
        let mut d = vec![0u8; MIB as usize];
        c.s.read_exact(&mut d).unwrap();
        assert!(
            !std::mem::replace(&mut seen[h as usize], true),
            "handle {h} twice"
        );
    }
    assert!(seen.iter().all(|&s| s), "every read answered");
    let mut answered = 0;
    for _ in 0..STALLED_REQUESTS {
        let mut h = [0u8; 16];
        w_in.read_exact(&mut h).unwrap();
        assert_eq!(&h[4..8], &[0; 4], "write error");
        answered += 1;
    }
    assert_eq!(answered, STALLED_REQUESTS);
    drop(writer.join().expect("writer"));
    drop(w_in);
    drop(c);
    let v = report(server);
    let peak = v["nbd"]["peak_queued_bytes"].as_u64().unwrap();
    // At most the limit, plus the one request admitted into an empty queue.
    assert!(
        peak <= (32 << 20) + u64::from(MIB),
        "peak {peak}: {}",
        v["nbd"]
    );
    assert!(peak >= u64::from(MIB), "the queue was used: {}", v["nbd"]);
    assert_eq!(v["nbd"]["read_commands"], STALLED_REQUESTS, "{}", v["nbd"]);
    assert_eq!(v["nbd"]["write_commands"], STALLED_REQUESTS, "{}", v["nbd"]);
}

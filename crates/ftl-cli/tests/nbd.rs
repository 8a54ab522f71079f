//! `ftl serve --nbd` spoken to by a tiny NBD client: handshake, unaligned
//! writes read back, trim, flush, protocol errors, a connection that sends
//! garbage and one dropped mid-request, and the data still right afterwards;
//! then a seeded barrage of hostile connections against a written pattern.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use test_kit::rng::{XorShift64, GOLDEN_GAMMA};

use serde_json::Value;

mod common;

use common::nbd::*;

#[test]
fn clients_read_back_what_they_wrote_and_bad_clients_harm_nobody() {
    let server = start(&["--exit-after-disconnects", "4"]);
    let mut c = Client::connect(server.port);
    assert!(c.size > 1 << 20);

    // Unaligned writes, one with FUA, overlapping unit boundaries.
    let a = pattern(1, 5000);
    c.write(1000, &a, 0);
    let b = pattern(2, 9000);
    c.write(7000, &b, FUA);
    assert_eq!(c.read(1000, 5000), a);
    assert_eq!(c.read(7000, 9000), b);
    assert_eq!(c.read(0, 1000), vec![0; 1000]);
    // Pipelined requests: replies come back matched by handle.
    for h in 0..16u64 {
        let d = pattern(h as u8, 3000);
        c.send(WRITE, 0, 100 + h, 65536 + h * 3000, 3000, &d);
    }
    let mut seen: Vec<u64> = (0..16)
        .map(|_| c.reply())
        .map(|(e, h)| {
            assert_eq!(e, 0);
            h
        })
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (100..116).collect::<Vec<_>>());
    for h in 0..16u64 {
        assert_eq!(c.read(65536 + h * 3000, 3000), pattern(h as u8, 3000));
    }
    // Trim and write zeroes read as zeros, also over partial units.
    assert_eq!(c.call(TRIM, 0, 1500, 3000, &[]), 0);
    let mut want = a.clone();
    want[500..3500].fill(0);
    assert_eq!(c.read(1000, 5000), want);
    assert_eq!(c.call(WRITE_ZEROES, FUA, 8000, 100, &[]), 0);
    let mut want_b = b.clone();
    want_b[1000..1100].fill(0);
    assert_eq!(c.read(7000, 9000), want_b);
    assert_eq!(c.call(FLUSH, 0, 0, 0, &[]), 0);
    // Errors the protocol defines.
    assert_eq!(c.call(READ, 0, c.size - 10, 20, &[]), EINVAL);
    assert_eq!(c.call(WRITE, 0, c.size - 1, 2, &[9, 9]), ENOSPC);
    assert_eq!(c.call(READ, 0, 0, (32 << 20) + 1, &[]), EINVAL);
    assert_eq!(c.call(99, 0, 0, 0, &[]), EINVAL);
    // The stream is still in sync after errors.
    assert_eq!(c.read(7000, 9000), want_b);
    c.send(DISC, 0, 1, 0, 0, &[]);
    let mut rest = Vec::new();
    let _ = c.s.read_to_end(&mut rest);
    assert!(rest.is_empty(), "nothing after DISC");

    // A client that sends half a write and vanishes, then one that sends garbage.
    let mut bad = Client::connect(server.port);
    bad.send(WRITE, 0, 5, 1000, 5000, &[0xee; 100]);
    drop(bad);
    let mut bad = Client::connect(server.port);
    bad.s.write_all(&[0x55; 64]).unwrap();
    let mut rest = Vec::new();
    let _ = bad.s.read_to_end(&mut rest);
    assert!(rest.is_empty(), "garbage gets a close, no reply");

    // A third connection still reads the right data.
    let mut c = Client::connect(server.port);
    assert_eq!(c.read(1000, 5000), want);
    assert_eq!(c.read(7000, 9000), want_b);
    c.send(DISC, 0, 1, 0, 0, &[]);
    drop(c);

    let v = report(server);
    assert_eq!(v["integrity"]["mismatches"].as_u64(), Some(0));
    assert!(v["integrity"]["read_checks"].as_u64().unwrap() > 20);
    assert_eq!(v["nbd"]["connections"].as_u64(), Some(4));
    assert!(v["nbd"]["protocol_errors"].as_u64().unwrap() >= 2);
    assert_eq!(v["config"]["nand"]["full_data"], Value::Bool(true));
}

#[test]
fn concurrent_unaligned_writes_to_shared_units_lose_nothing() {
    // A queue deeper than both clients' writes together, so they all overlap in the drive.
    let dir = std::env::temp_dir().join(format!("ftl-nbd-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = start(&[
        "--exit-after-disconnects",
        "3",
        "--set",
        "host.queue_depth=64",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let mut a = Client::connect(server.port);
    let mut b = Client::connect(server.port);
    let units = 16u64;
    // Each client owns one half of every unit; both pipeline all writes
    // before reading a reply, so read-modify-writes of a unit race.
    for round in 0..3u8 {
        for k in 0..units {
            a.send(WRITE, 0, k, k * 4096 + 1, 2047, &pattern(round, 2047));
            b.send(
                WRITE,
                0,
                k,
                k * 4096 + 2048,
                2047,
                &pattern(round ^ 0x80, 2047),
            );
        }
        for _ in 0..units {
            assert_eq!(a.reply().0, 0);
            assert_eq!(b.reply().0, 0);
        }
    }
    a.send(DISC, 0, 1, 0, 0, &[]);
    b.send(DISC, 0, 1, 0, 0, &[]);
    let mut c = Client::connect(server.port);
    let all = c.read(0, (units * 4096) as u32);
    for (k, unit) in all.chunks(4096).enumerate() {
        assert_eq!(unit[0], 0, "unit {k}");
        assert_eq!(
            &unit[1..2048],
            &pattern(2, 2047)[..],
            "unit {k}, first half"
        );
        assert_eq!(
            &unit[2048..4095],
            &pattern(0x82, 2047)[..],
            "unit {k}, second half"
        );
        assert_eq!(unit[4095], 0, "unit {k}");
    }
    c.send(DISC, 0, 1, 0, 0, &[]);
    drop((a, b, c));
    let v = report(server);
    assert_eq!(v["integrity"]["mismatches"].as_u64(), Some(0));
    // At shutdown the run files are written beside report.json.
    for f in [
        "report.json",
        "timeseries.csv",
        "waf_free_blocks.svg",
        "erase_counts.svg",
    ] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
    let csv = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    assert!(csv.starts_with("t_s,") && csv.lines().count() > 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Random bytes and lengths from a seeded xorshift64: the hostile test sends
/// the same bytes every run.
struct Rng(XorShift64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below_mod(n)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.0.next_u64() as u8).collect()
    }

    /// Between 1 and `max` random bytes.
    fn junk(&mut self, max: u64) -> Vec<u8> {
        let n = 1 + self.below(max) as usize;
        self.bytes(n)
    }
}

#[test]
fn hostile_connections_leave_written_data_intact() {
    const SEEDS: u64 = 4;
    // Writer, reader, the header-by-header connection, the flood, and four
    // seeded connections of each of four kinds.
    let conns = 4 + 4 * SEEDS;
    let server = start(&["--exit-after-disconnects", &conns.to_string()]);
    let mut c = Client::connect(server.port);
    let (base, span) = (12_345u64, 384usize << 10);
    assert!(base + span as u64 + (64 << 10) < c.size);
    let want = Rng(XorShift64(0x5eed)).bytes(span);
    for (i, chunk) in want.chunks(50_000).enumerate() {
        c.write(base + i as u64 * 50_000, chunk, 0);
    }
    assert_eq!(c.read(base, span as u32), want);
    c.send(DISC, 0, 1, 0, 0, &[]);
    drop(c);

    for seed in 1..=SEEDS {
        let mut rng = Rng(XorShift64(seed.wrapping_mul(GOLDEN_GAMMA)));
        // Dropped mid-handshake, anywhere in the client's part of it.
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        let hs = handshake_bytes();
        let cut = rng.below(hs.len() as u64) as usize;
        s.write_all(&hs[..cut]).unwrap();
        drop(s);

        // Garbage after the handshake with a wrong magic: closed, no reply.
        let mut g = Client::connect(server.port);
        let mut junk = rng.junk(4096);
        junk[0] = !0x25;
        let _ = g.s.write_all(&junk);
        assert!(
            drain(&mut g.s).is_empty(),
            "seed {seed}: garbage gets no reply"
        );

        // Garbage behind a valid magic: random headers, whatever they get,
        // then a stream that ends mid-request.
        let mut g = Client::connect(server.port);
        for _ in 0..8 {
            let mut junk = REQ_MAGIC.to_be_bytes().to_vec();
            junk.extend(rng.bytes(24));
            junk[4] |= 0x80; // an unknown flag: never a valid write into the pattern
            let _ = g.s.write_all(&junk);
        }
        let _ = g.s.write_all(&rng.junk(27));
        drain(&mut g.s);

        // A write into the pattern dropped mid-payload: nothing of it lands.
        let mut w = Client::connect(server.port);
        let len = 1 + rng.below(200_000) as u32;
        let at = base + rng.below(span as u64 - u64::from(len));
        let sent = rng.below(u64::from(len)) as usize;
        w.send(WRITE, 0, 9, at, len, &rng.bytes(sent));
        drop(w);
    }

    // Hostile headers, each answered with the errno the protocol defines,
    // then half a header and a vanished client.
    let mut h = Client::connect(server.port);
    let size = h.size;
    let cases: [(u16, u16, u64, u32, u32); 12] = [
        (5, 0, 0, 4096, EINVAL),
        (0xffff, 0, 0, 0, EINVAL),
        (READ, 0x8000, base, 4096, EINVAL),
        (READ, DF, base, 4096, EINVAL),
        (WRITE, NO_HOLE, base, 4096, EINVAL),
        (READ, 0, size - 1, 2, EINVAL),
        (TRIM, 0, size, 1, EINVAL),
        (WRITE, 0, size - 4095, 4096, ENOSPC),
        (WRITE_ZEROES, 0, u64::MAX - 10, 4096, ENOSPC),
        (TRIM, 0, u64::MAX, 1, EINVAL),
        (READ, 0, 0, MAX_PAYLOAD + 1, EINVAL),
        (WRITE_ZEROES, NO_HOLE | FUA, size, 0, 0),
    ];
    for (k, (kind, flags, offset, len, err)) in cases.into_iter().enumerate() {
        let payload = if kind == WRITE {
            vec![0xdd; len as usize]
        } else {
            Vec::new()
        };
        h.send(kind, flags, k as u64, offset, len, &payload);
        assert_eq!(h.reply(), (err, k as u64), "case {k}");
    }
    h.s.write_all(&REQ_MAGIC.to_be_bytes()[..3]).unwrap();
    drop(h);

    // A flood of bad requests whose replies are never read: the server stops
    // reading once its replies back up, rather than queueing them without end.
    let mut f = Client::connect(server.port);
    f.s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut one = REQ_MAGIC.to_be_bytes().to_vec();
    one.extend_from_slice(&[0x80, 0, 0, 0]); // READ with an unknown flag
    one.extend_from_slice(&[0; 20]);
    let burst = one.repeat(4096);
    let mut sent = 0usize;
    while sent < 64 << 20 && f.s.write_all(&burst).is_ok() {
        sent += burst.len();
    }
    assert!(
        sent < 64 << 20,
        "the server kept reading {sent} bytes of unanswered requests"
    );
    drop(f);

    let mut c = Client::connect(server.port);
    let got = c.read(base, span as u32);
    let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert_eq!(bad, 0, "bytes of the pattern changed");
    c.send(DISC, 0, 1, 0, 0, &[]);
    drop(c);

    let v = report(server);
    assert_eq!(v["integrity"]["mismatches"].as_u64(), Some(0));
    assert_eq!(v["nbd"]["connections"].as_u64(), Some(conns));
    assert!(v["nbd"]["protocol_errors"].as_u64().unwrap() >= 3 * SEEDS);
}

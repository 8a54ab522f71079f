//! A tiny NBD client and an `ftl serve` process, for the NBD tests.
// Every test binary includes `common`; only the NBD ones use these.
#![allow(unused_imports)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

// The wire constants, from the server's own protocol module.
pub use ftl_cli::nbd::proto::cmd::{DISC, FLUSH, READ, TRIM, WRITE, WRITE_ZEROES};
pub use ftl_cli::nbd::proto::errno::{EINVAL, ENOSPC};
pub use ftl_cli::nbd::proto::{
    CMD_FLAG_DF as DF, CMD_FLAG_FUA as FUA, CMD_FLAG_NO_HOLE as NO_HOLE, MAX_PAYLOAD, OPT_MAGIC,
    REQUEST_MAGIC as REQ_MAGIC,
};

/// The server process; killed if the test ends early.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start(extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ftl"))
        .args([
            "serve",
            "--nbd",
            "127.0.0.1:0",
            "--max-seconds",
            "120",
            "--json",
            "--set",
            "geometry.blocks_per_plane=40",
            // Too small for a metadata region: the mapping stays in DRAM.
            "--set",
            "ftl.map_entries_per_page=0",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ftl serve");
    let err = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(err).lines();
    let port = loop {
        let line = lines
            .next()
            .expect("server exited before listening")
            .expect("stderr");
        if let Some(p) = line.strip_prefix("listening on 127.0.0.1:") {
            break p.trim().parse().expect("port");
        }
    };
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    Server { child, port }
}

pub fn u32_of(b: &[u8]) -> u32 {
    u32::from_be_bytes(b.try_into().unwrap())
}

/// A connection after the handshake.
pub struct Client {
    pub s: TcpStream,
    pub size: u64,
}

impl Client {
    pub fn connect(port: u16) -> Client {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut hello = [0u8; 18];
        s.read_exact(&mut hello).unwrap();
        assert_eq!(&hello[..8], b"NBDMAGIC");
        assert_eq!(&hello[8..16], b"IHAVEOPT");
        s.write_all(&3u32.to_be_bytes()).unwrap();
        // An option the server does not know, then GO.
        let opt = |s: &mut TcpStream, o: u32, data: &[u8]| {
            let mut b = OPT_MAGIC.to_be_bytes().to_vec();
            b.extend_from_slice(&o.to_be_bytes());
            b.extend_from_slice(&(data.len() as u32).to_be_bytes());
            b.extend_from_slice(data);
            s.write_all(&b).unwrap();
        };
        opt(&mut s, 8, &[]);
        let mut go = 0u32.to_be_bytes().to_vec();
        go.extend_from_slice(&0u16.to_be_bytes());
        opt(&mut s, 7, &go);
        let mut size = None;
        loop {
            let mut h = [0u8; 20];
            s.read_exact(&mut h).unwrap();
            let (opt, kind, len) = (u32_of(&h[8..12]), u32_of(&h[12..16]), u32_of(&h[16..20]));
            let mut data = vec![0u8; len as usize];
            s.read_exact(&mut data).unwrap();
            if opt == 8 {
                assert_eq!(kind, (1 << 31) + 1, "unknown option: NBD_REP_ERR_UNSUP");
                continue;
            }
            assert_eq!(opt, 7);
            match kind {
                1 => break,
                3 if data[..2] == [0, 0] => {
                    size = Some(u64::from_be_bytes(data[2..10].try_into().unwrap()));
                }
                3 => {}
                k => panic!("unexpected reply {k:#x}"),
            }
        }
        Client {
            s,
            size: size.expect("export size"),
        }
    }

    pub fn send(&mut self, kind: u16, flags: u16, handle: u64, offset: u64, len: u32, data: &[u8]) {
        let mut b = REQ_MAGIC.to_be_bytes().to_vec();
        b.extend_from_slice(&flags.to_be_bytes());
        b.extend_from_slice(&kind.to_be_bytes());
        b.extend_from_slice(&handle.to_be_bytes());
        b.extend_from_slice(&offset.to_be_bytes());
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(data);
        self.s.write_all(&b).unwrap();
    }

    /// Reads a reply header: (error, handle).
    pub fn reply(&mut self) -> (u32, u64) {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).unwrap();
        assert_eq!(u32_of(&h[..4]), 0x6744_6698, "simple reply magic");
        (
            u32_of(&h[4..8]),
            u64::from_be_bytes(h[8..16].try_into().unwrap()),
        )
    }

    pub fn call(&mut self, kind: u16, flags: u16, offset: u64, len: u32, data: &[u8]) -> u32 {
        self.send(kind, flags, 77, offset, len, data);
        let (err, handle) = self.reply();
        assert_eq!(handle, 77);
        err
    }

    pub fn write(&mut self, offset: u64, data: &[u8], flags: u16) {
        assert_eq!(self.call(WRITE, flags, offset, data.len() as u32, data), 0);
    }

    pub fn read(&mut self, offset: u64, len: u32) -> Vec<u8> {
        assert_eq!(self.call(READ, 0, offset, len, &[]), 0);
        let mut d = vec![0u8; len as usize];
        self.s.read_exact(&mut d).unwrap();
        d
    }
}

pub fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ seed)
        .collect()
}

pub fn report(server: Server) -> Value {
    let mut server = server;
    let mut out = String::new();
    let mut stdout = server.child.stdout.take().expect("stdout");
    stdout.read_to_string(&mut out).unwrap();
    let status = server.child.wait().unwrap();
    assert!(status.success(), "ftl serve failed: {status}");
    serde_json::from_str(out.trim()).expect("one JSON report on stdout")
}

/// The client's side of a handshake that goes straight to `NBD_OPT_GO`.
pub fn handshake_bytes() -> Vec<u8> {
    let mut b = 3u32.to_be_bytes().to_vec();
    b.extend_from_slice(&OPT_MAGIC.to_be_bytes());
    b.extend_from_slice(&7u32.to_be_bytes());
    b.extend_from_slice(&6u32.to_be_bytes());
    b.extend_from_slice(&[0; 6]);
    b
}

/// Closes the sending side and reads whatever the server still sends
/// until it closes the connection.
pub fn drain(s: &mut TcpStream) -> Vec<u8> {
    let _ = s.shutdown(Shutdown::Write);
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    rest
}

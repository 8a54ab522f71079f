//! The NBD protocol, byte-level and socket-free: the fixed newstyle
//! handshake ([`handshake`]) and the transmission requests ([`proto`]).
//! `ftl serve` speaks it over TCP; the fuzz targets feed it bytes directly.

pub mod handshake;
pub mod proto;

use std::io::{self, Read, Write};

/// A client's bytes in, the server's bytes out: drives the handshake (or
/// the request parser) without a socket, for tests and fuzz targets.
pub struct Pipe<'a> {
    /// What the client sends.
    pub input: &'a [u8],
    /// What the server wrote.
    pub output: Vec<u8>,
}

impl Read for Pipe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Pipe<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

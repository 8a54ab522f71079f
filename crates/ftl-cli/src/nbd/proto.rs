//! The NBD wire format: constants, the transmission request header, simple
//! replies, and the check that turns a request into a block operation.
//!
//! Everything here is pure (bytes in, values out), so it is property-tested
//! on random input below.

use std::io::{self, Read};

/// `NBDMAGIC`, first word of the handshake.
pub const NBD_MAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: second word of the handshake, and the magic of every option.
pub const OPT_MAGIC: u64 = 0x4948_4156_454f_5054;
/// Magic of an option reply.
pub const REP_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// Magic of a transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// Magic of a simple reply.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flag: fixed newstyle.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
/// Handshake flag: no 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_NO_ZEROES: u16 = 2;
/// Client flag: fixed newstyle.
pub const CLIENT_FIXED_NEWSTYLE: u32 = 1;
/// Client flag: no zeroes.
pub const CLIENT_NO_ZEROES: u32 = 2;

/// Option: export name (old clients; no option reply).
pub const OPT_EXPORT_NAME: u32 = 1;
/// Option: abort the handshake.
pub const OPT_ABORT: u32 = 2;
/// Option: list exports.
pub const OPT_LIST: u32 = 3;
/// Option: describe an export.
pub const OPT_INFO: u32 = 6;
/// Option: describe an export and enter transmission.
pub const OPT_GO: u32 = 7;

/// Option reply: done.
pub const REP_ACK: u32 = 1;
/// Option reply: an export name (`NBD_OPT_LIST`).
pub const REP_SERVER: u32 = 2;
/// Option reply: one piece of export information.
pub const REP_INFO: u32 = 3;
/// Option reply error: option unknown to this server.
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
/// Option reply error: malformed option.
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;

/// Information type: export size and transmission flags.
pub const INFO_EXPORT: u16 = 0;
/// Information type: block size constraints.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flags: has flags, flush, FUA, trim, write zeroes, multi-connection.
pub const TRANSMISSION_FLAGS: u16 = 1 | 4 | 8 | 32 | 64 | 256;

/// Command flag: force unit access.
pub const CMD_FLAG_FUA: u16 = 1;
/// Command flag: write zeroes without punching a hole (only on `NBD_CMD_WRITE_ZEROES`).
pub const CMD_FLAG_NO_HOLE: u16 = 2;
/// Command flag: do not fragment (needs structured replies, which this
/// server lacks, so it is refused like any flag not in [`allowed_flags`]).
pub const CMD_FLAG_DF: u16 = 4;

/// Largest read or write payload (the advertised maximum block size).
pub const MAX_PAYLOAD: u32 = 32 << 20;
/// Preferred block size (the mapping unit of the default drive).
pub const PREFERRED_BLOCK: u32 = 4096;

/// errno values of NBD replies.
pub mod errno {
    /// I/O error.
    pub const EIO: u32 = 5;
    /// Invalid argument.
    pub const EINVAL: u32 = 22;
    /// No space left (write beyond the end).
    pub const ENOSPC: u32 = 28;
    /// Server shutting down.
    pub const ESHUTDOWN: u32 = 108;
}

/// Command types.
pub mod cmd {
    /// Read.
    pub const READ: u16 = 0;
    /// Write (payload follows).
    pub const WRITE: u16 = 1;
    /// Disconnect.
    pub const DISC: u16 = 2;
    /// Flush.
    pub const FLUSH: u16 = 3;
    /// Trim (discard).
    pub const TRIM: u16 = 4;
    /// Write zeroes.
    pub const WRITE_ZEROES: u16 = 6;
}

/// A transmission request header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Command flags.
    pub flags: u16,
    /// Command type.
    pub kind: u16,
    /// Client cookie, echoed in the reply.
    pub handle: u64,
    /// Byte offset.
    pub offset: u64,
    /// Byte length.
    pub len: u32,
}

/// Size of a request header.
pub const REQUEST_BYTES: usize = 28;

impl Request {
    /// Parses a header; `None` if the magic is wrong (the stream cannot be resynchronised).
    pub fn parse(b: &[u8; REQUEST_BYTES]) -> Option<Request> {
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| (u64::from(u32_at(i)) << 32) | u64::from(u32_at(i + 4));
        if u32_at(0) != REQUEST_MAGIC {
            return None;
        }
        Some(Request {
            flags: u16_at(4),
            kind: u16_at(6),
            handle: u64_at(8),
            offset: u64_at(16),
            len: u32_at(24),
        })
    }

    /// The header's bytes.
    #[cfg(test)]
    pub fn encode(&self) -> [u8; REQUEST_BYTES] {
        let mut b = [0u8; REQUEST_BYTES];
        b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.kind.to_be_bytes());
        b[8..16].copy_from_slice(&self.handle.to_be_bytes());
        b[16..24].copy_from_slice(&self.offset.to_be_bytes());
        b[24..28].copy_from_slice(&self.len.to_be_bytes());
        b
    }

    /// Bytes of payload that follow the header on the wire.
    pub fn payload_len(&self) -> u64 {
        if self.kind == cmd::WRITE {
            u64::from(self.len)
        } else {
            0
        }
    }
}

/// What a valid request asks the drive to do (byte offsets and lengths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockOp {
    /// Read `len` bytes at `offset`.
    Read {
        /// Byte offset.
        offset: u64,
        /// Byte length.
        len: u32,
    },
    /// Write `data` at `offset`; with `fua`, acknowledged once flushed.
    Write {
        /// Byte offset.
        offset: u64,
        /// The bytes.
        data: Vec<u8>,
        /// Force unit access.
        fua: bool,
    },
    /// Make `len` bytes at `offset` read as zeros (trim and write zeroes).
    Zero {
        /// Byte offset.
        offset: u64,
        /// Byte length.
        len: u32,
        /// Force unit access.
        fua: bool,
    },
    /// Make every acknowledged write durable.
    Flush,
}

/// What the connection does with a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Hand it to the drive.
    Op(BlockOp),
    /// Nothing to do; reply success (zero-length request).
    Noop,
    /// Reply with this errno.
    Fail(u32),
    /// Close the connection once the replies in flight are sent.
    Disconnect,
}

/// The command flags a request of type `kind` may carry: FUA on every
/// command, `NO_HOLE` on write zeroes. Anything else (`DF` without
/// structured replies, flags of extensions never negotiated) is `EINVAL`.
fn allowed_flags(kind: u16) -> u16 {
    if kind == cmd::WRITE_ZEROES {
        CMD_FLAG_FUA | CMD_FLAG_NO_HOLE
    } else {
        CMD_FLAG_FUA
    }
}

/// Checks a request against an export of `size` bytes; `payload` is the
/// write payload (already read off the wire, `None` when it was too large
/// and was skipped). Errors follow the protocol: unknown commands, unknown
/// flags, reads over [`MAX_PAYLOAD`] and reads or trims beyond the end are
/// `EINVAL`; writes and write zeroes beyond the end are `ENOSPC`.
pub fn check(r: &Request, payload: Option<Vec<u8>>, size: u64) -> Action {
    let end = r.offset.checked_add(u64::from(r.len));
    let in_range = end.is_some_and(|e| e <= size);
    let fua = r.flags & CMD_FLAG_FUA != 0;
    if r.kind == cmd::DISC {
        return Action::Disconnect;
    }
    if r.flags & !allowed_flags(r.kind) != 0 {
        return Action::Fail(errno::EINVAL);
    }
    match r.kind {
        cmd::FLUSH => Action::Op(BlockOp::Flush),
        cmd::READ | cmd::WRITE if r.len > MAX_PAYLOAD => Action::Fail(errno::EINVAL),
        cmd::READ | cmd::TRIM if !in_range => Action::Fail(errno::EINVAL),
        cmd::WRITE | cmd::WRITE_ZEROES if !in_range => Action::Fail(errno::ENOSPC),
        cmd::READ | cmd::WRITE | cmd::TRIM | cmd::WRITE_ZEROES if r.len == 0 => Action::Noop,
        cmd::READ => Action::Op(BlockOp::Read {
            offset: r.offset,
            len: r.len,
        }),
        cmd::WRITE => match payload {
            Some(data) if data.len() == r.len as usize => Action::Op(BlockOp::Write {
                offset: r.offset,
                data,
                fua,
            }),
            _ => Action::Fail(errno::EINVAL),
        },
        cmd::TRIM | cmd::WRITE_ZEROES => Action::Op(BlockOp::Zero {
            offset: r.offset,
            len: r.len,
            fua,
        }),
        _ => Action::Fail(errno::EINVAL),
    }
}

/// A simple reply header.
pub fn simple_reply(error: u32, handle: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..16].copy_from_slice(&handle.to_be_bytes());
    b
}

/// One request read off a connection.
#[derive(Debug, PartialEq, Eq)]
pub struct Incoming {
    /// Client cookie.
    pub handle: u64,
    /// What to do.
    pub action: Action,
}

/// Why a connection stops reading.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// The stream ended between requests.
    Eof,
    /// The stream ended inside a request, or broke.
    Broken,
    /// A header with a wrong magic: the stream cannot be resynchronised.
    BadMagic,
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` on end of stream before the first byte.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<bool, End> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(End::Broken),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(End::Broken),
        }
    }
    Ok(true)
}

/// Reads the next request (header and payload) from `r` and checks it
/// against an export of `size` bytes. A payload over [`MAX_PAYLOAD`] is read
/// and dropped, and the request fails with `EINVAL`.
pub fn next_request(r: &mut impl Read, size: u64) -> Result<Incoming, End> {
    let mut h = [0u8; REQUEST_BYTES];
    if !read_full(r, &mut h)? {
        return Err(End::Eof);
    }
    let req = Request::parse(&h).ok_or(End::BadMagic)?;
    let n = req.payload_len();
    let payload = if n == 0 {
        None
    } else if n <= u64::from(MAX_PAYLOAD) {
        let mut data = vec![0u8; n as usize];
        if !read_full(r, &mut data)? {
            return Err(End::Broken);
        }
        Some(data)
    } else {
        let skipped = io::copy(&mut r.take(n), &mut io::sink()).map_err(|_| End::Broken)?;
        if skipped != n {
            return Err(End::Broken);
        }
        None
    };
    Ok(Incoming {
        handle: req.handle,
        action: check(&req, payload, size),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SIZE: u64 = 1 << 30;

    proptest! {
        /// Any byte stream yields requests and then an end, never a panic,
        /// and never more requests than it has headers' worth of bytes. Most
        /// segments start with the request magic, so parsing gets past it.
        #[test]
        fn random_streams_never_panic(segments in proptest::collection::vec(
            (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..64)), 0..12)) {
            let mut bytes = Vec::new();
            for (magic, junk) in &segments {
                if *magic {
                    bytes.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
                }
                bytes.extend_from_slice(junk);
            }
            let mut r = &bytes[..];
            let mut n = 0;
            while next_request(&mut r, SIZE).is_ok() {
                n += 1;
                prop_assert!(n <= bytes.len() / REQUEST_BYTES);
            }
        }

        /// Random headers with a valid magic never panic and always get an answer.
        #[test]
        fn random_headers_are_answered(flags in any::<u16>(), kind in any::<u16>(), handle in any::<u64>(),
                                       offset in any::<u64>(), len in 0u32..(1 << 16)) {
            let req = Request { flags, kind, handle, offset, len };
            let mut bytes = req.encode().to_vec();
            bytes.resize(bytes.len() + req.payload_len() as usize, 7);
            let mut r = &bytes[..];
            let got = next_request(&mut r, SIZE);
            prop_assert!(got.is_ok());
            prop_assert_eq!(got.map(|g| g.handle).ok(), Some(handle));
            prop_assert!(r.is_empty(), "the payload was consumed");
        }

        /// Valid requests come back as the operation they encode.
        #[test]
        fn valid_requests_round_trip(kind in prop_oneof![Just(cmd::READ), Just(cmd::WRITE), Just(cmd::TRIM), Just(cmd::WRITE_ZEROES), Just(cmd::FLUSH)],
                                     fua in any::<bool>(), handle in any::<u64>(),
                                     offset in 0u64..SIZE / 2, len in 1u32..20000, seed in any::<u8>()) {
            let flags = if fua { CMD_FLAG_FUA } else { 0 };
            let req = Request { flags, kind, handle, offset, len };
            prop_assert_eq!(Request::parse(&req.encode()), Some(req));
            let data: Vec<u8> = (0..req.payload_len()).map(|i| (i as u8) ^ seed).collect();
            let mut bytes = req.encode().to_vec();
            bytes.extend_from_slice(&data);
            let mut r = &bytes[..];
            let got = next_request(&mut r, SIZE).unwrap();
            prop_assert_eq!(got.handle, handle);
            let want = match kind {
                cmd::READ => BlockOp::Read { offset, len },
                cmd::WRITE => BlockOp::Write { offset, data, fua },
                cmd::FLUSH => BlockOp::Flush,
                _ => BlockOp::Zero { offset, len, fua },
            };
            prop_assert_eq!(got.action, Action::Op(want));
            prop_assert_eq!(next_request(&mut r, SIZE), Err(End::Eof));
        }
    }

    /// Export size of the hostile-request tests: small, so that ranges
    /// beyond the end are common.
    const SMALL: u64 = 1 << 20;

    /// The errno the protocol prescribes for a header, `None` when the
    /// request is valid; written from the specification's rules with
    /// overflow-free arithmetic, independently of [`check`].
    fn spec_errno(r: &Request, size: u64) -> Option<u32> {
        let known = [
            cmd::READ,
            cmd::WRITE,
            cmd::FLUSH,
            cmd::TRIM,
            cmd::WRITE_ZEROES,
        ];
        let no_hole = if r.kind == cmd::WRITE_ZEROES {
            CMD_FLAG_NO_HOLE
        } else {
            0
        };
        let beyond = u128::from(r.offset) + u128::from(r.len) > u128::from(size);
        let carries_data = r.kind == cmd::READ || r.kind == cmd::WRITE;
        let reads_or_trims = r.kind == cmd::READ || r.kind == cmd::TRIM;
        if !known.contains(&r.kind) || r.flags & !(CMD_FLAG_FUA | no_hole) != 0 {
            Some(errno::EINVAL)
        } else if r.kind == cmd::FLUSH {
            None
        } else if (carries_data && r.len > MAX_PAYLOAD) || (beyond && reads_or_trims) {
            Some(errno::EINVAL)
        } else if beyond {
            Some(errno::ENOSPC)
        } else {
            None
        }
    }

    /// Headers with a valid magic built to be hostile: unknown types,
    /// unknown flags, ranges ending just past the export or wrapping
    /// around `u64`, lengths around [`MAX_PAYLOAD`], misaligned offsets.
    fn hostile_request() -> impl Strategy<Value = Request> {
        let kind = prop_oneof![
            4 => proptest::sample::select(vec![cmd::READ, cmd::WRITE, cmd::FLUSH, cmd::TRIM, cmd::WRITE_ZEROES]),
            1 => any::<u16>().prop_filter("not DISC", |k| *k != cmd::DISC),
        ];
        let flags = prop_oneof![
            Just(0u16),
            Just(CMD_FLAG_FUA),
            Just(CMD_FLAG_NO_HOLE),
            Just(CMD_FLAG_DF),
            any::<u16>()
        ];
        let len = prop_oneof![
            4 => 0u32..(1 << 16),
            1 => (MAX_PAYLOAD - 2)..=(MAX_PAYLOAD + 2),
            1 => any::<u32>(),
        ];
        (kind, flags, len, any::<u64>(), 0u8..4, any::<u64>()).prop_map(
            |(kind, flags, len, x, place, handle)| {
                let offset = match place {
                    0 => x % SMALL,                                   // inside, misaligned
                    1 => (SMALL - u64::from(len).min(SMALL)) + x % 3, // ending at or just past the end
                    2 => u64::MAX - x % (u64::from(len) + 2),         // wrapping around
                    _ => x,
                };
                Request {
                    flags,
                    kind,
                    handle,
                    offset,
                    len,
                }
            },
        )
    }

    proptest! {
        /// Every hostile header gets the errno the protocol defines (or is
        /// carried out when valid), and the stream stays in sync after it.
        #[test]
        fn hostile_requests_get_the_protocol_errno(req in hostile_request()) {
            let want = spec_errno(&req, SMALL);
            let got = if req.kind == cmd::WRITE && req.len > MAX_PAYLOAD {
                // Skipping the payload is tested below; no need to build it here.
                check(&req, None, SMALL)
            } else {
                let mut bytes = req.encode().to_vec();
                bytes.resize(bytes.len() + req.payload_len() as usize, 0xa5);
                let mut r = &bytes[..];
                let got = next_request(&mut r, SMALL).expect("a whole request");
                prop_assert_eq!(got.handle, req.handle);
                prop_assert!(r.is_empty(), "the payload was consumed");
                got.action
            };
            match (want, got) {
                (Some(e), Action::Fail(g)) => prop_assert_eq!(e, g),
                (None, Action::Op(_) | Action::Noop) => {}
                (w, g) => prop_assert!(false, "{:?}: want {:?}, got {:?}", req, w, g),
            }
        }

        /// A request cut anywhere (header or payload) ends the stream as
        /// `Broken`, or `Eof` when nothing of it arrived; never a panic or a
        /// request made of the bytes that did arrive.
        #[test]
        fn truncated_requests_end_the_stream(req in hostile_request(), cut in any::<prop::sample::Index>()) {
            let req = Request { kind: cmd::WRITE, len: req.len % (1 << 16), ..req };
            let mut bytes = req.encode().to_vec();
            bytes.resize(bytes.len() + req.payload_len() as usize, 0x5a);
            let at = cut.index(bytes.len());
            let want = if at == 0 { End::Eof } else { End::Broken };
            prop_assert_eq!(next_request(&mut &bytes[..at], SMALL), Err(want));
        }

        /// A header whose magic is wrong in any bit is `BadMagic`, whatever follows.
        #[test]
        fn bad_magic_is_fatal(req in hostile_request(), bit in 0usize..32) {
            let mut bytes = req.encode();
            bytes[bit / 8] ^= 1 << (bit % 8);
            prop_assert_eq!(next_request(&mut &bytes[..], SMALL), Err(End::BadMagic));
        }
    }

    #[test]
    fn errors_follow_the_protocol() {
        let ask = |kind, offset, len| {
            let req = Request {
                flags: 0,
                kind,
                handle: 1,
                offset,
                len,
            };
            check(&req, Some(vec![0; len as usize]), SIZE)
        };
        assert_eq!(ask(cmd::READ, SIZE - 1, 2), Action::Fail(errno::EINVAL));
        assert_eq!(ask(cmd::WRITE, SIZE - 1, 2), Action::Fail(errno::ENOSPC));
        assert_eq!(ask(cmd::TRIM, u64::MAX, 2), Action::Fail(errno::EINVAL));
        assert_eq!(ask(cmd::TRIM, SIZE, 1), Action::Fail(errno::EINVAL));
        assert_eq!(
            ask(cmd::WRITE_ZEROES, SIZE - 1, 2),
            Action::Fail(errno::ENOSPC)
        );
        assert_eq!(
            ask(cmd::READ, 0, MAX_PAYLOAD + 1),
            Action::Fail(errno::EINVAL)
        );
        assert_eq!(ask(99, 0, 0), Action::Fail(errno::EINVAL));
        assert_eq!(ask(cmd::DISC, 0, 0), Action::Disconnect);
        assert_eq!(ask(cmd::READ, 0, 0), Action::Noop);
        // An oversize write's payload is skipped and the stream stays in sync.
        let big = Request {
            flags: 0,
            kind: cmd::WRITE,
            handle: 9,
            offset: 0,
            len: MAX_PAYLOAD + 1,
        };
        let mut bytes = big.encode().to_vec();
        bytes.resize(bytes.len() + big.len as usize, 0);
        bytes.extend_from_slice(
            &Request {
                flags: 0,
                kind: cmd::FLUSH,
                handle: 10,
                offset: 0,
                len: 0,
            }
            .encode(),
        );
        let mut r = &bytes[..];
        assert_eq!(
            next_request(&mut r, SIZE).unwrap().action,
            Action::Fail(errno::EINVAL)
        );
        assert_eq!(
            next_request(&mut r, SIZE).unwrap().action,
            Action::Op(BlockOp::Flush)
        );
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert_eq!(next_request(&mut &bad[..], SIZE), Err(End::BadMagic));
        assert_eq!(next_request(&mut &bytes[..5], SIZE), Err(End::Broken));
    }
}

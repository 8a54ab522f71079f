//! The fixed newstyle handshake: option haggling up to transmission.

use std::io::{self, Read, Write};

use super::proto::*;

/// Longest option payload accepted; a longer one closes the connection.
const MAX_OPTION_BYTES: u32 = 64 << 10;
/// Most options one handshake may send.
const MAX_OPTIONS: u32 = 256;

/// How a handshake ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Transmission begins.
    Transmission,
    /// The client aborted or broke the protocol; close the connection.
    Close,
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

/// Writes one option reply.
fn reply(w: &mut impl Write, opt: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut b = Vec::with_capacity(20 + data.len());
    b.extend_from_slice(&REP_MAGIC.to_be_bytes());
    b.extend_from_slice(&opt.to_be_bytes());
    b.extend_from_slice(&kind.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    w.write_all(&b)
}

/// Whether `data` is a well-formed `NBD_OPT_INFO`/`NBD_OPT_GO` payload:
/// name length, name, count of information requests, the requests.
fn info_request_ok(data: &[u8]) -> bool {
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return false;
    };
    let name_len = u32::from_be_bytes(*len) as usize;
    let Some(rest) = rest.get(name_len..) else {
        return false;
    };
    let Some((n, rest)) = rest.split_first_chunk::<2>() else {
        return false;
    };
    rest.len() == usize::from(u16::from_be_bytes(*n)) * 2
}

/// Answers `NBD_OPT_INFO`/`NBD_OPT_GO`: export size and flags, block sizes, ack.
fn send_info(w: &mut impl Write, opt: u32, size: u64) -> io::Result<()> {
    let mut export = Vec::with_capacity(12);
    export.extend_from_slice(&INFO_EXPORT.to_be_bytes());
    export.extend_from_slice(&size.to_be_bytes());
    export.extend_from_slice(&TRANSMISSION_FLAGS.to_be_bytes());
    reply(w, opt, REP_INFO, &export)?;
    let mut sizes = Vec::with_capacity(14);
    sizes.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
    sizes.extend_from_slice(&1u32.to_be_bytes());
    sizes.extend_from_slice(&PREFERRED_BLOCK.to_be_bytes());
    sizes.extend_from_slice(&MAX_PAYLOAD.to_be_bytes());
    reply(w, opt, REP_INFO, &sizes)?;
    reply(w, opt, REP_ACK, &[])
}

/// Runs the server side of the handshake for an export of `size` bytes.
/// Every export name is accepted: the server has one export. I/O errors
/// (the client went away) are returned; protocol errors end in `Close`.
pub fn negotiate(s: &mut (impl Read + Write), size: u64) -> io::Result<Outcome> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBD_MAGIC.to_be_bytes());
    hello.extend_from_slice(&OPT_MAGIC.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&hello)?;
    let client = read_u32(s)?;
    if client & !(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) != 0 {
        return Ok(Outcome::Close);
    }
    let no_zeroes = client & CLIENT_NO_ZEROES != 0;
    for _ in 0..MAX_OPTIONS {
        if read_u64(s)? != OPT_MAGIC {
            return Ok(Outcome::Close);
        }
        let opt = read_u32(s)?;
        let len = read_u32(s)?;
        if len > MAX_OPTION_BYTES {
            return Ok(Outcome::Close);
        }
        let mut data = vec![0u8; len as usize];
        s.read_exact(&mut data)?;
        match opt {
            OPT_EXPORT_NAME => {
                let mut b = Vec::with_capacity(10 + 124);
                b.extend_from_slice(&size.to_be_bytes());
                b.extend_from_slice(&TRANSMISSION_FLAGS.to_be_bytes());
                if !no_zeroes {
                    b.resize(b.len() + 124, 0);
                }
                s.write_all(&b)?;
                return Ok(Outcome::Transmission);
            }
            OPT_ABORT => {
                reply(s, opt, REP_ACK, &[])?;
                return Ok(Outcome::Close);
            }
            OPT_LIST if len == 0 => {
                reply(s, opt, REP_SERVER, &0u32.to_be_bytes())?;
                reply(s, opt, REP_ACK, &[])?;
            }
            OPT_INFO | OPT_GO if info_request_ok(&data) => {
                send_info(s, opt, size)?;
                if opt == OPT_GO {
                    return Ok(Outcome::Transmission);
                }
            }
            OPT_LIST | OPT_INFO | OPT_GO => reply(s, opt, REP_ERR_INVALID, &[])?,
            _ => reply(s, opt, REP_ERR_UNSUP, &[])?,
        }
        s.flush()?;
    }
    Ok(Outcome::Close)
}

#[cfg(test)]
mod tests {
    use super::super::Pipe;
    use super::*;
    use proptest::prelude::*;

    fn option(opt: u32, data: &[u8]) -> Vec<u8> {
        let mut b = OPT_MAGIC.to_be_bytes().to_vec();
        b.extend_from_slice(&opt.to_be_bytes());
        b.extend_from_slice(&(data.len() as u32).to_be_bytes());
        b.extend_from_slice(data);
        b
    }

    /// The reply types the server sent after the 18-byte greeting.
    fn reply_types(out: &[u8]) -> Vec<u32> {
        let mut v = Vec::new();
        let mut r = &out[18..];
        while r.len() >= 20 {
            v.push(u32::from_be_bytes(r[12..16].try_into().unwrap()));
            let len = u32::from_be_bytes(r[16..20].try_into().unwrap()) as usize;
            r = &r[(20 + len).min(r.len())..];
        }
        v
    }

    #[test]
    fn unknown_option_then_go() {
        let mut input = 3u32.to_be_bytes().to_vec();
        input.extend(option(8, &[])); // structured replies: not supported
        let mut go = 0u32.to_be_bytes().to_vec();
        go.extend_from_slice(&1u16.to_be_bytes());
        go.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        input.extend(option(OPT_GO, &go));
        let mut p = Pipe {
            input: &input,
            output: Vec::new(),
        };
        assert_eq!(negotiate(&mut p, 1 << 20).unwrap(), Outcome::Transmission);
        assert_eq!(
            reply_types(&p.output),
            [REP_ERR_UNSUP, REP_INFO, REP_INFO, REP_ACK]
        );
    }

    #[test]
    fn export_name_and_abort() {
        let mut input = 1u32.to_be_bytes().to_vec();
        input.extend(option(OPT_EXPORT_NAME, b""));
        let mut p = Pipe {
            input: &input,
            output: Vec::new(),
        };
        assert_eq!(negotiate(&mut p, 4096).unwrap(), Outcome::Transmission);
        assert_eq!(p.output.len(), 18 + 10 + 124);
        let mut input = 3u32.to_be_bytes().to_vec();
        input.extend(option(OPT_ABORT, &[]));
        let mut p = Pipe {
            input: &input,
            output: Vec::new(),
        };
        assert_eq!(negotiate(&mut p, 4096).unwrap(), Outcome::Close);
        assert_eq!(reply_types(&p.output), [REP_ACK]);
    }

    /// Every option reply after the greeting, as `(option, type)`; fails
    /// unless the output is the greeting followed by whole option replies.
    fn replies(out: &[u8]) -> Result<Vec<(u32, u32)>, TestCaseError> {
        prop_assert!(out.len() >= 18);
        let mut v = Vec::new();
        let mut r = &out[18..];
        while !r.is_empty() {
            prop_assert!(r.len() >= 20, "a whole reply header");
            prop_assert_eq!(u64::from_be_bytes(r[..8].try_into().unwrap()), REP_MAGIC);
            let word = |i: usize| u32::from_be_bytes(r[i..i + 4].try_into().unwrap());
            let len = word(16) as usize;
            v.push((word(8), word(12)));
            prop_assert!(r.len() >= 20 + len, "a whole reply payload");
            r = &r[20 + len..];
        }
        Ok(v)
    }

    /// An `NBD_OPT_INFO`/`NBD_OPT_GO` payload: name, information requests.
    fn info_payload(name: &[u8], infos: &[u16]) -> Vec<u8> {
        let mut b = (name.len() as u32).to_be_bytes().to_vec();
        b.extend_from_slice(name);
        b.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        for i in infos {
            b.extend_from_slice(&i.to_be_bytes());
        }
        b
    }

    /// Option payloads: random bytes, or well-formed info requests.
    fn option_data() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..64),
            (
                proptest::collection::vec(any::<u8>(), 0..16),
                proptest::collection::vec(any::<u16>(), 0..4)
            )
                .prop_map(|(n, i)| info_payload(&n, &i)),
        ]
    }

    proptest! {
        /// Random client bytes end the handshake one way or another, never
        /// in a panic, and whatever the server sent is well framed.
        #[test]
        fn random_handshakes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut p = Pipe { input: &bytes, output: Vec::new() };
            if negotiate(&mut p, 1 << 20).ok() != Some(Outcome::Transmission) {
                replies(&p.output)?;
            }
        }

        /// Each option after a valid greeting gets the reply the protocol
        /// defines: unknown options `NBD_REP_ERR_UNSUP`, malformed ones
        /// `NBD_REP_ERR_INVALID`; a stream ending after it is a clean close.
        #[test]
        fn options_get_the_protocol_reply(opt in prop_oneof![0u32..12, any::<u32>()], data in option_data(),
                                          no_zeroes in any::<bool>()) {
            let mut input = (1 | if no_zeroes { 2u32 } else { 0 }).to_be_bytes().to_vec();
            input.extend(option(opt, &data));
            let mut p = Pipe { input: &input, output: Vec::new() };
            let got = negotiate(&mut p, 1 << 20);
            if opt == OPT_EXPORT_NAME {
                prop_assert_eq!(got.ok(), Some(Outcome::Transmission));
                prop_assert_eq!(p.output.len(), 18 + 10 + if no_zeroes { 0 } else { 124 });
                return Ok(());
            }
            let want: Vec<(u32, u32)> = match opt {
                OPT_ABORT => vec![(opt, REP_ACK)],
                OPT_LIST if data.is_empty() => vec![(opt, REP_SERVER), (opt, REP_ACK)],
                OPT_INFO | OPT_GO if info_request_ok(&data) => vec![(opt, REP_INFO), (opt, REP_INFO), (opt, REP_ACK)],
                OPT_LIST | OPT_INFO | OPT_GO => vec![(opt, REP_ERR_INVALID)],
                _ => vec![(opt, REP_ERR_UNSUP)],
            };
            prop_assert_eq!(replies(&p.output)?, want);
            match opt {
                OPT_ABORT => prop_assert_eq!(got.ok(), Some(Outcome::Close)),
                OPT_GO if info_request_ok(&data) => prop_assert_eq!(got.ok(), Some(Outcome::Transmission)),
                // The client went quiet waiting for more: the connection ends.
                _ => prop_assert_eq!(got.map_err(|e| e.kind()).err(), Some(io::ErrorKind::UnexpectedEof)),
            }
        }

        /// Unknown client flags, a bad option magic or an oversized option
        /// close the connection without reading further or replying.
        #[test]
        fn protocol_violations_close(flags in 4u32.., magic in any::<u64>(), len in (MAX_OPTION_BYTES + 1)..) {
            let mut p = Pipe { input: &flags.to_be_bytes(), output: Vec::new() };
            prop_assert_eq!(negotiate(&mut p, 4096).ok(), Some(Outcome::Close));
            prop_assert_eq!(p.output.len(), 18);
            let mut input = 1u32.to_be_bytes().to_vec();
            input.extend_from_slice(&magic.to_be_bytes());
            input.extend_from_slice(&[0; 8]);
            let mut p = Pipe { input: &input, output: Vec::new() };
            let got = negotiate(&mut p, 4096).ok();
            prop_assert_eq!(got == Some(Outcome::Close), magic != OPT_MAGIC);
            let mut input = 1u32.to_be_bytes().to_vec();
            input.extend(option(OPT_GO, &[]));
            input[16..20].copy_from_slice(&len.to_be_bytes());
            let mut p = Pipe { input: &input, output: Vec::new() };
            prop_assert_eq!(negotiate(&mut p, 4096).ok(), Some(Outcome::Close));
            prop_assert_eq!(p.output.len(), 18);
        }
    }
}

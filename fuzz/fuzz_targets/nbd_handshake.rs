//! The NBD option haggling: any client bytes end the handshake one way or
//! another, never in a panic, and the server's bytes are whole replies.
#![no_main]

use ftl_cli::nbd::handshake::{self, Outcome};
use ftl_cli::nbd::proto::REP_MAGIC;
use ftl_cli::nbd::Pipe;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut p = Pipe {
        input: data,
        output: Vec::new(),
    };
    let got = handshake::negotiate(&mut p, 1 << 30);
    assert!(p.output.len() >= 18, "the greeting is always sent");
    if matches!(got, Ok(Outcome::Transmission)) {
        return;
    }
    // Without transmission, everything after the greeting is option replies.
    let mut r = &p.output[18..];
    while !r.is_empty() {
        assert!(r.len() >= 20, "a whole reply header");
        assert_eq!(r[..8], REP_MAGIC.to_be_bytes());
        let len = u32::from_be_bytes([r[16], r[17], r[18], r[19]]) as usize;
        assert!(r.len() >= 20 + len, "a whole reply payload");
        r = &r[20 + len..];
    }
});

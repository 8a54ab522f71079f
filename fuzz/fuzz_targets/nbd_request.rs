//! NBD transmission requests: any byte stream yields requests and then an
//! end, never a panic, and never more requests than whole headers.
#![no_main]

use ftl_cli::nbd::proto::{self, Action, BlockOp, End, REQUEST_BYTES};
use libfuzzer_sys::fuzz_target;

/// Export sizes the requests are checked against.
const SIZES: [u64; 4] = [0, 4096, 1 << 30, u64::MAX];

fuzz_target!(|data: &[u8]| {
    let Some((&k, mut rest)) = data.split_first() else {
        return;
    };
    let size = SIZES[usize::from(k & 3)];
    let total = rest.len();
    let mut n = 0usize;
    loop {
        match proto::next_request(&mut rest, size) {
            Ok(inc) => {
                n += 1;
                assert!(n * REQUEST_BYTES <= total, "more requests than headers");
                if let Action::Op(
                    BlockOp::Read { offset, len } | BlockOp::Zero { offset, len, .. },
                ) = inc.action
                {
                    assert!(offset
                        .checked_add(u64::from(len))
                        .is_some_and(|e| e <= size));
                }
                if let Action::Op(BlockOp::Write { offset, data, .. }) = inc.action {
                    assert!(data.len() <= proto::MAX_PAYLOAD as usize);
                    assert!(offset
                        .checked_add(data.len() as u64)
                        .is_some_and(|e| e <= size));
                }
            }
            Err(End::Eof | End::Broken | End::BadMagic) => break,
        }
    }
});

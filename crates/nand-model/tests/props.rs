//! Property tests: the medium accepts exactly the in-order, once-per-erase
//! programs and reads back what was programmed.

mod common;

use common::small_geo;
use firmware_core::{BlockId, Lpn, Nand, NandError, PageKind, Spare, UnitMask};
use nand_model::{FaultConfig, Medium, ReliabilityConfig};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Program the block's next page.
    Next {
        block: u32,
        spare: Spare,
        data: [u64; 2],
    },
    /// Program an arbitrary page.
    At {
        block: u32,
        page: u32,
        spare: Spare,
        data: [u64; 2],
    },
    Erase {
        block: u32,
    },
    Read {
        block: u32,
        page: u32,
        mask: u8,
    },
}

const BLOCKS: u32 = 4;
const PAGES: u32 = 16;

fn spare_strategy() -> impl Strategy<Value = Spare> {
    (any::<u64>(), 0u8..4, 0u8..4, any::<u32>(), any::<u32>()).prop_map(|(seq, k, mask, l0, l1)| {
        let mut s = Spare {
            seq,
            kind: [PageKind::Data, PageKind::Map, PageKind::Meta, PageKind::Pad][k as usize],
            units: UnitMask(mask),
            ..Spare::default()
        };
        s.lpns[0] = Lpn(l0);
        s.lpns[1] = Lpn(l1);
        s
    })
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..BLOCKS, spare_strategy(), any::<[u64; 2]>())
            .prop_map(|(block, spare, data)| Op::Next { block, spare, data }),
        2 => (0..BLOCKS, 0..PAGES, spare_strategy(), any::<[u64; 2]>())
            .prop_map(|(block, page, spare, data)| Op::At { block, page, spare, data }),
        1 => (0..BLOCKS).prop_map(|block| Op::Erase { block }),
        4 => (0..BLOCKS, 0..PAGES, 0u8..4).prop_map(|(block, page, mask)| Op::Read { block, page, mask }),
    ]
}

/// What a written page holds: its spare and the stamp of each unit (0 if unmasked).
type Written = Option<(Spare, [u64; 2])>;

/// The reference: per block the next page and what each written page holds.
struct Reference {
    next: Vec<u32>,
    pages: Vec<Vec<Written>>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn program_order_and_read_back(ops in proptest::collection::vec(op_strategy(), 1..300)) {
        let geo = small_geo();
        let mut m = Medium::new(geo, ReliabilityConfig::default(), FaultConfig::default()).unwrap();
        let mut r = Reference {
            next: vec![0; BLOCKS as usize],
            pages: vec![vec![None; PAGES as usize]; BLOCKS as usize],
        };
        for op in ops {
            match op {
                Op::Next { block, spare, data } | Op::At { block, spare, data, .. }
                    if matches!(op, Op::Next { .. }) || matches!(op, Op::At { page, .. } if page == r.next[block as usize]) => {
                    let b = block as usize;
                    let page = r.next[b];
                    if page >= PAGES {
                        // Block full: any program is out of order.
                        let p = geo.ppn(BlockId(block), PAGES - 1);
                        prop_assert_eq!(m.program(p, &data, &spare), Err(NandError::ProgramOrder));
                        continue;
                    }
                    let n = spare.units.count() as usize;
                    let p = geo.ppn(BlockId(block), page);
                    prop_assert!(m.program(p, &data[..n], &spare).is_ok());
                    // What reads back: the masked units in order, 0 elsewhere.
                    let mut stored = [0u64; 2];
                    let mut k = 0;
                    for (i, s) in stored.iter_mut().enumerate() {
                        if spare.units.contains(i as u8) {
                            *s = data[k];
                            k += 1;
                        }
                    }
                    r.pages[b][page as usize] = Some((spare, stored));
                    r.next[b] = page + 1;
                }
                Op::At { block, page, spare, data } => {
                    let p = geo.ppn(BlockId(block), page);
                    prop_assert_eq!(m.program(p, &data, &spare), Err(NandError::ProgramOrder));
                }
                Op::Next { .. } => unreachable!(),
                Op::Erase { block } => {
                    prop_assert!(m.erase(BlockId(block)).is_ok());
                    r.next[block as usize] = 0;
                    r.pages[block as usize] = vec![None; PAGES as usize];
                }
                Op::Read { block, page, mask } => {
                    let p = geo.ppn(BlockId(block), page);
                    let mut out = [u64::MAX; 2];
                    let got = m.read(p, UnitMask(mask), &mut out);
                    match &r.pages[block as usize][page as usize] {
                        None => prop_assert_eq!(got, Err(NandError::Erased)),
                        Some((spare, stored)) => {
                            let rep = got.unwrap();
                            prop_assert_eq!(&rep.spare, spare);
                            let want: Vec<u64> = (0..2u8)
                                .filter(|&i| UnitMask(mask).contains(i))
                                .map(|i| stored[i as usize])
                                .collect();
                            prop_assert_eq!(&out[..want.len()], &want[..]);
                        }
                    }
                }
            }
        }
        for b in 0..BLOCKS {
            prop_assert_eq!(m.block_status(BlockId(b)).unwrap().next_page, r.next[b as usize]);
        }
    }
}

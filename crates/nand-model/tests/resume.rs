//! A medium saved as record bytes and resumed reads back as it was: data,
//! spare areas, write pointers, erase counts and torn pages.

mod common;

use common::{small_geo, spare};
use firmware_core::{BlockId, Nand, NandError, UnitMask};
use nand_model::{
    BlockRec, FaultConfig, Medium, PageRec, ReliabilityConfig, SimMedium, Storage, TornProgram,
    UnitRec, VecStorage,
};

/// Every record through its bytes, into a resumed medium.
fn round_trip(m: &SimMedium) -> SimMedium {
    let geo = *m.geometry();
    let (b, p, u) = m.storage().split();
    let blocks = b
        .iter()
        .map(|r| BlockRec::from_bytes(&r.to_bytes()))
        .collect();
    let pages = p
        .iter()
        .map(|r| PageRec::from_bytes(&r.to_bytes()))
        .collect();
    let units = u
        .iter()
        .map(|r| UnitRec::from_bytes(&r.to_bytes()))
        .collect();
    let store = VecStorage::from_records(&geo, blocks, pages, units);
    Medium::resume(geo, *m.reliability(), *m.faults(), store).unwrap()
}

#[test]
fn a_resumed_medium_is_the_saved_one() {
    let geo = small_geo();
    let mut m = SimMedium::new(geo, ReliabilityConfig::default(), FaultConfig::default()).unwrap();
    let p = |b: u32, i: u32| geo.ppn(BlockId(b), i);
    let full = UnitMask::full(geo.units_per_page);
    m.program(p(1, 0), &[11, 12], &spare(7, 0b11)).unwrap();
    m.program(p(1, 1), &[21, 22], &spare(8, 0b11)).unwrap();
    m.erase(BlockId(2)).unwrap();
    m.erase(BlockId(2)).unwrap();
    m.tear_program(
        p(3, 0),
        &[1, 2],
        &spare(9, 0b11),
        TornProgram::Uncorrectable,
    )
    .unwrap();
    let mut r = round_trip(&m);
    let mut out = [0u64; 2];
    let rep = r.read(p(1, 1), full, &mut out).unwrap();
    assert_eq!(out, [21, 22]);
    assert_eq!(rep.spare.seq, 8);
    assert_eq!(r.read(p(1, 2), full, &mut out), Err(NandError::Erased));
    assert_eq!(r.pe_count(BlockId(2)), m.pe_count(BlockId(2)));
    assert_eq!(r.pe_count(BlockId(2)), 2);
    assert_eq!(
        r.read(p(3, 0), full, &mut out),
        Err(NandError::Uncorrectable)
    );
    // Program order continues where it was.
    assert_eq!(
        r.program(p(1, 1), &[1, 2], &spare(10, 0b11)),
        Err(NandError::ProgramOrder)
    );
    r.program(p(1, 2), &[31, 32], &spare(10, 0b11)).unwrap();
    // Block quality survives: the same expected errors page by page.
    for b in 0..geo.total_blocks() {
        assert_eq!(r.block_quality(BlockId(b)), m.block_quality(BlockId(b)));
    }
}

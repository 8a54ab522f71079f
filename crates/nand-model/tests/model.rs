//! Behavioural tests of the medium: rules, reliability, faults, backends.

mod common;

use common::{small_geo, spare};
use firmware_core::{BlockId, DieId, Geometry, Nand, NandError, Ppn, Spare, UnitMask};
use nand_model::{
    BlockRec, DieFailure, DieFailureAt, FaultConfig, LentMeta, LentStorage, Medium, PageRec,
    QualityClass, ReliabilityConfig, SimMedium, StorageSizes, TornProgram, UnitRec,
    MAX_DIE_FAILURES,
};
use test_kit::rng::Lcg64;

fn medium() -> SimMedium {
    Medium::new(
        small_geo(),
        ReliabilityConfig::default(),
        FaultConfig::default(),
    )
    .unwrap()
}

/// Page `page` of block `b` in the small geometry.
fn pp(b: u32, page: u32) -> Ppn {
    small_geo().ppn(BlockId(b), page)
}

/// Programs page `page` of block `b` with both units, stamps derived from `seq`.
fn prog(m: &mut SimMedium, b: u32, page: u32, seq: u64) -> Result<(), NandError> {
    let p = pp(b, page);
    m.program(p, &[seq * 10, seq * 10 + 1], &spare(seq, 0b11))
        .map(|_| ())
}

fn read_all(m: &mut SimMedium, p: Ppn) -> Result<([u64; 2], u16, Spare), NandError> {
    let mut out = [0u64; 2];
    let r = m.read(p, UnitMask(0b11), &mut out)?;
    Ok((out, r.bit_errors, r.spare))
}

#[test]
fn erased_reads_and_round_trip() {
    let mut m = medium();
    let p0 = pp(0, 0);
    assert_eq!(read_all(&mut m, p0), Err(NandError::Erased));
    prog(&mut m, 0, 0, 5).unwrap();
    let (out, _, sp) = read_all(&mut m, p0).unwrap();
    assert_eq!(out, [50, 51]);
    assert_eq!(sp, spare(5, 0b11));
    assert_eq!(read_all(&mut m, pp(0, 1)), Err(NandError::Erased));
    m.erase(BlockId(0)).unwrap();
    assert_eq!(read_all(&mut m, p0), Err(NandError::Erased));
    assert_eq!(m.pe_count(BlockId(0)), 1);
    assert_eq!(m.stats().erased_reads, 3);
}

#[test]
fn first_page_header_erase_count_and_tag_read_back_from_every_page() {
    let mut m = medium();
    let head = Spare {
        erase_count: 9,
        tag: 3,
        ..spare(1, 0b11)
    };
    m.program(pp(0, 0), &[1, 2], &head).unwrap();
    let later = Spare {
        erase_count: 4,
        tag: 6,
        ..spare(2, 0b11)
    };
    m.program(pp(0, 1), &[3, 4], &later).unwrap();
    for page in 0..2 {
        let (_, _, sp) = read_all(&mut m, pp(0, page)).unwrap();
        assert_eq!((sp.erase_count, sp.tag), (9, 3), "page {page}");
    }
    // A copyback writes the destination block's header from its new spare
    // area and reports the source's.
    let moved = Spare {
        erase_count: 2,
        tag: 5,
        ..spare(3, 0b11)
    };
    let r = m.copyback(pp(0, 1), pp(1, 0), &moved).unwrap();
    assert_eq!((r.spare.erase_count, r.spare.tag), (9, 3));
    let (_, _, sp) = read_all(&mut m, pp(1, 0)).unwrap();
    assert_eq!((sp.erase_count, sp.tag), (2, 5));
}

#[test]
fn partial_masks() {
    let mut m = medium();
    let p = pp(3, 0);
    m.program(p, &[99], &spare(1, 0b10)).unwrap();
    let mut out = [7u64; 2];
    let r = m.read(p, UnitMask(0b11), &mut out).unwrap();
    assert_eq!(out, [0, 99]);
    assert_eq!(r.spare.units, UnitMask(0b10));
    let mut one = [0u64; 1];
    m.read(p, UnitMask(0b10), &mut one).unwrap();
    assert_eq!(one, [99]);
}

#[test]
fn program_order_enforced() {
    let mut m = medium();
    assert_eq!(prog(&mut m, 1, 1, 1), Err(NandError::ProgramOrder));
    prog(&mut m, 1, 0, 1).unwrap();
    assert_eq!(prog(&mut m, 1, 0, 2), Err(NandError::ProgramOrder));
    assert_eq!(prog(&mut m, 1, 2, 2), Err(NandError::ProgramOrder));
    prog(&mut m, 1, 1, 2).unwrap();
    m.erase(BlockId(1)).unwrap();
    prog(&mut m, 1, 0, 3).unwrap();
}

#[test]
fn bad_addresses() {
    let mut m = medium();
    let total = m.geometry().total_pages();
    assert_eq!(
        m.program(Ppn(total), &[1, 2], &spare(1, 0b11)),
        Err(NandError::BadAddress)
    );
    // Unit 2 does not exist with two units per page.
    assert_eq!(
        m.program(Ppn(0), &[1, 2, 3], &spare(1, 0b111)),
        Err(NandError::BadAddress)
    );
    // Too little data for the mask.
    assert_eq!(
        m.program(Ppn(0), &[1], &spare(1, 0b11)),
        Err(NandError::BadAddress)
    );
    let mut out = [0u64; 1];
    assert_eq!(
        m.read(Ppn(0), UnitMask(0b11), &mut out),
        Err(NandError::BadAddress)
    );
    assert_eq!(
        m.erase(BlockId(m.geometry().total_blocks())),
        Err(NandError::BadAddress)
    );
    assert_eq!(
        m.copyback(Ppn(0), Ppn(total), &spare(1, 1)),
        Err(NandError::BadAddress)
    );
    // Nothing above consumed page 0.
    prog(&mut m, 0, 0, 1).unwrap();
}

#[test]
fn copyback_rules() {
    let mut m = medium();
    prog(&mut m, 0, 0, 1).unwrap();
    let src = pp(0, 0);
    // Block 16 is in plane 1: across planes.
    assert_eq!(
        m.copyback(src, pp(16, 0), &spare(2, 0b11)),
        Err(NandError::BadAddress)
    );
    // Destination out of order.
    assert_eq!(
        m.copyback(src, pp(1, 1), &spare(2, 0b11)),
        Err(NandError::ProgramOrder)
    );
    // Erased source: the destination is consumed and reads nothing.
    assert_eq!(
        m.copyback(pp(0, 5), pp(2, 0), &spare(2, 0b11)),
        Err(NandError::Erased)
    );
    assert_eq!(read_all(&mut m, pp(2, 0)), Err(NandError::Uncorrectable));
    assert_eq!(prog(&mut m, 2, 0, 3), Err(NandError::ProgramOrder));
    let rep = m.copyback(src, pp(1, 0), &spare(2, 0b01)).unwrap();
    assert_eq!(rep.spare, spare(1, 0b11), "report carries the source spare");
    let (out, _, sp) = read_all(&mut m, pp(1, 0)).unwrap();
    assert_eq!(out, [10, 0], "unit outside the new mask reads 0");
    assert_eq!(sp, spare(2, 0b01));
    // Destination page is now written.
    assert_eq!(prog(&mut m, 1, 0, 3), Err(NandError::ProgramOrder));
    prog(&mut m, 1, 1, 3).unwrap();
    assert_eq!(m.stats().copybacks, 4);
}

#[test]
fn copyback_accumulates_and_program_clears() {
    let mut m = Medium::new(
        small_geo(),
        ReliabilityConfig::flat(5.0),
        FaultConfig::default(),
    )
    .unwrap();
    prog(&mut m, 0, 0, 1).unwrap();
    let a = pp(0, 0);
    assert_eq!(read_all(&mut m, a).unwrap().1, 5);
    // Chain copybacks within plane 0: 5, 10, 15, ... carried errors.
    let mut src = a;
    for gen in 1..=7u32 {
        let dst = pp(1, gen - 1);
        let rep = m.copyback(src, dst, &spare(1, 0b11)).unwrap();
        assert_eq!(u32::from(rep.bit_errors), 5 * gen, "source raw errors");
        let (out, e, _) = read_all(&mut m, dst).unwrap();
        assert_eq!(out, [10, 11]);
        assert_eq!(u32::from(e), 5 * (gen + 1));
        src = dst;
    }
    // Generation 7 holds 35 carried errors: reads 40 (limit), a further copy 45.
    let dst = pp(1, 7);
    assert_eq!(
        m.copyback(src, dst, &spare(1, 0b11)).unwrap().bit_errors,
        40
    );
    assert_eq!(read_all(&mut m, dst), Err(NandError::Uncorrectable));
    // Nothing corrects on the way: the copy is made, 45 errors and unreadable.
    assert_eq!(
        m.copyback(dst, pp(1, 8), &spare(1, 0b11))
            .unwrap()
            .bit_errors,
        45
    );
    assert_eq!(
        m.block_status(BlockId(1)).unwrap().next_page,
        9,
        "the destination is consumed"
    );
    assert_eq!(read_all(&mut m, pp(1, 8)), Err(NandError::Uncorrectable));
    // A normal program of the (controller-corrected) data starts clean.
    let (out, _, _) = read_all(&mut m, src).unwrap();
    m.program(pp(1, 9), &out, &spare(1, 0b11)).unwrap();
    assert_eq!(read_all(&mut m, pp(1, 9)).unwrap().1, 5);
    assert_eq!(m.stats().uncorrectable_reads, 2);
    assert_eq!(m.stats().uncorrectable_copybacks, 1);
}

/// Programs every page of `b` once and returns (mean, max) bit errors over
/// `rounds` reads of every page at P/E `pe`, or None if any read failed.
fn errors_at(m: &mut SimMedium, b: u32, pe: u32, rounds: u32) -> Option<(f64, u16)> {
    if m.block_status(BlockId(b)).unwrap().next_page == 0 {
        for page in 0..m.geometry().pages_per_block {
            prog(m, b, page, u64::from(page)).unwrap();
        }
    }
    m.set_pe(BlockId(b), pe).unwrap();
    let (mut sum, mut n, mut max) = (0u64, 0u64, 0u16);
    for _ in 0..rounds {
        for page in 0..m.geometry().pages_per_block {
            let e = read_all(m, pp(b, page)).ok()?.1;
            sum += u64::from(e);
            n += 1;
            max = max.max(e);
        }
    }
    Some((sum as f64 / n as f64, max))
}

fn find_block(m: &SimMedium, class: QualityClass) -> u32 {
    (0..m.geometry().total_blocks())
        .find(|&b| m.block_quality(BlockId(b)).class == class)
        .expect("no block of the class")
}

#[test]
fn errors_grow_with_wear_and_stay_correctable_at_rated() {
    let mut m = medium();
    let b = find_block(&m, QualityClass::Median);
    let mut last = -1.0;
    for pe in [0, 1000, 2000, 3000] {
        let (avg, max) = errors_at(&mut m, b, pe, 20).expect("correctable");
        assert!(avg > last, "pe {pe}: {avg} <= {last}");
        if pe == 0 {
            assert!(avg < 2.0 && max <= 3, "fresh block: avg {avg} max {max}");
        }
        if pe == 3000 {
            assert!(avg > 20.0 && max <= 40, "rated: avg {avg} max {max}");
        }
        last = avg;
    }
}

#[test]
fn worst_class_has_more_errors_than_best() {
    let mut m = medium();
    let best = find_block(&m, QualityClass::Best);
    let worst = find_block(&m, QualityClass::Worst);
    assert!(m.block_quality(BlockId(worst)).factor > m.block_quality(BlockId(best)).factor);
    let (b, _) = errors_at(&mut m, best, 2000, 20).unwrap();
    let (w, _) = errors_at(&mut m, worst, 2000, 20).unwrap();
    assert!(w > 1.4 * b, "worst {w} best {b}");
}

#[test]
fn far_beyond_rated_is_uncorrectable() {
    let mut m = medium();
    for page in 0..4 {
        prog(&mut m, 2, page, 1).unwrap();
    }
    m.set_initial_pe(4 * 3000);
    for page in 0..4 {
        assert_eq!(read_all(&mut m, pp(2, page)), Err(NandError::Uncorrectable));
    }
    assert_eq!(m.stats().uncorrectable_reads, 4);
    assert_eq!(m.pe_count(BlockId(40)), 12000);
}

#[test]
fn retention_and_wordlines_raise_errors() {
    let mut m = medium();
    let p_mid = pp(0, 8);
    let p_edge = pp(0, 0);
    let p_upper = pp(0, 9);
    let mid = m.expected_bit_errors(p_mid).unwrap();
    assert!(m.expected_bit_errors(p_edge).unwrap() > mid);
    assert!(m.expected_bit_errors(p_upper).unwrap() > mid);
    m.set_retention_months(12.0).unwrap();
    assert!(m.expected_bit_errors(p_mid).unwrap() > mid);
    assert!(m.set_retention_months(f32::NAN).is_err());
}

#[test]
fn factory_bad_blocks() {
    let fault = FaultConfig {
        factory_bad_fraction: 0.25,
        ..FaultConfig::default()
    };
    let mut m = Medium::new(small_geo(), ReliabilityConfig::default(), fault).unwrap();
    let bad: Vec<u32> = (0..64)
        .filter(|&b| m.block_status(BlockId(b)).unwrap().factory_bad)
        .collect();
    assert!((6..=28).contains(&bad.len()), "{} bad blocks", bad.len());
    let good = (0..64).find(|b| !bad.contains(b)).unwrap();
    for &b in &bad {
        assert_eq!(m.erase(BlockId(b)), Err(NandError::FactoryBad));
        assert_eq!(prog(&mut m, b, 0, 1), Err(NandError::FactoryBad));
        assert_eq!(read_all(&mut m, pp(b, 0)), Err(NandError::FactoryBad));
    }
    prog(&mut m, good, 0, 1).unwrap();
    // Same seed, same marks.
    let m2 = Medium::new(small_geo(), ReliabilityConfig::default(), fault).unwrap();
    let bad2: Vec<u32> = (0..64)
        .filter(|&b| m2.block_status(BlockId(b)).unwrap().factory_bad)
        .collect();
    assert_eq!(bad, bad2);
    m.mark_factory_bad(BlockId(good)).unwrap();
    assert_eq!(m.erase(BlockId(good)), Err(NandError::FactoryBad));
}

#[test]
fn scheduled_program_failure() {
    let mut m = medium();
    prog(&mut m, 4, 0, 1).unwrap();
    prog(&mut m, 4, 1, 2).unwrap();
    m.fail_next_program(BlockId(4)).unwrap();
    assert_eq!(prog(&mut m, 4, 2, 3), Err(NandError::ProgramFailed));
    assert!(m.block_status(BlockId(4)).unwrap().grown_bad);
    assert_eq!(read_all(&mut m, pp(4, 0)).unwrap().0, [10, 11]);
    assert_eq!(read_all(&mut m, pp(4, 1)).unwrap().0, [20, 21]);
    assert_eq!(read_all(&mut m, pp(4, 2)), Err(NandError::Uncorrectable));
    assert_eq!(prog(&mut m, 4, 3, 4), Err(NandError::ProgramFailed));
    assert_eq!(m.erase(BlockId(4)), Err(NandError::EraseFailed));
    assert_eq!(read_all(&mut m, pp(4, 1)).unwrap().0, [20, 21]);
    // Copyback into a grown bad block fails too; other blocks are unaffected.
    assert_eq!(
        m.copyback(pp(4, 0), pp(4, 3), &spare(1, 3)),
        Err(NandError::ProgramFailed)
    );
    m.copyback(pp(4, 0), pp(5, 0), &spare(1, 3)).unwrap();
    assert_eq!(m.stats().program_failures, 3);
}

#[test]
fn scheduled_erase_failure() {
    let mut m = medium();
    prog(&mut m, 6, 0, 1).unwrap();
    m.fail_next_erase(BlockId(6)).unwrap();
    assert_eq!(m.erase(BlockId(6)), Err(NandError::EraseFailed));
    assert_eq!(read_all(&mut m, pp(6, 0)).unwrap().0, [10, 11]);
    assert_eq!(prog(&mut m, 6, 1, 2), Err(NandError::ProgramFailed));
    assert_eq!(m.erase(BlockId(6)), Err(NandError::EraseFailed));
    assert_eq!(m.pe_count(BlockId(6)), 0);
    m.erase(BlockId(7)).unwrap();
}

#[test]
fn random_failures_are_seeded() {
    let always = FaultConfig {
        program_fail_prob: 1.0,
        ..FaultConfig::default()
    };
    let mut m = Medium::new(small_geo(), ReliabilityConfig::default(), always).unwrap();
    assert_eq!(prog(&mut m, 0, 0, 1), Err(NandError::ProgramFailed));

    let some = FaultConfig {
        program_fail_prob: 0.2,
        erase_fail_prob: 0.2,
        ..FaultConfig::default()
    };
    let run = || {
        let mut m = Medium::new(small_geo(), ReliabilityConfig::default(), some).unwrap();
        let mut res = Vec::new();
        for b in 0..64 {
            res.push(prog(&mut m, b, 0, 1).is_ok());
            res.push(m.erase(BlockId(b)).is_ok());
        }
        res
    };
    let a = run();
    assert_eq!(a, run());
    let fails = a.iter().filter(|ok| !**ok).count();
    assert!((8..=50).contains(&fails), "{fails} failures");
}

#[test]
fn die_failure() {
    let mut m = medium();
    // Die 1 holds blocks 32..64.
    prog(&mut m, 32, 0, 1).unwrap();
    prog(&mut m, 0, 0, 1).unwrap();
    m.fail_die(DieId(1)).unwrap();
    assert_eq!(read_all(&mut m, pp(32, 0)), Err(NandError::DieFailed));
    assert_eq!(prog(&mut m, 63, 0, 1), Err(NandError::DieFailed));
    assert_eq!(m.erase(BlockId(40)), Err(NandError::DieFailed));
    assert_eq!(
        m.copyback(pp(32, 0), pp(33, 0), &spare(1, 3)),
        Err(NandError::DieFailed)
    );
    read_all(&mut m, pp(0, 0)).unwrap();
    prog(&mut m, 31, 0, 1).unwrap();
    assert_eq!(m.fail_die(DieId(2)), Err(NandError::BadAddress));
}

/// Scheduled die failures give the status errors the FTL already handles,
/// from their operation count on, and leave the other die alone.
#[test]
fn scheduled_die_failure_by_op_count() {
    let mut m = medium();
    prog(&mut m, 32, 0, 1).unwrap(); // op 0
    prog(&mut m, 0, 0, 1).unwrap(); // op 1
    m.schedule_die_failure(DieFailure {
        channel: 0,
        die: 1,
        at: DieFailureAt::Op(3),
    })
    .unwrap();
    read_all(&mut m, pp(32, 0)).unwrap(); // op 2: still alive
    assert!(!m.is_die_failed(DieId(1)));
    assert_eq!(m.op_count(), 3);
    assert_eq!(read_all(&mut m, pp(32, 0)), Err(NandError::Uncorrectable));
    assert!(m.is_die_failed(DieId(1)));
    assert!(m.block_status(BlockId(40)).unwrap().die_failed);
    assert_eq!(prog(&mut m, 33, 0, 1), Err(NandError::ProgramFailed));
    assert_eq!(m.erase(BlockId(40)), Err(NandError::EraseFailed));
    assert_eq!(m.tear_erase(BlockId(41)), Err(NandError::EraseFailed));
    assert_eq!(
        m.copyback(pp(32, 0), pp(34, 0), &spare(1, 3)),
        Err(NandError::Uncorrectable)
    );
    let st = *m.stats();
    assert_eq!(st.uncorrectable_reads, 1);
    assert_eq!(st.program_failures, 1);
    assert_eq!(st.erase_failures, 2);
    assert_eq!(st.uncorrectable_copybacks, 1);
    // Die 0 keeps working.
    read_all(&mut m, pp(0, 0)).unwrap();
    prog(&mut m, 0, 1, 2).unwrap();
    m.erase(BlockId(1)).unwrap();
    assert!(!m.is_die_failed(DieId(0)));
}

/// Dies fail at their own simulated times; several can be pending.
#[test]
fn scheduled_die_failures_by_time() {
    let geo = Geometry {
        channels: 2,
        ..small_geo()
    };
    let mut m = Medium::new(geo, ReliabilityConfig::default(), FaultConfig::default()).unwrap();
    let per_die = 32; // 2 planes x 16 blocks
    let first = |d: u32| d * per_die;
    for (channel, die, t) in [(1, 0, 2_000), (0, 1, 1_000)] {
        m.schedule_die_failure(DieFailure {
            channel,
            die,
            at: DieFailureAt::TimeNs(t),
        })
        .unwrap();
    }
    for d in 0..4 {
        m.program(geo.ppn(BlockId(first(d)), 0), &[1, 2], &spare(1, 3))
            .unwrap();
    }
    m.set_time_ns(999);
    assert!((0..4).all(|d| !m.is_die_failed(DieId(d))));
    m.set_time_ns(1_000);
    assert_eq!(m.time_ns(), 1_000);
    let dead: Vec<bool> = (0..4).map(|d| m.is_die_failed(DieId(d))).collect();
    assert_eq!(dead, [false, true, false, false]);
    m.set_time_ns(5_000);
    let dead: Vec<bool> = (0..4).map(|d| m.is_die_failed(DieId(d))).collect();
    assert_eq!(dead, [false, true, true, false]);
    let mut out = [0u64; 2];
    for d in 0..4 {
        let r = m.read(geo.ppn(BlockId(first(d)), 0), UnitMask(0b11), &mut out);
        if d == 1 || d == 2 {
            assert_eq!(r, Err(NandError::Uncorrectable), "die {d}");
        } else {
            assert_eq!(out, [1, 2], "die {d}");
        }
    }
    // A failure already due fires at once.
    m.schedule_die_failure(DieFailure {
        channel: 1,
        die: 1,
        at: DieFailureAt::TimeNs(10),
    })
    .unwrap();
    assert!(m.is_die_failed(DieId(3)));
}

#[test]
fn die_failure_schedule_limits() {
    let mut m = medium();
    let at = |channel, die| DieFailure {
        channel,
        die,
        at: DieFailureAt::Op(u64::MAX),
    };
    assert!(m.schedule_die_failure(at(1, 0)).is_err());
    assert!(m.schedule_die_failure(at(0, 2)).is_err());
    for _ in 0..MAX_DIE_FAILURES {
        m.schedule_die_failure(at(0, 0)).unwrap();
    }
    assert!(m.schedule_die_failure(at(0, 1)).is_err());
    assert!(!m.is_die_failed(DieId(0)));
    assert!(!m.is_die_failed(DieId(9)));
}

#[test]
fn torn_program() {
    let mut m = medium();
    let s = spare(1, 0b11);
    m.tear_program(pp(8, 0), &[1, 2], &s, TornProgram::Unprogrammed)
        .unwrap();
    assert_eq!(read_all(&mut m, pp(8, 0)), Err(NandError::Erased));
    assert_eq!(prog(&mut m, 8, 0, 1), Err(NandError::ProgramOrder));
    m.tear_program(pp(8, 1), &[1, 2], &s, TornProgram::Uncorrectable)
        .unwrap();
    assert_eq!(read_all(&mut m, pp(8, 1)), Err(NandError::Uncorrectable));
    m.tear_program(pp(8, 2), &[1, 2], &s, TornProgram::Intact)
        .unwrap();
    assert_eq!(read_all(&mut m, pp(8, 2)).unwrap().0, [1, 2]);
    assert_eq!(
        m.tear_program(pp(8, 5), &[1, 2], &s, TornProgram::Intact),
        Err(NandError::ProgramOrder)
    );
    prog(&mut m, 8, 3, 4).unwrap();
}

#[test]
fn torn_erase() {
    let mut m = medium();
    for page in 0..12 {
        prog(&mut m, 9, page, 1).unwrap();
    }
    m.tear_erase(BlockId(9)).unwrap();
    let mut erased = 0;
    let mut bad = 0;
    for page in 0..16 {
        match read_all(&mut m, pp(9, page)) {
            Err(NandError::Erased) => erased += 1,
            Err(NandError::Uncorrectable) => bad += 1,
            other => panic!("page {page}: {other:?}"),
        }
    }
    assert!(erased > 4 && bad > 0, "erased {erased} uncorrectable {bad}");
    assert!(m.block_status(BlockId(9)).unwrap().erase_torn);
    assert_eq!(prog(&mut m, 9, 0, 1), Err(NandError::ProgramOrder));
    assert_eq!(prog(&mut m, 9, 12, 1), Err(NandError::ProgramOrder));
    m.erase(BlockId(9)).unwrap();
    prog(&mut m, 9, 0, 1).unwrap();
    assert_eq!(m.pe_count(BlockId(9)), 2);
}

#[test]
fn stats_count_operations() {
    let mut m = medium();
    prog(&mut m, 0, 0, 1).unwrap();
    let _ = prog(&mut m, 0, 0, 1);
    let _ = read_all(&mut m, pp(0, 0));
    let _ = read_all(&mut m, pp(0, 1));
    m.erase(BlockId(1)).unwrap();
    let s = *m.stats();
    assert_eq!(
        (s.programs, s.reads, s.erases, s.erased_reads),
        (2, 2, 1, 1)
    );
    assert!(s.max_bit_errors as u64 <= s.bit_errors_sum + 1);
    m.reset_stats();
    assert_eq!(m.stats().reads, 0);
}

/// A fixed mixed workload; returns every result and the final block states.
fn scenario<S: nand_model::Storage>(m: &mut Medium<S>) -> Vec<String> {
    let g = *m.geometry();
    let mut log = Vec::new();
    let mut rng = Lcg64::new(12345, Lcg64::MMIX_INCREMENT);
    let mut next = |n: u32| rng.below_high(u64::from(n)) as u32;
    m.fail_next_program(BlockId(3)).unwrap();
    m.fail_next_erase(BlockId(5)).unwrap();
    m.set_initial_pe(2500);
    for i in 0..4000u64 {
        let b = next(g.total_blocks());
        let page = next(g.pages_per_block);
        let p = g.ppn(BlockId(b), page);
        let r = match next(10) {
            0..=3 => {
                let mut out = [0u64; 2];
                let r = m.read(p, UnitMask(0b11), &mut out);
                format!("{r:?} {out:?}")
            }
            4..=6 => {
                let next_page = m.block_status(BlockId(b)).unwrap().next_page;
                let p = g.ppn(BlockId(b), next_page.min(g.pages_per_block - 1));
                format!("{:?}", m.program(p, &[i, !i], &spare(i, 0b11)))
            }
            7 => format!("{:?}", m.erase(BlockId(b))),
            _ => {
                let plane = g.plane_of(BlockId(b));
                let d = g.first_block(plane).0 + next(g.blocks_per_plane);
                let dn = m.block_status(BlockId(d)).unwrap().next_page;
                let dst = g.ppn(BlockId(d), dn.min(g.pages_per_block - 1));
                format!("{:?}", m.copyback(p, dst, &spare(i, 0b01)))
            }
        };
        log.push(r);
    }
    for b in 0..g.total_blocks() {
        log.push(format!("{:?}", m.block_status(BlockId(b))));
    }
    log.push(format!("{:?}", m.stats()));
    log
}

#[test]
fn lent_slices_behave_like_vec_storage() {
    let geo = small_geo();
    let fault = FaultConfig {
        factory_bad_fraction: 0.05,
        program_fail_prob: 0.002,
        erase_fail_prob: 0.01,
        ..FaultConfig::default()
    };
    let rel = ReliabilityConfig::default();
    let mut heap = Medium::new(geo, rel, fault).unwrap();
    let a = scenario(&mut heap);

    let sz = StorageSizes::for_geometry(&geo);
    let mut blocks = vec![BlockRec::INIT; sz.blocks];
    // Garbage in the lent page arrays must not matter.
    let mut pages = vec![PageRec::INIT; sz.pages];
    let mut units = vec![UnitRec::INIT; sz.units + 3];
    for (i, p) in pages.iter_mut().enumerate() {
        *p = stale_programmed_page(i);
    }
    let mut lent =
        Medium::from_slices(geo, rel, fault, &mut blocks, &mut pages, &mut units).unwrap();
    let b = scenario(&mut lent);
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "entry {i}");
    }
    assert!(a.iter().any(|s| s.contains("Ok(ReadReport")));
    assert!(a.iter().any(|s| s.contains("ProgramFailed")));
    assert!(a.iter().any(|s| s.contains("ProgramOrder")));
}

/// A page record that looks programmed, to show stale contents are ignored.
fn stale_programmed_page(i: usize) -> PageRec {
    // Build a programmed record through a throwaway medium of one page.
    let geo = Geometry {
        channels: 1,
        dies_per_channel: 1,
        planes_per_die: 1,
        blocks_per_plane: 1,
        pages_per_block: 1,
        page_bytes: 4096,
        pages_per_wordline: 1,
        units_per_page: 1,
    };
    let mut b = [BlockRec::INIT; 1];
    let mut p = [PageRec::INIT; 1];
    let mut u = [UnitRec::INIT; 1];
    {
        let mut m = Medium::from_slices(
            geo,
            ReliabilityConfig::default(),
            FaultConfig::default(),
            &mut b,
            &mut p,
            &mut u,
        )
        .unwrap();
        let s = Spare {
            units: UnitMask(1),
            seq: i as u64,
            ..Spare::default()
        };
        m.program(Ppn(0), &[i as u64], &s).unwrap();
    }
    p[0]
}

#[test]
fn lent_slices_too_small_rejected() {
    let geo = small_geo();
    let sz = StorageSizes::for_geometry(&geo);
    let mut blocks = vec![BlockRec::INIT; sz.blocks];
    let mut pages = vec![PageRec::INIT; sz.pages];
    let mut units = vec![UnitRec::INIT; sz.units - 1];
    let r = Medium::from_slices(
        geo,
        ReliabilityConfig::default(),
        FaultConfig::default(),
        &mut blocks,
        &mut pages,
        &mut units,
    );
    assert!(matches!(r, Err(firmware_core::Error::TableTooSmall(_))));
}

/// A metadata page's spare area.
fn meta_spare(seq: u64) -> Spare {
    Spare {
        seq,
        kind: firmware_core::PageKind::Map,
        ..Spare::default()
    }
}

/// Programs two metadata pages of block 0 and reads the second back.
fn meta_round_trip<N: Nand>(m: &mut N, page: impl Fn(u32, u32) -> Ppn) -> [u8; 16] {
    m.program_meta(page(0, 0), &[1; 64], &meta_spare(1))
        .unwrap();
    m.program_meta(page(0, 1), &[2; 10], &meta_spare(2))
        .unwrap();
    let mut out = [9u8; 16];
    m.read_meta(page(0, 1), &mut out).unwrap();
    out
}

/// The heap medium drops an erased block's metadata bytes too: the region
/// cycles through the free pool, so otherwise the store would grow by a
/// page for every translation page ever written.
#[test]
fn heap_metadata_pages_free_on_erase() {
    let geo = small_geo();
    let mut m = medium();
    let page = |b: u32, p: u32| Ppn(b * geo.pages_per_block + p);
    for b in 0..3 {
        for p in 0..4 {
            m.program_meta(
                page(b, p),
                &[b as u8; 64],
                &meta_spare(u64::from(b * 4 + p) + 1),
            )
            .unwrap();
        }
    }
    assert_eq!(m.storage().meta_pages(), 12);
    m.erase(BlockId(1)).unwrap();
    assert_eq!(m.storage().meta_pages(), 8);
    m.tear_erase(BlockId(2)).unwrap();
    assert_eq!(m.storage().meta_pages(), 4);
    let mut out = [0u8; 8];
    m.read_meta(page(0, 3), &mut out).unwrap();
    assert_eq!(out, [0; 8]);
    assert_eq!(m.read_meta(page(1, 0), &mut out), Err(NandError::Erased));
}

#[test]
fn lent_metadata_pages_round_trip_and_free_on_erase() {
    let geo = small_geo();
    let sz = StorageSizes::for_geometry(&geo);
    let mut blocks = vec![BlockRec::INIT; sz.blocks];
    let mut pages = vec![PageRec::INIT; sz.pages];
    let mut units = vec![UnitRec::INIT; sz.units];
    // Two slots of 64 bytes, whatever the slot table held before.
    let mut bytes = vec![0xAA; LentMeta::bytes_for(2, 64)];
    let mut slots = vec![7u32; 2];
    let meta = LentMeta::new(&mut bytes, &mut slots, 64).unwrap();
    let store = LentStorage::new(&mut blocks, &mut pages, &mut units).with_meta(meta);
    let rel = ReliabilityConfig::default();
    let mut m = Medium::with_storage(geo, rel, FaultConfig::default(), store).unwrap();
    let mut heap = medium();
    let page = |b: u32, p: u32| Ppn(b * geo.pages_per_block + p);
    // Within the lent room the lent medium answers like the heap one.
    assert_eq!(
        meta_round_trip(&mut m, page),
        meta_round_trip(&mut heap, page)
    );
    // Larger than a slot: refused (the heap medium keeps whole pages).
    assert_eq!(
        m.program_meta(page(1, 0), &[3; 65], &meta_spare(3)),
        Err(NandError::BadAddress)
    );
    assert!(heap
        .program_meta(page(1, 0), &[3; 65], &meta_spare(3))
        .is_ok());
    // Both slots taken: a third page is refused and left unprogrammed.
    assert_eq!(
        m.program_meta(page(2, 0), &[4; 8], &meta_spare(4)),
        Err(NandError::BadAddress)
    );
    assert_eq!(m.read_meta(page(2, 0), &mut []), Err(NandError::Erased));
    assert_eq!(m.storage().meta_store().used(), 2);
    // The erase frees the block's slots; its page rewritten takes one again.
    m.erase(BlockId(0)).unwrap();
    assert_eq!(m.storage().meta_store().used(), 0);
    m.program_meta(page(2, 0), &[4; 8], &meta_spare(4)).unwrap();
    m.program_meta(page(0, 0), &[5; 8], &meta_spare(5)).unwrap();
    let mut out = [0u8; 8];
    m.read_meta(page(0, 0), &mut out).unwrap();
    assert_eq!(out, [5; 8]);
    m.read_meta(page(2, 0), &mut out).unwrap();
    assert_eq!(out, [4; 8]);
    assert_eq!(m.storage().meta_store().peak(), 2);
    // A torn erase frees them too.
    m.tear_erase(BlockId(2)).unwrap();
    assert_eq!(m.storage().meta_store().used(), 1);
}

#[test]
fn lent_metadata_room_too_small_rejected() {
    let mut bytes = vec![0u8; 100];
    let mut slots = vec![0u32; 2];
    assert!(matches!(
        LentMeta::new(&mut bytes, &mut slots, 64),
        Err(firmware_core::Error::TableTooSmall(_))
    ));
}

fn drive_16g() -> Geometry {
    Geometry {
        channels: 4,
        dies_per_channel: 2,
        planes_per_die: 2,
        blocks_per_plane: 1024,
        pages_per_block: 256,
        page_bytes: 4096,
        pages_per_wordline: 1,
        units_per_page: 1,
    }
}

#[test]
fn memory_budget_16g() {
    let g = drive_16g();
    assert_eq!(g.total_pages(), 4_194_304);
    let sz = StorageSizes::for_geometry(&g);
    let per_page = sz.bytes() as f64 / f64::from(g.total_pages());
    assert!(per_page <= 24.0, "{per_page} bytes per page");
    assert!(sz.bytes() < 100 << 20);
}

#[test]
fn config_validation() {
    let bad = ReliabilityConfig {
        best_fraction: 0.7,
        worst_fraction: 0.5,
        ..ReliabilityConfig::default()
    };
    assert!(Medium::new(small_geo(), bad, FaultConfig::default()).is_err());
    let bad = FaultConfig {
        erase_fail_prob: 1.5,
        ..FaultConfig::default()
    };
    assert!(Medium::new(small_geo(), ReliabilityConfig::default(), bad).is_err());
}

/// Throughput check on the 16 GiB geometry: `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn throughput_16g() {
    let g = drive_16g();
    let t0 = std::time::Instant::now();
    let mut m = Medium::new(g, ReliabilityConfig::default(), FaultConfig::default()).unwrap();
    let built = t0.elapsed();
    let t1 = std::time::Instant::now();
    let mut ops = 0u64;
    let mut out = [0u64; 1];
    let s = Spare {
        units: UnitMask(1),
        ..Spare::default()
    };
    let mut rng = Lcg64::new(1, 1);
    for round in 0..2u64 {
        for b in 0..g.total_blocks() {
            if round > 0 {
                m.erase(BlockId(b)).unwrap();
                ops += 1;
            }
            for page in 0..g.pages_per_block {
                m.program(g.ppn(BlockId(b), page), &[rng.state], &s)
                    .unwrap();
                ops += 1;
            }
        }
        for _ in 0..4_000_000 {
            let p = Ppn(rng.below_high(u64::from(g.total_pages())) as u32);
            m.read(p, UnitMask(1), &mut out).unwrap();
            ops += 1;
        }
    }
    let dt = t1.elapsed();
    eprintln!(
        "built in {built:?}; {ops} ops in {dt:?} ({:.1} ns/op)",
        dt.as_nanos() as f64 / ops as f64
    );
}

/// Prints the error distribution of the default model per class and P/E:
/// `cargo test -p nand-model --test model -- --ignored calibration --nocapture`.
#[test]
#[ignore]
fn calibration_report() {
    let geo = Geometry {
        blocks_per_plane: 256,
        pages_per_block: 192,
        pages_per_wordline: 3,
        units_per_page: 1,
        ..small_geo()
    };
    let mut m = Medium::new(geo, ReliabilityConfig::default(), FaultConfig::default()).unwrap();
    let s = Spare {
        units: UnitMask(1),
        ..Spare::default()
    };
    for b in 0..geo.total_blocks() {
        for page in 0..geo.pages_per_block {
            m.program(geo.ppn(BlockId(b), page), &[1], &s).unwrap();
        }
    }
    for months in [0.0, 12.0] {
        m.set_retention_months(months).unwrap();
        for pe in [0, 1000, 2000, 3000, 3600, 4500, 6000] {
            m.set_initial_pe(pe);
            for class in [
                QualityClass::Best,
                QualityClass::Median,
                QualityClass::Worst,
            ] {
                let (mut n, mut sum, mut max, mut unc) = (0u64, 0u64, 0u16, 0u64);
                for b in 0..geo.total_blocks() {
                    if m.block_quality(BlockId(b)).class != class {
                        continue;
                    }
                    for page in 0..geo.pages_per_block {
                        let mut out = [0u64; 1];
                        match m.read(geo.ppn(BlockId(b), page), UnitMask(1), &mut out) {
                            Ok(r) => {
                                sum += u64::from(r.bit_errors);
                                max = max.max(r.bit_errors);
                            }
                            Err(_) => unc += 1,
                        }
                        n += 1;
                    }
                }
                eprintln!(
                    "months {months:>4} pe {pe:>5} {class:?}: avg {:.1} max {max} uncorrectable {:.3}%",
                    sum as f64 / (n - unc).max(1) as f64,
                    100.0 * unc as f64 / n as f64
                );
            }
        }
    }
}

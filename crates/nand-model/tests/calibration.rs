//! The calibrated reliability models against the papers' copyback thresholds:
//! seed 000 Table 1 (`ReliabilityConfig::mlc_dac18`) and seed 001 Table 6
//! (`ReliabilityConfig::tlc_thesis`), run as real copyback chains on the medium.
//!
//! `cargo test --release -p nand-model --test calibration -- --nocapture`
//! prints the measured rates.

use firmware_core::tech::rcftl::ctt::{RCOPYBACK_CT, RCOPYBACK_PE_UPPER, RCPB_CTT, RCPB_PE_UPPER};
use firmware_core::{BlockId, Geometry, Nand, NandError, Spare, UnitMask};
use nand_model::{FaultConfig, Medium, QualityClass, ReliabilityConfig, SimMedium};

/// One plane of 512 blocks of 16 pages, one unit per page.
fn geo(pages_per_wordline: u8) -> Geometry {
    Geometry {
        channels: 1,
        dies_per_channel: 1,
        planes_per_die: 1,
        blocks_per_plane: 512,
        pages_per_block: 16,
        page_bytes: 4096,
        pages_per_wordline,
        units_per_page: 1,
    }
}

fn spare1(seq: u64) -> Spare {
    Spare {
        seq,
        units: UnitMask(1),
        ..Spare::default()
    }
}

/// Outcome of one chain.
#[derive(Debug, PartialEq)]
enum Chain {
    /// Every copyback and the final read succeeded.
    Ok,
    /// A copyback or the final read was uncorrectable.
    Failed,
}

/// Erases `b`, sets its P/E to `pe` and programs filler up to (not including) `page`.
fn prepare(m: &mut SimMedium, b: u32, pe: u32, page: u32) {
    m.erase(BlockId(b)).unwrap();
    m.set_pe(BlockId(b), pe).unwrap();
    let g = *m.geometry();
    for p in 0..page {
        m.program(g.ppn(BlockId(b), p), &[7], &spare1(1)).unwrap();
    }
}

/// Programs `page` in `blocks[0]`, copies it back `k` times through
/// `blocks[1..=k]` (same page index), then reads it.
fn chain(m: &mut SimMedium, blocks: &[u32], page: u32, k: usize, pe: u32) -> Chain {
    let g = *m.geometry();
    let at = |b: u32| g.ppn(BlockId(b), page);
    prepare(m, blocks[0], pe, page);
    m.program(at(blocks[0]), &[42], &spare1(2)).unwrap();
    for i in 1..=k {
        prepare(m, blocks[i], pe, page);
        match m.copyback(at(blocks[i - 1]), at(blocks[i]), &spare1(2)) {
            Ok(_) => {}
            Err(NandError::Uncorrectable) => return Chain::Failed,
            Err(e) => panic!("copyback: {e:?}"),
        }
    }
    let mut out = [0u64];
    match m.read(at(blocks[k]), UnitMask(1), &mut out) {
        Ok(_) => {
            assert_eq!(out, [42]);
            Chain::Ok
        }
        Err(NandError::Uncorrectable) => Chain::Failed,
        Err(e) => panic!("read: {e:?}"),
    }
}

/// Blocks of `class`, sorted by decreasing quality multiplier (worst jitter first).
fn class_blocks(m: &SimMedium, class: QualityClass) -> Vec<(u32, f32)> {
    let mut v: Vec<(u32, f32)> = (0..m.geometry().total_blocks())
        .map(|b| (b, m.block_quality(BlockId(b))))
        .filter(|(_, q)| q.class == class)
        .map(|(b, q)| (b, q.factor))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v
}

/// Checks one table cell: `ct` copybacks succeed on every trial through the
/// class's worst-jittered blocks (worst page and every other page), and
/// `ct + 1` fail on at least two thirds of the trials through the class's
/// median-jitter blocks on the worst page. Returns the failure rate at `ct + 1`.
fn check_cell(m: &mut SimMedium, class: QualityClass, pe: u32, months: f32, ct: usize) -> f64 {
    let g = *m.geometry();
    let ppb = g.pages_per_block;
    let worst_page = ppb - 1; // edge wordline, highest page of the wordline
    m.set_retention_months(months).unwrap();
    let blocks = class_blocks(m, class);
    let n = blocks.len();
    assert!(n >= 3 * (ct + 2), "too few {class:?} blocks");
    // Worst-jittered blocks, rotated so every chain position sees them.
    let worst: Vec<u32> = blocks.iter().take(ct + 2).map(|x| x.0).collect();
    for trial in 0..(2 * ppb as usize) {
        let mut chain_blocks = worst.clone();
        chain_blocks.rotate_left(trial % worst.len());
        let page = if trial % 2 == 0 {
            worst_page
        } else {
            (trial as u32 / 2) % ppb
        };
        let r = chain(m, &chain_blocks, page, ct, pe);
        assert_eq!(
            r,
            Chain::Ok,
            "{class:?} pe {pe} {months} months: {ct} copybacks failed (page {page}, trial {trial})"
        );
    }
    // Median-jitter blocks: the middle of the class.
    let mid: Vec<u32> = blocks[n / 2 - (ct + 2) / 2..]
        .iter()
        .take(ct + 2)
        .map(|x| x.0)
        .collect();
    let trials = 60;
    let mut failed = 0;
    for trial in 0..trials {
        let mut chain_blocks = mid.clone();
        chain_blocks.rotate_left(trial % mid.len());
        if chain(m, &chain_blocks, worst_page, ct + 1, pe) == Chain::Failed {
            failed += 1;
        }
    }
    let rate = f64::from(failed) / f64::from(trials as u32);
    assert!(
        rate >= 2.0 / 3.0,
        "{class:?} pe {pe} {months} months: {} copybacks failed only {rate:.2} of trials",
        ct + 1
    );
    rate
}

#[test]
fn mlc_dac18_meets_table1() {
    let mut m = Medium::new(
        geo(2),
        ReliabilityConfig::mlc_dac18(),
        FaultConfig::default(),
    )
    .unwrap();
    for (i, &pe) in RCOPYBACK_PE_UPPER.iter().enumerate() {
        let ct = usize::from(RCOPYBACK_CT[i]);
        let rate = check_cell(&mut m, QualityClass::Median, pe, 12.0, ct);
        eprintln!(
            "mlc pe {pe}: CT {ct} holds, CT+1 fails {:.0}%",
            rate * 100.0
        );
    }
}

#[test]
fn tlc_thesis_meets_table6() {
    let mut m = Medium::new(
        geo(1),
        ReliabilityConfig::tlc_thesis(),
        FaultConfig::default(),
    )
    .unwrap();
    let classes = [
        QualityClass::Best,
        QualityClass::Median,
        QualityClass::Worst,
    ];
    for (ri, months) in [(0usize, 12.0f32), (1, 3.0)] {
        for (ci, &class) in classes.iter().enumerate() {
            for (bi, &pe) in RCPB_PE_UPPER.iter().enumerate() {
                let ct = usize::from(RCPB_CTT[ri][ci][bi]);
                let rate = check_cell(&mut m, class, pe, months, ct);
                eprintln!(
                    "tlc {months} months {class:?} pe {pe}: CT {ct} holds, CT+1 fails {:.0}%",
                    rate * 100.0
                );
            }
        }
    }
}

/// A chain broken by an off-chip copy (read, ECC, program) starts again from
/// zero carried errors: `CT` copybacks, an off-chip copy and `CT` more succeed,
/// although `2 * CT` copybacks in a row fail.
#[test]
fn off_chip_copy_resets_carried_errors() {
    let mut m = Medium::new(
        geo(1),
        ReliabilityConfig::tlc_thesis(),
        FaultConfig::default(),
    )
    .unwrap();
    let g = *m.geometry();
    let pe = 3000;
    let ct = usize::from(RCPB_CTT[0][1][3]); // 1 year, median, (2K, 3K]
    let blocks: Vec<u32> = class_blocks(&m, QualityClass::Median)
        .iter()
        .map(|x| x.0)
        .take(2 * ct + 2)
        .collect();
    let page = 5;
    assert_eq!(chain(&mut m, &blocks, page, 2 * ct, pe), Chain::Failed);
    assert_eq!(chain(&mut m, &blocks, page, ct, pe), Chain::Ok);
    // Off-chip copy of the last page of the first chain into a fresh block.
    let last = g.ppn(BlockId(blocks[ct]), page);
    let mut out = [0u64];
    m.read(last, UnitMask(1), &mut out).unwrap();
    let second = &blocks[ct + 1..];
    prepare(&mut m, second[0], pe, page);
    m.program(g.ppn(BlockId(second[0]), page), &out, &spare1(3))
        .unwrap();
    for i in 1..=ct {
        prepare(&mut m, second[i], pe, page);
        m.copyback(
            g.ppn(BlockId(second[i - 1]), page),
            g.ppn(BlockId(second[i]), page),
            &spare1(3),
        )
        .unwrap();
    }
    m.read(g.ppn(BlockId(second[ct]), page), UnitMask(1), &mut out)
        .unwrap();
    assert_eq!(out, [42]);
}

/// Copybacks carry the source's errors without the retention term; reads
/// apply it.
#[test]
fn copyback_carries_fresh_errors_only() {
    let rel = ReliabilityConfig {
        retention_per_month: 0.2,
        retention_wear: 0.0,
        ..ReliabilityConfig::flat(5.0)
    };
    let mut m = Medium::new(geo(1), rel, FaultConfig::default()).unwrap();
    m.set_retention_months(12.0).unwrap(); // R = 3.4: a read sees 17
    let g = *m.geometry();
    let p = |b: u32| g.ppn(BlockId(b), 0);
    m.program(p(0), &[1], &spare1(1)).unwrap();
    let mut out = [0u64];
    assert_eq!(m.read(p(0), UnitMask(1), &mut out).unwrap().bit_errors, 17);
    assert_eq!(m.copyback(p(0), p(1), &spare1(1)).unwrap().bit_errors, 5);
    assert_eq!(m.copyback(p(1), p(2), &spare1(1)).unwrap().bit_errors, 10);
    assert_eq!(m.read(p(2), UnitMask(1), &mut out).unwrap().bit_errors, 27);
}

/// One read of each block's first page right after programming it, at the
/// lowest, middle and highest P/E of every bucket: the model's classifier never
/// puts a block into a better class than its own; prints the rates.
fn misclassification(rel: ReliabilityConfig, pe_upper: [u32; 6], name: &str) -> [[f64; 6]; 3] {
    use firmware_core::tech::rcftl::ctt::BerClass;
    let g = geo(1);
    let mut m = Medium::new(g, rel, FaultConfig::default()).unwrap();
    let steps =
        rel.ber_class_steps::<{ firmware_core::tech::rcftl::ctt::CLASSIFIER_STEPS }>(pe_upper);
    let c = firmware_core::tech::rcftl::ctt::BerClassifier::from_steps(&steps).unwrap();
    eprintln!("{name}: {c:?}");
    let mut wrong = [[0.0f64; 6]; 3];
    let mut lo = 0u32;
    for (bi, &hi) in pe_upper.iter().enumerate() {
        let mut n = [0u32; 3];
        let mut bad = [0u32; 3];
        for pe in [lo, (lo + hi) / 2, hi] {
            for b in 0..g.total_blocks() {
                let q = m.block_quality(BlockId(b));
                prepare(&mut m, b, pe, 0);
                m.program(g.ppn(BlockId(b), 0), &[1], &spare1(1)).unwrap();
                let mut out = [0u64];
                let e = m.read(g.ppn(BlockId(b), 0), UnitMask(1), &mut out).unwrap();
                let truth = match q.class {
                    QualityClass::Best => BerClass::Best,
                    QualityClass::Median => BerClass::Median,
                    QualityClass::Worst => BerClass::Worst,
                };
                let got = c.classify(pe, e.bit_errors);
                assert!(
                    got >= truth,
                    "{name} pe {pe}: {truth:?} block {b} read {} classed {got:?}",
                    e.bit_errors
                );
                n[truth.index()] += 1;
                if got != truth {
                    bad[truth.index()] += 1;
                }
            }
        }
        for k in 0..3 {
            wrong[k][bi] = if n[k] == 0 {
                0.0
            } else {
                f64::from(bad[k]) / f64::from(n[k])
            };
        }
        eprintln!(
            "{name} bucket {lo}-{hi}: misclassified best {:.1}% median {:.1}% worst {:.1}%",
            100.0 * wrong[0][bi],
            100.0 * wrong[1][bi],
            100.0 * wrong[2][bi]
        );
        lo = hi + 1;
    }
    wrong
}

#[test]
fn ber_classes_are_observable() {
    for months in [12.0, 3.0] {
        let rel = ReliabilityConfig {
            retention_months: months,
            ..ReliabilityConfig::tlc_thesis()
        };
        let w = misclassification(rel, RCPB_PE_UPPER, &format!("tlc {months} months"));
        // Worst blocks are recognised; median blocks nearly always.
        for (bi, rate) in w[1].iter().enumerate() {
            assert!(*rate < 0.05, "median bucket {bi}: {rate}");
        }
        assert!(w[2].iter().all(|&x| x == 0.0), "worst: {w:?}");
    }
    let rel = ReliabilityConfig::mlc_dac18();
    let w = misclassification(rel, [500, 1000, 1500, 2000, 2500, 3000], "mlc");
    assert!(w[1].iter().all(|&x| x == 0.0), "single-class medium: {w:?}");
}

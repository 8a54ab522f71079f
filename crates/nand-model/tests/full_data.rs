//! The full-data medium: bytes round-trip, copyback moves bytes, and every
//! result is the stamp medium's.

mod common;

use common::{small_geo, spare};
use firmware_core::{BlockId, DieId, Error, Geometry, Nand, NandError, Ppn, UnitMask};
use nand_model::{
    FaultConfig, FullDataMedium, FullUnit, ReliabilityConfig, SimMedium, TornProgram,
};
use test_kit::rng::{Lcg64, SplitMix64};

/// Unit size of [`small_geo`]: 8 KiB pages of 2 units.
const B: usize = 4096;
type Unit = FullUnit<B>;
type Full = FullDataMedium<B>;

fn full(geo: Geometry) -> Full {
    Full::new(geo, ReliabilityConfig::default(), FaultConfig::default()).unwrap()
}

/// 16 KiB pages of 4 units of 4 KiB.
fn quad_geo() -> Geometry {
    Geometry {
        page_bytes: 16384,
        units_per_page: 4,
        ..small_geo()
    }
}

fn pp(b: u32, page: u32) -> Ppn {
    small_geo().ppn(BlockId(b), page)
}

/// A unit filled from `seed` (zeros for seed 0), every byte depending on it.
fn unit(seed: u64) -> Unit {
    let mut u = Unit::default();
    if seed != 0 {
        let mut x = Lcg64::new(seed, Lcg64::MMIX_INCREMENT);
        for c in u.as_bytes_mut().chunks_exact_mut(8) {
            c.copy_from_slice(&x.next_u64().to_le_bytes());
        }
    }
    u
}

fn read(m: &mut Full, p: Ppn, mask: u8) -> Result<Vec<Unit>, NandError> {
    let mut out = vec![unit(0xDEAD); UnitMask(mask).count() as usize];
    m.read(p, UnitMask(mask), &mut out)?;
    Ok(out)
}

#[test]
fn unit_basics() {
    let z = Unit::default();
    assert!(z.as_bytes().iter().all(|&b| b == 0));
    assert_eq!(z.digest(), 0);
    let a = unit(1);
    let mut b = a;
    assert_eq!(a, b);
    b.as_bytes_mut()[B - 1] ^= 1;
    assert_ne!(a, b);
    assert_ne!(a.digest(), b.digest());
    assert_ne!(a.digest(), 0);
    assert_eq!(Unit::from_bytes(*a.as_bytes()), a);
    assert_eq!(Unit::from(a.into_bytes()), a);
    let dbg = format!("{a:?}");
    assert!(
        dbg.starts_with("FullUnit<4096>(") && dbg.len() < 100,
        "{dbg}"
    );
}

#[test]
fn round_trip_two_units() {
    let mut m = full(small_geo());
    let p = pp(0, 0);
    assert_eq!(read(&mut m, p, 0b11), Err(NandError::Erased));
    m.program(p, &[unit(1), unit(2)], &spare(1, 0b11)).unwrap();
    assert_eq!(read(&mut m, p, 0b11).unwrap(), vec![unit(1), unit(2)]);
    assert_eq!(read(&mut m, p, 0b10).unwrap(), vec![unit(2)]);
    assert_eq!(read(&mut m, p, 0b01).unwrap(), vec![unit(1)]);
    let rep = m
        .read(p, UnitMask(0b11), &mut [Unit::default(); 2])
        .unwrap();
    assert_eq!(rep.spare, spare(1, 0b11));
    // Partial program: only unit 1 carries data, unit 0 reads zeros.
    let p1 = pp(0, 1);
    m.program(p1, &[unit(3)], &spare(2, 0b10)).unwrap();
    assert_eq!(read(&mut m, p1, 0b11).unwrap(), vec![unit(0), unit(3)]);
    // The inner medium holds the digests.
    let mut stamps = [0u64; 2];
    m.inner_mut().read(p1, UnitMask(0b11), &mut stamps).unwrap();
    assert_eq!(stamps, [0, unit(3).digest()]);
    // Out of order and twice: rejected, bytes untouched.
    assert_eq!(
        m.program(pp(0, 3), &[unit(9), unit(9)], &spare(3, 0b11)),
        Err(NandError::ProgramOrder)
    );
    assert_eq!(
        m.program(p, &[unit(9), unit(9)], &spare(3, 0b11)),
        Err(NandError::ProgramOrder)
    );
    assert_eq!(read(&mut m, p, 0b11).unwrap(), vec![unit(1), unit(2)]);
    // Short data and a mask beyond the page.
    assert_eq!(
        m.program(pp(0, 2), &[unit(9)], &spare(3, 0b11)),
        Err(NandError::BadAddress)
    );
    assert_eq!(read(&mut m, p, 0b100), Err(NandError::BadAddress));
    // Erase: erased again, then reprogrammable with new bytes.
    m.erase(BlockId(0)).unwrap();
    assert_eq!(read(&mut m, p, 0b11), Err(NandError::Erased));
    m.program(p, &[unit(7)], &spare(4, 0b01)).unwrap();
    assert_eq!(read(&mut m, p, 0b11).unwrap(), vec![unit(7), unit(0)]);
    assert_eq!(m.stats().programs, 6);
    assert_eq!(m.store_bytes(), 16 * 2 * B);
}

#[test]
fn round_trip_four_units_partial_masks() {
    let geo = quad_geo();
    let mut m = full(geo);
    let p = geo.ppn(BlockId(5), 0);
    m.program(p, &[unit(10), unit(12)], &spare(1, 0b1010))
        .unwrap();
    assert_eq!(
        read(&mut m, p, 0b1111).unwrap(),
        vec![unit(0), unit(10), unit(0), unit(12)]
    );
    assert_eq!(read(&mut m, p, 0b1000).unwrap(), vec![unit(12)]);
    assert_eq!(read(&mut m, p, 0b0110).unwrap(), vec![unit(10), unit(0)]);
    let p1 = geo.ppn(BlockId(5), 1);
    let data = [unit(20), unit(21), unit(22), unit(23), unit(99)];
    m.program(p1, &data, &spare(2, 0b1111)).unwrap();
    assert_eq!(read(&mut m, p1, 0b1111).unwrap(), data[..4].to_vec());
    assert_eq!(read(&mut m, p1, 0b0101).unwrap(), vec![unit(20), unit(22)]);
}

#[test]
fn copyback_moves_bytes_within_a_plane() {
    let mut m = full(small_geo());
    let src = pp(2, 0);
    m.program(src, &[unit(1), unit(2)], &spare(1, 0b11))
        .unwrap();
    // Another block of the same plane, both units.
    let d0 = pp(3, 0);
    let rep = m.copyback(src, d0, &spare(2, 0b11)).unwrap();
    assert_eq!(rep.spare, spare(1, 0b11));
    assert_eq!(read(&mut m, d0, 0b11).unwrap(), vec![unit(1), unit(2)]);
    // Only unit 1 kept: unit 0 reads zeros.
    let d1 = pp(3, 1);
    m.copyback(src, d1, &spare(3, 0b10)).unwrap();
    assert_eq!(read(&mut m, d1, 0b11).unwrap(), vec![unit(0), unit(2)]);
    // Inside the source block, from a lower block to a higher one and back.
    let d2 = pp(2, 1);
    m.copyback(src, d2, &spare(4, 0b01)).unwrap();
    assert_eq!(read(&mut m, d2, 0b11).unwrap(), vec![unit(1), unit(0)]);
    let d3 = pp(1, 0);
    m.copyback(d0, d3, &spare(5, 0b11)).unwrap();
    assert_eq!(read(&mut m, d3, 0b11).unwrap(), vec![unit(1), unit(2)]);
    // Across planes: refused, nothing written.
    let other = pp(16, 0);
    assert_eq!(
        m.copyback(src, other, &spare(6, 0b11)),
        Err(NandError::BadAddress)
    );
    assert_eq!(read(&mut m, other, 0b11), Err(NandError::Erased));
    // From an erased page: refused.
    assert_eq!(
        m.copyback(pp(2, 5), pp(3, 2), &spare(7, 0b11)),
        Err(NandError::Erased)
    );
    // The source is unchanged; errors carried over as in the stamp medium.
    assert_eq!(read(&mut m, src, 0b11).unwrap(), vec![unit(1), unit(2)]);
    assert_eq!(m.stats().copybacks, 6);
}

#[test]
fn mismatched_unit_size_is_rejected() {
    let rel = ReliabilityConfig::default();
    let fault = FaultConfig::default();
    for r in [
        FullDataMedium::<2048>::new(small_geo(), rel, fault).map(|_| ()),
        FullDataMedium::<8192>::new(small_geo(), rel, fault).map(|_| ()),
        FullDataMedium::<8192>::from_medium(SimMedium::new(small_geo(), rel, fault).unwrap())
            .map(|_| ()),
        FullDataMedium::<0>::new(small_geo(), rel, fault).map(|_| ()),
    ] {
        assert!(matches!(r, Err(Error::InvalidConfig(_))), "{r:?}");
    }
    assert!(FullDataMedium::<4096>::new(small_geo(), rel, fault).is_ok());
    assert!(FullDataMedium::<4096>::new(quad_geo(), rel, fault).is_ok());
    assert_eq!(Full::max_store_bytes(&small_geo()), 64 * 16 * 2 * 4096);
}

#[test]
fn faults_through_inner() {
    let mut m = full(small_geo());
    let p = pp(4, 0);
    m.tear_program(p, &[unit(1), unit(2)], &spare(1, 0b11), TornProgram::Intact)
        .unwrap();
    assert_eq!(read(&mut m, p, 0b11).unwrap(), vec![unit(1), unit(2)]);
    m.tear_program(
        pp(4, 1),
        &[unit(3), unit(4)],
        &spare(2, 0b11),
        TornProgram::Uncorrectable,
    )
    .unwrap();
    assert_eq!(read(&mut m, pp(4, 1), 0b11), Err(NandError::Uncorrectable));
    m.inner_mut().fail_next_program(BlockId(4)).unwrap();
    assert_eq!(
        m.program(pp(4, 2), &[unit(5), unit(6)], &spare(3, 0b11)),
        Err(NandError::ProgramFailed)
    );
    // Data already in the bad block stays readable.
    assert_eq!(read(&mut m, p, 0b11).unwrap(), vec![unit(1), unit(2)]);
    m.inner_mut().fail_die(DieId(0)).unwrap();
    assert_eq!(read(&mut m, p, 0b11), Err(NandError::DieFailed));
}

/// Unit seeds of a page programmed with `mask` from `seeds` (in mask order).
fn placed(mask: u8, seeds: [u64; 2]) -> [u64; 2] {
    let mut it = seeds.iter();
    let mut out = [0; 2];
    for (i, o) in out.iter_mut().enumerate() {
        if mask & (1 << i) != 0 {
            *o = *it.next().unwrap();
        }
    }
    out
}

/// One random sequence of programs, reads, erases, copybacks and faults run
/// against both media: results are identical, the full-data medium's units are
/// the bytes a shadow model expects, and their digests are the stamp medium's.
fn compare_with_stamp_medium(seed: u64) {
    let geo = small_geo();
    let rel = ReliabilityConfig {
        seed,
        base_errors: 3.0,
        ecc_limit: 5,
        ..ReliabilityConfig::default()
    };
    let fault = FaultConfig {
        seed: seed ^ 0xFA17,
        factory_bad_fraction: 0.05,
        program_fail_prob: 0.02,
        erase_fail_prob: 0.05,
    };
    let mut s = SimMedium::new(geo, rel, fault).unwrap();
    let mut f = Full::new(geo, rel, fault).unwrap();
    let mut rng = SplitMix64(seed);
    let blocks = u64::from(geo.total_blocks());
    let ppb = geo.pages_per_block;
    let bpp = geo.blocks_per_plane;
    // Expected unit seeds of every page (0: zeros).
    let mut shadow = vec![[0u64; 2]; geo.total_pages() as usize];
    let mut next_seed = 1u64;
    let mut ok_reads = 0;
    for _ in 0..20_000 {
        let b = rng.below_mod(blocks) as u32;
        let next = s.block_status(BlockId(b)).unwrap().next_page;
        // Mostly the next page, sometimes a wrong one.
        let page = if rng.below_mod(8) == 0 {
            rng.below_mod(u64::from(ppb)) as u32
        } else {
            next.min(ppb - 1)
        };
        let p = geo.ppn(BlockId(b), page);
        let mask = rng.below_mod(4) as u8;
        match rng.below_mod(100) {
            0..=39 => {
                let seeds = [next_seed, next_seed + 1];
                next_seed += 2;
                let n = UnitMask(mask).count() as usize;
                let data: Vec<Unit> = seeds.iter().take(n).map(|&x| unit(x)).collect();
                let stamps: Vec<u64> = data.iter().map(Unit::digest).collect();
                let sp = spare(next_seed, mask);
                let tear = rng.below_mod(20) == 0;
                if tear {
                    let outcome = match rng.below_mod(3) {
                        0 => TornProgram::Unprogrammed,
                        1 => TornProgram::Uncorrectable,
                        _ => TornProgram::Intact,
                    };
                    let rs = s.tear_program(p, &stamps, &sp, outcome);
                    let rf = f.tear_program(p, &data, &sp, outcome);
                    assert_eq!(rs, rf);
                    if rs.is_ok() && outcome == TornProgram::Intact {
                        shadow[p.0 as usize] = placed(mask, seeds);
                    }
                } else {
                    let rs = s.program(p, &stamps, &sp);
                    let rf = f.program(p, &data, &sp);
                    assert_eq!(rs, rf);
                    if rs.is_ok() {
                        shadow[p.0 as usize] = placed(mask, seeds);
                    }
                }
            }
            40..=74 => {
                // Read a page below the write pointer most of the time.
                let page = if next > 0 && rng.below_mod(4) != 0 {
                    rng.below_mod(u64::from(next)) as u32
                } else {
                    page
                };
                let p = geo.ppn(BlockId(b), page);
                let mask = if rng.below_mod(50) == 0 { 0b111 } else { mask };
                let n = UnitMask(mask).count() as usize;
                let mut so = vec![0u64; n];
                let mut fo = vec![Unit::default(); n];
                let rs = s.read(p, UnitMask(mask), &mut so);
                let rf = f.read(p, UnitMask(mask), &mut fo);
                assert_eq!(rs, rf);
                if rs.is_ok() {
                    ok_reads += 1;
                    let want: Vec<Unit> = (0..2)
                        .filter(|i| mask & (1 << i) != 0)
                        .map(|i| unit(shadow[p.0 as usize][i]))
                        .collect();
                    assert_eq!(fo, want, "page {p:?} mask {mask:#b}");
                    let digests: Vec<u64> = fo.iter().map(Unit::digest).collect();
                    assert_eq!(so, digests);
                }
            }
            75..=89 => {
                // Copyback from a written page of a block of the same plane
                // (sometimes another plane) to that block's next page.
                let plane = b / bpp;
                let sb = if rng.below_mod(10) == 0 {
                    rng.below_mod(blocks) as u32
                } else {
                    plane * bpp + rng.below_mod(u64::from(bpp)) as u32
                };
                let snext = s.block_status(BlockId(sb)).unwrap().next_page;
                let spage = if snext > 0 {
                    rng.below_mod(u64::from(snext)) as u32
                } else {
                    0
                };
                let src = geo.ppn(BlockId(sb), spage);
                let sp = spare(next_seed, mask);
                next_seed += 1;
                let rs = s.copyback(src, p, &sp);
                let rf = f.copyback(src, p, &sp);
                assert_eq!(rs, rf);
                if rs.is_ok() {
                    let from = shadow[src.0 as usize];
                    for (i, &x) in from.iter().enumerate() {
                        shadow[p.0 as usize][i] = if mask & (1 << i) != 0 { x } else { 0 };
                    }
                }
            }
            90..=96 => {
                assert_eq!(s.erase(BlockId(b)), f.erase(BlockId(b)));
            }
            97 => {
                s.fail_next_program(BlockId(b)).unwrap();
                f.inner_mut().fail_next_program(BlockId(b)).unwrap();
            }
            98 => {
                s.tear_erase(BlockId(b)).ok();
                f.inner_mut().tear_erase(BlockId(b)).ok();
            }
            _ => {
                s.fail_next_erase(BlockId(b)).unwrap();
                f.inner_mut().fail_next_erase(BlockId(b)).unwrap();
            }
        }
    }
    assert_eq!(s.stats(), f.stats());
    let st = s.stats();
    assert!(ok_reads > 500, "{ok_reads} reads succeeded");
    assert!(st.uncorrectable_reads > 0 && st.erased_reads > 0, "{st:?}");
    assert!(st.program_failures > 0 && st.copybacks > 0, "{st:?}");
}

#[test]
fn same_results_as_stamp_medium() {
    for seed in [1, 2, 3] {
        compare_with_stamp_medium(seed);
    }
}

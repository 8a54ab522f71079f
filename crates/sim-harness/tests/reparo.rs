//! Reparo end to end: die failure, detection, failed-LBA queries against
//! the simulator's ground truth, CDR redirection, RAID-5 recovery.

use firmware_core::tech::reparo::p2l::P2lMode;
use firmware_core::{Geometry, ReadValue};
use sim_harness::raid::{self, RaidSpec, TimeModel};
use sim_harness::reparo::{effective_p2l, Drive, DriveSpec, DriveStore, Mode};

fn spec() -> DriveSpec {
    DriveSpec {
        cores: 4,
        core_geometry: Geometry {
            channels: 2,
            dies_per_channel: 2,
            planes_per_die: 1,
            blocks_per_plane: 48,
            pages_per_block: 8,
            page_bytes: 16384,
            pages_per_wordline: 1,
            units_per_page: 4,
        },
        utilisation: 0.6,
        n_bad_die: 6,
        seed: 7,
    }
}

#[test]
fn detector_and_identifier_match_ground_truth() {
    for mode in [Mode::Idr, Mode::Cdr, Mode::CdrStar] {
        let s = spec();
        let mut store = DriveStore::new(&s, effective_p2l(mode, P2lMode::Block)).unwrap();
        let mut d = Drive::new(s, &mut store, mode, P2lMode::Block).unwrap();
        let n = d.logical();
        for l in 0..n {
            d.write(l, l + 1).unwrap();
        }
        for i in 0..n {
            let l = (i * 7919) % n;
            d.write(l, l + 1 + n).unwrap();
        }
        d.flush().unwrap();
        let truth = d.lbas_on_die(3, 1).unwrap();
        assert!(!truth.is_empty());
        d.fail_die(3, 1).unwrap();
        // Writes of LBAs the die does not hold until the detector fires.
        let mut l = 0;
        let mut guard = 0;
        while d.failed_dies().is_empty() {
            guard += 1;
            assert!(guard < 200_000, "{mode:?}: die failure never detected");

            if !truth.contains(&l) {
                d.write(l, l + 1 + 2 * n).unwrap();
            }
            l = (l + 1) % n;
        }
        assert_eq!(d.failed_dies(), vec![(3, 1)]);
        d.audit().unwrap();
        let failing: std::collections::BTreeSet<u64> = (0..n)
            .filter(|&l| matches!(d.read(l).unwrap(), ReadValue::Error))
            .collect();
        assert_eq!(
            failing, truth,
            "{mode:?}: reads fail exactly on the die's LBAs"
        );
        if mode != Mode::Idr {
            d.activate_cdr(3).unwrap();
        }
        let mut got = std::collections::BTreeSet::new();
        let mut start = 0;
        while start < n {
            got.extend(d.get_lba_status(start, 1000).unwrap());
            start += 1000;
        }
        let fake: std::collections::BTreeSet<u64> = match d.master().cdr() {
            Some(c) => c.fake_failures().collect(),
            None => Default::default(),
        };
        assert_eq!(mode == Mode::Idr, fake.is_empty());
        let want: std::collections::BTreeSet<u64> = truth.union(&fake).copied().collect();
        assert_eq!(got, want, "{mode:?}");
        // Rewrite them; then nothing is failed any more and all data reads back.
        for &l in &got {
            d.write(l, l + 5 * n).unwrap();
        }
        assert!(d.get_lba_status(0, n).unwrap().is_empty());
        d.audit().unwrap();
        for l in 0..n {
            assert!(
                matches!(d.read(l).unwrap(), ReadValue::Data(_)),
                "{mode:?} lba {l}"
            );
        }
        if mode == Mode::CdrStar {
            let st = d.identify_stats()[3];
            let blocks = st.p2l.page_reads;
            assert!(blocks > 0 && blocks <= 48, "one read per block: {blocks}");
        }
    }
}

/// What a CDR* identification after a die failure found and cost.
struct Identified {
    /// LBAs `get_lba_status` reported over the whole drive.
    got: std::collections::BTreeSet<u64>,
    /// The die's LBAs (ground truth) plus CDR's fake failures.
    want: std::collections::BTreeSet<u64>,
    /// The victim core's P2L work.
    p2l: firmware_core::tech::reparo::p2l::P2lCost,
    /// Medium reads on the victim core during the queries.
    reads: u64,
    /// Blocks of the failed die holding data.
    blocks: u64,
    /// The victim core's FTL counters before the failure.
    stats: firmware_core::Stats,
}

/// Fills a CDR* drive with `p2l` entrustment, overwrites it twice so GC
/// runs, fails die `die` of core `core`, writes until the detector
/// retires it, and queries every LBA.
fn fail_and_identify(p2l: P2lMode, core: u32, die: u32) -> Identified {
    let s = spec();
    let mut store = DriveStore::new(&s, p2l).unwrap();
    let mut d = Drive::new(s, &mut store, Mode::CdrStar, p2l).unwrap();
    let n = d.logical();
    for l in 0..n {
        d.write(l, l + 1).unwrap();
    }
    for i in 0..2 * n {
        let l = (i * 7919) % n;
        d.write(l, l + 1 + n).unwrap();
    }
    d.flush().unwrap();
    let stats = d.core_stats(core).unwrap();
    let truth = d.lbas_on_die(core, die).unwrap();
    let blocks = d.written_blocks_on_die(core, die).unwrap();
    d.fail_die(core, die).unwrap();
    let mut l = 0;
    while d.failed_dies().is_empty() {
        if !truth.contains(&l) {
            d.write(l, l + 1 + 3 * n).unwrap();
        }
        l = (l + 1) % n;
    }
    d.activate_cdr(core).unwrap();
    let reads_before = d.core_ops()[core as usize].reads;
    let mut got = std::collections::BTreeSet::new();
    let mut start = 0;
    while start < n {
        got.extend(d.get_lba_status(start, 1000).unwrap());
        start += 1000;
    }
    let fake: std::collections::BTreeSet<u64> = d.master().cdr().unwrap().fake_failures().collect();
    Identified {
        got,
        want: truth.union(&fake).copied().collect(),
        p2l: d.identify_stats()[core as usize].p2l,
        reads: d.core_ops()[core as usize].reads - reads_before,
        blocks,
        stats,
    }
}

/// CDR* with block-level entrustment reads the failed blocks' lists from
/// list pages on the neighbour die (real medium reads, one per page), takes
/// the lists of blocks still open from RAM, and finds exactly the LBAs the
/// die held.
#[test]
fn block_lists_are_read_from_list_pages_on_the_neighbour_die() {
    let r = fail_and_identify(P2lMode::Block, 2, 3);
    let (st, p2l, blocks) = (r.stats, r.p2l, r.blocks);
    assert!(st.superblocks > 0 && st.list_pages > 0, "{st:?}");
    assert!(st.gc_victims > 0, "GC blocks take part too: {st:?}");
    assert_eq!(r.got, r.want);
    assert!(p2l.page_reads > 0, "{p2l:?}");
    // Every read is a real list-page read on the medium.
    assert_eq!(r.reads, p2l.page_reads);
    // One list page per failed block at most; open blocks' lists are in RAM.
    assert!(
        p2l.page_reads + p2l.ram_blocks <= blocks,
        "{p2l:?} {blocks}"
    );
    assert!(p2l.ram_blocks < blocks / 2, "{p2l:?} {blocks}");
}

/// CDR* with page-level entrustment reads, for every programmed page of
/// the failed die, the spare area of the neighbour page of its superpage
/// that holds its LBAs (real medium reads), and finds exactly the LBAs the
/// die held.
#[test]
fn page_lbas_are_read_from_neighbour_spare_areas() {
    let r = fail_and_identify(P2lMode::Page, 1, 2);
    assert_eq!(r.got, r.want);
    // Host pages are held by a neighbour's spare area; GC-written pages
    // are not in superpages and come from the record.
    assert!(r.p2l.page_reads > r.p2l.ram_pages, "{:?}", r.p2l);
    assert_eq!(r.reads, r.p2l.page_reads);
}

#[test]
fn raid5_recovers_every_mode() {
    let mut speeds = Vec::new();
    let mut post = Vec::new();
    for mode in [Mode::Baseline, Mode::Idr, Mode::Cdr, Mode::CdrStar] {
        let r = raid::run(&RaidSpec {
            drive: spec(),
            ssds: 4,
            stripe_lbas: 16,
            mode,
            p2l: P2lMode::Block,
            writes_before: 2000,
            fail: (1, 2, 3),
            range_lbas: 4096,
            time: TimeModel::with_timings(50.0, 600.0, 3000.0, 3500.0),
            seed: 3,
            post_writes: 0.5,
        })
        .unwrap();
        assert_eq!(r.mismatches, 0, "{mode:?}");
        assert!(r.status_exact, "{mode:?}: {r:?}");
        assert!(r.truth_failed > 0);
        if mode == Mode::CdrStar {
            assert!(r.p2l_page_reads <= r.failed_die_blocks);
            // Every list page read costs at least tR on the victim's die.
            assert!(r.p2l_page_reads > 0);
            assert!(
                r.identify_seconds >= r.p2l_page_reads as f64 * 50e-6,
                "{r:?}"
            );
        }
        if mode == Mode::Idr {
            // The range-by-range timed scan and the one-pass scan of the
            // same entries on a fresh clock agree.
            let one = r.identify_by_cores[0];
            assert!(
                (r.identify_seconds - one).abs() <= one * 1e-3,
                "{} against {one}",
                r.identify_seconds
            );
        }
        if mode != Mode::Baseline {
            assert!(r.identify_seconds > 0.0, "{mode:?}");
            assert!(r.identify_formula_seconds > 0.0, "{mode:?}");
        }
        // The timed run of the repaired drive measured something.
        assert!(r.post_iops > 0.0 && r.post_waf >= 1.0, "{mode:?}: {r:?}");
        speeds.push(r.rebuild_seconds);
        post.push(r.post_iops);
    }
    assert!(speeds[0] > speeds[1], "{speeds:?}");
    // IDR's victim core keeps its LBAs on one die fewer; CDR spreads them.
    assert!(post[1] < post[2], "post-recovery IOPS {post:?}");
}

#[test]
fn cdr_spaces_follow_eq_5_4() {
    use sim_harness::reparo::cdr_spaces;
    // Fig. 30: alpha = 15 / 15 = 1 per helper, the victim gives 3.
    assert_eq!(cdr_spaces(4, 16, 15, 1, true), vec![16, 16, 16, 12]);
    assert_eq!(cdr_spaces(4, 16, 15, 1, false), vec![15; 4]);
    // A second failure: alpha = 16 / 14 = 1 again.
    assert_eq!(cdr_spaces(4, 16, 15, 2, true), vec![17, 17, 17, 9]);
    let s = cdr_spaces(4, 512, 1_000_000, 4, true);
    assert_eq!(s.iter().sum::<u64>(), 4_000_000);
}

/// Two dies of one core fail at different times; each is detected and
/// identified on its own, and IDR keeps serving from the two left.
#[test]
fn successive_die_failures_on_one_core() {
    let s = DriveSpec {
        utilisation: 0.4,
        ..spec()
    };
    let mut store = DriveStore::new(&s, P2lMode::None).unwrap();
    let mut d = Drive::new(s, &mut store, Mode::Idr, P2lMode::None).unwrap();
    let n = d.logical();
    for l in 0..n {
        d.write(l, l + 1).unwrap();
    }
    d.flush().unwrap();
    let mut expect: Vec<u64> = (0..n).map(|l| l + 1).collect();
    for (round, die) in [2u32, 0].into_iter().enumerate() {
        let truth = d.lbas_on_die(1, die).unwrap();
        assert!(!truth.is_empty());
        d.fail_die(1, die).unwrap();
        let mut l = 0;
        let mut guard = 0;
        while d.failed_dies().len() == round {
            if !truth.contains(&l) {
                expect[l as usize] += 1000;
                d.write(l, expect[l as usize]).unwrap();
            }
            l = (l + 1) % n;
            guard += 1;
            assert!(guard < 100_000);
        }
        let got: std::collections::BTreeSet<u64> =
            d.get_lba_status(0, n).unwrap().into_iter().collect();
        assert_eq!(got, truth, "failure {round}");
        for &l in &got {
            d.write(l, expect[l as usize]).unwrap();
        }
        d.audit().unwrap();
    }
    assert_eq!(d.failed_dies(), vec![(1, 0), (1, 2)]);
    assert_eq!(d.live_dies(), vec![4, 2, 4, 4]);
    for l in 0..n {
        assert_eq!(d.read(l).unwrap(), ReadValue::Data(expect[l as usize]));
    }
}

/// CDR after two die failures on one core at different times: each query
/// returns the new die's LBAs plus exactly the new round's redirected LBAs,
/// the rounds redirect disjoint LBAs, and all data survives.
#[test]
fn cdr_handles_successive_failures_on_one_core() {
    let s = DriveSpec {
        utilisation: 0.5,
        ..spec()
    };
    let mut store = DriveStore::new(&s, P2lMode::None).unwrap();
    let mut d = Drive::new(s, &mut store, Mode::Cdr, P2lMode::None).unwrap();
    let n = d.logical();
    let mut expect: Vec<u64> = (0..n).map(|l| l + 1).collect();
    for l in 0..n {
        d.write(l, expect[l as usize]).unwrap();
    }
    d.flush().unwrap();
    let mut all_fake = std::collections::BTreeSet::new();
    for (round, die) in [1u32, 3].into_iter().enumerate() {
        let truth = d.lbas_on_die(3, die).unwrap();
        assert!(!truth.is_empty());
        d.fail_die(3, die).unwrap();
        let mut l = 0;
        let mut guard = 0;
        while d.failed_dies().len() == round {
            if !truth.contains(&l) {
                expect[l as usize] += 1000;
                d.write(l, expect[l as usize]).unwrap();
            }
            l = (l + 1) % n;
            guard += 1;
            assert!(guard < 100_000);
        }
        d.activate_cdr(3).unwrap();
        let fake: std::collections::BTreeSet<u64> = (0..n)
            .filter(|&l| d.master().is_new_fake_failure(l))
            .collect();
        assert_eq!(
            fake.len() as u64,
            d.master().cdr().unwrap().fake_failure_count()
        );
        assert!(fake.is_disjoint(&all_fake), "rounds redirect disjoint LBAs");
        all_fake.extend(fake.iter().copied());
        let got: std::collections::BTreeSet<u64> =
            d.get_lba_status(0, n).unwrap().into_iter().collect();
        let want: std::collections::BTreeSet<u64> = truth.union(&fake).copied().collect();
        assert_eq!(got, want, "failure {round}");
        for &l in &got {
            d.write(l, expect[l as usize]).unwrap();
        }
        assert!(d.get_lba_status(0, n).unwrap().is_empty());
        d.audit().unwrap();
    }
    assert_eq!(d.master().cdr_rounds(), 2);
    for l in 0..n {
        assert_eq!(
            d.read(l).unwrap(),
            ReadValue::Data(expect[l as usize]),
            "lba {l}"
        );
    }
}

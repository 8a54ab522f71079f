//! Checks of the analytic GC merge model (`sim_harness::gc_merge`) against
//! what seed 002 (Jeong and Song, direct-data-transfer GC) states: the
//! equations of Sec. V, the numbers quoted in the text of Sec. VI, and the
//! qualitative relations of Figs. 11-14 whose values are only plotted.

use sim_harness::gc_merge::{CopyMode, Merge, MergeTime, NandTiming, TABLE_II};

const T: NandTiming = TABLE_II;

fn merge(mode: CopyMode, cache: bool, planes: u32, pages: u32, error_rate: f64) -> MergeTime {
    T.merge(Merge {
        mode,
        cache,
        planes,
        pages,
        error_rate,
    })
}

fn gc(mode: CopyMode, cache: bool, planes: u32, pages: u32) -> u64 {
    T.gc_time(Merge {
        mode,
        cache,
        planes,
        pages,
        error_rate: 0.0,
    })
}

/// Transaction sizes of the experiments (Sec. VI.A): 1..=128 pages single
/// plane, 2..=256 (even) two-plane.
fn sizes(planes: u32) -> impl Iterator<Item = u32> {
    (1..=128u32).map(move |n| n * planes)
}

/// Table II and Sec. VI.A: 8 KiB + 448 B transferred at 25 ns per byte gives
/// tDO = tDI = 216 us (eqs. 1, 2); tDIO adds tDL = 20 ns (eq. 3); the gain of
/// eq. (4) is "almost the same as tDI or tDO"; 24 bits per KiB is the paper's
/// "192 bits" per page.
#[test]
fn transfer_stages_eq_1_to_4() {
    assert_eq!(T.t_do(), 216_000);
    assert_eq!(T.t_di(), 216_000);
    assert_eq!(T.t_dio(0.0), 216_020);
    assert_eq!(T.max_error_bits(), 192);
    let s = T.stages(1, 0.0);
    assert_eq!(s.t_dio_gain(), 215_980);
    assert!(s.t_dio_gain() as f64 > 0.999 * s.t_do as f64);
    // Eqs. (5)-(8) with tR 75 us and tPROG 1300 us.
    assert_eq!(s.t_sr(), T.t_sr_set() + 75_000 + 216_000);
    assert_eq!(s.t_sp(), T.t_sp_set() + 216_000 + 1_300_000);
    assert_eq!(s.t_sr_exc_d(), T.t_sr_set() + 75_000);
    assert_eq!(s.t_sp_exc_d(), T.t_sp_set() + 1_300_000);
}

/// Sec. VI.C, Fig. 12 text: "For single plane, when the cache operation was
/// not used, the execution time of GCB and DGCB decreased by up to 4.52% and
/// 4.63%, respectively, as compared to ICB; when cache operation was used,
/// however, the execution time improved by up to 17.81% and 17.92%". GC time
/// is a 128-page block in transactions of N pages plus one tBERS; "up to" is
/// the best N. Matched to the paper's two decimals (one unit of the last digit
/// for DGCB without cache: the model gives 4.624%).
#[test]
fn fig12_text_percentages_single_plane() {
    let best = |mode, cache| {
        (1..=128)
            .map(|n| {
                let icb = gc(CopyMode::Icb, false, 1, n) as f64;
                100.0 * (icb - gc(mode, cache, 1, n) as f64) / icb
            })
            .fold(f64::MIN, f64::max)
    };
    let cases = [
        (CopyMode::Gcb, false, 4.52),
        (CopyMode::Dgcb, false, 4.63),
        (CopyMode::Gcb, true, 17.81),
        (CopyMode::Dgcb, true, 17.92),
    ];
    for (mode, cache, paper) in cases {
        let got = best(mode, cache);
        println!("{} cache={cache}: {got:.3}% (paper {paper}%)", mode.name());
        assert!((got - paper).abs() <= 0.01, "{mode:?} {cache}: {got}");
    }
}

/// Fig. 12 text: "the execution time of ICB was the same, irrespective of
/// transaction size" (eq. 9 is linear in N).
#[test]
fn fig12_icb_gc_time_independent_of_n() {
    for planes in [1, 2] {
        let t0 = gc(CopyMode::Icb, false, planes, planes);
        for n in sizes(planes) {
            if (T.pages_per_block * planes).is_multiple_of(n) {
                assert_eq!(gc(CopyMode::Icb, false, planes, n), t0);
            }
        }
    }
}

/// Sec. III.C and Fig. 6: "If the additional data transfer is not required
/// ... the channel utilization of DGCB is half that of GCB." Channel busy
/// time per transaction is within 0.1% of half for every N. Utilisation
/// (busy over each mode's own merge time) is that half times
/// tGCB / tDGCB, so it lies between 0.5 and 0.65, highest for the smallest
/// transactions where DGCB finishes much sooner.
#[test]
fn dgcb_channel_about_half_of_gcb_without_errors() {
    for planes in [1, 2] {
        for cache in [false, true] {
            for n in sizes(planes) {
                let g = merge(CopyMode::Gcb, cache, planes, n, 0.0);
                let d = merge(CopyMode::Dgcb, cache, planes, n, 0.0);
                let busy = d.channel_busy_ns as f64 / g.channel_busy_ns as f64;
                assert!((busy - 0.5).abs() < 0.001, "busy ratio {busy}");
                let util = d.channel_utilisation() / g.channel_utilisation();
                assert!((0.5..0.65).contains(&util), "n {n}: {util}");
            }
        }
    }
}

/// Fig. 11 text: "DGCB outperformed both ICB and GCB regardless of the
/// transaction size" (retransmission excluded). Against GCB this holds for
/// every N (1..128, 2..256 two-plane), with and without cache program.
/// Against ICB eqs. (9) and (11) give it from N = 2: a one-page DGCB is tDL
/// (20 ns) slower than ICB, so N = 1 is asserted equal within 0.01%.
#[test]
fn fig11_dgcb_throughput_at_least_gcb_and_icb() {
    for planes in [1, 2] {
        for cache in [false, true] {
            for n in sizes(planes) {
                let d = merge(CopyMode::Dgcb, cache, planes, n, 0.0).throughput_mb_s();
                let g = merge(CopyMode::Gcb, cache, planes, n, 0.0).throughput_mb_s();
                let i = merge(CopyMode::Icb, cache, planes, n, 0.0).throughput_mb_s();
                assert!(d >= g, "planes {planes} cache {cache} n {n}: {d} < {g}");
                if n > planes {
                    assert!(d > i, "planes {planes} cache {cache} n {n}");
                } else {
                    assert!((d - i).abs() / i < 1e-4);
                }
            }
        }
    }
}

/// Sec. V after eq. (11): DGCB "performs slightly better than ICB, because
/// tSR_SET and tR of the current page are overlapped with program busy of
/// the previous page": tICB_N - tDGCB_N = (N-1)(tSR_SET + tR) - N tDL, at
/// any error rate (both carry tDI_EC per page).
#[test]
fn eq11_dgcb_vs_icb_difference() {
    for e in [0.0, 0.5, 1.0] {
        let s = T.stages(1, e);
        for n in 1..=128u64 {
            let diff = s.t_icb(n) as i64 - s.t_dgcb(n) as i64;
            let want = (n as i64 - 1) * (s.t_sr_set + s.t_r) as i64 - n as i64 * T.t_dl_ns as i64;
            assert_eq!(diff, want);
        }
    }
}

/// Fig. 11 text: ICB throughput is "the same regardless of the transaction
/// size"; for GCB and DGCB "the throughput increased as the transaction size
/// grew"; the DGCB-GCB gap narrows as N grows.
#[test]
fn fig11_throughput_trends() {
    for planes in [1, 2] {
        for cache in [false, true] {
            let tp = |m, n| merge(m, cache, planes, n, 0.0).throughput_mb_s();
            let icb0 = tp(CopyMode::Icb, planes);
            let mut prev_gap = f64::MAX;
            let mut prev = (0.0, 0.0);
            for n in sizes(planes) {
                assert!((tp(CopyMode::Icb, n) - icb0).abs() < 1e-9);
                let (g, d) = (tp(CopyMode::Gcb, n), tp(CopyMode::Dgcb, n));
                assert!(g > prev.0 && d >= prev.1, "n {n}");
                let gap = d / g - 1.0;
                assert!(gap <= prev_gap + 1e-12);
                prev = (g, d);
                prev_gap = gap;
            }
        }
    }
}

/// Fig. 11 text: "GCB performed better than ICB when the transaction size was
/// eight pages or more for single plane copy-back. For multi-plane copy-back,
/// the same was true when the transaction size was 32 pages or more", and
/// GCB was lower than the others for the smallest sizes. Both hold under
/// eqs. (9)-(10). The exact crossovers the equations give are N = 4 (single)
/// and N = 14 (two-plane), earlier than the simulated 8 and 32 (and than the
/// "eight pages or less" / "16 pages or less" of Fig. 12), which the
/// equations cannot reproduce: GCB gains tSR_SET + tR per extra page and
/// loses one tDO once, so it overtakes ICB once N > 1 + tDO / (tSR_SET + tR).
#[test]
fn fig11_gcb_vs_icb_without_cache() {
    let better = |planes, n| {
        merge(CopyMode::Gcb, false, planes, n, 0.0).time_ns
            < merge(CopyMode::Icb, false, planes, n, 0.0).time_ns
    };
    for n in 8..=128 {
        assert!(better(1, n), "single n {n}");
    }
    for n in (32..=256).step_by(2) {
        assert!(better(2, n), "two-plane n {n}");
    }
    assert!(!better(1, 1) && !better(1, 2));
    assert!(!better(2, 2) && !better(2, 4) && !better(2, 8));
    let first = |planes| sizes(planes).find(|&n| better(planes, n)).unwrap();
    assert_eq!(first(1), 4);
    assert_eq!(first(2), 14);
}

/// Fig. 11 text: "when the cache operation was used, GCB performed better
/// than ICB regardless of the transaction size". Eq. (12) gives this from
/// N = 2; a one-page transaction has nothing to overlap, so eq. (12) equals
/// eq. (10) there and GCB stays slower than ICB at N = 1 (not reproduced).
#[test]
fn fig11_gcb_cache_beats_icb_from_two_pages() {
    for planes in [1, 2] {
        for n in sizes(planes) {
            let g = merge(CopyMode::Gcb, true, planes, n, 0.0).time_ns;
            let i = merge(CopyMode::Icb, false, planes, n, 0.0).time_ns;
            if n > planes {
                assert!(g < i, "planes {planes} n {n}");
            } else {
                assert!(g > i);
                assert_eq!(g, merge(CopyMode::Gcb, false, planes, n, 0.0).time_ns);
            }
        }
    }
}

/// Sec. V, eqs. (12)-(13) against (10)-(11): cache program hides the data
/// input and program set-up of every page after the first,
/// (N-1)(tSP_SET + tDI) for GCB and (N-1)(tSP_SET + tDIO) for DGCB, and
/// leaves ICB and LCB unchanged; it does not change channel busy time
/// (Sec. III.B.2: cache "does not reduce channel utilization" in time
/// occupied). With it GCB and DGCB "are expected to be the same, because
/// tPROG is the biggest component": within 0.2% at N = 128.
#[test]
fn cache_program_effect() {
    for e in [0.0, 1.0] {
        let s = T.stages(1, e);
        for n in 1..=128u64 {
            assert_eq!(
                s.t_gcb(n) - s.t_gcb_cache(n),
                (n - 1) * (s.t_sp_set + s.t_di)
            );
            assert_eq!(
                s.t_dgcb(n) - s.t_dgcb_cache(n),
                (n - 1) * (s.t_sp_set + s.t_dio)
            );
        }
    }
    for mode in CopyMode::ALL {
        for n in [1, 8, 128] {
            let off = merge(mode, false, 1, n, 0.0);
            let on = merge(mode, true, 1, n, 0.0);
            assert_eq!(off.channel_busy_ns, on.channel_busy_ns);
            if !mode.uses_cache() || n == 1 {
                assert_eq!(off.time_ns, on.time_ns);
            } else {
                assert!(on.time_ns < off.time_ns);
            }
        }
    }
    let g = merge(CopyMode::Gcb, true, 1, 128, 0.0).time_ns as f64;
    let d = merge(CopyMode::Dgcb, true, 1, 128, 0.0).time_ns as f64;
    assert!((g - d) / g < 0.002 && d < g);
}

/// Fig. 13 text, qualitative: throughput falls as the error rate rises;
/// without cache program the reduction is nearly the same for every N
/// (retransmission never overlaps); with it the reduction is largest for the
/// smallest transactions and below the no-cache reduction; two-plane loses
/// more than single plane. The quoted 2.71% / 4.86% (no cache) and 1.51% /
/// 2.77% (cache) depend on the retransmission cost tDI_EC, which the paper
/// does not give, so they are not asserted.
#[test]
fn fig13_retransmission_overhead_trends() {
    let red = |cache, planes, n| {
        let t0 = merge(CopyMode::Dgcb, cache, planes, n, 0.0).throughput_mb_s();
        let t1 = merge(CopyMode::Dgcb, cache, planes, n, 1.0).throughput_mb_s();
        1.0 - t1 / t0
    };
    for planes in [1, 2] {
        let n = 16 * planes;
        let mut prev = 0.0;
        for e in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let t = merge(CopyMode::Dgcb, false, planes, n, e).throughput_mb_s();
            if e > 0.0 {
                assert!(t < prev);
            }
            prev = t;
        }
        let nc: Vec<f64> = sizes(planes).map(|n| red(false, planes, n)).collect();
        let (lo, hi) = nc
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        assert!(hi / lo < 1.06, "no-cache reduction varies {lo}..{hi}");
        let mut prev = f64::MAX;
        for n in sizes(planes).skip(1) {
            let r = red(true, planes, n);
            assert!(r <= prev && r < lo, "cache n {n}");
            prev = r;
        }
    }
    assert!(red(false, 2, 256) > red(false, 1, 128));
    assert!(red(true, 2, 4) > red(true, 1, 2));
}

/// Fig. 14 text: with cache program "the channel utilization level was very
/// high ... when the multi-plane operation was used for GCB, the channel
/// utilization exceeded 60% when the transaction size was 16 pages or more";
/// and "the channel utilization of ICB was lower than that of the
/// copy-backs". DGCB is evaluated at 100% error rate as in the figure.
/// The 60% claim is checked on the power-of-two sizes of the plots (8 stays
/// below, 16 and more exceed it); the equations cross 60% at N = 14.
#[test]
fn fig14_channel_utilisation() {
    let util = |m, cache, planes, n| {
        let e = if m == CopyMode::Dgcb { 1.0 } else { 0.0 };
        merge(m, cache, planes, n, e).channel_utilisation()
    };
    for n in (1..=8).map(|k| 1u32 << k) {
        let u = util(CopyMode::Gcb, true, 2, n);
        assert_eq!(u > 0.6, n >= 16, "two-plane GCB cache n {n}: {u}");
    }
    for planes in [1, 2] {
        for n in sizes(planes) {
            let icb = util(CopyMode::Icb, false, planes, n);
            for m in [CopyMode::Gcb, CopyMode::Dgcb] {
                for cache in [false, true] {
                    assert!(util(m, cache, planes, n) > icb, "{m:?} {cache} {n}");
                    if n > planes {
                        assert!(util(m, true, planes, n) > util(m, false, planes, n));
                    }
                }
            }
        }
    }
}

/// Sec. III.A: LCB transfers both ways on one device with no overlap ("merge
/// operations experience a longer latency"), so it is the slowest mode for
/// every N > 1; a one-page GCB has nothing to overlap and equals it.
#[test]
fn lcb_is_slowest() {
    for n in 1..=128 {
        let l = merge(CopyMode::Lcb, false, 1, n, 0.0).time_ns;
        for m in [CopyMode::Icb, CopyMode::Gcb, CopyMode::Dgcb] {
            let t = merge(m, false, 1, n, 0.0).time_ns;
            if n == 1 && m == CopyMode::Gcb {
                assert_eq!(t, l);
            } else {
                assert!(t < l, "{m:?} n {n}");
            }
        }
    }
}

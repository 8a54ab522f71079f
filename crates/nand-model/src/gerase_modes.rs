//! Deriving the gErase modes of GuardedErase (seed 001 §3.2.3) from a
//! per-wordline endurance model, rather than typing Table 2 in.
//!
//! A wordline erased with the low-stress mode a fraction `r` of the time
//! wears at `s * (1 - r + c * r)` per cycle, where `s` is its normal-mode
//! stress relative to the weakest wordline and `c` the relative stress
//! coefficient (0.35): a 10K-cycle wordline at `r` = 20 % lasts
//! 10K / (0.8 + 0.35 x 0.2) = 11.49K cycles.
//!
//! Step 1 finds the per-wordline low-stress ratios that maximise the block's
//! endurance under a capacity budget: water-filling from the weakest
//! wordlines up, every protected wordline ends at the same average stress,
//! and the ratios sum to the wordlines the mode may leave unusable per cycle
//! (`2n` of 192 for gE(n)). Step 2 picks the preferred (protected wordlines,
//! erase relief ratio) pair: the lowest relief ratio `f` with `n_WL x f` equal
//! to that budget that is still at least the largest per-wordline ratio.

/// Result of step 1 for one block-capacity budget.
#[derive(Clone, Debug, PartialEq)]
pub struct LowStressPlan<const G: usize> {
    /// Low-stress erase ratio per wordline group (0..1).
    pub ratio: [f64; G],
    /// Average P/E stress per group (relative to the weakest wordline).
    pub avg_stress: [f64; G],
    /// The block's expected endurance (cycles): its weakest group's.
    pub endurance: f64,
}

/// Step 1. `endurance` holds each wordline group's normal-mode endurance
/// (cycles), `group_wls` wordlines per group, `coefficient` the relative
/// stress of the low-stress mode, `budget_wls` the wordlines that may be
/// unusable per cycle on average. `None` if the inputs make no sense.
pub fn low_stress_plan<const G: usize>(
    endurance: &[f64; G],
    group_wls: f64,
    coefficient: f64,
    budget_wls: f64,
) -> Option<LowStressPlan<G>> {
    let worst = endurance.iter().copied().fold(f64::INFINITY, f64::min);
    if !(worst > 0.0 && group_wls > 0.0 && (0.0..1.0).contains(&coefficient) && budget_wls >= 0.0) {
        return None;
    }
    let stress = endurance.map(|e| worst / e);
    // Ratio a group needs to bring its average stress down to `level`.
    let need = |s: f64, level: f64| ((1.0 - level / s) / (1.0 - coefficient)).clamp(0.0, 1.0);
    let used = |level: f64| stress.iter().map(|&s| need(s, level)).sum::<f64>() * group_wls;
    // Bisection on the common stress level: lower level, more budget used.
    let (mut lo, mut hi) = (coefficient, 1.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if used(mid) > budget_wls {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let level = hi;
    let ratio = stress.map(|s| need(s, level));
    let mut avg_stress = [0.0; G];
    for (a, (&s, &r)) in avg_stress.iter_mut().zip(stress.iter().zip(ratio.iter())) {
        *a = s * (1.0 - r + coefficient * r);
    }
    let top = avg_stress.iter().copied().fold(0.0, f64::max);
    Some(LowStressPlan {
        ratio,
        avg_stress,
        endurance: worst / top,
    })
}

/// Step 2: the preferred (protected wordlines, erase relief ratio) for a
/// mode whose budget is `budget_wls` unusable wordlines per cycle, with
/// candidates in steps of `step_wls` wordlines: the most wordlines (lowest
/// relief ratio) whose ratio still covers `max_ratio`, the largest
/// per-wordline ratio of step 1. `None` when no candidate covers it.
pub fn preferred_mode(budget_wls: f64, step_wls: u32, max_ratio: f64) -> Option<(u32, f64)> {
    let step = step_wls.max(1);
    let mut best = None;
    // The smallest candidate is the first step that can hold the budget.
    let mut n = step;
    while f64::from(n) < budget_wls && n <= 4096 {
        n += step;
    }
    while n <= 4096 {
        let f = budget_wls / f64::from(n);
        if f + 1e-9 >= max_ratio && f <= 1.0 {
            best = Some((n, f));
        } else {
            break;
        }
        n += step;
    }
    best
}

/// One block erase mode gE(n), as in seed 001 Table 2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GEraseMode {
    /// Mode number `n` (0 is the normal erase).
    pub n: u8,
    /// Wordlines erased in low-stress mode when the mode applies (`n_WL`).
    pub protected_wls: u32,
    /// Share of erases that apply the low-stress mode (`f`, 0..1).
    pub relief_ratio: f64,
    /// Average share of the block's wordlines left unusable per cycle.
    pub capacity_reduction: f64,
    /// Expected block endurance over the weakest wordline's normal one.
    pub max_pe_gain: f64,
}

/// Modes gE(0)..gE(9) derived from per-group normal-erase endurance
/// (`group_wls` wordlines per group): gE(n) may leave `2n` wordlines unusable
/// per cycle (1.04 n % of a 192-wordline block); step 1 spends that budget
/// ([`low_stress_plan`]), step 2 picks the pair in steps of one group
/// ([`preferred_mode`]). gE(0) is the normal erase. `None` if a step fails.
pub fn derive_modes<const G: usize>(
    endurance: &[f64; G],
    group_wls: f64,
    coefficient: f64,
) -> Option<[GEraseMode; 10]> {
    let block_wls = group_wls * G as f64;
    let worst = endurance.iter().copied().fold(f64::INFINITY, f64::min);
    let mut modes = [GEraseMode {
        n: 0,
        protected_wls: 0,
        relief_ratio: 0.0,
        capacity_reduction: 0.0,
        max_pe_gain: 1.0,
    }; 10];
    for (n, mode) in (1u8..).zip(modes.iter_mut().skip(1)) {
        let budget = 2.0 * f64::from(n);
        let plan = low_stress_plan(endurance, group_wls, coefficient, budget)?;
        let max_ratio = plan.ratio.iter().copied().fold(0.0, f64::max);
        // Lossless: group sizes are small whole numbers of wordlines.
        let (protected_wls, relief_ratio) = preferred_mode(budget, group_wls as u32, max_ratio)?;
        *mode = GEraseMode {
            n,
            protected_wls,
            relief_ratio,
            capacity_reduction: budget / block_wls,
            max_pe_gain: plan.endurance / worst,
        };
    }
    Some(modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001 Table 3 for gE(1) (1.04 % of 192 wordlines, groups of 4):
    /// WG 0 and 47 at 10K, WG 1 at 11K, WG 46 at 10.7K, the shown middle
    /// groups at 12K to 12.8K and the rest (not shown) stronger.
    fn table3() -> [f64; 48] {
        let mut e = [13_000.0; 48];
        e[0] = 10_000.0;
        e[1] = 11_000.0;
        e[2] = 12_000.0;
        e[3] = 12_800.0;
        e[44] = 12_300.0;
        e[45] = 11_500.0;
        e[46] = 10_700.0;
        e[47] = 10_000.0;
        e
    }

    #[test]
    fn table3_ratios_and_expected_endurance() {
        let p = low_stress_plan(&table3(), 4.0, 0.35, 2.0).unwrap();
        let pct = |g: usize| (p.ratio[g] * 1000.0).round() / 10.0;
        assert_eq!(pct(0), 18.3);
        assert_eq!(pct(1), 4.7);
        assert_eq!(pct(46), 8.8);
        assert_eq!(pct(47), 18.3);
        for g in [2, 3, 44, 45] {
            assert_eq!(p.ratio[g], 0.0, "WG {g}");
        }
        assert!((p.avg_stress[0] - 0.88).abs() < 0.005);
        assert!((p.avg_stress[3] - 0.78).abs() < 0.005);
        assert!(
            (p.endurance / 1000.0 - 11.35).abs() < 0.01,
            "{}",
            p.endurance
        );
        // The ratios spend exactly the budget: 2 wordlines of 192 per cycle.
        let spent: f64 = p.ratio.iter().sum::<f64>() * 4.0;
        assert!((spent - 2.0).abs() < 1e-6);
    }

    #[test]
    fn step2_prefers_eight_wordlines_at_25_percent_for_ge1() {
        let p = low_stress_plan(&table3(), 4.0, 0.35, 2.0).unwrap();
        let max = p.ratio.iter().copied().fold(0.0, f64::max);
        let (n, f) = preferred_mode(2.0, 4, max).unwrap();
        assert_eq!(n, 8);
        assert!((f - 0.25).abs() < 1e-12);
        // With a smaller need, 12 wordlines at 16.7 % would be preferred.
        let (n, _) = preferred_mode(2.0, 4, 0.15).unwrap();
        assert_eq!(n, 12);
    }

    #[test]
    fn the_papers_single_wordline_example() {
        // 10K cycles, low-stress 20 % of the time at 0.35: 11.49K.
        let e: f64 = 10_000.0 / (0.8 + 0.35 * 0.2);
        assert!((e / 1000.0 - 11.49).abs() < 0.01);
        let p = low_stress_plan(&[10_000.0], 1.0, 0.35, 0.2).unwrap();
        assert!((p.endurance - e).abs() < 1.0);
        assert!(low_stress_plan(&[0.0], 1.0, 0.35, 0.2).is_none());
    }
}

//! Fast preconditioning: the steady state full preconditioning reaches,
//! built directly instead of simulated write by write.
//!
//! Each plane's end state comes from [`crate::steady_model`] (the fill and
//! the random overwrites of the footprint under greedy GC, counts only).
//! The harness then writes it onto the medium: every block the model used
//! is erased as often as the model erased it plus once (format's erase) and
//! programmed page by page, each live unit holding the first-version stamp
//! of a logical unit and the spare area naming it; the core adopts the
//! medium through its mount path (`FullFtl::adopt_unit`, `FullFtl::adopt`),
//! which derives valid counts, free and GC lists from the mapping; the
//! oracle records every unit as written once. Later reads, GC and
//! `--verify` therefore check real data on the medium.
//!
//! Logical units are dealt to live slots through an affine permutation, so
//! the footprint's units spread over blocks as random overwrites spread
//! them. Planes beyond [`MODELLED_PLANES`] reuse the end state of an
//! earlier plane of the same shape.

use std::collections::HashMap;

use firmware_core::{BlockId, Lpn, Nand, PageKind, PlaneId, Spare, UnitMask};
use test_kit::rng::XorShift64Star;

use crate::engine::{Engine, StampOracle, StampUnit};
use crate::sim::Plan;
use crate::steady_model::{run_plane, BlockEnd, PlaneLoad};

/// Planes whose model runs on their own; further planes of the same shape
/// reuse one of theirs (the model's cost grows with the drive otherwise).
pub const MODELLED_PLANES: u32 = 16;

/// Free blocks a plane of the core holds above its GC trigger once full
/// preconditioning ends (measured on `default` and `mqsim-gc16`: GC starts
/// at the trigger and finishes the victims it has begun, with a block
/// ahead for its own stream), so the model keeps as many.
pub const CORE_FREE_ABOVE_TRIGGER: u32 = 2;

/// Why `plan` cannot be preconditioned fast, if it cannot: the steady
/// state is built for the baseline data path on a fault-free medium.
pub fn fast_unsupported(plan: &Plan) -> Option<firmware_core::Reason> {
    let c = &plan.core;
    if c.copyback.mode != firmware_core::CopybackMode::OffChip {
        Some(&"copyback.mode must be off-chip (rcFTL keeps per-page copyback state)")
    } else if c.superblock.enabled || c.superblock.list_pages {
        Some(&"ftl.superblock and ftl.list_pages must be off")
    } else if c.placement.handles > 0 {
        Some(&"host.interface must be the block interface (no placement handles)")
    } else if c.guard.enabled() {
        Some(&"erase.mode must be normal")
    } else if plan.faults.program_fail_prob > 0.0 || plan.faults.erase_fail_prob > 0.0 {
        Some(&"nand.program_fail_prob and nand.erase_fail_prob must be 0")
    } else {
        None
    }
}

/// A bijection of `0..n` that scatters neighbours: `k * a + c mod n`.
struct Scatter {
    n: u64,
    a: u64,
    c: u64,
}

impl Scatter {
    fn new(n: u32, seed: u64) -> Self {
        let n = u64::from(n.max(1));
        let gcd = |mut x: u64, mut y: u64| {
            while y != 0 {
                (x, y) = (y, x % y);
            }
            x
        };
        // Near the golden section of n, coprime to it.
        let mut a = ((n as f64 * 0.618_033_988_7) as u64).max(1);
        while gcd(a, n) != 1 {
            a += 1;
        }
        Scatter { n, a, c: seed % n }
    }

    fn at(&self, k: u64) -> u32 {
        ((k % self.n) * self.a % self.n + self.c).rem_euclid(self.n) as u32
    }
}

/// Blocks of the metadata region, at about its steady size, that each
/// plane keeps free beside the model's blocks (0 without persistence).
fn region_blocks_per_plane(plan: &Plan) -> u32 {
    let c = &plan.core;
    let epp = c.persist.map_entries_per_page;
    if epp == 0 {
        return 0;
    }
    let g = &c.geometry;
    let n_tp = c.logical_units.div_ceil(epp);
    let ppb = g.pages_per_block.max(1);
    // As the core sizes it: written pages up to the cleaning limit (twice
    // the live TPs plus a block per plane, or the configured blocks per
    // plane), an open and an erased block per plane, two blocks of reserve.
    let written = match c.persist.meta_blocks_per_plane {
        0 => (2 * n_tp).div_ceil(ppb) + g.planes(),
        m => m * g.planes(),
    };
    (written + 2 * g.planes() + 2).div_ceil(g.planes())
}

/// Builds the steady state of full preconditioning (fill, then random
/// overwrites of `footprint` units, 0 = all) on an engine whose core has
/// run nothing yet, then starts the core on it and begins a new phase.
pub(crate) fn precondition_fast<N: Nand>(
    eng: &mut Engine<'_, N>,
    plan: &Plan,
    footprint: u32,
    progress: &mut dyn FnMut(u64, &str),
) -> Result<(), firmware_core::Error>
where
    N::Unit: StampUnit,
{
    if let Some(why) = fast_unsupported(plan) {
        return Err(firmware_core::Error::InvalidConfig(why));
    }
    let g = plan.core.geometry;
    let logical = plan.core.logical_units;
    let hot_total = match footprint {
        0 => logical,
        f => f.min(logical),
    };
    let planes = g.planes();
    let upb = g.units_per_block();
    let upp = u32::from(g.units_per_page);
    let anchors = plan.core.persist.enabled();
    let region = region_blocks_per_plane(plan);
    let share = |total: u32, p: u32| {
        let t = u64::from(total);
        let p = u64::from(p);
        let n = u64::from(planes);
        (t * (p + 1) / n - t * p / n) as u32
    };
    // The drive as format leaves it: every block but the anchors erased.
    let mut usable: Vec<Vec<BlockId>> = Vec::with_capacity(planes as usize);
    for p in 0..planes {
        let first = g.first_block(PlaneId(p)).0;
        let mut v = Vec::with_capacity(g.blocks_per_plane as usize);
        for b in first..first + g.blocks_per_plane {
            if anchors && p == 0 && b - first < 2 {
                continue;
            }
            if eng.nand.erase(BlockId(b)).is_ok() {
                v.push(BlockId(b));
            }
        }
        usable.push(v);
    }
    let mut models: HashMap<(usize, u32, u32), Vec<BlockEnd>> = HashMap::new();
    let hot_lpns = Scatter::new(hot_total, 0x5EED);
    let cold_lpns = Scatter::new(logical - hot_total, 0xC01D);
    let (mut hot_k, mut cold_k) = (0u64, 0u64);
    let mut rng = XorShift64Star(0x0FA5_7000_0001);
    let mut seq = 1u64;
    let mut data = vec![N::Unit::default(); upp as usize];
    let mut slots: Vec<u32> = (0..upb).collect();
    let mut owner = vec![u32::MAX; upb as usize];
    let initial_pe = plan.initial_pe;
    for p in 0..planes {
        let (hot, cold) = (share(hot_total, p), share(logical - hot_total, p));
        let blocks = &usable[p as usize];
        let modelled = (blocks.len() as u32).saturating_sub(region);
        let key = (modelled as usize, hot, cold);
        if p < MODELLED_PLANES || !models.contains_key(&key) {
            let load = PlaneLoad {
                blocks: modelled,
                units_per_block: upb,
                hot,
                cold,
                overwrites: 2 * u64::from(hot),
                gc_trigger: plan.core.gc_trigger_blocks + CORE_FREE_ABOVE_TRIGGER,
                seed: 0x9E37 + u64::from(p),
            };
            let end = run_plane(&load).map_err(firmware_core::Error::InvalidConfig)?;
            models.insert(key, end);
        }
        let end = &models[&key];
        for (&b, e) in blocks.iter().zip(end.iter()) {
            if e.written == 0 {
                continue;
            }
            for _ in 0..e.erases {
                eng.nand
                    .erase(b)
                    .map_err(|_| firmware_core::Error::Corrupt(&"fast precondition erase"))?;
            }
            // Which of the written slots hold live units, hot ones first.
            let live = e.hot + e.cold;
            for i in 0..live {
                let j = i + rng.below_u32(e.written - i);
                slots.swap(i as usize, j as usize);
            }
            owner.fill(u32::MAX);
            for (i, &s) in slots.iter().take(live as usize).enumerate() {
                owner[s as usize] = if (i as u32) < e.hot {
                    hot_k += 1;
                    hot_lpns.at(hot_k - 1)
                } else {
                    cold_k += 1;
                    hot_total + cold_lpns.at(cold_k - 1)
                };
            }
            let erase_count = initial_pe + 1 + e.erases;
            for page in 0..g.pages_per_block {
                let ppn = g.ppn(b, page);
                let mut spare = Spare {
                    seq,
                    kind: PageKind::Data,
                    units: UnitMask::full(g.units_per_page),
                    erase_count,
                    ..Spare::default()
                };
                seq += 1;
                for u in 0..upp {
                    let slot = (page * upp + u) as usize;
                    let l = owner[slot];
                    let (lpn, stamp) = if l == u32::MAX {
                        // A dead unit: an older version of some unit.
                        let stale = rng.below_u32(logical);
                        (stale, u64::from(stale) << 32)
                    } else {
                        (l, StampOracle::first_stamp(l))
                    };
                    spare.lpns[u as usize] = Lpn(lpn);
                    data[u as usize].set_stamp(stamp);
                }
                eng.nand
                    .program(ppn, &data, &spare)
                    .map_err(|_| firmware_core::Error::Corrupt(&"fast precondition program"))?;
            }
            // The core and the oracle learn the block's live units. Their
            // entries lie all over both tables: fetch them 16 units ahead.
            let first = g.pun(g.ppn(b, 0), 0).0;
            for (i, &l) in owner.iter().enumerate() {
                if let Some(&ahead) = owner.get(i + 16) {
                    if ahead != u32::MAX {
                        eng.ftl.prefetch_mapping(Lpn(ahead));
                        eng.host().prefetch(ahead);
                    }
                }
                if l != u32::MAX {
                    eng.ftl
                        .adopt_unit(Lpn(l), firmware_core::Pun(first + i as u32))?;
                    eng.host_mut().adopt_first_version(l);
                }
            }
        }
        progress(u64::from(p + 1), "precondition: fast");
    }
    if hot_k != u64::from(hot_total) || cold_k != u64::from(logical - hot_total) {
        return Err(firmware_core::Error::Corrupt(
            &"fast precondition placed the wrong number of units",
        ));
    }
    eng.start_adopted()
}

#[cfg(test)]
mod tests {
    use super::Scatter;

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u32, 2, 7, 1000, 4096, 65_537] {
            let s = Scatter::new(n, 12345);
            let mut seen = vec![false; n as usize];
            for k in 0..u64::from(n) {
                let v = s.at(k) as usize;
                assert!(!seen[v], "n={n} k={k}");
                seen[v] = true;
            }
        }
    }
}

#[cfg(test)]
mod against_full {
    use crate::config::SimConfig;
    use crate::engine::CoreStore;
    use crate::sim::{preconditioned_engine, Plan, Precondition};
    use firmware_core::ftl::tables::BlockState;
    use firmware_core::BlockId;

    /// Blocks holding data, in the region, and live units after
    /// preconditioning `plan` fully or fast; fast is also read back whole.
    fn state(plan: &Plan, fast: bool) -> (u32, u32, u64) {
        let mut store = CoreStore::<u64>::new(&plan.core).unwrap();
        let how = Precondition {
            fast,
            units: 1,
            footprint: 0,
        };
        let medium = plan.medium().unwrap();
        let mut eng =
            preconditioned_engine(plan, &mut store, medium, Some(how), &mut |_, _| {}).unwrap();
        let (mut used, mut meta, mut live) = (0, 0, 0u64);
        for b in 0..plan.core.geometry.total_blocks() {
            let (_, st, v) = eng.ftl.block_info(BlockId(b)).unwrap();
            match st {
                BlockState::Meta => meta += 1,
                BlockState::Full | BlockState::Open | BlockState::Victim => {
                    used += 1;
                    live += u64::from(v);
                }
                _ => {}
            }
        }
        if fast {
            eng.ftl.audit().unwrap();
            eng.verify_all().unwrap();
            assert_eq!(eng.stats.mismatches, 0);
            assert_eq!(eng.stats.read_checks, u64::from(plan.core.logical_units));
        }
        (used, meta, live)
    }

    /// Fast preconditioning leaves the core with every logical unit live
    /// on the medium (read back and checked) in about as many data blocks
    /// as full preconditioning, with and without mapping persistence.
    #[test]
    fn fast_state_matches_full_preconditioning() {
        for epp in ["1020", "0"] {
            let mut cfg = SimConfig::default();
            cfg.apply_set("geometry.blocks_per_plane=64").unwrap();
            cfg.apply_set(&format!("ftl.map_entries_per_page={epp}"))
                .unwrap();
            let plan = Plan::from_config(&cfg).unwrap();
            let (full_used, _, full_live) = state(&plan, false);
            let (fast_used, _, fast_live) = state(&plan, true);
            let logical = u64::from(plan.core.logical_units);
            assert!(full_live.abs_diff(logical) < logical / 100, "{full_live}");
            assert_eq!(fast_live, logical);
            let diff = f64::from(fast_used.abs_diff(full_used)) / f64::from(full_used);
            assert!(
                diff < 0.02,
                "epp {epp}: {fast_used} data blocks, full {full_used}"
            );
        }
    }
}

//! Steady-state WAF of the core's greedy GC against an independent model.
//!
//! The model below shares no code with the FTL: plain arrays, one victim
//! scan per GC, the same shape (one plane of 1024 blocks x 64 pages of
//! 4 KiB, separate host and GC write frontiers, two free blocks reserved).
//! Both see the same workload: a sequential fill, two random overwrites of
//! the logical space (preconditioning), then two more measured.

use firmware_core::{Config, FullFtl, Geometry, Lpn, SyncDriver};
use nand_model::{FaultConfig, ReliabilityConfig, SimMedium};
use sim_harness::engine::CoreStore;
use sim_harness::workload::Rng;

const BLOCKS: u32 = 1024;
const PPB: u32 = 64;
const RESERVE: usize = 2;

/// An independent greedy-GC model: plain arrays, a full scan for the victim.
struct Model {
    owner: Vec<u32>,
    valid: Vec<u32>,
    full: Vec<bool>,
    l2p: Vec<u32>,
    free: std::collections::VecDeque<u32>,
    /// Write frontiers (block, next page): host = 0, GC = 1.
    front: [Option<(u32, u32)>; 2],
    programs: u64,
}

impl Model {
    fn new(logical: u32) -> Self {
        Model {
            owner: vec![u32::MAX; (BLOCKS * PPB) as usize],
            valid: vec![0; BLOCKS as usize],
            full: vec![false; BLOCKS as usize],
            l2p: vec![u32::MAX; logical as usize],
            free: (0..BLOCKS).collect(),
            front: [None, None],
            programs: 0,
        }
    }

    fn frontier_full(&self, s: usize) -> bool {
        self.front[s].is_none_or(|(_, p)| p == PPB)
    }

    /// Appends `lpn` at frontier `s`, opening a free block when it is full.
    fn put(&mut self, s: usize, lpn: u32) {
        if self.frontier_full(s) {
            if let Some((b, _)) = self.front[s] {
                self.full[b as usize] = true;
            }
            self.front[s] = Some((self.free.pop_front().expect("model out of blocks"), 0));
        }
        let (b, p) = self.front[s].unwrap();
        self.front[s] = Some((b, p + 1));
        self.owner[(b * PPB + p) as usize] = lpn;
        self.valid[b as usize] += 1;
        self.l2p[lpn as usize] = b * PPB + p;
        self.programs += 1;
    }

    /// Moves the live pages of the full block with the fewest, then frees it.
    fn collect(&mut self) {
        let v = (0..BLOCKS)
            .filter(|b| self.full[*b as usize])
            .min_by_key(|b| self.valid[*b as usize])
            .unwrap();
        self.full[v as usize] = false;
        for p in 0..PPB {
            let l = self.owner[(v * PPB + p) as usize];
            if l != u32::MAX {
                self.owner[(v * PPB + p) as usize] = u32::MAX;
                self.valid[v as usize] -= 1;
                self.put(1, l);
            }
        }
        self.free.push_back(v);
    }

    fn write(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != u32::MAX {
            self.owner[old as usize] = u32::MAX;
            self.valid[(old / PPB) as usize] -= 1;
        }
        // The host needs a new block and only the reserve is left: collect.
        while self.frontier_full(0) && self.free.len() <= RESERVE {
            self.collect();
        }
        self.put(0, lpn);
    }
}

/// The model's WAF over the measured phase of the shared workload.
fn model_waf(logical: u32, seed: u64) -> f64 {
    let mut m = Model::new(logical);
    let mut rng = Rng::new(seed);
    let total = u64::from(logical) * 5;
    let mut host = 0u64;
    for i in 0..total {
        if i == u64::from(logical) * 3 {
            host = 0;
            m.programs = 0;
        }
        let lpn = if i < u64::from(logical) {
            i as u32
        } else {
            rng.below(u64::from(logical)) as u32
        };
        m.write(lpn);
        host += 1;
    }
    m.programs as f64 / host as f64
}

fn config(op: f64) -> Config {
    let g = Geometry {
        channels: 1,
        dies_per_channel: 1,
        planes_per_die: 1,
        blocks_per_plane: BLOCKS,
        pages_per_block: PPB,
        page_bytes: 4096,
        pages_per_wordline: 1,
        units_per_page: 1,
    };
    let mut cfg = Config::with_op_ratio(g, op).unwrap();
    cfg.gc_reserve_blocks = RESERVE as u32;
    cfg.gc_trigger_blocks = RESERVE as u32;
    cfg.write_buffer_units = 1;
    cfg
}

/// The core through the synchronous driver, same workload as the model.
fn core_waf(op: f64, seed: u64) -> f64 {
    let cfg = config(op);
    let mut store = CoreStore::new(&cfg).unwrap();
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut nand = SimMedium::new(
        cfg.geometry,
        ReliabilityConfig::default(),
        FaultConfig::default(),
    )
    .unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    let logical = cfg.logical_units;
    let mut rng = Rng::new(seed);
    let total = u64::from(logical) * 5;
    for i in 0..total {
        if i == u64::from(logical) * 3 {
            ftl.reset_stats();
        }
        let lpn = if i < u64::from(logical) {
            i as u32
        } else {
            rng.below(u64::from(logical)) as u32
        };
        drv.write(&mut ftl, Lpn(lpn), i).unwrap();
    }
    let s = ftl.stats();
    (s.host_program_units + s.gc_program_units) as f64 / s.host_write_units as f64
}

#[test]
fn greedy_waf_agrees_with_an_independent_model() {
    for op in [0.07, 0.28] {
        let logical = config(op).logical_units;
        let model = model_waf(logical, 11);
        let core = core_waf(op, 11);
        let err = (core - model).abs() / model;
        println!(
            "op {op}: model WAF {model:.3}, core WAF {core:.3}, difference {:.1}%",
            err * 100.0
        );
        assert!(err < 0.10, "op {op}: core {core:.3} vs model {model:.3}");
    }
}

/// The whole simulator path (`ftl synth --precondition`), with a one-page
/// write buffer so it has the model's shape: a larger buffer holds
/// invalidated-but-unwritten data in DRAM and acts as extra spare space.
fn engine_waf(op: f64) -> f64 {
    use sim_harness::config::SimConfig;
    use sim_harness::sim::{run, Plan, RunSpec};
    use sim_harness::workload::{Pattern, Synth, SynthSpec};
    let mut cfg = SimConfig::preset("default").unwrap();
    for kv in [
        "geometry.channels=1".to_string(),
        "geometry.dies_per_channel=1".into(),
        "geometry.planes_per_die=1".into(),
        format!("geometry.blocks_per_plane={BLOCKS}"),
        format!("geometry.pages_per_block={PPB}"),
        "geometry.page_bytes=4096".into(),
        "geometry.pages_per_wordline=1".into(),
        "ftl.gc_reserve_blocks=2".into(),
        "ftl.gc_trigger_blocks=2".into(),
        "ftl.wl_threshold=0".into(),
        "buffer.write_buffer_bytes=4096".into(),
        // The model writes no translation pages: the mapping stays in DRAM.
        "ftl.map_entries_per_page=0".into(),
        format!("ftl.op_ratio={op}"),
    ] {
        cfg.apply_set(&kv).unwrap();
    }
    let plan = Plan::from_config(&cfg).unwrap();
    let logical = plan.core.logical_units;
    let mut src = Synth::new(SynthSpec {
        pattern: Pattern::Random,
        read_pct: 0,
        units: 1,
        requests: 2 * u64::from(logical),
        footprint_units: logical,
        interarrival_ns: 0,
        seed: 5,
        ..SynthSpec::default()
    });
    let out = run(
        &plan,
        RunSpec {
            precondition: true,
            precondition_units: 1,
            precondition_footprint: 0,
            precondition_fast: false,
            verify: false,
            source: &mut src,
            progress: &mut |_, _| {},
        },
    )
    .unwrap();
    assert_eq!(out.run.mismatches, 0);
    (out.ftl.host_program_units + out.ftl.gc_program_units) as f64 / out.ftl.host_write_units as f64
}

#[test]
fn simulator_path_agrees_with_the_model() {
    for op in [0.07, 0.28] {
        let model = model_waf(config(op).logical_units, 11);
        let sim = engine_waf(op);
        let err = (sim - model).abs() / model;
        println!(
            "op {op}: model WAF {model:.3}, simulator WAF {sim:.3}, difference {:.1}%",
            err * 100.0
        );
        assert!(
            err < 0.10,
            "op {op}: simulator {sim:.3} vs model {model:.3}"
        );
    }
}

//! Host 4 KiB write cost of the core alone (synchronous driver, no timing
//! model), in steady state with GC: the figure firmware budgets care about.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use firmware_core::{Config, FullFtl, Geometry, Lpn, SyncDriver};
use nand_model::{FaultConfig, ReliabilityConfig, SimMedium};
use sim_harness::engine::CoreStore;
use sim_harness::workload::Rng;

fn geometry() -> Geometry {
    Geometry {
        channels: 2,
        dies_per_channel: 2,
        planes_per_die: 1,
        blocks_per_plane: 256,
        pages_per_block: 64,
        page_bytes: 4096,
        pages_per_wordline: 1,
        units_per_page: 1,
    }
}

fn bench(c: &mut Criterion) {
    let cfg = Config::with_op_ratio(geometry(), 0.07).expect("config");
    let mut store = CoreStore::new(&cfg).expect("store");
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).expect("ftl");
    let mut nand = SimMedium::new(
        cfg.geometry,
        ReliabilityConfig::default(),
        FaultConfig::default(),
    )
    .expect("medium");
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).expect("format");
    let n = cfg.logical_units;
    // Precondition: fill, then overwrite twice so GC is in steady state.
    for l in 0..n {
        drv.write(&mut ftl, Lpn(l), u64::from(l)).expect("fill");
    }
    let mut rng = Rng::new(1);
    for _ in 0..2 * n {
        let l = rng.below(u64::from(n)) as u32;
        drv.write(&mut ftl, Lpn(l), 1).expect("overwrite");
    }
    let mut g = c.benchmark_group("core");
    g.throughput(Throughput::Elements(1));
    g.bench_function("random_4k_write_steady_state", |b| {
        b.iter_batched(
            || rng.below(u64::from(n)) as u32,
            |l| drv.write(&mut ftl, Lpn(l), 7).expect("write"),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

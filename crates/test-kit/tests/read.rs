//! The kit's read loop against the core's own synchronous driver: both must
//! return the same unit for buffered, flushed, overwritten, trimmed and
//! never-written units.

use firmware_core::{Config, Error, FullFtl, Geometry, Lpn, ReadValue, Slot, SyncDriver};
use nand_model::{FaultConfig, ReliabilityConfig, SimMedium};
use sim_harness::engine::CoreStore;
use test_kit::read::{read, SyncCore};

/// The core with the driver that runs its operations.
struct Driven<'d, 'n, 't> {
    drv: &'d mut SyncDriver<'n, SimMedium>,
    ftl: &'d mut FullFtl<'t>,
    runs: u32,
}

impl<'t> SyncCore<'t> for Driven<'_, '_, 't> {
    type Hooks = firmware_core::Techniques<'t>;
    type Unit = u64;
    type Error = Error;
    fn ftl(&mut self) -> &mut FullFtl<'t> {
        self.ftl
    }
    fn run(&mut self) -> Result<(), Error> {
        self.runs += 1;
        self.drv.run(self.ftl)
    }
    fn unit(&self, slot: Slot) -> Result<u64, Error> {
        self.drv
            .data
            .get(usize::from(slot.0))
            .copied()
            .ok_or(Error::Corrupt(&"slot"))
    }
    fn core_error(&self, e: Error) -> Error {
        e
    }
}

#[test]
fn the_kit_reads_what_the_sync_driver_reads() {
    let geometry = Geometry {
        channels: 2,
        dies_per_channel: 1,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_bytes: 8192,
        pages_per_wordline: 2,
        units_per_page: 2,
    };
    let mut cfg = Config::with_op_ratio(geometry, 0.5).unwrap();
    cfg.write_buffer_units = 6;
    cfg.read_slots = 4;
    cfg.max_inflight = 24;
    let mut store: CoreStore<u64> = CoreStore::new(&cfg).unwrap();
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).unwrap();
    let mut nand = SimMedium::new(
        geometry,
        ReliabilityConfig::default(),
        FaultConfig::default(),
    )
    .unwrap();
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).unwrap();
    let n = cfg.logical_units;
    // Three rounds of overwrites reach flash and GC; the last few stay buffered.
    for round in 1..=3u64 {
        for l in (0..n).step_by(3) {
            drv.write(&mut ftl, Lpn(l), round << 32 | u64::from(l))
                .unwrap();
        }
    }
    drv.trim(&mut ftl, Lpn(3)).unwrap();
    let mut kinds = [0u32; 3];
    let mut d = Driven {
        drv: &mut drv,
        ftl: &mut ftl,
        runs: 0,
    };
    for l in 0..n {
        let got = read(&mut d, Lpn(l)).unwrap();
        let want = d.drv.read(d.ftl, Lpn(l)).unwrap();
        assert_eq!(got, want, "lpn {l}");
        match got {
            ReadValue::Data(v) => {
                assert_eq!(v, 3 << 32 | u64::from(l), "lpn {l}");
                kinds[0] += 1;
            }
            ReadValue::Unmapped => kinds[1] += 1,
            ReadValue::Error => kinds[2] += 1,
        }
    }
    assert_eq!(kinds, [n.div_ceil(3) - 1, n - n.div_ceil(3) + 1, 0]);
    assert!(d.runs > 0, "flushed units were read from the medium");
}

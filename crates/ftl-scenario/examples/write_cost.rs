//! Host binary of the core alone, for counting instructions per host write
//! with `valgrind --tool=callgrind` (`cargo xtask budget` runs it).
//!
//! `write_cost K` formats the drive of `crates/sim-harness/benches/core_write.rs`
//! (2 channels x 2 dies x 256 blocks x 64 pages of 4 KiB, 7 % over-provisioning), fills it,
//! overwrites it twice at random so GC is in steady state, then performs `K`
//! more random 4 KiB writes (the harsh shape). A third argument sets the
//! GC slots per plane (default: the configuration's, two pages' worth). `write_cost K sequential` is
//! the sequential shape: the same drive with 16 KiB pages of four 4 KiB
//! mapping units, filled and overwritten twice in order, then `K` more
//! sequential 4 KiB writes. Running it with `K` and `2K` and subtracting the
//! instruction totals leaves the cost of `K` steady-state writes, GC included;
//! set-up, preconditioning and process start cancel out.
//!
//! The medium is a null one (every operation succeeds at once, nothing is
//! stored) so the count is the core's plus `SyncDriver`'s, not a simulator's.

use firmware_core::{
    BlockId, Config, FullFtl, Geometry, Lpn, Nand, NandResult, Ppn, ReadReport, Spare, SyncDriver,
    UnitMask,
};
use sim_harness::engine::CoreStore;
use test_kit::rng::XorShift64Star as Rng;

/// A medium that accepts everything and stores nothing.
struct NullNand;

impl Nand for NullNand {
    type Unit = u64;

    fn read(&mut self, _: Ppn, _: UnitMask, _: &mut [u64]) -> NandResult {
        Ok(ReadReport::default())
    }
    fn program(&mut self, _: Ppn, _: &[u64], _: &Spare) -> NandResult {
        Ok(ReadReport::default())
    }
    fn erase(&mut self, _: BlockId) -> NandResult {
        Ok(ReadReport::default())
    }
    fn copyback(&mut self, _: Ppn, _: Ppn, _: &Spare) -> NandResult {
        Ok(ReadReport::default())
    }
    fn program_meta(&mut self, _: Ppn, _: &[u8], _: &Spare) -> NandResult {
        Ok(ReadReport::default())
    }
    fn read_meta(&mut self, _: Ppn, _: &mut [u8]) -> NandResult {
        Ok(ReadReport::default())
    }
}

fn main() -> Result<(), String> {
    let k: u64 = std::env::args()
        .nth(1)
        .ok_or("usage: write_cost K [random|sequential] [GC_SLOTS]")?
        .parse()
        .map_err(|e| format!("K: {e}"))?;
    let sequential = match std::env::args().nth(2).as_deref() {
        None | Some("random") => false,
        Some("sequential") => true,
        Some(other) => return Err(format!("shape `{other}`: random or sequential")),
    };
    let upp: u8 = if sequential { 4 } else { 1 };
    let geometry = Geometry {
        channels: 2,
        dies_per_channel: 2,
        planes_per_die: 1,
        blocks_per_plane: 256,
        pages_per_block: 64,
        page_bytes: 4096 * u32::from(upp),
        pages_per_wordline: 1,
        units_per_page: upp,
    };
    let mut cfg = Config::with_op_ratio(geometry, 0.07).map_err(|e| e.to_string())?;
    if let Some(slots) = std::env::args().nth(3) {
        cfg.gc_slots_per_plane = slots.parse().map_err(|e| format!("GC_SLOTS: {e}"))?;
        cfg.validate()
            .map_err(|e| format!("GC_SLOTS {slots}: {e}"))?;
    }
    let mut store = CoreStore::<u64>::new(&cfg).map_err(|e| e.to_string())?;
    let (tables, data) = store.split();
    let mut ftl = FullFtl::new(cfg, tables).map_err(|e| e.to_string())?;
    let mut nand = NullNand;
    let mut drv = SyncDriver::new(&mut nand, data);
    drv.format(&mut ftl).map_err(|e| e.to_string())?;
    let n = cfg.logical_units;
    let mut rng = Rng(0x00C0_FFEE_1234_5679);
    for l in 0..n {
        drv.write(&mut ftl, Lpn(l), u64::from(l))
            .map_err(|e| e.to_string())?;
    }
    let mut next = Next { sequential, at: 0 };
    for _ in 0..2 * n {
        let l = next.lpn(&mut rng, n);
        drv.write(&mut ftl, Lpn(l), 1).map_err(|e| e.to_string())?;
    }
    let before = *ftl.stats();
    measure(&mut drv, &mut ftl, &mut rng, &mut next, k)?;
    let after = ftl.stats();
    println!(
        "{k} steady-state writes: {} gc units, {} gc victims",
        after.gc_program_units - before.gc_program_units,
        after.gc_victims - before.gc_victims
    );
    Ok(())
}

/// The next logical unit a shape writes: uniform random, or in order,
/// wrapping at the end of the drive.
struct Next {
    sequential: bool,
    at: u32,
}

impl Next {
    #[inline]
    fn lpn(&mut self, rng: &mut Rng, n: u32) -> u32 {
        if self.sequential {
            let l = self.at;
            self.at = if l + 1 >= n { 0 } else { l + 1 };
            l
        } else {
            rng.below_u32(n)
        }
    }
}

/// The measured loop: `k` single-unit writes of the shape.
#[inline(never)]
fn measure(
    drv: &mut SyncDriver<'_, NullNand>,
    ftl: &mut FullFtl<'_>,
    rng: &mut Rng,
    next: &mut Next,
    k: u64,
) -> Result<(), String> {
    let n = ftl.logical_units();
    for i in 0..k {
        drv.write(ftl, Lpn(next.lpn(rng, n)), i)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

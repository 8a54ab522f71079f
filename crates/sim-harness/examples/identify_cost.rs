//! Instructions per entry of the Reparo *Identifier*'s loops, for
//! `sim_harness::identify_time::CoreCosts`: builds a 64-die drive of four
//! flash cores (the 4 TB class of `ftl experiment reparo`), fills it at
//! 0.85, fails die 1 of core 3 and keeps writing until it is detected and
//! retired, identifies from the list pages, then runs one loop over every
//! LPN of the victim core PASSES times. Run under callgrind with PASSES 10
//! and 20: the difference over the entries printed is the per-entry count.
//!
//! ```sh
//! cargo build --release -p sim-harness --example identify_cost
//! valgrind --tool=callgrind --quiet target/release/examples/identify_cost STAGE 10   # and 20
//! ```
//! STAGE: `scan` (IDR), `copy` and `region` (CDR), `marks` (CDR*).

use firmware_core::tech::reparo::p2l::P2lMode;
use firmware_core::Geometry;
use sim_harness::reparo::{Drive, DriveSpec, DriveStore, IdentifyStage, Mode};
use test_kit::rng::XorShift64;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let usage = || "usage: identify_cost scan|copy|region|marks PASSES".to_string();
    let stage = match args.get(1).map(String::as_str) {
        Some("scan") => IdentifyStage::Scan,
        Some("copy") => IdentifyStage::Copy,
        Some("region") => IdentifyStage::Region,
        Some("marks") => IdentifyStage::Marks,
        _ => return Err(usage()),
    };
    let passes: u32 = args.get(2).and_then(|p| p.parse().ok()).ok_or_else(usage)?;
    let entries = run(stage, passes).map_err(|e| format!("{e:?}"))?;
    println!("{stage:?}: {entries} entries over {passes} passes");
    Ok(())
}

fn run(stage: IdentifyStage, passes: u32) -> Result<u64, firmware_core::Error> {
    let spec = DriveSpec {
        cores: 4,
        core_geometry: Geometry {
            channels: 4,
            dies_per_channel: 4,
            planes_per_die: 1,
            blocks_per_plane: 24,
            pages_per_block: 64,
            page_bytes: 16384,
            pages_per_wordline: 1,
            units_per_page: 4,
        },
        utilisation: 0.85,
        n_bad_die: 16,
        seed: 1,
    };
    let mut store = DriveStore::new(&spec, P2lMode::Block)?;
    let mut d = Drive::new(spec, &mut store, Mode::CdrStar, P2lMode::Block)?;
    let n = d.logical();
    for l in 0..n {
        d.write(l, l + 1)?;
    }
    d.flush()?;
    d.fail_die(3, 1)?;
    let mut rng = XorShift64(7);
    while d.failed_dies().is_empty() {
        let l = rng.below_mod(n);
        d.write(l, l + 2)?;
        d.flush()?;
    }
    d.activate_cdr(3)?;
    // Identification from the list pages (sets the marks).
    d.get_lba_status(0, 1)?;
    d.identify_stage_work(stage, passes)
}

//! The full build with every technique off must be the baseline: the same
//! operations in the same order, the same counters and the same data, for
//! any sequence of host commands. The full build answers its hot hooks from
//! a cached "no technique is on" test on the host; this is what holds that
//! shortcut to the baseline's answers.

mod common;

use common::{small_geometry, TestNand};
use firmware_core::{
    BaselineFtl, Config, Error, Ftl, FullFtl, Lpn, NandOp, ReadValue, Stats, SyncDriver,
};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
enum Cmd {
    Write(u32),
    Trim(u32),
    Read(u32),
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        6 => (0u32..300).prop_map(Cmd::Write),
        1 => (0u32..1000).prop_map(Cmd::Trim),
        2 => (0u32..1000).prop_map(Cmd::Read),
    ]
}

/// What a run shows: every operation emitted, in order; the counters;
/// what the reads gave.
type Trace = (Vec<NandOp>, Stats, Vec<ReadValue<u64>>);

/// Runs `cmds` on a freshly formatted core of hook set `H`; returns every
/// operation it emitted, in order, its counters and what the reads gave.
fn run<H: firmware_core::ftl::hooks::Hooks>(
    cfg: Config,
    ftl: &mut Ftl<'_, H>,
    cmds: &[Cmd],
) -> Result<Trace, Error> {
    let mut nand = TestNand::new(cfg.geometry);
    let mut data = vec![0u64; cfg.total_slots() as usize];
    let mut ops = Vec::new();
    ftl.format(0)?;
    drain(ftl, &mut nand, &mut data, &mut ops)?;
    let mut reads = Vec::new();
    let n = cfg.logical_units;
    for (i, c) in cmds.iter().enumerate() {
        let mut drv = SyncDriver::new(&mut nand, &mut data);
        match *c {
            Cmd::Write(l) => {
                // Queue the write, then take its operations one by one so
                // they are recorded.
                loop {
                    match ftl.write(Lpn(l % n), 0) {
                        Ok(s) => {
                            drv.data[usize::from(s.0)] = i as u64;
                            break;
                        }
                        Err(Error::Busy) => drain(ftl, drv.nand, drv.data, &mut ops)?,
                        Err(e) => return Err(e),
                    }
                }
            }
            Cmd::Trim(l) => ftl.trim(Lpn(l % n), 0)?,
            Cmd::Read(l) => {
                drain(ftl, drv.nand, drv.data, &mut ops)?;
                reads.push(drv.read(ftl, Lpn(l % n))?);
            }
        }
        drain(ftl, &mut nand, &mut data, &mut ops)?;
    }
    Ok((ops, *ftl.stats(), reads))
}

/// Executes queued operations in order, recording each.
fn drain<H: firmware_core::ftl::hooks::Hooks>(
    ftl: &mut Ftl<'_, H>,
    nand: &mut TestNand,
    data: &mut [u64],
    ops: &mut Vec<NandOp>,
) -> Result<(), Error> {
    while let Some(op) = ftl.poll_op() {
        ops.push(op);
        let r = firmware_core::driver::execute(nand, data, &mut [], &op);
        ftl.complete(op.id, r, 0)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn full_build_with_every_technique_off_is_the_baseline(
        cmds in proptest::collection::vec(cmd(), 1500..2500),
        upp in prop_oneof![Just(1u8), Just(2u8)],
    ) {
        let mut cfg = Config::with_op_ratio(small_geometry(upp), 0.6).unwrap();
        cfg.write_buffer_units = 8;
        cfg.read_slots = 4;
        cfg.max_inflight = 32;
        cfg.wl_threshold = 4;
        cfg.wl_check_interval = 4;
        let mut full_mem = vec![0u8; FullFtl::lend_bytes(&cfg).unwrap()];
        let mut base_mem = vec![0u8; BaselineFtl::lend_bytes(&cfg).unwrap()];
        let mut full = FullFtl::new(cfg, &mut full_mem).unwrap();
        let mut base = BaselineFtl::new(cfg, &mut base_mem).unwrap();
        let f = run(cfg, &mut full, &cmds).unwrap();
        let b = run(cfg, &mut base, &cmds).unwrap();
        // Enough overwrites that GC ran: the hooks it asks were compared too.
        prop_assert!(f.1.gc_victims > 0);
        prop_assert_eq!(f.0.len(), b.0.len());
        prop_assert_eq!(f.0, b.0);
        prop_assert_eq!(f.1, b.1);
        prop_assert_eq!(f.2, b.2);
    }
}

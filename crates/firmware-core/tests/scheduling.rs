//! When the core schedules new work: a completion that arrives while
//! operations still wait in the outbound queue only records its result; the
//! completion that finds the queue empty starts whatever can start.

mod common;

use common::{small_geometry, with_core};
use firmware_core::driver::execute;
use firmware_core::{Config, Lpn, ReadValue};

/// Completes the next queued operation on the test medium.
fn complete_next(
    ftl: &mut firmware_core::FullFtl<'_>,
    drv: &mut firmware_core::SyncDriver<'_, common::TestNand>,
) {
    let op = ftl.poll_op().expect("an operation is queued");
    let r = execute(drv.nand, drv.data, ftl.meta_for(&op), &op);
    ftl.complete(op.id, r, drv.now)
        .expect("completion accepted");
}

/// One-unit pages and 8 operation entries: host programs leave a quarter
/// of them free, so at most 6 are out at once.
fn config() -> Config {
    let mut cfg = Config::with_op_ratio(small_geometry(1), 0.5).unwrap();
    cfg.write_buffer_units = 16;
    cfg.read_slots = 4;
    cfg.max_inflight = 8;
    cfg
}

/// Writes units 0..10 (value `lpn + 1`) without running the medium.
fn write_ten(
    ftl: &mut firmware_core::FullFtl<'_>,
    drv: &mut firmware_core::SyncDriver<'_, common::TestNand>,
) {
    for l in 0..10 {
        let s = ftl.write(Lpn(l), 0).unwrap();
        drv.data[usize::from(s.0)] = u64::from(l) + 1;
    }
    // Six programs went out, four units wait.
    assert_eq!(ftl.ops_queued(), 6);
}

#[test]
fn work_waits_until_the_queue_is_taken() {
    with_core(config(), |ftl, drv| {
        write_ten(ftl, drv);
        complete_next(ftl, drv);
        // An entry is free and a page waits, but five operations are still
        // queued: nothing new yet.
        assert_eq!(ftl.ops_queued(), 5);
        for left in (1..5).rev() {
            complete_next(ftl, drv);
            assert_eq!(ftl.ops_queued(), left);
        }
        // The last completion finds the queue empty: the four waiting units
        // go out at once.
        complete_next(ftl, drv);
        assert_eq!(ftl.ops_queued(), 4);
        drv.run(ftl).unwrap();
        for l in 0..10 {
            assert_eq!(
                drv.read(ftl, Lpn(l)).unwrap(),
                ReadValue::Data(u64::from(l) + 1)
            );
        }
    });
}

#[test]
fn schedule_runs_the_pass_put_off() {
    with_core(config(), |ftl, drv| {
        write_ten(ftl, drv);
        complete_next(ftl, drv);
        assert_eq!(ftl.ops_queued(), 5);
        // The put-off pass: the freed entry takes a waiting page.
        ftl.schedule(drv.now).unwrap();
        assert_eq!(ftl.ops_queued(), 6);
    });
}

proptest::proptest! {
    /// `write_would_block` says exactly when `write` answers `Busy`, with
    /// the buffer filling, overwrites of buffered units and completions
    /// freeing space in any mix.
    #[test]
    fn write_would_block_predicts_busy(
        steps in proptest::collection::vec(
            (0u32..32, proptest::prop_oneof![4 => proptest::strategy::Just(0u8), 1 => 1u8..4]),
            1..120,
        )
    ) {
        with_core(config(), |ftl, drv| {
            for (lpn, completions) in steps {
                let predicted = ftl.write_would_block(Lpn(lpn));
                match ftl.write(Lpn(lpn), drv.now) {
                    Ok(s) => {
                        assert!(!predicted, "predicted busy, write of {lpn} taken");
                        drv.data[usize::from(s.0)] = u64::from(lpn) + 1;
                    }
                    Err(firmware_core::Error::Busy) => {
                        assert!(predicted, "write of {lpn} refused unpredicted");
                    }
                    Err(e) => panic!("write of {lpn}: {e:?}"),
                }
                for _ in 0..completions {
                    if ftl.ops_queued() > 0 {
                        complete_next(ftl, drv);
                    }
                }
            }
        });
    }
}

#[test]
fn a_full_buffer_blocks_new_units_but_not_overwrites() {
    with_core(config(), |ftl, drv| {
        let mut l = 0;
        while !ftl.write_would_block(Lpn(l)) {
            let s = ftl.write(Lpn(l), drv.now).unwrap();
            drv.data[usize::from(s.0)] = u64::from(l) + 1;
            l += 1;
        }
        assert_eq!(ftl.write(Lpn(l), drv.now), Err(firmware_core::Error::Busy));
        // The last unit taken waits in the buffer: overwriting it needs no slot.
        assert!(!ftl.write_would_block(Lpn(l - 1)));
        assert!(ftl.write(Lpn(l - 1), drv.now).is_ok());
        // Completions free slots.
        drv.run(ftl).unwrap();
        assert!(!ftl.write_would_block(Lpn(l)));
    });
}

/// Writes every logical unit three times (GC runs), then reads them back,
/// completing every operation through `poll_op` (copied out) or
/// `poll_op_view` (lent); returns the operations in the order they were
/// taken.
fn drive(lent: bool) -> Vec<firmware_core::NandOp> {
    with_core(config(), |ftl, drv| {
        let mut taken = Vec::new();
        let n = ftl.logical_units();
        for round in 0..3u64 {
            for l in 0..n {
                let s = loop {
                    match ftl.write(Lpn(l), drv.now) {
                        Ok(s) => break s,
                        Err(firmware_core::Error::Busy) => {
                            assert!(ftl.ops_queued() > 0, "busy with nothing queued");
                            take_one(ftl, drv, lent, &mut taken);
                        }
                        Err(e) => panic!("write of {l}: {e:?}"),
                    }
                };
                drv.data[usize::from(s.0)] = u64::from(l) + 100 * round;
                while ftl.ops_queued() > 0 {
                    take_one(ftl, drv, lent, &mut taken);
                }
            }
        }
        drv.flush(ftl).unwrap();
        assert!(ftl.stats().gc_program_units > 0, "GC ran");
        for l in 0..n {
            assert_eq!(
                drv.read(ftl, Lpn(l)).unwrap(),
                ReadValue::Data(u64::from(l) + 200)
            );
        }
        taken
    })
}

/// Takes, executes and completes the next queued operation one way or
/// the other, recording it.
fn take_one(
    ftl: &mut firmware_core::FullFtl<'_>,
    drv: &mut firmware_core::SyncDriver<'_, common::TestNand>,
    lent: bool,
    taken: &mut Vec<firmware_core::NandOp>,
) {
    let (id, r) = if lent {
        let v = ftl.poll_op_view().expect("an operation is queued");
        taken.push(firmware_core::NandOp {
            id: v.id,
            cmd: *v.cmd,
            origin: v.origin,
        });
        let r = firmware_core::driver::execute_cmd(drv.nand, drv.data, v.meta, v.cmd);
        (v.id, r)
    } else {
        let op = ftl.poll_op().expect("an operation is queued");
        taken.push(op);
        (op.id, execute(drv.nand, drv.data, ftl.meta_for(&op), &op))
    };
    ftl.complete(id, r, drv.now).expect("completion accepted");
}

#[test]
fn the_lent_operation_is_the_polled_one() {
    let copied = drive(false);
    let lent = drive(true);
    assert!(copied
        .iter()
        .any(|op| matches!(op.cmd, firmware_core::NandCmd::Read { .. })));
    assert_eq!(copied, lent);
}

/// An operation the driver has taken can be read back by its id until it
/// completes, even while later ones are taken and earlier ones complete;
/// after its completion (and once its entry is reused) the id names
/// nothing.
#[test]
fn a_taken_operation_is_lent_until_it_completes() {
    with_core(config(), |ftl, drv| {
        write_ten(ftl, drv);
        let mut taken = Vec::new();
        while let Some(op) = ftl.poll_op() {
            taken.push(op);
        }
        assert_eq!(taken.len(), 6);
        for op in &taken {
            assert_eq!(ftl.op_in_flight(op.id), Some((&op.cmd, op.origin)));
        }
        let (first, rest) = taken.split_first().unwrap();
        let r = execute(drv.nand, drv.data, ftl.meta_for(first), first);
        ftl.complete(first.id, r, drv.now).unwrap();
        assert_eq!(ftl.op_in_flight(first.id), None);
        for op in rest {
            assert_eq!(ftl.op_in_flight(op.id), Some((&op.cmd, op.origin)));
        }
        for op in rest {
            let r = execute(drv.nand, drv.data, ftl.meta_for(op), op);
            ftl.complete(op.id, r, drv.now).unwrap();
        }
        // The waiting units went out in entries the first ones used: the
        // old ids still name nothing, the new ones their own commands.
        let next = ftl.poll_op().expect("the waiting units went out");
        assert_eq!(ftl.op_in_flight(first.id), None);
        assert_eq!(ftl.op_in_flight(next.id), Some((&next.cmd, next.origin)));
        assert!(taken.iter().all(|op| op.id != next.id));
    });
}

/// A unit the host overwrites while GC's copy of it is being programmed
/// keeps the host's data: the relocation's completion finds the unit no
/// longer current and leaves its mapping alone. The medium executes the
/// GC program when the driver takes it; only its completion is held back
/// until the overwrite is in.
#[test]
fn an_overwrite_during_a_relocation_wins() {
    with_core(config(), |ftl, drv| {
        let n = ftl.logical_units();
        let mut value = vec![0u64; n as usize];
        let mut held = None;
        let mut stamp = 0u64;
        'fill: for round in 0..8u32 {
            for i in 0..n {
                // A stride that is not a multiple of the pages keeps the
                // victims partly valid, so GC relocates.
                let l = (i * 7 + round) % n;
                stamp += 1;
                let s = loop {
                    match ftl.write(Lpn(l), drv.now) {
                        Ok(s) => break s,
                        Err(firmware_core::Error::Busy) => {
                            assert!(ftl.ops_queued() > 0, "busy with nothing queued");
                            complete_next(ftl, drv);
                        }
                        Err(e) => panic!("write of {l}: {e:?}"),
                    }
                };
                drv.data[usize::from(s.0)] = stamp;
                value[l as usize] = stamp;
                while let Some(op) = ftl.poll_op() {
                    let r = execute(drv.nand, drv.data, ftl.meta_for(&op), &op);
                    let relocation = op.origin == firmware_core::Origin::Gc
                        && matches!(op.cmd, firmware_core::NandCmd::Program { .. });
                    if relocation && held.is_none() {
                        held = Some((op, r));
                        break 'fill;
                    }
                    ftl.complete(op.id, r, drv.now).unwrap();
                }
            }
        }
        let (op, r) = held.expect("GC relocated a unit");
        let firmware_core::NandCmd::Program { spare, .. } = op.cmd else {
            unreachable!("held a program");
        };
        let moved = spare.lpns[0];
        stamp += 1;
        let s = ftl.write(moved, drv.now).expect("the buffer has room");
        drv.data[usize::from(s.0)] = stamp;
        value[moved.0 as usize] = stamp;
        ftl.complete(op.id, r, drv.now).unwrap();
        drv.run(ftl).unwrap();
        drv.flush(ftl).unwrap();
        ftl.audit().unwrap();
        for l in 0..n {
            assert_eq!(
                drv.read(ftl, Lpn(l)).unwrap(),
                ReadValue::Data(value[l as usize]),
                "unit {l}"
            );
        }
    });
}

/// `has_output` is true exactly while a poll has something to do: an
/// operation queued, a host completion waiting, or a read slot handed out
/// that the next poll releases.
#[test]
fn has_output_says_whether_a_poll_finds_anything() {
    with_core(config(), |ftl, drv| {
        assert!(!ftl.has_output());
        write_ten(ftl, drv);
        assert!(ftl.has_output());
        drv.run(ftl).unwrap();
        assert_eq!(ftl.ops_queued(), 0);
        assert!(!ftl.has_output());
        assert!(ftl.poll_completion().is_none());
        // A read hands its slot out to the host; the next poll takes it back.
        assert_eq!(drv.read(ftl, Lpn(3)).unwrap(), ReadValue::Data(4));
        assert!(ftl.has_output());
        assert!(ftl.poll_completion().is_none());
        assert!(!ftl.has_output());
    });
}

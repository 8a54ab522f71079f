//! Mount from damaged metadata: a translation page, a checkpoint (block
//! table), an anchor page or a power-cut record gets bit flips or garbage,
//! then the drive mounts. Mount must end within a bounded number of
//! operations and either refuse with an error or come up with every unit
//! reading back as its last acknowledged value or as a reported media
//! error, never as other data (older data and zeros included).
//!
//! List pages (Reparo's block-level P2L lists) are not covered: they exist
//! only with mapping persistence off, where nothing is mounted.

use firmware_core::driver::{execute, ReadValue, SyncDriver};
use firmware_core::medium::nand::{Nand, NandResult, Spare, WlSet};
use firmware_core::{BlockId, Error, FullFtl, Lpn, Ppn, UnitMask};
use nand_model::SimMedium;
use proptest::prelude::*;
use sim_harness::config::SimConfig;
use sim_harness::engine::CoreStore;
use sim_harness::sim::Plan;

/// Most NAND operations a mount may take before it counts as looping.
const MOUNT_OP_LIMIT: u64 = 1_000_000;

/// Magics of the metadata page kinds (first word of the page).
const MAGIC_TP: u32 = 0x3147_5054;
const MAGIC_CUT: u32 = 0x3154_5543;
const MAGIC_ANCHOR: u32 = 0x3148_434E;
const MAGIC_TABLE: u32 = 0x3154_4B42;
const KINDS: [u32; 4] = [MAGIC_TP, MAGIC_TABLE, MAGIC_ANCHOR, MAGIC_CUT];

fn plan() -> Plan {
    let mut cfg = SimConfig::preset("default").unwrap();
    for s in [
        "geometry.channels=2",
        "geometry.dies_per_channel=1",
        "geometry.blocks_per_plane=32",
        "geometry.pages_per_block=16",
        "ftl.op_ratio=0.5",
        "ftl.map_entries_per_page=256",
        "buffer.write_buffer_bytes=131072",
    ] {
        cfg.apply_set(s).unwrap();
    }
    Plan::from_config(&cfg).unwrap()
}

/// How a page is damaged.
#[derive(Clone, Copy, Debug)]
enum Damage {
    /// XOR `mask` into the byte at `offset` (modulo the page).
    Flip { offset: usize, mask: u8 },
    /// Every byte replaced by this one.
    Fill(u8),
}

/// The medium, recording each metadata page's kind as it is programmed
/// and damaging one page as it is read back.
struct Damaged {
    inner: SimMedium,
    /// Metadata pages in program order with their magic.
    meta: Vec<(Ppn, u32)>,
    target: Option<(Ppn, Damage)>,
    damaged_reads: u64,
}

impl Nand for Damaged {
    type Unit = u64;

    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [u64]) -> NandResult {
        self.inner.read(page, units, out)
    }
    fn program(&mut self, page: Ppn, data: &[u64], spare: &Spare) -> NandResult {
        self.inner.program(page, data, spare)
    }
    fn erase(&mut self, block: BlockId) -> NandResult {
        self.inner.erase(block)
    }
    fn guarded_erase(&mut self, block: BlockId, low: &WlSet, retired: &WlSet) -> NandResult {
        self.inner.guarded_erase(block, low, retired)
    }
    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        self.inner.copyback(src, dst, spare)
    }
    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        let magic = bytes
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        self.meta.retain(|(p, _)| *p != page);
        self.meta.push((page, magic));
        self.inner.program_meta(page, bytes, spare)
    }
    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        let r = self.inner.read_meta(page, out)?;
        if let Some((p, d)) = self.target {
            if p == page && !out.is_empty() {
                self.damaged_reads += 1;
                match d {
                    Damage::Flip { offset, mask } => out[offset % out.len()] ^= mask.max(1),
                    Damage::Fill(b) => out.fill(b),
                }
            }
        }
        Ok(r)
    }
}

/// One case: the workload, how it ends, and the damage.
#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    /// Host commands per epoch (two epochs, a power cut between them).
    ops: u32,
    /// The second epoch ends in a clean shutdown (else a power cut).
    shutdown: bool,
    /// Which kind of metadata page is damaged (index into [`KINDS`]).
    kind: usize,
    /// Which page of that kind, counted from the newest.
    from_newest: usize,
    damage: Damage,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(offset, mask)| Damage::Flip { offset, mask }),
        // Header bytes (magic, fields, CRC) are hit often on purpose.
        (0usize..16, any::<u8>()).prop_map(|(offset, mask)| Damage::Flip { offset, mask }),
        any::<u8>().prop_map(Damage::Fill),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<u64>(),
        50u32..600,
        any::<bool>(),
        0usize..KINDS.len(),
        prop_oneof![Just(0usize), 0usize..6],
        damage(),
    )
        .prop_map(|(seed, ops, shutdown, kind, from_newest, damage)| Case {
            seed,
            ops,
            shutdown,
            kind,
            from_newest,
            damage,
        })
}

/// Runs the operations the core emits until none is left.
fn drain(ftl: &mut FullFtl<'_>, nand: &mut Damaged, data: &mut [u64]) -> Result<u64, Error> {
    let mut n = 0u64;
    while let Some(op) = ftl.poll_op() {
        let r = execute(nand, data, ftl.meta_for(&op), &op);
        ftl.complete(op.id, r, 0)?;
        n += 1;
        if n >= MOUNT_OP_LIMIT {
            break;
        }
    }
    Ok(n)
}

/// Writes and trims at random over `span`, keeping the oracle.
fn epoch(
    d: &mut SyncDriver<'_, Damaged>,
    ftl: &mut FullFtl<'_>,
    x: &mut u64,
    (ops, span): (u32, u32),
    acked: &mut [Option<u64>],
    version: &mut u64,
) {
    for _ in 0..ops {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let lpn = (*x >> 8) as u32 % span;
        if (*x).is_multiple_of(10) {
            d.trim(ftl, Lpn(lpn)).unwrap();
            acked[lpn as usize] = None;
        } else {
            *version += 1;
            let v = (u64::from(lpn) << 32) | *version;
            d.write(ftl, Lpn(lpn), v).unwrap();
            acked[lpn as usize] = Some(v);
        }
    }
}

/// A power cut with a full capacitor flush.
fn cut(ftl: &mut FullFtl<'_>, nand: &mut Damaged, data: &mut [u64]) {
    ftl.power_fail(0).unwrap();
    drain(ftl, nand, data).unwrap();
    assert!(ftl.cut_finished());
}

fn mount_clean(ftl: &mut FullFtl<'_>, nand: &mut Damaged, data: &mut [u64]) {
    ftl.mount(0).unwrap();
    drain(ftl, nand, data).unwrap();
    assert!(ftl.is_ready());
}

fn run(c: &Case) -> Result<(), TestCaseError> {
    let plan = plan();
    let cfg = plan.core;
    let mut nand = Damaged {
        inner: plan.medium().unwrap(),
        meta: Vec::new(),
        target: None,
        damaged_reads: 0,
    };
    let mut store: CoreStore<u64> = CoreStore::new(&cfg).unwrap();
    let logical = cfg.logical_units;
    let span = logical / 2;
    let mut acked = vec![None::<u64>; logical as usize];
    let mut version = 0u64;
    let mut x = c.seed | 1;
    // Two epochs: format (then mount) and a workload, ended by a power cut,
    // the last one by a clean shutdown if the case says so.
    for e in 0..2 {
        let (t, data) = store.split();
        let mut ftl = FullFtl::new(cfg, t).unwrap();
        if e == 0 {
            SyncDriver::new(&mut nand, data).format(&mut ftl).unwrap();
        } else {
            mount_clean(&mut ftl, &mut nand, data);
        }
        let mut d = SyncDriver::new(&mut nand, data);
        epoch(
            &mut d,
            &mut ftl,
            &mut x,
            (c.ops, span),
            &mut acked,
            &mut version,
        );
        if e == 1 && c.shutdown {
            d.shutdown(&mut ftl).unwrap();
        } else {
            cut(&mut ftl, &mut nand, data);
        }
    }
    // The damage: the chosen page of the chosen kind, counted from the newest.
    let of_kind: Vec<Ppn> = nand
        .meta
        .iter()
        .rev()
        .filter(|(_, m)| KINDS.get(c.kind) == Some(m))
        .map(|(p, _)| *p)
        .collect();
    let page = of_kind.get(c.from_newest.min(of_kind.len().saturating_sub(1)));
    nand.target = page.map(|p| (*p, c.damage));
    let undamaged = nand.target.is_none();
    let (t, data) = store.split();
    let mut ftl = FullFtl::new(cfg, t).unwrap();
    let mounted = ftl.mount(0).and_then(|()| drain(&mut ftl, &mut nand, data));
    let ops = match mounted {
        // A refusal must be a clear error, not a crash.
        Err(Error::Corrupt(_)) => return Ok(()),
        Err(e) => return Err(TestCaseError::fail(format!("mount failed with {e:?}"))),
        Ok(n) => n,
    };
    prop_assert!(
        ops < MOUNT_OP_LIMIT,
        "mount did not end in {ops} operations"
    );
    prop_assert!(
        ftl.is_ready(),
        "mount stalled: nothing in flight, not ready"
    );
    let mut d = SyncDriver::new(&mut nand, data);
    for lpn in 0..logical {
        let got = d.read(&mut ftl, Lpn(lpn));
        let want = acked[lpn as usize];
        match (got, want) {
            (Ok(ReadValue::Error), _) if !undamaged => {}
            (Ok(ReadValue::Data(v)), Some(w)) if v == w => {}
            (Ok(ReadValue::Unmapped), None) => {}
            (got, want) => {
                return Err(TestCaseError::fail(format!(
                "unit {lpn}: read {got:?}, last acknowledged {want:?} ({} damaged reads of {:?})",
                d.nand.damaged_reads, d.nand.target
            )))
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn damaged_metadata_never_reads_back_as_good_data(c in case()) {
        run(&c)?;
    }
}

/// Without damage every unit reads back exactly as acknowledged (the
/// oracle and the workload are right, so the property above fails only on
/// what the damage does).
#[test]
fn undamaged_mount_reads_back_every_unit() {
    for shutdown in [false, true] {
        let c = Case {
            seed: 7,
            ops: 400,
            shutdown,
            kind: usize::MAX,
            from_newest: 0,
            damage: Damage::Fill(0),
        };
        run(&c).unwrap();
    }
}

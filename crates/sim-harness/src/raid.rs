//! RAID-5 host harness for Reparo (seed 001, Sec. 5.3 and 5.6): a group of
//! multi-core drives ([`crate::reparo::Drive`]), filled, worked, hit by a die
//! failure and recovered, then checked byte for byte against an oracle.
//!
//! Recovery:
//! * `baseline` (Rebuild Assist): the drive with the failed die is replaced
//!   by a fresh one; every readable LBA is copied over, every failed one is
//!   rebuilt from the other drives.
//! * `idr`, `cdr`, `cdr-star` (Reparo): the host asks the drive for its
//!   failed LBAs range by range (`range_bytes`, 64 MB), rebuilds each from
//!   the other drives and writes it back; CDR first turns on the
//!   redirection, whose fake failures come back in the same answers.
//!
//! Time: the *Identifier* runs on the timed engine's resources of the
//! victim core ([`crate::identify_time`]: NAND reads with tR and the channel
//! transfer, L2P passes over the DRAM bus at measured cycles per entry,
//! answers over the host link), and post-recovery IOPS and WAF come from a
//! run of the repaired drive's cores on the engine of `ftl synth`
//! ([`Drive::timed_random_write_perf`]). Rebuild traffic between drives
//! stays a bandwidth model: bytes over the host's recovery bandwidth
//! ([`TimeModel::host_bytes_per_s`] times the `bw_limit` share). The earlier
//! count-based figures ([`TimeModel`]'s per-event costs) are kept beside
//! them as `identify_formula_seconds`. Stripe contents are `u64` stamps;
//! parity is their XOR.

use firmware_core::tech::reparo::p2l::P2lMode;
use firmware_core::{Error, ReadValue};

use crate::engine::EngineParams;
use crate::identify_time::{CoreCosts, IdentifyClock};
use crate::reparo::{effective_p2l, Drive, DriveSpec, DriveStore, Mode};

/// Costs of the time model.
#[derive(Clone, Copy, Debug)]
pub struct TimeModel {
    /// Host bandwidth available to the RAID, bytes/s.
    pub host_bytes_per_s: f64,
    /// Share of it recovery may use (1.0: all; 0.1: 10 %).
    pub bw_limit: f64,
    /// Checking one L2P entry, ns.
    pub scan_ns: f64,
    /// Copying one L2P entry into the shared area (CDR), ns.
    pub copy_ns: f64,
    /// Reporting one failed LBA (response and mapping update), ns.
    pub found_ns: f64,
    /// Checking one mark bit (CDR*), ns.
    pub mark_ns: f64,
    /// One NAND page read (tR), ns.
    pub read_ns: f64,
    /// One NAND page program (tPROG), ns.
    pub prog_ns: f64,
    /// One block erase (tBERS), ns.
    pub erase_ns: f64,
    /// Mapping unit, bytes.
    pub unit_bytes: u64,
    /// Timing of the timed identification and of the post-recovery run
    /// (the configuration's engine parameters).
    pub engine: EngineParams,
    /// A flash core's per-entry work and clock.
    pub costs: CoreCosts,
}

impl TimeModel {
    /// The defaults documented in `docs/results.md`: 200 ns per L2P entry
    /// (a PM1643-class core scans a 32 TB table in about half an hour),
    /// 50 ns per copied entry, 1 µs per failed LBA, 200/32 ns per mark,
    /// and the preset's NAND and host timings.
    pub fn with_timings(read_us: f64, prog_us: f64, erase_us: f64, host_mib_s: f64) -> Self {
        let mut engine = crate::sim::Plan::from_config(&crate::config::SimConfig::default())
            .map(|p| p.engine)
            .unwrap_or(EngineParams {
                timing: crate::timing::TimingParams {
                    t_read_ns: 0,
                    t_prog_ns: 0,
                    t_erase_ns: 0,
                    t_cmd_ns: 0,
                    channel_bytes_per_ns: 0.0,
                    dram_bytes_per_ns: 0.0,
                    host_bytes_per_ns: 0.0,
                    spare_bytes: 0,
                    t_dl_ns: 0,
                    gc_copy: crate::gc_merge::CopyMode::Gcb,
                    cache_program: false,
                    gc_cross_way: false,
                    retx_byte_ns: 0,
                    codewords_per_unit: 1,
                },
                queue_depth: 32,
                initial_pe: 0,
                sample_step_ns: 0,
            });
        engine.timing.t_read_ns = (read_us * 1e3).round() as u64;
        engine.timing.t_prog_ns = (prog_us * 1e3).round() as u64;
        engine.timing.t_erase_ns = (erase_us * 1e3).round() as u64;
        engine.timing.host_bytes_per_ns = host_mib_s * 1_048_576.0 / 1e9;
        TimeModel {
            engine,
            costs: CoreCosts::default(),
            host_bytes_per_s: host_mib_s * 1_048_576.0,
            bw_limit: 1.0,
            scan_ns: 200.0,
            copy_ns: 50.0,
            found_ns: 1000.0,
            mark_ns: 200.0 / 32.0,
            read_ns: read_us * 1e3,
            prog_ns: prog_us * 1e3,
            erase_ns: erase_us * 1e3,
            unit_bytes: 4096,
        }
    }
}

/// What a RAID run measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RaidOutcome {
    /// Recovery mode.
    pub mode: String,
    /// Drives in the group.
    pub ssds: u32,
    /// Dies per drive.
    pub dies: u32,
    /// Host-visible LBAs per drive.
    pub lbas_per_drive: u64,
    /// Total rebuild time, s (identification plus data movement).
    pub rebuild_seconds: f64,
    /// Identification time on the timed engine, s.
    pub identify_seconds: f64,
    /// Identification time of the earlier count-based formula (200 ns per
    /// L2P entry, 1 us per found LBA, tR per read), s, for comparison.
    pub identify_formula_seconds: f64,
    /// Bytes read and written by the host to rebuild.
    pub rebuild_bytes: u64,
    /// Real failed LBAs reported.
    pub failed_lbas: u64,
    /// CDR fake failures reported.
    pub fake_failures: u64,
    /// LBAs that lived on the failed die (simulator ground truth).
    pub truth_failed: u64,
    /// Whether the answers were exactly the ground truth plus the fake failures.
    pub status_exact: bool,
    /// NAND page reads of P2L identification.
    pub p2l_page_reads: u64,
    /// Failed blocks identified from lists the controller held in RAM
    /// (blocks still open, or waiting for a list page): no read.
    pub p2l_ram_blocks: u64,
    /// Failed pages identified from the controller's record because no
    /// neighbour page held their LBAs (page-level entrustment): no read.
    pub p2l_ram_pages: u64,
    /// Blocks of the failed die that held data.
    pub failed_die_blocks: u64,
    /// Units differing from the oracle after recovery (every LBA of every drive).
    pub mismatches: u64,
    /// Identification time with the L2P scan split over 1, 2 and 4 cores
    /// (1: IDR's victim alone; more: CDR's shared-area split), s.
    pub identify_by_cores: [f64; 3],
    /// Rebuild time with recovery limited to 10 % of the host bandwidth, s.
    pub rebuild_seconds_bw10: f64,
    /// Random-write WAF of the repaired (or replacement) drive.
    pub post_waf: f64,
    /// Random-write IOPS of the repaired (or replacement) drive, from a
    /// timed engine run of its cores.
    pub post_iops: f64,
}

/// Parameters of a RAID run.
#[derive(Clone, Copy, Debug)]
pub struct RaidSpec {
    /// Shape of each drive.
    pub drive: DriveSpec,
    /// Drives in the RAID-5 group.
    pub ssds: u32,
    /// Stripe unit in LBAs.
    pub stripe_lbas: u64,
    /// Recovery mode.
    pub mode: Mode,
    /// P2L entrustment for CDR*.
    pub p2l: P2lMode,
    /// Random stripe-unit updates before the failure.
    pub writes_before: u64,
    /// Drive, core and die that fail.
    pub fail: (u32, u32, u32),
    /// Query range, LBAs.
    pub range_lbas: u64,
    /// Time model.
    pub time: TimeModel,
    /// Workload seed.
    pub seed: u64,
    /// Post-recovery random writes on the repaired drive, in drive
    /// capacities (as many again warm it up first); 0 skips the measure.
    pub post_writes: f64,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The RAID-5 layout: for row `r = lba / stripe`, the parity drive is
/// `r % ssds` (rotating); every drive holds the same LBA range.
struct Group<'a> {
    drives: Vec<Drive<'a>>,
    expect: Vec<Vec<u64>>,
    stripe: u64,
}

impl Group<'_> {
    fn parity_drive(&self, lba: u64) -> usize {
        ((lba / self.stripe) % self.drives.len() as u64) as usize
    }

    /// Writes data `v` to drive `d` at `lba` and updates the parity.
    fn update(&mut self, d: usize, lba: u64, v: u64) -> Result<(), Error> {
        let p = self.parity_drive(lba);
        if p == d {
            return Ok(());
        }
        let old = self.expect[d][lba as usize];
        let par = self.expect[p][lba as usize] ^ old ^ v;
        self.drives[d].write(lba, v)?;
        self.drives[p].write(lba, par)?;
        self.expect[d][lba as usize] = v;
        self.expect[p][lba as usize] = par;
        Ok(())
    }

    /// Rebuilds `lba` of drive `d` from the others (counts reads).
    fn rebuild(&mut self, d: usize, lba: u64) -> Result<u64, Error> {
        let mut x = 0u64;
        for (i, dr) in self.drives.iter_mut().enumerate() {
            if i == d {
                continue;
            }
            match dr.read(lba)? {
                ReadValue::Data(v) => x ^= v,
                ReadValue::Unmapped => {}
                ReadValue::Error => return Err(Error::Corrupt(&"second failure in a stripe")),
            }
        }
        Ok(x)
    }

    fn mismatches(&mut self) -> Result<u64, Error> {
        let mut bad = 0;
        for (d, dr) in self.drives.iter_mut().enumerate() {
            for lba in 0..dr.logical() {
                let want = self.expect[d][lba as usize];
                let got = match dr.read(lba)? {
                    ReadValue::Data(v) => Some(v),
                    ReadValue::Unmapped => Some(0),
                    ReadValue::Error => None,
                };
                if got != Some(want) {
                    bad += 1;
                }
            }
        }
        Ok(bad)
    }
}

/// Builds the group, fills it, fails a die, recovers and verifies.
pub fn run(spec: &RaidSpec) -> Result<RaidOutcome, Error> {
    let n = spec.ssds as usize;
    if n < 3 {
        return Err(Error::InvalidConfig(&"raid: need at least three drives"));
    }
    let mut stores = (0..=n)
        .map(|_| DriveStore::new(&spec.drive, effective_p2l(spec.mode, spec.p2l)))
        .collect::<Result<Vec<_>, _>>()?;
    let (spare_store, stores) = stores.split_last_mut().ok_or(Error::OutOfSpace)?;
    let mut drives = Vec::new();
    for (i, s) in stores.iter_mut().enumerate() {
        let mut ds = spec.drive;
        ds.seed ^= i as u64 * 0x9E37;
        drives.push(Drive::new(ds, s, spec.mode, spec.p2l)?);
    }
    let lbas = drives[0].logical();
    let mut g = Group {
        expect: vec![vec![0u64; lbas as usize]; n],
        drives,
        stripe: spec.stripe_lbas.max(1),
    };
    // Fill: every data unit gets a stamp, parity follows.
    let mut rng = spec.seed;
    for lba in 0..lbas {
        let p = g.parity_drive(lba);
        let mut par = 0;
        for d in 0..n {
            if d != p {
                rng = mix(rng.wrapping_add(1));
                let v = rng | 1;
                g.drives[d].write(lba, v)?;
                g.expect[d][lba as usize] = v;
                par ^= v;
            }
        }
        g.drives[p].write(lba, par)?;
        g.expect[p][lba as usize] = par;
    }
    let random_update = |g: &mut Group<'_>, rng: &mut u64| -> Result<(), Error> {
        *rng = mix(rng.wrapping_add(7));
        let lba = *rng % lbas;
        let d = (mix(*rng) % n as u64) as usize;
        g.update(d, lba, mix(*rng ^ 0x55) | 1)
    };
    for _ in 0..spec.writes_before {
        random_update(&mut g, &mut rng)?;
    }
    for d in &mut g.drives {
        d.flush()?;
    }
    let (fd, fc, fdie) = spec.fail;
    let fd = fd as usize;
    let truth = g.drives[fd].lbas_on_die(fc, fdie)?;
    let die_blocks = g.drives[fd].written_blocks_on_die(fc, fdie)?;
    let at_failure = g.expect[fd].clone();
    g.drives[fd].fail_die(fc, fdie)?;
    // Keep the workload going until the detector reports the die.
    let mut guard = 0u64;
    while g.drives[fd].failed_dies().is_empty() {
        // Updates that would touch the failed drive's lost data go to
        // other drives only while undetected: the host does not know yet.
        rng = mix(rng.wrapping_add(7));
        let lba = rng % lbas;
        let d = (mix(rng) % n as u64) as usize;
        let p = g.parity_drive(lba);
        if d == fd || p == fd {
            // Writes to the failed drive are full-unit overwrites, parity
            // recomputed from the others (no read of the lost unit).
            let v = mix(rng ^ 0x55) | 1;
            if d != p {
                g.drives[d].write(lba, v)?;
                g.expect[d][lba as usize] = v;
                let mut par = 0;
                for (i, e) in g.expect.iter().enumerate() {
                    if i != p {
                        par ^= e[lba as usize];
                    }
                }
                g.drives[p].write(lba, par)?;
                g.expect[p][lba as usize] = par;
            }
        } else {
            g.update(d, lba, mix(rng ^ 0x55) | 1)?;
        }
        for dr in &mut g.drives {
            dr.flush()?;
        }
        guard += 1;
        if guard > 1_000_000 {
            return Err(Error::Corrupt(&"raid: die failure never detected"));
        }
    }
    // The ground truth at detection: LBAs stored on the failed die when it
    // failed and not overwritten since.
    let truth: std::collections::BTreeSet<u64> = truth
        .into_iter()
        .filter(|&l| g.expect[fd][l as usize] == at_failure[l as usize])
        .collect();
    let mut read_fail = std::collections::BTreeSet::new();
    for l in 0..lbas {
        if matches!(g.drives[fd].read(l)?, ReadValue::Error) {
            read_fail.insert(l);
        }
    }
    let tm = spec.time;
    let bw = tm.host_bytes_per_s * tm.bw_limit;
    let ub = tm.unit_bytes;
    let mut out = RaidOutcome {
        mode: spec.mode.name().to_string(),
        ssds: spec.ssds,
        dies: spec.drive.dies(),
        lbas_per_drive: lbas,
        truth_failed: truth.len() as u64,
        ..RaidOutcome::default()
    };
    let victim_core = fc;
    out.failed_die_blocks = die_blocks;
    if spec.mode == Mode::Baseline {
        // Rebuild Assist: copy readable units, rebuild the failed ones.
        let mut repl = Drive::new(spec.drive, spare_store, spec.mode, spec.p2l)?;
        let mut bytes = 0u64;
        for lba in 0..lbas {
            let v = match g.drives[fd].read(lba)? {
                ReadValue::Data(v) => {
                    bytes += ub;
                    v
                }
                ReadValue::Unmapped => continue,
                ReadValue::Error => {
                    out.failed_lbas += 1;
                    bytes += ub * (n as u64 - 1);
                    g.rebuild(fd, lba)?
                }
            };
            repl.write(lba, v)?;
            bytes += ub;
        }
        repl.flush()?;
        g.drives[fd] = repl;
        out.rebuild_bytes = bytes;
        out.rebuild_seconds = bytes as f64 / bw;
        out.rebuild_seconds_bw10 = bytes as f64 / (tm.host_bytes_per_s * 0.1);
        out.status_exact = out.failed_lbas == truth.len() as u64;
    } else {
        g.drives[fd].time_identification(tm.engine.timing, tm.costs);
        if matches!(spec.mode, Mode::Cdr | Mode::CdrStar) {
            g.drives[fd].activate_cdr(victim_core)?;
        }
        let mut reported = std::collections::BTreeSet::new();
        let mut bytes = 0u64;
        let mut start = 0;
        while start < lbas {
            let failed = g.drives[fd].get_lba_status(start, spec.range_lbas)?;
            for &lba in &failed {
                reported.insert(lba);
                let v = g.rebuild(fd, lba)?;
                bytes += ub * (n as u64 - 1) + ub;
                g.drives[fd].write(lba, v)?;
                if g.expect[fd][lba as usize] != v {
                    return Err(Error::Corrupt(
                        &"raid: rebuilt value differs from the oracle",
                    ));
                }
            }
            start += spec.range_lbas;
        }
        g.drives[fd].flush()?;
        let fake: std::collections::BTreeSet<u64> = {
            let m = g.drives[fd].master();
            (0..lbas).filter(|&l| m.is_fake_failure(l)).collect()
        };
        out.fake_failures = g.drives[fd].fake_reported;
        out.failed_lbas = g.drives[fd].reported - out.fake_failures;
        let want: std::collections::BTreeSet<u64> = truth.union(&fake).copied().collect();
        out.status_exact = reported == want && read_fail == truth;
        out.rebuild_bytes = bytes;
        // Identification time from the cores' counters.
        let st = g.drives[fd].identify_stats();
        let v = st[victim_core as usize];
        let cores = f64::from(spec.drive.cores);
        let found = v.found as f64 * tm.found_ns;
        let ns = match spec.mode {
            Mode::Idr => v.l2p_scanned as f64 * tm.scan_ns + found,
            Mode::Cdr => v.l2p_scanned as f64 * (tm.copy_ns + tm.scan_ns / cores) + found,
            _ => {
                v.p2l.page_reads as f64 * tm.read_ns
                    + v.p2l.candidates as f64 * tm.scan_ns
                    + v.marks_scanned as f64 * tm.mark_ns
                    + found
            }
        };
        for (i, c) in [1u32, 2, 4].into_iter().enumerate() {
            // The L2P scan of the same entries on a fresh clock: in place
            // on one core, or copied to the shared area and split.
            let mut clock =
                IdentifyClock::new(spec.drive.core_geometry, tm.engine.timing, tm.costs);
            if c == 1 {
                clock.scan(v.l2p_scanned);
            } else {
                clock.copy_and_split(v.l2p_scanned, c);
            }
            clock.answer(v.found);
            out.identify_by_cores[i] = clock.now as f64 / 1e9;
        }
        out.p2l_page_reads = v.p2l.page_reads;
        out.p2l_ram_blocks = v.p2l.ram_blocks;
        out.p2l_ram_pages = v.p2l.ram_pages;
        out.identify_formula_seconds = ns / 1e9;
        out.identify_seconds = g.drives[fd].identify_ns() as f64 / 1e9;
        out.rebuild_seconds = out.identify_seconds + bytes as f64 / bw;
        out.rebuild_seconds_bw10 =
            out.identify_seconds + bytes as f64 / (tm.host_bytes_per_s * 0.1);
    }
    out.mismatches = g.mismatches()?;
    if spec.post_writes > 0.0 {
        let w = (lbas as f64 * spec.post_writes) as u64;
        let drive = g.drives.swap_remove(fd);
        let (waf, iops) = drive.timed_random_write_perf(w, w, spec.seed ^ 0x77, tm.engine)?;
        out.post_waf = waf;
        out.post_iops = iops;
    }
    Ok(out)
}

//! Event-driven GC copy transactions on one channel (seed 002, Secs. III-IV).
//!
//! A transaction copies `N` valid pages of a victim block. Each copy mode is
//! a set of way-controller scripts run by [`crate::flash_bus`]:
//!
//! * ICB: one way reads a page into its register, sends it out for the ECC
//!   check, writes the corrected bytes back and programs from the register;
//! * LCB: one way reads, sends the page out, takes it back in and programs
//!   (another plane of the same die, so nothing overlaps);
//! * GCB: the source way reads and sends the page to the controller buffer
//!   while the destination way programs the previous one; the destination
//!   takes the page in when its array (or, with cache program, its cache
//!   register) is free;
//! * DGCB: the destination issues its program command and signals
//!   `DinReady`; the source drives the page on the channel once, the
//!   destination latches it (`DdtDone`), gets the corrected bytes when the
//!   ECC engine found errors, and starts programming.
//!
//! Every stage length comes from a [`NandTiming`] (the parameters of the
//! analytic model in [`crate::gc_merge`]), so the two can be compared: the
//! tests hold the event-driven merge times to equations (9)-(13) within 1%.

use crate::config::SimConfig;
use crate::flash_bus::{Channel, Msg, Step};
use crate::gc_merge::{CopyMode, Merge, MergeTime, NandTiming, TABLE_II};

/// Command cycles of a block erase (60h, 3 row addresses, D0h).
const ERASE_CMD_CYCLES: u64 = 5;

/// The [`NandTiming`] of a configuration: array times, page and spare size,
/// ECC strength and pages per block from the configuration; tRC = tWC =
/// tRWC = one transfer at `timing.channel_mts`; tDL from `timing.t_dl_ns`;
/// command cycles `timing.t_cmd_ns` / tWC; tWB, tADL, tRR and the
/// retransmission burst from [`TABLE_II`] (ONFI 2.1).
pub fn nand_timing(cfg: &SimConfig) -> NandTiming {
    let t = &cfg.timing;
    let cycle = (1e3 / t.channel_mts).round().max(1.0) as u64;
    let cmd_cycles = (t.t_cmd_ns / cycle as f64).round() as u64;
    NandTiming {
        page_bytes: cfg.geometry.page_bytes,
        spare_bytes: cfg.geometry.spare_bytes,
        t_r_ns: (t.t_read_us * 1e3).round() as u64,
        t_prog_ns: (t.t_prog_us * 1e3).round() as u64,
        t_bers_ns: (t.t_erase_us * 1e3).round() as u64,
        t_rc_ns: cycle,
        t_wc_ns: cycle,
        t_rwc_ns: cycle,
        t_dl_ns: t.t_dl_ns.round() as u64,
        read_cmd_cycles: cmd_cycles,
        prog_cmd_cycles: cmd_cycles,
        ecc_bits_per_kib: u32::from(cfg.nand.ecc_limit),
        pages_per_block: cfg.geometry.pages_per_block,
        ..TABLE_II
    }
}

/// The transaction a configuration describes: `gc.copy_mode`,
/// `timing.cache_program`, `gc.transaction_pages` pages, one or two planes
/// (`geometry.planes_per_die`, capped at 2), at `error_rate` (fraction of
/// the correctable bits per page).
pub fn merge_of(cfg: &SimConfig, error_rate: f64) -> Merge {
    Merge {
        mode: cfg.gc.copy_mode.mode(),
        cache: cfg.timing.cache_program,
        planes: u32::from(cfg.geometry.planes_per_die.clamp(1, 2)),
        pages: cfg.gc.transaction_pages,
        error_rate,
    }
}

/// Stage lengths of one plane's share of an operation.
struct Stage {
    planes: usize,
    read_cmd: u64,
    t_wb: u64,
    t_rr: u64,
    t_r: u64,
    t_prog: u64,
    data: u64,
    ddt: u64,
    retx: u64,
    prog_cmd: u64,
    confirm: u64,
}

impl Stage {
    fn new(t: &NandTiming, m: &Merge) -> Stage {
        let prog_cycles = t.prog_cmd_cycles.saturating_sub(1);
        Stage {
            planes: m.planes as usize,
            read_cmd: t.read_cmd_cycles * t.t_wc_ns,
            t_wb: t.t_wb_ns,
            t_rr: t.t_rr_ns,
            t_r: t.t_r_ns,
            t_prog: t.t_prog_ns,
            data: t.transfer_bytes() * t.t_rc_ns,
            ddt: t.transfer_bytes() * t.t_rwc_ns + t.t_dl_ns,
            retx: t.t_di_ec(m.error_rate),
            prog_cmd: prog_cycles * t.t_wc_ns + t.t_adl_ns,
            confirm: t.t_wc_ns,
        }
    }

    /// Read command of every plane, then one read busy.
    fn read(&self, s: &mut Vec<Step>) {
        for _ in 0..self.planes {
            s.push(Step::Bus(self.read_cmd));
            s.push(Step::Delay(self.t_wb));
        }
        s.push(Step::Busy(self.t_r));
    }

    /// Data out of every plane into the controller buffer.
    fn data_out(&self, s: &mut Vec<Step>) {
        for _ in 0..self.planes {
            s.push(Step::Delay(self.t_rr));
            s.push(Step::Bus(self.data));
        }
    }

    /// Program command, `din` on the channel and confirm for every plane.
    fn program_with(&self, s: &mut Vec<Step>, din: u64) {
        for _ in 0..self.planes {
            s.push(Step::Bus(self.prog_cmd + din + self.confirm));
            s.push(Step::Delay(self.t_wb));
        }
    }

    /// Corrected bytes written back, one burst per plane (none without errors).
    fn retransmit(&self, s: &mut Vec<Step>) {
        if self.retx > 0 {
            for _ in 0..self.planes {
                s.push(Step::Bus(self.retx));
            }
        }
    }
}

/// The way-controller scripts of one transaction: way 0 is the source,
/// way 1 (GCB and DGCB only) the destination.
pub fn scripts(t: &NandTiming, m: &Merge) -> Vec<Vec<Step>> {
    let st = Stage::new(t, m);
    let ops = m.pages.div_ceil(m.planes.max(1));
    let mut src = Vec::new();
    let mut dst = Vec::new();
    for k in 0..ops {
        match m.mode {
            CopyMode::Icb => {
                st.read(&mut src);
                st.data_out(&mut src);
                st.retransmit(&mut src);
                st.program_with(&mut src, 0);
                src.extend([Step::Array(st.t_prog), Step::WaitArray]);
            }
            CopyMode::Lcb => {
                st.read(&mut src);
                st.data_out(&mut src);
                st.program_with(&mut src, st.data);
                src.extend([Step::Array(st.t_prog), Step::WaitArray]);
            }
            CopyMode::Gcb => {
                st.read(&mut src);
                // One operation's pages fit the buffer: wait until the
                // previous ones went in.
                if k > 0 {
                    src.push(Step::Wait(Msg::DataInDone, k));
                }
                st.data_out(&mut src);
                src.push(Step::Post(Msg::DataOutDone));
                dst.push(Step::Wait(Msg::DataOutDone, k + 1));
                if !m.cache {
                    dst.push(Step::WaitArray);
                }
                st.program_with(&mut dst, st.data);
                dst.extend([Step::Post(Msg::DataInDone), Step::Array(st.t_prog)]);
            }
            CopyMode::Dgcb => {
                st.read(&mut src);
                if !m.cache {
                    dst.push(Step::WaitArray);
                }
                for j in 0..st.planes as u32 {
                    let n = k * m.planes + j + 1;
                    src.extend([
                        Step::Delay(st.t_rr),
                        Step::Wait(Msg::DinReady, n),
                        Step::Bus(st.ddt),
                        Step::Post(Msg::DdtDone),
                    ]);
                    dst.extend([
                        Step::Bus(st.prog_cmd),
                        Step::Post(Msg::DinReady),
                        Step::Wait(Msg::DdtDone, n),
                    ]);
                    if st.retx > 0 {
                        dst.push(Step::Bus(st.retx));
                    }
                    dst.extend([Step::Bus(st.confirm), Step::Delay(st.t_wb)]);
                }
                dst.push(Step::Array(st.t_prog));
            }
        }
    }
    let mut all = vec![src];
    if !dst.is_empty() {
        dst.push(Step::WaitArray);
        all.push(dst);
    }
    all
}

/// Runs one transaction through the event-driven channel model.
pub fn simulate_merge(t: &NandTiming, m: Merge) -> MergeTime {
    let run = Channel::new(scripts(t, &m)).run();
    MergeTime {
        time_ns: run.end_ns,
        channel_busy_ns: run.channel_busy_ns,
        pages: m.pages,
        page_bytes: t.page_bytes,
    }
}

/// A whole GC of one victim block: every page of the block (one per plane)
/// copied in transactions of `m.pages` pages one after the other, then the
/// (multi-plane) erase of the victim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GcRun {
    /// Time from the first command to the erase completing, ns.
    pub time_ns: u64,
    /// Channel busy time, ns.
    pub channel_busy_ns: u64,
    /// Transactions run.
    pub transactions: u32,
}

impl GcRun {
    /// Channel utilisation during the GC.
    pub fn channel_utilisation(&self) -> f64 {
        self.channel_busy_ns as f64 / self.time_ns.max(1) as f64
    }
}

/// Runs a whole GC (Fig. 12) through the event-driven channel model.
pub fn simulate_gc(t: &NandTiming, m: Merge) -> GcRun {
    let total = t.pages_per_block * m.planes;
    let mut left = total;
    let mut out = GcRun {
        time_ns: 0,
        channel_busy_ns: 0,
        transactions: 0,
    };
    while left > 0 {
        let pages = left.min(m.pages.max(1));
        let r = simulate_merge(t, Merge { pages, ..m });
        out.time_ns += r.time_ns;
        out.channel_busy_ns += r.channel_busy_ns;
        out.transactions += 1;
        left -= pages;
    }
    let erase = Channel::new(vec![vec![
        Step::Bus(ERASE_CMD_CYCLES * t.t_wc_ns),
        Step::Delay(t.t_wb_ns),
        Step::Busy(t.t_bers_ns),
    ]])
    .run();
    out.time_ns += erase.end_ns;
    out.channel_busy_ns += erase.channel_busy_ns;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(mode: CopyMode, cache: bool, planes: u32, pages: u32, err: f64) -> Merge {
        Merge {
            mode,
            cache,
            planes,
            pages,
            error_rate: err,
        }
    }

    #[test]
    fn dgcb_flashsim_gives_the_table_ii_parameters() {
        let cfg = SimConfig::preset("dgcb-flashsim").unwrap();
        assert_eq!(nand_timing(&cfg), TABLE_II);
    }

    #[test]
    fn icb_and_lcb_match_their_equations_exactly() {
        for n in [1, 8] {
            for err in [0.0, 1.0] {
                let m = merge(CopyMode::Icb, false, 1, n, err);
                assert_eq!(simulate_merge(&TABLE_II, m), TABLE_II.merge(m));
            }
            let m = merge(CopyMode::Lcb, false, 1, n, 0.0);
            assert_eq!(simulate_merge(&TABLE_II, m), TABLE_II.merge(m));
        }
    }

    #[test]
    fn dgcb_moves_each_page_over_the_channel_once() {
        let g = simulate_merge(&TABLE_II, merge(CopyMode::Gcb, true, 1, 16, 0.0));
        let d = simulate_merge(&TABLE_II, merge(CopyMode::Dgcb, true, 1, 16, 0.0));
        let ratio = d.channel_busy_ns as f64 / g.channel_busy_ns as f64;
        assert!((0.49..0.51).contains(&ratio), "{ratio}");
    }

    #[test]
    fn a_whole_gc_adds_the_erase() {
        let m = merge(CopyMode::Icb, false, 1, 128, 0.0);
        let gc = simulate_gc(&TABLE_II, m);
        assert_eq!(gc.transactions, 1);
        let erase = ERASE_CMD_CYCLES * 25 + 100 + TABLE_II.t_bers_ns;
        assert_eq!(gc.time_ns, simulate_merge(&TABLE_II, m).time_ns + erase);
        let small = simulate_gc(&TABLE_II, Merge { pages: 48, ..m });
        assert_eq!(small.transactions, 3);
    }
}

//! Analytic merge-time model of garbage-collection page copies (seed 002,
//! Jeong and Song, "A Technique to Improve Garbage Collection Performance for
//! NAND Flash-based Storage Systems", Sec. V, equations (1)-(13)).
//!
//! A GC *transaction* copies `N` valid pages from a source way to a
//! destination way on the same channel. The paper splits every read and
//! program into a command/address stage, an operation-busy stage and a data
//! transfer stage and derives closed-form merge times for four copy modes:
//!
//! * ICB, internal copy-back (eq. 9): read into the page register, data out
//!   for the ECC check, program from the register (plus the corrected bytes);
//! * LCB, external local copy-back (Fig. 4(b), no numbered equation): read,
//!   data out, data in, program, all on one device so nothing overlaps;
//! * GCB, external global copy-back through the controller (eq. 10, with cache
//!   program eq. 12);
//! * DGCB, direct data transfer (eq. 11, with cache program eq. 13): the
//!   destination latches the page while the source drives the channel, and
//!   only corrected bytes are retransmitted.
//!
//! Channel busy time is not an equation of the paper; it is counted here from
//! the timing diagrams (Figs. 4-7) so that channel utilisation during GC
//! (Fig. 14) follows. Two-plane operation uses the same equations with the
//! data transfer and command stages doubled per operation and `N / 2`
//! operations ("very similar to (10)-(13), except for the length of data
//! transfer time", Sec. V).
//!
//! All times are integer nanoseconds. The event-driven GC copy model in
//! [`crate::gc_copy`] runs the same transactions stage by stage and is held
//! to these equations by its tests.

/// NAND and channel timing parameters of the analytic model.
///
/// The paper's Table II and Sec. VI.A fix the array times, cycle times, page
/// and spare size and ECC strength; the command/address stage lengths are not
/// given in the paper and are filled from ONFI 2.1 limits (see [`TABLE_II`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NandTiming {
    /// Main data area of a page in bytes.
    pub page_bytes: u32,
    /// Spare area of a page in bytes; transferred with every page.
    pub spare_bytes: u32,
    /// Read busy (array to page register), tR.
    pub t_r_ns: u64,
    /// Program busy, tPROG.
    pub t_prog_ns: u64,
    /// Block erase busy, tBERS.
    pub t_bers_ns: u64,
    /// Read (RE) cycle time per byte, tRC.
    pub t_rc_ns: u64,
    /// Write (WE) cycle time per byte, tWC; also used for command and
    /// address cycles.
    pub t_wc_ns: u64,
    /// Cycle time of a direct transfer where RE of the source and WE of the
    /// destination toggle together, tRWC.
    pub t_rwc_ns: u64,
    /// Skew between RE of the source and WE of the destination in a direct
    /// transfer, tDL (Fig. 10).
    pub t_dl_ns: u64,
    /// WE high to busy, tWB: after a confirm command.
    pub t_wb_ns: u64,
    /// Address to data loading, tADL: before program data in.
    pub t_adl_ns: u64,
    /// Ready to RE low, tRR: after read busy, before data out.
    pub t_rr_ns: u64,
    /// Command and address cycles of a page read (00h, 5 addresses, 30h).
    pub read_cmd_cycles: u64,
    /// Command and address cycles of a page program (80h, 5 addresses, 10h).
    pub prog_cmd_cycles: u64,
    /// Command and address cycles of one change-write-column burst used to
    /// retransmit corrected bytes (85h, 2 column addresses).
    pub retx_cmd_cycles: u64,
    /// Correctable bits per KiB of main data (24 in the paper).
    pub ecc_bits_per_kib: u32,
    /// Pages per block (128 in the paper's experiments).
    pub pages_per_block: u32,
}

/// The paper's Table II device: tR 75 us, tPROG 1300 us, tBERS 3 ms, 8 KiB
/// pages with 448 B spare, tRC = tWC = tRWC = 25 ns, tDL 20 ns, 24-bit ECC
/// per KiB (192 bits per page), 128 pages per block.
///
/// Not in the paper, taken from ONFI 2.1 (the paper's ref. [13]): tWB 100 ns
/// (maximum), tADL 70 ns and tRR 20 ns (minimum), 7 command/address cycles for
/// read and program, 3 for a change-write-column burst. With them
/// tSR_SET = 295 ns and tSP_SET = 345 ns, and the Fig. 12 percentages of the
/// text come out to the paper's two decimals (within one unit of the last
/// digit for DGCB without cache program).
pub const TABLE_II: NandTiming = NandTiming {
    page_bytes: 8192,
    spare_bytes: 448,
    t_r_ns: 75_000,
    t_prog_ns: 1_300_000,
    t_bers_ns: 3_000_000,
    t_rc_ns: 25,
    t_wc_ns: 25,
    t_rwc_ns: 25,
    t_dl_ns: 20,
    t_wb_ns: 100,
    t_adl_ns: 70,
    t_rr_ns: 20,
    read_cmd_cycles: 7,
    prog_cmd_cycles: 7,
    retx_cmd_cycles: 3,
    ecc_bits_per_kib: 24,
    pages_per_block: 128,
};

/// How a GC page copy moves data (Sec. III).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyMode {
    /// Internal copy-back: data stays in the device; data out only for the
    /// ECC check, corrected bytes written back (eq. 9).
    Icb,
    /// External local copy-back: source and destination in one device on
    /// different planes; nothing overlaps (Fig. 4(b)).
    Lcb,
    /// External global copy-back through the controller buffer (eq. 10/12).
    Gcb,
    /// Global copy-back with direct data transfer between ways (eq. 11/13).
    Dgcb,
}

impl CopyMode {
    /// All modes, in the order the paper introduces them.
    pub const ALL: [CopyMode; 4] = [CopyMode::Icb, CopyMode::Lcb, CopyMode::Gcb, CopyMode::Dgcb];

    /// Short upper-case name as used in the paper.
    pub fn name(self) -> &'static str {
        match self {
            CopyMode::Icb => "ICB",
            CopyMode::Lcb => "LCB",
            CopyMode::Gcb => "GCB",
            CopyMode::Dgcb => "DGCB",
        }
    }

    /// Whether cache program changes this mode's merge time. ICB and LCB
    /// keep source and destination on one device, so the next read cannot
    /// overlap the program and the paper gives ICB no cache variant.
    pub fn uses_cache(self) -> bool {
        matches!(self, CopyMode::Gcb | CopyMode::Dgcb)
    }
}

/// The stage times of one (single- or multi-plane) operation, equations
/// (1)-(8), from which the merge equations (9)-(13) are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stages {
    /// Data out of one operation, eq. (1).
    pub t_do: u64,
    /// Data in of one operation, eq. (2).
    pub t_di: u64,
    /// Retransmission of corrected bytes, tDI_EC, the last term of eq. (3).
    pub t_di_ec: u64,
    /// Direct transfer of one operation, eq. (3).
    pub t_dio: u64,
    /// Command/address stage plus internal delays of a read, tSR_SET.
    pub t_sr_set: u64,
    /// Command/address stage plus internal delays of a program, tSP_SET.
    pub t_sp_set: u64,
    /// Read busy, tR.
    pub t_r: u64,
    /// Program busy, tPROG.
    pub t_prog: u64,
    /// Channel-occupying part of tSR_SET (command and address cycles).
    pub bus_sr_set: u64,
    /// Channel-occupying part of tSP_SET (cycles and tADL).
    pub bus_sp_set: u64,
}

impl Stages {
    /// Eq. (4): tDIO_GAIN = (tDI + tDO) - tDIO, the time direct transfer
    /// saves per page over a separate data out and data in.
    pub fn t_dio_gain(&self) -> i64 {
        (self.t_di + self.t_do) as i64 - self.t_dio as i64
    }

    /// Eq. (5): tSR = tSR_SET + tR + tDO, a whole read.
    pub fn t_sr(&self) -> u64 {
        self.t_sr_set + self.t_r + self.t_do
    }

    /// Eq. (6): tSP = tSP_SET + tDI + tPROG, a whole program.
    pub fn t_sp(&self) -> u64 {
        self.t_sp_set + self.t_di + self.t_prog
    }

    /// Eq. (7): tSR_EXC.D = tSR - tDO, a read without its data transfer.
    pub fn t_sr_exc_d(&self) -> u64 {
        self.t_sr() - self.t_do
    }

    /// Eq. (8): tSP_EXC.D = tSP - tDI, a program without its data transfer.
    pub fn t_sp_exc_d(&self) -> u64 {
        self.t_sp() - self.t_di
    }

    /// Eq. (9): tICB_N = (tSR + tSP_EXC.D + tDI_EC) x N, internal copy-back
    /// of `n` operations; nothing overlaps.
    pub fn t_icb(&self, n: u64) -> u64 {
        (self.t_sr() + self.t_sp_exc_d() + self.t_di_ec) * n
    }

    /// External local copy-back of `n` operations, (tSR + tSP) x N: read,
    /// data out, data in and program of one device in sequence (Fig. 4(b);
    /// the paper gives no equation for it).
    pub fn t_lcb(&self, n: u64) -> u64 {
        (self.t_sr() + self.t_sp()) * n
    }

    /// Eq. (10): tGCB_N = tSR + tSP x N; each read after the first hides
    /// under the previous program busy.
    pub fn t_gcb(&self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.t_sr() + self.t_sp() * n
    }

    /// Eq. (11): tDGCB_N = tSR_EXC.D + (tDIO + tSP_EXC.D) x N; the read
    /// set-up and busy of each page after the first hide under the previous
    /// program busy, data out and data in are one transfer.
    pub fn t_dgcb(&self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.t_sr_exc_d() + (self.t_dio + self.t_sp_exc_d()) * n
    }

    /// Eq. (12): tGCB_N_cache = tSR + tSP_SET + tDI + tPROG x N; with cache
    /// program only the first page's transfers are exposed.
    pub fn t_gcb_cache(&self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.t_sr() + self.t_sp_set + self.t_di + self.t_prog * n
    }

    /// Eq. (13): tDGCB_N_cache = tSR_EXC.D + tDIO + tSP_SET + tPROG x N.
    pub fn t_dgcb_cache(&self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.t_sr_exc_d() + self.t_dio + self.t_sp_set + self.t_prog * n
    }

    /// Channel busy time of `n` operations in `mode`: command/address
    /// cycles plus every data transfer the mode puts on the shared bus
    /// (Figs. 4, 6, 7). Cache program hides transfers in time but does not
    /// remove them from the channel, so it does not change this.
    pub fn channel_busy(&self, mode: CopyMode, n: u64) -> u64 {
        let set = self.bus_sr_set + self.bus_sp_set;
        let data = match mode {
            CopyMode::Icb => self.t_do + self.t_di_ec,
            CopyMode::Lcb | CopyMode::Gcb => self.t_do + self.t_di,
            CopyMode::Dgcb => self.t_dio,
        };
        (set + data) * n
    }
}

/// One GC transaction to evaluate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Merge {
    /// Copy mode.
    pub mode: CopyMode,
    /// Whether cache program is used (only GCB and DGCB benefit).
    pub cache: bool,
    /// Planes per operation: 1 or 2.
    pub planes: u32,
    /// Transaction size N in pages.
    pub pages: u32,
    /// Bit errors per page as a fraction of the correctable maximum
    /// (0.0 = none, 1.0 = 192 bits on the Table II device).
    pub error_rate: f64,
}

/// Result of one transaction: merge time and channel busy time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MergeTime {
    /// Time from the first command to the last program completing.
    pub time_ns: u64,
    /// Time the shared channel is occupied by the transaction.
    pub channel_busy_ns: u64,
    /// Pages copied.
    pub pages: u32,
    /// Main-area bytes per page, for throughput.
    pub page_bytes: u32,
}

impl MergeTime {
    /// Channel utilisation during the transaction, busy / merge time.
    pub fn channel_utilisation(&self) -> f64 {
        self.channel_busy_ns as f64 / self.time_ns as f64
    }

    /// Merge throughput in MB/s (10^6 bytes) of main-area data.
    pub fn throughput_mb_s(&self) -> f64 {
        self.pages as f64 * self.page_bytes as f64 * 1e3 / self.time_ns as f64
    }
}

impl NandTiming {
    /// Bytes moved per page transfer: main area plus spare ("pageSize" of
    /// eqs. (1)-(3)).
    pub fn transfer_bytes(&self) -> u64 {
        u64::from(self.page_bytes) + u64::from(self.spare_bytes)
    }

    /// Correctable bits per page (192 for Table II).
    pub fn max_error_bits(&self) -> u64 {
        u64::from(self.ecc_bits_per_kib) * u64::from(self.page_bytes).div_ceil(1024)
    }

    /// Eq. (1): tDO = pageSize x tRC, data out of one page.
    pub fn t_do(&self) -> u64 {
        self.transfer_bytes() * self.t_rc_ns
    }

    /// Eq. (2): tDI = pageSize x tWC, data in of one page.
    pub fn t_di(&self) -> u64 {
        self.transfer_bytes() * self.t_wc_ns
    }

    /// tDI_EC of eq. (3): retransmission of the corrected bytes of one page
    /// at `error_rate` (fraction of the correctable maximum). Worst case
    /// assumed: every bit error in a different byte, each byte sent with its
    /// own change-write-column burst (85h, 2 column cycles, tADL, 1 byte).
    /// The paper does not give this cost; zero without errors.
    pub fn t_di_ec(&self, error_rate: f64) -> u64 {
        let bytes = self.error_bits(error_rate);
        bytes * (self.retx_cmd_cycles * self.t_wc_ns + self.t_adl_ns + self.t_wc_ns)
    }

    /// Bit errors per page at `error_rate`, rounded to whole bits.
    pub fn error_bits(&self, error_rate: f64) -> u64 {
        assert!(
            (0.0..=1.0).contains(&error_rate),
            "error rate {error_rate} outside 0..=1"
        );
        (error_rate * self.max_error_bits() as f64).round() as u64
    }

    /// Eq. (3): tDIO = pageSize x tRWC + tDL + tDI_EC, one direct transfer.
    pub fn t_dio(&self, error_rate: f64) -> u64 {
        self.transfer_bytes() * self.t_rwc_ns + self.t_dl_ns + self.t_di_ec(error_rate)
    }

    /// tSR_SET: read command/address cycles plus tWB and tRR.
    pub fn t_sr_set(&self) -> u64 {
        self.read_cmd_cycles * self.t_wc_ns + self.t_wb_ns + self.t_rr_ns
    }

    /// tSP_SET: program command/address cycles plus tADL and tWB.
    pub fn t_sp_set(&self) -> u64 {
        self.prog_cmd_cycles * self.t_wc_ns + self.t_adl_ns + self.t_wb_ns
    }

    /// Stage times (1)-(8) of one operation on `planes` planes (1 or 2) at
    /// `error_rate`. A two-plane operation doubles the command stages and
    /// the data transfers but not tR or tPROG.
    pub fn stages(&self, planes: u32, error_rate: f64) -> Stages {
        assert!(planes == 1 || planes == 2, "planes must be 1 or 2");
        let p = u64::from(planes);
        Stages {
            t_do: self.t_do() * p,
            t_di: self.t_di() * p,
            t_di_ec: self.t_di_ec(error_rate) * p,
            t_dio: self.t_dio(error_rate) * p,
            t_sr_set: self.t_sr_set() * p,
            t_sp_set: self.t_sp_set() * p,
            t_r: self.t_r_ns,
            t_prog: self.t_prog_ns,
            bus_sr_set: self.read_cmd_cycles * self.t_wc_ns * p,
            bus_sp_set: (self.prog_cmd_cycles * self.t_wc_ns + self.t_adl_ns) * p,
        }
    }

    /// Merge time and channel busy time of one transaction, choosing among
    /// equations (9)-(13) by mode and cache program. A two-plane transaction
    /// of N pages is ceil(N / 2) two-plane operations.
    pub fn merge(&self, m: Merge) -> MergeTime {
        let s = self.stages(m.planes, m.error_rate);
        let ops = u64::from(m.pages.div_ceil(m.planes));
        let time_ns = match (m.mode, m.cache) {
            (CopyMode::Icb, _) => s.t_icb(ops),
            (CopyMode::Lcb, _) => s.t_lcb(ops),
            (CopyMode::Gcb, false) => s.t_gcb(ops),
            (CopyMode::Gcb, true) => s.t_gcb_cache(ops),
            (CopyMode::Dgcb, false) => s.t_dgcb(ops),
            (CopyMode::Dgcb, true) => s.t_dgcb_cache(ops),
        };
        MergeTime {
            time_ns,
            channel_busy_ns: s.channel_busy(m.mode, ops),
            pages: m.pages,
            page_bytes: self.page_bytes,
        }
    }

    /// Whole-GC execution time of Fig. 12: every page of a victim block
    /// (`pages_per_block` x `planes` pages) copied in transactions of
    /// `m.pages` pages, then one (multi-plane) block erase.
    pub fn gc_time(&self, m: Merge) -> u64 {
        let total = self.pages_per_block * m.planes;
        let full = total / m.pages;
        let rest = total % m.pages;
        let mut t = self.merge(m).time_ns * u64::from(full);
        if rest > 0 {
            t += self.merge(Merge { pages: rest, ..m }).time_ns;
        }
        t + self.t_bers_ns
    }
}

//! The strict NAND medium: program-order rules, reliability and fault models.

use firmware_core::{
    BlockId, DieId, Error, Geometry, Lpn, Nand, NandError, NandResult, PageKind, Ppn, ReadReport,
    Spare, UnitMask,
};

use crate::config::{DieFailure, DieFailureAt, FaultConfig, ReliabilityConfig, MAX_DIE_FAILURES};
use crate::hash::{hit, mix, prob_threshold, unit21};
use crate::storage::{BlockRec, LentStorage, PageRec, Storage, StorageSizes, UnitRec};

// Page states (bits 0-1 of `PageRec::meta`).
const ST_ERASED: u8 = 0;
const ST_PROGRAMMED: u8 = 1;
const ST_TORN: u8 = 2;
const ST_MASK: u8 = 3;
const KIND_SHIFT: u8 = 2;

// Block flags.
const F_FACTORY_BAD: u8 = 1 << 0;
const F_GROWN_BAD: u8 = 1 << 1;
const F_DIE_FAILED: u8 = 1 << 2;
const F_ERASE_TORN: u8 = 1 << 3;
const F_FAIL_PROGRAM: u8 = 1 << 4;
const F_FAIL_ERASE: u8 = 1 << 5;
/// The die failed through a scheduled [`DieFailure`]: operations give status errors.
const F_DIE_BAD: u8 = 1 << 6;

// Salts that keep the hash streams of one seed apart.
const SALT_QUALITY: u64 = 0x51A1_17F0;
const SALT_READ: u64 = 0x4EAD_0000;
const SALT_FACTORY: u64 = 0xFAC7_0000;
const SALT_FAIL: u64 = 0xFA11_0000;
const SALT_TEAR: u64 = 0x7EA2_0000;

/// Quality class a block draws at construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QualityClass {
    /// Fewer errors than the median (`best_factor`).
    Best,
    /// The reference block (factor 1.0).
    Median,
    /// More errors than the median (`worst_factor`).
    Worst,
}

/// A block's drawn quality: its class and its error multiplier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockQuality {
    /// Class the block was drawn into.
    pub class: QualityClass,
    /// Multiplier on the block's mean bit errors (class factor with jitter).
    pub factor: f32,
}

/// Everything the medium knows about one block, for tests and reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockStatus {
    /// Completed erases (program/erase cycles).
    pub pe: u32,
    /// Next page the block accepts (pages below it count as written).
    pub next_page: u32,
    /// Marked bad at the factory.
    pub factory_bad: bool,
    /// Went bad through a program or erase failure.
    pub grown_bad: bool,
    /// Its die has failed.
    pub die_failed: bool,
    /// Its last erase was torn by a power cut; it must be erased before programming.
    pub erase_torn: bool,
    /// Its drawn quality.
    pub quality: BlockQuality,
}

/// How a program torn by a power cut leaves its page (see the contract in
/// `firmware_core::medium::nand`). In every case the page counts as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TornProgram {
    /// Nothing reached the cells: the page reads `Erased`.
    Unprogrammed,
    /// Partly programmed: the page reads `Uncorrectable`.
    Uncorrectable,
    /// The program completed before power went: the page reads correctly.
    Intact,
}

/// Operation counters. Every call counts, failed or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    /// `read` calls.
    pub reads: u64,
    /// `program` and `tear_program` calls.
    pub programs: u64,
    /// `erase` and `tear_erase` calls.
    pub erases: u64,
    /// `copyback` calls.
    pub copybacks: u64,
    /// Reads that returned `Uncorrectable`.
    pub uncorrectable_reads: u64,
    /// Copybacks whose source was uncorrectable (nothing was programmed).
    pub uncorrectable_copybacks: u64,
    /// Reads that returned `Erased`.
    pub erased_reads: u64,
    /// Programs and copybacks that returned `ProgramFailed`.
    pub program_failures: u64,
    /// Erases that returned `EraseFailed`.
    pub erase_failures: u64,
    /// Largest bit-error count reported by a successful read or copyback.
    pub max_bit_errors: u16,
    /// Sum of the bit-error counts of successful reads (for averages).
    pub bit_errors_sum: u64,
}

/// Everything except the arrays: geometry, models, counters.
#[derive(Clone, Debug)]
struct Model {
    geo: Geometry,
    ppb: u32,
    ppw: u32,
    wordlines: u32,
    upp: usize,
    full_mask: u8,
    total_pages: u32,
    total_blocks: u32,
    rel: ReliabilityConfig,
    fault: FaultConfig,
    inv_rated: f32,
    /// `retention_per_month * retention_months`.
    retention_k: f32,
    program_fail: u64,
    erase_fail: u64,
    samples: u64,
    draws: u64,
    stats: Stats,
    /// Operations issued since construction (never reset).
    ops: u64,
    /// Simulated time in ns, as the driver last set it.
    now_ns: u64,
    /// Scheduled die failures that have not fired yet.
    die_failures: [Option<DieFailure>; MAX_DIE_FAILURES],
    /// How many of `die_failures` are scheduled: every operation asks,
    /// and nearly always none is.
    pending_failures: u8,
}

impl Model {
    /// Mean raw errors of a read of page `pib` of `blk` after the configured
    /// retention time (every normal read).
    #[inline]
    fn mean_errors(&self, blk: &BlockRec, pib: u32) -> f32 {
        let r = blk.pe as f32 * self.inv_rated;
        self.fresh_errors(blk, pib) * (1.0 + self.retention_k * (1.0 + self.rel.retention_wear * r))
    }

    /// Mean raw errors of a read of page `pib` of `blk` shortly after the data
    /// was written, without the retention term: what a copyback's source read
    /// carries into its destination (garbage collection moves data that has not
    /// sat for the retention time the global knob models).
    #[inline]
    fn fresh_errors(&self, blk: &BlockRec, pib: u32) -> f32 {
        let r = blk.pe as f32 * self.inv_rated;
        let wear = (self.rel.base_errors
            + self.rel.wear_errors * crate::config::powf(r, self.rel.wear_exponent))
            * self.rel.correction(usize::from(blk.class), blk.pe);
        let wl = pib / self.ppw;
        let edge = wl.min(self.wordlines - 1 - wl);
        let mut f = blk.quality * (1.0 + self.rel.upper_page_step * (pib % self.ppw) as f32);
        if edge < self.rel.edge_wordlines {
            f *= self.rel.edge_factor;
        }
        wear * f
    }

    /// Draws the raw error count of one read of page `ppn` with mean `mean`.
    #[inline]
    fn sample(&mut self, ppn: u32, mean: f32) -> u32 {
        self.samples = self.samples.wrapping_add(1);
        let h = mix(
            self.rel.seed ^ SALT_READ,
            u64::from(ppn) | (self.samples << 32),
        );
        let t = unit21(h, 0) + unit21(h, 21) - 1.0;
        // 16 bits of dither keep `mean + d` below the next integer in f32.
        let d = ((h >> 48) as u16) as f32 * (1.0 / 65536.0);
        // Saturating float-to-int conversion.
        (mean * (1.0 + self.rel.read_noise * t) + d) as u32
    }

    /// A fault draw with probability given by `threshold`.
    #[inline]
    fn draw(&mut self, threshold: u64) -> bool {
        if threshold == 0 {
            return false;
        }
        self.draws = self.draws.wrapping_add(1);
        hit(mix(self.fault.seed ^ SALT_FAIL, self.draws), threshold)
    }

    fn quality_of(&self, b: u32) -> (QualityClass, f32) {
        let h = mix(self.rel.seed ^ SALT_QUALITY, u64::from(b));
        let u = unit21(h, 0);
        let (class, factor) = if u < self.rel.best_fraction {
            (QualityClass::Best, self.rel.best_factor)
        } else if u < self.rel.best_fraction + self.rel.worst_fraction {
            (QualityClass::Worst, self.rel.worst_factor)
        } else {
            (QualityClass::Median, 1.0)
        };
        let jitter = 1.0 + self.rel.quality_jitter * (2.0 * unit21(h, 21) - 1.0);
        (class, factor * jitter)
    }

    #[inline]
    fn page_ok(&self, p: Ppn) -> bool {
        p.0 < self.total_pages
    }

    #[inline]
    fn mask_ok(&self, m: UnitMask) -> bool {
        m.0 & !self.full_mask == 0
    }

    fn note_errors(&mut self, e: u16) {
        if e > self.stats.max_bit_errors {
            self.stats.max_bit_errors = e;
        }
    }
}

/// Die and factory checks shared by every operation; `on_bad_die` is the
/// status error the operation gives on a die a [`DieFailure`] killed.
#[inline]
fn check_alive(blk: &BlockRec, on_bad_die: NandError) -> Result<(), NandError> {
    if blk.flags & F_DIE_FAILED != 0 {
        Err(NandError::DieFailed)
    } else if blk.flags & F_DIE_BAD != 0 {
        Err(on_bad_die)
    } else if blk.flags & F_FACTORY_BAD != 0 {
        Err(NandError::FactoryBad)
    } else {
        Ok(())
    }
}

/// Program checks: the block must be good, erased past `pib`, and `pib` next.
#[inline]
fn check_programmable(blk: &BlockRec, pib: u32) -> Result<(), NandError> {
    check_alive(blk, NandError::ProgramFailed)?;
    if blk.flags & F_GROWN_BAD != 0 {
        Err(NandError::ProgramFailed)
    } else if blk.flags & F_ERASE_TORN != 0 || pib != blk.next_page {
        Err(NandError::ProgramOrder)
    } else {
        Ok(())
    }
}

#[inline]
fn kind_of(meta: u8) -> PageKind {
    match (meta >> KIND_SHIFT) & 3 {
        0 => PageKind::Data,
        1 => PageKind::Map,
        2 => PageKind::Meta,
        _ => PageKind::Pad,
    }
}

#[inline]
fn spare_of(rec: &PageRec, units: &[UnitRec]) -> Spare {
    let mut spare = Spare {
        seq: rec.seq,
        kind: kind_of(rec.meta),
        units: UnitMask(rec.mask),
        ..Spare::default()
    };
    for (l, u) in spare.lpns.iter_mut().zip(units) {
        *l = Lpn(u.lpn);
    }
    spare
}

/// Fills `spare`'s entrusted LBAs from the store's entries for the units
/// starting at `first`.
#[inline]
fn add_entrusted<S: Storage>(store: &S, spare: &mut Spare, first: usize, upp: usize) {
    for i in 0..upp.min(spare.entrusted.len()) {
        if let Some(l) = store.entrusted(first + i).checked_sub(1) {
            spare.entrusted[i] = Lpn(l);
            spare.entrusted_units.0 |= 1 << i;
        }
    }
}

/// The stored form of entry `i` of a spare's entrusted LBAs: LBA plus one,
/// 0 for none.
#[inline]
fn entrusted_of(spare: &Spare, i: usize) -> u32 {
    if spare.entrusted_units.0 & (1 << i) != 0 {
        spare.entrusted[i].0.wrapping_add(1)
    } else {
        0
    }
}

#[inline]
fn page_rec(spare: &Spare, state: u8, carried: u8) -> PageRec {
    PageRec {
        seq: spare.seq,
        meta: state | ((spare.kind as u8) << KIND_SHIFT),
        mask: spare.units.0,
        carried,
    }
}

/// Starts fetching the records of page `p`: its page record and both
/// lines its `upp` unit records may span. Reads and programs of a block
/// come in page order, so each asks for the next page's.
#[inline(always)]
fn prefetch_page(pages: &[PageRec], units: &[UnitRec], p: usize, upp: usize) {
    firmware_core::medium::hint::prefetch(pages, p);
    firmware_core::medium::hint::prefetch(units, p * upp);
    firmware_core::medium::hint::prefetch(units, (p + 1) * upp - 1);
}

/// A strict simulated NAND medium over the arrays of a [`Storage`].
///
/// It enforces the contract of `firmware_core::medium::nand` (program order, erased
/// reads, same-plane copyback), samples raw bit errors from the
/// [`ReliabilityConfig`] model and injects the faults of a [`FaultConfig`].
/// Every operation is O(1) except erase-related helpers, and nothing allocates
/// after construction. All randomness is a hash of the seeds and of operation
/// counters, so one sequence of calls always gives the same results.
#[derive(Clone)]
pub struct Medium<S> {
    m: Model,
    store: S,
}

impl<S> core::fmt::Debug for Medium<S> {
    /// Geometry, models and counters; the arrays are left out.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Medium")
            .field("geometry", &self.m.geo)
            .field("reliability", &self.m.rel)
            .field("faults", &self.m.fault)
            .field("stats", &self.m.stats)
            .finish_non_exhaustive()
    }
}

/// The heap-backed medium of the simulator.
#[cfg(feature = "std")]
pub type SimMedium = Medium<crate::storage::VecStorage>;

/// The medium over caller-lent arrays (bare metal).
pub type LentMedium<'a> = Medium<LentStorage<'a>>;

#[cfg(feature = "std")]
impl Medium<crate::storage::VecStorage> {
    /// Builds a medium with its own heap arrays for `geo`.
    pub fn new(geo: Geometry, rel: ReliabilityConfig, fault: FaultConfig) -> Result<Self, Error> {
        geo.validate()?;
        let store = crate::storage::VecStorage::new(&geo);
        Medium::with_storage(geo, rel, fault, store)
    }
}

impl<'a> Medium<LentStorage<'a>> {
    /// Builds a medium over lent arrays sized by [`StorageSizes::for_geometry`]
    /// (their contents need not be initialised to anything in particular),
    /// with no room for metadata pages; for those, build a
    /// [`LentStorage`] with [`LentStorage::with_meta`] and pass it to
    /// [`Medium::with_storage`].
    pub fn from_slices(
        geo: Geometry,
        rel: ReliabilityConfig,
        fault: FaultConfig,
        blocks: &'a mut [BlockRec],
        pages: &'a mut [PageRec],
        units: &'a mut [UnitRec],
    ) -> Result<Self, Error> {
        Medium::with_storage(geo, rel, fault, LentStorage::new(blocks, pages, units))
    }
}

impl<S: Storage> Medium<S> {
    /// Builds a medium over any storage whose arrays are at least
    /// [`StorageSizes::for_geometry`] long. Every block starts erased with zero
    /// P/E cycles, its quality and factory-bad mark drawn from the seeds.
    pub fn with_storage(
        geo: Geometry,
        rel: ReliabilityConfig,
        fault: FaultConfig,
        store: S,
    ) -> Result<Self, Error> {
        let mut medium = Self::resume(geo, rel, fault, store)?;
        let m = &medium.m;
        let factory = prob_threshold(m.fault.factory_bad_fraction);
        let (blocks, _, _) = medium.store.split_mut();
        for (b, rec) in (0..m.total_blocks).zip(blocks.iter_mut()) {
            let (class, quality) = m.quality_of(b);
            let bad = factory != 0 && hit(mix(m.fault.seed ^ SALT_FACTORY, u64::from(b)), factory);
            *rec = BlockRec {
                pe: 0,
                next_page: 0,
                quality,
                class: class as u8,
                flags: if bad { F_FACTORY_BAD } else { 0 },
                ec_hdr: 0,
                tag_hdr: 0,
            };
        }
        Ok(medium)
    }

    /// Builds a medium over storage that already holds a medium's records
    /// (saved with the `to_bytes` of [`BlockRec`], [`PageRec`] and
    /// [`UnitRec`]): every block keeps its state, wear and quality. Counters
    /// start at zero, as after a power-on.
    pub fn resume(
        geo: Geometry,
        rel: ReliabilityConfig,
        fault: FaultConfig,
        store: S,
    ) -> Result<Self, Error> {
        geo.validate()?;
        rel.validate()?;
        fault.validate()?;
        let need = StorageSizes::for_geometry(&geo);
        {
            let (b, p, u) = store.split();
            if b.len() < need.blocks {
                return Err(Error::TableTooSmall(&"nand-model block records"));
            }
            if p.len() < need.pages {
                return Err(Error::TableTooSmall(&"nand-model page records"));
            }
            if u.len() < need.units {
                return Err(Error::TableTooSmall(&"nand-model unit records"));
            }
        }
        let ppw = u32::from(geo.pages_per_wordline);
        let m = Model {
            geo,
            ppb: geo.pages_per_block,
            ppw,
            wordlines: geo.pages_per_block / ppw,
            upp: usize::from(geo.units_per_page),
            full_mask: UnitMask::full(geo.units_per_page).0,
            total_pages: geo.total_pages(),
            total_blocks: geo.total_blocks(),
            rel,
            fault,
            inv_rated: 1.0 / rel.rated_pe as f32,
            retention_k: rel.retention_per_month * rel.retention_months,
            program_fail: prob_threshold(fault.program_fail_prob),
            erase_fail: prob_threshold(fault.erase_fail_prob),
            samples: 0,
            draws: 0,
            stats: Stats::default(),
            ops: 0,
            now_ns: 0,
            die_failures: [None; MAX_DIE_FAILURES],
            pending_failures: 0,
        };
        Ok(Medium { m, store })
    }

    /// The geometry the medium was built for.
    pub fn geometry(&self) -> &Geometry {
        &self.m.geo
    }

    /// The reliability model in use.
    pub fn reliability(&self) -> &ReliabilityConfig {
        &self.m.rel
    }

    /// The fault model in use.
    pub fn faults(&self) -> &FaultConfig {
        &self.m.fault
    }

    /// Operation counters since construction or the last [`Medium::reset_stats`].
    pub fn stats(&self) -> &Stats {
        &self.m.stats
    }

    /// Zeroes the operation counters.
    pub fn reset_stats(&mut self) {
        self.m.stats = Stats::default();
    }

    /// The storage the medium runs on.
    pub fn storage(&self) -> &S {
        &self.store
    }

    /// Gives the storage back.
    pub fn into_storage(self) -> S {
        self.store
    }

    /// Sets how long all stored data has been retained, in months (e.g. to model
    /// a power-off period). Takes effect on the next read.
    pub fn set_retention_months(&mut self, months: f32) -> Result<(), Error> {
        if !(months.is_finite() && months >= 0.0) {
            return Err(Error::InvalidConfig(
                &"retention months must be finite and >= 0",
            ));
        }
        self.m.rel.retention_months = months;
        self.m.retention_k = self.m.rel.retention_per_month * months;
        Ok(())
    }

    #[inline]
    fn block(&self, b: BlockId) -> Option<&BlockRec> {
        if b.0 < self.m.total_blocks {
            self.store.split().0.get(b.0 as usize)
        } else {
            None
        }
    }

    #[inline]
    fn block_mut(&mut self, b: BlockId) -> Result<&mut BlockRec, NandError> {
        if b.0 < self.m.total_blocks {
            self.store
                .split_mut()
                .0
                .get_mut(b.0 as usize)
                .ok_or(NandError::BadAddress)
        } else {
            Err(NandError::BadAddress)
        }
    }

    /// Program/erase cycles of block `b` (0 for a block outside the array).
    pub fn pe_count(&self, b: BlockId) -> u32 {
        self.block(b).map_or(0, |r| r.pe)
    }

    /// Sets the P/E count of every block to `n` (a pre-aged drive); each block's
    /// quality spread still applies on top.
    pub fn set_initial_pe(&mut self, n: u32) {
        let total = self.m.total_blocks as usize;
        for r in self.store.split_mut().0.iter_mut().take(total) {
            r.pe = n;
        }
    }

    /// Sets the P/E count of one block.
    pub fn set_pe(&mut self, b: BlockId, n: u32) -> Result<(), NandError> {
        self.block_mut(b)?.pe = n;
        Ok(())
    }

    /// The quality block `b` drew (median with factor 1.0 outside the array).
    pub fn block_quality(&self, b: BlockId) -> BlockQuality {
        match self.block(b) {
            Some(r) => BlockQuality {
                class: match r.class {
                    0 => QualityClass::Best,
                    2 => QualityClass::Worst,
                    _ => QualityClass::Median,
                },
                factor: r.quality,
            },
            None => BlockQuality {
                class: QualityClass::Median,
                factor: 1.0,
            },
        }
    }

    /// Everything known about block `b`, or `None` outside the array.
    pub fn block_status(&self, b: BlockId) -> Option<BlockStatus> {
        let r = *self.block(b)?;
        Some(BlockStatus {
            pe: r.pe,
            next_page: r.next_page,
            factory_bad: r.flags & F_FACTORY_BAD != 0,
            grown_bad: r.flags & F_GROWN_BAD != 0,
            die_failed: r.flags & (F_DIE_FAILED | F_DIE_BAD) != 0,
            erase_torn: r.flags & F_ERASE_TORN != 0,
            quality: self.block_quality(b),
        })
    }

    /// The model's mean raw bit errors for a read of page `p` now (without read
    /// noise and without carried copyback errors), or `None` outside the array.
    pub fn expected_bit_errors(&self, p: Ppn) -> Option<f32> {
        if !self.m.page_ok(p) {
            return None;
        }
        let blk = self.block(BlockId(p.0 / self.m.ppb))?;
        Some(self.m.mean_errors(blk, p.0 % self.m.ppb))
    }

    /// Marks block `b` bad as if from the factory.
    pub fn mark_factory_bad(&mut self, b: BlockId) -> Result<(), NandError> {
        self.block_mut(b)?.flags |= F_FACTORY_BAD;
        Ok(())
    }

    /// Makes the next program or copyback into block `b` fail with
    /// `ProgramFailed`, turning the block into a grown bad block.
    pub fn fail_next_program(&mut self, b: BlockId) -> Result<(), NandError> {
        self.block_mut(b)?.flags |= F_FAIL_PROGRAM;
        Ok(())
    }

    /// Moves block `b`'s program point forward to page `page` without
    /// programming the pages in between, which stay erased: the wordlines a
    /// GuardedErase left unusable are skipped this way (see
    /// [`crate::guarded`]). `ProgramOrder` if `page` is behind the program
    /// point, `BadAddress` beyond the block.
    pub fn skip_to(&mut self, b: BlockId, page: u32) -> Result<(), NandError> {
        let ppb = self.m.ppb;
        let blk = self.block_mut(b)?;
        if page > ppb {
            return Err(NandError::BadAddress);
        }
        if page < blk.next_page {
            return Err(NandError::ProgramOrder);
        }
        blk.next_page = page;
        Ok(())
    }

    /// Makes the next erase of block `b` fail with `EraseFailed`, turning the
    /// block into a grown bad block.
    pub fn fail_next_erase(&mut self, b: BlockId) -> Result<(), NandError> {
        self.block_mut(b)?.flags |= F_FAIL_ERASE;
        Ok(())
    }

    /// Kills die `d`: every later operation on it returns `DieFailed`.
    pub fn fail_die(&mut self, d: DieId) -> Result<(), NandError> {
        if d.0 >= self.m.geo.dies() {
            return Err(NandError::BadAddress);
        }
        self.flag_die(d, F_DIE_FAILED);
        Ok(())
    }

    /// First block of die `d` (in range) and the number of blocks per die.
    fn die_blocks(&self, d: DieId) -> (u32, u32) {
        let per_die = u32::from(self.m.geo.planes_per_die) * self.m.geo.blocks_per_plane;
        (d.0 * per_die, per_die)
    }

    /// Sets `flag` on every block of die `d` (in range).
    fn flag_die(&mut self, d: DieId, flag: u8) {
        let (first, per_die) = self.die_blocks(d);
        let blocks = self.store.split_mut().0;
        for r in blocks
            .iter_mut()
            .skip(first as usize)
            .take(per_die as usize)
        {
            r.flags |= flag;
        }
    }

    /// The spare area of programmed page `p`, read straight from the store:
    /// no operation is counted, no failure applies (the simulator's ground
    /// truth, e.g. which LBAs a die held before it failed).
    pub fn peek_spare(&self, p: Ppn) -> Option<Spare> {
        if !self.m.page_ok(p) {
            return None;
        }
        let (blocks, pages, units) = self.store.split();
        let blk = blocks.get((p.0 / self.m.ppb) as usize)?;
        if p.0 % self.m.ppb >= blk.next_page {
            return None;
        }
        let rec = pages.get(p.0 as usize)?;
        if rec.meta & ST_MASK != ST_PROGRAMMED {
            return None;
        }
        let i = p.0 as usize * self.m.upp;
        let mut spare = spare_of(rec, units.get(i..i + self.m.upp)?);
        add_entrusted(&self.store, &mut spare, i, self.m.upp);
        Some(spare)
    }

    /// Schedules die `f.channel`/`f.die` to fail as [`DieFailure`] describes
    /// (at once if its time or operation count has already passed). Several
    /// dies may be scheduled, up to [`MAX_DIE_FAILURES`] pending at a time.
    pub fn schedule_die_failure(&mut self, f: DieFailure) -> Result<(), Error> {
        let geo = &self.m.geo;
        if f.channel >= geo.channels || f.die >= geo.dies_per_channel {
            return Err(Error::InvalidConfig(&"die failure outside the array"));
        }
        let slot = self
            .m
            .die_failures
            .iter_mut()
            .find(|s| s.is_none())
            .ok_or(Error::InvalidConfig(&"too many pending die failures"))?;
        *slot = Some(f);
        self.m.pending_failures = self.m.pending_failures.saturating_add(1);
        self.fire_due_failures();
        Ok(())
    }

    /// Advances (or sets) the simulated time to `now` ns, failing every die
    /// scheduled by [`DieFailureAt::TimeNs`] at or before it.
    pub fn set_time_ns(&mut self, now: u64) {
        self.m.now_ns = now;
        self.fire_due_failures();
    }

    /// The simulated time last set with [`Medium::set_time_ns`].
    pub fn time_ns(&self) -> u64 {
        self.m.now_ns
    }

    /// Operations issued since construction, the clock of [`DieFailureAt::Op`].
    pub fn op_count(&self) -> u64 {
        self.m.ops
    }

    /// Whether die `d` has failed (by [`Medium::fail_die`] or a scheduled
    /// failure); `false` outside the array.
    pub fn is_die_failed(&self, d: DieId) -> bool {
        if d.0 >= self.m.geo.dies() {
            return false;
        }
        self.block(BlockId(self.die_blocks(d).0))
            .is_some_and(|r| r.flags & (F_DIE_FAILED | F_DIE_BAD) != 0)
    }

    /// Fires the scheduled failures that are due.
    fn fire_due_failures(&mut self) {
        let (ops, now, per_channel) = (
            self.m.ops,
            self.m.now_ns,
            u32::from(self.m.geo.dies_per_channel),
        );
        for i in 0..MAX_DIE_FAILURES {
            let Some(f) = self.m.die_failures[i] else {
                continue;
            };
            let due = match f.at {
                DieFailureAt::Op(n) => ops >= n,
                DieFailureAt::TimeNs(t) => now >= t,
            };
            if due {
                self.m.die_failures[i] = None;
                self.m.pending_failures = self.m.pending_failures.saturating_sub(1);
                let d = DieId(u32::from(f.channel) * per_channel + u32::from(f.die));
                self.flag_die(d, F_DIE_BAD);
            }
        }
    }

    /// Counts one operation, first failing the dies due by then.
    #[inline]
    fn begin_op(&mut self) {
        if self.m.pending_failures != 0 {
            self.fire_due_failures();
        }
        self.m.ops += 1;
    }

    /// A program of `page` interrupted by power loss. Checks like `program`
    /// (returning the same errors), then leaves the page as `outcome` says; the
    /// page counts as written either way, so the next program must go to the
    /// following page. Counts as a program.
    pub fn tear_program(
        &mut self,
        page: Ppn,
        data: &[u64],
        spare: &Spare,
        outcome: TornProgram,
    ) -> Result<(), NandError> {
        self.begin_op();
        self.m.stats.programs += 1;
        self.program_inner(page, data, spare, Some(outcome))
            .map(|_| ())
    }

    /// A metadata program of `page` interrupted by power loss (see
    /// [`Medium::tear_program`]); an intact outcome stores the bytes.
    pub fn tear_program_meta(
        &mut self,
        page: Ppn,
        bytes: &[u8],
        spare: &Spare,
        outcome: TornProgram,
    ) -> Result<(), NandError> {
        if !self.store.meta_room(page.0, bytes.len()) {
            return Err(NandError::BadAddress);
        }
        self.begin_op();
        self.m.stats.programs += 1;
        self.program_inner(page, &[], spare, Some(outcome))?;
        if outcome == TornProgram::Intact {
            self.store.put_meta(page.0, bytes);
        }
        Ok(())
    }

    /// An erase of block `b` interrupted by power loss. Checks like `erase`,
    /// then leaves every written page either erased or uncorrectable (a seeded
    /// pattern) and the block unprogrammable (`ProgramOrder`) until a completed
    /// erase. Counts as an erase and a P/E cycle.
    pub fn tear_erase(&mut self, b: BlockId) -> Result<(), NandError> {
        self.begin_op();
        self.m.stats.erases += 1;
        let r = self.tear_erase_inner(b);
        if r == Err(NandError::EraseFailed) {
            self.m.stats.erase_failures += 1;
        }
        r
    }

    /// Body of `tear_erase`; the caller counts failures.
    fn tear_erase_inner(&mut self, b: BlockId) -> Result<(), NandError> {
        if b.0 >= self.m.total_blocks {
            return Err(NandError::BadAddress);
        }
        let ppb = self.m.ppb;
        self.m.draws = self.m.draws.wrapping_add(1);
        let salt = self.m.draws << 32;
        let seed = self.m.fault.seed ^ SALT_TEAR;
        let (blocks, pages, _) = self.store.split_mut();
        let blk = &mut blocks[b.0 as usize];
        check_alive(blk, NandError::EraseFailed)?;
        if blk.flags & F_GROWN_BAD != 0 {
            return Err(NandError::EraseFailed);
        }
        let first = (b.0 * ppb) as usize;
        for (i, rec) in pages[first..first + blk.next_page as usize]
            .iter_mut()
            .enumerate()
        {
            if rec.meta & ST_MASK != ST_ERASED {
                let h = mix(seed, salt | i as u64);
                let state = if h & 1 == 0 { ST_ERASED } else { ST_TORN };
                rec.meta = (rec.meta & !ST_MASK) | state;
            }
        }
        blk.flags |= F_ERASE_TORN;
        blk.pe = blk.pe.saturating_add(1);
        // No page of the block reads back any more.
        self.store.forget_meta(b.0 * ppb, ppb);
        Ok(())
    }

    /// Shared body of `program` and `tear_program`.
    #[inline]
    fn program_inner(
        &mut self,
        page: Ppn,
        data: &[u64],
        spare: &Spare,
        tear: Option<TornProgram>,
    ) -> NandResult {
        let m = &mut self.m;
        if !m.page_ok(page)
            || !m.mask_ok(spare.units)
            || data.len() < spare.units.count() as usize
            || (!spare.entrusted_units.is_empty() && !self.store.keeps_entrusted())
        {
            return Err(NandError::BadAddress);
        }
        let b = (page.0 / m.ppb) as usize;
        let pib = page.0 % m.ppb;
        let p = page.0 as usize;
        let upp = m.upp;
        let (blocks, pages, units) = self.store.split_mut();
        let blk = &mut blocks[b];
        if let Err(e) = check_programmable(blk, pib) {
            if e == NandError::ProgramFailed {
                m.stats.program_failures += 1;
            }
            return Err(e);
        }
        let fail = match tear {
            Some(_) => false,
            None if blk.flags & F_FAIL_PROGRAM != 0 => {
                blk.flags &= !F_FAIL_PROGRAM;
                true
            }
            None => m.draw(m.program_fail),
        };
        blk.next_page = pib + 1;
        let rec = &mut pages[p];
        if fail {
            blk.flags |= F_GROWN_BAD;
            rec.meta = ST_TORN;
            m.stats.program_failures += 1;
            return Err(NandError::ProgramFailed);
        }
        match tear {
            Some(TornProgram::Unprogrammed) => {
                rec.meta = ST_ERASED;
                return Ok(ReadReport::default());
            }
            Some(TornProgram::Uncorrectable) => {
                rec.meta = ST_TORN;
                return Ok(ReadReport::default());
            }
            Some(TornProgram::Intact) | None => {}
        }
        *rec = page_rec(spare, ST_PROGRAMMED, 0);
        if pib == 0 {
            blk.ec_hdr = spare.erase_count;
            blk.tag_hdr = spare.tag;
        }
        let base = p * upp;
        let mut src = data.iter();
        for (i, u) in units[base..base + upp].iter_mut().enumerate() {
            let stamp = if spare.units.0 & (1 << i) != 0 {
                src.next().copied().unwrap_or(0)
            } else {
                0
            };
            *u = UnitRec {
                stamp,
                lpn: spare.lpns[i].0,
            };
        }
        // The next program of this block overwrites the next page's records.
        prefetch_page(pages, units, p + 1, upp);
        for i in 0..upp {
            self.store.put_entrusted(base + i, entrusted_of(spare, i));
        }
        Ok(ReadReport::default())
    }

    #[inline]
    fn read_inner(&mut self, page: Ppn, mask: UnitMask, out: &mut [u64]) -> NandResult {
        let m = &mut self.m;
        if !m.page_ok(page) || !m.mask_ok(mask) || out.len() < mask.count() as usize {
            return Err(NandError::BadAddress);
        }
        let pib = page.0 % m.ppb;
        let p = page.0 as usize;
        let (blocks, pages, units) = self.store.split();
        let blk = &blocks[(page.0 / m.ppb) as usize];
        check_alive(blk, NandError::Uncorrectable)?;
        if pib >= blk.next_page {
            return Err(NandError::Erased);
        }
        let rec = pages[p];
        match rec.meta & ST_MASK {
            ST_PROGRAMMED => {}
            ST_TORN => return Err(NandError::Uncorrectable),
            _ => return Err(NandError::Erased),
        }
        // Reads of a block come in page order (GC walks its victims up):
        // start fetching the next page's records, and those a few pages
        // on, where GC's next read lands when it skips pages without a
        // valid unit (most of them in a victim of a third valid units).
        prefetch_page(pages, units, p + 1, m.upp);
        prefetch_page(pages, units, p + 5, m.upp);
        let stored = &units[p * m.upp..(p + 1) * m.upp];
        let mut dst = out.iter_mut();
        for (i, u) in stored.iter().enumerate() {
            if mask.0 & (1 << i) != 0 {
                if let Some(o) = dst.next() {
                    *o = u.stamp;
                }
            }
        }
        let mut spare = spare_of(&rec, stored);
        add_entrusted(&self.store, &mut spare, p * m.upp, m.upp);
        spare.erase_count = blk.ec_hdr;
        spare.tag = blk.tag_hdr;
        let mean = m.mean_errors(blk, pib);
        let errors = m
            .sample(page.0, mean)
            .saturating_add(u32::from(rec.carried));
        if errors > u32::from(m.rel.ecc_limit) {
            return Err(NandError::Uncorrectable);
        }
        Ok(ReadReport {
            bit_errors: errors as u16,
            spare,
        })
    }

    #[inline]
    fn erase_inner(&mut self, b: BlockId) -> NandResult {
        let m = &mut self.m;
        if b.0 >= m.total_blocks {
            return Err(NandError::BadAddress);
        }
        let blk = &mut self.store.split_mut().0[b.0 as usize];
        check_alive(blk, NandError::EraseFailed)?;
        let fail = if blk.flags & F_GROWN_BAD != 0 {
            true
        } else if blk.flags & F_FAIL_ERASE != 0 {
            blk.flags &= !F_FAIL_ERASE;
            true
        } else {
            m.draw(m.erase_fail)
        };
        if fail {
            blk.flags |= F_GROWN_BAD;
            return Err(NandError::EraseFailed);
        }
        blk.pe = blk.pe.saturating_add(1);
        blk.next_page = 0;
        blk.flags &= !F_ERASE_TORN;
        let ppb = m.ppb;
        self.store.forget_meta(b.0 * ppb, ppb);
        Ok(ReadReport::default())
    }

    #[inline]
    fn copyback_inner(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        let m = &mut self.m;
        if !m.page_ok(src) || !m.page_ok(dst) || !m.mask_ok(spare.units) {
            return Err(NandError::BadAddress);
        }
        let sb = src.0 / m.ppb;
        let db = dst.0 / m.ppb;
        if m.geo.plane_of(BlockId(sb)) != m.geo.plane_of(BlockId(db)) {
            return Err(NandError::BadAddress);
        }
        let spib = src.0 % m.ppb;
        let dpib = dst.0 % m.ppb;
        let (sp, dp) = (src.0 as usize, dst.0 as usize);
        let upp = m.upp;
        let (blocks, pages, units) = self.store.split_mut();
        let sblk = blocks[sb as usize];
        check_alive(&sblk, NandError::Uncorrectable)?;
        if let Err(e) = check_programmable(&blocks[db as usize], dpib) {
            if e == NandError::ProgramFailed {
                m.stats.program_failures += 1;
            }
            return Err(e);
        }
        let srec = pages[sp];
        let source_state = if spib >= sblk.next_page {
            0
        } else {
            srec.meta & ST_MASK
        };
        if source_state != ST_PROGRAMMED {
            // The chip copies whatever its page buffer sensed: the destination
            // is consumed and holds nothing readable.
            blocks[db as usize].next_page = dpib + 1;
            pages[dp].meta = ST_TORN;
            return Err(if source_state == ST_TORN {
                NandError::Uncorrectable
            } else {
                NandError::Erased
            });
        }
        // The source is sampled without retention (see `fresh_errors`).
        let mean = m.fresh_errors(&sblk, spib);
        let errors = m
            .sample(src.0, mean)
            .saturating_add(u32::from(srec.carried));
        if errors > u32::from(m.rel.ecc_limit) {
            // Nothing corrects data on its way through the page register: the
            // copy is made and every later read of it fails.
            m.stats.uncorrectable_copybacks += 1;
        }
        let report = ReadReport {
            bit_errors: errors.min(u32::from(u16::MAX)) as u16,
            spare: Spare {
                erase_count: sblk.ec_hdr,
                tag: sblk.tag_hdr,
                ..spare_of(&srec, &units[sp * upp..(sp + 1) * upp])
            },
        };
        let dblk = &mut blocks[db as usize];
        let fail = if dblk.flags & F_FAIL_PROGRAM != 0 {
            dblk.flags &= !F_FAIL_PROGRAM;
            true
        } else {
            m.draw(m.program_fail)
        };
        dblk.next_page = dpib + 1;
        if fail {
            dblk.flags |= F_GROWN_BAD;
            pages[dp].meta = ST_TORN;
            m.stats.program_failures += 1;
            return Err(NandError::ProgramFailed);
        }
        pages[dp] = page_rec(spare, ST_PROGRAMMED, errors.min(255) as u8);
        if dpib == 0 {
            dblk.ec_hdr = spare.erase_count;
            dblk.tag_hdr = spare.tag;
        }
        for i in 0..upp {
            let s = units[sp * upp + i];
            let stamp = if spare.units.0 & (1 << i) != 0 {
                s.stamp
            } else {
                0
            };
            units[dp * upp + i] = UnitRec {
                stamp,
                lpn: spare.lpns[i].0,
            };
        }
        for i in 0..upp {
            self.store
                .put_entrusted(dp * upp + i, entrusted_of(spare, i));
        }
        m.note_errors(report.bit_errors);
        Ok(report)
    }
}

impl<S: Storage> Nand for Medium<S> {
    type Unit = u64;

    /// Reads `units` of `page` into `out` (mask order). Units the page was not
    /// programmed with read as 0. On error `out` is unspecified.
    #[cfg_attr(target_os = "none", inline(never))]
    #[cfg_attr(not(target_os = "none"), inline)]
    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [u64]) -> NandResult {
        self.begin_op();
        self.m.stats.reads += 1;
        let r = self.read_inner(page, units, out);
        match &r {
            Ok(rep) => {
                self.m.stats.bit_errors_sum += u64::from(rep.bit_errors);
                self.m.note_errors(rep.bit_errors);
            }
            Err(NandError::Uncorrectable) => self.m.stats.uncorrectable_reads += 1,
            Err(NandError::Erased) => self.m.stats.erased_reads += 1,
            Err(_) => {}
        }
        r
    }

    /// Programs `page`; `data` holds one stamp per set bit of `spare.units`
    /// (extra entries are ignored). Success returns a default report.
    #[cfg_attr(target_os = "none", inline(never))]
    #[cfg_attr(not(target_os = "none"), inline)]
    fn program(&mut self, page: Ppn, data: &[u64], spare: &Spare) -> NandResult {
        self.begin_op();
        self.m.stats.programs += 1;
        self.program_inner(page, data, spare, None)
    }

    /// Erases `block`; a failed erase leaves the data in place.
    #[cfg_attr(target_os = "none", inline(never))]
    #[cfg_attr(not(target_os = "none"), inline)]
    fn erase(&mut self, block: BlockId) -> NandResult {
        self.begin_op();
        self.m.stats.erases += 1;
        let r = self.erase_inner(block);
        if r == Err(NandError::EraseFailed) {
            self.m.stats.erase_failures += 1;
        }
        r
    }

    /// Copies `src` to `dst` in one plane, without error correction. Once the
    /// addresses and the destination's program order check out, the
    /// destination page is consumed whatever happens. The source is sampled
    /// like a read: `dst` gets the source stamps of the units in `spare.units`
    /// (others read 0), the given spare, and carried errors equal to the
    /// source's raw count, which the report's `bit_errors` gives (it may exceed
    /// the ECC limit: the copy is made and reads of it fail, as on a real
    /// chip); the report's `spare` is the source's spare area. A torn source
    /// gives `Uncorrectable` and an erased one `Erased`; the destination then
    /// holds nothing readable.
    #[cfg_attr(target_os = "none", inline(never))]
    #[cfg_attr(not(target_os = "none"), inline)]
    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        self.begin_op();
        self.m.stats.copybacks += 1;
        let r = self.copyback_inner(src, dst, spare);
        if r == Err(NandError::Uncorrectable) {
            self.m.stats.uncorrectable_copybacks += 1;
        }
        r
    }

    /// Programs a metadata page: like `program` with no units, plus `bytes`
    /// (`BadAddress` if the storage keeps fewer bytes per page, or has no
    /// room left for another metadata page).
    #[cfg_attr(target_os = "none", inline(never))]
    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        if !self.store.meta_room(page.0, bytes.len()) {
            return Err(NandError::BadAddress);
        }
        self.begin_op();
        self.m.stats.programs += 1;
        let mut sp = *spare;
        sp.units = UnitMask(0);
        let r = self.program_inner(page, &[], &sp, None)?;
        self.store.put_meta(page.0, bytes);
        Ok(r)
    }

    /// Reads a metadata page (or just the spare area of any page: `out` may
    /// be empty; a data page's bytes read as zeros).
    #[cfg_attr(target_os = "none", inline(never))]
    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        self.begin_op();
        self.m.stats.reads += 1;
        let r = self.read_inner(page, UnitMask(0), &mut []);
        match &r {
            Ok(rep) => {
                self.m.stats.bit_errors_sum += u64::from(rep.bit_errors);
                let stored = match rep.spare.kind {
                    PageKind::Map | PageKind::Meta => self.store.meta(page.0),
                    _ => None,
                };
                out.fill(0);
                if let Some(b) = stored {
                    let n = b.len().min(out.len());
                    out[..n].copy_from_slice(&b[..n]);
                }
            }
            Err(NandError::Uncorrectable) => self.m.stats.uncorrectable_reads += 1,
            Err(NandError::Erased) => self.m.stats.erased_reads += 1,
            Err(_) => {}
        }
        r
    }
}

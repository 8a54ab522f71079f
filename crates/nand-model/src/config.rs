//! Tunables of the reliability model and of fault injection.

use firmware_core::Error;

/// Raw bit-error model of the medium.
///
/// The mean number of raw bit errors in the worst 1 KiB codeword of a page is
///
/// ```text
/// r      = pe / rated_pe
/// fresh  = (base_errors + wear_errors * r^wear_exponent)
///        * quality(block)                      // class factor * (1 +- quality_jitter)
///        * correction(class, pe)               // class_correction, 1.0 by default
///        * wordline(page)                      // edge_factor on edge wordlines,
///                                              // * (1 + upper_page_step * page_in_wordline)
/// R      = 1 + retention_per_month * retention_months * (1 + retention_wear * r)
/// read   = floor(fresh * R * (1 + read_noise * t) + d) + carried
/// ```
///
/// where `t` is triangular on `[-1, 1]` and `d` uniform on `[0, 1)`, both drawn
/// from a splitmix64 hash of the seed, the page and a per-medium sample counter,
/// and `carried` is what copybacks accumulated in the page. A read whose sample
/// exceeds `ecc_limit` fails with `Uncorrectable`.
///
/// # Retention and copybacks
///
/// `retention_months` is the age of the data at every read: each read models
/// data that has sat that long since its last program or copyback. A copyback
/// samples its source like a read but **without** the retention term
/// (`floor(fresh * (1 + read_noise * t) + d) + carried`, the source's own
/// carried errors included): garbage collection moves data shortly after it
/// was written, so the retention requirement applies to the data's final
/// resting place. The destination's `carried` becomes that sample. A read after
/// a chain of `k` copybacks therefore sees the retention-aged errors of the
/// last page plus the fresh errors of the `k` source reads; an off-chip copy
/// (read, ECC, program) starts again with `carried = 0`.
///
/// [`ReliabilityConfig::mlc_dac18`] and [`ReliabilityConfig::tlc_thesis`] are
/// calibrated so that the copyback thresholds of the papers are the longest
/// chains that stay correctable (see `docs/results.md`, "Copyback error model
/// calibration").
///
/// With the defaults a fresh median block reads 0 to 2 errors, a median block at
/// `rated_pe` reads about 25 (at most about 38 on its weakest pages, under the
/// limit of 40), worst-class blocks start to fail on their weakest pages around
/// rated endurance, median blocks fail from about 1.3x rated and every block
/// fails at 2x rated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReliabilityConfig {
    /// Seed of the block-quality draw and of the per-read error sampling.
    pub seed: u64,
    /// Correctable raw bit errors per 1 KiB codeword (default 40, a typical BCH/LDPC
    /// strength); a read whose sampled count is larger fails with `Uncorrectable`.
    pub ecc_limit: u16,
    /// Rated endurance in program/erase cycles (default 3000).
    pub rated_pe: u32,
    /// Mean errors of a fresh median block, before any wear (default 1.0).
    pub base_errors: f32,
    /// Mean errors wear adds to a median block at `rated_pe` (default 24.0);
    /// the wear term grows with the square of `pe / rated_pe`.
    pub wear_errors: f32,
    /// Fraction of blocks drawn into the best quality class (default 0.2).
    pub best_fraction: f32,
    /// Error multiplier of best-class blocks (default 0.75).
    pub best_factor: f32,
    /// Fraction of blocks drawn into the worst quality class (default 0.1).
    pub worst_fraction: f32,
    /// Error multiplier of worst-class blocks (default 1.25). Median blocks use 1.0.
    pub worst_factor: f32,
    /// Relative spread of a block's multiplier inside its class, uniform
    /// `+- quality_jitter` (default 0.05).
    pub quality_jitter: f32,
    /// Wordlines at each end of a block that count as edge wordlines (default 1).
    pub edge_wordlines: u32,
    /// Error multiplier of edge wordlines (default 1.15).
    pub edge_factor: f32,
    /// Extra errors per page position inside a wordline: the k-th page of a
    /// wordline (LSB, CSB, MSB...) gets `1 + k * upper_page_step` (default 0.04).
    pub upper_page_step: f32,
    /// How long the data has sat since it was written, in months (default 0.0).
    /// One global knob, settable at run time with `set_retention_months`.
    pub retention_months: f32,
    /// Relative error growth per month of retention at zero wear; worn blocks lose
    /// charge faster, `(1 + pe / rated_pe)` times (default 0.01).
    pub retention_per_month: f32,
    /// Relative read-to-read noise, the half width of a triangular spread
    /// (default 0.15).
    pub read_noise: f32,
    /// Exponent of `pe / rated_pe` in the wear term (default 2.0).
    pub wear_exponent: f32,
    /// How much wear speeds up retention loss: the retention term is
    /// `retention_per_month * months * (1 + retention_wear * pe / rated_pe)`
    /// (default 1.0).
    pub retention_wear: f32,
    /// Inclusive upper P/E bound of each column of [`Self::class_correction`];
    /// P/E counts beyond the last bound use the last column.
    pub correction_pe_upper: [u32; CORRECTION_BUCKETS],
    /// Multiplier on the fresh errors per quality class (best, median, worst)
    /// and P/E column, for measured tables a smooth model cannot follow
    /// (default all 1.0).
    pub class_correction: [[f32; CORRECTION_BUCKETS]; 3],
}

/// Number of P/E columns of [`ReliabilityConfig::class_correction`].
pub const CORRECTION_BUCKETS: usize = 6;

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig {
            seed: 0x5EED_0FB1_0C00,
            ecc_limit: 40,
            rated_pe: 3000,
            base_errors: 1.0,
            wear_errors: 24.0,
            best_fraction: 0.2,
            best_factor: 0.75,
            worst_fraction: 0.1,
            worst_factor: 1.25,
            quality_jitter: 0.05,
            edge_wordlines: 1,
            edge_factor: 1.15,
            upper_page_step: 0.04,
            retention_months: 0.0,
            retention_per_month: 0.01,
            read_noise: 0.15,
            wear_exponent: 2.0,
            retention_wear: 1.0,
            correction_pe_upper: [u32::MAX; CORRECTION_BUCKETS],
            class_correction: [[1.0; CORRECTION_BUCKETS]; 3],
        }
    }
}

impl ReliabilityConfig {
    /// A model without noise, spread or wordline effects: every read of a page sees
    /// exactly `floor(base_errors + wear) + carried` errors. Meant for tests.
    pub fn flat(base_errors: f32) -> Self {
        ReliabilityConfig {
            base_errors,
            best_fraction: 0.0,
            worst_fraction: 0.0,
            quality_jitter: 0.0,
            edge_factor: 1.0,
            upper_page_step: 0.0,
            read_noise: 0.0,
            ..ReliabilityConfig::default()
        }
    }

    /// The default model scaled to a 24-bit-per-KiB ECC (seed 002's
    /// controller): base and wear errors x0.55, so a median block at
    /// `rated_pe` reads about 14 errors and its weakest pages stay under 24,
    /// as the default's stay under 40. Used by the `dgcb-flashsim` preset.
    pub fn mlc_ecc24() -> Self {
        let d = ReliabilityConfig::default();
        ReliabilityConfig {
            ecc_limit: 24,
            base_errors: d.base_errors * 0.55,
            wear_errors: d.wear_errors * 0.55,
            ..d
        }
    }

    /// 1x-nm 2-bit MLC calibrated to seed 000 Table 1 (`CT` 4/3/2 for P/E up to
    /// 1000/2000/3000 under 1-year retention): `ecc_limit` 40, rated 3000 P/E,
    /// a single quality class with +-2 % jitter, +-2 % read noise, the default
    /// wordline effects (edge 1.15, upper page +4 %, so the worst page is the
    /// MSB page of an edge wordline as in seed 000 Sec. 3.1), linear wear and a
    /// retention term of 5 % per month, growing with wear. The retention
    /// requirement of the table is `retention_months = 12`.
    pub fn mlc_dac18() -> Self {
        ReliabilityConfig {
            ecc_limit: 40,
            rated_pe: 3000,
            base_errors: 4.33,
            wear_errors: 2.68,
            wear_exponent: 1.0,
            best_fraction: 0.0,
            worst_fraction: 0.0,
            quality_jitter: 0.02,
            read_noise: 0.02,
            retention_months: 12.0,
            retention_per_month: 0.05,
            retention_wear: 1.0,
            ..ReliabilityConfig::default()
        }
    }

    /// 48-layer 3D TLC calibrated to seed 001 Table 6 (`CTT` per P/E bucket,
    /// best/median/worst block and 1-year or 3-month retention): `ecc_limit`
    /// 120 (an LDPC-class code), rated 5000 P/E, classes best 20 % (x0.933),
    /// median, worst 10 % (x1.4135) with +-1 % jitter, +-1 % read noise, edge
    /// wordlines x1.15, wear exponent 1.25 and a retention term of 8.2 % per
    /// month independent of wear. The table's cells need a few per cent of
    /// per-(class, P/E bucket) correction (`class_correction`, see
    /// `docs/results.md`). The retention requirement is `retention_months`
    /// (12 or 3).
    pub fn tlc_thesis() -> Self {
        ReliabilityConfig {
            ecc_limit: 120,
            rated_pe: 5000,
            base_errors: 13.2333,
            wear_errors: 14.2609,
            wear_exponent: 1.25,
            best_fraction: 0.2,
            best_factor: 0.933,
            worst_fraction: 0.1,
            worst_factor: 1.4135,
            quality_jitter: 0.01,
            read_noise: 0.01,
            edge_factor: 1.15,
            retention_months: 12.0,
            retention_per_month: 0.082,
            retention_wear: 0.0,
            correction_pe_upper: [400, 1000, 2000, 3000, 4000, 5000],
            class_correction: [
                [1.0404, 1.1088, 1.0243, 0.95, 0.9057, 0.9835],
                [0.9707, 1.0345, 1.0357, 0.9777, 0.938, 1.0546],
                [0.9408, 1.0529, 1.0, 1.0, 0.9814, 1.0],
            ],
            ..ReliabilityConfig::default()
        }
    }

    /// The named model: `default`, `mlc-dac18` or `tlc-thesis`.
    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "default" => Some(Self::default()),
            "mlc-dac18" => Some(Self::mlc_dac18()),
            "mlc-ecc24" => Some(Self::mlc_ecc24()),
            "tlc-thesis" => Some(Self::tlc_thesis()),
            _ => None,
        }
    }

    /// Correction multiplier of quality class `class` (0 best, 1 median,
    /// 2 worst) at `pe`.
    pub fn correction(&self, class: usize, pe: u32) -> f32 {
        let col = self
            .correction_pe_upper
            .iter()
            .position(|&u| pe <= u)
            .unwrap_or(CORRECTION_BUCKETS - 1);
        self.class_correction
            .get(class)
            .and_then(|row| row.get(col))
            .copied()
            .unwrap_or(1.0)
    }

    /// Mean fresh errors (no retention, no carried errors) of a page with
    /// wordline factor `page_factor` in a block of class `class` (0 best,
    /// 1 median, 2 worst) and quality multiplier `quality` at `pe`.
    pub fn fresh_mean(&self, pe: u32, class: usize, quality: f32, page_factor: f32) -> f32 {
        let r = pe as f32 / self.rated_pe as f32;
        (self.base_errors + self.wear_errors * powf(r, self.wear_exponent))
            * quality
            * self.correction(class, pe)
            * page_factor
    }

    /// Retention multiplier `R` at `pe` after `months`.
    pub fn retention_factor(&self, pe: u32, months: f32) -> f32 {
        let r = pe as f32 / self.rated_pe as f32;
        1.0 + self.retention_per_month * months * (1.0 + self.retention_wear * r)
    }

    /// Class boundaries, `N` steps over the P/E buckets ending at `pe_upper`,
    /// each `(last P/E of the step, best-class maximum, median-class
    /// maximum)` in bit errors, for one read
    /// of a block's first page (an edge wordline's lowest page) shortly after it
    /// was programmed, at the retention this model's `retention_months` applies
    /// to every read. In each bucket `best_max` sits just below the lowest
    /// reading a median-class block can give anywhere in the bucket and
    /// `median_max` just below the lowest reading of a worst-class block, so a
    /// block is never put into a better class than its own; blocks of a better
    /// class may be put into a worse one (the safe direction). Without a
    /// worst class `median_max` is `u16::MAX`.
    pub fn ber_class_steps<const N: usize>(&self, pe_upper: [u32; 6]) -> [(u32, u16, u16); N] {
        let page = if self.edge_wordlines > 0 {
            self.edge_factor
        } else {
            1.0
        };
        // The lowest reading a block of `class` can give at `pe`.
        let least = |pe: u32, class: usize, factor: f32| -> u16 {
            let q = factor * (1.0 - self.quality_jitter);
            let mean = self.fresh_mean(pe, class, q, page)
                * self.retention_factor(pe, self.retention_months)
                * (1.0 - self.read_noise);
            (mean as u32).min(u32::from(u16::MAX)) as u16
        };
        let per = N / pe_upper.len();
        let mut steps = [(0u32, 0u16, 0u16); N];
        let mut lo = 0u32;
        for (i, &hi) in pe_upper.iter().enumerate() {
            // Readings grow with P/E inside a bucket (its correction is
            // constant), so each step's boundary holds from the step's start.
            let span = u64::from(hi.saturating_sub(lo)) + 1;
            for j in 0..per {
                let start = lo + (span * j as u64 / per as u64) as u32;
                let end = if j + 1 == per {
                    hi
                } else {
                    lo + (span * (j as u64 + 1) / per as u64) as u32 - 1
                };
                let best = least(start, 1, 1.0).saturating_sub(1);
                let median = if self.worst_fraction > 0.0 {
                    least(start, 2, self.worst_factor).saturating_sub(1)
                } else {
                    u16::MAX
                };
                steps[i * per + j] = (end, best, median);
            }
            lo = hi.saturating_add(1);
        }
        steps
    }

    /// Checks that every value is finite and in range.
    pub fn validate(&self) -> Result<(), Error> {
        let non_neg = |x: f32| x.is_finite() && x >= 0.0;
        let positive = |x: f32| x.is_finite() && x > 0.0;
        let fraction = |x: f32| x.is_finite() && (0.0..=1.0).contains(&x);
        if self.rated_pe == 0 {
            return Err(Error::InvalidConfig(&"rated_pe is zero"));
        }
        if !(non_neg(self.base_errors) && non_neg(self.wear_errors)) {
            return Err(Error::InvalidConfig(&"error rates must be finite and >= 0"));
        }
        if !(positive(self.best_factor)
            && positive(self.worst_factor)
            && positive(self.edge_factor))
        {
            return Err(Error::InvalidConfig(&"quality factors must be positive"));
        }
        if !(fraction(self.best_fraction)
            && fraction(self.worst_fraction)
            && self.best_fraction + self.worst_fraction <= 1.0)
        {
            return Err(Error::InvalidConfig(
                &"quality class fractions out of range",
            ));
        }
        if !(fraction(self.quality_jitter) && self.quality_jitter < 1.0) {
            return Err(Error::InvalidConfig(&"quality_jitter must be in [0, 1)"));
        }
        if !(fraction(self.read_noise) && self.read_noise < 1.0) {
            return Err(Error::InvalidConfig(&"read_noise must be in [0, 1)"));
        }
        if !(non_neg(self.wear_exponent) && non_neg(self.retention_wear)) {
            return Err(Error::InvalidConfig(
                &"wear_exponent and retention_wear must be finite and >= 0",
            ));
        }
        if !self.class_correction.iter().flatten().all(|&c| positive(c)) {
            return Err(Error::InvalidConfig(&"class corrections must be positive"));
        }
        if !(non_neg(self.upper_page_step)
            && non_neg(self.retention_months)
            && non_neg(self.retention_per_month))
        {
            return Err(Error::InvalidConfig(
                &"wordline and retention knobs must be finite and >= 0",
            ));
        }
        Ok(())
    }
}

/// Seeded, deterministic fault injection. The default injects nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FaultConfig {
    /// Seed of the factory-bad draw, the random failures and the torn-erase pattern.
    pub seed: u64,
    /// Fraction of blocks marked bad at the factory (default 0.0; real parts ship
    /// with up to about 2 %). They fail every operation with `FactoryBad`.
    pub factory_bad_fraction: f64,
    /// Probability that one program (or copyback) fails and turns its block into a
    /// grown bad block (default 0.0).
    pub program_fail_prob: f64,
    /// Probability that one erase fails and turns its block into a grown bad block
    /// (default 0.0).
    pub erase_fail_prob: f64,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            seed: 0xFA17_5EED,
            factory_bad_fraction: 0.0,
            program_fail_prob: 0.0,
            erase_fail_prob: 0.0,
        }
    }
}

impl FaultConfig {
    /// Checks that every probability lies in `[0, 1]`.
    pub fn validate(&self) -> Result<(), Error> {
        let p = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
        if p(self.factory_bad_fraction) && p(self.program_fail_prob) && p(self.erase_fail_prob) {
            Ok(())
        } else {
            Err(Error::InvalidConfig(
                &"fault probabilities must be in [0, 1]",
            ))
        }
    }
}

/// Most die failures one medium can have scheduled at once (the schedule is a
/// fixed array, so the medium stays heap-free).
pub const MAX_DIE_FAILURES: usize = 8;

/// When a scheduled die failure takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DieFailureAt {
    /// From operation `n` on: the medium numbers every read, program, erase and
    /// copyback call from 0 since construction (torn ones included, never
    /// reset), and calls numbered `n` or later see the failed die.
    Op(u64),
    /// From simulated time `t` (ns) on, as set by `Medium::set_time_ns`: the
    /// medium has no clock of its own, its driver advances it.
    TimeNs(u64),
}

/// A whole-die failure scheduled on the medium (Reparo's failure model,
/// seed 001 ch. 5). Once it fires every operation on the die fails with a
/// status error the FTL already handles: reads and copybacks out of the die
/// give `Uncorrectable`, programs `ProgramFailed`, erases `EraseFailed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DieFailure {
    /// Channel of the die.
    pub channel: u16,
    /// Die (way) on that channel.
    pub die: u16,
    /// When it fails.
    pub at: DieFailureAt,
}

/// `x^y` for `x >= 0` without `std`: exact for the exponents 1 and 2, else
/// `exp(y * ln x)` by `libm`-free series good to f32 precision on `[0, 4]`.
pub(crate) fn powf(x: f32, y: f32) -> f32 {
    if x <= 0.0 {
        return if y == 0.0 { 1.0 } else { 0.0 };
    }
    if y == 1.0 {
        return x;
    }
    if y == 2.0 {
        return x * x;
    }
    exp(y * ln(x))
}

/// Natural logarithm for `x > 0` (f64 internally).
fn ln(x: f32) -> f32 {
    let mut m = f64::from(x);
    let mut k = 0i32;
    while m > 1.5 {
        m *= 0.5;
        k += 1;
    }
    while m < 0.75 {
        m *= 2.0;
        k -= 1;
    }
    // ln(m) = 2 atanh((m - 1) / (m + 1)), |z| <= 0.2.
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut term = z;
    let mut sum = 0.0;
    let mut n = 1.0;
    while n < 40.0 {
        sum += term / n;
        term *= z2;
        n += 2.0;
    }
    (2.0 * sum + f64::from(k) * core::f64::consts::LN_2) as f32
}

/// `e^x` for moderate `x` (f64 internally).
fn exp(x: f32) -> f32 {
    let x = f64::from(x);
    let k = (x / core::f64::consts::LN_2) as i32;
    let r = x - f64::from(k) * core::f64::consts::LN_2;
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..25 {
        term *= r / f64::from(i);
        sum += term;
    }
    let mut scale = 1.0f64;
    if k >= 0 {
        for _ in 0..k {
            scale *= 2.0;
        }
    } else {
        for _ in 0..(-k) {
            scale *= 0.5;
        }
    }
    (sum * scale) as f32
}

//! Tunables of the reliability model and of fault injection.

use firmware_core::Error;

/// Raw bit-error model of the medium.
///
/// The mean number of raw bit errors in the worst 1 KiB codeword of a page is
///
/// ```text
/// r      = pe / rated_pe
/// mean   = (base_errors + wear_errors * r^2)
///        * quality(block)                      // class factor * (1 +- quality_jitter)
///        * wordline(page)                      // edge_factor on edge wordlines,
///                                              // * (1 + upper_page_step * page_in_wordline)
///        * (1 + retention_per_month * retention_months * (1 + r))
/// sample = floor(mean * (1 + read_noise * t) + d) + carried
/// ```
///
/// where `t` is triangular on `[-1, 1]` and `d` uniform on `[0, 1)`, both drawn
/// from a splitmix64 hash of the seed, the page and a per-medium sample counter,
/// and `carried` is what copybacks accumulated in the page. A read whose sample
/// exceeds `ecc_limit` fails with `Uncorrectable`.
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
}

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

    /// Checks that every value is finite and in range.
    pub fn validate(&self) -> Result<(), Error> {
        let non_neg = |x: f32| x.is_finite() && x >= 0.0;
        let positive = |x: f32| x.is_finite() && x > 0.0;
        let fraction = |x: f32| x.is_finite() && (0.0..=1.0).contains(&x);
        if self.rated_pe == 0 {
            return Err(Error::InvalidConfig("rated_pe is zero"));
        }
        if !(non_neg(self.base_errors) && non_neg(self.wear_errors)) {
            return Err(Error::InvalidConfig("error rates must be finite and >= 0"));
        }
        if !(positive(self.best_factor)
            && positive(self.worst_factor)
            && positive(self.edge_factor))
        {
            return Err(Error::InvalidConfig("quality factors must be positive"));
        }
        if !(fraction(self.best_fraction)
            && fraction(self.worst_fraction)
            && self.best_fraction + self.worst_fraction <= 1.0)
        {
            return Err(Error::InvalidConfig("quality class fractions out of range"));
        }
        if !(fraction(self.quality_jitter) && self.quality_jitter < 1.0) {
            return Err(Error::InvalidConfig("quality_jitter must be in [0, 1)"));
        }
        if !(fraction(self.read_noise) && self.read_noise < 1.0) {
            return Err(Error::InvalidConfig("read_noise must be in [0, 1)"));
        }
        if !(non_neg(self.upper_page_step)
            && non_neg(self.retention_months)
            && non_neg(self.retention_per_month))
        {
            return Err(Error::InvalidConfig(
                "wordline and retention knobs must be finite and >= 0",
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
                "fault probabilities must be in [0, 1]",
            ))
        }
    }
}

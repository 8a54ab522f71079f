//! Copyback threshold tables: how many *consecutive* copybacks a block may
//! source before its data must pass through the controller's ECC again.
//!
//! A copyback moves a page inside its plane without the off-chip ECC, so its
//! raw bit errors are carried along and accumulate. The papers measured how
//! many such moves in a row stay within the ECC's reach:
//!
//! * seed 000 (Hong et al., "Revitalizing Copybacks in Modern SSDs", DAC'18),
//!   §3.2 and **Table 1**: `CT(PE, retention)` of 1x-nm 2-bit MLC, 1-year
//!   retention only, bucketed by P/E cycles ([`RCOPYBACK_CT`]);
//! * seed 001 (dissertation "Optimizing the Reliability and Performance of
//!   Ultra-large SSDs"), ch. 4, §4.2.2 and **Table 6** (p. 58):
//!   `CTT(PE, block BER class, retention)` of 3D TLC, with blocks classed by
//!   the BER measured right after a program ([`RCPB_CTT`]);
//! * FastGC (Wu et al., DAC'18, ref. \[6\] of seed 001), the baseline: seed 001
//!   §4.1.2 (pp. 53-54) and §4.2.1 (pp. 55-58) say FastGC uses "a single copyback
//!   threshold value ... for all the blocks with the same P/E cycles",
//!   "conservatively selected", the "block-unaware worst-case setting". FastGC's
//!   own numbers are not in the seeds, so [`fastgc_ct`] is the *worst-block
//!   row* of Table 6: the one threshold per P/E bucket that is safe for every
//!   block, as the dissertation compares against.
//!
//! A threshold of 0 means "no copyback at all" (Table 6 has one: worst blocks,
//! 1-year retention, (4K, 5K] P/E). P/E counts beyond a table's last column
//! were not characterised; the lookups return 0 there (off-chip only), the
//! only choice that is safe without data. The tables are transcribed digit
//! for digit; [`CopybackConfig::max_threshold`] caps them (the `rcFTLn` of
//! seed 000 §5.1: "the maximum copyback threshold was set to n").

use crate::error::{Error, OrRare};

/// Data-retention requirement the thresholds must honour (the `t` of `CT(x, t)`).
///
/// Longer retention leaves less ECC margin for carried errors, so thresholds
/// are lower. Seed 001 uses [`Retention::OneYear`] as its basic requirement
/// (JEDEC client class, 30 °C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Retention {
    /// 1 year at 30 °C (JEDEC client); the default of both papers.
    #[default]
    OneYear,
    /// 3 months (seed 001 Table 6, lower rows).
    ThreeMonths,
}

impl Retention {
    /// Row index of this retention in [`RCPB_CTT`].
    #[inline]
    pub const fn index(self) -> usize {
        match self {
            Retention::OneYear => 0,
            Retention::ThreeMonths => 1,
        }
    }
}

/// Reliability class of a block, from its bit-error rate measured right after
/// a program (seed 001 §4.2.1: no retention or read-disturb errors yet, so it
/// reflects process variation). Seed 001 Table 6 has three rows per retention.
///
/// The default is [`BerClass::Worst`], so a block never classified gets the
/// safe (lowest) threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum BerClass {
    /// Lowest BER of the blocks at the same P/E.
    Best = 0,
    /// BER around the average (most blocks, seed 001 Fig. 18(a)).
    Median = 1,
    /// The long tail of high BER.
    #[default]
    Worst = 2,
}

impl BerClass {
    /// Row index of this class in [`RCPB_CTT`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// All classes, best first.
    pub const ALL: [BerClass; 3] = [BerClass::Best, BerClass::Median, BerClass::Worst];
}

/// Sorts a block into a [`BerClass`] by the raw bit errors of one read of its
/// first page shortly after that page was programmed, with boundaries per P/E
/// bucket (error counts grow with wear, so one pair of boundaries cannot serve
/// the whole life).
///
/// Seed 001 does not publish the class boundaries (only that the worst block
/// has 1.8x the BER of the best at 6K P/E, §4.2.1), so they are configuration;
/// the simulator derives them from its medium model. Compare like with like:
/// the same ECC codeword size and page type for every block. Misclassifying a
/// block into a better class is the unsafe direction, so boundaries should sit
/// just below the lowest reading of the next worse class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BerClassifier {
    /// Inclusive upper P/E bound of each step; P/E counts beyond the last
    /// bound use the last step.
    pub pe_upper: [u32; CLASSIFIER_STEPS],
    /// Most bit errors a [`BerClass::Best`] block may show, per step.
    pub best_max: [u16; CLASSIFIER_STEPS],
    /// Most bit errors a [`BerClass::Median`] block may show, per step; above
    /// is `Worst`.
    pub median_max: [u16; CLASSIFIER_STEPS],
}

/// P/E steps a [`BerClassifier`] holds boundaries for: four per column of
/// seed 001 Table 6. Readings grow with wear inside a column, so a boundary
/// that must hold over a whole column sits below every block of the next
/// worse class at the column's start and classes nearly everything worst at
/// its end; finer steps follow the wear.
pub const CLASSIFIER_STEPS: usize = 24;

impl BerClassifier {
    /// Boundaries for the medium's default reliability model at low wear.
    pub const DEFAULT: BerClassifier = BerClassifier::uniform(1, 3);

    /// One pair of boundaries for every P/E count.
    pub const fn uniform(best_max: u16, median_max: u16) -> Self {
        BerClassifier {
            pe_upper: [u32::MAX; CLASSIFIER_STEPS],
            best_max: [best_max; CLASSIFIER_STEPS],
            median_max: [median_max; CLASSIFIER_STEPS],
        }
    }

    /// Boundaries from `(pe_upper, best_max, median_max)` steps in rising P/E
    /// order; steps beyond the given ones repeat the last. `None` when there
    /// are none or more than [`CLASSIFIER_STEPS`].
    pub fn from_steps(steps: &[(u32, u16, u16)]) -> Option<Self> {
        if steps.is_empty() || steps.len() > CLASSIFIER_STEPS {
            return None;
        }
        let mut c = Self::uniform(0, 0);
        let last = *steps.last()?;
        for (i, slot) in c.pe_upper.iter_mut().enumerate() {
            let (pe, best, median) = steps.get(i).copied().unwrap_or(last);
            *slot = pe;
            if let (Some(b), Some(m)) = (c.best_max.get_mut(i), c.median_max.get_mut(i)) {
                *b = best;
                *m = median;
            }
        }
        Some(c)
    }

    /// The step of `pe` (the last one beyond the table).
    pub fn bucket(&self, pe: u32) -> usize {
        pe_bucket(&self.pe_upper, pe).unwrap_or(CLASSIFIER_STEPS - 1)
    }

    /// The class of a block with `pe` cycles whose post-program read showed
    /// `bit_errors`.
    pub fn classify(&self, pe: u32, bit_errors: u16) -> BerClass {
        let b = self.bucket(pe);
        let best = self.best_max.get(b).copied().unwrap_or(0);
        let median = self.median_max.get(b).copied().unwrap_or(0);
        if bit_errors <= best {
            BerClass::Best
        } else if bit_errors <= median {
            BerClass::Median
        } else {
            BerClass::Worst
        }
    }
}

/// Seed 000 Table 1 ("Rcopyback operation model", §3.2), columns: inclusive
/// upper P/E bound of each bucket: `1-1000 | 1001-2000 | 2001-3000`.
/// P/E 0 (a fresh block) falls in the first bucket.
pub const RCOPYBACK_PE_UPPER: [u32; 3] = [1000, 2000, 3000];

/// Seed 000 Table 1: copyback threshold per P/E bucket of
/// [`RCOPYBACK_PE_UPPER`], 1-year retention: `4 | 3 | 2`.
pub const RCOPYBACK_CT: [u8; 3] = [4, 3, 2];

/// Seed 001 Table 6 (§4.2.2, p. 58) columns: inclusive upper P/E bound of each
/// bucket: `[0K~0.4K] | (0.4K~1K] | (1K~2K] | (2K~3K] | (3K~4K] | (4K~5K]`.
pub const RCPB_PE_UPPER: [u32; 6] = [400, 1000, 2000, 3000, 4000, 5000];

/// Seed 001 Table 6 (§4.2.2, p. 58), "The proposed rCPB operation model",
/// indexed `[retention][ber class][P/E bucket]` (see [`Retention::index`],
/// [`BerClass::index`], [`RCPB_PE_UPPER`]).
pub const RCPB_CTT: [[[u8; 6]; 3]; 2] = [
    // 1 year
    [
        [5, 4, 4, 3, 3, 2], // best block
        [5, 4, 3, 3, 2, 1], // median block
        [3, 2, 2, 1, 1, 0], // worst block
    ],
    // 3 months
    [
        [6, 5, 4, 4, 3, 2], // best block
        [6, 5, 4, 3, 3, 2], // median block
        [4, 3, 2, 2, 1, 1], // worst block
    ],
];

/// Largest copyback threshold a [`ThresholdSet`] can hold.
pub const MAX_CT: u8 = 15;

/// The bucket of `pe` in a table whose columns end (inclusive) at `upper`,
/// or `None` beyond the last column.
pub fn pe_bucket(upper: &[u32], pe: u32) -> Option<usize> {
    upper.iter().position(|&u| pe <= u)
}

/// Seed 000 Table 1: `CT(pe, 1 year)`; 0 beyond 3000 P/E (not characterised).
pub fn rcopyback_ct(pe: u32) -> u8 {
    pe_bucket(&RCOPYBACK_PE_UPPER, pe)
        .and_then(|i| RCOPYBACK_CT.get(i).copied())
        .unwrap_or(0)
}

/// Seed 001 Table 6: `CTT(pe, ber, retention)`; 0 beyond 5000 P/E (not characterised).
pub fn rcpb_ctt(pe: u32, ber: BerClass, retention: Retention) -> u8 {
    pe_bucket(&RCPB_PE_UPPER, pe)
        .and_then(|i| {
            RCPB_CTT
                .get(retention.index())
                .and_then(|r| r.get(ber.index()))
                .and_then(|row| row.get(i))
                .copied()
        })
        .unwrap_or(0)
}

/// FastGC's single, block-unaware threshold for `pe`: the worst-block row of
/// seed 001 Table 6 (see the module docs for why).
pub fn fastgc_ct(pe: u32, retention: Retention) -> u8 {
    rcpb_ctt(pe, BerClass::Worst, retention)
}

/// Which threshold table a drive uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum CtModel {
    /// Seed 000 Table 1, by P/E only (rcFTL of DAC'18, 2D MLC). It has only a
    /// 1-year column; under [`Retention::ThreeMonths`] it still gives the
    /// 1-year values (safe: shorter retention only raises thresholds).
    Rcopyback,
    /// Seed 001 Table 6, by P/E, block BER class and retention (rcFTL of the
    /// dissertation, 3D TLC).
    #[default]
    Rcpb,
    /// FastGC's block-unaware threshold: Table 6's worst-block row.
    FastGc,
}

/// The copyback part of the configuration (`copyback.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CopybackConfig {
    /// Threshold table.
    pub model: CtModel,
    /// Retention requirement the thresholds honour.
    pub retention: Retention,
    /// Cap on every threshold (`copyback.max_threshold`): seed 000's `rcFTLn`
    /// sets the maximum threshold to `n`; 0 disables copyback (the off-chip
    /// baseline). Values above the table's largest entry change nothing.
    pub max_threshold: u8,
}

impl Default for CopybackConfig {
    fn default() -> Self {
        Self::RCFTL
    }
}

impl CopybackConfig {
    /// rcFTL of seed 001: Table 6, 1-year retention, uncapped.
    pub const RCFTL: CopybackConfig = CopybackConfig {
        model: CtModel::Rcpb,
        retention: Retention::OneYear,
        max_threshold: MAX_CT,
    };

    /// The threshold of a block with `pe` cycles and class `ber`, capped by
    /// [`Self::max_threshold`]. `ber` is ignored by the block-unaware models.
    pub fn threshold(&self, pe: u32, ber: BerClass) -> u8 {
        let t = match self.model {
            CtModel::Rcopyback => rcopyback_ct(pe),
            CtModel::Rcpb => rcpb_ctt(pe, ber, self.retention),
            CtModel::FastGc => fastgc_ct(pe, self.retention),
        };
        t.min(self.max_threshold).min(MAX_CT)
    }

    /// Every non-zero threshold this configuration can yield (over all P/E
    /// buckets and BER classes, after the cap): the "values in force" whose
    /// LCM is the EPM's `Q_init` (seed 001 §4.3.1). The whole table is taken,
    /// not only the current P/E, because quotas stored in blocks are in units
    /// of `Q_init`, which must therefore stay fixed for the drive's life.
    pub fn thresholds_in_force(&self) -> ThresholdSet {
        let mut s = ThresholdSet::EMPTY;
        let mut add = |t: u8| s.insert(t.min(self.max_threshold));
        match self.model {
            CtModel::Rcopyback => RCOPYBACK_CT.iter().for_each(|&t| add(t)),
            CtModel::Rcpb => {
                if let Some(rows) = RCPB_CTT.get(self.retention.index()) {
                    rows.iter().flatten().for_each(|&t| add(t));
                }
            }
            CtModel::FastGc => {
                if let Some(row) = RCPB_CTT
                    .get(self.retention.index())
                    .and_then(|r| r.get(BerClass::Worst.index()))
                {
                    row.iter().for_each(|&t| add(t));
                }
            }
        }
        s
    }
}

/// A set of copyback thresholds in `1..=MAX_CT` (bit `c` stands for `c`;
/// 0, "no copyback", is never a member).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct ThresholdSet(u16);

impl ThresholdSet {
    /// The empty set.
    pub const EMPTY: ThresholdSet = ThresholdSet(0);

    /// The set of the non-zero values of `values` (values above [`MAX_CT`] are
    /// rejected: they could not be stored).
    pub fn from_values(values: &[u8]) -> Result<Self, Error> {
        let mut s = Self::EMPTY;
        for &v in values {
            if v > MAX_CT {
                return Err(Error::InvalidConfig(&"copyback threshold above 15"));
            }
            s.insert(v);
        }
        Ok(s)
    }

    /// Adds `ct` (0 and values above [`MAX_CT`] are ignored).
    pub fn insert(&mut self, ct: u8) {
        if (1..=MAX_CT).contains(&ct) {
            self.0 |= 1u16.wrapping_shl(u32::from(ct));
        }
    }

    /// Whether `ct` is in the set.
    pub fn contains(self, ct: u8) -> bool {
        (1..=MAX_CT).contains(&ct) && self.0 & 1u16.wrapping_shl(u32::from(ct)) != 0
    }

    /// Number of members.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// True when the set has no member (copyback disabled).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Largest member (`M_cpb` of seed 000 §4.1), 0 when empty.
    pub fn max(self) -> u8 {
        self.iter().last().unwrap_or(0)
    }

    /// Members in increasing order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (1..=MAX_CT).filter(move |&c| self.contains(c))
    }

    /// Least common multiple of the members (1 for the empty set): seed 001's
    /// `Q_init`, which makes every deduction `Q_init / CT` exact.
    pub fn lcm(self) -> Result<u32, Error> {
        self.iter().try_fold(1u32, |acc, c| {
            lcm(acc, u32::from(c))
                .or_rare(Error::InvalidConfig(&"copyback threshold LCM overflows"))
        })
    }
}

/// Greatest common divisor (Euclid); `gcd(0, 0) = 0`.
pub fn gcd(mut a: u32, mut b: u32) -> u32 {
    while let Some(r) = a.checked_rem(b) {
        a = b;
        b = r;
    }
    a
}

/// Least common multiple, `None` on overflow; `lcm(x, 0) = 0`.
pub fn lcm(a: u32, b: u32) -> Option<u32> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    a.checked_div(gcd(a, b))?.checked_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table1_values_and_bucket_edges() {
        // Seed 000 Table 1: 1-1000 -> 4, 1001-2000 -> 3, 2001-3000 -> 2.
        for (pe, ct) in [
            (0, 4),
            (1, 4),
            (1000, 4),
            (1001, 3),
            (2000, 3),
            (2001, 2),
            (3000, 2),
            (3001, 0),
            (u32::MAX, 0),
        ] {
            assert_eq!(rcopyback_ct(pe), ct, "pe {pe}");
        }
        // §3.1: at 3000 P/E and 1-year retention, at most two in a row.
        assert_eq!(rcopyback_ct(3000), 2);
    }

    #[test]
    fn table6_transcription() {
        use BerClass::*;
        use Retention::*;
        let rows: [(Retention, BerClass, [u8; 6]); 6] = [
            (OneYear, Best, [5, 4, 4, 3, 3, 2]),
            (OneYear, Median, [5, 4, 3, 3, 2, 1]),
            (OneYear, Worst, [3, 2, 2, 1, 1, 0]),
            (ThreeMonths, Best, [6, 5, 4, 4, 3, 2]),
            (ThreeMonths, Median, [6, 5, 4, 3, 3, 2]),
            (ThreeMonths, Worst, [4, 3, 2, 2, 1, 1]),
        ];
        // Lowest and highest P/E of every bucket, as the table brackets them.
        let edges: [(u32, u32); 6] = [
            (0, 400),
            (401, 1000),
            (1001, 2000),
            (2001, 3000),
            (3001, 4000),
            (4001, 5000),
        ];
        for (ret, ber, want) in rows {
            for (i, &(lo, hi)) in edges.iter().enumerate() {
                assert_eq!(rcpb_ctt(lo, ber, ret), want[i], "{ret:?} {ber:?} pe {lo}");
                assert_eq!(rcpb_ctt(hi, ber, ret), want[i], "{ret:?} {ber:?} pe {hi}");
            }
            assert_eq!(rcpb_ctt(5001, ber, ret), 0, "beyond the table");
        }
    }

    #[test]
    fn table6_claims_of_the_text() {
        use BerClass::*;
        use Retention::*;
        // §4.2.2: 1-year retention at 2K P/E -> threshold 2 to 4 by block BER.
        let at2k: [u8; 3] = BerClass::ALL.map(|b| rcpb_ctt(2000, b, OneYear));
        assert_eq!(at2k, [4, 3, 2]);
        // §4.2.1: at 3K P/E the best block gets two more copybacks than the worst.
        assert_eq!(
            rcpb_ctt(3000, Best, OneYear) - rcpb_ctt(3000, Worst, OneYear),
            2
        );
        // §6.2.2 (p. 111): under 3-month retention, up to 6 copybacks.
        let max3m = (0..=5000)
            .flat_map(|pe| BerClass::ALL.map(|b| rcpb_ctt(pe, b, ThreeMonths)))
            .max();
        assert_eq!(max3m, Some(6));
    }

    #[test]
    fn fastgc_is_the_worst_row() {
        for pe in [0, 400, 401, 1000, 2500, 4000, 4500, 5000, 6000] {
            for r in [Retention::OneYear, Retention::ThreeMonths] {
                let f = fastgc_ct(pe, r);
                assert_eq!(f, rcpb_ctt(pe, BerClass::Worst, r));
                for b in BerClass::ALL {
                    assert!(f <= rcpb_ctt(pe, b, r));
                }
            }
        }
        assert_eq!(fastgc_ct(4500, Retention::OneYear), 0);
    }

    #[test]
    fn config_threshold_and_cap() {
        let mut c = CopybackConfig::RCFTL;
        assert_eq!(c.threshold(0, BerClass::Best), 5);
        assert_eq!(c.threshold(0, BerClass::Worst), 3);
        c.max_threshold = 2; // rcFTL2
        assert_eq!(c.threshold(0, BerClass::Best), 2);
        assert_eq!(c.threshold(2500, BerClass::Worst), 1);
        c.max_threshold = 0; // baseline
        assert_eq!(c.threshold(0, BerClass::Best), 0);
        assert!(c.thresholds_in_force().is_empty());
        let c = CopybackConfig {
            model: CtModel::Rcopyback,
            retention: Retention::ThreeMonths,
            max_threshold: MAX_CT,
        };
        assert_eq!(c.threshold(1500, BerClass::Best), 3);
        let c = CopybackConfig {
            model: CtModel::FastGc,
            ..CopybackConfig::RCFTL
        };
        assert_eq!(c.threshold(0, BerClass::Best), 3);
    }

    #[test]
    fn thresholds_in_force_and_q_init() {
        let c = CopybackConfig::RCFTL;
        let s = c.thresholds_in_force();
        assert_eq!(s.iter().collect::<heapless::Vec<u8, 16>>(), [1, 2, 3, 4, 5]);
        assert_eq!(s.max(), 5);
        assert_eq!(s.lcm(), Ok(60));
        let c3 = CopybackConfig {
            retention: Retention::ThreeMonths,
            ..c
        };
        assert_eq!(c3.thresholds_in_force().lcm(), Ok(60)); // 1..=6
        let c1 = CopybackConfig {
            model: CtModel::Rcopyback,
            ..c
        };
        assert_eq!(c1.thresholds_in_force().lcm(), Ok(12)); // {2, 3, 4}
        assert_eq!(c1.thresholds_in_force().max(), 4); // M_cpb of rcFTL4
        let capped = CopybackConfig {
            max_threshold: 2,
            ..c
        };
        assert_eq!(capped.thresholds_in_force().lcm(), Ok(2)); // {1, 2}
        let fg = CopybackConfig {
            model: CtModel::FastGc,
            ..c
        };
        assert_eq!(fg.thresholds_in_force().lcm(), Ok(6)); // {1, 2, 3}
    }

    #[test]
    fn lcm_and_gcd() {
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(0, 7), 7);
        assert_eq!(gcd(7, 0), 7);
        assert_eq!(gcd(0, 0), 0);
        assert_eq!(lcm(4, 6), Some(12));
        assert_eq!(lcm(5, 0), Some(0));
        assert_eq!(lcm(u32::MAX, u32::MAX - 1), None);
        // LCM(1..=n) against known values.
        let known = [
            1u32, 2, 6, 12, 60, 60, 420, 840, 2520, 2520, 27720, 27720, 360360,
        ];
        let mut acc = 1u32;
        for (i, &k) in known.iter().enumerate() {
            acc = lcm(acc, i as u32 + 1).unwrap();
            assert_eq!(acc, k);
        }
        // Brute force: the least positive common multiple.
        for a in 1u32..=15 {
            for b in 1u32..=15 {
                let bf = (1..=a * b).find(|m| m % a == 0 && m % b == 0).unwrap();
                assert_eq!(lcm(a, b), Some(bf));
            }
        }
        let all = ThresholdSet::from_values(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
            .unwrap();
        assert_eq!(all.lcm(), Ok(360_360));
        assert_eq!(ThresholdSet::EMPTY.lcm(), Ok(1));
        assert!(ThresholdSet::from_values(&[16]).is_err());
        assert_eq!(ThresholdSet::from_values(&[0, 3, 3]).unwrap().len(), 1);
    }

    #[test]
    fn classifier() {
        let c = BerClassifier::uniform(10, 18);
        assert_eq!(c.classify(0, 0), BerClass::Best);
        assert_eq!(c.classify(0, 10), BerClass::Best);
        assert_eq!(c.classify(0, 11), BerClass::Median);
        assert_eq!(c.classify(9000, 18), BerClass::Median);
        assert_eq!(c.classify(0, 19), BerClass::Worst);
        assert_eq!(BerClass::default(), BerClass::Worst);
        let mut steps = [(0, 0, 0); 6];
        for (i, s) in steps.iter_mut().enumerate() {
            let k = i as u16 * 2;
            *s = (RCPB_PE_UPPER[i], 10 + k, 20 + k);
        }
        let c = BerClassifier::from_steps(&steps).unwrap();
        assert!(BerClassifier::from_steps(&[]).is_none());
        assert_eq!(c.classify(400, 10), BerClass::Best);
        assert_eq!(c.classify(401, 12), BerClass::Best);
        assert_eq!(c.classify(400, 12), BerClass::Median);
        assert_eq!(c.classify(5000, 30), BerClass::Median);
        assert_eq!(c.classify(5001, 31), BerClass::Worst);
        assert_eq!(c.classify(9999, 20), BerClass::Best);
    }
}

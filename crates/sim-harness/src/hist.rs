//! A log-linear latency histogram: constant memory, about 1.6% relative error.

/// Sub-buckets per power of two.
const SUB: usize = 64;
const SUB_BITS: u32 = 6;

/// Latency histogram over nanosecond values.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
    min: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; 64 * SUB],
            n: 0,
            sum: 0,
            max: 0,
            min: u64::MAX,
        }
    }
}

fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) as usize & (SUB - 1);
    ((shift as usize + 1) * SUB) + sub
}

fn value_of(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let shift = (i / SUB - 1) as u32;
    let sub = (i % SUB) as u64;
    // Midpoint of the bucket.
    ((SUB as u64 + sub) << shift) + ((1u64 << shift) >> 1)
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.n += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
        self.min = self.min.min(v);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Arithmetic mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Largest value (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Value at quantile `q` in [0, 1] (bucket midpoint, clamped to the exact max).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_of(i).min(self.max).max(self.min);
            }
        }
        self.max
    }

    /// (value, cumulative fraction) points for a CDF plot, one per non-empty bucket.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut out = Vec::new();
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            if *c > 0 {
                seen += c;
                out.push((value_of(i).min(self.max), seen as f64 / self.n as f64));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_two_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        for (q, want) in [(0.5, 500_000.0), (0.99, 990_000.0), (0.999, 999_000.0)] {
            let got = h.quantile(q) as f64;
            assert!((got - want).abs() / want < 0.02, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.max(), 1_000_000);
        assert!((h.mean() - 500_005.0).abs() < 1.0);
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::default();
        for v in [3, 3, 7] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 3);
        assert_eq!(h.quantile(1.0), 7);
    }
}

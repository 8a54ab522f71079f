//! Deterministic pseudo-random generators. Each reproduces, bit for bit, a
//! stream the project already depends on (workloads, crash tests, scenario
//! traffic, the medium's error draws), so results stay comparable across
//! versions. None is cryptographic.

/// The golden-ratio increment of splitmix64 (also a common seed scrambler).
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The splitmix64 output function applied to `z + GOLDEN_GAMMA`: a fast,
/// well-mixed 64-bit hash of `z` (the medium's error draws hash with it).
#[inline]
pub fn splitmix64(z: u64) -> u64 {
    let mut z = z.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The splitmix64 generator (Steele, Lea, Flood): state advanced by
/// [`GOLDEN_GAMMA`], output [`splitmix64`] of the old state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let z = splitmix64(self.0);
        self.0 = self.0.wrapping_add(GOLDEN_GAMMA);
        z
    }

    /// `next_u64() % n` (`n` > 0; slightly biased, as the streams using it were).
    #[inline]
    pub fn below_mod(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// xorshift128+ seeded from splitmix64: the synthetic workload's generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XorShift128Plus(u64, u64);

impl XorShift128Plus {
    /// Seeds both words from two splitmix64 outputs of `seed` (made odd).
    pub fn new(seed: u64) -> Self {
        let mut s = SplitMix64(seed);
        let a = s.next_u64() | 1;
        let b = s.next_u64() | 1;
        XorShift128Plus(a, b)
    }

    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut s1 = self.0;
        let s0 = self.1;
        self.0 = s0;
        s1 ^= s1 << 23;
        self.1 = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
        self.1.wrapping_add(s0)
    }

    /// Uniform value in `0..n` (`n` > 0) by 128-bit multiply-shift.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        mul_shift(self.next_u64(), n)
    }
}

/// `x * n / 2^64`: maps 64 random bits uniformly onto `0..n`.
#[inline]
fn mul_shift(x: u64, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 64) as u64
}

/// xorshift64* (Vigna): the crash harness's, the scenarios' and the NBD
/// acceptance image's generator. The state must not be 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift64Star(pub u64);

impl XorShift64Star {
    /// Next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform value in `0..n` by 128-bit multiply-shift; 0 when `n` is 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            mul_shift(self.next_u64(), n)
        }
    }

    /// Uniform value in `0..n` (`n` > 0) from the upper 32 output bits by
    /// 64-bit multiply-shift (the scenarios' draw: no 128-bit arithmetic).
    #[inline]
    pub fn below_u32(&mut self, n: u32) -> u32 {
        let hi = self.next_u64() >> 32;
        // hi < 2^32 and n < 2^32, so the product fits; the shift leaves < n.
        (hi.wrapping_mul(u64::from(n)) >> 32) as u32
    }

    /// True with probability about `p`, from the upper 53 output bits.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Marsaglia's xorshift64 with shifts 13, 7, 17. The state must not be 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift64(pub u64);

impl XorShift64 {
    /// Next 64 random bits (the new state).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// `next_u64() % n` (`n` > 0; slightly biased, as the streams using it were).
    #[inline]
    pub fn below_mod(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A 64-bit linear congruential generator with Knuth's MMIX multiplier
/// (the one PCG builds on); the increment must be odd for a full period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lcg64 {
    /// Current state (the last output).
    pub state: u64,
    /// Added after each multiplication.
    pub increment: u64,
}

impl Lcg64 {
    /// Knuth's MMIX multiplier.
    pub const MULTIPLIER: u64 = 6_364_136_223_846_793_005;
    /// Knuth's MMIX increment.
    pub const MMIX_INCREMENT: u64 = 1_442_695_040_888_963_407;

    /// A generator starting from `state`.
    pub fn new(state: u64, increment: u64) -> Self {
        Lcg64 { state, increment }
    }

    /// Next state, which is the output (low bits are weak: use the high ones).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self
            .state
            .wrapping_mul(Self::MULTIPLIER)
            .wrapping_add(self.increment);
        self.state
    }

    /// `(next_u64() >> 33) % n` (`n` > 0): a draw from the 31 high bits.
    #[inline]
    pub fn below_high(&mut self, n: u64) -> u64 {
        (self.next_u64() >> 33) % n
    }
}

/// Each generator's first outputs, as the code it replaced produced them
/// (computed by the copies that lived in the workload, the crash harness,
/// the scenarios, the examples and the tests before they were merged here).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_xorshift128plus_stream() {
        let mut r = XorShift128Plus::new(42);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0xaf1f_56fc_41a4_d2d2,
                0xbd49_6f01_ee60_5ceb,
                0x8c8b_2271_e69f_dbf6
            ]
        );
        assert_eq!(
            [r.below(1000), r.below(1000), r.below(1000)],
            [328, 213, 906]
        );
    }

    #[test]
    fn crash_xorshift64star_stream() {
        let mut r = XorShift64Star(7u64.wrapping_mul(GOLDEN_GAMMA) | 1);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x671e_db9d_e9e9_afb7,
                0x67e5_3669_d5fb_6b34,
                0x974e_a030_4616_1d80
            ]
        );
        assert_eq!(
            [r.below(1000), r.below(1000), r.below(1000)],
            [63, 763, 713]
        );
        let chances: [bool; 6] = core::array::from_fn(|_| r.chance(0.5));
        assert_eq!(chances, [false, true, false, false, false, true]);
        let state = r.0;
        assert_eq!(r.below(0), 0);
        assert_eq!(r.0, state, "below(0) draws nothing");
    }

    #[test]
    fn scenario_xorshift64star_stream() {
        let mut r = XorShift64Star(0x5EED | 1);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x970d_7842_0bec_184a,
                0xc7e2_c283_945e_48d8,
                0xe90a_11ce_3da0_4682
            ]
        );
        let draws: [u32; 4] = core::array::from_fn(|_| r.below_u32(1000));
        assert_eq!(draws, [81, 98, 411, 198]);
        let mut w = XorShift64Star(0x00C0_FFEE_1234_5679);
        let draws: [u32; 4] = core::array::from_fn(|_| w.below_u32(1000));
        assert_eq!(draws, [594, 382, 139, 402], "write_cost example");
    }

    #[test]
    fn nbd_image_xorshift64star_stream() {
        let mut r = XorShift64Star(GOLDEN_GAMMA);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x0d83_b3e2_9a21_487a,
                0x54c4_4c79_f1fe_9d67,
                0xa845_f342_007a_0e78
            ]
        );
    }

    #[test]
    fn xorshift64_streams() {
        let mut r = XorShift64(0x5eed);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x1794_81ea_4510,
                0xc7ba_5713_31ee_d59a,
                0x8edb_ec5a_ebe9_2eb1
            ]
        );
        let draws: [u64; 3] = core::array::from_fn(|_| r.below_mod(1000));
        assert_eq!(draws, [324, 69, 599]);
        let mut r = XorShift64(12345);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x0c16_3a39_1e19,
                0x9c0e_b954_2f03_ca65,
                0xa228_090a_d781_f4b1
            ]
        );
    }

    #[test]
    fn splitmix64_stream_and_hash() {
        let mut r = SplitMix64(3);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x1d0b_14e4_db01_8fed,
                0xb346_6f8a_7b81_a989,
                0x9ceb_e8a6_d050_dd01
            ]
        );
        let draws: [u64; 3] = core::array::from_fn(|_| r.below_mod(1000));
        assert_eq!(draws, [647, 366, 335]);
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(12345), 0x2211_8258_a9d1_11a0);
    }

    #[test]
    fn lcg64_streams() {
        let mut r = Lcg64::new(12345, Lcg64::MMIX_INCREMENT);
        let draws: [u64; 4] = core::array::from_fn(|_| r.below_high(1000));
        assert_eq!(draws, [264, 583, 42, 421]);
        let mut r = Lcg64::new(5, 1);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0xb999_c4e2_7eeb_7be2,
                0x622f_ef57_5463_e4bb,
                0xf7c7_9c22_08de_f9e0
            ]
        );
        let mut r = Lcg64::new(9, Lcg64::MMIX_INCREMENT);
        let head = [r.next_u64(), r.next_u64(), r.next_u64()];
        assert_eq!(
            head,
            [
                0x2ee7_1116_a8a8_f9e4,
                0xc565_4bc3_92c7_8a63,
                0xfe1e_2d50_b1c0_f1b6
            ]
        );
    }
}

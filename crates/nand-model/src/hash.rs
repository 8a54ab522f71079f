//! Cheap deterministic pseudo-randomness.

/// The splitmix64 finaliser: a fast, well-mixed 64-bit hash of `z`.
pub(crate) use test_kit::rng::splitmix64;

/// Hash of a seed and a key, so that different seeds give unrelated streams.
#[inline]
pub(crate) fn mix(seed: u64, key: u64) -> u64 {
    splitmix64(seed ^ splitmix64(key))
}

/// A uniform number in `[0, 1)` from 21 bits of `h` starting at bit `shift`.
#[inline]
pub(crate) fn unit21(h: u64, shift: u32) -> f32 {
    const SCALE: f32 = 1.0 / (1u32 << 21) as f32;
    ((h >> shift) & 0x1F_FFFF) as f32 * SCALE
}

/// Converts a probability to a threshold for `hash < threshold` (`u64::MAX` means always).
pub(crate) fn prob_threshold(p: f64) -> u64 {
    if p.is_nan() || p <= 0.0 {
        0
    } else if p >= 1.0 {
        u64::MAX
    } else {
        // Saturating float-to-int conversion; p < 1 keeps it below 2^64.
        (p * 18_446_744_073_709_551_616.0) as u64
    }
}

/// Whether a hash falls under a threshold made by [`prob_threshold`].
#[inline]
pub(crate) fn hit(h: u64, threshold: u64) -> bool {
    threshold == u64::MAX || h < threshold
}

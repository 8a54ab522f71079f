//! Where the next host page goes by default: round robin over the planes
//! whose host stream can take a page now, channels first, then dies, then
//! planes, so consecutive pages land on different buses.
//!
//! Planes are numbered by their round-robin position `v` (the geometry
//! converts: `Geometry::round_robin_plane` and `round_robin_position`). A
//! bitmap holds one bit per position for the planes that are host-ready,
//! kept by [`Ftl::refresh_ready`], so finding the next ready plane takes a few word
//! tests instead of a visit to every busy plane on the way: on a large
//! drive under random writes most planes wait for GC, and visiting them
//! was a data-dependent branch per plane. A drive with more planes than
//! the bitmap covers visits them one at a time, in the same order.

use crate::error::Error;
use crate::ftl::hooks::Hooks;
use crate::ftl::state::READY_BITS;
use crate::ftl::tables::NIL;
use crate::ftl::{Ftl, Stream};
use crate::medium::addr::BlockId;

/// Sets or clears the bit of position `v` (nothing beyond the bitmap).
pub(crate) fn mark(bits: &mut [u32], v: u32, ready: bool) {
    if let Some(w) = bits.get_mut((v / 32) as usize) {
        *w = (*w & !(1 << (v % 32))) | (u32::from(ready) << (v % 32));
    }
}

/// Whether the bit of position `v` is set; `None` beyond the bitmap
/// (for [`Ftl::audit`]).
pub(crate) fn bit(bits: &[u32], v: u32) -> Option<bool> {
    bits.get((v / 32) as usize)
        .map(|w| w & (1 << (v % 32)) != 0)
}

/// Positions from `v` to the next set bit in round-robin order over `n`
/// positions (`n` if none is set); 0 when `n` exceeds the bitmap, so the
/// caller looks at position `v` itself. Bits at `n` and beyond are never
/// set.
// Out of line on a controller, where it costs flash once.
#[cfg_attr(target_arch = "arm", inline(never))]
fn ready_skip(bits: &[u32], v: u32, n: u32) -> u32 {
    if n as usize > READY_BITS {
        return 0;
    }
    // Words that hold positions: the turn wraps after the last.
    let last = n.wrapping_sub(1) / 32;
    let mut w = v / 32;
    // The first word without the positions before `v`; they come last,
    // when the turn reaches this word again.
    let mut word = bits.get(w as usize).copied().unwrap_or(0) & (u32::MAX << (v % 32));
    for _ in 0..=last.wrapping_add(1) {
        if word != 0 {
            let pos = w.wrapping_mul(32).wrapping_add(word.trailing_zeros());
            return wrap_add(pos, n.wrapping_sub(v), n);
        }
        w = if w >= last { 0 } else { w.wrapping_add(1) };
        word = bits.get(w as usize).copied().unwrap_or(0);
    }
    n
}

/// `(v + d) mod n` for `v < n` and `d <= n`; `n` is below 2^31 (a
/// plane holds at least one unit and units are numbered in 31 bits), so
/// the sum cannot wrap.
fn wrap_add(v: u32, d: u32, n: u32) -> u32 {
    let s = v.wrapping_add(d);
    if s >= n {
        s.wrapping_sub(n)
    } else {
        s
    }
}

impl<H: Hooks> Ftl<'_, H> {
    /// The host block of the next page, round robin over the planes whose
    /// host stream can take a page now, opening a block if needed: the
    /// default placement. One full turn at most. The cursor moves past the
    /// plane that takes the page; after a turn that found none it would be
    /// back where it started, so it stays.
    pub(crate) fn round_robin_target(&mut self) -> Result<Option<BlockId>, Error> {
        let n = self.g.planes();
        let mut v = self.cursor_v;
        // Positions still to look at.
        let mut left = n;
        while left > 0 {
            let skip = ready_skip(&self.ready_bits, v, n);
            if skip >= left {
                break;
            }
            left = left.wrapping_sub(skip).wrapping_sub(1);
            let p = self.g.round_robin_plane(wrap_add(v, skip, n));
            v = wrap_add(v, skip.wrapping_add(1), n);
            let pl = self.pl(p)?;
            if !pl.host_ready {
                continue;
            }
            let b = if pl.host_active != NIL {
                BlockId(pl.host_active)
            } else if let Some(b) = self.open_block(p, Stream::Host)? {
                self.pl_mut(p)?.host_active = b.0;
                self.refresh_ready(p)?;
                b
            } else {
                continue;
            };
            self.cursor_v = v;
            return Ok(Some(b));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The skip lands where a visit of every position would stop.
    #[test]
    fn skip_matches_a_visit_of_every_position() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for n in [1u32, 2, 31, 32, 33, 63, 64, 65, 128, 200, 256] {
            for _ in 0..50 {
                let mut bits = [0u32; READY_BITS / 32];
                let mut ready = std::vec::Vec::new();
                for v in 0..n {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let r = seed.is_multiple_of(5);
                    ready.push(r);
                    mark(&mut bits, v, r);
                }
                for v in 0..n {
                    let naive = (0..n).find(|d| ready[((v + d) % n) as usize]).unwrap_or(n);
                    assert_eq!(ready_skip(&bits, v, n), naive, "n {n} from {v}");
                }
            }
        }
        // Beyond the bitmap every position is looked at.
        assert_eq!(
            ready_skip(&[0u32; READY_BITS / 32], 3, READY_BITS as u32 + 1),
            0
        );
    }

    #[test]
    fn wrap_add_stays_below_n() {
        assert_eq!(wrap_add(5, 3, 8), 0);
        assert_eq!(wrap_add(7, 8, 8), 7);
        assert_eq!(wrap_add(0, 0, 1), 0);
        let n = (1u32 << 31) - 1;
        assert_eq!(wrap_add(n - 1, n, n), n - 1);
    }
}

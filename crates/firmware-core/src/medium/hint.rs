//! Cache hints. They never change what the program computes.

/// Asks the cache to fetch the line holding the byte at `p`. Does nothing
/// on targets without a prefetch instruction.
#[inline(always)]
fn line(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch neither reads nor writes memory as far as the
    // program can observe, and cannot fault, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the cache to fetch the line holding `v[i]`. An out-of-range `i`
/// fetches some other line, which is harmless: the address is only
/// computed (wrapping) and handed to the prefetch, never dereferenced, so
/// a hint on a hot path costs no range test.
///
/// Large mapping tables live in DRAM; a driver that knows which entries the
/// next commands will touch can overlap those misses with useful work. On
/// targets without a prefetch instruction this does nothing.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    line(v.as_ptr().wrapping_add(i).cast::<i8>());
}

/// Like [`prefetch`], for every cache line `v[i]` spans (an entry larger
/// than a line, or one that straddles two).
#[inline(always)]
pub fn prefetch_entry<T>(v: &[T], i: usize) {
    if let Some(r) = v.get(i) {
        let first = (r as *const T).cast::<i8>();
        let size = core::mem::size_of::<T>();
        for off in (0..size).step_by(64) {
            line(first.wrapping_add(off));
        }
        // The last byte, when the entry does not start on a line.
        line(first.wrapping_add(size.saturating_sub(1)));
    }
}

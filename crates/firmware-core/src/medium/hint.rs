//! Cache hints. They never change what the program computes.

/// Asks the cache to fetch the line holding `v[i]` (an out-of-range `i` is ignored).
///
/// Large mapping tables live in DRAM; a driver that knows which entries the
/// next commands will touch can overlap those misses with useful work. On
/// targets without a prefetch instruction this does nothing.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    if let Some(r) = v.get(i) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `r` is a valid reference; a prefetch neither reads nor writes
        // memory as far as the program can observe, and cannot fault.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                (r as *const T).cast::<i8>(),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = r;
    }
}

/// Like [`prefetch`], for every cache line `v[i]` spans (an entry larger
/// than a line, or one that straddles two).
#[inline(always)]
pub fn prefetch_entry<T>(v: &[T], i: usize) {
    if let Some(r) = v.get(i) {
        #[cfg(target_arch = "x86_64")]
        {
            let first = (r as *const T).cast::<i8>();
            for off in (0..core::mem::size_of::<T>()).step_by(64) {
                // SAFETY: as in `prefetch`; the address stays inside `*r`,
                // and a prefetch of any address cannot fault.
                unsafe {
                    core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                        first.wrapping_add(off),
                    );
                }
            }
            // The last byte, when the entry does not start on a line.
            // SAFETY: as above.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    first.wrapping_add(core::mem::size_of::<T>().saturating_sub(1)),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = r;
    }
}

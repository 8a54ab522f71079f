//! Transparent huge pages for the simulator's large, densely used arrays.
//!
//! A simulated drive of a few TB keeps gigabytes of records that the
//! simulator touches at random (one unit record per mapping unit, the core's
//! mapping tables, the harness's oracle). With 4 KiB pages nearly every such
//! access misses the TLB; backed by 2 MiB pages the same arrays need 512
//! times fewer TLB entries. [`advise`] asks Linux for that on the 2 MiB-aligned
//! interior of a slice (`madvise(MADV_HUGEPAGE)`, which also works where the
//! system setting is `madvise`, the common default). Elsewhere, or when the
//! kernel declines, it does nothing: the arrays work either way.
//!
//! The cost: memory is backed 2 MiB at a time where the array is touched, so a
//! short run on a large drive pays somewhat more than it touches.

/// Bytes in one huge page (x86-64 and AArch64 Linux with 4 KiB base pages).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Asks the kernel to back `v` with huge pages where it can. Slices shorter
/// than two huge pages are left alone: they would gain little.
pub fn advise<T>(v: &mut [T]) {
    let len = core::mem::size_of_val(v);
    if len < 2 * HUGE_PAGE_BYTES {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let first = start.saturating_add(HUGE_PAGE_BYTES - 1) & !(HUGE_PAGE_BYTES - 1);
    let end = start.saturating_add(len) & !(HUGE_PAGE_BYTES - 1);
    if end > first {
        madvise_huge(first, end - first);
    }
}

#[cfg(target_os = "linux")]
fn madvise_huge(addr: usize, len: usize) {
    // SAFETY: `addr..addr + len` lies inside the live allocation of the
    // slice passed to `advise` (page-aligned interior), and MADV_HUGEPAGE
    // changes only how the kernel backs those pages, never their contents.
    // A failure (no THP support) is harmless, so the result is ignored.
    let _ = unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn madvise_huge(_addr: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_arrays_keep_their_contents() {
        let mut v = std::vec![0u32; 3 * HUGE_PAGE_BYTES / 4];
        v[12345] = 7;
        advise(&mut v);
        v[HUGE_PAGE_BYTES / 2] = 9;
        assert_eq!((v[12345], v[HUGE_PAGE_BYTES / 2], v[0]), (7, 9, 0));
        let mut small = [1u8; 16];
        advise(&mut small);
        assert_eq!(small, [1u8; 16]);
    }
}

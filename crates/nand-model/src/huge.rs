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
//! short run on a large drive pays somewhat more than it touches, and each
//! fault zeroes 2 MiB at once. Arrays touched mostly in order (the medium's
//! records) gain little from fewer TLB misses until they are large, so they
//! ask for 2 MiB pages only from a GiB ([`advise_ordered`]).

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

/// Size from which [`advise_ordered`] asks for 2 MiB pages: 1 GiB, whose
/// 4 KiB page tables (1/512 of it, 2 MiB) no longer stay in cache.
pub const ORDERED_HUGE_FROM_BYTES: usize = 1 << 30;

/// [`advise`] for an array touched mostly in order (the medium's page and
/// unit records: programs fill a block front to back, GC reads it the
/// same way), only once it reaches [`ORDERED_HUGE_FROM_BYTES`].
///
/// In order, 4 KiB pages miss the TLB once per 4 KiB, and below a GiB
/// their page tables stay cached, so a miss costs little. A 2 MiB page
/// costs more to fault in: 512 pages zeroed at once, and in a virtual
/// machine whose host takes free memory back, host faults on all of them
/// (measured in `docs/results.md`). Larger arrays are advised: there the
/// random reads of a verify pass or a read workload would walk page
/// tables that no longer fit in cache.
pub fn advise_ordered<T>(v: &mut [T]) {
    if core::mem::size_of_val(v) >= ORDERED_HUGE_FROM_BYTES {
        advise(v);
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

/// Bytes in one gigantic page (x86-64 and AArch64 Linux).
pub const GIANT_PAGE_BYTES: usize = 1 << 30;

/// A zeroed, fixed-length array for tables the simulator touches at random
/// over gigabytes (the core's lent region, the oracle).
///
/// At that size even 2 MiB pages need thousands of TLB entries to cover
/// the array, likely more than a core holds, so random accesses may walk
/// the page tables (twice over in a virtual machine). Where the system
/// keeps 1 GiB pages in reserve (Linux:
/// `/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages`, none by
/// default), the array's whole-GiB prefix is mapped on as many of them as
/// are free and the rest on ordinary memory advised to 2 MiB pages; the
/// reserved pages are taken only where the array is touched. Elsewhere it
/// is a zeroed `Vec` advised to 2 MiB pages, as [`advise`] does.
/// Memory on reserved pages is not part of a process's resident set:
/// [`giant_page_bytes`] reports it.
pub struct GiantArray<T: bytemuck::Zeroable> {
    ptr: core::ptr::NonNull<T>,
    len: usize,
    /// Bytes mapped here (freed on drop); 0 when `_owner` holds the array.
    mapped: usize,
    /// Whole 1 GiB pages at the front of the mapping.
    giant: usize,
    /// The zeroed `Vec` holding the array when no 1 GiB page was mapped
    /// (never resized, so `ptr` stays valid).
    _owner: std::vec::Vec<T>,
}

// SAFETY: the array owns its memory exclusively, like a `Vec<T>`.
unsafe impl<T: bytemuck::Zeroable + Send> Send for GiantArray<T> {}
// SAFETY: shared access only reads, like `&[T]`.
unsafe impl<T: bytemuck::Zeroable + Sync> Sync for GiantArray<T> {}

impl<T: bytemuck::Zeroable> GiantArray<T> {
    /// `len` zeroed elements.
    pub fn zeroed(len: usize) -> Self {
        let bytes = len.saturating_mul(core::mem::size_of::<T>());
        if core::mem::align_of::<T>() <= 4096 {
            if let Some((p, mapped, giant)) = map_giant(bytes) {
                if let Some(ptr) = core::ptr::NonNull::new(p.cast::<T>()) {
                    return GiantArray {
                        ptr,
                        len,
                        mapped,
                        giant,
                        _owner: std::vec::Vec::new(),
                    };
                }
            }
        }
        let mut vec: std::vec::Vec<T> = bytemuck::zeroed_vec(len);
        advise(&mut vec);
        GiantArray {
            ptr: core::ptr::NonNull::new(vec.as_mut_ptr())
                .unwrap_or(core::ptr::NonNull::dangling()),
            len,
            mapped: 0,
            giant: 0,
            _owner: vec,
        }
    }

    /// How many 1 GiB pages back the front of the array (0 when none).
    pub fn giant_pages(&self) -> usize {
        self.giant
    }
}

impl<T: bytemuck::Zeroable> core::ops::Deref for GiantArray<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialised (zeroed, then written)
        // elements owned by `self`: the mapping, or `_owner`'s buffer, which is
        // never resized.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: bytemuck::Zeroable> core::ops::DerefMut for GiantArray<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: bytemuck::Zeroable> Drop for GiantArray<T> {
    fn drop(&mut self) {
        if self.mapped > 0 {
            // The array is as touched as it will ever be: note the peak
            // before its pages go back to the reserve.
            giant_page_bytes();
            unmap(self.ptr.as_ptr().cast(), self.mapped);
        }
    }
}

/// The most memory on reserved huge pages seen so far (see
/// [`giant_page_bytes`]).
static GIANT_PEAK: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// Peak bytes of this process's memory on reserved huge pages, which the
/// resident set (`VmRSS`, `VmHWM`) leaves out: the largest of Linux's
/// `HugetlbPages` now and whenever a [`GiantArray`] on such pages was
/// freed (0 elsewhere). The kernel keeps no peak of its own; the arrays
/// live until the end of a run, so the sample at the first one's drop is
/// the run's peak.
pub fn giant_page_bytes() -> u64 {
    let now = giant_page_bytes_now();
    GIANT_PEAK
        .fetch_max(now, core::sync::atomic::Ordering::Relaxed)
        .max(now)
}

/// Linux `HugetlbPages` of this process now, in bytes.
fn giant_page_bytes_now() -> u64 {
    status_kib("HugetlbPages:").saturating_mul(1024)
}

/// A KiB figure of this process's `/proc/self/status` (`field` with its
/// colon, e.g. `"VmHWM:"`); 0 where there is no such file or line.
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0)
}

/// Maps `bytes` with its whole-GiB prefix on reserved 1 GiB pages (as many
/// as the reserve gives, at least one) and the rest on ordinary memory:
/// the address, the bytes mapped and the 1 GiB pages. `None` when no
/// reserved page is free or the address space will not take it.
#[cfg(target_os = "linux")]
fn map_giant(bytes: usize) -> Option<(*mut u8, usize, usize)> {
    const PAGE: usize = 4096;
    let whole = bytes / GIANT_PAGE_BYTES;
    if whole == 0 {
        return None;
    }
    let total = bytes.checked_add(PAGE - 1)? & !(PAGE - 1);
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let anon = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    // Find a 1 GiB-aligned hole: reserve the length plus one page of
    // slack, note the aligned start, give the reservation back and map
    // there with MAP_FIXED_NOREPLACE (which fails rather than replaces
    // should another thread take the hole meanwhile).
    let span = total.checked_add(GIANT_PAGE_BYTES)?;
    // SAFETY: a fresh inaccessible anonymous mapping, unmapped at once.
    let hole = unsafe {
        let p = libc::mmap(
            core::ptr::null_mut(),
            span,
            libc::PROT_NONE,
            anon | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return None;
        }
        libc::munmap(p, span);
        (p as usize).checked_add(GIANT_PAGE_BYTES - 1)? & !(GIANT_PAGE_BYTES - 1)
    };
    let huge_flags =
        anon | libc::MAP_FIXED_NOREPLACE | libc::MAP_HUGETLB | (30 << libc::MAP_HUGE_SHIFT);
    let mut giant = whole;
    while giant > 0 {
        // SAFETY: a new mapping at an address this function found free;
        // NOREPLACE leaves any other mapping alone.
        let p = unsafe {
            libc::mmap(
                hole as *mut libc::c_void,
                giant * GIANT_PAGE_BYTES,
                rw,
                huge_flags,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            if p as usize == hole {
                break;
            }
            unmap(p.cast(), giant * GIANT_PAGE_BYTES);
            return None;
        }
        giant -= 1;
    }
    if giant == 0 {
        return None;
    }
    let head = giant * GIANT_PAGE_BYTES;
    if total > head {
        let tail_at = hole + head;
        // SAFETY: as above, right after the 1 GiB pages just mapped.
        let p = unsafe {
            libc::mmap(
                tail_at as *mut libc::c_void,
                total - head,
                rw,
                anon | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p as usize != tail_at {
            if p != libc::MAP_FAILED {
                unmap(p.cast(), total - head);
            }
            unmap(hole as *mut u8, head);
            return None;
        }
        madvise_huge(tail_at, total - head);
    }
    Some((hole as *mut u8, total, giant))
}

#[cfg(not(target_os = "linux"))]
fn map_giant(_bytes: usize) -> Option<(*mut u8, usize, usize)> {
    None
}

#[cfg(target_os = "linux")]
fn unmap(p: *mut u8, len: usize) {
    // SAFETY: `p..p + len` is a mapping `map_giant` made and nothing
    // borrows any more (its owner is being dropped, or it was never lent).
    let _ = unsafe { libc::munmap(p.cast(), len) };
}

#[cfg(not(target_os = "linux"))]
fn unmap(_p: *mut u8, _len: usize) {}

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

    #[test]
    fn giant_arrays_start_zeroed_and_keep_what_is_written() {
        // Small and large: the large one takes reserved 1 GiB pages where a
        // system has them (its prefix) and ordinary memory elsewhere.
        for len in [0usize, 1000, (GIANT_PAGE_BYTES + 3 * HUGE_PAGE_BYTES) / 4] {
            let mut a = GiantArray::<u32>::zeroed(len);
            assert_eq!(a.len(), len);
            if len > 0 {
                assert_eq!((a[0], a[len - 1], a[len / 2]), (0, 0, 0));
                a[len - 1] = 5;
                a[len / 3] = 6;
                assert_eq!((a[len - 1], a[len / 3]), (5, 6));
            }
            assert!(a.giant_pages() <= len * 4 / GIANT_PAGE_BYTES);
            let on_giant = a.giant_pages() > 0;
            drop(a);
            // Touched pages on the reserve stay counted after the drop.
            if on_giant {
                assert!(giant_page_bytes() >= GIANT_PAGE_BYTES as u64);
            }
        }
    }
}

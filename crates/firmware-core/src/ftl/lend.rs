//! The one lending path: every table of the core and of its techniques is
//! carved out of a single byte region the caller owns.
//!
//! A caller asks how many bytes a configuration needs
//! ([`crate::ftl::Ftl::lend_bytes`]), provides that many (a `Vec<u8>` on a
//! host, a `static` array or a linker-placed region on a microcontroller) and
//! hands the region to [`crate::ftl::Ftl::new`]. The same code walks the
//! tables twice with one [`Lend`]: once [`Lend::counting`], which only
//! counts, and once [`Lend::carving`], which cuts the region into typed,
//! initialised slices. Because both walks run the same code (compiled once,
//! not once per mode), the byte count can never disagree with what the carve
//! takes. Dropping the core and building it again over the same region is a
//! remount.

use crate::error::{Error, OrRare};
use core::mem::{align_of, size_of};

/// Hands out the core's tables: counting their bytes, or carving them out of
/// a region.
#[derive(Debug)]
pub struct Lend<'a> {
    /// The region not carved yet; `None` when only counting.
    rest: Option<&'a mut [u8]>,
    /// Bytes counted so far (alignment padding included, assuming the worst
    /// alignment of the region's start).
    counted: usize,
}

impl<'a> Lend<'a> {
    /// A lender that only counts: its slices are empty.
    pub fn counting() -> Self {
        Lend {
            rest: None,
            counted: 0,
        }
    }

    /// A lender that carves `mem`; its previous contents do not matter.
    pub fn carving(mem: &'a mut [u8]) -> Self {
        Lend {
            rest: Some(mem),
            counted: 0,
        }
    }

    /// Bytes counted so far: what a carve of the same tables takes at most.
    pub fn bytes(&self) -> usize {
        self.counted
    }

    /// Bytes not carved yet (0 when counting).
    pub fn remaining(&self) -> usize {
        self.rest.as_ref().map_or(0, |r| r.len())
    }

    /// Counts `n` elements of `size` bytes aligned to `align` and, when
    /// carving, takes them off the front of the region: `None` when only
    /// counting or when the table is empty. One out-of-line copy serves
    /// every table type.
    #[inline(never)]
    fn take(
        &mut self,
        n: usize,
        size: usize,
        align: usize,
        what: crate::error::Reason,
    ) -> Result<Option<*mut u8>, Error> {
        let len = n.checked_mul(size).or_rare(Error::InvalidConfig(
            &"lent tables exceed the address space",
        ))?;
        if len == 0 {
            // An empty table needs neither bytes nor alignment.
            return Ok(None);
        }
        let Some(rest) = self.rest.take() else {
            let worst = len
                .checked_add(align.saturating_sub(1))
                .and_then(|b| b.checked_add(self.counted))
                .or_rare(Error::InvalidConfig(
                    &"lent tables exceed the address space",
                ))?;
            self.counted = worst;
            return Ok(None);
        };
        let pad = rest.as_ptr().align_offset(align);
        let need = pad.checked_add(len).or_rare(Error::TableTooSmall(what))?;
        if need > rest.len() {
            self.rest = Some(rest);
            return Err(Error::TableTooSmall(what));
        }
        let (head, tail) = rest.split_at_mut(need);
        self.rest = Some(tail);
        let (_, body) = head.split_at_mut(pad);
        Ok(Some(body.as_mut_ptr()))
    }

    /// A slice of `n` elements, each set to `init`; `what` names the table
    /// in [`Error::TableTooSmall`] when the region runs out.
    pub fn slice<T: Copy>(
        &mut self,
        n: usize,
        init: T,
        what: crate::error::Reason,
    ) -> Result<&'a mut [T], Error> {
        let Some(ptr) = self.take(n, size_of::<T>(), align_of::<T>(), what)? else {
            return Ok(&mut []);
        };
        let ptr = ptr.cast::<T>();
        // SAFETY: `ptr` starts `len = n * size_of::<T>()` bytes of memory
        // borrowed mutably for 'a and no longer reachable through
        // `self.rest`; it is aligned for `T` (the padding before it was
        // skipped). Every element is written with `init` before the slice is
        // formed, so no byte pattern of the region is ever read as a `T`,
        // and `T: Copy` has no destructor to skip.
        unsafe {
            for i in 0..n {
                ptr.add(i).write(init);
            }
            Ok(core::slice::from_raw_parts_mut(ptr, n))
        }
    }

    /// A slice of `n` elements, each `renew(k)`, where `k` is the `u16`
    /// the region held at byte `at` of that element: state that must
    /// survive a remount over the same memory, such as an operation
    /// entry's generation. `at` must name a `u16` field of `T`, so that
    /// what a previous carve of the region wrote there is read back.
    pub fn slice_renewed<T: Copy>(
        &mut self,
        n: usize,
        at: usize,
        renew: impl Fn(u16) -> T,
        what: crate::error::Reason,
    ) -> Result<&'a mut [T], Error> {
        if at
            .checked_add(size_of::<u16>())
            .is_none_or(|end| end > size_of::<T>())
        {
            return Err(Error::InvalidConfig(&"kept field outside its element"));
        }
        let Some(ptr) = self.take(n, size_of::<T>(), align_of::<T>(), what)? else {
            return Ok(&mut []);
        };
        let ptr = ptr.cast::<T>();
        // SAFETY: as in `slice`, `ptr` starts `n` aligned elements' worth
        // of memory borrowed mutably for 'a and reachable only through the
        // returned slice. Before an element is written, only the two bytes
        // at `at` (inside it, checked above) are read, as raw bytes: they
        // are initialised (part of a `&mut [u8]`, or a `u16` field a
        // previous carve wrote), and any two bytes are a valid `u16`. Every
        // element is then written whole before the slice is formed.
        unsafe {
            for i in 0..n {
                let e = ptr.add(i);
                let k = e.cast::<u8>().add(at).cast::<u16>().read_unaligned();
                e.write(renew(k));
            }
            Ok(core::slice::from_raw_parts_mut(ptr, n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_bounds_what_the_carve_takes() {
        let mut s = Lend::counting();
        s.slice(3, 0u8, &"a").unwrap();
        s.slice(5, 0u64, &"b").unwrap();
        s.slice(2, 0u16, &"c").unwrap();
        let mut mem = [0xAAu8; 64];
        for start in 0..8 {
            let region = &mut mem[start..start + s.bytes()];
            let mut c = Lend::carving(region);
            let a = c.slice(3, 1u8, &"a").unwrap();
            assert_eq!(a, &[1, 1, 1]);
            let b = c.slice(5, 7u64, &"b").unwrap();
            assert_eq!(b.as_ptr() as usize % align_of::<u64>(), 0);
            assert!(b.iter().all(|&x| x == 7));
            let d = c.slice(2, 9u16, &"c").unwrap();
            assert_eq!(d, &[9, 9]);
        }
    }

    #[test]
    fn a_renewed_slice_keeps_its_field_across_a_second_carve() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        struct E {
            a: u32,
            k: u16,
        }
        let at = core::mem::offset_of!(E, k);
        let mut mem = [0u8; 64];
        {
            let mut c = Lend::carving(&mut mem);
            let v = c.slice_renewed(3, at, |k| E { a: 7, k }, &"e").unwrap();
            assert!(v.iter().all(|e| *e == E { a: 7, k: 0 }));
            v[1] = E { a: 9, k: 41 };
        }
        let mut c = Lend::carving(&mut mem);
        let v = c.slice_renewed(3, at, |k| E { a: 1, k }, &"e").unwrap();
        assert_eq!(v, &[E { a: 1, k: 0 }, E { a: 1, k: 41 }, E { a: 1, k: 0 }]);
        let mut c = Lend::carving(&mut mem);
        let past = size_of::<E>() - 1;
        assert_eq!(
            c.slice_renewed(1, past, |k| E { a: 1, k }, &"e"),
            Err(Error::InvalidConfig(&"kept field outside its element"))
        );
    }

    #[test]
    fn a_short_region_is_an_error_not_a_panic() {
        let mut mem = [0u8; 10];
        let mut c = Lend::carving(&mut mem);
        assert_eq!(c.slice(4, 0u32, &"x"), Err(Error::TableTooSmall(&"x")));
        // The region is intact after a refusal.
        assert_eq!(c.remaining(), 10);
        assert!(c.slice(2, 0u32, &"y").is_ok());
    }
}

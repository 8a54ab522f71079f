//! The one lending path: every table of the core and of its techniques is
//! carved out of a single byte region the caller owns.
//!
//! A caller asks how many bytes a configuration needs
//! ([`crate::ftl::Ftl::lend_bytes`]), provides that many (a `Vec<u8>` on a
//! host, a `static` array or a linker-placed region on a microcontroller) and
//! hands the region to [`crate::ftl::Ftl::new`]. The same code walks the
//! tables twice: once with a [`Sizer`], which only counts, and once with a
//! [`Carver`], which cuts the region into typed, initialised slices. Because
//! both walks run the same code, the byte count can never disagree with
//! what the carve takes. Dropping the core and building it again over the
//! same region is a remount.

use crate::error::Error;
use core::mem::{align_of, size_of};

/// Something that hands out the core's tables: the [`Sizer`] or the [`Carver`].
pub trait Lend<'a> {
    /// A slice of `n` elements, each set to `init`; `what` names the table
    /// in [`Error::TableTooSmall`] when the region runs out.
    fn slice<T: Copy>(
        &mut self,
        n: usize,
        init: T,
        what: &'static str,
    ) -> Result<&'a mut [T], Error>;

    /// A slice of `n` `u16`s that keeps what the region held (state that
    /// must survive a remount over the same memory, such as operation
    /// generations). Every bit pattern is a valid `u16`.
    fn slice_kept(&mut self, n: usize, what: &'static str) -> Result<&'a mut [u16], Error>;
}

/// Counts the bytes a carve takes (alignment padding included, assuming the
/// worst alignment of the region's start). Its slices are empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizer {
    bytes: usize,
}

impl Sizer {
    /// Bytes counted so far.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl<'a> Lend<'a> for Sizer {
    fn slice<T: Copy>(
        &mut self,
        n: usize,
        _init: T,
        _what: &'static str,
    ) -> Result<&'a mut [T], Error> {
        let len = n
            .checked_mul(size_of::<T>())
            .and_then(|b| b.checked_add(align_of::<T>().saturating_sub(1)))
            .ok_or(Error::InvalidConfig("lent tables exceed the address space"))?;
        self.bytes = self
            .bytes
            .checked_add(len)
            .ok_or(Error::InvalidConfig("lent tables exceed the address space"))?;
        Ok(&mut [])
    }

    fn slice_kept(&mut self, n: usize, what: &'static str) -> Result<&'a mut [u16], Error> {
        self.slice(n, 0u16, what)
    }
}

/// Cuts a byte region into typed slices, front to back.
#[derive(Debug)]
pub struct Carver<'a> {
    rest: &'a mut [u8],
}

impl<'a> Carver<'a> {
    /// A carver over `mem`; its previous contents do not matter.
    pub fn new(mem: &'a mut [u8]) -> Self {
        Carver { rest: mem }
    }

    /// Bytes not carved yet.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }
}

impl<'a> Carver<'a> {
    /// Takes `n` aligned `T`s' worth of bytes off the front of the region.
    fn take<T>(&mut self, n: usize, what: &'static str) -> Result<*mut T, Error> {
        let rest = core::mem::take(&mut self.rest);
        let pad = rest.as_ptr().align_offset(align_of::<T>());
        let len = n
            .checked_mul(size_of::<T>())
            .ok_or(Error::TableTooSmall(what))?;
        let need = pad.checked_add(len).ok_or(Error::TableTooSmall(what))?;
        if need > rest.len() {
            self.rest = rest;
            return Err(Error::TableTooSmall(what));
        }
        let (head, tail) = rest.split_at_mut(need);
        self.rest = tail;
        let (_, body) = head.split_at_mut(pad);
        Ok(body.as_mut_ptr().cast::<T>())
    }
}

impl<'a> Lend<'a> for Carver<'a> {
    fn slice<T: Copy>(
        &mut self,
        n: usize,
        init: T,
        what: &'static str,
    ) -> Result<&'a mut [T], Error> {
        let ptr = self.take::<T>(n, what)?;
        // SAFETY: `body` is `len = n * size_of::<T>()` bytes of memory
        // borrowed mutably for 'a and no longer reachable through
        // `self.rest`; `ptr` is aligned for `T` (the `pad` bytes before it
        // were skipped). Every element is written with `init` before the
        // slice is formed, so no byte pattern of the region is ever read as
        // a `T`, and `T: Copy` has no destructor to skip.
        unsafe {
            for i in 0..n {
                ptr.add(i).write(init);
            }
            Ok(core::slice::from_raw_parts_mut(ptr, n))
        }
    }

    fn slice_kept(&mut self, n: usize, what: &'static str) -> Result<&'a mut [u16], Error> {
        let ptr = self.take::<u16>(n, what)?;
        // SAFETY: as in `slice`, the `n * 2` bytes at `ptr` are aligned,
        // initialised (they are part of a `&mut [u8]`), borrowed for 'a and
        // reachable only through the returned slice; any two bytes are a
        // valid `u16`.
        unsafe { Ok(core::slice::from_raw_parts_mut(ptr, n)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizer_bounds_what_the_carver_takes() {
        let mut s = Sizer::default();
        s.slice(3, 0u8, "a").unwrap();
        s.slice(5, 0u64, "b").unwrap();
        s.slice(2, 0u16, "c").unwrap();
        let mut mem = [0xAAu8; 64];
        for start in 0..8 {
            let region = &mut mem[start..start + s.bytes()];
            let mut c = Carver::new(region);
            let a = c.slice(3, 1u8, "a").unwrap();
            assert_eq!(a, &[1, 1, 1]);
            let b = c.slice(5, 7u64, "b").unwrap();
            assert_eq!(b.as_ptr() as usize % align_of::<u64>(), 0);
            assert!(b.iter().all(|&x| x == 7));
            let d = c.slice(2, 9u16, "c").unwrap();
            assert_eq!(d, &[9, 9]);
        }
    }

    #[test]
    fn a_short_region_is_an_error_not_a_panic() {
        let mut mem = [0u8; 10];
        let mut c = Carver::new(&mut mem);
        assert_eq!(c.slice(4, 0u32, "x"), Err(Error::TableTooSmall("x")));
        // The region is intact after a refusal.
        assert_eq!(c.remaining(), 10);
        assert!(c.slice(2, 0u32, "y").is_ok());
    }
}

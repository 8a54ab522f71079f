//! Dawid (seed 004): the LIDF flush order of the write buffer.

pub mod lidf;

//! The space layer: blocks and planes (free lists, active blocks, GC
//! progress, valid-count bookkeeping) as data; the core runs them.

pub mod block;

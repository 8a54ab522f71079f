//! Copyless copy (seed 003): copy by remapping, with reference counts and a
//! shadow OOB.

pub mod copy;
pub mod refcount;

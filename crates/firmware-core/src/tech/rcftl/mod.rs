//! rcFTL (seeds 000 and 001 ch. 4): restricted copyback with the
//! copyback-threshold table, the EPM with per-block quota and several GC
//! active blocks, and the DMMS migration-mode selector.
//!
//! It plugs into the core as its [`crate::ftl::hooks::Migration`] hook
//! ([`copyback`] holds the data path) and keeps its state in its own lent
//! slices: a quota and a BER class per block, the quota-level GC blocks and
//! the copybacks in flight per plane, and a byte per page in the per-page
//! modes.

#[cfg(feature = "rcftl")]
pub mod copyback;
pub mod ctt;
#[cfg(feature = "rcftl")]
pub mod dmms;
#[cfg(feature = "rcftl")]
pub mod epm;
pub mod policy;
#[cfg(feature = "rcftl")]
mod state;

#[cfg(feature = "rcftl")]
pub use state::{HasRcftl, RcBlock, RcFtl, RcPlane, RcTables};

//! rcFTL (seeds 000 and 001 ch. 4): restricted copyback with the
//! copyback-threshold table, the EPM with per-block quota and several GC
//! active blocks, and the DMMS migration-mode selector.

pub mod copyback;
pub mod ctt;
pub mod dmms;
pub mod epm;

//! Reparo (seed 001 ch. 5): die-failure detection, failed-LBA identification
//! with P2L entrustment, and the IDR/CDR handlers of a multi-core controller.

pub mod config;
#[cfg(feature = "reparo")]
pub mod controller;
#[cfg(feature = "reparo")]
pub mod die_detect;
#[cfg(feature = "reparo")]
pub mod handler;
#[cfg(feature = "reparo")]
pub mod p2l;
#[cfg(feature = "reparo")]
pub mod p2l_list;
#[cfg(feature = "reparo")]
pub mod p2l_page;
#[cfg(feature = "reparo")]
pub mod superblock;

//! Reparo (seed 001 ch. 5): die-failure detection, failed-LBA identification
//! with P2L entrustment, and the IDR/CDR handlers of a multi-core controller.

pub mod controller;
pub mod die_detect;
pub mod handler;
pub mod p2l;
pub mod p2l_list;
pub mod p2l_page;
pub mod superblock;

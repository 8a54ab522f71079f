//! The test kit: what the tests, the simulation harness, the end-to-end
//! scenarios and the bare-metal firmware share to drive the core.
//!
//! * [`rng`]: every pseudo-random generator of the project, one type per
//!   stream, so that workloads, power cuts and media stay bit for bit what
//!   they were wherever they are drawn.
//! * [`read`]: the loop that issues one host read on the core and drives it
//!   to completion synchronously.
//!
//! `no_std`, no heap: the firmware links it like the core.

#![no_std]
#![deny(missing_docs)]

pub mod read;
pub mod rng;

//! The synchronous read loop: issue one host read on the core and drive it
//! to completion before returning, as the tests, the scenarios and the
//! bare-metal firmware do. The loop is the core's own
//! (`firmware_core::driver::read`, which `SyncDriver::read` uses too);
//! this module re-exports it for drivers with an event loop of their own.

pub use firmware_core::driver::{read, SyncCore};

//! Host-guided placement: reclaim-unit handles over the core's write
//! streams (NVMe FDP; the active zones of a zoned namespace).

pub mod config;

//! A tiny strict medium for the core's own tests (the full model lives in `nand-model`).
#![allow(dead_code)]

mod nand;
#[allow(unused_imports)]
pub use nand::{small_geometry, with_core, TestNand};

/// Owned memory for a configuration (the caller-lends-memory pattern in a test).
pub struct Store {
    pub mem: Vec<u8>,
    pub data: Vec<u64>,
}

impl Store {
    pub fn new(cfg: &firmware_core::Config) -> Self {
        Store {
            mem: vec![0; firmware_core::FullFtl::lend_bytes(cfg).unwrap()],
            data: vec![0; cfg.total_slots() as usize],
        }
    }

    pub fn split(&mut self) -> (&mut [u8], &mut [u64]) {
        (&mut self.mem, &mut self.data)
    }
}

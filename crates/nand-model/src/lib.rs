//! A strict simulated NAND flash medium with a reliability and fault model.
//!
//! [`Medium`] implements [`firmware_core::Nand`] with `Unit = u64`: every mapping
//! unit holds a 64-bit stamp (the harness encodes the logical unit and a write
//! sequence number in it). The medium enforces the contract documented in
//! `firmware_core::medium::nand`:
//!
//! * pages of a block are programmed in strictly increasing order, once per
//!   erase, otherwise `ProgramOrder`;
//! * reading an unwritten page gives `Erased`;
//! * copyback stays inside one plane (`BadAddress` otherwise) and obeys program
//!   order at the destination;
//! * addresses outside the array, unit masks beyond `units_per_page` and short
//!   data buffers give `BadAddress`.
//!
//! Raw bit errors follow [`ReliabilityConfig`] (wear, per-block quality class,
//! wordline position, retention, read noise, copyback accumulation); faults
//! follow [`FaultConfig`] plus scheduled test hooks ([`Medium::fail_next_program`],
//! [`Medium::fail_next_erase`], [`Medium::fail_die`], [`Medium::tear_program`],
//! [`Medium::tear_erase`]) and whole-die failures scheduled by operation count
//! or simulated time ([`Medium::schedule_die_failure`]).
//!
//! # Storage
//!
//! The logic exists once, generic over a [`Storage`] of three compact arrays
//! (see [`storage`]): [`VecStorage`] with feature `std` (see [`SimMedium`]),
//! [`LentStorage`] over caller-lent slices sized by
//! [`StorageSizes::for_geometry`] (see [`LentMedium`]). A page costs
//! `11 + 12 * units_per_page` bytes: 23 bytes with one unit per page, so a
//! 16 GiB drive of 4 KiB pages needs about 92 MiB.
//!
//! # Full data
//!
//! With feature `std`, [`FullDataMedium`] keeps the real bytes of every unit
//! ([`FullUnit`]) in a side store next to a [`SimMedium`] that still applies
//! every rule; it costs `B` bytes per physical mapping unit (see [`full`]).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

pub mod config;
#[cfg(feature = "std")]
pub mod full;
pub mod gerase_modes;
#[cfg(feature = "std")]
pub mod guarded;
mod hash;
#[cfg(feature = "std")]
pub mod huge;
pub mod medium;
pub mod storage;
pub mod wordline;

pub use config::{DieFailure, DieFailureAt, FaultConfig, ReliabilityConfig, MAX_DIE_FAILURES};
#[cfg(feature = "std")]
pub use full::{FullDataMedium, FullUnit};
#[cfg(feature = "std")]
pub use guarded::{GuardedMedium, WlMedium, WlModelConfig, WlStats};
#[cfg(feature = "std")]
pub use medium::SimMedium;
pub use medium::{BlockQuality, BlockStatus, LentMedium, Medium, QualityClass, Stats, TornProgram};
#[cfg(feature = "std")]
pub use storage::VecStorage;
pub use storage::{BlockRec, LentMeta, LentStorage, PageRec, Storage, StorageSizes, UnitRec};

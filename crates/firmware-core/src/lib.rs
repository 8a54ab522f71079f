//! A sans-IO NAND flash translation layer core.
//!
//! `firmware-core` is a state machine. It accepts host commands and NAND
//! completions, and emits NAND operations and host completions. It never
//! blocks, never reads a clock (timestamps arrive with events) and never
//! allocates: the large tables live in slices the caller lends it, so the same
//! code serves a many-GiB simulation and a microcontroller.
//!
//! Arithmetic never panics (`clippy::arithmetic_side_effects` is denied) and
//! follows one rule. Counters and index arithmetic inside the validated
//! geometry wrap (`wrapping_add`): [`medium::addr::Geometry::validate`] keeps
//! every flat number below 2^31, so they cannot overflow, and on a 32-bit
//! core a wrapping add is one instruction where a saturating one is three.
//! Sizes, configuration checks, host-supplied ranges and timestamps
//! saturate or use checked arithmetic, and a difference that may go below
//! zero on purpose saturates (`saturating_sub` as "at least 0").
//!
//! Inlining follows the target. The small helpers every relocated unit
//! passes through (valid counts, P2L updates, GC slots, the hooks the
//! default techniques answer at once) carry
//! `#[cfg_attr(not(target_arch = "arm"), inline(always))]`: inlined on the
//! host, where the simulator runs billions of them and code size is free,
//! and left to the size-optimised build on a controller, whose flash holds
//! one copy.
#![no_std]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate self as firmware_core;
#[cfg(test)]
extern crate std;

pub mod config;
pub mod driver;
pub mod error;
pub mod ftl;
pub mod full;
pub mod instances;
pub mod list;
pub mod map;
pub mod medium;
pub mod persist;
pub mod space;
pub mod tech;

pub use config::{Config, CopyConfig, CopyMode, FlushPolicy, PersistConfig};
pub use driver::{ReadValue, SyncDriver};
pub use error::{Error, Reason};
pub use ftl::host::{
    CopyFallback, CopyProgress, CopyStop, HostCompletion, ReadStart, ReadStatus, Tag,
};
pub use ftl::tables::{TableSizes, Tables};
pub use ftl::{Ftl, OpView, Stats, Stream};
pub use full::{BaselineFtl, FullFtl, Techniques};
pub use map::loc::Loc;
pub use medium::addr::{BlockId, DieId, Geometry, Lpn, PageAddr, PlaneId, Ppn, Pun, UnitMask};
pub use medium::nand::{
    MetaBuf, Nand, NandCmd, NandError, NandOp, NandResult, OpId, Origin, PageKind, ReadReport,
    Slot, Spare, WlSet,
};
pub use persist::tp::PersistTables;
pub use tech::rcftl::policy::{CopybackMode, CopybackPolicy, Selector};

#[cfg(test)]
#[path = "../tests/common/nand.rs"]
mod test_nand;

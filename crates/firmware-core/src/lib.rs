//! A sans-IO NAND flash translation layer core.
//!
//! `firmware-core` is a state machine. It accepts host commands and NAND
//! completions, and emits NAND operations and host completions. It never
//! blocks, never reads a clock (timestamps arrive with events) and never
//! allocates: the large tables live in slices the caller lends it, so the same
//! code serves a many-GiB simulation and a microcontroller.
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

pub mod addr;
mod blocks;
mod buffer;
mod checkpoint;
pub mod config;
pub mod controller;
mod copy;
pub mod copyback;
pub mod copyless;
pub mod ctt;
pub mod die_detect;
pub mod die_fail;
pub mod dmms;
pub mod driver;
pub mod epm;
pub mod error;
pub mod ftl;
mod gc;
pub mod gerase;
pub mod gerase_select;
pub mod hint;
pub mod host;
pub mod lidf;
pub mod map_dirty;
mod mapping;
pub mod mount;
pub mod nand;
mod ops;
pub mod p2l;
pub mod p2l_list;
pub mod p2l_page;
pub mod persist;
pub mod power;
pub mod reparo;
pub mod superblock;
pub mod tables;
pub mod waf_monitor;
pub mod weak_wl;
mod wear;

pub use addr::{BlockId, DieId, Geometry, Lpn, PageAddr, PlaneId, Ppn, Pun, UnitMask};
pub use config::{Config, CopyConfig, CopyMode, FlushPolicy, PersistConfig};
pub use copy::{CopyFallback, CopyProgress, CopyStop};
pub use copyback::{CopybackMode, CopybackPolicy, Selector};
pub use driver::{ReadValue, SyncDriver};
pub use error::Error;
pub use ftl::{Ftl, Stats, Stream};
pub use host::{HostCompletion, ReadStart, ReadStatus, Tag};
pub use mapping::Loc;
pub use nand::{
    MetaBuf, Nand, NandCmd, NandError, NandOp, NandResult, OpId, Origin, PageKind, ReadReport,
    Slot, Spare, WlSet,
};
pub use persist::PersistTables;
pub use tables::{TableSizes, Tables};

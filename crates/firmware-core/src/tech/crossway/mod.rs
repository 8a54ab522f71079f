//! Cross-way GC destinations (seed 002's situation): a victim's valid pages
//! leave their way and go to the GC active block of the least busy other
//! way on the same channel, so a direct data transfer (DGCB) can carry
//! them from the source way to the destination way over the channel once.
//! How a page crosses the channel is the driver's business; the core only
//! chooses where it lands ([`target`]) and returns the GC slots of a
//! cross-way program to the plane they came from ([`source_plane`]).

pub mod config;
#[cfg(feature = "crossway")]
mod dest;
#[cfg(feature = "crossway")]
pub(crate) use dest::{source_plane, target};

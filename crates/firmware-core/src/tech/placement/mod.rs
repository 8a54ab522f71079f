//! Host-guided placement: reclaim-unit handles over the core's host write
//! stream (NVMe FDP's reclaim-unit handles; the active zones of a zoned
//! namespace, one handle each).
//!
//! A write carries a handle ([`write`]). The flush order keeps one FIFO
//! per handle and forms every page from one handle's writes; the
//! placement sends that page to the handle's own open block in the next
//! plane of the handle's round robin. Blocks therefore hold the data of
//! one handle: data the host groups by lifetime dies together, and GC
//! finds whole blocks dead (a zone reset frees its blocks without a copy).
//!
//! GC keeps the separation ([`gc`]): a victim's valid units go to a GC
//! block of the handle the victim holds. Each block's handle is kept on
//! flash and survives a power cut ([`block_tag`]).
//!
//! Statistics per handle are the host's: units written through each
//! handle ([`Placement::host_units`]); media units come from the core's
//! counters (the FDP statistics log's host and media bytes written).

#[cfg(feature = "placement")]
pub mod block_tag;
pub mod config;
#[cfg(feature = "placement")]
pub mod gc;
#[cfg(feature = "placement")]
pub mod handles;

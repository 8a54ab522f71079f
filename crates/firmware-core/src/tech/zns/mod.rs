//! Zoned namespaces (NVMe ZNS): the zone state machine and how it is
//! recovered after a power cut.
//!
//! [`zone`] is pure state over a lent slice: it validates every zone
//! command against the specification's states, write pointers and
//! resource limits and answers with the specification's status codes.
//! It issues no I/O: the caller (the host interface of a firmware, or the
//! simulator's) turns an accepted write into core writes at the returned
//! LBAs with the zone's placement handle, a reset into trims from the
//! write pointer down, and a finish into one marker unit (see
//! [`zone::Zones::marker_lba`]), so that everything a zone command
//! changes is as durable as mapped data and [`zone::Zones::recover`]
//! rebuilds the zones from the mapping after a cut.

pub mod zone;

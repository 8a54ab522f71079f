//! Mapping persistence building blocks that need no FTL state: the dirty
//! translation-page budget under the capacitor.

pub mod checkpoint;
pub mod cut;
pub mod deferred;
pub mod map_dirty;
pub mod mount;
pub mod tp;

/// A translation page (one page of the on-flash mapping table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tpn(pub u32);

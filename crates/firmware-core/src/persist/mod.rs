//! Mapping persistence building blocks that need no FTL state: the dirty
//! translation-page budget under the capacitor.

pub mod map_dirty;

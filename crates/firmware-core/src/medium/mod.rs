//! The medium layer: typed addresses, the NAND operation set and the `Nand`
//! trait with its contract, and cache prefetch hints. Knows nothing above it.

pub mod addr;
pub mod hint;
pub mod nand;
pub(crate) mod shift;

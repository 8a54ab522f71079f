//! The seed papers' techniques, one folder each. Each plugs into the core
//! through the hook traits of [`crate::ftl::hooks`].

#[cfg(feature = "copyless")]
pub mod copyless;
pub mod crossway;
#[cfg(feature = "dawid")]
pub mod dawid;
pub mod longftl;
pub mod placement;
pub mod rcftl;
pub mod reparo;
#[cfg(feature = "zns")]
pub mod zns;

//! The hook traits: where a technique plugs into the mechanism.
//!
//! The mechanism (space, mapping, persistence, GC) calls these at fixed
//! points and knows nothing of the papers. Every method has the baseline's
//! behaviour as its default, so [`Baseline`] is the plain page-mapped FTL.
//! The crate's [`crate::Techniques`] implements each hook by dispatching, at
//! run time, to the techniques the configuration selects among those the
//! build enables. Dispatch is static: the core is generic over its hooks.

use crate::config::Config;
use crate::error::Error;

/// Every hook of the core, grouped by what it decides.
pub trait Hooks: Sized {}

/// Builds a hook set for a configuration.
pub trait Build: Hooks {
    /// The hook set for `cfg`.
    fn build(cfg: &Config) -> Result<Self, Error>;
}

/// The baseline: no technique, every hook at its default.
#[derive(Clone, Copy, Debug, Default)]
pub struct Baseline;

impl Hooks for Baseline {}

impl Build for Baseline {
    fn build(_cfg: &Config) -> Result<Self, Error> {
        Ok(Baseline)
    }
}

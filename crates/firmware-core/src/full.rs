//! The full build: every technique the enabled features compile, plugged
//! into the core's hooks and chosen at run time by the configuration.

use crate::config::Config;
use crate::error::Error;
use crate::ftl::hooks::{Build, Hooks};

/// The techniques of the seed papers behind the core's hooks.
#[derive(Debug, Default)]
pub struct Techniques {}

impl Hooks for Techniques {}

impl Build for Techniques {
    fn build(_cfg: &Config) -> Result<Self, Error> {
        Ok(Techniques {})
    }
}

/// The core with every compiled technique (selected by the configuration).
pub type FullFtl<'a> = crate::ftl::Ftl<'a, Techniques>;

/// The core with no technique: the plain page-mapped FTL.
pub type BaselineFtl<'a> = crate::ftl::Ftl<'a, crate::ftl::hooks::Baseline>;

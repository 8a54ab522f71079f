//! `ftl replay --flows`: several traces replayed concurrently.

use crate::replay::ReplayArgs;
use crate::CliError;

/// Runs `ftl replay --flows`.
pub fn run(_a: ReplayArgs) -> Result<(), CliError> {
    Err(CliError::Input("--flows: not yet".into()))
}

//! Simulation configuration: TOML files, presets and `--set` overrides.

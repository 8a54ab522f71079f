//! Workspace-level acceptance tests and benchmarks live in `tests/` and `benches/`.

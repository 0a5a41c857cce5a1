//! The engine's integration tests, one binary (fewer links keep `cargo test` fast on a
//! small machine).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failure is a failing test

mod failure_cache;
mod incremental_placements;
mod properties;

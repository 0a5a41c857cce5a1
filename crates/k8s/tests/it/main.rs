//! The loader's integration tests, one binary (each test binary is a link of the whole
//! k8s-openapi schema; one keeps `cargo test` fast on a small machine).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failure is a failing test

mod compact;
mod fuzz_smoke;
mod lint_props;
mod validation_props;
mod workloads;

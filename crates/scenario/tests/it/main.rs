//! The conformance cases under tests/conformance/, one binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failure is a failing test

mod conformance;
mod validation_cases;

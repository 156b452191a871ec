//! pi-llm's integration tests: one binary (see `suite/`): wire decoding, catalog,
//! configuration files, keys and model resolution.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

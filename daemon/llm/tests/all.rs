//! Integration tests of pi-llm's catalog, configuration files, keys and model resolution.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

//! pi-tui's integration tests: one binary, modules under `suite/`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

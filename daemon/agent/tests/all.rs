//! Integration tests of the agent loop, with the faux provider and test tools.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

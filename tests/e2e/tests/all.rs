//! End-to-end tests: the real `pid` (and `pictl`) binaries against the scripted model server.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

//! Integration tests of `pid`: the real binary in a temporary `PI_HOME`.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

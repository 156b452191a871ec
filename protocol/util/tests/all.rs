//! Integration tests of pi-util: timestamps both ways and the wildcard matcher.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

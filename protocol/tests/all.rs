//! Integration tests of pi-protocol: schema drift and envelope classification.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

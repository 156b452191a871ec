//! Integration tests of the built-in tools: every tool through the `Tool` trait, in temp
//! directories, with a session environment that never points at the real HOME.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

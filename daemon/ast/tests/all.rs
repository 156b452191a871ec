//! Integration tests of structural search and rewrite: a fixture repository in a temp
//! directory with Rust, TypeScript, TSX, JavaScript, Python and Go files.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

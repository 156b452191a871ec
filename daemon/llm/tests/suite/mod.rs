//! Test modules of pi-llm.

#![allow(clippy::unwrap_used, reason = "tests fail loudly")]

mod bodies;
mod split_streams;

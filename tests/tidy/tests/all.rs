//! The tidy checks on this workspace, and on small fixture workspaces that show each check
//! fails when it should.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

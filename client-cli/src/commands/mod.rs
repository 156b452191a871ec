//! One module per `pictl` command group.

pub mod assets;
pub mod attach;
pub mod bridge;
pub mod daemon;
pub mod drive;
pub mod extensions;
pub mod login;
pub mod lsp;
pub mod mcp;
pub mod models;
pub mod packages;
pub mod pools;
pub mod rules;
pub mod run;
pub mod sessions;
pub mod stats;
pub mod watch;
pub mod web;

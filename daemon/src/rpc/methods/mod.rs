//! Method handlers, one module per protocol resource. Handlers take typed params and a
//! [`crate::rpc::dispatch::RequestContext`] and return the typed response or an error object.

pub mod artifact;
pub mod auth;
pub mod daemon;
pub mod extensions;
pub mod history;
pub mod lsp;
pub mod mcp;
pub mod model;
pub mod packages;
pub mod pools;
pub mod rules;
pub mod session;
pub mod settings;
pub mod ui;
pub mod usage;
pub mod web;

//! The JSON-RPC layer: transports (Unix socket, WebSocket), the per-connection loop, dispatch
//! of requests to method handlers.
//!
//! Every transport turns its byte stream into complete messages and hands them to
//! [`connection::serve`], so behaviour is identical over every transport. Why we do not use
//! jsonrpsee: `docs/decisions/0001-own-jsonrpc-layer.md`.

pub mod admission;
pub mod codec;
pub mod connection;
pub mod dispatch;
pub mod errors;
pub mod methods;
pub mod uds;
pub mod ws;

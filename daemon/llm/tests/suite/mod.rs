//! One module per concern; `world.rs` builds registries from temp files and a fake
//! environment; `bodies.rs` holds recorded-style SSE bodies per wire format; `providers/`
//! runs the four wire formats against the scripted model server over HTTP.

mod apis;
mod auth;
mod bodies;
mod catalog;
mod catalog_drift;
mod compat;
mod keys;
mod logins;
mod models_json;
mod providers;
mod resolution;
mod secrets;
mod split_streams;
mod thinking;
mod world;

//! One module per concern; `world.rs` builds registries from temp files and a fake environment.

mod auth;
mod catalog;
mod compat;
mod keys;
mod models_json;
mod resolution;
mod secrets;
mod thinking;
mod world;

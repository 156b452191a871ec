//! Sessions through the protocol, on an in-process daemon with the faux provider.

mod basics;
mod builtin_tools;
mod compaction;
pub(crate) mod harness;
mod import_export;
mod loading;
mod multi_client;
mod presence;
mod runs;
mod tree;
mod typed_events;
mod ui;

//! Compaction and branch summaries through the daemon: mostly with the faux provider (which
//! records each request's context), overflow recovery also through the scripted model server.

mod branch_summary;
mod flow;
mod manual;
mod overflow;
mod support;
mod threshold;

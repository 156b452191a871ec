//! One module per area. Each test starts its own daemon in a temporary `PI_HOME` whose
//! `.pi/agent/models.json` points provider `scripted` at a scripted model server.

mod acp;
mod approvals;
mod config;
mod conformance;
mod crash;
mod extensions;
mod fidelity;
mod files;
mod first_hour;
mod harness;
mod keys;
mod load;
mod logins;
mod lsp;
mod mcp;
mod mcp_faults;
mod mcp_first_use;
mod mcp_trust;
mod omp;
mod omp_tools;
mod pi_cli;
mod plan;
mod pools;
mod processes;
mod remote;
mod retry;
mod runs;
mod sandbox;
mod secrets;
mod tasks;
mod tree;
mod ts_client;
mod ttsr;
mod tui;
mod web;

//! One module per `pictl` command group.

pub mod daemon;
pub mod run;

//! pi-util: small helpers every layer of the daemon (and `pictl`) shares, each on the crate
//! from the lock file that does the work: the clock and pi's ISO timestamps (`time`, on
//! chrono), random UUIDs (`ids`, on uuid), `*`/`?` wildcards (`wildcard`, on regex) and one shared copy
//! of equal values (`intern`).
//!
//! A leaf: it depends on no crate of this workspace, does no I/O besides reading the clock and
//! the system's randomness, and never logs.

pub mod ids;
pub mod intern;
pub mod time;
pub mod wildcard;

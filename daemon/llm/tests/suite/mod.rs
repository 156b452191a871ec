//! One module per concern.

mod catalog;
mod compat;
mod thinking;

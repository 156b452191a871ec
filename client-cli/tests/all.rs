//! Integration tests of the `pictl` binary.

mod suite;

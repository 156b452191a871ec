//! Integration tests of pi-protocol: schema drift and envelope classification.

mod suite;

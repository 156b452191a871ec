//! Unit tests of edit planning.

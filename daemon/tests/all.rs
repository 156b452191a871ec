//! Integration tests of `pid`: the real binary in a temporary `PI_HOME`.

mod suite;

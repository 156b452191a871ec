//! pi-tui's integration tests: one binary, modules under `suite/`.

mod suite;

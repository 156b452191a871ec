//! pi-llm's integration tests: one binary (see `suite/`).

mod suite;

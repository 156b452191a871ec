//! End-to-end tests live in `tests/e2e/tests/`; this library is empty on purpose.

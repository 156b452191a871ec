//! Integration tests of pi-web: fetching from in-process HTTP servers on the loopback
//! interface (pages, redirects, failures, the cache, cancellation) and searching through stub
//! providers that record each request.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

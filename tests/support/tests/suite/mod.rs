//! The fixtures of `pi-test-support`, exercised as their users will.

mod model_server;

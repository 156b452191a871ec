//! Screens (insta snapshots of rendered frames) and behaviour (update's effects), driven
//! through the public `update` and `render` only.

mod behaviour;
mod screens;
mod support;
mod tidy;

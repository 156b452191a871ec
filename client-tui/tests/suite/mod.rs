//! Screens (insta snapshots of rendered frames) and behaviour (update's effects), driven
//! through the public `update` and `render` only.

mod behaviour;
mod images;
mod keys;
mod logins;
mod screens;
mod settings;
mod support;
mod tidy;

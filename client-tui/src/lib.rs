//! pi-tui: the terminal UI of `pictl attach`, pi's interactive mode on a daemon session.
//!
//! Layout (helix's functional core, imperative shell):
//! - [`state`]: everything shown, as plain data; [`transcript`], [`editor`], [`overlay`] are
//!   its parts; [`keymap`] holds the key bindings (pi's `keybindings.json` honoured).
//! - [`input`] and [`effect`]: the closed enums in and out of the core.
//! - [`update()`]: `update(&mut state, input) -> Vec<Effect>`, pure.
//! - [`render()`]: `render(&state, &mut frame)`, pure (a layout cache aside); it draws with
//!   [`theme`] roles and paints the frame with the state's theme last.
//! - [`runtime`]: the shell. The terminal (crossterm), the daemon (`pi-client`: attach,
//!   replay from the last `seq`, reconnect), the file list, the clipboard; it turns the
//!   world into inputs and performs effects.
//!
//! Architecture invariant: only `runtime` does I/O; `update` and `render` never touch the
//! terminal, the socket, the file system or the clock.

pub mod changelog;
pub mod commands_table;
pub mod editor;
pub mod effect;
pub mod input;
pub mod keymap;
pub mod overlay;
pub mod render;
pub mod runtime;
pub mod state;
pub mod theme;
pub mod transcript;
pub mod update;

pub use render::render;
pub use runtime::Extensions;
pub use runtime::{AttachOptions, Target, browser_opener, open_in_browser, run};
pub use update::update;

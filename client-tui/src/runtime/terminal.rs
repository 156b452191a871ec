//! The terminal: raw mode, the alternate screen, bracketed paste and (where the terminal
//! supports it) the keyboard enhancement that tells Shift+Enter from Enter. Restored when the
//! guard drops and on panic.

use std::io::{self, Write as _};

use base64::Engine as _;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The terminal in TUI mode; restores it when dropped.
pub struct TerminalGuard {
    /// The ratatui terminal.
    pub terminal: Terminal<CrosstermBackend<io::Stdout>>,
    enhanced_keys: bool,
}

impl TerminalGuard {
    /// Switches the terminal into TUI mode.
    pub fn enter() -> anyhow::Result<TerminalGuard> {
        enable_raw_mode()?;
        let mut stdout = io::stdout();
        // Mouse reporting gives the wheel to the transcript (hold Shift to select text).
        execute!(
            stdout,
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture
        )?;
        let enhanced_keys = supports_keyboard_enhancement().unwrap_or(false);
        if enhanced_keys {
            execute!(
                stdout,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )?;
        }
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore(enhanced_keys);
            previous_hook(info);
        }));
        let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
        Ok(TerminalGuard {
            terminal,
            enhanced_keys,
        })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore(self.enhanced_keys);
    }
}

fn restore(enhanced_keys: bool) {
    let mut stdout = io::stdout();
    if enhanced_keys {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        stdout,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Puts text on the clipboard with OSC 52 (works over SSH and in tmux with `set-clipboard`).
/// Sets the terminal's title (an extension's `ctx.ui.setTitle`).
pub fn set_title(title: &str) {
    let _ = crossterm::execute!(io::stdout(), crossterm::terminal::SetTitle(title));
}

pub fn copy_to_clipboard(text: &str) {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut stdout = io::stdout();
    let _ = write!(stdout, "\x1b]52;c;{encoded}\x07");
    let _ = stdout.flush();
}

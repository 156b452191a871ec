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
    // When the progress indicator was last said to be active (`None`: it is not).
    progress_sent: Option<std::time::Instant>,
    /// The transcript's images on screen, and the terminal's graphics protocol.
    pub images: Option<(super::graphics::Graphics, super::graphics::ImageScreen)>,
}

/// OSC 9;4;3: an indeterminate progress indicator (ConEmu, Windows Terminal, Ghostty, …).
const PROGRESS_ACTIVE: &str = "\x1b]9;4;3\x07";
/// OSC 9;4;0: no progress indicator.
const PROGRESS_CLEAR: &str = "\x1b]9;4;0;\x07";
/// Some terminals drop an indicator that is not repeated; it is said again this often.
const PROGRESS_KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(1);

impl TerminalGuard {
    /// Switches the terminal into TUI mode.
    pub fn enter() -> anyhow::Result<TerminalGuard> {
        enable_raw_mode()?;
        let mut stdout = io::stdout();
        execute!(stdout, EnterAlternateScreen)?;
        let enhanced_keys = supports_keyboard_enhancement().unwrap_or(false);
        take_modes(enhanced_keys)?;
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore(enhanced_keys);
            previous_hook(info);
        }));
        let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
        Ok(TerminalGuard {
            terminal,
            enhanced_keys,
            progress_sent: None,
            images: None,
        })
    }

    /// Gives the terminal back as it was (for a suspend or an external editor).
    pub fn release(&mut self) {
        self.set_progress(false);
        if let Some((protocol, screen)) = &mut self.images {
            let mut stdout = io::stdout();
            let _ = stdout.write_all(screen.farewell(*protocol));
            let _ = stdout.flush();
            *screen = super::graphics::ImageScreen::default();
        }
        restore(self.enhanced_keys);
    }

    /// Takes the terminal again after [`TerminalGuard::release`]; the next frame is drawn
    /// whole.
    pub fn reenter(&mut self) -> anyhow::Result<()> {
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen)?;
        take_modes(self.enhanced_keys)?;
        self.clear_for_redraw()?;
        Ok(())
    }

    /// Clears the screen so the next frame is drawn whole. (Not ratatui's `clear`, which
    /// first asks the terminal where the cursor is: a round trip that times out when the
    /// terminal was just handed back by another program.)
    pub fn clear_for_redraw(&mut self) -> anyhow::Result<()> {
        execute!(
            self.terminal.backend_mut(),
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
        )?;
        // What was on screen is now blank, as the frame the next one is compared with.
        self.terminal.swap_buffers();
        Ok(())
    }

    /// Shows the terminal's progress indicator while `busy` (pi's
    /// `terminal.showTerminalProgress`), and clears it after.
    pub fn set_progress(&mut self, busy: bool) {
        let now = std::time::Instant::now();
        let Some(sequence) = progress_step(busy, &mut self.progress_sent, now) else {
            return;
        };
        let mut stdout = io::stdout();
        let _ = write!(stdout, "{sequence}");
        let _ = stdout.flush();
    }
}

/// What to tell the terminal about progress now (`sent`: when it was last told a run is
/// going on), if anything: active when busy (again after [`PROGRESS_KEEPALIVE`]), clear once
/// when no longer busy.
fn progress_step(
    busy: bool,
    sent: &mut Option<std::time::Instant>,
    now: std::time::Instant,
) -> Option<&'static str> {
    match (busy, *sent) {
        (true, Some(at)) if now.duration_since(at) < PROGRESS_KEEPALIVE => None,
        (true, _) => {
            *sent = Some(now);
            Some(PROGRESS_ACTIVE)
        }
        (false, Some(_)) => {
            *sent = None;
            Some(PROGRESS_CLEAR)
        }
        (false, None) => None,
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        self.set_progress(false);
        if let Some((protocol, screen)) = &self.images {
            let mut stdout = io::stdout();
            let _ = stdout.write_all(screen.farewell(*protocol));
            let _ = stdout.flush();
        }
        restore(self.enhanced_keys);
    }
}

/// The modes the TUI runs in: bracketed paste, the mouse (its wheel scrolls the transcript;
/// hold Shift to select text), and keys told apart where the terminal can.
fn take_modes(enhanced_keys: bool) -> io::Result<()> {
    let mut stdout = io::stdout();
    execute!(stdout, EnableBracketedPaste, EnableMouseCapture)?;
    if enhanced_keys {
        execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
    }
    Ok(())
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

/// Stops this process as Ctrl+Z in a shell does (SIGTSTP); returns once it is continued
/// (`fg`).
pub fn stop_process() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TSTP);
}

/// Sets the terminal's title (an extension's `ctx.ui.setTitle`).
pub fn set_title(title: &str) {
    let _ = crossterm::execute!(io::stdout(), crossterm::terminal::SetTitle(title));
}

/// Puts text on the clipboard with OSC 52 (works over SSH and in tmux with `set-clipboard`).
pub fn copy_to_clipboard(text: &str) {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut stdout = io::stdout();
    let _ = write!(stdout, "\x1b]52;c;{encoded}\x07");
    let _ = stdout.flush();
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn progress_is_set_repeated_each_second_while_busy_and_cleared_once() {
        let start = Instant::now();
        let mut sent = None;
        assert_eq!(
            progress_step(false, &mut sent, start),
            None,
            "idle: nothing"
        );
        assert_eq!(
            progress_step(true, &mut sent, start),
            Some("\x1b]9;4;3\x07")
        );
        let soon = start + Duration::from_millis(300);
        assert_eq!(progress_step(true, &mut sent, soon), None);
        let later = start + Duration::from_millis(1_100);
        assert_eq!(progress_step(true, &mut sent, later), Some(PROGRESS_ACTIVE));
        assert_eq!(
            progress_step(false, &mut sent, later),
            Some("\x1b]9;4;0;\x07")
        );
        assert_eq!(progress_step(false, &mut sent, later), None);
    }
}

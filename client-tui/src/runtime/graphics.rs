//! Images in the terminal: which graphics protocol it speaks (pi's detection), and drawing
//! the transcript's images where the last frame left room for them — kitty's protocol (each
//! image sent once, then placed by id; placements replaced when the layout changes) or
//! iTerm2's inline images (drawn into the cells, so a changed layout redraws the frame first).
//!
//! Nothing is drawn under tmux or screen (they swallow or garble the sequences), nor on
//! terminals not known to draw images: pi's rules. Beyond pi: sixels on the terminals known
//! to draw them (drawn into the cells like iTerm2's, each image encoded once per size), and
//! `PI_TUI_IMAGES=kitty|iterm2|sixel|none` to say what a terminal does.

use std::collections::HashSet;
use std::io::Write;

use base64::Engine as _;

use crate::render::Placement;
pub use crate::state::Graphics;

/// The protocol of the terminal described by these variables, as pi 0.73 decides it.
pub fn detect(variable: impl Fn(&str) -> Option<String>) -> Option<Graphics> {
    let lower = |name: &str| variable(name).unwrap_or_default().to_lowercase();
    let (program, term) = (lower("TERM_PROGRAM"), lower("TERM"));
    let set = |name: &str| variable(name).is_some_and(|value| !value.is_empty());
    match lower("PI_TUI_IMAGES").as_str() {
        "kitty" => return Some(Graphics::Kitty),
        "iterm2" => return Some(Graphics::Iterm2),
        "sixel" => return Some(Graphics::Sixel),
        "none" => return None,
        _ => {}
    }
    if set("TMUX") || term.starts_with("tmux") || term.starts_with("screen") {
        return None;
    }
    if set("KITTY_WINDOW_ID")
        || program == "kitty"
        || program == "ghostty"
        || term.contains("ghostty")
        || set("GHOSTTY_RESOURCES_DIR")
        || set("WEZTERM_PANE")
        || program == "wezterm"
    {
        return Some(Graphics::Kitty);
    }
    if set("ITERM_SESSION_ID") || program == "iterm.app" {
        return Some(Graphics::Iterm2);
    }
    if term.starts_with("foot")
        || term.starts_with("mlterm")
        || term.contains("sixel")
        || set("KONSOLE_VERSION")
        || set("WT_SESSION")
    {
        return Some(Graphics::Sixel);
    }
    None
}

/// A cell's size in pixels, as the terminal reports it (pi's 9x18 when it does not).
pub fn cell_size() -> (u16, u16) {
    match crossterm::terminal::window_size() {
        Ok(size) if size.width > 0 && size.height > 0 && size.columns > 0 && size.rows > 0 => (
            (size.width / size.columns).max(1),
            (size.height / size.rows).max(1),
        ),
        _ => (9, 18),
    }
}

/// What a frame's images need from the terminal.
#[derive(Debug, Default)]
pub struct ImageScreen {
    /// kitty's images already sent, by id (placed again without being sent again).
    sent: HashSet<u32>,
    /// The placements on screen now.
    shown: Vec<(u32, u16, u16, u16, u16)>,
    /// Sixel sequences by image and size (bounded: cleared past [`SIXELS_KEPT`]).
    sixels: std::collections::HashMap<(u32, u16, u16), String>,
}

/// Encoded sixel images kept for redraws.
const SIXELS_KEPT: usize = 32;

impl ImageScreen {
    /// Whether `placed` differs from what is on screen (iTerm2's images then need the frame
    /// drawn again first, as they live in its cells).
    pub fn changed(&self, placed: &[Placement]) -> bool {
        self.shown != keys(placed)
    }

    /// Draws `placed` with `protocol` when it differs from what is on screen: the bytes to
    /// write after the frame (nothing when unchanged).
    pub fn update(
        &mut self,
        protocol: Graphics,
        placed: &[Placement],
        cell: (u16, u16),
    ) -> Vec<u8> {
        let keys = keys(placed);
        if keys == self.shown {
            return Vec::new();
        }
        let mut out = Vec::new();
        if protocol == Graphics::Kitty && !self.shown.is_empty() {
            // Every placement goes; the images stay sent.
            out.extend_from_slice(b"\x1b_Ga=d,d=a,q=2\x1b\\");
        }
        for placement in placed {
            let picture = &placement.picture;
            // Save the cursor, go to the image's cell, draw, come back.
            let _ = write!(out, "\x1b7\x1b[{};{}H", placement.y + 1, placement.x + 1);
            match protocol {
                Graphics::Kitty => {
                    if self.sent.insert(picture.id) {
                        match kitty_png(picture) {
                            Some(png) => out.extend(kitty_send(picture.id, &png)),
                            None => {
                                self.sent.remove(&picture.id);
                                out.extend_from_slice(b"\x1b8");
                                continue;
                            }
                        }
                    }
                    let _ = write!(
                        out,
                        "\x1b_Ga=p,i={},c={},r={},C=1,q=2\x1b\\",
                        picture.id, placement.cols, placement.rows
                    );
                }
                Graphics::Iterm2 => {
                    let _ = write!(
                        out,
                        "\x1b]1337;File=inline=1;width={};height={};preserveAspectRatio=1:{}\x07",
                        placement.cols, placement.rows, picture.data
                    );
                }
                Graphics::Sixel => {
                    let key = (picture.id, placement.cols, placement.rows);
                    if !self.sixels.contains_key(&key) {
                        if self.sixels.len() >= SIXELS_KEPT {
                            self.sixels.clear();
                        }
                        let width = u32::from(placement.cols) * u32::from(cell.0.max(1));
                        let height = u32::from(placement.rows) * u32::from(cell.1.max(1));
                        if let Some(sixel) = sixel_of(picture, width, height) {
                            self.sixels.insert(key, sixel);
                        }
                    }
                    if let Some(sixel) = self.sixels.get(&key) {
                        out.extend_from_slice(sixel.as_bytes());
                    }
                }
            }
            out.extend_from_slice(b"\x1b8");
        }
        self.shown = keys;
        out
    }

    /// What to write when the TUI leaves: kitty's images freed.
    pub fn farewell(&self, protocol: Graphics) -> &'static [u8] {
        match protocol {
            Graphics::Kitty if !self.sent.is_empty() => b"\x1b_Ga=d,d=A,q=2\x1b\\",
            _ => b"",
        }
    }
}

fn keys(placed: &[Placement]) -> Vec<(u32, u16, u16, u16, u16)> {
    placed
        .iter()
        .map(|placement| {
            (
                placement.picture.id,
                placement.x,
                placement.y,
                placement.cols,
                placement.rows,
            )
        })
        .collect()
}

/// The picture as a sixel sequence `width` x `height` pixels; `None` when it cannot be read.
fn sixel_of(picture: &crate::transcript::Picture, width: u32, height: u32) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(picture.data.as_bytes())
        .ok()?;
    let kind = pi_image::sniff(&bytes)?;
    pi_image::sixel(&bytes, kind, width, height).ok()
}

/// The picture as PNG bytes (kitty's `f=100` takes PNG only); `None` when it cannot be read.
fn kitty_png(picture: &crate::transcript::Picture) -> Option<Vec<u8>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(picture.data.as_bytes())
        .ok()?;
    let kind = pi_image::sniff(&bytes)?;
    pi_image::to_png(&bytes, kind).ok()
}

/// kitty's transmit command for `png` as image `id`, in chunks of 4096 base64 bytes.
fn kitty_send(id: u32, png: &[u8]) -> Vec<u8> {
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let chunks: Vec<&[u8]> = data.as_bytes().chunks(4096).collect();
    let mut out = Vec::with_capacity(data.len() + chunks.len() * 16 + 32);
    for (index, chunk) in chunks.iter().enumerate() {
        let more = u8::from(index + 1 < chunks.len());
        if index == 0 {
            let _ = write!(out, "\x1b_Ga=t,f=100,i={id},q=2,m={more};");
        } else {
            let _ = write!(out, "\x1b_Gm={more};");
        }
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\x1b\\");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        }
    }

    #[test]
    fn terminals_are_told_apart_as_pi_does() {
        assert_eq!(
            detect(vars(&[("KITTY_WINDOW_ID", "1")])),
            Some(Graphics::Kitty)
        );
        assert_eq!(
            detect(vars(&[("TERM_PROGRAM", "ghostty")])),
            Some(Graphics::Kitty)
        );
        assert_eq!(
            detect(vars(&[("WEZTERM_PANE", "0")])),
            Some(Graphics::Kitty)
        );
        assert_eq!(
            detect(vars(&[("TERM_PROGRAM", "iTerm.app")])),
            Some(Graphics::Iterm2)
        );
        assert_eq!(detect(vars(&[("TERM_PROGRAM", "vscode")])), None);
        assert_eq!(detect(vars(&[("TERM", "xterm-256color")])), None);
        // tmux swallows them, whatever the terminal outside it.
        assert_eq!(
            detect(vars(&[
                ("KITTY_WINDOW_ID", "1"),
                ("TMUX", "/tmp/tmux-0/default,1,0")
            ])),
            None
        );
        assert_eq!(
            detect(vars(&[
                ("KITTY_WINDOW_ID", "1"),
                ("TERM", "screen-256color")
            ])),
            None
        );
        // Sixels where the terminal is known for them, and what PI_TUI_IMAGES says.
        assert_eq!(detect(vars(&[("TERM", "foot")])), Some(Graphics::Sixel));
        assert_eq!(
            detect(vars(&[("KONSOLE_VERSION", "240802")])),
            Some(Graphics::Sixel)
        );
        assert_eq!(
            detect(vars(&[
                ("TERM", "xterm-256color"),
                ("PI_TUI_IMAGES", "sixel")
            ])),
            Some(Graphics::Sixel)
        );
        assert_eq!(
            detect(vars(&[("KITTY_WINDOW_ID", "1"), ("PI_TUI_IMAGES", "none")])),
            None
        );
    }

    #[test]
    fn sixel_images_are_drawn_into_their_cells_at_the_cells_size() {
        let mut screen = ImageScreen::default();
        let drawn =
            String::from_utf8(screen.update(Graphics::Sixel, &[placed(7, 3)], (9, 18))).unwrap();
        // 10 cells of 9 pixels by 4 of 18.
        assert!(
            drawn.starts_with("\x1b7\x1b[4;3H\x1bP0;1;0q\"1;1;90;72#0;2;"),
            "{drawn:?}"
        );
        assert!(drawn.ends_with("\x1b\\\x1b8"), "{drawn:?}");
        // Encoded once: moved, the same sequence is written again.
        let moved =
            String::from_utf8(screen.update(Graphics::Sixel, &[placed(7, 1)], (9, 18))).unwrap();
        assert_eq!(screen.sixels.len(), 1);
        assert_eq!(
            moved.split_once('P').map(|(_, rest)| rest),
            drawn.split_once('P').map(|(_, rest)| rest)
        );
    }

    fn placed(id: u32, y: u16) -> Placement {
        // A 1x1 PNG.
        let data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
        Placement {
            x: 2,
            y,
            cols: 10,
            rows: 4,
            picture: crate::transcript::Picture {
                id,
                data: data.into(),
                mime: "image/png".to_owned(),
                size: (1, 1),
            },
        }
    }

    #[test]
    fn kitty_images_are_sent_once_and_placed_again_when_the_layout_moves() {
        let mut screen = ImageScreen::default();
        let first =
            String::from_utf8(screen.update(Graphics::Kitty, &[placed(7, 3)], (9, 18))).unwrap();
        assert!(
            first.starts_with("\x1b7\x1b[4;3H\x1b_Ga=t,f=100,i=7,q=2,m=0;iVBOR"),
            "{first:?}"
        );
        assert!(
            first.ends_with("\x1b_Ga=p,i=7,c=10,r=4,C=1,q=2\x1b\\\x1b8"),
            "{first:?}"
        );
        // The same frame again: nothing to say.
        assert!(
            screen
                .update(Graphics::Kitty, &[placed(7, 3)], (9, 18))
                .is_empty()
        );
        // Scrolled: the placements go, the image is placed anew without being sent again.
        let moved =
            String::from_utf8(screen.update(Graphics::Kitty, &[placed(7, 1)], (9, 18))).unwrap();
        assert_eq!(
            moved,
            "\x1b_Ga=d,d=a,q=2\x1b\\\x1b7\x1b[2;3H\x1b_Ga=p,i=7,c=10,r=4,C=1,q=2\x1b\\\x1b8"
        );
        // Gone from the screen: only the placements go; leaving frees the images.
        let gone = String::from_utf8(screen.update(Graphics::Kitty, &[], (9, 18))).unwrap();
        assert_eq!(gone, "\x1b_Ga=d,d=a,q=2\x1b\\");
        assert_eq!(screen.farewell(Graphics::Kitty), b"\x1b_Ga=d,d=A,q=2\x1b\\");
    }

    #[test]
    fn iterm2_images_are_drawn_into_their_cells() {
        let mut screen = ImageScreen::default();
        assert!(screen.changed(&[placed(7, 3)]));
        let drawn =
            String::from_utf8(screen.update(Graphics::Iterm2, &[placed(7, 3)], (9, 18))).unwrap();
        assert!(
            drawn.starts_with("\x1b7\x1b[4;3H\x1b]1337;File=inline=1;width=10;height=4;preserveAspectRatio=1:iVBOR"),
            "{drawn:?}"
        );
        assert!(drawn.ends_with("\x07\x1b8"));
        assert!(!screen.changed(&[placed(7, 3)]));
        assert_eq!(screen.farewell(Graphics::Iterm2), b"");
    }

    #[test]
    fn kitty_chunks_the_image_and_marks_the_last_chunk() {
        let png = vec![7u8; 5000];
        let sent = String::from_utf8(kitty_send(42, &png)).unwrap();
        let chunks: Vec<&str> = sent.split("\x1b\\").filter(|c| !c.is_empty()).collect();
        assert_eq!(chunks.len(), 2);
        assert!(chunks[0].starts_with("\x1b_Ga=t,f=100,i=42,q=2,m=1;"));
        assert!(chunks[1].starts_with("\x1b_Gm=0;"));
        let data: String = chunks
            .iter()
            .map(|chunk| chunk.split_once(';').unwrap().1)
            .collect();
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap(),
            png
        );
    }
}

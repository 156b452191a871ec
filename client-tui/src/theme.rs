//! Themes in pi's theme format (`{name, vars, colors}`: every colour role of pi's schema, each
//! a `#rrggbb`, a 256-colour index, a `vars` name, or `""` for the terminal's own colour).
//!
//! Rendering draws with roles, not colours: [`role`] gives each role a placeholder colour
//! that [`paint`] replaces, cell by cell, with the theme's colour for the terminal's
//! [`ColorMode`] (truecolor, else the nearest of the 256, else the role's named ANSI
//! colour). So a theme change (another name, or the file edited) redraws without touching a
//! cached layout. Text without a colour takes the theme's `text`, dim text its `dim`.
//!
//! Invariant: render code names colours only through [`role`] (a tidy test holds it);
//! placeholder colours never reach the terminal.

use std::collections::HashMap;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::Value;

/// The colour roles of pi's theme schema (its `colors` keys), in the schema's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Role {
    Accent,
    Border,
    BorderAccent,
    BorderMuted,
    Success,
    Error,
    Warning,
    Muted,
    Dim,
    Text,
    ThinkingText,
    SelectedBg,
    UserMessageBg,
    UserMessageText,
    CustomMessageBg,
    CustomMessageText,
    CustomMessageLabel,
    ToolPendingBg,
    ToolSuccessBg,
    ToolErrorBg,
    ToolTitle,
    ToolOutput,
    MdHeading,
    MdLink,
    MdLinkUrl,
    MdCode,
    MdCodeBlock,
    MdCodeBlockBorder,
    MdQuote,
    MdQuoteBorder,
    MdHr,
    MdListBullet,
    ToolDiffAdded,
    ToolDiffRemoved,
    ToolDiffContext,
    SyntaxComment,
    SyntaxKeyword,
    SyntaxFunction,
    SyntaxVariable,
    SyntaxString,
    SyntaxNumber,
    SyntaxType,
    SyntaxOperator,
    SyntaxPunctuation,
    ThinkingOff,
    ThinkingMinimal,
    ThinkingLow,
    ThinkingMedium,
    ThinkingHigh,
    ThinkingXhigh,
    BashMode,
}

/// Every role with its key in pi's `colors` and its colour on a 16-colour terminal
/// (`Reset`: the terminal's own; muted roles are bright black).
const ROLES: [(Role, &str, Color); 51] = [
    (Role::Accent, "accent", Color::Cyan),
    (Role::Border, "border", Color::Blue),
    (Role::BorderAccent, "borderAccent", Color::Cyan),
    (Role::BorderMuted, "borderMuted", Color::DarkGray),
    (Role::Success, "success", Color::Green),
    (Role::Error, "error", Color::Red),
    (Role::Warning, "warning", Color::Yellow),
    (Role::Muted, "muted", Color::DarkGray),
    (Role::Dim, "dim", Color::DarkGray),
    (Role::Text, "text", Color::Reset),
    (Role::ThinkingText, "thinkingText", Color::DarkGray),
    (Role::SelectedBg, "selectedBg", Color::Reset),
    (Role::UserMessageBg, "userMessageBg", Color::Reset),
    (Role::UserMessageText, "userMessageText", Color::Reset),
    (Role::CustomMessageBg, "customMessageBg", Color::Reset),
    (Role::CustomMessageText, "customMessageText", Color::Reset),
    (
        Role::CustomMessageLabel,
        "customMessageLabel",
        Color::Magenta,
    ),
    (Role::ToolPendingBg, "toolPendingBg", Color::Reset),
    (Role::ToolSuccessBg, "toolSuccessBg", Color::Reset),
    (Role::ToolErrorBg, "toolErrorBg", Color::Reset),
    (Role::ToolTitle, "toolTitle", Color::Reset),
    (Role::ToolOutput, "toolOutput", Color::DarkGray),
    (Role::MdHeading, "mdHeading", Color::Yellow),
    (Role::MdLink, "mdLink", Color::Blue),
    (Role::MdLinkUrl, "mdLinkUrl", Color::DarkGray),
    (Role::MdCode, "mdCode", Color::Cyan),
    (Role::MdCodeBlock, "mdCodeBlock", Color::Green),
    (
        Role::MdCodeBlockBorder,
        "mdCodeBlockBorder",
        Color::DarkGray,
    ),
    (Role::MdQuote, "mdQuote", Color::DarkGray),
    (Role::MdQuoteBorder, "mdQuoteBorder", Color::DarkGray),
    (Role::MdHr, "mdHr", Color::DarkGray),
    (Role::MdListBullet, "mdListBullet", Color::Cyan),
    (Role::ToolDiffAdded, "toolDiffAdded", Color::Green),
    (Role::ToolDiffRemoved, "toolDiffRemoved", Color::Red),
    (Role::ToolDiffContext, "toolDiffContext", Color::DarkGray),
    (Role::SyntaxComment, "syntaxComment", Color::DarkGray),
    (Role::SyntaxKeyword, "syntaxKeyword", Color::Magenta),
    (Role::SyntaxFunction, "syntaxFunction", Color::Blue),
    (Role::SyntaxVariable, "syntaxVariable", Color::Yellow),
    (Role::SyntaxString, "syntaxString", Color::Green),
    (Role::SyntaxNumber, "syntaxNumber", Color::Yellow),
    (Role::SyntaxType, "syntaxType", Color::Cyan),
    (Role::SyntaxOperator, "syntaxOperator", Color::Reset),
    (Role::SyntaxPunctuation, "syntaxPunctuation", Color::Reset),
    (Role::ThinkingOff, "thinkingOff", Color::DarkGray),
    (Role::ThinkingMinimal, "thinkingMinimal", Color::DarkGray),
    (Role::ThinkingLow, "thinkingLow", Color::Blue),
    (Role::ThinkingMedium, "thinkingMedium", Color::Cyan),
    (Role::ThinkingHigh, "thinkingHigh", Color::Magenta),
    (Role::ThinkingXhigh, "thinkingXhigh", Color::Magenta),
    (Role::BashMode, "bashMode", Color::Green),
];

/// The first placeholder index; roles take the next 51.
const PLACEHOLDER_BASE: u8 = 200;

/// The colour rendering draws `role` with (a placeholder [`paint`] replaces).
pub const fn role(role: Role) -> Color {
    Color::Indexed(PLACEHOLDER_BASE + role as u8)
}

fn role_of(color: Color) -> Option<Role> {
    match color {
        Color::Indexed(index) if index >= PLACEHOLDER_BASE => ROLES
            .get(usize::from(index - PLACEHOLDER_BASE))
            .map(|(role, _, _)| *role),
        _ => None,
    }
}

/// What the terminal shows of colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    /// 24-bit colour.
    TrueColor,
    /// The 256-colour palette.
    Ansi256,
    /// The 16 named colours.
    Ansi16,
}

impl ColorMode {
    /// pi's rule, from `COLORTERM`, `TERM` and `TERM_PROGRAM`: truecolor where the terminal
    /// says so and on nearly every terminal today; the 256 colours on Apple's Terminal and
    /// GNU screen; the 16 on the Linux console and terminals without colour names.
    pub fn detect(colorterm: Option<&str>, term: Option<&str>, program: Option<&str>) -> Self {
        if matches!(colorterm, Some("truecolor" | "24bit")) {
            return ColorMode::TrueColor;
        }
        let term = term.unwrap_or_default();
        if term == "linux" || term == "dumb" || term == "vt100" || term == "vt220" {
            ColorMode::Ansi16
        } else if program == Some("Apple_Terminal") || term.starts_with("screen") {
            ColorMode::Ansi256
        } else {
            ColorMode::TrueColor
        }
    }
}

/// One colour of a theme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThemeColor {
    /// `""`: the terminal's own.
    Default,
    /// `#rrggbb`.
    Rgb(u8, u8, u8),
    /// A 256-colour index.
    Indexed(u8),
}

/// A theme: a colour for every role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Theme {
    /// Its name (`dark`, `light`, or a custom theme's).
    pub name: String,
    colors: [ThemeColor; 51],
}

/// What is wrong with a theme file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ThemeError {
    /// Not JSON, or not an object.
    #[error("{label}: not a theme: {message}")]
    Malformed {
        /// The file or theme.
        label: String,
        /// The parser's words.
        message: String,
    },
    /// Roles without a colour.
    #[error(
        "{label}: `colors` lacks {}; a theme names every colour of pi's theme schema \
         (see pi's docs/themes.md)",
        .missing.join(", ")
    )]
    Missing {
        /// The file or theme.
        label: String,
        /// pi's keys of the missing roles.
        missing: Vec<String>,
    },
    /// A colour that is no colour.
    #[error(
        "{label}: `colors.{key}` is {value}, which is no colour: give \"#rrggbb\", a \
         256-colour index (0-255), a name from `vars`, or \"\" for the terminal's own"
    )]
    BadColor {
        /// The file or theme.
        label: String,
        /// The role's key.
        key: String,
        /// The value as written.
        value: String,
    },
}

impl Theme {
    /// The built-in dark theme.
    pub fn dark() -> Theme {
        Self::builtin(DARK)
    }

    /// The built-in light theme.
    pub fn light() -> Theme {
        Self::builtin(LIGHT)
    }

    /// A built-in theme by name.
    pub fn named_builtin(name: &str) -> Option<Theme> {
        match name {
            "dark" => Some(Self::dark()),
            "light" => Some(Self::light()),
            _ => None,
        }
    }

    fn builtin(json: &str) -> Theme {
        // The built-in files are tested to parse (`builtins_parse`).
        Theme::parse(json, "built-in").unwrap_or(Theme {
            name: "plain".to_owned(),
            colors: [ThemeColor::Default; 51],
        })
    }

    /// Reads a theme in pi's format; `label` names it in errors (its file).
    pub fn parse(json: &str, label: &str) -> Result<Theme, ThemeError> {
        let malformed = |message: String| ThemeError::Malformed {
            label: label.to_owned(),
            message,
        };
        let value: Value =
            serde_json::from_str(json).map_err(|error| malformed(error.to_string()))?;
        let Value::Object(object) = value else {
            return Err(malformed("expected a JSON object".to_owned()));
        };
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(label)
            .to_owned();
        let vars: HashMap<&str, &Value> = object
            .get("vars")
            .and_then(Value::as_object)
            .map(|vars| {
                vars.iter()
                    .map(|(key, value)| (key.as_str(), value))
                    .collect()
            })
            .unwrap_or_default();
        let Some(Value::Object(colors)) = object.get("colors") else {
            return Err(malformed("`colors` is missing or not an object".to_owned()));
        };
        let missing: Vec<String> = ROLES
            .iter()
            .filter(|(_, key, _)| !colors.contains_key(*key))
            .map(|(_, key, _)| (*key).to_owned())
            .collect();
        if !missing.is_empty() {
            return Err(ThemeError::Missing {
                label: label.to_owned(),
                missing,
            });
        }
        let mut resolved = [ThemeColor::Default; 51];
        for (index, (_, key, _)) in ROLES.iter().enumerate() {
            let value = &colors[*key];
            resolved[index] = resolve(value, &vars, 0).ok_or_else(|| ThemeError::BadColor {
                label: label.to_owned(),
                key: (*key).to_owned(),
                value: value.to_string(),
            })?;
        }
        Ok(Theme {
            name,
            colors: resolved,
        })
    }

    /// The theme's colour of `role`.
    pub fn color(&self, role: Role) -> ThemeColor {
        self.colors[role as usize]
    }

    /// What the terminal gets for `role` in `mode`.
    pub fn terminal_color(&self, role: Role, mode: ColorMode) -> Color {
        match (self.color(role), mode) {
            (ThemeColor::Default, _) => Color::Reset,
            (_, ColorMode::Ansi16) => ROLES[role as usize].2,
            (ThemeColor::Rgb(r, g, b), ColorMode::TrueColor) => Color::Rgb(r, g, b),
            (ThemeColor::Rgb(r, g, b), ColorMode::Ansi256) => Color::Indexed(nearest_256(r, g, b)),
            (ThemeColor::Indexed(index), _) => Color::Indexed(index),
        }
    }
}

/// A colour value: hex, index, `""`, or a `vars` name (followed at most 8 deep).
fn resolve(value: &Value, vars: &HashMap<&str, &Value>, depth: u8) -> Option<ThemeColor> {
    match value {
        Value::String(text) if text.is_empty() => Some(ThemeColor::Default),
        Value::String(text) if text.starts_with('#') => hex(text),
        Value::String(name) if depth < 8 => resolve(vars.get(name.as_str())?, vars, depth + 1),
        Value::Number(number) => u8::try_from(number.as_u64()?).ok().map(ThemeColor::Indexed),
        _ => None,
    }
}

fn hex(text: &str) -> Option<ThemeColor> {
    let digits = text.strip_prefix('#')?;
    if digits.len() != 6 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |at: usize| u8::from_str_radix(&digits[at..at + 2], 16).ok();
    Some(ThemeColor::Rgb(byte(0)?, byte(2)?, byte(4)?))
}

/// The nearest colour of the 256-colour palette's cube and grays.
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |value: u8| {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, level)| (i32::from(**level) - i32::from(value)).abs())
            .map_or(0, |(index, _)| index as u8)
    };
    let (cr, cg, cb) = (level(r), level(g), level(b));
    let cube = 16 + 36 * cr + 6 * cg + cb;
    let cube_rgb = (
        LEVELS[cr as usize],
        LEVELS[cg as usize],
        LEVELS[cb as usize],
    );
    let average = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let gray_index = (average.saturating_sub(8) / 10).min(23) as u8;
    let gray = 8 + 10 * gray_index;
    let distance = |(x, y, z): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    if distance((gray, gray, gray)) < distance(cube_rgb) {
        232 + gray_index
    } else {
        cube
    }
}

/// Replaces the placeholder colours of a drawn frame with `theme`'s, for `mode`; text
/// without a colour takes the theme's `text`, dim text without one its `dim`.
pub fn paint(buffer: &mut Buffer, theme: &Theme, mode: ColorMode) {
    let text = theme.terminal_color(Role::Text, mode);
    // On 16 colours the terminal's own dim is the closest.
    let dim = match mode {
        ColorMode::Ansi16 => Color::Reset,
        _ => theme.terminal_color(Role::Dim, mode),
    };
    for cell in &mut buffer.content {
        if let Some(role) = role_of(cell.fg) {
            cell.fg = theme.terminal_color(role, mode);
        } else if cell.fg == Color::Reset {
            if cell.modifier.contains(Modifier::DIM) && dim != Color::Reset {
                cell.fg = dim;
                cell.modifier.remove(Modifier::DIM);
            } else {
                cell.fg = text;
            }
        }
        if let Some(role) = role_of(cell.bg) {
            cell.bg = theme.terminal_color(role, mode);
        }
    }
}

const DARK: &str = include_str!("themes/dark.json");
const LIGHT: &str = include_str!("themes/light.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_have_their_names() {
        assert_eq!(
            Theme::parse(DARK, "dark.json").map(|t| t.name),
            Ok("dark".to_owned())
        );
        assert_eq!(
            Theme::parse(LIGHT, "light.json").map(|t| t.name),
            Ok("light".to_owned())
        );
        assert_eq!(Theme::dark().color(Role::Text), ThemeColor::Default);
    }

    #[test]
    fn roles_round_trip_through_their_placeholders() {
        for (index, (role, _, _)) in ROLES.iter().enumerate() {
            assert_eq!(*role as usize, index, "ROLES is in the enum's order");
            assert_eq!(role_of(super::role(*role)), Some(*role));
        }
        assert_eq!(role_of(Color::Cyan), None);
    }

    #[test]
    fn the_256_colour_fallback_picks_the_nearest() {
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(255, 255, 255), 231);
        assert_eq!(nearest_256(0x80, 0x80, 0x80), 244);
        assert_eq!(nearest_256(0xff, 0, 0), 196);
    }
}

//! Themes in pi's theme format (`{name, vars, colors}`: every colour role of pi's schema, each
//! a `#rrggbb`, a 256-colour index, a `vars` name, or `""` for the terminal's own colour).
//!
//! Rendering draws with roles, not colours: [`role`] gives each role a placeholder colour
//! that [`paint`] replaces, cell by cell, with the theme's colour for the terminal's
//! [`ColorMode`] (truecolor, else the nearest of the 256, else the nearest of the 16 named
//! colours). So a theme change (another name, or the file edited) redraws without touching a
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

/// Every role with its key in pi's `colors`.
const ROLES: [(Role, &str); 51] = [
    (Role::Accent, "accent"),
    (Role::Border, "border"),
    (Role::BorderAccent, "borderAccent"),
    (Role::BorderMuted, "borderMuted"),
    (Role::Success, "success"),
    (Role::Error, "error"),
    (Role::Warning, "warning"),
    (Role::Muted, "muted"),
    (Role::Dim, "dim"),
    (Role::Text, "text"),
    (Role::ThinkingText, "thinkingText"),
    (Role::SelectedBg, "selectedBg"),
    (Role::UserMessageBg, "userMessageBg"),
    (Role::UserMessageText, "userMessageText"),
    (Role::CustomMessageBg, "customMessageBg"),
    (Role::CustomMessageText, "customMessageText"),
    (Role::CustomMessageLabel, "customMessageLabel"),
    (Role::ToolPendingBg, "toolPendingBg"),
    (Role::ToolSuccessBg, "toolSuccessBg"),
    (Role::ToolErrorBg, "toolErrorBg"),
    (Role::ToolTitle, "toolTitle"),
    (Role::ToolOutput, "toolOutput"),
    (Role::MdHeading, "mdHeading"),
    (Role::MdLink, "mdLink"),
    (Role::MdLinkUrl, "mdLinkUrl"),
    (Role::MdCode, "mdCode"),
    (Role::MdCodeBlock, "mdCodeBlock"),
    (Role::MdCodeBlockBorder, "mdCodeBlockBorder"),
    (Role::MdQuote, "mdQuote"),
    (Role::MdQuoteBorder, "mdQuoteBorder"),
    (Role::MdHr, "mdHr"),
    (Role::MdListBullet, "mdListBullet"),
    (Role::ToolDiffAdded, "toolDiffAdded"),
    (Role::ToolDiffRemoved, "toolDiffRemoved"),
    (Role::ToolDiffContext, "toolDiffContext"),
    (Role::SyntaxComment, "syntaxComment"),
    (Role::SyntaxKeyword, "syntaxKeyword"),
    (Role::SyntaxFunction, "syntaxFunction"),
    (Role::SyntaxVariable, "syntaxVariable"),
    (Role::SyntaxString, "syntaxString"),
    (Role::SyntaxNumber, "syntaxNumber"),
    (Role::SyntaxType, "syntaxType"),
    (Role::SyntaxOperator, "syntaxOperator"),
    (Role::SyntaxPunctuation, "syntaxPunctuation"),
    (Role::ThinkingOff, "thinkingOff"),
    (Role::ThinkingMinimal, "thinkingMinimal"),
    (Role::ThinkingLow, "thinkingLow"),
    (Role::ThinkingMedium, "thinkingMedium"),
    (Role::ThinkingHigh, "thinkingHigh"),
    (Role::ThinkingXhigh, "thinkingXhigh"),
    (Role::BashMode, "bashMode"),
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
            .map(|(role, _)| *role),
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
        "{label}: `colors.{key}` is {value}: give \"#rrggbb\", a 256-colour index (0-255), a \
         name from `vars`, or \"\" for the terminal's own"
    )]
    BadColor {
        /// The file or theme.
        label: String,
        /// The role's key.
        key: String,
        /// The value as written, or what it led to.
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
            .filter(|(_, key)| !colors.contains_key(*key))
            .map(|(_, key)| (*key).to_owned())
            .collect();
        if !missing.is_empty() {
            return Err(ThemeError::Missing {
                label: label.to_owned(),
                missing,
            });
        }
        let mut resolved = [ThemeColor::Default; 51];
        for (index, (_, key)) in ROLES.iter().enumerate() {
            let mut trail = Vec::new();
            resolved[index] = resolve(&colors[*key], &vars, &mut trail).map_err(|value| {
                ThemeError::BadColor {
                    label: label.to_owned(),
                    key: (*key).to_owned(),
                    value,
                }
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
            (ThemeColor::Rgb(r, g, b), ColorMode::TrueColor) => Color::Rgb(r, g, b),
            (ThemeColor::Rgb(r, g, b), ColorMode::Ansi256) => Color::Indexed(nearest_256(r, g, b)),
            (ThemeColor::Rgb(r, g, b), ColorMode::Ansi16) => nearest_16(r, g, b),
            (ThemeColor::Indexed(index), ColorMode::Ansi16) if index >= 16 => {
                let (r, g, b) = palette_rgb(index);
                nearest_16(r, g, b)
            }
            (ThemeColor::Indexed(index), _) => Color::Indexed(index),
        }
    }
}

/// A colour value: hex, index, `""`, or a `vars` name (`trail`: the names followed so far).
/// The error says what the value led to, for the message.
fn resolve<'a>(
    value: &'a Value,
    vars: &HashMap<&'a str, &'a Value>,
    trail: &mut Vec<&'a str>,
) -> Result<ThemeColor, String> {
    let said = |value: &Value, trail: &[&str]| match trail.last() {
        Some(name) => format!("{value} (through `vars.{name}`)"),
        None => value.to_string(),
    };
    match value {
        Value::String(text) if text.is_empty() => Ok(ThemeColor::Default),
        Value::String(text) if text.starts_with('#') => hex(text).ok_or_else(|| said(value, trail)),
        Value::String(name) => {
            if trail.contains(&name.as_str()) {
                trail.push(name);
                return Err(format!("a loop of `vars`: {}", trail.join(" → ")));
            }
            let Some(next) = vars.get(name.as_str()) else {
                return Err(format!("{value}, which is not in `vars`"));
            };
            trail.push(name);
            resolve(next, vars, trail)
        }
        Value::Number(number) => number
            .as_u64()
            .and_then(|index| u8::try_from(index).ok())
            .map(ThemeColor::Indexed)
            .ok_or_else(|| said(value, trail)),
        _ => Err(said(value, trail)),
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

/// The named colour of `r, g, b` on a 16-colour terminal, by hue: grays stay gray (bright
/// black when dark), the others become the named colour of their hue. (Nearness by distance
/// turns a theme's soft colours into grays.)
fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let chroma = max - min;
    if chroma < 40 {
        return if max < 160 {
            Color::DarkGray
        } else {
            Color::Gray
        };
    }
    let hue = if max == r {
        (60 * (g - b) / chroma).rem_euclid(360)
    } else if max == g {
        60 * (b - r) / chroma + 120
    } else {
        60 * (r - g) / chroma + 240
    };
    match hue {
        0..20 | 340..360 => Color::Red,
        20..75 => Color::Yellow,
        75..165 => Color::Green,
        165..195 => Color::Cyan,
        195..255 => Color::Blue,
        _ => Color::Magenta,
    }
}

/// xterm's values of the 16 named colours (for a 256-colour index under 16).
const NAMED: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

/// The levels of the 256-colour palette's 6x6x6 cube.
const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The colour of a 256-colour palette index (16 and up: the cube and the grays).
fn palette_rgb(index: u8) -> (u8, u8, u8) {
    match index {
        0..=15 => NAMED[usize::from(index)],
        16..=231 => {
            let cube = index - 16;
            (
                LEVELS[usize::from(cube / 36)],
                LEVELS[usize::from(cube / 6 % 6)],
                LEVELS[usize::from(cube % 6)],
            )
        }
        _ => {
            let gray = 8 + 10 * (index - 232);
            (gray, gray, gray)
        }
    }
}

/// The nearest colour of the 256-colour palette's cube and grays.
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
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
        for (index, (role, _)) in ROLES.iter().enumerate() {
            assert_eq!(*role as usize, index, "ROLES is in the enum's order");
            assert_eq!(role_of(super::role(*role)), Some(*role));
        }
        assert_eq!(role_of(Color::Cyan), None);
    }

    #[test]
    fn bad_colours_say_where_they_went_wrong() {
        let theme = |accent: &str, vars: &str| {
            let mut json: serde_json::Value = serde_json::from_str(DARK).unwrap();
            json["colors"]["accent"] = serde_json::from_str(accent).unwrap();
            json["vars"] = serde_json::from_str(vars).unwrap();
            Theme::parse(&json.to_string(), "t.json")
                .unwrap_err()
                .to_string()
        };
        let advice = ": give \"#rrggbb\", a 256-colour index (0-255), a name from `vars`, or \
                      \"\" for the terminal's own";
        assert_eq!(
            theme("\"a\"", r##"{"a": "#zz00ff"}"##),
            format!("t.json: `colors.accent` is \"#zz00ff\" (through `vars.a`){advice}")
        );
        assert_eq!(
            theme("\"a\"", r#"{"a": "b", "b": "a"}"#),
            format!("t.json: `colors.accent` is a loop of `vars`: a → b → a{advice}")
        );
        assert_eq!(
            theme("\"nope\"", "{}"),
            format!("t.json: `colors.accent` is \"nope\", which is not in `vars`{advice}")
        );
        assert_eq!(
            theme("300", "{}"),
            format!("t.json: `colors.accent` is 300{advice}")
        );
    }

    #[test]
    fn sixteen_colour_terminals_get_the_nearest_named_colour() {
        assert_eq!(nearest_16(0xff, 0x10, 0x10), Color::Red);
        assert_eq!(nearest_16(0x10, 0x10, 0xc0), Color::Blue);
        // The built-in dark theme's soft colours keep their hue.
        assert_eq!(nearest_16(0x9c, 0xcc, 0x65), Color::Green);
        assert_eq!(nearest_16(0xe0, 0x6c, 0x75), Color::Red);
        assert_eq!(nearest_16(0xe5, 0xc0, 0x7b), Color::Yellow);
        assert_eq!(nearest_16(0x7e, 0xc8, 0xb8), Color::Cyan);
        assert_eq!(nearest_16(0x6f, 0x9f, 0xff), Color::Blue);
        assert_eq!(nearest_16(0x8a, 0x8a, 0x8a), Color::DarkGray);
        let mut red = Theme::dark();
        red.colors[Role::Accent as usize] = ThemeColor::Rgb(200, 0, 0);
        assert_eq!(
            red.terminal_color(Role::Accent, ColorMode::Ansi16),
            Color::Red
        );
        red.colors[Role::Accent as usize] = ThemeColor::Indexed(46);
        assert_eq!(
            red.terminal_color(Role::Accent, ColorMode::Ansi16),
            Color::Green
        );
    }

    #[test]
    fn the_256_colour_fallback_picks_the_nearest() {
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(255, 255, 255), 231);
        assert_eq!(nearest_256(0x80, 0x80, 0x80), 244);
        assert_eq!(nearest_256(0xff, 0, 0), 196);
    }
}

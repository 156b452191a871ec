//! Syntax highlighting of code blocks with syntect's bundled grammars, coloured by scope with
//! named ANSI colours only (no theme, no RGB), so the terminal's palette decides the look.
//!
//! The grammars load once, lazily, on the first code block.

use std::sync::OnceLock;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use syntect::parsing::{ParseState, Scope, ScopeStack, ScopeStackOp, SyntaxReference, SyntaxSet};

/// Lines longer than this are not highlighted (minified files would be slow and unreadable).
const MAX_HIGHLIGHT_LINE: usize = 2000;

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Loads the grammars now (they otherwise load on the first code block drawn); call from a
/// background thread at startup so the first frame with code does not stall.
pub fn warm_up() {
    syntaxes();
}

/// Finds a grammar by fence token (`rust`, `rs`, `py`, `sh`, ...).
fn find_syntax(language: &str) -> Option<&'static SyntaxReference> {
    let language = language.trim().split([',', ' ']).next().unwrap_or_default();
    if language.is_empty() {
        return None;
    }
    let set = syntaxes();
    let alias = match language.to_ascii_lowercase().as_str() {
        "shell" | "bash" | "zsh" | "console" => "sh".to_owned(),
        "typescript" | "ts" | "tsx" => "js".to_owned(),
        "jsonc" | "json5" => "json".to_owned(),
        "toml" => "ini".to_owned(),
        other => other.to_owned(),
    };
    set.find_syntax_by_token(&alias)
        .or_else(|| set.find_syntax_by_extension(&alias))
}

/// Highlights `code` as `language`; one `Vec<Span>` per line. Unknown languages come back
/// unstyled.
pub fn highlight(code: &str, language: &str) -> Vec<Vec<Span<'static>>> {
    let Some(syntax) = find_syntax(language) else {
        return code
            .lines()
            .map(|line| vec![Span::raw(line.to_owned())])
            .collect();
    };
    let set = syntaxes();
    let mut parse_state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut lines = Vec::new();
    for line in code.lines() {
        if line.len() > MAX_HIGHLIGHT_LINE {
            lines.push(vec![Span::raw(line.to_owned())]);
            continue;
        }
        let with_newline = format!("{line}\n");
        let Ok(ops) = parse_state.parse_line(&with_newline, set) else {
            lines.push(vec![Span::raw(line.to_owned())]);
            continue;
        };
        let mut spans = Vec::new();
        let mut position = 0;
        for (offset, op) in ops {
            let offset = offset.min(line.len());
            if offset > position {
                spans.push(Span::styled(
                    line[position..offset].to_owned(),
                    style_for(&stack),
                ));
                position = offset;
            }
            apply_op(&mut stack, &op);
        }
        if position < line.len() {
            spans.push(Span::styled(line[position..].to_owned(), style_for(&stack)));
        }
        lines.push(spans);
    }
    lines
}

fn apply_op(stack: &mut ScopeStack, op: &ScopeStackOp) {
    // A malformed grammar op only loses colour; never fail rendering over it.
    let _ = stack.apply(op);
}

/// The style of the innermost scope we have a colour for.
fn style_for(stack: &ScopeStack) -> Style {
    for scope in stack.as_slice().iter().rev() {
        if let Some(style) = scope_style(*scope) {
            return style;
        }
    }
    Style::default()
}

fn scope_style(scope: Scope) -> Option<Style> {
    let name = scope.build_string();
    let starts = |prefix: &str| name.starts_with(prefix);
    use crate::theme::{Role, role};
    let color = if starts("comment") {
        return Some(
            Style::default()
                .fg(role(Role::SyntaxComment))
                .add_modifier(Modifier::ITALIC),
        );
    } else if starts("string") {
        role(Role::SyntaxString)
    } else if starts("constant.numeric")
        || starts("constant.language")
        || starts("constant.character")
    {
        role(Role::SyntaxNumber)
    } else if starts("keyword.operator") {
        role(Role::SyntaxOperator)
    } else if starts("keyword") || starts("storage") {
        role(Role::SyntaxKeyword)
    } else if starts("entity.name.function") || starts("support.function") {
        role(Role::SyntaxFunction)
    } else if starts("entity.name.type")
        || starts("support.type")
        || starts("entity.name.class")
        || starts("support.class")
    {
        role(Role::SyntaxType)
    } else if starts("entity.name.tag") {
        role(Role::SyntaxKeyword)
    } else if starts("variable.parameter") || starts("entity.other.attribute-name") {
        role(Role::SyntaxVariable)
    } else if starts("punctuation") {
        role(Role::SyntaxPunctuation)
    } else if starts("markup.inserted") {
        role(Role::ToolDiffAdded)
    } else if starts("markup.deleted") {
        role(Role::ToolDiffRemoved)
    } else if starts("markup.heading") {
        return Some(Style::default().add_modifier(Modifier::BOLD));
    } else {
        return None;
    };
    Some(Style::default().fg(color))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_the_themes_syntax_roles_and_unknown_ones_stay_plain() {
        use crate::theme::{Role, role};
        let lines = highlight("fn main() { let x = \"hi\"; } // done", "rust");
        let colours: Vec<(String, Option<ratatui::style::Color>)> = lines[0]
            .iter()
            .filter(|span| !span.content.trim().is_empty())
            .map(|span| (span.content.to_string(), span.style.fg))
            .collect();
        assert!(
            colours.contains(&("fn".to_owned(), Some(role(Role::SyntaxKeyword)))),
            "{colours:?}"
        );
        assert!(
            colours.contains(&("main".to_owned(), Some(role(Role::SyntaxFunction)))),
            "{colours:?}"
        );
        assert!(
            colours
                .iter()
                .any(|(text, colour)| text.contains("hi")
                    && *colour == Some(role(Role::SyntaxString))),
            "{colours:?}"
        );
        let plain = highlight("whatever", "no-such-language");
        assert_eq!(plain, vec![vec![Span::raw("whatever")]]);
    }
}

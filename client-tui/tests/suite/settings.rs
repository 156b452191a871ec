//! pi's interactive-mode settings, as `settings/get` gives them: each changes what the TUI
//! does or draws (`doubleEscapeAction`, `treeFilterMode`, `editorPaddingX`,
//! `autocompleteMaxVisible`, `showHardwareCursor`, `quietStartup`, `markdown.codeBlockIndent`,
//! `terminal.showTerminalProgress`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use pi_protocol::v1::message::*;
use pi_protocol::v1::*;
use pi_tui::effect::{Effect, Request};
use pi_tui::input::{Input, Reply};
use pi_tui::state::{DoubleEscape, TreeFilter};
use serde_json::json;

use super::support::*;

fn esc_at(now_ms: u64) -> Input {
    Input::Key {
        event: KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
        now_ms,
    }
}

/// The tree requests among the effects.
fn tree_requests(effects: Vec<Effect>) -> Vec<Effect> {
    effects
        .into_iter()
        .filter(|effect| matches!(effect, Effect::Request(Request::ReadTree { .. })))
        .collect()
}

#[test]
fn esc_twice_on_an_empty_editor_opens_what_double_escape_action_names() {
    let mut harness = Harness::attached(history(vec![user("first")]));
    harness.take_effects();
    assert_eq!(harness.state.prefs.double_escape, DoubleEscape::Tree);
    // pi's default: the tree.
    harness.send(esc_at(10_000)).send(esc_at(10_300));
    assert_eq!(
        tree_requests(harness.take_effects()),
        [Effect::Request(Request::ReadTree { for_fork: false })]
    );
    harness.state.overlay = None;

    // Too slow: nothing; a third press pairs with the second.
    harness.send(esc_at(20_000)).send(esc_at(20_800));
    assert_eq!(tree_requests(harness.take_effects()), []);
    harness.send(esc_at(21_000));
    assert_eq!(tree_requests(harness.take_effects()).len(), 1);
    harness.state.overlay = None;

    // Text in the editor: Esc does not open anything.
    harness.type_text("draft");
    harness.send(esc_at(30_000)).send(esc_at(30_100));
    assert_eq!(tree_requests(harness.take_effects()), []);
    harness.state.editor = Default::default();

    harness.send(Input::Reply(settings(
        json!({"doubleEscapeAction": "fork"}),
    )));
    harness.send(esc_at(40_000)).send(esc_at(40_200));
    assert_eq!(
        tree_requests(harness.take_effects()),
        [Effect::Request(Request::ReadTree { for_fork: true })]
    );
    harness.state.overlay = None;

    harness.send(Input::Reply(settings(
        json!({"doubleEscapeAction": "none"}),
    )));
    harness.send(esc_at(50_000)).send(esc_at(50_200));
    assert_eq!(tree_requests(harness.take_effects()), []);
    assert!(harness.state.overlay.is_none());
}

#[test]
fn esc_twice_while_a_run_goes_on_aborts_and_does_not_open_the_tree() {
    let mut harness = Harness::attached(history(vec![user("first")]));
    harness.send(event(2, SessionEvent::AgentStart));
    harness.take_effects();
    harness.send(esc_at(10_000)).send(esc_at(10_200));
    let effects = harness.take_effects();
    assert!(
        effects
            .iter()
            .any(|effect| matches!(effect, Effect::Request(Request::Abort))),
        "{effects:?}"
    );
    assert_eq!(tree_requests(effects), []);
}

/// A session whose tree has every kind of row pi's filters tell apart.
fn tree_entries() -> Vec<EntryRecord> {
    let calls = AgentMessage::Assistant(assistant(
        vec![tool_call("c1", "read", json!({"path": "src/lib.rs"}))],
        StopReason::ToolUse,
    ));
    let answer = AgentMessage::Assistant(assistant(
        vec![reply_text("The parser is fixed")],
        StopReason::Stop,
    ));
    vec![
        entry("u1", None, 1, user("Fix the parser")),
        entry("a1", Some("u1"), 2, calls),
        entry(
            "t1",
            Some("a1"),
            3,
            tool_result("c1", "read", "fn parse() {}", json!({}), false),
        ),
        entry("a2", Some("t1"), 4, answer),
        EntryRecord {
            seq: 5,
            entry: SessionEntry::ModelChange {
                id: "m1".into(),
                parent_id: Some("a2".into()),
                timestamp: "2026-11-27T10:00:00.000Z".into(),
                provider: "anthropic".into(),
                model_id: "claude-sonnet-4-5".into(),
            },
        },
        entry("u2", Some("m1"), 6, user("Now add tests")),
        EntryRecord {
            seq: 7,
            entry: SessionEntry::Label {
                id: "l1".into(),
                parent_id: Some("u2".into()),
                timestamp: "2026-11-27T10:00:01.000Z".into(),
                target_id: "a2".into(),
                label: Some("fixed".into()),
            },
        },
    ]
}

fn open_tree(harness: &mut Harness) {
    harness.type_text("/tree");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(Reply::Tree {
        entries: tree_entries(),
        leaf_id: Some("l1".into()),
        for_fork: false,
    }));
}

#[test]
fn the_tree_filters_as_pis_and_its_keys_switch_the_filter() {
    let mut harness = Harness::attached(history(vec![user("Fix the parser")]));
    open_tree(&mut harness);
    let mut screens = vec![format!("=== default ===\n{}", harness.screen(72, 14))];
    for (name, input) in [
        ("ctrl+t: no tool results", ctrl('t')),
        ("ctrl+u: user messages", ctrl('u')),
        ("ctrl+l: labeled entries", ctrl('l')),
        ("ctrl+a: everything", ctrl('a')),
        ("ctrl+a again: back to the default", ctrl('a')),
        (
            "shift+ctrl+o: backwards, to everything",
            key_with(
                KeyCode::Char('O'),
                KeyModifiers::CONTROL | KeyModifiers::SHIFT,
            ),
        ),
        ("ctrl+o: forwards, to the default", ctrl('o')),
    ] {
        harness.send(input);
        screens.push(format!("=== {name} ===\n{}", harness.screen(72, 14)));
    }
    assert_snapshot!(screens.join("\n"));
}

#[test]
fn the_tree_keeps_the_highlighted_entry_and_the_query_across_filters() {
    let mut harness = Harness::attached(history(vec![user("Fix the parser")]));
    open_tree(&mut harness);
    harness.type_text("tests");
    harness.send(ctrl('u'));
    let screen = harness.screen(72, 12);
    assert!(screen.contains("[user]"), "{screen}");
    assert!(screen.contains("user: Now add tests"), "{screen}");
    assert!(
        !screen.contains("Fix the parser"),
        "the query holds:\n{screen}"
    );
    harness.send(key(KeyCode::Enter));
    // Enter on a tree row asks whether to summarize what it leaves, for the chosen entry.
    harness.send(key(KeyCode::Enter));
    let effects = harness.take_effects();
    assert!(
        effects.iter().any(|effect| matches!(
            effect,
            Effect::Request(Request::Navigate { entry_id, .. }) if entry_id == "u2"
        )),
        "{effects:?}"
    );
}

#[test]
fn tree_filter_mode_is_the_filter_the_tree_opens_with() {
    let mut harness = Harness::attached(history(vec![user("Fix the parser")]));
    harness.send(Input::Reply(settings(
        json!({"treeFilterMode": "user-only"}),
    )));
    assert_eq!(harness.state.prefs.tree_filter, TreeFilter::UserOnly);
    open_tree(&mut harness);
    let screen = harness.screen(72, 12);
    assert!(screen.contains("Session tree [user]"), "{screen}");
    assert!(screen.contains("user: Fix the parser"), "{screen}");
    assert!(!screen.contains("assistant:"), "{screen}");
}

#[test]
fn editor_padding_autocomplete_rows_and_the_cursor_follow_the_settings() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/");
    // pi's defaults: no padding, five completions, a drawn cursor (the terminal's is hidden).
    let (buffer, cursor) = harness.render_with_cursor(60, 16);
    let defaults = format!("{}\n--- cursor {cursor:?}", screen_text(&buffer));

    harness.send(Input::Reply(settings(json!({
        "editorPaddingX": 2,
        "autocompleteMaxVisible": 3,
        "showHardwareCursor": true,
    }))));
    let (buffer, cursor) = harness.render_with_cursor(60, 16);
    assert_eq!(
        cursor,
        (2 + 2 + 1, 12),
        "after the prompt, the padding and `/`"
    );
    let changed = format!("{}\n--- cursor {cursor:?}", screen_text(&buffer));
    assert_snapshot!(format!(
        "=== defaults ===\n{defaults}\n=== padding 2, 3 rows, hardware cursor ===\n{changed}"
    ));
}

#[test]
fn the_drawn_cursor_is_the_reversed_cell_under_it() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("abc");
    harness.send(key(KeyCode::Left));
    let screen = harness.styled_screen(40, 8);
    assert!(
        screen.contains("reversed           c"),
        "the cell under the cursor is reversed:\n{screen}"
    );
    harness.send(Input::Reply(settings(json!({"showHardwareCursor": true}))));
    let screen = harness.styled_screen(40, 8);
    assert!(!screen.contains("reversed"), "{screen}");
}

#[test]
fn code_block_indent_indents_code_blocks() {
    let mut harness = Harness::attached(history(vec![
        user("Show me"),
        AgentMessage::Assistant(assistant(
            vec![reply_text("Here:\n\n```rust\nfn main() {}\n```")],
            StopReason::Stop,
        )),
    ]));
    let two = harness.screen(50, 12);
    assert!(two.contains("\n│  fn main() {}"), "{two}");
    harness.send(Input::Reply(settings(
        json!({"markdown": {"codeBlockIndent": "    "}}),
    )));
    let four = harness.screen(50, 12);
    assert!(four.contains("\n│    fn main() {}"), "{four}");
}

#[test]
fn the_startup_header_lists_what_the_session_loaded_unless_quiet_startup() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(session_details(
        vec![
            SlashCommand {
                name: "review".into(),
                description: "Review".into(),
                source: "template".into(),
            },
            SlashCommand {
                name: "skill:pdf".into(),
                description: "PDF files".into(),
                source: "skill".into(),
            },
            SlashCommand {
                name: "mcp:docs:search".into(),
                description: "An MCP prompt".into(),
                source: "mcp".into(),
            },
        ],
        Vec::new(),
        vec![
            "/home/me/.pi/agent/AGENTS.md".into(),
            "/home/me/projects/pi/AGENTS.md".into(),
        ],
        vec!["/home/me/.pi/agent/extensions/plan-mode.ts".into()],
    )));
    let full = harness.screen(64, 20);
    harness.send(Input::Reply(settings(json!({"quietStartup": true}))));
    let quiet = harness.screen(64, 20);
    assert!(!quiet.contains("[Context]") && !quiet.contains("ctrl+r history"));
    // `--verbose` shows it anyway.
    harness.state.environment.verbose = true;
    harness.send(Input::Reply(settings(json!({"quietStartup": true}))));
    assert_eq!(harness.screen(64, 20), full);
    assert_snapshot!(format!(
        "=== default ===\n{full}\n=== quietStartup ===\n{quiet}"
    ));
}

#[test]
fn the_tree_of_an_empty_session_is_a_notice_not_an_empty_list() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(esc_at(10_000)).send(esc_at(10_200));
    harness.send(Input::Reply(Reply::Tree {
        entries: Vec::new(),
        leaf_id: None,
        for_fork: false,
    }));
    assert!(harness.state.overlay.is_none());
    let screen = harness.screen(60, 10);
    assert!(screen.contains("Nothing in the session yet."), "{screen}");
    // What is typed next goes to the editor.
    harness.type_text("!echo hi");
    assert_eq!(harness.state.editor.text(), "!echo hi");
}

#[test]
fn the_theme_setting_asks_for_its_theme_and_a_problem_is_said() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.send(Input::Reply(settings(
        json!({"theme": "ocean", "themes": ["/home/me/themes"]}),
    )));
    assert_eq!(
        harness.take_effects(),
        [Effect::LoadTheme(pi_tui::state::ThemeChoice {
            name: Some("ocean".into()),
            paths: vec!["/home/me/themes".into()],
            discover: true,
        })]
    );
    // The same settings again: nothing to load.
    harness.send(Input::Reply(settings(
        json!({"theme": "ocean", "themes": ["/home/me/themes"]}),
    )));
    assert_eq!(harness.take_effects(), []);
    harness.send(Input::Theme {
        theme: std::sync::Arc::new(pi_tui::theme::Theme::light()),
        problem: Some("no theme \"ocean\"; the dark theme is used".into()),
    });
    assert_eq!(harness.state.theme.name, "light");
    let screen = harness.screen(70, 10);
    assert!(
        screen.contains("Warning: no theme \"ocean\"; the dark theme is used"),
        "{screen}"
    );
}

#[test]
fn every_colour_is_the_themes_on_a_truecolor_terminal() {
    use pi_tui::theme::{ColorMode, Role, Theme, ThemeColor};
    let mut harness = Harness::attached(history(vec![
        user("Show me"),
        AgentMessage::Assistant(assistant(
            vec![reply_text(
                "# Plan\n\nUse `cargo` and [docs](https://docs.rs).",
            )],
            StopReason::Stop,
        )),
    ]));
    harness.state.color_mode = ColorMode::TrueColor;
    let screen = harness.styled_screen(60, 12);
    let rgb = |role: Role| match Theme::dark().color(role) {
        ThemeColor::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        other => panic!("{other:?}"),
    };
    // The heading, inline code, the link and dim text in the dark theme's colours; no
    // named colour is left.
    for role in [
        Role::MdHeading,
        Role::MdCode,
        Role::MdLink,
        Role::Accent,
        Role::Dim,
    ] {
        assert!(
            screen.contains(&rgb(role)),
            "{role:?} {}\n{screen}",
            rgb(role)
        );
    }
    for named in ["cyan", "yellow", "blue", "magenta", "dim "] {
        assert!(!screen.contains(named), "{named}:\n{screen}");
    }
    // The 256-colour terminal gets the nearest palette entries.
    harness.state.color_mode = ColorMode::Ansi256;
    let screen = harness.styled_screen(60, 12);
    assert!(!screen.contains('#'), "no RGB on 256 colours:\n{screen}");
    assert_snapshot!(screen);
}

#[test]
fn warnings_found_before_the_attach_show_under_the_header() {
    let mut harness = Harness::new();
    harness
        .state
        .startup_warnings
        .push("Warning: /home/me/.pi/agent/settings.json: `editorPaddingX`: expected a whole number from 0 to 3, found \"wide\"; the value is ignored".to_owned());
    harness.send(Input::Theme {
        theme: std::sync::Arc::new(pi_tui::theme::Theme::dark()),
        problem: Some("no theme \"nowhere\"; the dark theme is used".to_owned()),
    });
    harness.attach(info(0), Vec::new());
    assert!(harness.state.startup_warnings.is_empty(), "said once");
    let screen = harness.screen(100, 16);
    assert!(
        screen.contains("ctrl+r history"),
        "the header stays:\n{screen}"
    );
    assert!(
        screen.contains("`editorPaddingX`: expected a whole number"),
        "{screen}"
    );
    assert!(
        screen.contains("Warning: no theme \"nowhere\"; the dark theme is used"),
        "{screen}"
    );
}

#[test]
fn shift_l_edits_the_selected_entrys_label_and_shift_t_shows_when_labels_were_set() {
    let mut harness = Harness::attached(history(vec![user("Fix the parser")]));
    open_tree(&mut harness);
    // Ctrl+L: the labeled entries, the one labelled `fixed` highlighted.
    harness.send(ctrl('l'));
    let screen = harness.screen(90, 14);
    assert!(screen.contains("[fixed]"), "{screen}");
    harness.send(key_with(KeyCode::Char('T'), KeyModifiers::SHIFT));
    let screen = harness.screen(90, 14);
    assert!(screen.contains("[fixed · 2026-11-27 10:00]"), "{screen}");
    harness.send(key_with(KeyCode::Char('T'), KeyModifiers::SHIFT));
    assert!(harness.screen(90, 14).contains("[fixed]"));
    // Shift+L: the label to edit, Esc back to the tree as it was.
    harness.send(key_with(KeyCode::Char('L'), KeyModifiers::SHIFT));
    let screen = harness.screen(90, 14);
    assert!(screen.contains("Label (empty clears)"), "{screen}");
    assert!(screen.contains("> fixed"), "{screen}");
    harness.send(key(KeyCode::Esc));
    assert!(harness.screen(90, 14).contains("[fixed]"));
    // Edited and saved: set through the daemon, and the tree read again.
    harness.send(key_with(KeyCode::Char('L'), KeyModifiers::SHIFT));
    harness.take_effects();
    harness.type_text(" twice");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.take_effects(),
        [Effect::Request(Request::LabelInTree {
            entry_id: "a2".to_owned(),
            label: "fixed twice".to_owned(),
        })]
    );
}

#[test]
fn slash_settings_lists_the_values_in_effect_and_saves_the_one_chosen() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(settings(
        serde_json::json!({"terminal": {"showImages": false, "imageWidthCells": 40}}),
    )));
    harness.type_text("/settings");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(100, 40);
    assert!(
        screen.contains("Settings (saved to pi's settings.json)"),
        "{screen}"
    );
    assert!(screen.contains("Auto-compact  true"), "{screen}");
    assert!(screen.contains("Show images  false"), "{screen}");
    harness.type_text("show images");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(100, 40);
    // The value in effect is marked and highlighted.
    assert!(screen.contains("● false"), "{screen}");
    harness.send(key(KeyCode::Up));
    harness.take_effects();
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.take_effects(),
        [Effect::Request(Request::SaveSetting {
            key: "terminal.showImages".to_owned(),
            value: serde_json::json!(true),
        })]
    );
    harness.send(Input::Reply(Reply::SettingSaved {
        key: "terminal.showImages".to_owned(),
        file: "/home/me/.pi/agent/settings.json".to_owned(),
    }));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Saved terminal.showImages in /home/me/.pi/agent/settings.json.")
    );
    assert_eq!(harness.take_effects(), [Effect::Request(Request::Settings)]);
}

#[test]
fn ctrl_left_and_right_fold_branches_and_move_between_segments_as_pi() {
    let mut harness = Harness::attached(history(vec![user("Fix the parser")]));
    harness.type_text("/tree");
    harness.send(key(KeyCode::Enter));
    // u1 forks into two branches: a1 → u2 → a3, and b1.
    let answer =
        |text: &str| AgentMessage::Assistant(assistant(vec![reply_text(text)], StopReason::Stop));
    harness.send(Input::Reply(Reply::Tree {
        entries: vec![
            entry("u1", None, 1, user("Fix the parser")),
            entry("a1", Some("u1"), 2, answer("First try")),
            entry("u2", Some("a1"), 3, user("Add tests")),
            entry("a3", Some("u2"), 4, answer("Tests added")),
            entry("b1", Some("u1"), 5, answer("Second try")),
        ],
        leaf_id: Some("a3".into()),
        for_fork: false,
    }));
    let selected = |harness: &Harness| match &harness.state.overlay {
        Some(pi_tui::overlay::Overlay::Select(selector)) => {
            selector.selected().map(|item| item.value.clone())
        }
        other => panic!("no tree: {other:?}"),
    };
    // On the leaf: Ctrl+← goes up to its segment's start (a1, the fork's first child).
    assert_eq!(selected(&harness).as_deref(), Some("a3"));
    harness.send(key_with(KeyCode::Left, KeyModifiers::CONTROL));
    assert_eq!(selected(&harness).as_deref(), Some("a1"));
    // There, it folds the segment: its entries go, the fold is marked.
    harness.send(key_with(KeyCode::Left, KeyModifiers::CONTROL));
    let screen = harness.screen(90, 16);
    assert!(screen.contains("⊞ assistant: First try"), "{screen}");
    assert!(!screen.contains("Add tests"), "{screen}");
    // Alt+→ unfolds it, then walks down to the branch's end.
    harness.send(key_with(KeyCode::Right, KeyModifiers::ALT));
    assert!(harness.screen(90, 16).contains("Add tests"));
    harness.send(key_with(KeyCode::Right, KeyModifiers::ALT));
    assert_eq!(selected(&harness).as_deref(), Some("a3"));
}

#[test]
fn the_startup_header_lists_the_custom_themes_as_pi() {
    let mut harness = Harness::attached(Vec::new());
    harness.state.loaded.themes = vec!["ocean".to_owned(), "forest".to_owned()];
    let screen = harness.screen(80, 24);
    assert!(screen.contains("[Themes]"), "{screen}");
    assert!(screen.contains("  ocean, forest"), "{screen}");
}

//! pi's keys: `keybindings.json` with pi's namespaced ids and its older names, every editor
//! key remappable, the kill ring, undo, jumps, Ctrl+G's external editor and Ctrl+Z, and
//! `/hotkeys` generated from the effective keys, scrolling at 80x24.

use crossterm::event::{KeyCode, KeyModifiers};
use pi_tui::effect::Effect;
use pi_tui::input::Input;
use pi_tui::keymap::Keymap;

use super::support::*;

fn alt(c: char) -> Input {
    key_with(KeyCode::Char(c), KeyModifiers::ALT)
}

#[test]
fn a_keybindings_file_with_pis_ids_and_its_older_names_remaps_editor_and_app_keys() {
    let mut harness = Harness::attached(Vec::new());
    let (keymap, warnings) = Keymap::with_overrides(
        r#"{"tui.editor.cursorLeft": ["left", "ctrl+h"],
            "tui.editor.deleteWordBackward": "alt+w",
            "cursorLineStart": ["home", "ctrl+q"],
            "app.model.select": "f2",
            "app.thinking.toggel": "f3"}"#,
    );
    assert_eq!(
        warnings,
        [
            "keybindings.json: unknown id `app.thinking.toggel` (ids are pi's, like app.model.select or tui.editor.cursorUp, as in pi's docs/keybindings.md)"
        ]
    );
    harness.state.keymap = keymap;
    harness.type_text("one two");
    harness.send(ctrl('h'));
    harness.type_text("X");
    assert_eq!(harness.state.editor.text(), "one twXo");
    // Ctrl+W is no longer a deletion; Alt+W is.
    harness.send(ctrl('w'));
    assert_eq!(harness.state.editor.text(), "one twXo");
    harness.send(key(KeyCode::End));
    harness.send(alt('w'));
    assert_eq!(harness.state.editor.text(), "one ");
    // The older name `cursorLineStart` counts as `tui.editor.cursorLineStart`.
    harness.send(ctrl('q'));
    harness.type_text(">");
    assert_eq!(harness.state.editor.text(), ">one ");
    harness.take_effects();
    harness.send(key(KeyCode::F(2)));
    assert!(
        harness.state.overlay.is_some(),
        "F2 opens the model selector"
    );
}

#[test]
fn deletions_go_to_the_kill_ring_and_come_back_with_ctrl_y_and_alt_y() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("alpha beta");
    harness.send(ctrl('w'));
    assert_eq!(harness.state.editor.text(), "alpha ");
    harness.send(ctrl('a'));
    harness.send(ctrl('k'));
    assert_eq!(harness.state.editor.text(), "");
    harness.send(ctrl('y'));
    assert_eq!(harness.state.editor.text(), "alpha ");
    harness.send(alt('y'));
    assert_eq!(harness.state.editor.text(), "beta");
    // Ctrl+- undoes: the yank-pop, the yank, the deletion.
    let undo = || key_with(KeyCode::Char('-'), KeyModifiers::CONTROL);
    harness.send(undo());
    assert_eq!(harness.state.editor.text(), "alpha ");
    harness.send(undo());
    assert_eq!(harness.state.editor.text(), "");
    harness.send(undo());
    assert_eq!(harness.state.editor.text(), "alpha ");
    assert_eq!(harness.state.editor.cursor(), (0, 0));
}

#[test]
fn undo_takes_back_a_word_at_a_time_and_ctrl_c_is_undoable() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("fix the bug");
    harness.send(ctrl('c'));
    assert!(harness.state.editor.is_empty());
    // Terminals without the keyboard protocol send Ctrl+- as 0x1f.
    let undo = || key(KeyCode::Char('\u{1f}'));
    harness.send(undo());
    assert_eq!(harness.state.editor.text(), "fix the bug");
    harness.send(undo());
    assert_eq!(harness.state.editor.text(), "fix the ");
    harness.send(undo());
    assert_eq!(harness.state.editor.text(), "fix ");
    // Alt+- does it again, step by step; a new edit ends what can be redone.
    let redo = || key_with(KeyCode::Char('-'), KeyModifiers::ALT);
    harness.send(redo());
    assert_eq!(harness.state.editor.text(), "fix the ");
    harness.send(redo());
    assert_eq!(harness.state.editor.text(), "fix the bug");
    harness.send(undo());
    harness.type_text("x");
    harness.send(redo());
    assert_eq!(harness.state.editor.text(), "fix the x");
    assert_eq!(harness.state.status.as_deref(), Some("Nothing to redo."));
}

#[test]
fn ctrl_bracket_jumps_to_the_next_character_typed() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("cargo test --workspace");
    harness.send(ctrl('a'));
    harness.send(ctrl(']'));
    harness.type_text("-");
    harness.type_text("+");
    assert_eq!(harness.state.editor.text(), "cargo test +--workspace");
    harness.send(key_with(
        KeyCode::Char(']'),
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    ));
    harness.type_text("c");
    harness.type_text("^");
    assert_eq!(harness.state.editor.text(), "^cargo test +--workspace");
}

#[test]
fn ctrl_g_hands_the_text_to_the_external_editor_and_takes_its_result() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("draft");
    harness.take_effects();
    harness.send(ctrl('g'));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::ExternalEditor("draft".to_owned()))
    );
    harness.send(Input::ExternalEdited(Ok(Some(
        "draft, edited\nat length".to_owned(),
    ))));
    assert_eq!(harness.state.editor.text(), "draft, edited\nat length");
    // An editor that failed keeps the text; none configured says so.
    harness.send(Input::ExternalEdited(Ok(None)));
    assert_eq!(harness.state.editor.text(), "draft, edited\nat length");
    harness.send(Input::ExternalEdited(Err(
        "No editor configured. Set $VISUAL or $EDITOR environment variable.".to_owned(),
    )));
    let screen = harness.screen(100, 30);
    assert!(
        screen.contains("No editor configured. Set $VISUAL or $EDITOR"),
        "{screen}"
    );
    harness.send(ctrl('z'));
    assert!(harness.take_effects().contains(&Effect::Suspend));
}

#[test]
fn hotkeys_scroll_at_80x24_and_show_the_keys_in_effect() {
    let mut harness = Harness::attached(Vec::new());
    harness.state.keymap = Keymap::with_overrides(r#"{"tui.editor.yank": "f7"}"#).0;
    harness.send(Input::Resize(80, 24));
    harness.type_text("/hotkeys");
    harness.send(key(KeyCode::Enter));
    let top = harness.screen(80, 24);
    assert!(top.contains("Keys and commands 1–19 of"), "{top}");
    assert!(top.contains("Navigation"), "{top}");
    assert!(top.contains("↑↓ pgup pgdn scroll · esc close"), "{top}");
    // Down the list: the effective yank key, then the commands at the end.
    let mut seen = top.clone();
    for _ in 0..20 {
        harness.send(key(KeyCode::PageDown));
        seen.push_str(&harness.screen(80, 24));
    }
    assert!(seen.contains("f7"), "{seen}");
    assert!(!seen.contains("ctrl+y "), "{seen}");
    let bottom = harness.screen(80, 24);
    assert!(bottom.contains("/quit"), "{bottom}");
    harness.send(key(KeyCode::Home));
    assert!(harness.screen(80, 24).contains("Keys and commands 1–19 of"));
    harness.send(key(KeyCode::Esc));
    assert!(harness.state.overlay.is_none());
}

#[test]
fn slash_reload_reads_the_keys_themes_settings_and_extensions_again() {
    use pi_tui::effect::Request;
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("/reload");
    harness.send(key(KeyCode::Enter));
    let effects = harness.take_effects();
    for wanted in [
        Effect::ReloadKeys,
        Effect::Request(Request::Settings),
        Effect::Request(Request::ListModels),
        Effect::Request(Request::ExtensionsRestart),
        Effect::Request(Request::ListCommands),
    ] {
        assert!(effects.contains(&wanted), "{wanted:?} in {effects:?}");
    }
    assert!(
        effects
            .iter()
            .any(|effect| matches!(effect, Effect::LoadTheme(_)))
    );
    // The file as read again: its keys apply, its problems are said.
    let (keymap, warnings) = Keymap::with_overrides(r#"{"app.tools.expand": "f9", "nope": "f1"}"#);
    harness.send(Input::Keymap { keymap, warnings });
    harness.send(key(KeyCode::F(9)));
    assert!(harness.state.view.expand_tools);
    let screen = harness.screen(120, 30);
    assert!(screen.contains("unknown id `nope`"), "{screen}");
}

#[test]
fn scoped_models_toggles_the_models_ctrl_p_cycles_through_and_saves_them() {
    use pi_tui::effect::Request;
    use pi_tui::overlay::Overlay;
    let marked = |harness: &Harness| -> Vec<(String, bool)> {
        match &harness.state.overlay {
            Some(Overlay::Select(selector)) => selector
                .items
                .iter()
                .map(|item| (item.value.clone(), item.current))
                .collect(),
            other => panic!("no dialog: {other:?}"),
        }
    };
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/scoped-models");
    harness.send(key(KeyCode::Enter));
    // The models with a key, every one cycled while there is no scope.
    assert_eq!(
        marked(&harness),
        [
            ("anthropic/claude-opus-4-1".to_owned(), true),
            ("anthropic/claude-sonnet-4-5".to_owned(), true),
            ("openai/gpt-5".to_owned(), true),
        ]
    );
    // Ctrl+X none, Enter toggles the highlighted, Ctrl+P its provider's.
    harness.send(ctrl('x'));
    harness.send(key(KeyCode::Enter));
    assert_eq!(marked(&harness).iter().filter(|(_, on)| *on).count(), 1);
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Down));
    harness.send(ctrl('p'));
    assert_eq!(
        marked(&harness),
        [
            ("anthropic/claude-opus-4-1".to_owned(), true),
            ("anthropic/claude-sonnet-4-5".to_owned(), false),
            ("openai/gpt-5".to_owned(), true),
        ]
    );
    // Alt+Up: GPT-5 first in the cycle.
    harness.send(key_with(KeyCode::Up, KeyModifiers::ALT));
    harness.send(key_with(KeyCode::Up, KeyModifiers::ALT));
    assert_eq!(marked(&harness)[0], ("openai/gpt-5".to_owned(), true));
    harness.take_effects();
    harness.send(ctrl('s'));
    assert_eq!(
        harness.take_effects(),
        [Effect::Request(Request::SaveSetting {
            key: "enabledModels".to_owned(),
            value: serde_json::json!(["openai/gpt-5", "anthropic/claude-opus-4-1"]),
        })]
    );
    assert_eq!(
        harness.state.model_scope,
        ["openai/gpt-5", "anthropic/claude-opus-4-1"]
    );
    assert!(harness.state.overlay.is_none());
    // Opened again: in the cycle's order, the left-out model last.
    harness.type_text("/scoped-models");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        marked(&harness),
        [
            ("openai/gpt-5".to_owned(), true),
            ("anthropic/claude-opus-4-1".to_owned(), true),
            ("anthropic/claude-sonnet-4-5".to_owned(), false),
        ]
    );
    // Esc keeps a choice for this TUI only.
    harness.send(ctrl('a'));
    harness.send(key(KeyCode::Esc));
    assert!(harness.state.model_scope.is_empty());
    assert!(
        harness
            .take_effects()
            .iter()
            .all(|effect| !matches!(effect, Effect::Request(Request::SaveSetting { .. })))
    );
}

#[test]
fn ctrl_v_pastes_the_clipboards_image_as_a_path_in_the_message() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("what is this ");
    harness.take_effects();
    harness.send(ctrl('v'));
    assert!(harness.take_effects().contains(&Effect::PasteImage));
    harness.send(Input::ClipboardImage(Ok(Some(std::path::PathBuf::from(
        "/tmp/pi-clipboard-1.png",
    )))));
    assert_eq!(
        harness.state.editor.text(),
        "what is this /tmp/pi-clipboard-1.png"
    );
    harness.send(Input::ClipboardImage(Ok(None)));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("No image on the clipboard.")
    );
}

#[test]
fn the_resume_picker_has_pis_keys_rename_delete_named_sort_and_paths() {
    use pi_protocol::v1::SessionInfo;
    use pi_tui::effect::Request;
    use pi_tui::overlay::Overlay;
    let session = |id: &str, name: Option<&str>, first: &str, cwd: &str| SessionInfo {
        id: id.to_owned(),
        name: name.map(str::to_owned),
        first_message: Some(first.to_owned()),
        cwd: cwd.to_owned(),
        ..info(3)
    };
    let rows = |harness: &Harness| -> Vec<(String, String)> {
        match &harness.state.overlay {
            Some(Overlay::Select(selector)) => selector
                .visible()
                .map(|item| (item.label.clone(), item.detail.clone()))
                .collect(),
            other => panic!("no picker: {other:?}"),
        }
    };
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/resume");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(pi_tui::input::Reply::Sessions(vec![
        session("s-zeta", Some("zeta"), "one", "/work/a"),
        session("s-fix", None, "fix the bug", "/work/b"),
        session("s-alpha", Some("alpha"), "two", "/work/c"),
    ])));
    let labels = |harness: &Harness| -> Vec<String> {
        rows(harness).into_iter().map(|(label, _)| label).collect()
    };
    assert_eq!(labels(&harness), ["zeta", "fix the bug", "alpha"]);
    harness.send(ctrl('n'));
    assert_eq!(labels(&harness), ["zeta", "alpha"]);
    harness.send(ctrl('n'));
    harness.send(ctrl('s'));
    assert_eq!(labels(&harness), ["alpha", "fix the bug", "zeta"]);
    harness.send(ctrl('p'));
    assert!(
        rows(&harness)[0].1.ends_with(" · /work/c"),
        "{:?}",
        rows(&harness)
    );
    // Ctrl+D asks first (the highlight followed zeta to the end; one up is the unnamed
    // session); Esc keeps it, Enter deletes.
    harness.send(key(KeyCode::Up));
    harness.send(ctrl('d'));
    assert!(
        rows(&harness)[1].1.starts_with("DELETE? · "),
        "{:?}",
        rows(&harness)
    );
    assert!(
        harness
            .screen(120, 30)
            .contains("Delete session? enter confirm · esc cancel")
    );
    harness.send(key(KeyCode::Esc));
    assert!(!rows(&harness)[1].1.starts_with("DELETE?"));
    harness.send(ctrl('d'));
    harness.take_effects();
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.take_effects(),
        [Effect::Request(Request::DeleteSession("s-fix".to_owned()))]
    );
    // Ctrl+R: the name to edit, Enter renames.
    harness.send(Input::Reply(pi_tui::input::Reply::Sessions(vec![
        session("s-zeta", Some("zeta"), "one", "/work/a"),
        session("s-alpha", Some("alpha"), "two", "/work/c"),
    ])));
    harness.send(ctrl('r'));
    assert!(harness.screen(120, 30).contains("> alpha"));
    harness.type_text(" prime");
    harness.take_effects();
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.take_effects(),
        [Effect::Request(Request::RenameSession {
            session_id: "s-alpha".to_owned(),
            name: "alpha prime".to_owned(),
        })]
    );
}

#[test]
fn the_resume_picker_leaves_pis_files_and_the_current_session_alone() {
    use pi_protocol::v1::SessionInfo;
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/resume");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(pi_tui::input::Reply::Sessions(vec![
        SessionInfo {
            id: "pi-file:/home/me/.pi/agent/sessions/x.jsonl".to_owned(),
            name: Some("from pi".to_owned()),
            ..info(1)
        },
        info(3),
    ])));
    // The picker opens on the session the TUI is in.
    harness.send(ctrl('d'));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("This is the session you are in; resume another first.")
    );
    harness.send(key(KeyCode::Up));
    harness.send(ctrl('d'));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("That is pi's session file; delete it in pi.")
    );
    harness.send(ctrl('r'));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("That is pi's session file; rename it in pi.")
    );
}

/// What the header and `/hotkeys` say follows the keys as `keybindings.json` left them: a
/// remapped action shows its new key, and a key lost in a conflict is no longer listed
/// under the action that lost it.
#[test]
fn the_header_and_hotkeys_show_the_keys_as_remapped() {
    let mut harness = Harness::attached(Vec::new());
    let (keymap, warnings) = Keymap::with_overrides(
        r#"{"app.model.select": "f2", "app.tools.expand": "ctrl+e",
            "tui.editor.deleteToLineStart": "ctrl+q", "tui.editor.yank": "ctrl+q"}"#,
    );
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    harness.state.keymap = keymap;
    let screen = harness.screen(90, 20);
    assert!(screen.contains("f2 model"), "{screen}");
    assert!(!screen.contains("ctrl+l model"), "{screen}");
    harness.type_text("/hotkeys");
    harness.send(key(KeyCode::Enter));
    let lines = harness.screen(100, 60);
    let line_of = |what: &str| {
        lines
            .lines()
            .find(|line| line.contains(what))
            .unwrap_or_else(|| panic!("no {what} in {lines}"))
            .to_owned()
    };
    // ctrl+e went to the app: "Line end" keeps End only.
    assert!(!line_of("Line end").contains("ctrl+e"), "{lines}");
    assert!(line_of("Expand").contains("ctrl+e"), "{lines}");
    // ctrl+q: one of the two editor actions, not both.
    let with_q = lines.lines().filter(|line| line.contains("ctrl+q")).count();
    assert_eq!(with_q, 1, "{lines}");
}

/// `/share` says it works until it is done, then says how it ended.
#[test]
fn share_says_it_works_until_the_outcome() {
    let mut harness = Harness::attached(history(vec![user("hello")]));
    harness.type_text("/share");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Sharing the session…")
    );
    harness.send(Input::Reply(pi_tui::input::Reply::Done(
        "GitHub CLI (gh) is not installed. Exported the session to /tmp/x.html.".to_owned(),
    )));
    assert_eq!(harness.state.status, None);
    let screen = harness.screen(100, 20);
    assert!(!screen.contains("Sharing"), "{screen}");
}

//! pi's `/settings`: the settings the TUI and its sessions follow, each with its value in
//! effect (`settings/get` for the working directory); choosing one offers its values, and
//! the one chosen is saved with `settings/setDefault` (the daemon's own `settings.json`,
//! which comes before pi's), after which the settings are read again.

use serde_json::{Value, json};

use crate::effect::{Effect, Request};
use crate::overlay::{Overlay, Selector, SelectorItem, SelectorKind};
use crate::state::State;

/// Separates a setting's key from the value chosen in a value row.
const SEPARATOR: char = '\u{1f}';

/// The settings offered: key (dotted), label, the values to choose from.
fn offered() -> Vec<(&'static str, &'static str, Vec<Value>)> {
    let yes_no = || vec![json!(true), json!(false)];
    let strings = |values: &[&str]| values.iter().map(|value| json!(value)).collect();
    vec![
        ("compaction.enabled", "Auto-compact", yes_no()),
        (
            "steeringMode",
            "Steering mode",
            strings(&["one-at-a-time", "all"]),
        ),
        (
            "followUpMode",
            "Follow-up mode",
            strings(&["one-at-a-time", "all"]),
        ),
        (
            "defaultThinkingLevel",
            "Default thinking level",
            strings(&["off", "minimal", "low", "medium", "high", "xhigh"]),
        ),
        ("hideThinkingBlock", "Hide thinking blocks", yes_no()),
        ("quietStartup", "Quiet startup", yes_no()),
        ("collapseChangelog", "Collapse changelog", yes_no()),
        (
            "doubleEscapeAction",
            "Double-escape action",
            strings(&["tree", "fork", "none"]),
        ),
        (
            "treeFilterMode",
            "Tree filter mode",
            strings(&["default", "no-tools", "user-only", "labeled-only", "all"]),
        ),
        (
            "editorPaddingX",
            "Editor padding",
            (0..=3).map(|n| json!(n)).collect(),
        ),
        (
            "autocompleteMaxVisible",
            "Autocomplete rows",
            [3, 5, 7, 10, 15, 20].iter().map(|n| json!(n)).collect(),
        ),
        ("showHardwareCursor", "Hardware cursor", yes_no()),
        ("terminal.showImages", "Show images", yes_no()),
        (
            "terminal.imageWidthCells",
            "Image width (cells)",
            [30, 40, 60, 80, 100, 120]
                .iter()
                .map(|n| json!(n))
                .collect(),
        ),
        (
            "terminal.showTerminalProgress",
            "Terminal progress",
            yes_no(),
        ),
        ("images.autoResize", "Auto-resize images", yes_no()),
        ("images.blockImages", "Block images", yes_no()),
        ("enableSkillCommands", "Skill commands", yes_no()),
        (
            "warnings.anthropicExtraUsage",
            "Anthropic extra-usage warning",
            yes_no(),
        ),
        ("theme", "Theme", strings(&["dark", "light"])),
    ]
}

/// `key`'s value in the settings in effect (`null` when unset).
fn current(state: &State, key: &str) -> Value {
    let settings = state
        .settings
        .as_ref()
        .and_then(|settings| serde_json::to_value(settings).ok())
        .unwrap_or(Value::Null);
    let pointer = format!("/{}", key.replace('.', "/"));
    settings.pointer(&pointer).cloned().unwrap_or(Value::Null)
}

fn shown(key: &str, value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        // pi picks the theme by the terminal's background; other keys have a default.
        Value::Null if key == "theme" => "(by the terminal)".to_owned(),
        Value::Null => "(default)".to_owned(),
        other => other.to_string(),
    }
}

/// `/settings`: the list, with each value in effect.
pub(super) fn open(state: &mut State, effects: &mut Vec<Effect>) {
    if state.settings.is_none() {
        state.status = Some("The settings are being read; try again in a moment.".to_owned());
        effects.push(Effect::Request(Request::Settings));
        return;
    }
    let items = offered()
        .into_iter()
        .map(|(key, label, _)| SelectorItem {
            label: label.to_owned(),
            detail: shown(key, &current(state, key)),
            value: key.to_owned(),
            indent: String::new(),
            on_path: false,
            current: false,
        })
        .collect();
    state.overlay = Some(Overlay::Select(Selector::new(
        SelectorKind::Settings,
        "Settings (saved to pi's settings.json)",
        items,
    )));
}

/// A setting was chosen: its values, the one in effect marked.
pub(super) fn chose_setting(state: &mut State, key: &str) {
    let Some((_, label, values)) = offered().into_iter().find(|(offered, ..)| *offered == key)
    else {
        return;
    };
    let now = current(state, key);
    let items = values
        .iter()
        .map(|value| SelectorItem {
            label: shown(key, value),
            detail: String::new(),
            value: format!("{key}{SEPARATOR}{value}"),
            indent: String::new(),
            on_path: false,
            current: *value == now,
        })
        .collect();
    // The value in effect is highlighted (a new selector starts on the current item).
    state.overlay = Some(Overlay::Select(Selector::new(
        SelectorKind::SettingValue,
        label,
        items,
    )));
}

/// A value was chosen: saved.
pub(super) fn chose_value(value: &str, effects: &mut Vec<Effect>) {
    let Some((key, value)) = value.split_once(SEPARATOR) else {
        return;
    };
    let Ok(value) = serde_json::from_str::<Value>(value) else {
        return;
    };
    effects.push(Effect::Request(Request::SaveSetting {
        key: key.to_owned(),
        value,
    }));
}

//! pi's `/scoped-models`: the models with a key, each marked when Ctrl+P cycles through it
//! (`--models`, else `enabledModels`; with neither, every one). Enter toggles the highlighted
//! model; pi's keys toggle all (Ctrl+A), none (Ctrl+X) or the highlighted model's provider
//! (Ctrl+P), and Alt+↑/↓ move the highlighted model in the cycle's order; Esc keeps the
//! choice for this TUI, Ctrl+S also saves it as `enabledModels`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::effect::{Effect, Request};
use crate::keymap::{Action, Context};
use crate::overlay::{Overlay, Selector, SelectorItem, SelectorKind};
use crate::state::State;

/// The dialog's title.
const TITLE: &str = "Models Ctrl+P cycles";

/// `/scoped-models`.
pub(super) fn open(state: &mut State, effects: &mut Vec<Effect>) {
    let keyed: Vec<_> = state
        .models
        .iter()
        .filter(|model| model.has_key)
        .cloned()
        .collect();
    if keyed.is_empty() {
        state.status = Some("No model with a key is configured.".to_owned());
        if state.models.is_empty() {
            effects.push(Effect::Request(Request::ListModels));
        }
        return;
    }
    let scoped: Vec<String> = pi_client::model_scope::scoped_models(&state.model_scope, &keyed)
        .into_iter()
        .map(|scoped| format!("{}/{}", scoped.model.provider, scoped.model.id))
        .collect();
    // The cycle's order first (the scope's), then the models left out.
    let mut ordered: Vec<&pi_protocol::v1::ModelInfo> = scoped
        .iter()
        .filter_map(|spec| {
            keyed
                .iter()
                .find(|model| format!("{}/{}", model.provider, model.id) == *spec)
        })
        .collect();
    for model in &keyed {
        if !ordered.iter().any(|chosen| std::ptr::eq(*chosen, model)) {
            ordered.push(model);
        }
    }
    let items = ordered
        .into_iter()
        .map(|model| {
            let spec = format!("{}/{}", model.provider, model.id);
            SelectorItem {
                current: scoped.is_empty() || scoped.contains(&spec),
                label: spec.clone(),
                detail: model.name.clone(),
                value: spec,
                indent: String::new(),
                on_path: false,
            }
        })
        .collect();
    let mut selector = Selector::new(SelectorKind::ScopedModels, TITLE, items);
    // Start at the top, not on the first marked row.
    let at = selector.selected_position();
    selector.move_by(-(at as isize));
    state.overlay = Some(Overlay::Select(selector));
}

/// A key in the dialog.
pub(super) fn on_key(state: &mut State, event: &KeyEvent, effects: &mut Vec<Effect>) {
    let models = state.keymap.actions(event, Context::Models);
    let lists = state.keymap.actions(event, Context::Select);
    let Some(Overlay::Select(selector)) = &mut state.overlay else {
        return;
    };
    let highlighted = selector.selected_index();
    let visible = selector.visible_indices();
    let set = |selector: &mut Selector, indices: &[usize], on: bool| {
        for &index in indices {
            selector.items[index].current = on;
        }
    };
    match (models.first(), lists.first()) {
        (Some(Action::ModelsEnableAll), _) => set(selector, &visible, true),
        (Some(Action::ModelsClearAll), _) => set(selector, &visible, false),
        (Some(Action::ModelsToggleProvider), _) => {
            if let Some(index) = highlighted {
                let provider = provider_of(&selector.items[index].value).to_owned();
                let same: Vec<usize> = (0..selector.items.len())
                    .filter(|&other| provider_of(&selector.items[other].value) == provider)
                    .collect();
                let on = !same.iter().all(|&other| selector.items[other].current);
                set(selector, &same, on);
            }
        }
        (Some(Action::ModelsReorderUp | Action::ModelsReorderDown), _) => {
            let up = models.first() == Some(&Action::ModelsReorderUp);
            let Some(index) = highlighted else {
                return;
            };
            let Some(position) = visible.iter().position(|&at| at == index) else {
                return;
            };
            let neighbour = if up {
                position.checked_sub(1).map(|at| visible[at])
            } else {
                visible.get(position + 1).copied()
            };
            if let Some(other) = neighbour {
                selector.items.swap(index, other);
                let value = selector.items[other].value.clone();
                let query = selector.query.clone();
                selector.set_query(query);
                selector.select_value(&value);
            }
        }
        (Some(Action::ModelsSave), _) => {
            let scope = enabled(selector);
            apply(state, scope.clone());
            state.overlay = None;
            effects.push(Effect::Request(Request::SaveSetting {
                key: "enabledModels".to_owned(),
                value: serde_json::json!(scope),
            }));
        }
        (_, Some(Action::SelectConfirm)) => {
            if let Some(index) = highlighted {
                selector.items[index].current = !selector.items[index].current;
            }
        }
        (_, Some(Action::SelectCancel)) => {
            let scope = enabled(selector);
            apply(state, scope);
            state.overlay = None;
        }
        (_, Some(Action::SelectUp)) => selector.move_by(-1),
        (_, Some(Action::SelectDown)) => selector.move_by(1),
        (_, Some(Action::SelectPageUp)) => selector.move_by(-10),
        (_, Some(Action::SelectPageDown)) => selector.move_by(10),
        _ => match event.code {
            KeyCode::Backspace => {
                let mut query = selector.query.clone();
                query.pop();
                selector.set_query(query);
            }
            KeyCode::Char(c) if !event.modifiers.contains(KeyModifiers::CONTROL) => {
                let query = format!("{}{c}", selector.query);
                selector.set_query(query);
            }
            _ => {}
        },
    }
}

fn provider_of(spec: &str) -> &str {
    spec.split_once('/').map_or(spec, |(provider, _)| provider)
}

/// The marked models; none when every one is (no scope: Ctrl+P cycles through all).
fn enabled(selector: &Selector) -> Vec<String> {
    if selector.items.iter().all(|item| item.current) {
        return Vec::new();
    }
    selector
        .items
        .iter()
        .filter(|item| item.current)
        .map(|item| item.value.clone())
        .collect()
}

fn apply(state: &mut State, scope: Vec<String>) {
    state.status = Some(match scope.len() {
        0 => "Ctrl+P cycles through every model with a key.".to_owned(),
        1 => "Ctrl+P stays on 1 model.".to_owned(),
        n => format!("Ctrl+P cycles through {n} models."),
    });
    state.model_scope = scope;
}

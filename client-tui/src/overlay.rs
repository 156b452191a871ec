//! Dialogs over the transcript (searchable selectors, the hotkey list, history search, info
//! panels) and the completion popup above the editor, with fuzzy filtering by nucleo's
//! matcher.
//!
//! Invariant: `Selector::visible` always holds indices into `items` that match `query`, best
//! first, and `selected < visible.len()` unless `visible` is empty.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// What a selector picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorKind {
    /// A model (`/model`, Ctrl+L).
    Model,
    /// A thinking level (`/thinking`).
    Thinking,
    /// A session to attach to (`/resume`).
    Session,
    /// An entry to move the leaf to (`/tree`).
    Tree,
    /// Whether to summarize the branch being left (after choosing a tree entry).
    TreeSummary,
    /// A user message to fork from (`/fork`).
    Fork,
    /// A prompt from history (Ctrl+R).
    History,
    /// An approval mode (`/approvals`).
    Approvals,
    /// A subscription to log in to (`/login`).
    Login,
    /// A subscription to log out of (`/logout`).
    Logout,
    /// A setting to change (`/settings`).
    Settings,
    /// A value of the setting chosen.
    SettingValue,
    /// The models Ctrl+P cycles through (`/scoped-models`).
    ScopedModels,
}

/// One row of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorItem {
    /// Main text (matched by the query).
    pub label: String,
    /// Secondary text, dim.
    pub detail: String,
    /// What choosing it means (model spec, session id, entry id, text).
    pub value: String,
    /// What is drawn before the label in a tree: the lines of its forks (`│  ├─ `).
    pub indent: String,
    /// On the path to the current choice (a tree's active branch, marked `•`).
    pub on_path: bool,
    /// The current choice (marked).
    pub current: bool,
}

/// A searchable list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    /// What it picks.
    pub kind: SelectorKind,
    /// Title.
    pub title: String,
    /// All rows.
    pub items: Vec<SelectorItem>,
    /// The search text.
    pub query: String,
    // Invariant: see the module doc.
    visible: Vec<usize>,
    selected: usize,
}

impl Selector {
    /// A selector with the current item pre-selected.
    pub fn new(kind: SelectorKind, title: impl Into<String>, items: Vec<SelectorItem>) -> Self {
        let mut selector = Selector {
            kind,
            title: title.into(),
            items,
            query: String::new(),
            visible: Vec::new(),
            selected: 0,
        };
        selector.refilter();
        if let Some(position) = selector
            .visible
            .iter()
            .position(|&index| selector.items[index].current)
        {
            selector.selected = position;
        }
        selector
    }

    /// Replaces the query and filters again.
    pub fn set_query(&mut self, query: String) {
        self.query = query;
        self.refilter();
    }

    /// Rows matching the query, best first.
    pub fn visible(&self) -> impl Iterator<Item = &SelectorItem> {
        self.visible.iter().map(|&index| &self.items[index])
    }

    /// How many rows match.
    pub fn visible_len(&self) -> usize {
        self.visible.len()
    }

    /// Position of the highlighted row among the visible ones.
    pub fn selected_position(&self) -> usize {
        self.selected
    }

    /// The highlighted row.
    pub fn selected(&self) -> Option<&SelectorItem> {
        self.visible
            .get(self.selected)
            .map(|&index| &self.items[index])
    }

    /// Index in [`Selector::items`] of the highlighted row.
    pub fn selected_index(&self) -> Option<usize> {
        self.visible.get(self.selected).copied()
    }

    /// Indices in [`Selector::items`] of the rows matching the query.
    pub fn visible_indices(&self) -> Vec<usize> {
        self.visible.clone()
    }

    /// Highlights the visible row whose value is `value`, if there is one.
    pub fn select_value(&mut self, value: &str) {
        if let Some(position) = self
            .visible
            .iter()
            .position(|&index| self.items[index].value == value)
        {
            self.selected = position;
        }
    }

    /// Moves the highlight by `delta`, wrapping.
    pub fn move_by(&mut self, delta: isize) {
        let len = self.visible.len() as isize;
        if len == 0 {
            return;
        }
        self.selected = (self.selected as isize + delta).rem_euclid(len) as usize;
    }

    fn refilter(&mut self) {
        let labels: Vec<String> = self
            .items
            .iter()
            .map(|item| format!("{} {}", item.label, item.detail))
            .collect();
        self.visible = fuzzy_filter(&self.query, labels.iter().map(String::as_str));
        if self.query.is_empty() {
            // Keep the natural order (trees, newest first) when there is no query.
            self.visible = (0..self.items.len()).collect();
        }
        self.selected = self.selected.min(self.visible.len().saturating_sub(1));
        if !self.query.is_empty() {
            self.selected = 0;
        }
    }
}

/// A dialog.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    /// A searchable list.
    Select(Selector),
    /// The key bindings and commands.
    Hotkeys {
        /// Lines scrolled past (kept in range when drawn).
        scroll: usize,
    },
    /// Waiting for the daemon's answer before a selector can open.
    Loading {
        /// The selector that will open.
        kind: SelectorKind,
        /// Title.
        title: String,
    },
    /// A question from the daemon or another client (`ui/request`): the first answer wins.
    Question(Question),
    /// A panel of text lines (`/session`).
    Info {
        /// Title.
        title: String,
        /// Lines.
        lines: Vec<String>,
    },
    /// A login in progress (`/login`): its URL, progress and prompt.
    Login(LoginDialog),
    /// A session's new name (pi's Ctrl+R in `/resume`); Enter renames, Esc goes back.
    Rename {
        /// The session.
        session_id: String,
        /// The name typed so far.
        text: String,
        /// The picker to go back to.
        picker: Box<Selector>,
    },
    /// The label of a tree entry being edited (pi's Shift+L in `/tree`); Enter sets it (empty:
    /// clears), Esc goes back to the tree.
    LabelEdit {
        /// The entry.
        entry_id: String,
        /// The label typed so far.
        text: String,
        /// The tree dialog to go back to.
        tree: Box<Selector>,
    },
}

/// A subscription login the daemon runs (`auth/login`), as its `auth/loginEvent` steps
/// show it. Esc cancels it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoginDialog {
    /// The provider (`anthropic`).
    pub provider: String,
    /// pi's name of its login, for people.
    pub name: String,
    /// The login's id, from its first step (for `auth/loginInput` and `auth/loginCancel`).
    pub login_id: Option<String>,
    /// The URL to open, once the login gave it.
    pub url: Option<String>,
    /// What to do there (Copilot: the code to enter).
    pub instructions: String,
    /// Progress messages, oldest first.
    pub progress: Vec<String>,
    /// The question waiting for an answer, if any.
    pub prompt: Option<LoginPrompt>,
    /// The answer typed so far.
    pub text: String,
    /// An API key is typed here (no login runs): shown masked, stored with `auth/setApiKey`.
    pub key_entry: bool,
}

/// A login's question (`LoginStep::Prompt`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoginPrompt {
    /// The question.
    pub message: String,
    /// An example answer.
    pub placeholder: Option<String>,
    /// Whether an empty answer is fine.
    pub allow_empty: bool,
}

impl LoginDialog {
    /// The dialog of a login to `provider` just asked for.
    pub fn new(provider: impl Into<String>, name: impl Into<String>) -> LoginDialog {
        LoginDialog {
            provider: provider.into(),
            name: name.into(),
            ..LoginDialog::default()
        }
    }
}

/// A `ui/request` being answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    /// The request.
    pub request: pi_protocol::v1::UiRequestParams,
    /// The choices (`select`'s options, `confirm`'s Yes and No); empty for text.
    pub choices: Vec<String>,
    /// The highlighted choice: none until an arrow key picks one, so keys typed for the
    /// editor before the dialog appeared cannot answer it.
    pub selected: Option<usize>,
    /// The text typed (`input`, `editor`).
    pub text: String,
    /// The choices ticked (Space) in a `multiple` select.
    pub checked: Vec<bool>,
}

impl Question {
    /// The dialog for `request`.
    pub fn new(request: pi_protocol::v1::UiRequestParams) -> Question {
        use pi_protocol::v1::UiRequest;
        let (choices, text) = match &request.request {
            UiRequest::Select { options, .. } => (options.clone(), String::new()),
            UiRequest::Confirm { .. } => (vec!["Yes".to_owned(), "No".to_owned()], String::new()),
            UiRequest::Input { .. } => (Vec::new(), String::new()),
            UiRequest::Editor { prefill, .. } => (Vec::new(), prefill.clone().unwrap_or_default()),
        };
        Question {
            request,
            checked: vec![false; choices.len()],
            choices,
            selected: None,
            text,
        }
    }

    /// A select where several choices may be ticked.
    pub fn multiple(&self) -> bool {
        matches!(
            self.request.request,
            pi_protocol::v1::UiRequest::Select { multiple: true, .. }
        )
    }

    /// The title.
    pub fn title(&self) -> &str {
        use pi_protocol::v1::UiRequest;
        match &self.request.request {
            UiRequest::Select { title, .. }
            | UiRequest::Confirm { title, .. }
            | UiRequest::Input { title, .. }
            | UiRequest::Editor { title, .. } => title,
        }
    }

    /// The answer Enter gives now; `None` while no choice is highlighted.
    pub fn answer(&self) -> Option<pi_protocol::v1::UiAnswer> {
        use pi_protocol::v1::{UiAnswer, UiRequest};
        Some(match &self.request.request {
            UiRequest::Confirm { .. } => UiAnswer {
                confirmed: Some(self.selected? == 0),
                ..UiAnswer::default()
            },
            // As for one choice: nothing is sent before an arrow key was pressed.
            UiRequest::Select { multiple: true, .. } if self.selected.is_some() => UiAnswer {
                values: self
                    .choices
                    .iter()
                    .zip(&self.checked)
                    .filter(|(_, checked)| **checked)
                    .map(|(choice, _)| choice.clone())
                    .collect(),
                ..UiAnswer::default()
            },
            UiRequest::Select { multiple: true, .. } => return None,
            UiRequest::Select { .. } => UiAnswer {
                value: Some(self.choices.get(self.selected?)?.clone()),
                ..UiAnswer::default()
            },
            UiRequest::Input { .. } | UiRequest::Editor { .. } => UiAnswer {
                value: Some(self.text.clone()),
                ..UiAnswer::default()
            },
        })
    }
}

/// What a completion inserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// A slash command (the token starts with `/` at the start of the editor).
    Command,
    /// A file path (the token starts with `@`).
    File,
}

/// The completion popup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Commands or files.
    pub kind: CompletionKind,
    /// (shown text, detail, replacement).
    pub items: Vec<(String, String, String)>,
    /// Highlighted row.
    pub selected: usize,
}

/// Indices of `candidates` matching `query` with nucleo's fuzzy matcher, best score first
/// (ties keep the input order). An empty query matches everything in order.
pub fn fuzzy_filter<'a>(query: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<usize> {
    if query.trim().is_empty() {
        return candidates.enumerate().map(|(index, _)| index).collect();
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut buffer = Vec::new();
    let mut scored: Vec<(u32, usize)> = candidates
        .enumerate()
        .filter_map(|(index, candidate)| {
            pattern
                .score(Utf32Str::new(candidate, &mut buffer), &mut matcher)
                .map(|score| (score, index))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, index)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzy_filter_ranks_closer_matches_first() {
        let files = ["src/main.rs", "docs/manual.md", "src/lib.rs", "Cargo.toml"];
        let found: Vec<&str> = fuzzy_filter("main", files.iter().copied())
            .into_iter()
            .map(|index| files[index])
            .collect();
        assert_eq!(found, ["src/main.rs"]);
        let found: Vec<&str> = fuzzy_filter("man", files.iter().copied())
            .into_iter()
            .map(|index| files[index])
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(fuzzy_filter("", files.iter().copied()), [0, 1, 2, 3]);
    }
}

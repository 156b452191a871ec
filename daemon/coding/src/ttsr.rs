//! oh-my-pi's time-traveling stream rules (TTSR): rules with a `condition` watched on the
//! model's reply as it streams. A match in the rule's scope either interrupts the reply — it
//! is dropped (or kept, `ttsr.contextMode: "keep"`) and the run goes on with the rule injected
//! as a hidden `<system-interrupt>` message — or, for a rule that does not interrupt there,
//! becomes a `<system-reminder>` after the reply. Each rule fires once per session.
//!
//! Scopes: `text` (the reply's text), `thinking`, `tool` (every tool call's argument JSON),
//! `tool:NAME` / `tool:NAME(GLOB)` (that tool's, and with a glob only when its `path`
//! argument matches); the default is text and every tool call, not thinking. `interruptMode`:
//! `always` (the default, `ttsr.interruptMode`), `prose-only` (text and thinking interrupt,
//! tool arguments remind), `tool-only`, `never` (always a reminder).
//!
//! Cost: a session without such rules gets no watcher at all. With rules, each delta is
//! matched with one `RegexSet` per source kind over the delta and the text just before it
//! (a window of [`LOOKBACK`] bytes), not over the whole reply.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use pi_agent::AgentMessage;
use pi_agent::message::CustomMessage;
use pi_agent::watch::{DeltaSource, MessageWatch, StreamWatch, Verdict};
use regex::RegexSet;

use crate::Diagnostic;
use crate::rules::{Rule, RuleKind};

/// How much text before a delta a condition may match into.
pub const LOOKBACK: usize = 512;

/// The custom type of an injected rule.
pub const INJECTION: &str = "ttsr-injection";
/// The custom type of a reminder.
pub const REMINDER: &str = "ttsr-reminder";

/// How matches act (the `ttsr` settings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TtsrSettings {
    /// Rules are watched at all.
    pub enabled: bool,
    /// An interrupted reply is kept (`keep`) rather than dropped (`discard`).
    pub keep_partial: bool,
    /// The interrupt mode of rules that name none.
    pub interrupt_mode: InterruptMode,
    /// Rules that name no `repeat` may fire again after a gap (`ttsr.repeatMode:
    /// "after-gap"`), rather than once per session.
    pub after_gap: bool,
    /// The gap: completed turns since the rule last fired (`ttsr.repeatGap`, default 10).
    pub repeat_gap: u64,
}

impl Default for TtsrSettings {
    fn default() -> Self {
        TtsrSettings {
            enabled: true,
            keep_partial: false,
            interrupt_mode: InterruptMode::Always,
            after_gap: false,
            repeat_gap: 10,
        }
    }
}

/// Where a rule's match interrupts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterruptMode {
    /// Everywhere.
    Always,
    /// In text and thinking; in tool arguments it reminds.
    ProseOnly,
    /// In tool arguments; in prose it reminds.
    ToolOnly,
    /// Nowhere: always a reminder.
    Never,
}

impl InterruptMode {
    /// oh-my-pi's name.
    pub fn parse(name: &str) -> Option<InterruptMode> {
        match name {
            "always" => Some(InterruptMode::Always),
            "prose-only" => Some(InterruptMode::ProseOnly),
            "tool-only" => Some(InterruptMode::ToolOnly),
            "never" => Some(InterruptMode::Never),
            _ => None,
        }
    }
}

/// Where a rule looks.
#[derive(Clone, Debug)]
enum Scope {
    Text,
    Thinking,
    /// A tool's arguments; `None`: any tool. With a glob on its `path`.
    Tool(Option<String>, Option<globset::GlobMatcher>),
}

/// One compiled rule.
#[derive(Debug)]
struct Compiled {
    rule: Rule,
    scopes: Vec<Scope>,
    mode: InterruptMode,
    globs: Option<globset::GlobSet>,
}

/// The stream rules of one session, compiled.
#[derive(Debug)]
pub struct Ttsr {
    rules: Vec<Compiled>,
    // One set per source kind, each pattern tagged with its rule.
    text: (RegexSet, Vec<usize>),
    thinking: (RegexSet, Vec<usize>),
    tool: (RegexSet, Vec<usize>),
    keep_partial: bool,
    // Rules that fired in this session (once each).
    fired: Mutex<BTreeSet<String>>,
}

impl Ttsr {
    /// The watcher of `rules`' stream rules, or `None` when there are none (or TTSR is off);
    /// `fired` are the rules injected earlier on the branch. A condition that is not a regex,
    /// or a scope that is not known, is a diagnostic and the rule is skipped.
    pub fn new(
        rules: &[Rule],
        settings: &TtsrSettings,
        fired: BTreeSet<String>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Arc<Ttsr>> {
        if !settings.enabled {
            return None;
        }
        let mut compiled = Vec::new();
        for rule in rules.iter().filter(|rule| rule.kind() == RuleKind::Stream) {
            if let Some(bad) = rule
                .condition
                .iter()
                .find(|condition| regex::Regex::new(condition).is_err())
            {
                diagnostics.push(Diagnostic::warning(
                    &rule.path,
                    format!("condition {bad:?} is not a regular expression; the rule is skipped"),
                ));
                continue;
            }
            if let Some(repeat) = rule
                .repeat
                .as_deref()
                .filter(|repeat| !matches!(*repeat, "once" | "after-gap"))
            {
                diagnostics.push(Diagnostic::warning(
                    &rule.path,
                    format!("repeat {repeat:?} is not once or after-gap; the rule fires once"),
                ));
            }
            if let Some(mode) = rule
                .interrupt_mode
                .as_deref()
                .filter(|mode| InterruptMode::parse(mode).is_none())
            {
                diagnostics.push(Diagnostic::warning(
                    &rule.path,
                    format!(
                        "interruptMode {mode:?} is not always, prose-only, tool-only or never; \
                         the rule follows ttsr.interruptMode"
                    ),
                ));
            }
            let scopes = match scopes(&rule.scope) {
                Ok(scopes) => scopes,
                Err(scope) => {
                    diagnostics.push(Diagnostic::warning(
                        &rule.path,
                        format!(
                            "scope {scope:?} is not text, thinking, tool or tool:NAME(GLOB); the rule is skipped"
                        ),
                    ));
                    continue;
                }
            };
            let mode = rule
                .interrupt_mode
                .as_deref()
                .and_then(InterruptMode::parse)
                .unwrap_or(settings.interrupt_mode);
            let globs = (!rule.globs.is_empty()).then(|| {
                let mut builder = globset::GlobSetBuilder::new();
                for glob in &rule.globs {
                    if let Ok(glob) = globset::Glob::new(glob) {
                        builder.add(glob);
                    }
                }
                builder.build().ok()
            });
            compiled.push(Compiled {
                rule: rule.clone(),
                scopes,
                mode,
                globs: globs.flatten(),
            });
        }
        if compiled.is_empty() {
            return None;
        }
        let set = |wanted: &dyn Fn(&Scope) -> bool| {
            let mut patterns = Vec::new();
            let mut owners = Vec::new();
            for (index, rule) in compiled.iter().enumerate() {
                if rule.scopes.iter().any(wanted) {
                    for condition in &rule.rule.condition {
                        patterns.push(condition.clone());
                        owners.push(index);
                    }
                }
            }
            (
                RegexSet::new(&patterns).unwrap_or_else(|_| RegexSet::empty()),
                owners,
            )
        };
        let text = set(&|scope| matches!(scope, Scope::Text));
        let thinking = set(&|scope| matches!(scope, Scope::Thinking));
        let tool = set(&|scope| matches!(scope, Scope::Tool(..)));
        Some(Arc::new(Ttsr {
            rules: compiled,
            text,
            thinking,
            tool,
            keep_partial: settings.keep_partial,
            fired: Mutex::new(fired),
        }))
    }

    /// The rules that fire on `text` from `source` (for `rules/test`), each with whether it
    /// interrupts there. Nothing is marked fired.
    pub fn test(&self, source: DeltaSource<'_>, text: &str) -> Vec<(&Rule, bool)> {
        let mut buffer = Buffer::default();
        self.matching(source, &mut buffer, text)
            .into_iter()
            .map(|index| (&self.rules[index].rule, self.interrupts(index, source)))
            .collect()
    }

    /// Every stream rule compiled (for `rules/test`).
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().map(|compiled| &compiled.rule)
    }

    /// Whether rule `index` interrupts a reply from `source`.
    fn interrupts(&self, index: usize, source: DeltaSource<'_>) -> bool {
        let prose = !matches!(source, DeltaSource::ToolCall { .. });
        match self.rules[index].mode {
            InterruptMode::Always => true,
            InterruptMode::ProseOnly => prose,
            InterruptMode::ToolOnly => !prose,
            InterruptMode::Never => false,
        }
    }

    /// The rules matched by `delta` appended to `buffer`, unfired, in scope.
    fn matching(&self, source: DeltaSource<'_>, buffer: &mut Buffer, delta: &str) -> Vec<usize> {
        let (set, owners) = match source {
            DeltaSource::Text => &self.text,
            DeltaSource::Thinking => &self.thinking,
            DeltaSource::ToolCall { .. } => &self.tool,
        };
        if owners.is_empty() {
            return Vec::new();
        }
        buffer.push(delta);
        let window = buffer.window();
        if !set.is_match(window) {
            return Vec::new();
        }
        let fired = self.fired.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found: Vec<usize> = set
            .matches(window)
            .into_iter()
            .map(|pattern| owners[pattern])
            .filter(|index| !fired.contains(&self.rules[*index].rule.name))
            .filter(|index| self.in_scope(*index, source, &buffer.all))
            .collect();
        found.dedup();
        found
    }

    /// Whether rule `index` looks at `source` (a tool call's name and its `path` checked).
    fn in_scope(&self, index: usize, source: DeltaSource<'_>, arguments: &str) -> bool {
        let rule = &self.rules[index];
        let DeltaSource::ToolCall { name } = source else {
            return true;
        };
        let path = argument_path(arguments);
        let by_scope = rule.scopes.iter().any(|scope| match scope {
            Scope::Tool(None, _) => true,
            Scope::Tool(Some(tool), glob) => {
                tool == name
                    && glob.as_ref().is_none_or(|glob| {
                        path.as_deref()
                            .is_some_and(|path| tails(path).any(|tail| glob.is_match(tail)))
                    })
            }
            Scope::Text | Scope::Thinking => false,
        });
        let by_globs = rule.globs.as_ref().is_none_or(|globs| {
            path.as_deref()
                .is_some_and(|path| tails(path).any(|tail| globs.is_match(tail)))
        });
        by_scope && by_globs
    }

    fn verdict(&self, index: usize, source: DeltaSource<'_>) -> Verdict {
        let rule = &self.rules[index].rule;
        self.fired
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(rule.name.clone());
        let interrupts = self.interrupts(index, source);
        let path = rule.path.display();
        if interrupts {
            Verdict::Interrupt {
                inject: hidden(
                    INJECTION,
                    format!(
                        "<system-interrupt reason=\"rule_violation\" rule=\"{}\" path=\"{path}\">\n{}\n</system-interrupt>",
                        rule.name,
                        rule.body.trim()
                    ),
                    &rule.name,
                ),
                keep_partial: self.keep_partial,
                reason: format!("Interrupted by the rule {}", rule.name),
            }
        } else {
            Verdict::Remind(hidden(
                REMINDER,
                format!(
                    "<system-reminder rule=\"{}\" path=\"{path}\">\n{}\n</system-reminder>",
                    rule.name,
                    rule.body.trim()
                ),
                &rule.name,
            ))
        }
    }
}

/// `path` and each part of it after a `/` (without a leading `./`): a glob such as
/// `src/**/*.rs` matches an absolute path into the project (`/home/me/p/src/x.rs`) too.
fn tails(path: &str) -> impl Iterator<Item = &str> {
    let path = path.strip_prefix("./").unwrap_or(path);
    std::iter::once(path).chain(
        path.match_indices('/')
            .map(move |(at, _)| &path[at + 1..])
            .filter(|tail| !tail.is_empty()),
    )
}

/// The rules of `rules` that may not fire yet on a branch whose context is `messages`: those
/// that fired there (injected, or reminded of — after a reply or first in a tool's result)
/// and either fire once per session, or after a gap of completed turns that has not passed.
pub fn fired_in(
    messages: &[Arc<AgentMessage>],
    rules: &[Rule],
    settings: &TtsrSettings,
) -> BTreeSet<String> {
    // Each rule's last firing, as the number of replies before it.
    let mut last: HashMap<String, usize> = HashMap::new();
    let mut replies = 0;
    for message in messages {
        match &**message {
            AgentMessage::Assistant(_) => replies += 1,
            AgentMessage::Custom(custom)
                if custom.custom_type == INJECTION || custom.custom_type == REMINDER =>
            {
                if let Some(rule) = custom
                    .details
                    .as_ref()
                    .and_then(|details| details["rule"].as_str())
                {
                    last.insert(rule.to_owned(), replies);
                }
            }
            AgentMessage::ToolResult(result) => {
                for block in &result.content {
                    if let pi_llm::UserContent::Text(text) = block
                        && let Some(rest) = text.text.strip_prefix("<system-reminder rule=\"")
                        && let Some((rule, _)) = rest.split_once('"')
                    {
                        last.insert(rule.to_owned(), replies);
                    }
                }
            }
            _ => {}
        }
    }
    last.into_iter()
        .filter(|(name, at)| {
            let rule = rules.iter().find(|rule| &rule.name == name);
            let after_gap = match rule.and_then(|rule| rule.repeat.as_deref()) {
                Some("after-gap") => true,
                Some(_) => false,
                None => settings.after_gap,
            };
            let gap = rule
                .and_then(|rule| rule.repeat_gap)
                .unwrap_or(settings.repeat_gap);
            !after_gap || ((replies - at) as u64) < gap
        })
        .map(|(name, _)| name)
        .collect()
}

fn hidden(custom_type: &str, text: String, rule: &str) -> AgentMessage {
    AgentMessage::Custom(CustomMessage {
        custom_type: custom_type.to_owned(),
        content: vec![pi_llm::UserContent::text(text)],
        display: false,
        details: Some(serde_json::json!({"rule": rule})),
        timestamp: pi_util::time::now_millis(),
    })
}

fn scopes(names: &[String]) -> Result<Vec<Scope>, String> {
    if names.is_empty() {
        return Ok(vec![Scope::Text, Scope::Tool(None, None)]);
    }
    names
        .iter()
        .map(|name| {
            let name = name.trim();
            match name {
                "text" => Ok(Scope::Text),
                "thinking" => Ok(Scope::Thinking),
                "tool" | "toolcall" => Ok(Scope::Tool(None, None)),
                _ => {
                    let rest = name.strip_prefix("tool:").ok_or_else(|| name.to_owned())?;
                    let (tool, glob) = match rest.split_once('(') {
                        Some((tool, glob)) => (
                            tool,
                            Some(
                                globset::Glob::new(
                                    glob.strip_suffix(')').ok_or_else(|| name.to_owned())?,
                                )
                                .map_err(|_| name.to_owned())?
                                .compile_matcher(),
                            ),
                        ),
                        None => (rest, None),
                    };
                    if tool.is_empty() {
                        return Err(name.to_owned());
                    }
                    Ok(Scope::Tool(Some(tool.to_owned()), glob))
                }
            }
        })
        .collect()
}

/// The `path` argument of a tool call's JSON so far, if it is complete.
fn argument_path(arguments: &str) -> Option<String> {
    let start = arguments.find("\"path\"")?;
    let rest = &arguments[start + 6..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_owned())
}

/// One block's text so far.
#[derive(Default)]
struct Buffer {
    all: String,
    // Where the window starts in `all`.
    start: usize,
}

impl Buffer {
    fn push(&mut self, delta: &str) {
        self.all.push_str(delta);
        let mut start = self.all.len().saturating_sub(delta.len() + LOOKBACK);
        while !self.all.is_char_boundary(start) {
            start += 1;
        }
        self.start = start;
    }

    fn window(&self) -> &str {
        &self.all[self.start..]
    }
}

/// A session's stream rules as a run's watcher.
#[derive(Debug, Clone)]
pub struct TtsrWatch(pub Arc<Ttsr>);

impl StreamWatch for TtsrWatch {
    fn message(&self) -> Box<dyn MessageWatch> {
        Box::new(Watching {
            ttsr: self.0.clone(),
            buffers: HashMap::new(),
        })
    }
}

/// One message's watcher: a buffer per block.
struct Watching {
    ttsr: Arc<Ttsr>,
    buffers: HashMap<usize, Buffer>,
}

impl MessageWatch for Watching {
    fn delta(&mut self, content_index: usize, source: DeltaSource<'_>, delta: &str) -> Verdict {
        let buffer = self.buffers.entry(content_index).or_default();
        match self.ttsr.matching(source, buffer, delta).first() {
            Some(index) => self.ttsr.verdict(*index, source),
            None => Verdict::Go,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn rule(name: &str, condition: &str, scope: &[&str], mode: Option<&str>) -> Rule {
        Rule {
            name: name.to_owned(),
            description: None,
            globs: Vec::new(),
            always: false,
            condition: vec![condition.to_owned()],
            scope: scope.iter().map(|scope| (*scope).to_owned()).collect(),
            interrupt_mode: mode.map(str::to_owned),
            repeat: None,
            repeat_gap: None,
            body: format!("Do not do {name}."),
            path: PathBuf::from(format!("/rules/{name}.md")),
            provider: "native",
        }
    }

    fn ttsr(rules: &[Rule]) -> Arc<Ttsr> {
        Ttsr::new(
            rules,
            &TtsrSettings::default(),
            BTreeSet::new(),
            &mut Vec::new(),
        )
        .unwrap()
    }

    fn feed(watch: &mut dyn MessageWatch, source: DeltaSource<'_>, text: &str) -> Verdict {
        // A character at a time: matches complete across deltas.
        let mut last = Verdict::Go;
        for character in text.chars() {
            last = watch.delta(0, source, &character.to_string());
            if !matches!(last, Verdict::Go) {
                break;
            }
        }
        last
    }

    #[test]
    fn a_match_across_deltas_interrupts_once_in_its_scope() {
        let watch = TtsrWatch(ttsr(&[
            rule("no-any", r":\s*any\b", &["tool:write(**/*.ts)"], None),
            rule("no-sorry", r"(?i)\bsorry\b", &["text"], None),
        ]));
        let mut message = watch.message();
        assert!(matches!(
            feed(message.as_mut(), DeltaSource::Thinking, "I am sorry"),
            Verdict::Go
        ));
        let Verdict::Interrupt {
            inject,
            keep_partial,
            reason,
        } = feed(
            message.as_mut(),
            DeltaSource::Text,
            "Well, I am SORRY about that",
        )
        else {
            panic!("the text rule fires");
        };
        assert!(!keep_partial);
        assert_eq!(reason, "Interrupted by the rule no-sorry");
        let AgentMessage::Custom(custom) = &inject else {
            panic!("a custom message");
        };
        assert!(!custom.display);
        assert_eq!(custom.custom_type, INJECTION);
        assert!(matches!(&custom.content[0], pi_llm::UserContent::Text(text)
            if text.text.starts_with("<system-interrupt reason=\"rule_violation\" rule=\"no-sorry\"")));
        // Once per session.
        let mut next = watch.message();
        assert!(matches!(
            feed(next.as_mut(), DeltaSource::Text, "sorry again"),
            Verdict::Go
        ));
        // A tool rule looks at that tool's calls on matching paths only.
        let mut call = watch.message();
        assert!(matches!(
            feed(
                call.as_mut(),
                DeltaSource::ToolCall { name: "write" },
                r#"{"path": "notes.md", "content": "x: any"}"#
            ),
            Verdict::Go
        ));
        let mut call = watch.message();
        assert!(matches!(
            feed(
                call.as_mut(),
                DeltaSource::ToolCall { name: "write" },
                r#"{"path": "src/a.ts", "content": "let x: any = 1"}"#
            ),
            Verdict::Interrupt { .. }
        ));
    }

    #[test]
    fn rules_that_do_not_interrupt_there_remind() {
        let watch = TtsrWatch(ttsr(&[rule(
            "no-todo",
            "TODO",
            &["text", "tool"],
            Some("prose-only"),
        )]));
        let mut message = watch.message();
        let Verdict::Remind(reminder) = feed(
            message.as_mut(),
            DeltaSource::ToolCall { name: "edit" },
            r#"{"newText": "// TODO later"}"#,
        ) else {
            panic!("a reminder");
        };
        assert!(
            matches!(&reminder, AgentMessage::Custom(custom) if custom.custom_type == REMINDER)
        );
        assert_eq!(
            fired_in(&[Arc::new(reminder)], &[], &TtsrSettings::default()),
            BTreeSet::from(["no-todo".to_owned()])
        );
    }

    #[test]
    fn a_path_glob_matches_absolute_and_dotted_paths_into_the_project() {
        let rules = [rule(
            "no-any",
            r":\s*any\b",
            &["tool:write(src/**/*.ts)"],
            None,
        )];
        let ttsr = ttsr(&rules);
        for path in ["src/a/x.ts", "./src/x.ts", "/home/me/project/src/a/x.ts"] {
            let arguments = format!(r#"{{"path": "{path}", "content": "let x: any"}}"#);
            assert_eq!(
                ttsr.test(DeltaSource::ToolCall { name: "write" }, &arguments)
                    .len(),
                1,
                "{path}"
            );
        }
        let elsewhere = r#"{"path": "/home/me/project/lib/x.ts", "content": "let x: any"}"#;
        assert!(
            ttsr.test(DeltaSource::ToolCall { name: "write" }, elsewhere)
                .is_empty()
        );
    }

    #[test]
    fn a_rule_fires_once_or_again_after_its_gap_of_turns() {
        let reply = || Arc::new(AgentMessage::Assistant(pi_llm::AssistantMessage::default()));
        let injection = Arc::new(hidden(INJECTION, "x".to_owned(), "no-ai"));
        let tool_reminder = Arc::new(AgentMessage::ToolResult(pi_llm::ToolResultMessage {
            tool_call_id: "c1".to_owned(),
            tool_name: "bash".to_owned(),
            content: vec![
                pi_llm::UserContent::text(
                    "<system-reminder rule=\"no-force\" path=\"/r\">\nWhy?\n</system-reminder>",
                ),
                pi_llm::UserContent::text("done"),
            ],
            details: None,
            is_error: false,
            timestamp: 0,
        }));
        let mut again = rule("no-ai", "as an ai", &["text"], None);
        again.repeat = Some("after-gap".to_owned());
        again.repeat_gap = Some(2);
        let once = rule("no-force", "--force", &["tool"], None);
        let rules = [again, once];
        let settings = TtsrSettings::default();
        let both = BTreeSet::from(["no-ai".to_owned(), "no-force".to_owned()]);
        // Just fired: neither may fire.
        let context = vec![injection.clone(), reply(), tool_reminder.clone()];
        assert_eq!(fired_in(&context, &rules, &settings), both);
        // Two replies after its injection the after-gap rule may fire again; the other never.
        let context = vec![injection, reply(), tool_reminder, reply()];
        assert_eq!(
            fired_in(&context, &rules, &settings),
            BTreeSet::from(["no-force".to_owned()])
        );
        // The setting makes after-gap the default, with its own gap.
        let settings = TtsrSettings {
            after_gap: true,
            repeat_gap: 1,
            ..TtsrSettings::default()
        };
        let plain = [rule("no-force", "--force", &["tool"], None)];
        let context = vec![
            Arc::new(hidden(REMINDER, "x".to_owned(), "no-force")),
            reply(),
        ];
        assert!(fired_in(&context, &plain, &settings).is_empty());
    }

    #[test]
    fn bad_rules_are_named_and_skipped_and_no_rules_means_no_watcher() {
        let mut diagnostics = Vec::new();
        let none = Ttsr::new(
            &[
                rule("broken", "(unclosed", &[], None),
                rule("odd", "x", &["tool:"], None),
            ],
            &TtsrSettings::default(),
            BTreeSet::new(),
            &mut diagnostics,
        );
        assert!(none.is_none());
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "condition \"(unclosed\" is not a regular expression; the rule is skipped",
                "scope \"tool:\" is not text, thinking, tool or tool:NAME(GLOB); the rule is skipped"
            ]
        );
        let mut diagnostics = Vec::new();
        let unclosed = rule("unclosed", "x", &["tool:write(*.rs"], Some("sometimes"));
        assert!(
            Ttsr::new(
                &[unclosed],
                &TtsrSettings::default(),
                BTreeSet::new(),
                &mut diagnostics
            )
            .is_none()
        );
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "interruptMode \"sometimes\" is not always, prose-only, tool-only or never; the rule follows ttsr.interruptMode",
                "scope \"tool:write(*.rs\" is not text, thinking, tool or tool:NAME(GLOB); the rule is skipped"
            ]
        );
        let mut twice = rule("twice", "x", &[], None);
        twice.repeat = Some("twice".to_owned());
        let mut diagnostics = Vec::new();
        assert!(
            Ttsr::new(
                &[twice],
                &TtsrSettings::default(),
                BTreeSet::new(),
                &mut diagnostics
            )
            .is_some()
        );
        assert_eq!(
            diagnostics[0].message,
            "repeat \"twice\" is not once or after-gap; the rule fires once"
        );
    }
}

//! Test helpers: deterministic sessions, events and entries; a `Harness` that feeds inputs
//! through `update` and renders frames on ratatui's `TestBackend`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi_protocol::v1::message::*;
use pi_protocol::v1::*;
use pi_tui::effect::Effect;
use pi_tui::input::{Attachment, Input, Reply};
use pi_tui::keymap::Keymap;
use pi_tui::state::{Environment, State};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use serde_json::{Value, json};

pub const SESSION: &str = "0b7e3f52-9c1d-4a8e-b6f0-2d4c8a1e5f37";
pub const ME: &str = "c1";

pub fn info(last_seq: u64) -> SessionInfo {
    SessionInfo {
        id: SESSION.to_owned(),
        cwd: "/home/ada/projects/pi".to_owned(),
        name: None,
        created_at: 1_700_000_000_000,
        updated_at: 1_700_000_000_000,
        model: Some(ModelRef {
            provider: "anthropic".to_owned(),
            id: "claude-sonnet-4-5".to_owned(),
        }),
        thinking_level: "medium".to_owned(),
        leaf_id: None,
        message_count: 0,
        first_message: None,
        parent_session_id: None,
        task_name: None,
        missing_env: Vec::new(),
        status: SessionStatus::Idle,
        last_seq,
        warnings: Vec::new(),
        pi_file: None,
        questions: 0,
    }
}

/// `session/get`'s answer with these commands and shortcuts, and what the session loaded.
pub fn session_details(
    commands: Vec<pi_protocol::v1::SlashCommand>,
    shortcuts: Vec<pi_protocol::v1::ExtensionShortcut>,
    context_files: Vec<String>,
    extensions: Vec<String>,
) -> Reply {
    Reply::Commands(Box::new(pi_protocol::v1::SessionGetResponse {
        info: info(0),
        tools: Vec::new(),
        mcp_tools: Vec::new(),
        queue: Default::default(),
        attached_clients: 1,
        system_prompt: None,
        resource_diagnostics: Vec::new(),
        commands,
        shortcuts,
        context_files,
        extensions,
        todos: Default::default(),
        rules: Vec::new(),
        plan_mode: false,
        approved_plan: None,
    }))
}

/// `settings/get`'s effective settings: pi's defaults with `changes` (settings.json's keys)
/// over them.
pub fn settings(changes: Value) -> Reply {
    let mut settings = serde_json::json!({
        "defaultThinkingLevel": "medium",
        "steeringMode": "one-at-a-time",
        "followUpMode": "one-at-a-time",
        "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000},
        "branchSummary": {"reserveTokens": 16384, "skipPrompt": false},
        "retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 2000, "maxDelayMs": 60000},
        "skills": [],
        "enableSkillCommands": true,
        "prompts": [],
        "mcp": {"enabled": true, "disabledServers": []},
    });
    for (key, value) in changes.as_object().unwrap() {
        settings[key] = value.clone();
    }
    Reply::Settings(Box::new(serde_json::from_value(settings).unwrap()))
}

pub fn models() -> Vec<ModelInfo> {
    let model = |provider: &str, id: &str, name: &str, has_key: bool| ModelInfo {
        provider: provider.to_owned(),
        id: id.to_owned(),
        name: name.to_owned(),
        api: "anthropic-messages".to_owned(),
        context_window: 200_000,
        max_tokens: 64_000,
        reasoning: true,
        images: true,
        input_cost: 3.0,
        output_cost: 15.0,
        has_key,
        base_url: None,
        cache_read_cost: None,
        cache_write_cost: None,
    };
    vec![
        model("anthropic", "claude-opus-4-1", "Claude Opus 4.1", true),
        model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", true),
        model("google", "gemini-2.5-pro", "Gemini 2.5 Pro", false),
        model("openai", "gpt-5", "GPT-5", true),
    ]
}

pub fn text(text: &str) -> UserContent {
    UserContent::Text(TextContent {
        text: text.to_owned(),
        text_signature: None,
    })
}

pub fn user(content: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: vec![text(content)],
        timestamp: 0,
    })
}

pub fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        total_tokens: input + output,
        cost: Cost {
            input: 0.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total: (input as f64 * 3.0 + output as f64 * 15.0) / 1_000_000.0,
        },
    }
}

pub fn assistant(content: Vec<AssistantContent>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: "anthropic-messages".to_owned(),
        provider: "anthropic".to_owned(),
        model: "claude-sonnet-4-5".to_owned(),
        usage: usage(1200, 340),
        stop_reason,
        error_message: None,
        timestamp: 0,
        response_id: None,
    }
}

pub fn reply_text(text: &str) -> AssistantContent {
    AssistantContent::Text(TextContent {
        text: text.to_owned(),
        text_signature: None,
    })
}

pub fn thinking(text: &str) -> AssistantContent {
    AssistantContent::Thinking(ThinkingContent {
        thinking: text.to_owned(),
        thinking_signature: None,
        redacted: false,
    })
}

pub fn tool_call(id: &str, name: &str, arguments: Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.into(),
        thought_signature: None,
    })
}

pub fn tool_result(
    id: &str,
    name: &str,
    output: &str,
    details: Value,
    is_error: bool,
) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.to_owned(),
        tool_name: name.to_owned(),
        content: vec![text(output)],
        details: Some(details),
        is_error,
        timestamp: 0,
    })
}

pub fn entry(id: &str, parent: Option<&str>, seq: u64, message: AgentMessage) -> EntryRecord {
    EntryRecord {
        seq,
        entry: SessionEntry::Message {
            id: id.to_owned(),
            parent_id: parent.map(str::to_owned),
            timestamp: "2026-11-23T10:00:00.000Z".to_owned(),
            message,
        },
    }
}

/// Entries for a linear history of messages, ids `e1`, `e2`, ... and seqs 1, 2, ...
pub fn history(messages: Vec<AgentMessage>) -> Vec<EntryRecord> {
    messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| {
            let id = format!("e{}", index + 1);
            let parent = (index > 0).then(|| format!("e{index}"));
            entry(&id, parent.as_deref(), index as u64 + 1, message)
        })
        .collect()
}

pub fn event(seq: u64, event: SessionEvent) -> Input {
    Input::Event(Box::new(SessionEventParams {
        session_id: SESSION.to_owned(),
        seq,
        event,
    }))
}

pub fn delta(seq: u64, index: usize, text: &str) -> Input {
    event(
        seq,
        SessionEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta {
                content_index: index,
                delta: text.to_owned(),
            },
        },
    )
}

pub fn key(code: KeyCode) -> Input {
    key_with(code, KeyModifiers::NONE)
}

pub fn key_with(code: KeyCode, modifiers: KeyModifiers) -> Input {
    Input::Key {
        event: KeyEvent::new(code, modifiers),
        now_ms: 1_000,
    }
}

pub fn ctrl(c: char) -> Input {
    key_with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// A state fed through `update`, rendered on demand.
pub struct Harness {
    pub state: State,
    pub effects: Vec<Effect>,
}

impl Harness {
    /// A state before attaching.
    pub fn new() -> Harness {
        let environment = Environment {
            cwd_display: "~/projects/pi".to_owned(),
            git_branch: Some("main".to_owned()),
            connection_id: ME.to_owned(),
            verbose: false,
            home: "/home/me".to_owned(),
            theme_paths: Vec::new(),
            no_themes: false,
            graphics: None,
            anthropic_env_token: false,
            subscription_key: false,
            cell: (9, 18),
        };
        let mut state = State::new(Keymap::default(), environment);
        pi_tui::update(&mut state, Input::Reply(Reply::Models(models())));
        state.files = vec![
            "Cargo.toml".to_owned(),
            "README.md".to_owned(),
            "src/main.rs".to_owned(),
            "src/markdown.rs".to_owned(),
            "src/parser.rs".to_owned(),
        ];
        Harness {
            state,
            effects: Vec::new(),
        }
    }

    /// Attached to a session holding `entries` (its last seq is the last entry's).
    pub fn attached(entries: Vec<EntryRecord>) -> Harness {
        let mut harness = Harness::new();
        let last_seq = entries.iter().map(|record| record.seq).max().unwrap_or(0);
        let mut session = info(last_seq);
        session.leaf_id = entries.last().map(|record| match &record.entry {
            SessionEntry::Message { id, .. } => id.clone(),
            _ => String::new(),
        });
        harness.attach(session, entries);
        harness
    }

    pub fn attach(&mut self, session: SessionInfo, entries: Vec<EntryRecord>) {
        let me = AttachedClient {
            connection_id: ME.to_owned(),
            name: "pi-tui".to_owned(),
            draft: String::new(),
        };
        self.send(Input::Attached(Box::new(Attachment {
            connection_id: ME.to_owned(),
            response: SessionAttachResponse {
                snapshot: SessionSnapshot {
                    info: session,
                    streaming_message: None,
                    running_tools: Vec::new(),
                    queue: QueueState::default(),
                    attached_clients: 1,
                    clients: vec![me],
                },
                replay: Vec::new(),
                gapless: false,
            },
            history: Some(entries),
        })));
    }

    pub fn send(&mut self, input: Input) -> &mut Harness {
        let effects = pi_tui::update(&mut self.state, input);
        self.effects.extend(effects);
        self
    }

    pub fn type_text(&mut self, text: &str) -> &mut Harness {
        for c in text.chars() {
            self.send(key(KeyCode::Char(c)));
        }
        self
    }

    /// Takes the effects produced so far.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }

    pub fn render(&mut self, width: u16, height: u16) -> Buffer {
        self.send(Input::Resize(width, height));
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| pi_tui::render(&self.state, frame))
            .unwrap();
        terminal.backend().buffer().clone()
    }

    /// The screen and where the terminal's cursor was put (`(0, 0)` when it was hidden).
    pub fn render_with_cursor(&mut self, width: u16, height: u16) -> (Buffer, (u16, u16)) {
        self.send(Input::Resize(width, height));
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| pi_tui::render(&self.state, frame))
            .unwrap();
        let position = terminal.get_cursor_position().unwrap();
        (
            terminal.backend().buffer().clone(),
            (position.x, position.y),
        )
    }

    /// The screen as text, one line per row, trailing spaces trimmed.
    pub fn screen(&mut self, width: u16, height: u16) -> String {
        screen_text(&self.render(width, height))
    }

    /// The screen as text followed by its styled runs (`row col..col style`).
    pub fn styled_screen(&mut self, width: u16, height: u16) -> String {
        let buffer = self.render(width, height);
        format!(
            "{}\n--- styles\n{}",
            screen_text(&buffer),
            style_runs(&buffer)
        )
    }
}

pub fn screen_text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut lines = Vec::new();
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            let symbol = buffer[(x, y)].symbol();
            line.push_str(symbol);
        }
        lines.push(format!("│{}", line.trim_end()));
    }
    lines.join("\n")
}

fn style_runs(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut runs = Vec::new();
    for y in 0..area.height {
        let mut x = 0;
        while x < area.width {
            let cell = &buffer[(x, y)];
            let describe = style_name(cell.fg, cell.modifier);
            let start = x;
            let mut text = String::new();
            while x < area.width {
                let next = &buffer[(x, y)];
                if style_name(next.fg, next.modifier) != describe {
                    break;
                }
                text.push_str(next.symbol());
                x += 1;
            }
            if !describe.is_empty() && !text.trim().is_empty() {
                runs.push(format!(
                    "{y:>3} {start:>3}..{x:<3} {describe:<18} {}",
                    text.trim_end()
                ));
            }
        }
    }
    runs.join("\n")
}

fn style_name(fg: Color, modifier: Modifier) -> String {
    let mut parts = Vec::new();
    match fg {
        Color::Reset => {}
        Color::Rgb(r, g, b) => parts.push(format!("#{r:02x}{g:02x}{b:02x}")),
        Color::Indexed(index) => parts.push(format!("c{index}")),
        named => parts.push(format!("{named:?}").to_lowercase()),
    }
    for (flag, name) in [
        (Modifier::BOLD, "bold"),
        (Modifier::DIM, "dim"),
        (Modifier::ITALIC, "italic"),
        (Modifier::UNDERLINED, "underline"),
        (Modifier::REVERSED, "reversed"),
        (Modifier::CROSSED_OUT, "strike"),
    ] {
        if modifier.contains(flag) {
            parts.push(name.to_owned());
        }
    }
    parts.join("+")
}

pub fn edit_details() -> Value {
    json!({
        "diff": "    ...\n  4 \n  5 fn parse(input: &str) -> Ast {\n- 6     let tokens = lex(input);\n+ 6     let tokens = lex(input)?;\n+ 7     check(&tokens)?;\n  8     build(tokens)\n  9 }\n    ...",
        "firstChangedLine": 6
    })
}

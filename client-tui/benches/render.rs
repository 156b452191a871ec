//! TUI frame benchmarks on a 10,000-message session: the first (cold) frame, a frame while a
//! reply streams (one delta applied, then drawn), a scroll by a page, and a keystroke in the
//! editor to the updated frame. Frames are drawn by ratatui into a crossterm backend writing
//! to a sink, so the diff and escape-code output are included; only the terminal's own
//! drawing is not.
//!
//! Run: `cargo bench -p pi-tui --bench render`. Prints a Markdown table for
//! `docs/benchmarks.md`.

#![allow(clippy::unwrap_used, clippy::print_stdout, reason = "bench binary")]

use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi_protocol::v1::message::*;
use pi_protocol::v1::*;
use pi_tui::input::{Attachment, Input};
use pi_tui::keymap::Keymap;
use pi_tui::state::{Environment, State};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use serde_json::json;

const MESSAGES: usize = 10_000;
const RUNS: usize = 300;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

fn text(text: &str) -> UserContent {
    UserContent::Text(TextContent {
        text: text.to_owned(),
        text_signature: None,
    })
}

fn assistant(content: Vec<AssistantContent>) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        usage: Usage::default(),
        stop_reason: StopReason::Stop,
        error_message: None,
        timestamp: 0,
        response_id: None,
    })
}

/// 10,000 messages: user prompts, Markdown replies with code, tool calls and results.
fn session_entries() -> Vec<EntryRecord> {
    let reply = "## Findings\n\nThe **parser** calls `unwrap()` in three places:\n\n1. `lex`\n2. `build`\n3. `check`\n\n```rust\nfn parse(input: &str) -> Result<Ast, Error> {\n    let tokens = lex(input)?;\n    Ok(build(tokens))\n}\n```\n\n| file | risk |\n|---|---|\n| lexer.rs | low |\n";
    let mut messages = Vec::with_capacity(MESSAGES);
    let mut n = 0;
    while messages.len() < MESSAGES {
        n += 1;
        messages.push(AgentMessage::User(UserMessage {
            content: vec![text(&format!(
                "Question {n}: why does the parser panic on bad input?"
            ))],
            timestamp: 0,
        }));
        messages.push(assistant(vec![
            AssistantContent::Text(TextContent {
                text: "Let me look.".into(),
                text_signature: None,
            }),
            AssistantContent::ToolCall(ToolCall {
                id: format!("call{n}"),
                name: "bash".into(),
                arguments: json!({"command": "cargo test -p parser"}).into(),
                thought_signature: None,
            }),
        ]));
        messages.push(AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: format!("call{n}"),
            tool_name: "bash".into(),
            content: vec![text(&"test parser::case ... ok\n".repeat(20))],
            details: None,
            is_error: false,
            timestamp: 0,
        }));
        messages.push(assistant(vec![AssistantContent::Text(TextContent {
            text: reply.into(),
            text_signature: None,
        })]));
    }
    messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| EntryRecord {
            seq: index as u64 + 1,
            entry: SessionEntry::Message {
                id: format!("{index:08x}"),
                parent_id: (index > 0).then(|| format!("{:08x}", index - 1)),
                timestamp: "2026-11-23T10:00:00.000Z".into(),
                message,
            },
        })
        .collect()
}

fn attached_state(entries: Vec<EntryRecord>) -> State {
    let environment = Environment {
        cwd_display: "~/projects/pi".into(),
        git_branch: Some("main".into()),
        connection_id: "c1".into(),
        verbose: false,
        home: String::new(),
        theme_paths: Vec::new(),
        no_themes: false,
        graphics: None,
        anthropic_env_token: false,
        subscription_key: false,
        cell: (9, 18),
    };
    let mut state = State::new(Keymap::default(), environment);
    let last_seq = entries.len() as u64;
    let info = SessionInfo {
        id: "bench".into(),
        cwd: "/home/ada/projects/pi".into(),
        name: None,
        created_at: 0,
        updated_at: 0,
        model: None,
        thinking_level: "off".into(),
        leaf_id: None,
        message_count: last_seq,
        first_message: None,
        parent_session_id: None,
        task_name: None,
        missing_env: Vec::new(),
        status: SessionStatus::Running,
        last_seq,
        warnings: Vec::new(),
        pi_file: None,
        questions: 0,
    };
    pi_tui::update(
        &mut state,
        Input::Attached(Box::new(Attachment {
            connection_id: "c1".into(),
            response: SessionAttachResponse {
                snapshot: SessionSnapshot {
                    info,
                    streaming_message: None,
                    running_tools: Vec::new(),
                    queue: QueueState::default(),
                    attached_clients: 1,
                    clients: Vec::new(),
                },
                replay: Vec::new(),
                gapless: false,
            },
            history: Some(entries),
        })),
    );
    pi_tui::update(&mut state, Input::Resize(WIDTH, HEIGHT));
    state
}

fn event(seq: u64, event: SessionEvent) -> Input {
    Input::Event(Box::new(SessionEventParams {
        session_id: "bench".into(),
        seq,
        event,
    }))
}

struct Stats {
    p50: Duration,
    p99: Duration,
    max: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    Stats {
        p50: samples[samples.len() / 2],
        p99: samples[samples.len() * 99 / 100],
        max: samples[samples.len() - 1],
    }
}

fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1000.0)
}

fn main() {
    let started = Instant::now();
    let entries = session_entries();
    let mut state = attached_state(entries);
    let load = started.elapsed();
    let items = state.transcript.items().len();

    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
        },
    )
    .unwrap();

    let cold = Instant::now();
    terminal
        .draw(|frame| pi_tui::render(&state, frame))
        .unwrap();
    let cold = cold.elapsed();

    // A reply streaming: each sample applies one delta and draws.
    let mut seq = state.session.as_ref().unwrap().last_seq;
    seq += 1;
    pi_tui::update(
        &mut state,
        event(
            seq,
            SessionEvent::MessageStart {
                message: assistant(Vec::new()),
            },
        ),
    );
    let mut streaming = Vec::with_capacity(RUNS);
    for n in 0..RUNS {
        seq += 1;
        let delta = if n % 20 == 19 { "word.\n\n" } else { "word " };
        let sample = Instant::now();
        pi_tui::update(
            &mut state,
            event(
                seq,
                SessionEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::TextDelta {
                        content_index: 0,
                        delta: delta.into(),
                    },
                },
            ),
        );
        terminal
            .draw(|frame| pi_tui::render(&state, frame))
            .unwrap();
        streaming.push(sample.elapsed());
    }

    // A long reply: ~100,000 characters streamed so far, then more deltas.
    let paragraph = "The parser walks the token stream and builds the tree; each `node` keeps its span so errors point at the source. ".repeat(4) + "\n\n";
    let mut long_text = String::new();
    while long_text.len() < 100_000 {
        long_text.push_str(&paragraph);
    }
    seq += 1;
    pi_tui::update(
        &mut state,
        event(
            seq,
            SessionEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta {
                    content_index: 0,
                    delta: long_text,
                },
            },
        ),
    );
    let mut long_streaming = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        seq += 1;
        let sample = Instant::now();
        pi_tui::update(
            &mut state,
            event(
                seq,
                SessionEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::TextDelta {
                        content_index: 0,
                        delta: "more words ".into(),
                    },
                },
            ),
        );
        terminal
            .draw(|frame| pi_tui::render(&state, frame))
            .unwrap();
        long_streaming.push(sample.elapsed());
    }
    seq += 1;
    pi_tui::update(
        &mut state,
        event(
            seq,
            SessionEvent::MessageEnd {
                message: assistant(vec![AssistantContent::Text(TextContent {
                    text: "done".into(),
                    text_signature: None,
                })]),
                entry_id: Some("final".into()),
            },
        ),
    );

    // Keystrokes in the editor, each to its updated frame.
    let mut keystrokes = Vec::with_capacity(RUNS);
    for n in 0..RUNS {
        let c = (b'a' + (n % 26) as u8) as char;
        let sample = Instant::now();
        pi_tui::update(
            &mut state,
            Input::Key {
                event: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
                now_ms: n as u64,
            },
        );
        terminal
            .draw(|frame| pi_tui::render(&state, frame))
            .unwrap();
        keystrokes.push(sample.elapsed());
    }

    // `@` completion over 20,000 files: each keystroke refilters with nucleo, then draws.
    state.files = (0..20_000)
        .map(|n| format!("crates/crate_{}/src/module_{}/file_{n}.rs", n % 40, n % 300))
        .collect();
    pi_tui::update(
        &mut state,
        Input::Key {
            event: KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
            now_ms: 5_000,
        },
    );
    let mut completing = Vec::with_capacity(RUNS);
    for n in 0..RUNS {
        let c = ['@', 'm', 'o', 'd', '1', '2'][n % 6];
        if c == '@' {
            pi_tui::update(
                &mut state,
                Input::Key {
                    event: KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
                    now_ms: 6_000,
                },
            );
        }
        let sample = Instant::now();
        pi_tui::update(
            &mut state,
            Input::Key {
                event: KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
                now_ms: 7_000 + n as u64,
            },
        );
        terminal
            .draw(|frame| pi_tui::render(&state, frame))
            .unwrap();
        completing.push(sample.elapsed());
    }
    assert!(state.completion.is_some(), "completion is showing");

    // Scrolling up page by page through never-drawn history (layouts computed on the way).
    let mut scrolling = Vec::with_capacity(RUNS);
    for n in 0..RUNS {
        let sample = Instant::now();
        pi_tui::update(
            &mut state,
            Input::Key {
                event: KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE),
                now_ms: 10_000 + n as u64,
            },
        );
        terminal
            .draw(|frame| pi_tui::render(&state, frame))
            .unwrap();
        scrolling.push(sample.elapsed());
    }

    // Jump to the top: every item laid out once.
    state.view.scroll_from_bottom = usize::MAX / 2;
    let to_top = Instant::now();
    terminal
        .draw(|frame| pi_tui::render(&state, frame))
        .unwrap();
    let to_top = to_top.elapsed();
    // Steady frames at the top, layouts cached.
    let mut at_top = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let sample = Instant::now();
        terminal
            .draw(|frame| pi_tui::render(&state, frame))
            .unwrap();
        at_top.push(sample.elapsed());
    }

    let streaming = stats(streaming);
    let long_streaming = stats(long_streaming);
    let keystrokes = stats(keystrokes);
    let scrolling = stats(scrolling);
    let completing = stats(completing);
    let at_top = stats(at_top);
    println!(
        "TUI render benchmark: {MESSAGES} messages ({items} transcript items), {WIDTH}x{HEIGHT}, {RUNS} samples each\n"
    );
    println!("| measure | p50 | p99 | max | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| frame while streaming (one delta applied, then drawn) | {} | {} | {} | < 16 ms |",
        ms(streaming.p50),
        ms(streaming.p99),
        ms(streaming.max)
    );
    println!(
        "| frame while streaming a 100,000-character reply | {} | {} | {} | < 16 ms |",
        ms(long_streaming.p50),
        ms(long_streaming.p99),
        ms(long_streaming.max)
    );
    println!(
        "| keystroke to updated frame | {} | {} | {} | < 16 ms |",
        ms(keystrokes.p50),
        ms(keystrokes.p99),
        ms(keystrokes.max)
    );
    println!(
        "| keystroke in an `@` completion over 20,000 files | {} | {} | {} | < 16 ms |",
        ms(completing.p50),
        ms(completing.p99),
        ms(completing.max)
    );
    println!(
        "| page up through history not drawn before | {} | {} | {} | < 16 ms |",
        ms(scrolling.p50),
        ms(scrolling.p99),
        ms(scrolling.max)
    );
    println!(
        "| frame at the top of the session (layouts cached) | {} | {} | {} | |",
        ms(at_top.p50),
        ms(at_top.p99),
        ms(at_top.max)
    );
    println!();
    println!("| one-off | time |");
    println!("|---|---|");
    println!(
        "| build the transcript from {MESSAGES} entries (attach) | {} |",
        ms(load)
    );
    println!(
        "| first frame (cold layout cache, first code block loads the grammars) | {} |",
        ms(cold)
    );
    println!(
        "| jump to the top (lay out all {items} items) | {} |",
        ms(to_top)
    );
}

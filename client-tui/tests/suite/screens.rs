//! Every widget and state as an insta snapshot of the rendered frame (text, and styles where
//! colour carries meaning). Regenerate with `cargo insta review`.

use crossterm::event::{KeyCode, KeyModifiers};
use insta::assert_snapshot;
use pi_protocol::v1::message::*;
use pi_protocol::v1::*;
use pi_tui::input::{Input, Reply};
use serde_json::json;

use super::support::*;

/// A conversation with one of each tool.
fn tools_session() -> Harness {
    let calls = assistant(
        vec![
            reply_text("Let me look around and fix it."),
            tool_call(
                "t1",
                "read",
                json!({"path": "src/parser.rs", "offset": 40, "limit": 60}),
            ),
            tool_call(
                "t2",
                "edit",
                json!({"path": "src/parser.rs", "oldText": "a", "newText": "b"}),
            ),
            tool_call("t3", "bash", json!({"command": "cargo test -p parser"})),
            tool_call(
                "t4",
                "write",
                json!({"path": "notes/plan.md", "content": "# Plan\n\n- one\n- two\n"}),
            ),
            tool_call(
                "t5",
                "lsp_hover",
                json!({"file": "src/parser.rs", "line": 6}),
            ),
        ],
        StopReason::ToolUse,
    );
    let test_output: String = (1..=12)
        .map(|n| format!("test parser::case_{n} ... ok\n"))
        .collect::<String>()
        + "test result: ok. 12 passed; 0 failed";
    Harness::attached(history(vec![
        user("The parser panics on bad input; fix it."),
        AgentMessage::Assistant(calls),
        tool_result("t1", "read", &"line\n".repeat(60), json!({}), false),
        tool_result(
            "t2",
            "edit",
            "Successfully replaced 1 block(s) in src/parser.rs.",
            edit_details(),
            false,
        ),
        tool_result("t3", "bash", &test_output, json!({}), false),
        tool_result(
            "t4",
            "write",
            "Successfully wrote 22 bytes to notes/plan.md",
            json!({}),
            false,
        ),
        tool_result(
            "t5",
            "lsp_hover",
            "fn lex(input: &str) -> Result<Vec<Token>>\nLexes the input.\nMore docs.\nEven more.\nFifth.\nSixth line.",
            json!({}),
            false,
        ),
    ]))
}

#[test]
fn empty_session() {
    let mut harness = Harness::attached(Vec::new());
    assert_snapshot!(harness.screen(80, 16));
}

#[test]
fn connecting_before_the_first_attach() {
    let mut harness = Harness::new();
    assert_snapshot!(harness.screen(60, 10));
}

#[test]
fn conversation_with_markdown() {
    let markdown = "## Plan\n\nThe parser is **fragile**: it calls `unwrap()` on *untrusted* input. See [the docs](https://docs.rs/nom).\n\n1. Return a `Result`\n2. Propagate with `?`\n   - in `lex`\n   - in `build`\n\n> Errors are values.\n\n| step | file | risk |\n|:-----|:----:|-----:|\n| lex | lexer.rs | low |\n| build | ast.rs | medium |\n\n```rust\nfn parse(input: &str) -> Result<Ast, Error> {\n    let tokens = lex(input)?; // no more panics\n    Ok(build(tokens))\n}\n```\n\n---\n\nDone.";
    let mut harness = Harness::attached(history(vec![
        user("How should we fix the parser?"),
        AgentMessage::Assistant(assistant(vec![reply_text(markdown)], StopReason::Stop)),
    ]));
    assert_snapshot!(harness.styled_screen(72, 44));
}

#[test]
fn streaming_message_grows_with_deltas() {
    let mut harness = Harness::attached(history(vec![user("Explain the lexer")]));
    harness.send(event(2, SessionEvent::AgentStart));
    harness.send(event(
        3,
        SessionEvent::MessageStart {
            message: AgentMessage::Assistant(assistant(Vec::new(), StopReason::Stop)),
        },
    ));
    harness.send(event(
        4,
        SessionEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextStart { content_index: 0 },
        },
    ));
    harness.send(delta(5, 0, "The lexer turns **bytes** into"));
    harness.send(delta(6, 0, " tokens:\n\n- identifiers\n- num"));
    assert_snapshot!(harness.screen(60, 14));
}

#[test]
fn each_tool_collapsed() {
    let mut harness = tools_session();
    assert_snapshot!(harness.styled_screen(90, 44));
}

#[test]
fn each_tool_expanded_with_ctrl_o() {
    let mut harness = tools_session();
    harness.send(ctrl('o'));
    harness.state.view.scroll_from_bottom = 0;
    assert_snapshot!(harness.screen(90, 60));
}

#[test]
fn running_and_failed_tools() {
    let mut harness = Harness::attached(history(vec![
        user("run it"),
        AgentMessage::Assistant(assistant(
            vec![
                tool_call("t1", "bash", json!({"command": "make build"})),
                tool_call("t2", "edit", json!({"path": "missing.rs"})),
            ],
            StopReason::ToolUse,
        )),
    ]));
    harness.send(event(3, SessionEvent::AgentStart));
    harness.send(event(
        4,
        SessionEvent::ToolExecutionUpdate {
            tool_call_id: "t1".into(),
            tool_name: "bash".into(),
            args: json!({"command": "make build"}),
            partial_result: ToolResult {
                content: vec![text("compiling a\ncompiling b")],
                details: None,
            },
        },
    ));
    harness.send(event(
        5,
        SessionEvent::ToolExecutionEnd {
            tool_call_id: "t2".into(),
            tool_name: "edit".into(),
            result: ToolResult {
                content: vec![text("ENOENT: no such file or directory, open 'missing.rs'")],
                details: None,
            },
            is_error: true,
        },
    ));
    assert_snapshot!(harness.styled_screen(70, 16));
}

#[test]
fn thinking_collapsed_then_expanded() {
    let reasoning =
        "The user wants a fix.\nThe panic comes from unwrap in lex.\nReturning Result is cleaner.";
    let mut harness = Harness::attached(history(vec![
        user("Why does it panic?"),
        AgentMessage::Assistant(assistant(
            vec![thinking(reasoning), reply_text("Because `lex` unwraps.")],
            StopReason::Stop,
        )),
    ]));
    let collapsed = harness.screen(70, 12);
    harness.send(ctrl('t'));
    let expanded = harness.screen(70, 14);
    assert_snapshot!(format!("{collapsed}\n\n=== ctrl+t ===\n\n{expanded}"));
}

#[test]
fn queued_messages_while_running() {
    let mut harness = Harness::attached(history(vec![user("Refactor the parser")]));
    harness.send(event(2, SessionEvent::AgentStart));
    harness.type_text("also update the docs");
    harness.send(key(KeyCode::Enter));
    harness.send(event(
        3,
        SessionEvent::QueueUpdate {
            steering: vec!["also update the docs".into()],
            follow_up: vec!["then run the benchmarks".into()],
        },
    ));
    assert_snapshot!(harness.screen(70, 14));
}

#[test]
fn model_selector_with_a_query() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(ctrl('l'));
    harness.type_text("son");
    let filtered = harness.screen(70, 16);
    harness
        .send(key(KeyCode::Backspace))
        .send(key(KeyCode::Backspace))
        .send(key(KeyCode::Backspace));
    let unfiltered = harness.screen(70, 16);
    assert_snapshot!(format!("{filtered}\n\n=== no query ===\n\n{unfiltered}"));
}

#[test]
fn thinking_selector() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/thinking");
    harness.send(key(KeyCode::Enter));
    assert_snapshot!(harness.screen(60, 16));
}

#[test]
fn session_picker() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/resume");
    harness.send(key(KeyCode::Enter));
    let loading = harness.screen(70, 12);
    let mut other = info(40);
    other.id = "7d0c".into();
    other.name = Some("docs rewrite".into());
    other.message_count = 12;
    other.status = SessionStatus::Running;
    let mut mine = info(3);
    mine.first_message = Some("The parser panics on bad input".into());
    mine.message_count = 3;
    harness.send(Input::Reply(Reply::Sessions(vec![other, mine])));
    assert_snapshot!(format!(
        "{loading}\n\n=== loaded ===\n\n{}",
        harness.screen(70, 12)
    ));
}

#[test]
fn tree_view_with_a_branch_and_labels() {
    let mut harness = Harness::attached(history(vec![user("first"), user("second")]));
    harness.type_text("/tree");
    harness.send(key(KeyCode::Enter));
    let reply_a =
        AgentMessage::Assistant(assistant(vec![reply_text("Answer A")], StopReason::Stop));
    let reply_b =
        AgentMessage::Assistant(assistant(vec![reply_text("Answer B")], StopReason::Stop));
    let entries = vec![
        entry("u1", None, 1, user("Fix the parser")),
        entry("a1", Some("u1"), 2, reply_a),
        entry("u2", Some("a1"), 3, user("Now add tests")),
        entry("u3", Some("a1"), 5, user("Actually, add docs instead")),
        entry("a3", Some("u3"), 6, reply_b),
        EntryRecord {
            seq: 7,
            entry: SessionEntry::Label {
                id: "l1".into(),
                parent_id: Some("a3".into()),
                timestamp: "2026-11-23T10:00:00.000Z".into(),
                target_id: "u1".into(),
                label: Some("start".into()),
            },
        },
    ];
    harness.send(Input::Reply(Reply::Tree {
        entries,
        leaf_id: Some("a3".into()),
        for_fork: false,
    }));
    assert_snapshot!(harness.screen(70, 14));
}

#[test]
fn compaction_in_progress_then_its_summary() {
    let mut harness = Harness::attached(history(vec![user("a long session")]));
    harness.send(event(
        2,
        SessionEvent::CompactionStart {
            reason: CompactionReason::Threshold,
        },
    ));
    let compacting = harness.screen(64, 10);
    harness.send(event(
        3,
        SessionEvent::EntryAdded {
            entry: SessionEntry::Compaction {
                id: "c1".into(),
                parent_id: Some("e1".into()),
                timestamp: "2026-11-23T10:00:00.000Z".into(),
                summary: "## Goal\nFix the parser.\n\n## Progress\n- lexer returns Result".into(),
                first_kept_entry_id: "e1".into(),
                tokens_before: 182_000,
                details: None,
                from_hook: None,
            },
        },
    ));
    harness.send(event(
        4,
        SessionEvent::CompactionEnd {
            reason: CompactionReason::Threshold,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: None,
        },
    ));
    let done = harness.screen(64, 12);
    harness.send(ctrl('o'));
    assert_snapshot!(format!(
        "{compacting}\n\n=== done ===\n\n{done}\n\n=== ctrl+o ===\n\n{}",
        harness.screen(64, 16)
    ));
}

#[test]
fn tree_choice_asks_whether_to_summarize_the_branch_left() {
    let mut harness = Harness::attached(history(vec![user("first"), user("second")]));
    harness.type_text("/tree");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(Reply::Tree {
        entries: history(vec![user("first"), user("second")]),
        leaf_id: Some("e2".into()),
        for_fork: false,
    }));
    harness.send(key(KeyCode::Up)).send(key(KeyCode::Enter));
    assert_snapshot!(harness.screen(64, 12));
}

#[test]
fn errors_and_aborts() {
    let mut failed = assistant(vec![reply_text("Partial answer")], StopReason::Error);
    failed.error_message = Some("429 rate limited: retry after 20s".into());
    let mut aborted = assistant(Vec::new(), StopReason::Aborted);
    aborted.error_message = Some("Aborted by the user.".into());
    let mut harness = Harness::attached(history(vec![
        user("go"),
        AgentMessage::Assistant(failed),
        user("again"),
        AgentMessage::Assistant(aborted),
    ]));
    harness.send(event(
        5,
        SessionEvent::SessionError {
            message: "the run ended with an internal error (see the daemon log)".into(),
        },
    ));
    assert_snapshot!(harness.styled_screen(64, 16));
}

#[test]
fn reconnecting_banner() {
    let mut harness = Harness::attached(history(vec![user("hello")]));
    harness.send(Input::Disconnected { reason: None });
    harness.send(Input::ReconnectFailed { attempt: 2 });
    assert_snapshot!(harness.screen(60, 10));
}

#[test]
fn narrow_terminal_40_columns() {
    let mut harness = tools_session();
    harness.type_text("a long draft that wraps in a narrow editor window");
    assert_snapshot!(harness.screen(40, 30));
}

#[test]
fn wide_terminal_160_columns() {
    let mut harness = tools_session();
    assert_snapshot!(harness.screen(160, 36));
}

#[test]
fn other_clients_typing_and_attached() {
    let mut harness = Harness::attached(history(vec![user("hello")]));
    let client = |id: &str, draft: &str| AttachedClient {
        connection_id: id.into(),
        name: "pi-tui".into(),
        draft: draft.into(),
    };
    harness.send(Input::Presence(SessionPresenceParams {
        session_id: SESSION.into(),
        clients: vec![client(ME, ""), client("c2", "")],
    }));
    let attached = harness.screen(60, 10);
    harness.send(Input::Presence(SessionPresenceParams {
        session_id: SESSION.into(),
        clients: vec![client(ME, ""), client("c2", "what about\nthe lexer tests")],
    }));
    assert_snapshot!(format!(
        "{attached}\n\n=== typing ===\n\n{}",
        harness.screen(60, 10)
    ));
}

#[test]
fn editor_multiline_and_collapsed_paste() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("Review this:");
    harness.send(key_with(KeyCode::Enter, KeyModifiers::SHIFT));
    let pasted: String = (1..=30).map(|n| format!("log line {n}\n")).collect();
    harness.send(Input::Paste(pasted));
    harness.type_text(" thanks");
    assert_snapshot!(harness.screen(60, 10));
}

#[test]
fn command_and_file_completion() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/");
    let commands = harness.screen(70, 16);
    harness.send(ctrl('c'));
    harness.type_text("explain @pars");
    assert_snapshot!(format!(
        "{commands}\n\n=== @ files ===\n\n{}",
        harness.screen(70, 12)
    ));
}

#[test]
fn hotkeys_overlay() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/hotkeys");
    harness.send(key(KeyCode::Enter));
    assert_snapshot!(harness.screen(80, 46));
}

#[test]
fn session_info_panel() {
    let mut harness = Harness::attached(history(vec![user("hello")]));
    harness.send(Input::Reply(Reply::Stats(SessionStatsResponse {
        session_id: SESSION.into(),
        user_messages: 4,
        assistant_messages: 4,
        tool_calls: 7,
        tool_results: 7,
        total_messages: 15,
        tokens: TokenTotals {
            input: 12_000,
            output: 3_400,
            cache_read: 40_000,
            cache_write: 2_000,
            total: 57_400,
        },
        cost: 0.1234,
    })));
    assert_snapshot!(harness.screen(80, 18));
}

#[test]
fn scrolled_up_shows_how_much_is_below() {
    let messages: Vec<AgentMessage> = (1..=30).map(|n| user(&format!("message {n}"))).collect();
    let mut harness = Harness::attached(history(messages));
    harness.send(key(KeyCode::PageUp));
    assert_snapshot!(harness.screen(50, 14));
}

#[test]
fn footer_counts_tokens_cost_and_context() {
    let mut harness = Harness::attached(history(vec![
        user("one"),
        AgentMessage::Assistant(assistant(vec![reply_text("Reply.")], StopReason::Stop)),
    ]));
    harness.state.session.as_mut().unwrap().name = Some("parser fix".into());
    assert_snapshot!(harness.screen(80, 8));
}

#[test]
fn a_run_waiting_for_new_mcp_servers_says_so() {
    let mut harness = Harness::attached(history(vec![user("go")]));
    harness.send(event(2, SessionEvent::AgentStart));
    harness.send(event(
        3,
        SessionEvent::ToolsWaitStart {
            sources: vec!["git".into(), "time".into()],
            timeout_ms: 30_000,
        },
    ));
    let waiting = harness.screen(64, 8);
    harness.send(event(
        4,
        SessionEvent::ToolsWaitEnd {
            not_ready: vec!["time".into()],
            aborted: false,
        },
    ));
    assert_snapshot!(format!(
        "{waiting}

=== over ===

{}",
        harness.screen(64, 10)
    ));
}

#[test]
fn retries_and_user_shell_commands() {
    let mut harness = Harness::attached(history(vec![user("go")]));
    harness.send(event(
        2,
        SessionEvent::AutoRetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "529 overloaded".into(),
        },
    ));
    harness.send(event(
        3,
        SessionEvent::AutoRetryEnd {
            success: false,
            attempt: 3,
            final_error: Some("529 overloaded".into()),
        },
    ));
    harness.type_text("!cargo fmt --check");
    harness.send(key(KeyCode::Enter));
    let running = harness.screen(64, 14);
    harness.send(Input::Reply(Reply::BashFinished));
    harness.send(event(
        4,
        SessionEvent::MessageEnd {
            message: AgentMessage::BashExecution(BashExecutionMessage {
                command: "cargo fmt --check".into(),
                output: "Diff in src/lib.rs at line 3".into(),
                exit_code: Some(1),
                cancelled: false,
                truncated: false,
                full_output_path: None,
                exclude_from_context: false,
                timestamp: 0,
            }),
            entry_id: Some("e2".into()),
        },
    ));
    assert_snapshot!(format!(
        "{running}\n\n=== finished ===\n\n{}",
        harness.screen(64, 14)
    ));
}

#[test]
fn the_sessions_templates_and_skills_complete_after_the_built_ins() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(session_details(
        vec![
            SlashCommand {
                name: "review".into(),
                description: "Review a file carefully (user)".into(),
                source: "template".into(),
            },
            SlashCommand {
                name: "skill:pdf".into(),
                description: "Work with PDF files".into(),
                source: "skill".into(),
            },
        ],
        Vec::new(),
        Vec::new(),
        Vec::new(),
    )));
    harness.type_text("/re");
    assert_snapshot!(harness.screen(70, 12));
}

#[test]
fn history_search_and_fork_selectors() {
    let mut harness = Harness::attached(history(vec![user("first"), user("second")]));
    harness.send(ctrl('r'));
    harness.type_text("pars");
    harness.send(Input::Reply(Reply::History {
        query: "pars".into(),
        entries: [
            "fix the parser",
            "why does the parser panic?\nwith a second line",
        ]
        .iter()
        .map(|text| HistoryEntry {
            text: (*text).into(),
            cwd: "/p".into(),
            sent_at: 0,
        })
        .collect(),
    }));
    let search = harness.screen(64, 12);
    harness.send(key(KeyCode::Esc));
    harness.type_text("/fork");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(Reply::Tree {
        entries: history(vec![
            user("Fix the parser"),
            AgentMessage::Assistant(assistant(vec![reply_text("Done.")], StopReason::Stop)),
            user("Now add tests"),
        ]),
        leaf_id: Some("e3".into()),
        for_fork: true,
    }));
    assert_snapshot!(format!(
        "{search}\n\n=== /fork ===\n\n{}",
        harness.screen(64, 12)
    ));
}

/// `session/setModel`'s warnings (a model id its provider does not list) show as warnings.
#[test]
fn model_warnings_show_in_the_transcript() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(Reply::Warnings(vec![
        "model \"brand-new\" is not listed for provider \"scripted\"".into(),
    ])));
    let screen = harness.screen(100, 12);
    assert!(
        screen.contains("Warning: model \"brand-new\" is not listed for provider \"scripted\""),
        "{screen}"
    );
}

/// `config/changed`: which files the daemon reloaded, and the problems left in them.
#[test]
fn config_reloads_show_their_files_and_problems() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::ConfigChanged(pi_protocol::v1::ConfigChangedParams {
        files: vec!["/home/u/.pi/agent/models.json".into()],
        diagnostics: vec![
            pi_protocol::v1::ResourceDiagnostic {
                kind: pi_protocol::v1::ResourceDiagnosticKind::Warning,
                path: "/home/u/.pi/agent/models.json".into(),
                key: None,
                message: "bad; the daemon keeps using the file's last good version".into(),
            },
            pi_protocol::v1::ResourceDiagnostic {
                kind: pi_protocol::v1::ResourceDiagnosticKind::Warning,
                path: "/home/u/.pi/agent/settings.json".into(),
                key: Some("editorPaddingX".into()),
                message: "expected a whole number from 0 to 3, found 9; the value is ignored"
                    .into(),
            },
        ],
    }));
    let screen = harness.screen(130, 12);
    assert!(
        screen.contains(
            "Warning: /home/u/.pi/agent/settings.json: `editorPaddingX`: expected a whole number \
             from 0 to 3, found 9; the value is ignored"
        ),
        "the key is named:\n{screen}"
    );
    assert!(
        screen.contains("Configuration reloaded: /home/u/.pi/agent/models.json"),
        "{screen}"
    );
    assert!(
        screen.contains(
            "Warning: /home/u/.pi/agent/models.json: bad; the daemon keeps using the file's last good version"
        ),
        "{screen}"
    );
}

/// A session's warnings (a custom model id) show once when the TUI loads it.
#[test]
fn session_warnings_show_when_the_session_loads() {
    let mut harness = Harness::new();
    let mut session = super::support::info(0);
    session.warnings =
        vec!["model \"brand-new\" is not listed for provider \"scripted\"".to_owned()];
    harness.attach(session, Vec::new());
    let screen = harness.screen(100, 12);
    assert_eq!(
        screen
            .matches("Warning: model \"brand-new\" is not listed for provider \"scripted\"")
            .count(),
        1,
        "{screen}"
    );
}

#[test]
fn agents_picker_lists_the_parent_and_the_subagents_and_attaches_to_one() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/agents");
    harness.send(key(KeyCode::Enter));
    assert!(
        harness
            .take_effects()
            .iter()
            .any(|effect| format!("{effect:?}").contains("ListAgents")),
        "asks for the subagents"
    );
    let mut parent = info(9);
    parent.id = "p1".into();
    parent.name = Some("main work".into());
    let mut scout = info(4);
    scout.id = "c1".into();
    scout.task_name = Some("scout".into());
    scout.parent_session_id = Some(SESSION.into());
    scout.status = SessionStatus::Running;
    let mut fixer = info(2);
    fixer.id = "c2".into();
    fixer.task_name = Some("fixer".into());
    fixer.parent_session_id = Some(SESSION.into());
    harness.send(Input::Reply(Reply::Agents {
        parent: Some(Box::new(parent)),
        children: vec![scout, fixer],
    }));
    assert_snapshot!(harness.screen(70, 12));
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Enter));
    let effects = harness.take_effects();
    assert!(
        effects
            .iter()
            .any(|effect| format!("{effect:?}").contains("Existing(\"c1\")")),
        "{effects:?}"
    );
}

#[test]
fn a_running_task_call_shows_its_subagents() {
    let mut harness = Harness::attached(history(vec![
        user("split the work"),
        AgentMessage::Assistant(assistant(
            vec![tool_call(
                "t1",
                "task",
                json!({"context": "", "tasks": [{"name": "scout", "task": "look"}, {"name": "fixer", "task": "fix"}]}),
            )],
            StopReason::ToolUse,
        )),
    ]));
    harness.send(event(3, SessionEvent::AgentStart));
    harness.send(event(
        4,
        SessionEvent::ToolExecutionUpdate {
            tool_call_id: "t1".into(),
            tool_name: "task".into(),
            args: json!({}),
            partial_result: ToolResult {
                content: vec![text(
                    "scout (explore): running, in grep, 2 turns, 1200 tokens\nfixer (task): queued, 0 turns, 0 tokens",
                )],
                details: None,
            },
        },
    ));
    let screen = harness.screen(90, 14);
    assert!(
        screen.contains("scout (explore): running, in grep, 2 turns, 1200 tokens"),
        "{screen}"
    );
    assert!(screen.contains("fixer (task): queued"), "{screen}");
}

#[test]
fn approvals_sets_the_mode_by_name_or_from_a_list() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/approvals read-only");
    harness.send(key(KeyCode::Enter));
    let effects = format!("{:?}", harness.take_effects());
    assert!(effects.contains("SetPolicy(\"read-only\")"), "{effects}");
    harness.type_text("/approvals");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(70, 12);
    assert!(
        screen.contains("ask-writes  reads run; writes and commands ask"),
        "{screen}"
    );
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Enter));
    let effects = format!("{:?}", harness.take_effects());
    assert!(effects.contains("SetPolicy(\"ask-writes\")"), "{effects}");
}

#[test]
fn approval_decisions_show_in_the_transcript() {
    let mut harness = Harness::attached(Vec::new());
    for (seq, data) in [
        json!({"call": "`bash` with `rm x`", "decision": "denied", "asked": "ask-writes mode",
            "answer": "Deny", "answeredBy": "pictl (c3)"}),
        json!({"call": "`write` on a.txt", "decision": "allowed",
            "by": "allowed for this session earlier"}),
    ]
    .into_iter()
    .enumerate()
    {
        harness.send(event(
            10 + seq as u64,
            SessionEvent::EntryAdded {
                entry: SessionEntry::Custom {
                    id: format!("a{seq}"),
                    // Each at the leaf, as the daemon appends them.
                    parent_id: seq.checked_sub(1).map(|previous| format!("a{previous}")),
                    timestamp: "2026-11-26T10:00:00.000Z".into(),
                    custom_type: "approval".into(),
                    data: Some(data),
                },
            },
        ));
    }
    let screen = harness.screen(90, 12);
    assert!(
        screen.contains("Approval: `bash` with `rm x` denied (pictl (c3) answered \"Deny\")"),
        "{screen}"
    );
    assert!(
        screen.contains("Approval: `write` on a.txt allowed (allowed for this session earlier)"),
        "{screen}"
    );
}

/// pi's tree drawing: each fork's branches hang from `├─`/`└─` with `│` beside the branches
/// below, the active branch comes first and is marked `•`, and a hidden leaf (the label just
/// set) leaves the current mark on its nearest shown ancestor.
#[test]
fn tree_view_draws_forks_within_forks_and_marks_the_active_branch() {
    let mut harness = Harness::attached(history(vec![user("first")]));
    harness.type_text("/tree");
    harness.send(key(KeyCode::Enter));
    let answer =
        |text: &str| AgentMessage::Assistant(assistant(vec![reply_text(text)], StopReason::Stop));
    let entries = vec![
        entry("u1", None, 1, user("Fix the parser")),
        entry("a1", Some("u1"), 2, answer("Answer A")),
        entry("u2", Some("a1"), 3, user("Add tests")),
        entry("a2", Some("u2"), 4, answer("Tests added")),
        entry("u3", Some("a1"), 5, user("Add docs")),
        entry("a3", Some("u3"), 6, answer("Docs added")),
        entry("u4", Some("a3"), 7, user("Shorter docs")),
        entry("u5", Some("a3"), 8, user("Longer docs")),
        entry("a5", Some("u5"), 9, answer("Longer")),
        EntryRecord {
            seq: 10,
            entry: SessionEntry::Label {
                id: "l1".into(),
                parent_id: Some("a5".into()),
                timestamp: "2026-11-23T10:00:00.000Z".into(),
                target_id: "u3".into(),
                label: Some("docs".into()),
            },
        },
    ];
    harness.send(Input::Reply(Reply::Tree {
        entries,
        leaf_id: Some("l1".into()),
        for_fork: false,
    }));
    assert_snapshot!(harness.screen(70, 16));
}

/// The todo list above the editor while a task is open: the count, the phase at work, the
/// tasks around the one in progress; gone once nothing is open.
#[test]
fn the_todo_list_shows_above_the_editor_while_tasks_are_open() {
    use pi_protocol::v1::{TodoList, TodoPhase, TodoStatus, TodoTask};
    let mut harness = Harness::attached(history(vec![user("plan the release")]));
    let task = |id: &str, content: &str, status| TodoTask {
        id: id.to_owned(),
        content: content.to_owned(),
        status,
        blocker: None,
    };
    let mut todos = TodoList {
        phases: vec![
            TodoPhase {
                name: "Build".to_owned(),
                tasks: vec![
                    task("t1", "parse the input", TodoStatus::Completed),
                    task("t2", "check types", TodoStatus::InProgress),
                    TodoTask {
                        blocker: Some("waiting on CI".to_owned()),
                        ..task("t3", "run the benches", TodoStatus::Blocked)
                    },
                ],
            },
            TodoPhase {
                name: "Ship".to_owned(),
                tasks: vec![
                    task("t4", "cut a release", TodoStatus::Pending),
                    task("t5", "old idea", TodoStatus::Abandoned),
                ],
            },
        ],
    };
    harness.send(event(
        2,
        SessionEvent::TodosUpdated {
            todos: todos.clone(),
        },
    ));
    let open = harness.screen(60, 16);
    for phase in &mut todos.phases {
        for task in &mut phase.tasks {
            if task.status.is_open() {
                task.status = TodoStatus::Completed;
            }
        }
    }
    harness.send(event(3, SessionEvent::TodosUpdated { todos }));
    let done = harness.screen(60, 16);
    assert!(!done.contains("Todo"), "{done}");
    assert_snapshot!(open);
}

/// A question with several choices: Space ticks, Enter sends the ticked ones.
#[test]
fn a_multiple_choice_question_sends_the_ticked_options() {
    use pi_protocol::v1::{UiAnswer, UiRequest, UiRequestParams};
    use pi_tui::effect::{Effect, Request};
    let mut harness = Harness::attached(history(vec![user("check it")]));
    harness.send(Input::UiRequest(UiRequestParams {
        session_id: SESSION.to_owned(),
        request_id: "ui-1".to_owned(),
        request: UiRequest::Select {
            title: "Which checks?".to_owned(),
            options: vec!["lint".to_owned(), "test".to_owned(), "bench".to_owned()],
            multiple: true,
        },
    }));
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Char(' ')));
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Char(' ')));
    let screen = harness.screen(60, 14);
    assert!(screen.contains("[x] lint"), "{screen}");
    assert!(screen.contains("[ ] test"), "{screen}");
    assert!(screen.contains("[x] bench"), "{screen}");
    assert!(screen.contains("space tick"), "{screen}");
    harness.take_effects();
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.take_effects(),
        [Effect::Request(Request::UiRespond {
            session_id: SESSION.to_owned(),
            request_id: "ui-1".to_owned(),
            answer: UiAnswer {
                values: vec!["lint".to_owned(), "bench".to_owned()],
                ..UiAnswer::default()
            },
        })]
    );
}

/// A question with more choices than fit scrolls with the highlight, arrows say what is out
/// of sight, and a title too long for the frame is written out whole; Enter answers nothing
/// before an arrow key in a several-choices dialog either.
#[test]
fn a_long_question_scrolls_and_shows_its_whole_title() {
    use pi_protocol::v1::{UiRequest, UiRequestParams};
    let mut harness = Harness::attached(history(vec![user("pick")]));
    let title = "This is a very long question that certainly does not fit in one line of an \
                 eighty column terminal, so it has to be wrapped";
    harness.send(Input::UiRequest(UiRequestParams {
        session_id: SESSION.to_owned(),
        request_id: "ui-1".to_owned(),
        request: UiRequest::Select {
            title: title.to_owned(),
            options: (1..=30).map(|n| format!("option number {n}")).collect(),
            multiple: true,
        },
    }));
    harness.take_effects();
    harness.send(key(KeyCode::Enter));
    assert!(
        harness.take_effects().is_empty(),
        "no answer before a choice"
    );
    for _ in 0..25 {
        harness.send(key(KeyCode::Down));
    }
    let screen = harness.screen(80, 24);
    assert!(screen.contains("so it has to be wrapped"), "{screen}");
    assert!(screen.contains("option number 25"), "{screen}");
    assert!(!screen.contains("option number 1 "), "{screen}");
    assert!(screen.contains("↑ "), "{screen}");
    assert!(screen.contains("↓ "), "{screen}");
}

/// `/plan` asks the daemon to turn plan mode on (and `/plan off` off); the footer says
/// `plan` while it is on and a status line says what it means.
#[test]
fn plan_mode_is_toggled_by_slash_plan_and_shown_in_the_footer() {
    use pi_tui::effect::{Effect, Request};
    let mut harness = Harness::attached(history(vec![user("plan it")]));
    harness.take_effects();
    harness.type_text("/plan");
    harness.send(key(KeyCode::Enter));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Request(Request::SetPlanMode(true))),
        "/plan turns it on"
    );
    harness.send(event(2, SessionEvent::PlanModeChanged { enabled: true }));
    let screen = harness.screen(80, 12);
    assert!(screen.contains("plan · "), "{screen}");
    assert!(
        screen.contains("Plan mode on: read-only until you approve a plan."),
        "{screen}"
    );
    harness.type_text("/plan");
    harness.send(key(KeyCode::Enter));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Request(Request::SetPlanMode(false))),
        "/plan again turns it off"
    );
    harness.send(event(3, SessionEvent::PlanModeChanged { enabled: true }));
    harness.type_text("/plan on");
    harness.send(key(KeyCode::Enter));
    assert!(
        !harness
            .take_effects()
            .iter()
            .any(|effect| matches!(effect, Effect::Request(Request::SetPlanMode(_)))),
        "already on: nothing to ask"
    );
    assert!(harness.screen(80, 12).contains("Plan mode is already on."));
    harness.type_text("/plan maybe");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(80, 12);
    assert!(screen.contains("Usage: /plan [on|off]"), "{screen}");
    harness.send(event(4, SessionEvent::PlanModeChanged { enabled: false }));
    let screen = harness.screen(80, 12);
    assert!(!screen.contains("plan · "), "{screen}");
}

/// An entry that does not continue the branch shown (the summary a `/tree` navigation
/// writes where it lands) makes the TUI read the new branch again, as a leaf change does.
#[test]
fn an_entry_off_the_shown_branch_rebuilds_the_transcript() {
    use pi_tui::effect::{Effect, SwitchTo};
    let mut harness = Harness::attached(history(vec![user("first"), user("second")]));
    harness.take_effects();
    harness.send(event(
        20,
        SessionEvent::EntryAdded {
            entry: SessionEntry::BranchSummary {
                id: "summary".into(),
                parent_id: Some("somewhere-else".into()),
                timestamp: "2026-11-26T10:00:00.000Z".into(),
                from_id: "old-leaf".into(),
                summary: "What the branch left behind did.".into(),
                details: None,
                from_hook: None,
            },
        },
    ));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Switch(SwitchTo::Existing(SESSION.to_owned()))),
        "the branch is read again"
    );
}

//! What `update` asks for and how the state follows events: keys while idle and running,
//! history, replay and resync, duplicate events, selectors.

use crossterm::event::{KeyCode, KeyModifiers};
use pi_protocol::v1::message::*;
use pi_protocol::v1::*;
use pi_tui::effect::{Effect, Message, Request, SwitchTo};
use pi_tui::input::{Attachment, Input, Reply};
use pi_tui::state::Connection;
use pi_tui::transcript::ItemKind;

use super::support::*;

fn message(text: &str) -> Message {
    Message {
        text: text.to_owned(),
        image_paths: Vec::new(),
        fit_images: true,
    }
}

/// Requests among the effects, drafts and file listings left out.
fn requests(effects: Vec<Effect>) -> Vec<Effect> {
    effects
        .into_iter()
        .filter(|effect| !matches!(effect, Effect::Draft(_) | Effect::ListFiles))
        .collect()
}

fn item_texts(harness: &Harness) -> Vec<String> {
    harness
        .state
        .transcript
        .items()
        .iter()
        .map(|item| match &item.kind {
            ItemKind::User { text, .. } => format!("user: {text}"),
            ItemKind::Assistant { blocks, .. } => format!("assistant: {blocks:?}"),
            ItemKind::Tool(tool) => format!("tool {}: {:?}", tool.tool_name, tool.status),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn enter_prompts_when_idle_steers_when_running_and_alt_enter_follows_up() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("first");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Prompt(message("first")))]
    );

    harness.send(event(1, SessionEvent::AgentStart));
    harness.type_text("steer me");
    harness.send(key(KeyCode::Enter));
    harness.type_text("later");
    harness.send(key_with(KeyCode::Enter, KeyModifiers::ALT));
    harness.send(key(KeyCode::Esc));
    assert_eq!(
        requests(harness.take_effects()),
        [
            Effect::Request(Request::Steer(message("steer me"))),
            Effect::Request(Request::FollowUp(message("later"))),
            Effect::Request(Request::Abort),
        ]
    );
    assert!(harness.state.editor.is_empty());
}

#[test]
fn queued_messages_come_back_to_the_editor_with_alt_up_or_esc() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(event(1, SessionEvent::AgentStart));
    harness.send(event(
        2,
        SessionEvent::QueueUpdate {
            steering: vec!["steer one".into()],
            follow_up: vec!["then this".into()],
        },
    ));
    harness.take_effects();
    harness.send(key_with(KeyCode::Up, KeyModifiers::ALT));
    harness.send(key(KeyCode::Esc));
    assert_eq!(
        requests(harness.take_effects()),
        [
            Effect::Request(Request::Dequeue),
            Effect::Request(Request::DequeueAndAbort),
        ]
    );
    harness.type_text("draft");
    harness.send(Input::Reply(Reply::Dequeued(QueueState {
        steering: vec!["steer one".into()],
        follow_up: vec!["then this".into()],
    })));
    assert_eq!(
        harness.state.editor.text(),
        "steer one\n\nthen this\n\ndraft"
    );
}

#[test]
fn alt_enter_inserts_a_newline_when_idle_and_images_are_found_by_path() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("look at @shot.png");
    harness.send(key_with(KeyCode::Enter, KeyModifiers::ALT));
    harness.type_text("and ./b.JPG");
    harness.send(key(KeyCode::Esc)); // closes the @ completion, if any
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Prompt(Message {
            text: "look at @shot.png\nand ./b.JPG".into(),
            image_paths: vec!["shot.png".into(), "./b.JPG".into()],
            fit_images: true,
        }))]
    );
    // With `images.autoResize: false` they are sent as they are.
    harness.send(Input::Reply(settings(
        serde_json::json!({"images": {"autoResize": false, "blockImages": false}}),
    )));
    harness.type_text("again @shot.png");
    harness.send(key(KeyCode::Esc));
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Prompt(Message {
            text: "again @shot.png".into(),
            image_paths: vec!["shot.png".into()],
            fit_images: false,
        }))]
    );
}

#[test]
fn ctrl_c_clears_then_quits_and_ctrl_d_detaches_on_an_empty_editor() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("draft");
    harness.send(ctrl('c'));
    assert!(harness.state.editor.is_empty());
    assert!(!harness.state.exiting);
    harness.send(Input::Key {
        event: crossterm::event::KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
        now_ms: 1_300,
    });
    assert!(harness.state.exiting);
    assert!(harness.take_effects().contains(&Effect::Detach));

    let mut harness = Harness::attached(Vec::new());
    harness.type_text("x");
    harness.send(key(KeyCode::Left)).send(ctrl('d'));
    assert!(!harness.state.exiting, "ctrl+d deletes while there is text");
    harness.send(ctrl('d'));
    assert!(harness.state.exiting);
}

#[test]
fn history_browses_with_up_and_down_and_restores_the_draft() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(Reply::History {
        query: String::new(),
        entries: ["newest", "older"]
            .iter()
            .map(|text| HistoryEntry {
                text: (*text).into(),
                cwd: "/p".into(),
                sent_at: 0,
            })
            .collect(),
    }));
    harness.type_text("my draft");
    harness.send(key(KeyCode::Up));
    assert_eq!(harness.state.editor.text(), "newest");
    harness.send(key(KeyCode::Up)).send(key(KeyCode::Up));
    assert_eq!(harness.state.editor.text(), "older");
    harness.send(key(KeyCode::Down)).send(key(KeyCode::Down));
    assert_eq!(harness.state.editor.text(), "my draft");
}

#[test]
fn ctrl_r_searches_history_in_the_daemon_and_enter_takes_the_match() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.send(ctrl('r'));
    harness.type_text("pa");
    let searches: Vec<Effect> = requests(harness.take_effects());
    assert_eq!(
        searches,
        [
            Effect::Request(Request::SearchHistory(String::new())),
            Effect::Request(Request::SearchHistory("p".into())),
            Effect::Request(Request::SearchHistory("pa".into())),
        ]
    );
    harness.send(Input::Reply(Reply::History {
        query: "pa".into(),
        entries: vec![HistoryEntry {
            text: "fix the parser".into(),
            cwd: "/p".into(),
            sent_at: 0,
        }],
    }));
    harness.send(key(KeyCode::Enter));
    assert_eq!(harness.state.editor.text(), "fix the parser");
    assert!(harness.state.overlay.is_none());
}

#[test]
fn streaming_rebuilds_the_partial_from_deltas_and_message_end_replaces_it() {
    let mut harness = Harness::attached(history(vec![user("q")]));
    harness.send(event(2, SessionEvent::AgentStart));
    harness.send(event(
        3,
        SessionEvent::MessageStart {
            message: AgentMessage::Assistant(assistant(Vec::new(), StopReason::Stop)),
        },
    ));
    harness.send(delta(4, 0, "Hel"));
    harness.send(delta(5, 0, "lo"));
    let partial = harness.state.transcript.streaming().unwrap();
    assert_eq!(partial.content, vec![reply_text("Hello")]);
    harness.send(event(
        6,
        SessionEvent::MessageEnd {
            message: AgentMessage::Assistant(assistant(
                vec![reply_text("Hello!")],
                StopReason::Stop,
            )),
            entry_id: Some("e2".into()),
        },
    ));
    assert!(harness.state.transcript.streaming().is_none());
    assert_eq!(harness.state.durable_seq, 6);
    assert_eq!(harness.state.leaf_id.as_deref(), Some("e2"));
    assert_eq!(
        item_texts(&harness),
        ["user: q", "assistant: [Text(\"Hello!\")]"]
    );
}

#[test]
fn events_the_snapshot_already_reflects_or_of_other_sessions_are_ignored() {
    let mut harness = Harness::attached(history(vec![user("one"), user("two")]));
    let stale = event(
        2,
        SessionEvent::MessageEnd {
            message: user("two"),
            entry_id: Some("e2".into()),
        },
    );
    harness.send(stale);
    harness.send(Input::Event(Box::new(SessionEventParams {
        session_id: "another".into(),
        seq: 9,
        event: SessionEvent::MessageEnd {
            message: user("elsewhere"),
            entry_id: Some("x".into()),
        },
    })));
    assert_eq!(item_texts(&harness), ["user: one", "user: two"]);
}

#[test]
fn a_reconnect_replays_after_the_durable_cursor_without_repeats() {
    let mut harness = Harness::attached(history(vec![user("one")]));
    harness.send(event(2, SessionEvent::AgentStart));
    harness.send(event(
        3,
        SessionEvent::MessageStart {
            message: AgentMessage::Assistant(assistant(Vec::new(), StopReason::Stop)),
        },
    ));
    harness.send(delta(4, 0, "half a rep"));
    harness.send(Input::Disconnected { reason: None });
    assert!(matches!(
        harness.state.connection,
        Connection::Reconnecting { .. }
    ));
    // The cursor is the last durable seq (the snapshot's): 1.
    assert_eq!(harness.state.durable_seq, 1);

    let mut snapshot_info = info(9);
    snapshot_info.leaf_id = Some("e3".into());
    let final_reply =
        AgentMessage::Assistant(assistant(vec![reply_text("full reply")], StopReason::Stop));
    harness.send(Input::Attached(Box::new(Attachment {
        connection_id: "c9".into(),
        response: SessionAttachResponse {
            snapshot: SessionSnapshot {
                info: snapshot_info,
                streaming_message: None,
                running_tools: Vec::new(),
                queue: QueueState::default(),
                attached_clients: 1,
                clients: Vec::new(),
            },
            replay: vec![
                SessionEventParams {
                    session_id: SESSION.into(),
                    seq: 6,
                    event: SessionEvent::MessageEnd {
                        message: final_reply,
                        entry_id: Some("e2".into()),
                    },
                },
                SessionEventParams {
                    session_id: SESSION.into(),
                    seq: 8,
                    event: SessionEvent::MessageEnd {
                        message: user("two"),
                        entry_id: Some("e3".into()),
                    },
                },
            ],
            gapless: false,
        },
        history: None,
    })));
    assert_eq!(harness.state.connection, Connection::Live);
    assert!(harness.state.transcript.streaming().is_none());
    assert_eq!(
        item_texts(&harness),
        [
            "user: one",
            "assistant: [Text(\"full reply\")]",
            "user: two"
        ]
    );
    // A late duplicate of a replayed event changes nothing.
    harness.send(event(
        8,
        SessionEvent::MessageEnd {
            message: user("two"),
            entry_id: Some("e3".into()),
        },
    ));
    assert_eq!(item_texts(&harness).len(), 3);
    assert_eq!(harness.state.environment.connection_id, "c9");
    let effects = harness.take_effects();
    assert!(
        !effects
            .iter()
            .any(|effect| matches!(effect, Effect::Switch(_))),
        "the leaf matches: no full reload"
    );
}

#[test]
fn a_replay_that_ends_on_another_leaf_asks_for_a_full_reload() {
    let mut harness = Harness::attached(history(vec![user("one"), user("two")]));
    harness.take_effects();
    let mut snapshot_info = info(5);
    snapshot_info.leaf_id = Some("e1".into());
    harness.send(Input::Attached(Box::new(Attachment {
        connection_id: ME.into(),
        response: SessionAttachResponse {
            snapshot: SessionSnapshot {
                info: snapshot_info,
                streaming_message: None,
                running_tools: Vec::new(),
                queue: QueueState::default(),
                attached_clients: 1,
                clients: Vec::new(),
            },
            replay: Vec::new(),
            gapless: false,
        },
        history: None,
    })));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Switch(SwitchTo::Existing(SESSION.into())))
    );
}

#[test]
fn leaf_changes_reload_and_compact_takes_instructions() {
    let mut harness = Harness::attached(history(vec![user("one")]));
    harness.take_effects();
    harness.send(event(2, SessionEvent::LeafChanged { leaf_id: None }));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Switch(SwitchTo::Existing(SESSION.into()))]
    );
    harness.type_text("/compact keep the API notes");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Compact(Some(
            "keep the API notes".into()
        )))]
    );
    harness.send(event(
        3,
        SessionEvent::CompactionStart {
            reason: CompactionReason::Manual,
        },
    ));
    harness.send(key(KeyCode::Esc));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Abort)]
    );
}

#[test]
fn ctrl_p_cycles_within_the_model_scope() {
    let mut harness = Harness::attached(history(vec![user("one")]));
    harness.take_effects();
    // pi's `enabledModels` (or `--models`): only these, in the scope's order.
    harness.state.model_scope = vec!["openai/*".into(), "*opus*".into()];
    harness.send(ctrl('p'));
    assert_eq!(
        requests(harness.take_effects()),
        // The current model (sonnet) is out of scope: the scope's first.
        [Effect::Request(Request::SetModel("openai/gpt-5".into()))]
    ); // A scope of the current model alone: nothing to cycle to, no model change stored.
    harness.state.model_scope = vec!["*sonnet*".into()];
    harness.send(ctrl('p'));
    assert!(requests(harness.take_effects()).is_empty());
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Only one model in scope")
    );
}

#[test]
fn hidden_thinking_shows_only_its_label() {
    let message = AgentMessage::Assistant(assistant(
        vec![thinking("secret deliberation"), reply_text("the answer")],
        StopReason::Stop,
    ));
    let mut entries = history(vec![user("one")]);
    entries.push(entry("e9", Some("e1"), 9, message));
    let mut harness = Harness::attached(entries);
    harness.state.view.hide_thinking = true;
    harness.send(ctrl('t'));
    let screen = harness.screen(60, 20);
    assert!(screen.contains("Thinking..."), "{screen}");
    assert!(screen.contains("the answer"), "{screen}");
    assert!(!screen.contains("secret deliberation"), "{screen}");
}

#[test]
fn selectors_choose_models_levels_and_tree_entries() {
    let mut harness = Harness::attached(history(vec![user("one")]));
    harness.take_effects();
    harness.send(ctrl('l'));
    harness.type_text("opus");
    harness.send(key(KeyCode::Enter));
    harness.send(key_with(KeyCode::BackTab, KeyModifiers::SHIFT));
    harness.send(ctrl('p'));
    assert_eq!(
        requests(harness.take_effects()),
        [
            Effect::Request(Request::SetModel("anthropic/claude-opus-4-1".into())),
            Effect::Request(Request::SetThinking("high".into())),
            // Cycling skips models without a key (gemini).
            Effect::Request(Request::SetModel("openai/gpt-5".into())),
        ]
    );
    harness.type_text("/tree");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(Reply::Tree {
        entries: history(vec![user("one"), user("two")]),
        leaf_id: Some("e2".into()),
        for_fork: false,
    }));
    harness.send(key(KeyCode::Up)).send(key(KeyCode::Enter));
    // Then: summarize the branch being left?
    harness.send(key(KeyCode::Down)).send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [
            Effect::Request(Request::ReadTree { for_fork: false }),
            Effect::Request(Request::Navigate {
                entry_id: "e1".into(),
                summarize: true,
            }),
        ]
    );
}

#[test]
fn editing_sends_drafts_for_the_other_clients() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("hi");
    harness.send(key(KeyCode::Enter));
    let drafts: Vec<Effect> = harness
        .take_effects()
        .into_iter()
        .filter(|effect| matches!(effect, Effect::Draft(_)))
        .collect();
    assert_eq!(
        drafts,
        [
            Effect::Draft("h".into()),
            Effect::Draft("hi".into()),
            Effect::Draft(String::new()),
        ]
    );
}

#[test]
fn a_scrolled_up_view_stays_put_while_output_arrives_and_esc_follows_again() {
    let messages: Vec<AgentMessage> = (1..=40).map(|n| user(&format!("message {n}"))).collect();
    let mut harness = Harness::attached(history(messages));
    harness.screen(50, 14);
    harness.send(key(KeyCode::PageUp));
    let before = harness.screen(50, 14);
    let top = |screen: &str| screen.lines().take(4).collect::<Vec<_>>().join("\n");
    for n in 41..=43 {
        harness.send(event(
            n,
            SessionEvent::MessageEnd {
                message: user(&format!("message {n}")),
                entry_id: Some(format!("e{n}")),
            },
        ));
        let after = harness.screen(50, 14);
        assert_eq!(top(&after), top(&before), "{after}");
    }
    // Scrolling continues from where the view is, and Esc follows the bottom again.
    harness.send(key(KeyCode::PageDown));
    assert_ne!(top(&harness.screen(50, 14)), top(&before));
    harness.send(key(KeyCode::Esc));
    assert!(harness.screen(50, 14).contains("› message 43"));
}

#[test]
fn bang_commands_run_in_the_session_shell_and_esc_cancels_a_pending_retry() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("!ls -la");
    harness.send(key(KeyCode::Enter));
    harness.type_text("!!git status");
    harness.send(key(KeyCode::Enter));
    harness.send(Input::Reply(Reply::BashFinished));
    harness.send(event(
        1,
        SessionEvent::AutoRetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "overloaded".into(),
        },
    ));
    harness.send(key(KeyCode::Esc));
    assert_eq!(
        requests(harness.take_effects()),
        [
            Effect::Request(Request::Bash {
                command: "ls -la".into(),
                exclude_from_context: false,
            }),
            Effect::Request(Request::Bash {
                command: "git status".into(),
                exclude_from_context: true,
            }),
            Effect::Request(Request::AbortRetry),
        ]
    );
}

#[test]
fn setup_entries_before_the_first_message_stay_in_the_footer_later_changes_are_noted() {
    let change = |id: &str, seq: u64, model: &str| EntryRecord {
        seq,
        entry: SessionEntry::ModelChange {
            id: id.into(),
            parent_id: None,
            timestamp: "2026-11-23T10:00:00.000Z".into(),
            provider: "anthropic".into(),
            model_id: model.into(),
        },
    };
    let mut entries = vec![change("m1", 1, "claude-sonnet-4-5")];
    entries.push(entry("u1", Some("m1"), 2, user("hello")));
    entries.push(change("m2", 3, "claude-opus-4-1"));
    let harness = Harness::attached(entries);
    assert_eq!(
        item_texts(&harness),
        [
            "user: hello".to_owned(),
            "Notice { level: Info, text: \"Model: anthropic/claude-opus-4-1\" }".to_owned(),
        ]
    );
}

#[test]
fn reconnecting_to_a_deleted_session_stops_and_says_what_to_do() {
    let mut harness = Harness::attached(history(vec![user("hello")]));
    harness.send(Input::Disconnected { reason: None });
    harness.send(Input::Reconnected {
        connection_id: "c2".into(),
        problem: Some("session 0b7e not found".into()),
    });
    assert_eq!(harness.state.connection, Connection::Live);
    let last = harness.state.transcript.items().last().unwrap();
    assert!(
        matches!(&last.kind, ItemKind::Notice { text, .. } if text == "Could not attach again: session 0b7e not found. Use /new or /resume."),
        "{last:?}"
    );
}

#[test]
fn the_wheel_scrolls_the_transcript_or_moves_through_a_list() {
    let messages: Vec<AgentMessage> = (1..=30).map(|n| user(&format!("message {n}"))).collect();
    let mut harness = Harness::attached(history(messages));
    harness.screen(50, 14);
    harness.send(Input::Wheel(3));
    assert_eq!(harness.state.view.scroll_from_bottom, 3);
    harness.send(Input::Wheel(-3)).send(Input::Wheel(-3));
    assert_eq!(harness.state.view.scroll_from_bottom, 0);

    harness.send(ctrl('l'));
    harness.send(Input::Wheel(-3));
    let Some(pi_tui::overlay::Overlay::Select(selector)) = &harness.state.overlay else {
        panic!("the model selector is open");
    };
    // (Models with a key first: the one without comes last.)
    assert_eq!(selector.selected().unwrap().value, "openai/gpt-5");
}

fn question(id: &str, request: UiRequest) -> Input {
    Input::UiRequest(UiRequestParams {
        session_id: SESSION.to_owned(),
        request_id: id.to_owned(),
        request,
    })
}

fn confirm(title: &str) -> UiRequest {
    UiRequest::Confirm {
        title: title.to_owned(),
        message: "It runs `node server.js` with your permissions.".to_owned(),
    }
}

#[test]
fn questions_show_one_at_a_time_and_the_first_answer_closes_them() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.send(question("ui-1", confirm("Start MCP server \"proj\"?")));
    harness.send(question(
        "ui-2",
        UiRequest::Select {
            title: "Pick".to_owned(),
            options: vec!["one".to_owned(), "two".to_owned()],
            multiple: false,
        },
    ));
    // A question for another session is not ours.
    harness.send(Input::UiRequest(UiRequestParams {
        session_id: "another".to_owned(),
        request_id: "ui-9".to_owned(),
        request: confirm("Not ours"),
    }));
    let screen = harness.screen(80, 24);
    assert!(screen.contains("Start MCP server \"proj\"?"), "{screen}");
    assert!(screen.contains("It runs `node server.js`"), "{screen}");
    assert!(!screen.contains("Pick"), "{screen}");

    // Keys meant for the editor do not answer: nothing is highlighted until an arrow key.
    harness.type_text("yes");
    harness.send(key(KeyCode::Enter));
    assert_eq!(requests(harness.take_effects()), []);
    // Down, Down, Enter: "No" refuses the confirmation; the next question opens.
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::UiRespond {
            session_id: SESSION.to_owned(),
            request_id: "ui-1".to_owned(),
            answer: UiAnswer {
                confirmed: Some(false),
                ..UiAnswer::default()
            },
        })]
    );
    let screen = harness.screen(80, 24);
    assert!(screen.contains("Pick"), "{screen}");
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::UiRespond {
            session_id: SESSION.to_owned(),
            request_id: "ui-2".to_owned(),
            answer: UiAnswer {
                value: Some("two".to_owned()),
                ..UiAnswer::default()
            },
        })]
    );
    assert!(harness.state.overlay.is_none());

    // Answered in another client: the dialog closes here without an answer of ours; Esc on
    // a question dismisses it (a cancelled answer).
    harness.send(question("ui-3", confirm("Third")));
    harness.send(Input::UiResolved(UiResolvedParams {
        session_id: SESSION.to_owned(),
        request_id: "ui-3".to_owned(),
        answer: UiAnswer {
            confirmed: Some(true),
            ..UiAnswer::default()
        },
    }));
    assert!(harness.state.overlay.is_none());
    assert!(
        harness
            .state
            .questions
            .iter()
            .all(|question| question.session_id != SESSION)
    );
    harness.send(question(
        "ui-4",
        UiRequest::Input {
            title: "Name?".to_owned(),
            placeholder: None,
        },
    ));
    harness.send(key(KeyCode::Esc));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::UiRespond {
            session_id: SESSION.to_owned(),
            request_id: "ui-4".to_owned(),
            answer: UiAnswer {
                cancelled: true,
                ..UiAnswer::default()
            },
        })]
    );
}

fn server(name: &str, state: &str, sessions: &[&str]) -> McpServerStatus {
    McpServerStatus {
        name: name.to_owned(),
        aliases: Vec::new(),
        key: format!("key-{name}"),
        transport: "stdio".to_owned(),
        state: state.to_owned(),
        pid: (state == "ready").then_some(4242),
        file: "/home/u/.pi/agent/mcp.json".to_owned(),
        tools: vec!["echo".to_owned(), "add".to_owned()],
        sessions: sessions.iter().map(|id| (*id).to_owned()).collect(),
        last_error: (state == "failed")
            .then(|| "the server exited; it starts again in 500 ms".to_owned()),
        log_path: "/tmp/mcp.log".to_owned(),
        starts: 1,
    }
}

#[test]
fn mcp_servers_show_in_the_footer_and_in_slash_mcp_which_acts_on_them() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    assert!(
        !harness.screen(100, 24).contains("MCP "),
        "no servers, no indicator"
    );
    harness.send(Input::McpChanged(McpChangedParams {
        servers: vec![
            server("browser", "ready", &[SESSION, "other"]),
            server("db", "failed", &[SESSION]),
            server("elsewhere", "ready", &["other"]),
        ],
    }));
    let screen = harness.screen(100, 24);
    assert!(screen.contains("MCP 1/2 (1 failed)"), "{screen}");
    // Servers that became ready may bring prompts: the session's commands are read again.
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::ListCommands)]
    );

    harness.type_text("/mcp");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(100, 24);
    for expected in [
        "This session:",
        "browser          ready    2 tools · 2 sessions · pid 4242",
        "db               failed   2 tools · 1 sessions",
        "the server exited; it starts again in 500 ms",
        "Other sessions:",
        "elsewhere",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    harness.send(key(KeyCode::Esc));
    harness.take_effects();
    for (line, expected) in [
        ("/mcp restart db", Request::McpRestart("db".to_owned())),
        (
            "/mcp disable browser",
            Request::McpSetEnabled {
                name: "browser".to_owned(),
                enabled: false,
            },
        ),
        (
            "/mcp enable browser",
            Request::McpSetEnabled {
                name: "browser".to_owned(),
                enabled: true,
            },
        ),
    ] {
        harness.type_text(line);
        harness.send(key(KeyCode::Enter));
        assert_eq!(
            requests(harness.take_effects()),
            [Effect::Request(expected)],
            "{line}"
        );
    }
    harness.type_text("/mcp frobnicate");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Usage: /mcp, /mcp restart NAME, /mcp enable NAME, /mcp disable NAME")
    );
}

#[test]
fn language_servers_show_in_the_footer_and_in_slash_lsp() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    let lsp = |name: &str, state: &str, sessions: &[&str]| LspServerStatus {
        name: name.to_owned(),
        root: format!("/work/{name}"),
        state: state.to_owned(),
        pid: (state == "ready").then_some(777),
        sessions: sessions.iter().map(|id| (*id).to_owned()).collect(),
        open_files: 3,
        last_error: (state == "failed").then(|| "the server exited (signal: 9)".to_owned()),
        log_path: "/tmp/lsp.log".to_owned(),
        starts: 1,
    };
    harness.send(Input::LspChanged(LspChangedParams {
        servers: vec![
            lsp("pyright", "ready", &[SESSION]),
            lsp("typescript", "failed", &[SESSION]),
        ],
    }));
    let screen = harness.screen(110, 24);
    assert!(screen.contains("LSP 1/2 (1 failed)"), "{screen}");
    harness.type_text("/lsp");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(110, 24);
    for expected in [
        "pyright        ready    3 open files · 1 sessions · pid 777",
        "/work/pyright",
        "the server exited (signal: 9)",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    harness.send(key(KeyCode::Esc));
    harness.take_effects();
    harness.type_text("/lsp restart typescript");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::LspRestart(
            "typescript".to_owned()
        ))]
    );
}

#[test]
fn slash_extensions_asks_for_the_list_and_shows_the_host_extensions_and_problems() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("/extensions");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::ExtensionsList)]
    );
    harness.send(Input::Reply(Reply::Extensions(ExtensionsListResponse {
        host: ExtensionHostStatus {
            state: "ready".to_owned(),
            pid: Some(4242),
            last_error: None,
            starts: 1,
            log_path: "/tmp/extension-host.log".to_owned(),
            pi_version: Some("0.73.1".to_owned()),
            node_version: Some("v20.20.2".to_owned()),
        },
        sessions: vec![SessionExtensions {
            session_id: SESSION.to_owned(),
            extensions: vec![ExtensionInfo {
                path: "/home/me/.pi/agent/extensions/hello.ts".to_owned(),
                handlers: vec!["tool_call".to_owned()],
                tools: vec!["hello".to_owned()],
                commands: Vec::new(),
            }],
            diagnostics: vec![ExtensionDiagnostic {
                path: "/home/me/.pi/agent/extensions/broken.ts".to_owned(),
                error: "Failed to load extension: boom".to_owned(),
            }],
            skipped: vec![ExtensionDiagnostic {
                path: "/work/p/.pi/extensions/project.ts".to_owned(),
                error: "a project extension runs only once approved; not loaded".to_owned(),
            }],
            models: vec!["local/local-1".to_owned()],
        }],
    })));
    let screen = harness.screen(120, 24);
    for expected in [
        "host ready · pid 4242",
        "hello.ts · tools hello · on tool_call",
        "✗ /home/me/.pi/agent/extensions/broken.ts: Failed to load extension: boom",
        "– /work/p/.pi/extensions/project.ts: a project extension runs only once approved",
        "models of its providers: local/local-1",
    ] {
        assert!(
            screen.contains(expected),
            "missing {expected:?} in\n{screen}"
        );
    }
    harness.send(key(KeyCode::Esc));
    harness.type_text("/extensions restart");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::ExtensionsRestart)]
    );
    harness.type_text("/extensions nonsense");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Usage: /extensions, /extensions restart")
    );
}

#[test]
fn the_sessions_jobs_and_kernel_show_in_the_footer_and_refresh_after_its_commands() {
    let mut harness = Harness::attached(Vec::new());
    assert!(
        requests(harness.take_effects()).contains(&Effect::Request(Request::Pools)),
        "attaching asks for the jobs and kernels"
    );
    harness.send(event(
        3,
        SessionEvent::ToolExecutionEnd {
            tool_call_id: "t1".into(),
            tool_name: "bash".into(),
            result: ToolResult {
                content: vec![text("Started job job-1 in the background")],
                details: Some(serde_json::json!({"jobId": "job-1"})),
            },
            is_error: false,
        },
    ));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Pools)]
    );
    // A plain command asks for nothing.
    harness.send(event(
        4,
        SessionEvent::ToolExecutionEnd {
            tool_call_id: "t2".into(),
            tool_name: "bash".into(),
            result: ToolResult {
                content: vec![text("ok")],
                details: None,
            },
            is_error: false,
        },
    ));
    assert!(requests(harness.take_effects()).is_empty());
    let job = |id: &str, session: &str, state: &str| JobInfo {
        id: id.to_owned(),
        session_id: session.to_owned(),
        command: "npm run dev".to_owned(),
        cwd: "/work".to_owned(),
        state: state.to_owned(),
        ..JobInfo::default()
    };
    harness.send(Input::Reply(Reply::Pools {
        jobs: vec![
            job("job-1", SESSION, "running"),
            job("job-2", SESSION, "running"),
            job("job-3", SESSION, "exited"),
            job("job-4", "another-session", "running"),
        ],
        kernels: vec![KernelInfo {
            session_id: SESSION.to_owned(),
            interpreter: "/work/.venv/bin/python".to_owned(),
            state: "busy".to_owned(),
            ..KernelInfo::default()
        }],
    }));
    let screen = harness.screen(120, 24);
    assert!(screen.contains("2 jobs · kernel busy"), "{screen}");
    harness.send(Input::Reply(Reply::Pools {
        jobs: Vec::new(),
        kernels: Vec::new(),
    }));
    let screen = harness.screen(120, 24);
    assert!(
        !screen.contains("jobs ·") && !screen.contains("kernel busy"),
        "{screen}"
    );
}

fn shown(ui: pi_protocol::v1::ExtensionUi) -> Input {
    Input::ExtensionUi(pi_protocol::v1::ExtensionUiParams {
        session_id: SESSION.to_owned(),
        ui,
    })
}

#[test]
fn what_extensions_show_lands_in_the_footer_by_the_editor_and_in_the_transcript() {
    use pi_protocol::v1::{ExtensionUi, NotifyLevel, WidgetPlacement};
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    // pi's theme colours a status; the footer shows its text.
    harness.send(shown(ExtensionUi::Status {
        key: "status-demo".to_owned(),
        text: Some("\u{1b}[38;2;102;102;102mTurn 1 complete\u{1b}[39m".to_owned()),
    }));
    harness.send(shown(ExtensionUi::Widget {
        key: "todo".to_owned(),
        lines: Some(vec!["☐ write the tests".to_owned()]),
        placement: WidgetPlacement::AboveEditor,
    }));
    harness.send(shown(ExtensionUi::Notify {
        message: "pong".to_owned(),
        level: NotifyLevel::Warning,
    }));
    let screen = harness.screen(60, 14);
    assert!(screen.contains("Turn 1 complete"), "{screen}");
    assert!(!screen.contains("[38;2"), "{screen}");
    assert!(screen.contains("☐ write the tests"), "{screen}");
    let last = harness.state.transcript.items().last().unwrap();
    assert!(
        matches!(&last.kind, ItemKind::Notice { text, .. } if text == "pong"),
        "{last:?}"
    );
    // Cleared by the extension; the title goes to the terminal.
    harness.send(shown(ExtensionUi::Status {
        key: "status-demo".to_owned(),
        text: None,
    }));
    harness.send(shown(ExtensionUi::Widget {
        key: "todo".to_owned(),
        lines: None,
        placement: WidgetPlacement::AboveEditor,
    }));
    harness.send(shown(ExtensionUi::Title {
        title: "pi — treasure".to_owned(),
    }));
    let screen = harness.screen(60, 14);
    assert!(!screen.contains("Turn 1 complete"), "{screen}");
    assert!(!screen.contains("write the tests"), "{screen}");
    assert!(
        harness
            .take_effects()
            .contains(&pi_tui::effect::Effect::Title("pi — treasure".to_owned()))
    );
    // Another session's notices are not shown here.
    harness.send(Input::ExtensionUi(pi_protocol::v1::ExtensionUiParams {
        session_id: "another".to_owned(),
        ui: ExtensionUi::Status {
            key: "x".to_owned(),
            text: Some("not ours".to_owned()),
        },
    }));
    assert!(!harness.screen(60, 14).contains("not ours"));
}

#[test]
fn a_key_an_extension_registers_runs_its_shortcut_unless_the_tui_binds_it() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(session_details(
        Vec::new(),
        vec![
            ExtensionShortcut {
                key: "ctrl+alt+p".into(),
                description: "Toggle plan mode".into(),
            },
            ExtensionShortcut {
                key: "ctrl+c".into(),
                description: "Taken by the TUI".into(),
            },
        ],
        Vec::new(),
        Vec::new(),
    )));
    harness.take_effects();
    harness.send(key_with(
        KeyCode::Char('p'),
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    ));
    assert_eq!(
        requests(harness.take_effects()),
        [Effect::Request(Request::Shortcut("ctrl+alt+p".to_owned()))]
    );
    assert!(harness.state.editor.is_empty(), "the key was typed");
    // A key the TUI binds keeps its meaning.
    harness.send(ctrl('c'));
    assert!(
        !requests(harness.take_effects())
            .iter()
            .any(|effect| matches!(effect, Effect::Request(Request::Shortcut(_)))),
    );
}

#[test]
fn slash_changelog_shows_every_release_in_the_transcript() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/changelog");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(100, 60);
    assert!(screen.contains("[What's New]"), "{screen}");
    assert!(screen.contains("[0.1.0]"), "{screen}");
}

#[test]
fn the_changelog_keeps_pis_header_above_it() {
    let mut harness = Harness::attached(Vec::new());
    harness.type_text("/changelog");
    harness.send(key(KeyCode::Enter));
    let screen = harness.screen(100, 60);
    assert!(
        screen.contains("enter send · shift+enter newline"),
        "{screen}"
    );
    assert!(screen.contains("[What's New]"), "{screen}");
}

#[test]
fn clone_import_and_share_ask_the_daemon_or_say_what_is_missing() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.type_text("/clone");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Nothing to clone yet")
    );
    harness.type_text("/import");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Usage: /import <path.jsonl>")
    );
    harness.take_effects();
    harness.type_text("/import old/session.jsonl");
    harness.send(key(KeyCode::Enter));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Request(Request::Import(
                "old/session.jsonl".to_owned()
            )))
    );
    harness.type_text("/share");
    harness.send(key(KeyCode::Enter));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Request(Request::Share))
    );
    // The daemon's copy: the TUI moves to it and says so.
    harness.send(Input::Reply(Reply::Opened {
        session_id: "copy-1".to_owned(),
        status: "Cloned to new session".to_owned(),
    }));
    assert!(
        harness
            .take_effects()
            .contains(&Effect::Switch(SwitchTo::Existing("copy-1".to_owned())))
    );
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Cloned to new session")
    );
}

#[test]
fn tab_completes_a_path_without_at_as_pi() {
    let mut harness = Harness::attached(Vec::new());
    // One file starts with it: put in at once.
    harness.type_text("look at src/pa");
    harness.send(key(KeyCode::Tab));
    assert_eq!(harness.state.editor.text(), "look at src/parser.rs ");
    // Several: a list to choose from.
    harness.type_text("and src/");
    harness.send(key(KeyCode::Tab));
    let completion = harness.state.completion.as_ref().expect("a list");
    let offered: Vec<&str> = completion
        .items
        .iter()
        .map(|(label, _, _)| label.as_str())
        .collect();
    assert_eq!(offered, ["src/main.rs", "src/markdown.rs", "src/parser.rs"]);
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        harness.state.editor.text(),
        "look at src/parser.rs and src/main.rs "
    );
    // Nothing in the list: it is read again (files appear while the TUI runs), then tried
    // once more.
    harness.type_text("zzz");
    harness.take_effects();
    harness.send(key(KeyCode::Tab));
    assert_eq!(harness.take_effects(), [Effect::ListFiles]);
    let mut files = harness.state.files.clone();
    harness.send(Input::Files(files.clone()));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("No file starts with zzz")
    );
    assert!(harness.take_effects().is_empty(), "asked once per Tab");
    // A file the agent wrote since: found on the next Tab.
    files.push("zzz_new.rs".to_owned());
    harness.send(key(KeyCode::Tab));
    assert_eq!(harness.take_effects(), [Effect::ListFiles]);
    harness.send(Input::Files(files));
    assert_eq!(
        harness.state.editor.text(),
        "look at src/parser.rs and src/main.rs zzz_new.rs "
    );
}

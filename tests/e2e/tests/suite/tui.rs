//! The real `pictl` TUI in tmux against the real daemon and the scripted model: type a
//! prompt and see the streamed reply and a `read` tool call; queue a steering message while a
//! `bash` tool runs; abort with Esc; attach a second TUI and see the same screen, drafts
//! included; kill and restart the daemon and see both TUIs reconnect and carry on without
//! repeats; detach, and pick the session again with `pictl attach`. A TUI that stops reading
//! is cut as a slow consumer and catches up once it reads again. pi's interactive settings
//! (the startup header's context files, `treeFilterMode`, `quietStartup`) shape it and apply
//! when the settings file changes.
//!
//! tmux runs on a private socket in a temporary directory; screens are read with
//! `capture-pane`, polled until a deadline.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use pi_test_support::model_server::Turn;
use pi_test_support::workspace_binary;

use super::harness::{MODEL, World};

/// How long a screen may take to show what a step expects.
const SCREEN_DEADLINE: Duration = Duration::from_secs(30);
/// Between two `capture-pane` polls.
const POLL: Duration = Duration::from_millis(25);

/// A private tmux server; killed when dropped.
pub(super) struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    pub(super) fn new(dir: &Path) -> Tmux {
        Tmux {
            socket: dir.join("tmux.sock"),
        }
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux is installed (tests/install-peers)");
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Starts `command` in a new 100x30 window named `name`.
    pub(super) fn start(
        &self,
        name: &str,
        cwd: &Path,
        env: &[(String, String)],
        command: &[String],
    ) {
        let first = !self.socket.exists();
        let mut args: Vec<String> = if first {
            ["new-session", "-d", "-s", "pi", "-x", "100", "-y", "30"]
                .map(String::from)
                .to_vec()
        } else {
            ["new-window", "-d", "-t", "pi"].map(String::from).to_vec()
        };
        args.extend([
            "-n".into(),
            name.into(),
            "-c".into(),
            cwd.display().to_string(),
        ]);
        for (key, value) in env {
            args.extend(["-e".into(), format!("{key}={value}")]);
        }
        args.extend(command.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.tmux(&args);
        if first {
            // Windows created later get the same size; a finished program stays readable.
            self.tmux(&["set-option", "-g", "default-size", "100x30"]);
            self.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        }
    }

    pub(super) fn send(&self, name: &str, keys: &[&str]) {
        let target = format!("pi:{name}");
        let mut args = vec!["send-keys", "-t", target.as_str()];
        args.extend(keys);
        self.tmux(&args);
    }

    /// Types text literally.
    pub(super) fn type_text(&self, name: &str, text: &str) {
        let target = format!("pi:{name}");
        self.tmux(&["send-keys", "-t", target.as_str(), "-l", text]);
    }

    /// The screen and what scrolled off it.
    fn capture_with_history(&self, name: &str) -> String {
        let target = format!("pi:{name}");
        let output = self.tmux(&["capture-pane", "-p", "-S", "-200", "-t", target.as_str()]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen with its colours (SGR escapes).
    fn capture_colours(&self, name: &str) -> String {
        let target = format!("pi:{name}");
        let output = self.tmux(&["capture-pane", "-e", "-p", "-t", target.as_str()]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(super) fn capture(&self, name: &str) -> String {
        let target = format!("pi:{name}");
        let output = self.tmux(&["capture-pane", "-p", "-t", target.as_str()]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Polls the screen until `predicate` holds; returns it. Panics with the screen at the
    /// deadline.
    pub(super) fn wait_for(
        &self,
        name: &str,
        what: &str,
        predicate: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + SCREEN_DEADLINE;
        loop {
            let screen = self.capture(name);
            if predicate(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: waited for {what}; the screen is:\n{screen}"
            );
            std::thread::sleep(POLL);
        }
    }

    pub(super) fn wait_for_text(&self, name: &str, text: &str) -> String {
        self.wait_for(name, &format!("{text:?}"), |screen| screen.contains(text))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// The transcript part of a screen: everything above the editor's top rule.
fn transcript(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let editor_top = lines
        .iter()
        .rposition(|line| line.starts_with("──"))
        .and_then(|bottom| {
            lines[..bottom]
                .iter()
                .rposition(|line| line.starts_with("──"))
        })
        .unwrap_or(lines.len());
    lines[..editor_top].join("\n")
}

/// A work directory in the daemon's home, a private tmux, the environment a TUI runs with
/// (this daemon, a 256-colour terminal) and the `pictl` binary.
fn tui_setup(world: &World) -> (PathBuf, Tmux, Vec<(String, String)>, String) {
    let work = world.daemon.home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let tmux = Tmux::new(world.daemon.home.path());
    let mut env = world.daemon.env();
    env.push((
        "PI_DAEMON_BIN".into(),
        workspace_binary("pid").display().to_string(),
    ));
    env.push(("TERM".into(), "xterm-256color".into()));
    let pictl = workspace_binary("pictl").display().to_string();
    (work, tmux, env, pictl)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tuis_stream_queue_abort_and_survive_a_daemon_restart() {
    let mut world = World::start("anthropic-messages").await;
    let (work, tmux, env, pictl) = tui_setup(&world);

    // A prompt: the reply streams, with a tool call that reads a file.
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(
        work.join("src/lexer.rs"),
        "fn lex() {}\nfn next() {}\nfn peek() {}\n",
    )
    .unwrap();
    world.server.push(
        Turn::reply()
            .text("Let me check the **lexer** first.")
            .tool_call("t1", "read", serde_json::json!({"path": "src/lexer.rs"})),
    );
    world
        .server
        .push(Turn::reply().text("The lexer looks fine to me."));
    tmux.start(
        "a",
        &work,
        &env,
        &[pictl.clone(), "--model".into(), MODEL.into()],
    );
    tmux.wait_for_text("a", "Type a message");
    tmux.type_text("a", "explain the lexer");
    tmux.send("a", &["Enter"]);
    let screen = tmux.wait_for_text("a", "The lexer looks fine to me.");
    assert!(screen.contains("› explain the lexer"), "{screen}");
    assert!(screen.contains("Let me check the lexer first."), "{screen}");
    assert!(screen.contains("● read src/lexer.rs"), "{screen}");
    assert!(screen.contains("3 lines"), "{screen}");

    // A tool that runs until aborted: Enter queues a steering message, Esc aborts.
    world
        .server
        .push(Turn::reply().text("Running the slow suite.").tool_call(
            "t2",
            "bash",
            serde_json::json!({"command": "sleep 300"}),
        ));
    tmux.type_text("a", "now the parser");
    tmux.send("a", &["Enter"]);
    tmux.wait_for("a", "the tool to run", |screen| {
        screen.contains("bash $ sleep 300") && screen.contains("Working… (esc to abort)")
    });
    tmux.type_text("a", "also check the tests");
    tmux.send("a", &["Enter"]);
    tmux.wait_for_text("a", "queued steer: also check the tests");
    tmux.send("a", &["Escape"]);
    // As in pi, Esc takes the queued message back into the editor before aborting. (The
    // queue's update from the daemon and the editor's refill arrive separately: wait for both.)
    let editor_line = |screen: &str| {
        screen
            .lines()
            .skip_while(|line| !line.starts_with("──"))
            .nth(1)
            .unwrap_or_default()
            .trim_end()
            .to_owned()
    };
    let screen = tmux.wait_for(
        "a",
        "the run to end and the steer back in the editor",
        |screen| {
            !screen.contains("Working…")
                && !screen.contains("queued steer")
                && editor_line(screen) == "› also check the tests"
        },
    );
    assert!(
        !transcript(&screen).contains("also check the tests"),
        "not delivered:\n{screen}"
    );
    tmux.send("a", &["C-u"]);
    tmux.wait_for_text("a", "Type a message");

    // A second TUI on the same session sees the same transcript, and A's draft.
    let sessions = world.sessions().await;
    assert_eq!(sessions.len(), 1);
    let session_id = sessions[0].id.clone();
    tmux.start(
        "b",
        &work,
        &env,
        &[pictl.clone(), "attach".into(), session_id.clone()],
    );
    tmux.wait_for_text("b", "The lexer looks fine to me.");
    let screen_a = tmux.wait_for_text("a", "1 other client attached");
    let screen_b = tmux.wait_for_text("b", "1 other client attached");
    assert_eq!(transcript(&screen_a), transcript(&screen_b));
    tmux.type_text("a", "a thought in progress");
    tmux.wait_for_text("b", "is typing: a thought in progress");
    tmux.send("a", &["C-u"]);
    tmux.wait_for_text("b", "1 other client attached");

    // The daemon dies and comes back: both TUIs reconnect and continue.
    world.daemon.kill9().await;
    tmux.wait_for_text("a", "Reconnecting");
    tmux.wait_for_text("b", "Reconnecting");
    world.daemon.restart().await;
    for name in ["a", "b"] {
        tmux.wait_for(name, "the reconnection", |screen| {
            !screen.contains("Reconnecting") && screen.contains("1 other client attached")
        });
    }
    world
        .server
        .push(Turn::reply().text("Back after the restart."));
    tmux.type_text("b", "are you still there?");
    tmux.send("b", &["Enter"]);
    for name in ["a", "b"] {
        // The reply shows before `agent_end` clears the spinner; wait for the run's end too,
        // and for b's emptied editor to reach a (the draft's presence update can trail the
        // run when the reply is quick).
        let screen = tmux.wait_for(
            name,
            "the reply, the run's end and b's empty draft",
            |screen| {
                screen.contains("Back after the restart.")
                    && !screen.contains("Working…")
                    && !screen.contains("is typing")
            },
        );
        assert!(screen.contains("› are you still there?"), "{screen}");
        assert_eq!(
            screen.matches("The lexer looks fine to me.").count(),
            1,
            "nothing is shown twice:\n{screen}"
        );
    }
    let screen_a = tmux.capture("a");
    let screen_b = tmux.capture("b");
    assert_eq!(transcript(&screen_a), transcript(&screen_b));

    // Ctrl+D on an empty editor detaches; the session stays, and `pictl attach` without an
    // id offers it in the picker.
    tmux.send("a", &["C-d"]);
    tmux.wait_for("a", "pictl to exit", |screen| {
        !screen.contains("Type a message")
    });
    tmux.wait_for_text("b", "Type a message");
    tmux.start("c", &work, &env, &[pictl, "attach".into()]);
    tmux.wait_for_text("c", "Attach to a session");
    tmux.wait_for_text("c", "explain the lexer");
    tmux.send("c", &["Enter"]);
    let screen = tmux.wait_for_text("c", "Back after the restart.");
    assert!(screen.contains("› are you still there?"), "{screen}");
    assert_eq!(transcript(&screen), transcript(&tmux.capture("b")));

    // Ctrl+R searches the prompt history the daemon keeps for every client.
    tmux.send("c", &["C-r"]);
    tmux.wait_for_text("c", "Search prompt history");
    tmux.type_text("c", "lex");
    tmux.wait_for_text("c", "│  explain the lexer");
    tmux.send("c", &["Enter"]);
    let screen = tmux.wait_for("c", "the prompt in the editor", |screen| {
        !screen.contains("Search prompt history")
    });
    let editor_line = screen
        .lines()
        .skip_while(|line| !line.starts_with("──"))
        .nth(1)
        .unwrap_or_default();
    assert_eq!(editor_line.trim_end(), "› explain the lexer", "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_asks_about_a_project_mcp_server_and_shows_it_in_the_footer() {
    let project = serde_json::json!({"mcpServers": {
        "proj": super::mcp_faults::fault_server(serde_json::json!({})),
    }});
    let world = World::start_with(
        "anthropic-messages",
        &[("work/.mcp.json", project.to_string())],
    )
    .await;
    let work = world.daemon.home.path().join("work");
    let tmux = Tmux::new(world.daemon.home.path());
    let mut env = world.daemon.env();
    env.push((
        "PI_DAEMON_BIN".into(),
        workspace_binary("pid").display().to_string(),
    ));
    env.push(("TERM".into(), "xterm-256color".into()));
    let pictl = workspace_binary("pictl").display().to_string();
    tmux.start("a", &work, &env, &[pictl, "--model".into(), MODEL.into()]);
    // The new session's project server is asked about in a dialog.
    let screen = tmux.wait_for_text("a", "Start MCP server \"proj\"");
    assert!(screen.contains("with your permissions"), "{screen}");
    assert!(
        !screen.contains("MCP 1/1"),
        "not started before the answer:\n{screen}"
    );
    // Nothing is chosen until an arrow key: Down highlights "Yes".
    tmux.send("a", &["Down"]);
    tmux.send("a", &["Enter"]);
    // Approved: it starts, and the footer follows it.
    tmux.wait_for_text("a", "MCP 1/1");
    tmux.type_text("a", "/mcp");
    tmux.send("a", &["Enter"]);
    let screen = tmux.wait_for_text("a", "This session:");
    assert!(screen.contains("proj"), "{screen}");
    assert!(screen.contains("ready"), "{screen}");
}

/// The process running in window `name` (the TUI itself: tmux runs the command directly).
fn pane_pid(tmux: &Tmux, name: &str) -> u32 {
    let target = format!("pi:{name}");
    let output = tmux.tmux(&[
        "display-message",
        "-p",
        "-t",
        target.as_str(),
        "#{pane_pid}",
    ]);
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("tmux prints the pane's pid")
}

fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_tui_is_cut_as_a_slow_consumer_and_catches_up_when_it_resumes() {
    // A small outbound queue, so a long reply overflows it.
    let world =
        World::start_with_config("anthropic-messages", "[limits]\noutbound_queue = 64\n", &[])
            .await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    world.server.push(Turn::reply().text("Ready when you are."));
    tmux.start("a", &work, &env, &[pictl, "--model".into(), MODEL.into()]);
    tmux.wait_for_text("a", "Type a message");
    tmux.type_text("a", "warm up");
    tmux.send("a", &["Enter"]);
    tmux.wait_for("a", "the first reply and the run's end", |screen| {
        screen.contains("Ready when you are.") && !screen.contains("Working…")
    });

    // The TUI stops reading (its process is stopped) while another client runs a long reply:
    // 5,000 deltas of thinking (shown folded, one line) before the text, about a megabyte of
    // events, far past what its socket and its queue of 64 hold. That client does not attach:
    // its own queue is as small.
    let tui = pane_pid(&tmux, "a");
    signal(tui, "-STOP");
    let session = world.sessions().await.remove(0);
    let (client, _events) = world.client().await;
    world.server.push(
        Turn::reply()
            .thinking("t".repeat(20_000))
            .text(format!("{} THE END.", "Z".repeat(300)))
            .delta_chars(4),
    );
    client
        .call::<pi_protocol::v1::SessionPrompt>(&super::harness::prompt(&session.id, "go on"))
        .await
        .unwrap();
    // The daemon cuts the TUI's connection instead of queueing without bound.
    let deadline = Instant::now() + SCREEN_DEADLINE;
    while !world
        .daemon
        .stderr()
        .contains("closing it as a slow consumer")
    {
        assert!(
            Instant::now() < deadline,
            "no slow consumer was cut:\n{}",
            world.daemon.stderr()
        );
        tokio::time::sleep(POLL).await;
    }

    // It resumes, reads what its socket held, sees the end, reconnects and catches up: the
    // whole reply once and the run over.
    signal(tui, "-CONT");
    let screen = tmux.wait_for("a", "the caught-up reply", |screen| {
        screen.contains("THE END.")
            && !screen.contains("Reconnecting")
            && !screen.contains("Working…")
    });
    // Every character of the reply once: nothing lost with the cut, nothing doubled by the
    // catch-up.
    let shown = transcript(&screen);
    assert_eq!(shown.matches('Z').count(), 300, "{screen}");
    assert_eq!(shown.matches("THE END.").count(), 1, "{screen}");
    assert_eq!(shown.matches("▸ Thinking").count(), 1, "{screen}");
}

/// pi's own session files are in the TUI's picker (`pictl -r`): one chosen opens in the
/// daemon with its history, what is said next lands in pi's file, and detaching says how to
/// come back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_opens_pis_session_files_and_detaching_says_how_to_come_back() {
    let world = World::start("anthropic-messages").await;
    world.server.push(Turn::reply().text("Answer from pid."));
    let (work, tmux, env, pictl) = tui_setup(&world);
    let file = pi_test_support::pi_session::write(
        &world.daemon.home.path().join(".pi/agent"),
        &work,
        "5e55e55e-0000",
        "a question from pi",
    );

    tmux.start("a", &work, &env, &[pictl, "-r".into()]);
    tmux.wait_for_text("a", "Attach to a session");
    tmux.wait_for_text("a", "a question from pi");
    tmux.wait_for_text("a", "pi's file");
    tmux.send("a", &["Enter"]);
    tmux.wait_for_text("a", "› a question from pi");
    tmux.type_text("a", "and from pid");
    tmux.send("a", &["Enter"]);
    tmux.wait_for_text("a", "Answer from pid.");

    let sessions = world.sessions().await;
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        sessions[0].pi_file.as_deref(),
        Some(file.display().to_string().as_str())
    );
    let short = sessions[0].id[..8].to_owned();
    tmux.wait_for_text("a", &format!("· {short}"));

    tmux.send("a", &["C-d"]);
    tmux.wait_for_text("a", "Come back with");
    let screen = tmux.capture_with_history("a");
    assert!(
        screen.contains(&format!("Detached from session {short}; it keeps running")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("Come back with `pictl attach {short}`")),
        "{screen}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"text\":\"and from pid\""), "{text}");
    assert!(text.contains("Answer from pid."), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pis_interactive_settings_shape_the_tui_and_apply_when_the_file_changes() {
    let world = World::start_with(
        "anthropic-messages",
        &[(
            ".pi/agent/settings.json",
            r#"{"treeFilterMode": "user-only", "editorPaddingX": "wide"}"#.to_owned(),
        )],
    )
    .await;
    world.server.push(Turn::reply().text("Answer one."));
    let (work, tmux, env, pictl) = tui_setup(&world);
    std::fs::write(work.join("AGENTS.md"), "Use tabs.\n").unwrap();

    // pi's header lists the context files the session's prompt has.
    tmux.start(
        "a",
        &work,
        &env,
        &[pictl.clone(), "--model".into(), MODEL.into()],
    );
    let screen = tmux.wait_for_text("a", "[Context]");
    assert!(screen.contains("/work/AGENTS.md"), "{screen}");
    assert!(screen.contains("ctrl+r history"), "{screen}");
    // A bad value already in the file is said at start, under the header.
    let screen = tmux.wait_for_text("a", "`editorPaddingX`: expected a whole number");
    assert!(screen.contains("[Context]"), "{screen}");

    // `/tree` opens with `treeFilterMode`'s rows; Ctrl+A shows everything.
    tmux.type_text("a", "first question");
    tmux.send("a", &["Enter"]);
    tmux.wait_for_text("a", "Answer one.");
    tmux.type_text("a", "/tree");
    tmux.send("a", &["Enter"]);
    let screen = tmux.wait_for_text("a", "Session tree [user]");
    assert!(screen.contains("user: first question"), "{screen}");
    assert!(!screen.contains("assistant: Answer one."), "{screen}");
    tmux.send("a", &["C-a"]);
    tmux.wait_for_text("a", "assistant: Answer one.");
    tmux.send("a", &["Escape"]);

    // A changed settings file applies at once: a new session starts without the header.
    std::fs::write(
        world.daemon.home.path().join(".pi/agent/settings.json"),
        r#"{"quietStartup": true}"#,
    )
    .unwrap();
    tmux.wait_for_text("a", "Configuration reloaded");
    tmux.type_text("a", "/new");
    tmux.send("a", &["Enter"]);
    tmux.wait_for("a", "a new session without the header", |screen| {
        !screen.contains("Answer one.")
            && screen.contains("Type a message")
            && !screen.contains("[Context]")
            && !screen.contains("ctrl+r history")
    });
}

/// A theme file in pi's format: the built-in dark one's colours with `accent` changed.
fn theme_with_accent(name: &str, accent: &str) -> String {
    let mut theme: serde_json::Value =
        serde_json::from_str(include_str!("../../../../client-tui/src/themes/dark.json")).unwrap();
    theme["name"] = serde_json::json!(name);
    theme["colors"]["accent"] = serde_json::json!(accent);
    theme.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_theme_colours_the_tui_and_reloads_when_its_file_changes() {
    let world = World::start("anthropic-messages").await;
    let (work, tmux, mut env, pictl) = tui_setup(&world);
    env.push(("COLORTERM".into(), "truecolor".into()));
    std::fs::create_dir_all(work.join(".pi/themes")).unwrap();
    let theme_file = work.join(".pi/themes/ocean.json");
    std::fs::write(&theme_file, theme_with_accent("ocean", "#0000ff")).unwrap();
    std::fs::write(work.join(".pi/settings.json"), r#"{"theme": "ocean"}"#).unwrap();

    tmux.start("a", &work, &env, &[pictl, "--model".into(), MODEL.into()]);
    tmux.wait_for_text("a", "Type a message");
    // The editor's prompt is drawn in the theme's accent.
    let blue = "\u{1b}[38;2;0;0;255m›";
    let deadline = Instant::now() + SCREEN_DEADLINE;
    while !tmux.capture_colours("a").contains(blue) {
        assert!(
            Instant::now() < deadline,
            "no accent in the theme's colour:\n{:?}",
            tmux.capture_colours("a")
        );
        std::thread::sleep(POLL);
    }
    // Edited, the theme applies without a restart.
    std::fs::write(&theme_file, theme_with_accent("ocean", "#00ff00")).unwrap();
    let green = "\u{1b}[38;2;0;255;0m›";
    let deadline = Instant::now() + SCREEN_DEADLINE;
    while !tmux.capture_colours("a").contains(green) {
        assert!(
            Instant::now() < deadline,
            "the edited theme did not apply:\n{:?}",
            tmux.capture_colours("a")
        );
        std::thread::sleep(POLL);
    }
    // A theme that exists nowhere is said at start, and dark is used.
    let elsewhere = work.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join(".pi")).unwrap();
    std::fs::write(
        elsewhere.join(".pi/settings.json"),
        r#"{"theme": "nowhere"}"#,
    )
    .unwrap();
    tmux.start(
        "b",
        &elsewhere,
        &env,
        &[
            workspace_binary("pictl").display().to_string(),
            "--model".into(),
            MODEL.into(),
        ],
    );
    tmux.wait_for_text("b", "Warning: no theme \"nowhere\"");
    // A broken edit keeps the theme shown and says why.
    std::fs::write(
        &theme_file,
        r#"{"name": "ocean", "colors": {"accent": "blue"}}"#,
    )
    .unwrap();
    let screen = tmux.wait_for_text("a", "the theme shown stays");
    assert!(screen.contains("`colors` lacks"), "{screen}");
    assert!(tmux.capture_colours("a").contains(green));
}

/// pi's `/login` in the TUI: the dialog shows the URL to open; the browser (here, on the same
/// machine) completes the login through the daemon's loopback callback, and the TUI says so.
/// `/logout` removes it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_and_logout_from_the_tui() {
    let auth = pi_test_support::auth_server::AuthServer::start().await;
    let mut world = World::start("anthropic-messages").await;
    world.daemon.kill9().await;
    world.daemon.set_launch_env("PI_OAUTH_ORIGIN", &auth.url());
    world.daemon.set_launch_env("PI_OAUTH_CALLBACK_PORT", "0");
    world.daemon.restart().await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    tmux.start("a", &work, &env, &[pictl, "--model".into(), MODEL.into()]);
    tmux.wait_for_text("a", "scripted-model");
    tmux.type_text("a", "/login anthropic");
    tmux.send("a", &["Enter"]);
    let screen = tmux.wait_for_text("a", "Paste the authorization code");
    assert!(
        screen.contains("Log in: Anthropic (Claude Pro/Max)"),
        "{screen}"
    );
    // The URL, wrapped inside the dialog's frame.
    let lines: Vec<&str> = screen.lines().collect();
    let first = lines
        .iter()
        .position(|line| line.contains("Open this URL"))
        .unwrap_or_else(|| panic!("{screen}"));
    let url: String = lines[first + 1..]
        .iter()
        .map(|line| line.trim().trim_matches('│').trim())
        .take_while(|part| !part.is_empty())
        .collect();
    assert!(
        url.starts_with(&format!("{}/oauth/authorize?", auth.url())),
        "{url}"
    );
    let _ = rustls::crypto::ring::default_provider().install_default();
    let page = reqwest::get(&url).await.unwrap();
    assert_eq!(page.status(), 200, "{url}");
    let screen = tmux.wait_for_text("a", "Logged in to Anthropic (Claude Pro/Max)");
    assert!(!screen.contains("Paste the authorization code"), "{screen}");
    let auth_json = world.daemon.home.path().join(".pi/agent/auth.json");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&auth_json).unwrap()).unwrap();
    assert_eq!(stored["anthropic"]["type"], "oauth");
    assert_eq!(auth.violations(), Vec::<String>::new());

    tmux.type_text("a", "/logout anthropic");
    tmux.send("a", &["Enter"]);
    tmux.wait_for_text("a", "Logged out of anthropic.");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&auth_json).unwrap()).unwrap();
    assert!(stored.get("anthropic").is_none(), "{stored}");
}

/// `pictl attach ID --api-key KEY`: the session's runs use the key for its model's provider
/// (pi's `--api-key`), over `models.json`'s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_with_an_api_key_uses_it_for_the_sessions_runs() {
    let world = World::start("anthropic-messages").await;
    let (client, _events) = world.client().await;
    let session = world.attached_session(&client).await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    world.server.push(Turn::reply().text("keyed reply"));
    tmux.start(
        "a",
        &work,
        &env,
        &[
            pictl,
            "attach".into(),
            session.id.clone(),
            "--api-key".into(),
            "sk-from-the-command-line".into(),
        ],
    );
    tmux.wait_for_text("a", "scripted-model");
    tmux.type_text("a", "hello");
    tmux.send("a", &["Enter"]);
    tmux.wait_for_text("a", "keyed reply");
    let request = world.server.requests().pop().unwrap();
    assert_eq!(
        request.header("x-api-key"),
        Some("sk-from-the-command-line")
    );
}

/// A 200x20 red PNG: 60 cells wide, 3 rows high on 9x18 cells.
const BANNER: &str = "iVBORw0KGgoAAAANSUhEUgAAAMgAAAAUCAIAAABHxuWdAAAAQUlEQVR42u3SQQ0AAAgDscmZfxXIQgQ8m1TB5TItvIsEGAtjYSwwFsbCWGAsjIWxwFgYC2OBsTAWxgJjYSyMBXcLbQ0YAEDfTFwAAAAASUVORK5CYII=";

/// The real TUI in tmux as the terminal `terminal` (variables given to `env`, tmux's own
/// taken away) reads the banner with `read`: what it wrote, captured with `pipe-pane` (tmux
/// drops graphics sequences from its screen) once it holds `marker`.
async fn image_read_as(terminal: &[&str], marker: &str) -> String {
    use base64::Engine as _;
    let world = World::start("anthropic-messages").await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    let png = base64::engine::general_purpose::STANDARD
        .decode(BANNER)
        .unwrap();
    std::fs::write(work.join("banner.png"), &png).unwrap();
    world
        .server
        .push(Turn::reply().text("Looking at it.").tool_call(
            "t1",
            "read",
            serde_json::json!({"path": "banner.png"}),
        ));
    world.server.push(Turn::reply().text("A red banner."));
    let mut command: Vec<String> = ["env", "-u", "TMUX"].map(String::from).to_vec();
    command.extend(terminal.iter().map(|variable| (*variable).to_owned()));
    command.extend([pictl, "--model".into(), MODEL.into()]);
    tmux.start("i", &work, &env, &command);
    let written = world.daemon.home.path().join("written.bin");
    tmux.tmux(&[
        "pipe-pane",
        "-o",
        "-t",
        "pi:i",
        &format!("cat >> {}", written.display()),
    ]);
    tmux.wait_for_text("i", "Type a message");
    tmux.type_text("i", "what is in banner.png");
    tmux.send("i", &["Enter"]);
    tmux.wait_for_text("i", "A red banner.");
    let deadline = Instant::now() + SCREEN_DEADLINE;
    loop {
        let text =
            String::from_utf8_lossy(&std::fs::read(&written).unwrap_or_default()).into_owned();
        if text.contains(marker) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(POLL);
    }
}

/// pi's inline images in the real TUI: on a terminal that says it is kitty, the image `read`
/// returned is sent with kitty's graphics protocol and placed under the tool's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_image_is_drawn_with_kittys_protocol() {
    use base64::Engine as _;
    let output = image_read_as(&["TERM=xterm-256color", "KITTY_WINDOW_ID=1"], "\x1b_Ga=p,").await;
    let sent = output
        .find("\x1b_Ga=t,f=100,")
        .unwrap_or_else(|| panic!("the image was not sent: {output:?}"));
    let placed = output
        .find("c=60,r=3,C=1,q=2\x1b\\")
        .unwrap_or_else(|| panic!("the image was not placed: {output:?}"));
    assert!(sent < placed);
    // The image sent is the file's, whole.
    let start = sent + output[sent..].find(';').unwrap() + 1;
    let end = start + output[start..].find("\x1b\\").unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&output[start..end])
            .unwrap(),
        base64::engine::general_purpose::STANDARD
            .decode(BANNER)
            .unwrap()
    );
}

/// pi's `/settings` in the real TUI: a setting chosen and saved lands in the daemon's own
/// `settings.json` and applies at once (here `quietStartup`, which hides the header).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_settings_saves_a_setting_that_applies_at_once() {
    let world = World::start("anthropic-messages").await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    tmux.start(
        "c",
        &work,
        &env,
        &[pictl.clone(), "--model".into(), MODEL.into()],
    );
    tmux.wait_for_text("c", "ctrl+r history");
    tmux.type_text("c", "/settings");
    tmux.send("c", &["Enter"]);
    tmux.wait_for_text("c", "Settings (saved to pi's settings.json)");
    tmux.type_text("c", "quiet startup");
    tmux.send("c", &["Enter"]);
    tmux.wait_for_text("c", "Quiet startup");
    tmux.type_text("c", "true");
    tmux.send("c", &["Enter"]);
    let screen = tmux.wait_for_text("c", "Saved quietStartup in ");
    // pi's file, so pi sees it too.
    let written = world.daemon.home.path().join(".pi/agent/settings.json");
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&written)
            .unwrap_or_else(|error| panic!("{}: {error}\n{screen}", written.display())),
    )
    .unwrap();
    assert_eq!(saved["quietStartup"], true);
    // Applied: the header's key hints are gone.
    tmux.wait_for("c", "the header to go", |screen| {
        !screen.contains("ctrl+r history")
    });
    // pi's interactive mode: a thinking level chosen is the default of the next session.
    tmux.send("c", &["BTab"]);
    tmux.wait_for("c", "the default thinking level in pi's settings", |_| {
        std::fs::read_to_string(&written)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .is_some_and(|saved| saved["defaultThinkingLevel"].is_string())
    });
    // `/share` on a machine without the GitHub CLI: the page goes to a file, and why.
    tmux.type_text("c", "/share");
    tmux.send("c", &["Enter"]);
    tmux.wait_for_text("c", "GitHub CLI (gh) is not installed");
    let exported: Vec<_> = std::fs::read_dir(&work)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".html"))
        .collect();
    assert_eq!(exported.len(), 1, "one page in the working directory");
}

/// pi's Ctrl+V in the real TUI: the clipboard's image (a stand-in `wl-paste` on a Wayland
/// session) goes into the message as a file, and the model receives the image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_v_pastes_the_clipboards_image_into_the_message() {
    use base64::Engine as _;
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::start("anthropic-messages").await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    let png = base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAMgAAAAUCAIAAABHxuWdAAAAQUlEQVR42u3SQQ0AAAgDscmZfxXIQgQ8m1TB5TItvIsEGAtjYSwwFsbCWGAsjIWxwFgYC2OBsTAWxgJjYSyMBXcLbQ0YAEDfTFwAAAAASUVORK5CYII=")
        .unwrap();
    let bin = world.daemon.home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let clip = world.daemon.home.path().join("clip.png");
    std::fs::write(&clip, &png).unwrap();
    std::fs::write(
        bin.join("wl-paste"),
        format!(
            "#!/bin/sh\ncase \"$1\" in --list-types) echo image/png ;; --type) cat {} ;; esac\n",
            clip.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("wl-paste"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    world.server.push(Turn::reply().text("A red banner."));
    tmux.start(
        "v",
        &work,
        &env,
        &[
            "env".into(),
            format!("PATH={path}"),
            "WAYLAND_DISPLAY=wayland-test".into(),
            pictl,
            "--model".into(),
            MODEL.into(),
        ],
    );
    tmux.wait_for_text("v", "Type a message");
    tmux.type_text("v", "what is this ");
    tmux.send("v", &["C-v"]);
    tmux.wait_for_text("v", "pi-clipboard-");
    tmux.send("v", &["Enter"]);
    tmux.wait_for_text("v", "A red banner.");
    let request = world.server.requests().pop().unwrap();
    let content = &request.body["messages"][0]["content"];
    let image = content
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "image")
        .unwrap_or_else(|| panic!("no image in {content}"));
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(image["source"]["data"].as_str().unwrap())
            .unwrap(),
        png
    );
}

/// pi's Ctrl+G in the real TUI: the message goes to `$VISUAL` (a stand-in that appends a
/// line, as a person editing would), and comes back into the editor when it exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_edits_the_message_in_the_external_editor() {
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::start("anthropic-messages").await;
    let (work, tmux, env, pictl) = tui_setup(&world);
    let editor = world.daemon.home.path().join("fake-editor");
    std::fs::write(
        &editor,
        "#!/bin/sh\nfor last; do :; done\nprintf 'edited outside\\n' >> \"$last\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    tmux.start(
        "g",
        &work,
        &env,
        &[
            "env".into(),
            format!("VISUAL={}", editor.display()),
            pictl,
            "--model".into(),
            MODEL.into(),
        ],
    );
    tmux.wait_for_text("g", "Type a message");
    tmux.type_text("g", "first line");
    tmux.send("g", &["C-g"]);
    let screen = tmux.wait_for_text("g", "edited outside");
    assert!(screen.contains("› first line"), "{screen}");
    // The TUI is whole again: its footer and editor are drawn.
    assert!(screen.contains("scripted/scripted-model"), "{screen}");
}

/// On a terminal known for sixels (foot), the image `read` returned is drawn as sixels under
/// the tool's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_image_is_drawn_as_sixels_on_foot() {
    let output = image_read_as(&["TERM=foot"], "\x1bP0;1;0q").await;
    let start = output
        .find("\x1bP0;1;0q\"1;1;")
        .unwrap_or_else(|| panic!("no sixels: {output:?}"));
    let end = start + output[start..].find("\x1b\\").expect("the sequence ends");
    // A red image (200, 40, 40): its palette holds that red, in percent.
    let sequence = &output[start..end];
    let reds = sequence
        .split('#')
        .filter_map(|entry| {
            let fields: Vec<u32> = entry
                .split(';')
                .map_while(|field| field.parse().ok())
                .collect();
            match fields.as_slice() {
                [_, 2, r, g, b, ..] => Some((*r, *g, *b)),
                _ => None,
            }
        })
        .filter(|(r, g, b)| (75..=81).contains(r) && *g <= 20 && *b <= 20)
        .count();
    assert!(reds > 0, "{}", &sequence[..sequence.len().min(300)]);
}

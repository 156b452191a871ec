//! pi's command line on the daemon: the pinned pi 0.73.1 and `pictl` installed as `pi` run the
//! same command lines — from pi's `--help` and docs: print and JSON modes, messages, @files,
//! piped stdin, models, thinking, tools, system prompts, context files, skills, prompt
//! templates, extensions, sessions (continue, a pi session file continued or forked),
//! export, list-models, bad input — side by side against the scripted model, in the same
//! project and agent directory. Each line must end with the same exit code and print the
//! same stdout (JSON mode: the same events and texts), and the model must receive the same
//! request bodies (pid's intended wording differences aside, `in_pi_words`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use pi_test_support::model_server::{RecordedRequest, Turn};
use pi_test_support::peers;
use serde_json::Value;

use super::extensions::in_pi_words;
use super::harness::World;

/// How a line's stdout is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compare {
    /// Byte for byte.
    Text,
    /// JSON lines: the same event types, and the same role and texts in each `message_end`.
    JsonEvents,
    /// What was printed, stdout and stderr together: with stdin not a terminal pi writes
    /// what `--list-models`, `--export` and `--version` print to stderr (it keeps stdout for
    /// the answer in print mode); `pictl` writes it to stdout.
    Printed,
    /// The same number of printed lines, stdout and stderr together (`--version`: the
    /// versions differ).
    LineCount,
}

/// One command line, typed by the user after `pi`.
struct Line {
    args: &'static [&'static str],
    stdin: Option<&'static str>,
    compare: Compare,
}

const fn line(args: &'static [&'static str]) -> Line {
    Line {
        args,
        stdin: None,
        compare: Compare::Text,
    }
}

const fn json(args: &'static [&'static str]) -> Line {
    Line {
        args,
        stdin: None,
        compare: Compare::JsonEvents,
    }
}

const fn printed_line(args: &'static [&'static str]) -> Line {
    Line {
        args,
        stdin: None,
        compare: Compare::Printed,
    }
}

const fn piped(stdin: &'static str, args: &'static [&'static str]) -> Line {
    Line {
        args,
        stdin: Some(stdin),
        compare: Compare::Text,
    }
}

/// The project both run in: a context file, a discovered skill and prompt template, and
/// files the command lines name.
fn project_files() -> Vec<(&'static str, String)> {
    vec![
        ("proj/notes.txt", "the notes say 42\n".to_owned()),
        ("proj/AGENTS.md", "Always answer briefly.\n".to_owned()),
        (
            "proj/prompt.txt",
            "You are a file-given prompt.\n".to_owned(),
        ),
        (
            "proj/.pi/skills/tidy/SKILL.md",
            "---\nname: tidy\ndescription: Tidies a file\n---\nTidy the file.\n".to_owned(),
        ),
        (
            "proj/extra/lint/SKILL.md",
            "---\nname: lint\ndescription: Lints a file\n---\nLint the file.\n".to_owned(),
        ),
        (
            "proj/.pi/prompts/greet.md",
            "---\ndescription: Greets someone\n---\nSay hello to $1.\n".to_owned(),
        ),
        (
            "proj/templates/review.md",
            "---\ndescription: Reviews\n---\nReview $@ carefully.\n".to_owned(),
        ),
    ]
}

/// The scripted model: `call TOOL {json}` calls the tool (when offered), a tool result is
/// answered with its first line, anything else is echoed with the tool names offered.
fn echo(request: &RecordedRequest) -> Result<Turn, String> {
    let messages = request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let blocks = last["content"].as_array().cloned().unwrap_or_default();
    if let Some(result) = blocks.iter().find(|block| block["type"] == "tool_result") {
        let text = match &result["content"] {
            Value::String(text) => text.clone(),
            content => content[0]["text"].as_str().unwrap_or_default().to_owned(),
        };
        let first = text.lines().next().unwrap_or_default().to_owned();
        return Ok(Turn::reply().text(format!("Result: {first}")).into());
    }
    let text = last["content"].as_str().map_or_else(
        || {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        },
        str::to_owned,
    );
    let offered: Vec<&str> = request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    if let Some(rest) = text.strip_prefix("call ") {
        let (tool, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
        if offered.contains(&tool) {
            let args: Value = serde_json::from_str(args).map_err(|error| error.to_string())?;
            return Ok(Turn::reply().tool_call("call_1", tool, args).into());
        }
    }
    Ok(Turn::reply()
        .text(format!("You said: {text}\nTools: {}", offered.join(",")))
        .into())
}

/// What one side did with a line.
#[derive(Debug)]
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    requests: Vec<Value>,
}

/// `args` run by `program` in `dir` (stdin piped from `stdin`, or empty); the requests the
/// model received meanwhile.
async fn run_side(
    world: &World,
    program: &Path,
    envs: &[(String, String)],
    dir: &Path,
    args: &[String],
    stdin: Option<&str>,
) -> Outcome {
    use tokio::io::AsyncWriteExt as _;
    let before = world.server.calls();
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(envs.iter().cloned())
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).await.unwrap();
    }
    drop(input);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{} {args:?} ends", program.display()))
        .unwrap();
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        requests: world.server.requests()[before..]
            .iter()
            .map(|request| request.body.clone())
            .collect(),
    }
}

/// stdout and stderr, trimmed, one after the other.
fn printed(outcome: &Outcome) -> String {
    format!("{}\n{}", outcome.stdout.trim(), outcome.stderr.trim())
        .trim()
        .to_owned()
}

/// JSON lines as (event type, role and texts of a finished message).
fn events_of(stdout: &str) -> Vec<(String, Value)> {
    stdout
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let event: Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
            let kind = event["type"].as_str().unwrap_or_default().to_owned();
            let detail = if kind == "message_end" {
                let message = &event["message"];
                let texts: Vec<Value> = message["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|block| block["type"] == "text")
                    .map(|block| block["text"].clone())
                    .collect();
                serde_json::json!({"role": message["role"], "texts": texts})
            } else {
                Value::Null
            };
            (kind, detail)
        })
        .collect()
}

/// The newest pi session file of `proj` under the agent directory of `home`.
fn newest_pi_session(home: &Path, proj: &Path) -> PathBuf {
    let encoded = format!(
        "--{}--",
        proj.display()
            .to_string()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    let dir = home.join(".pi/agent/sessions").join(encoded);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    files.pop().expect("pi wrote a session file")
}

/// The lines that differ between `old` and `new`, with two lines of context.
fn changed_lines(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .to_string()
}

/// Runs every line with pi and with `pictl` as `pi`, and compares.
/// What runs each side: pi, and `pictl` installed under pi's name, with their environments.
struct Sides {
    as_pi: PathBuf,
    pi_env: Vec<(String, String)>,
    pid_env: Vec<(String, String)>,
    _dirs: [tempfile::TempDir; 2],
}

fn sides(world: &World) -> Sides {
    let home = world.daemon.home.path();
    // `pictl` installed under pi's name.
    let bin = tempfile::tempdir().unwrap();
    let as_pi = bin.path().join("pi");
    std::os::unix::fs::symlink(pi_test_support::workspace_binary("pictl"), &as_pi).unwrap();
    let common = vec![
        ("HOME".to_owned(), home.display().to_string()),
        ("PI_OFFLINE".to_owned(), "1".to_owned()),
        ("NO_COLOR".to_owned(), "1".to_owned()),
    ];
    let mut pi_env = common.clone();
    pi_env.push((
        "PI_CODING_AGENT_DIR".to_owned(),
        home.join(".pi/agent").display().to_string(),
    ));
    // Each side continues its own sessions (`-c`): pid sees none of pi's files here (it
    // would continue pi's newer one otherwise, as a user switching between them wants).
    let no_pi_sessions = tempfile::tempdir().unwrap();
    let mut pid_env = common;
    pid_env.extend(world.daemon.env());
    pid_env.push((
        "PI_CODING_AGENT_SESSION_DIR".to_owned(),
        no_pi_sessions.path().display().to_string(),
    ));
    Sides {
        as_pi,
        pi_env,
        pid_env,
        _dirs: [bin, no_pi_sessions],
    }
}

async fn side_by_side(world: &World, proj: &Path, lines: &[Line]) {
    let home = world.daemon.home.path();
    let Sides {
        as_pi,
        pi_env,
        pid_env,
        _dirs,
    } = sides(world);
    let mut failures = Vec::new();
    for line in lines {
        // `{session}`: a fresh copy, per side, of the newest pi session file of the project.
        let copies = tempfile::tempdir().unwrap();
        let args_for = |side: &str| -> Vec<String> {
            line.args
                .iter()
                .map(|arg| {
                    if arg.contains("{fresh}") {
                        // A session file that does not exist yet, per side.
                        let fresh = copies.path().join(format!("{side}-fresh.jsonl"));
                        arg.replace("{fresh}", &fresh.display().to_string())
                    } else if arg.contains("{session}") {
                        let copy = copies.path().join(format!("{side}.jsonl"));
                        if !copy.exists() {
                            std::fs::copy(newest_pi_session(home, proj), &copy).unwrap();
                        }
                        arg.replace("{session}", &copy.display().to_string())
                    } else {
                        (*arg).to_owned()
                    }
                })
                .collect()
        };
        let pi_args = args_for("pi");
        let pid_args = args_for("pid");
        let pi = run_side(
            world,
            &peers::npm_bin("pi"),
            &pi_env,
            proj,
            &pi_args,
            line.stdin,
        )
        .await;
        let pid = run_side(world, &as_pi, &pid_env, proj, &pid_args, line.stdin).await;
        let mut problems = Vec::new();
        if pi.code != pid.code {
            problems.push(format!("exit code: pi {:?}, pid {:?}", pi.code, pid.code));
        }
        let same_output = match line.compare {
            Compare::Text => pi.stdout == pid.stdout,
            Compare::JsonEvents => events_of(&pi.stdout) == events_of(&pid.stdout),
            Compare::Printed => printed(&pi) == printed(&pid),
            Compare::LineCount => printed(&pi).lines().count() == printed(&pid).lines().count(),
        };
        if !same_output {
            problems.push(format!(
                "stdout:\n--- pi\n{}\n--- pid\n{}",
                pi.stdout, pid.stdout
            ));
        }
        let pid_requests: Vec<Value> = pid.requests.iter().map(in_pi_words).collect();
        if pi.requests != pid_requests {
            problems.push(format!(
                "requests (- pi, + pid):\n{}",
                changed_lines(
                    &serde_json::to_string_pretty(&pi.requests).unwrap(),
                    &serde_json::to_string_pretty(&pid_requests).unwrap()
                )
            ));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "pi {}\n{}\n(pi's stderr: {}; pid's stderr: {})",
                line.args.join(" "),
                problems.join("\n"),
                pi.stderr.trim(),
                pid.stderr.trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} command lines differ:\n\n{}",
        failures.len(),
        lines.len(),
        failures.join("\n\n")
    );
}

async fn world() -> (World, PathBuf) {
    let world = World::start_with("anthropic-messages", &project_files()).await;
    world.server.respond_with(echo);
    let proj = world.daemon.home.path().join("proj");
    (world, proj)
}

const MODEL: &str = "scripted/scripted-model";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_and_json_modes_messages_files_and_stdin_as_pi() {
    let (world, proj) = world().await;
    side_by_side(
        &world,
        &proj,
        &[
            line(&["-p", "--model", MODEL, "hello"]),
            line(&["--print", "--model", MODEL, "hello"]),
            line(&["--model", MODEL, "-p", "first", "second"]),
            line(&["--model", MODEL, "--mode", "text", "hello"]),
            json(&["--model", MODEL, "--mode", "json", "hello"]),
            json(&["--model", MODEL, "--mode", "json", "-p", "one", "two"]),
            line(&[
                "--model",
                MODEL,
                "-p",
                "@notes.txt",
                "What do the notes say?",
            ]),
            line(&["--model", MODEL, "-p", "@notes.txt"]),
            piped("text from a pipe\n", &["--model", MODEL, "-p", "and this"]),
            piped("only the pipe\n", &["--model", MODEL]),
            line(&["--model", MODEL, "--no-session", "-p", "hello"]),
            line(&["--model", MODEL, "--offline", "-p", "hello"]),
            line(&["--model", MODEL, "--verbose", "-p", "hello"]),
            line(&["--model", MODEL, "--no-themes", "-p", "hello"]),
            line(&[
                "--model",
                MODEL,
                "--session-dir",
                "./sessions",
                "-p",
                "hello",
            ]),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_thinking_and_tools_as_pi() {
    let (world, proj) = world().await;
    side_by_side(
        &world,
        &proj,
        &[
            line(&["--model", "scripted-model", "-p", "hello"]),
            line(&[
                "--provider",
                "scripted",
                "--model",
                "scripted-model",
                "-p",
                "hi",
            ]),
            line(&["--provider", "scripted", "-p", "hi"]),
            line(&[
                "--model",
                "scripted/scripted-model:high",
                "-p",
                "think hard",
            ]),
            line(&["--model", MODEL, "--thinking", "low", "-p", "hi"]),
            line(&["--model", MODEL, "--thinking", "off", "-p", "hi"]),
            line(&["--models", "scripted-model", "-p", "hi"]),
            line(&["--model", MODEL, "--tools", "read,grep", "-p", "hi"]),
            line(&["--model", MODEL, "-t", "read,find,ls", "-p", "hi"]),
            line(&["--model", MODEL, "--no-tools", "-p", "hi"]),
            line(&["--model", MODEL, "-nt", "-p", "hi"]),
            line(&["--model", MODEL, "--no-builtin-tools", "-p", "hi"]),
            line(&["--model", MODEL, "-nbt", "-p", "hi"]),
            line(&["--model", MODEL, "-p", r#"call read {"path": "notes.txt"}"#]),
            line(&[
                "--model",
                MODEL,
                "--tools",
                "read,grep,find,ls",
                "-p",
                r#"call grep {"pattern": "notes"}"#,
            ]),
            line(&[
                "--model",
                MODEL,
                "-p",
                r#"call bash {"command": "echo from bash"}"#,
            ]),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_context_skills_templates_and_extensions_as_pi() {
    let (world, proj) = world().await;
    // pi's `hello` example, which registers a tool, in the project.
    std::fs::create_dir_all(proj.join("ext")).unwrap();
    std::fs::copy(
        peers::pi_examples().join("hello.ts"),
        proj.join("ext/hello.ts"),
    )
    .unwrap();
    side_by_side(
        &world,
        &proj,
        &[
            line(&[
                "--model",
                MODEL,
                "--system-prompt",
                "You are terse.",
                "-p",
                "hi",
            ]),
            line(&[
                "--model",
                MODEL,
                "--system-prompt",
                "prompt.txt",
                "-p",
                "hi",
            ]),
            line(&[
                "--model",
                MODEL,
                "--append-system-prompt",
                "Extra rule.",
                "-p",
                "hi",
            ]),
            line(&[
                "--model",
                MODEL,
                "--append-system-prompt",
                "Rule one.",
                "--append-system-prompt",
                "prompt.txt",
                "-p",
                "hi",
            ]),
            line(&["--model", MODEL, "--no-context-files", "-p", "hi"]),
            line(&["--model", MODEL, "-nc", "-p", "hi"]),
            line(&["--model", MODEL, "--skill", "./extra/lint", "-p", "hi"]),
            line(&["--model", MODEL, "--no-skills", "-p", "hi"]),
            line(&["--model", MODEL, "-ns", "--skill", "extra/lint", "-p", "hi"]),
            line(&["--model", MODEL, "-p", "/skill:tidy notes.txt"]),
            line(&["--model", MODEL, "-p", "/greet Bob"]),
            line(&[
                "--model",
                MODEL,
                "--no-prompt-templates",
                "-p",
                "/greet Bob",
            ]),
            line(&["--model", MODEL, "-np", "-p", "/greet Bob"]),
            line(&[
                "--model",
                MODEL,
                "--prompt-template",
                "./templates/review.md",
                "-p",
                "/review notes.txt",
            ]),
            line(&["--model", MODEL, "--no-extensions", "-p", "hi"]),
            line(&["--model", MODEL, "-ne", "-p", "hi"]),
            line(&["--model", MODEL, "-e", "./ext/hello.ts", "-p", "hi"]),
            line(&[
                "--model",
                MODEL,
                "-e",
                "./ext/hello.ts",
                "-t",
                "hello",
                "-p",
                "hi",
            ]),
            line(&[
                "--model",
                MODEL,
                "-e",
                "./ext/hello.ts",
                "-t",
                "read",
                "-p",
                "hi",
            ]),
            line(&["--model", MODEL, "-e", "./ext/hello.ts", "-nbt", "-p", "hi"]),
            line(&["--model", MODEL, "-e", "./ext/hello.ts", "-nt", "-p", "hi"]),
            line(&[
                "--model",
                MODEL,
                "-e",
                "./ext/hello.ts",
                "-p",
                r#"call hello {"name": "pi"}"#,
            ]),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_export_listings_and_bad_input_as_pi() {
    let (world, proj) = world().await;
    side_by_side(
        &world,
        &proj,
        &[
            line(&["--model", MODEL, "-p", "remember the number 42"]),
            line(&["--model", MODEL, "-c", "-p", "which number?"]),
            line(&["--model", MODEL, "--continue", "-p", "and again?"]),
            line(&[
                "--model",
                MODEL,
                "--session",
                "{session}",
                "-p",
                "still there?",
            ]),
            line(&["--model", MODEL, "--fork", "{session}", "-p", "a fork"]),
            line(&["--model", MODEL, "--session", "{fresh}", "-p", "a new file"]),
            printed_line(&["--export", "{session}", "out.html"]),
            printed_line(&["--list-models"]),
            printed_line(&["--list-models", "scripted"]),
            printed_line(&["--list-models", "nomatch"]),
            Line {
                args: &["--version"],
                stdin: None,
                compare: Compare::LineCount,
            },
            Line {
                args: &["-v"],
                stdin: None,
                compare: Compare::LineCount,
            },
            line(&["--model", "no-such-model", "-p", "hi"]),
            line(&["--model", MODEL, "--thinking", "bogus", "-p", "hi"]),
            line(&["-x", "--model", MODEL, "-p", "hi"]),
            line(&["--model", MODEL, "--unknown-flag", "-p", "hi"]),
            // Nothing to send, and an option nobody knows: refused all the same.
            line(&["--unknown-flag"]),
            line(&["--model", MODEL, "-p", "@missing.txt", "hi"]),
        ],
    )
    .await;
}

/// `pictl` run as pi in `proj` with `args` (stdin empty): (exit code, stdout, stderr).
async fn as_pi(world: &World, proj: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("pi");
    std::os::unix::fs::symlink(pi_test_support::workspace_binary("pictl"), &program).unwrap();
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let outcome = run_side(world, &program, &world.daemon.env(), proj, &args, None).await;
    (outcome.code, outcome.stdout, outcome.stderr)
}

async fn session_count(world: &World) -> usize {
    let (client, _events) = world.daemon.client().await;
    client
        .call::<pi_protocol::v1::SessionList>(&pi_protocol::v1::SessionListParams::default())
        .await
        .unwrap()
        .sessions
        .len()
}

/// What the side-by-side table cannot show: the key `--api-key` gives goes to the model and
/// nowhere else; a run that fails before anything is stored leaves no session for `-c`;
/// `--fork` copies a whole daemon session; `--session` finds a pi file by its id prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_failed_first_runs_forks_and_pi_session_ids() {
    let (world, proj) = world().await;

    // `--api-key`: the request carries it (not models.json's key); the session's tools do
    // not see it.
    let (code, stdout, stderr) = as_pi(
        &world,
        &proj,
        &[
            "--model",
            MODEL,
            "--api-key",
            "sk-given-on-the-command-line",
            "-p",
            r#"call bash {"command": "env | grep -c sk-given || true"}"#,
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "Result: 0\n", "the tools' environment has no key");
    let requests = world.server.requests();
    for request in &requests {
        assert_eq!(
            request.headers["x-api-key"], "sk-given-on-the-command-line",
            "every request of the run carries the given key"
        );
    }
    let (code, _, stderr) = as_pi(&world, &proj, &["--api-key", "k", "-p", "hi"]).await;
    assert_eq!(code, Some(1));
    // Under pi's name, errors carry pi's name.
    assert!(stderr.starts_with("pi: error: "), "{stderr}");
    assert!(
        stderr.contains(
            "--api-key requires a model to be specified via --model, --provider/--model, or \
             --models"
        ),
        "{stderr}"
    );

    // A run that fails before its first message leaves no session behind, and `-c` starts a
    // new one rather than an empty one.
    let before = session_count(&world).await;
    world.server.respond_with(|_| Err("not reached".to_owned()));
    let (code, _, stderr) = as_pi(
        &world,
        &proj,
        &["--model", "anthropic/claude-sonnet-4-5", "-p", "hi"],
    )
    .await;
    assert_eq!(code, Some(1), "no key for anthropic: {stderr}");
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
    assert_eq!(
        session_count(&world).await,
        before,
        "no empty session is kept"
    );
    world.server.respond_with(echo);

    // `--fork ID`: a new session with everything the daemon session had.
    let (code, _, stderr) =
        as_pi(&world, &proj, &["--model", MODEL, "-p", "the secret is 7"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let (client, _events) = world.daemon.client().await;
    let newest = client
        .call::<pi_protocol::v1::SessionList>(&pi_protocol::v1::SessionListParams::default())
        .await
        .unwrap()
        .sessions
        .into_iter()
        .next()
        .unwrap();
    let prefix = &newest.id[..8];
    let (code, stdout, stderr) = as_pi(
        &world,
        &proj,
        &["--model", MODEL, "--fork", prefix, "-p", "and now?"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "You said: and now?\nTools: read,bash,edit,write\n");
    let last = world.server.requests().pop().unwrap();
    let texts: Vec<&str> = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .filter_map(|message| message["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["the secret is 7", "and now?"]);
    let original = client
        .call::<pi_protocol::v1::SessionGet>(&pi_protocol::v1::SessionIdParams {
            session_id: newest.id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(original.info.message_count, 2, "the original is unchanged");

    // `--session PREFIX` of a pi session file, found in pi's session directory.
    let agent = world.daemon.home.path().join(".pi/agent");
    let pi_dir = agent.join("sessions").join("--elsewhere--");
    std::fs::create_dir_all(&pi_dir).unwrap();
    std::fs::write(
        pi_dir.join("2026-01-01T00-00-00-000Z_feedface.jsonl"),
        format!(
            "{}\n{}\n",
            serde_json::json!({"type": "session", "version": 3, "id": "feedface-0000",
                "timestamp": "2026-01-01T00:00:00.000Z", "cwd": proj.display().to_string()}),
            serde_json::json!({"type": "message", "id": "a1", "parentId": null,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": "from pi"}],
                    "timestamp": 1}}),
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = as_pi(
        &world,
        &proj,
        &["--model", MODEL, "--session", "feedface", "-p", "more"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("You said: more"), "{stdout}");
    let appended =
        std::fs::read_to_string(pi_dir.join("2026-01-01T00-00-00-000Z_feedface.jsonl")).unwrap();
    assert!(appended.contains("\"text\":\"more\""), "{appended}");
    let (code, _, stderr) = as_pi(
        &world,
        &proj,
        &["--model", MODEL, "--session", "nothere", "-p", "x"],
    )
    .await;
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("No session found matching 'nothere'"),
        "{stderr}"
    );
}

/// pi's `shellPath` and `shellCommandPrefix` settings: the model's `bash`, as pi runs it (side
/// by side), and the user's `!` commands run through that shell, after that prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_and_command_prefix_of_the_settings_run_every_command() {
    let (world, proj) = world().await;
    let shell = proj.join("myshell");
    std::fs::write(&shell, "#!/bin/sh\nVIA_MYSHELL=yes exec /bin/bash \"$@\"\n").unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        proj.join(".pi/settings.json"),
        serde_json::json!({
            "shellPath": shell.display().to_string(),
            "shellCommandPrefix": "export GREETING=prefixed",
        })
        .to_string(),
    )
    .unwrap();
    side_by_side(
        &world,
        &proj,
        &[line(&[
            "--model",
            MODEL,
            "-p",
            r#"call bash {"command": "echo \"shell=$VIA_MYSHELL greeting=$GREETING\""}"#,
        ])],
    )
    .await;
    let last = world.server.requests().pop().unwrap();
    assert!(
        last.body
            .to_string()
            .contains("shell=yes greeting=prefixed"),
        "the tool ran in the configured shell after the prefix: {}",
        last.body
    );

    // A user's `!` command in a session of this project.
    let (client, _events) = world.daemon.client().await;
    let session = client
        .call::<pi_protocol::v1::SessionCreate>(&pi_protocol::v1::SessionCreateParams {
            cwd: proj.display().to_string(),
            ..Default::default()
        })
        .await
        .unwrap();
    let ran = client
        .call::<pi_protocol::v1::SessionBash>(&pi_protocol::v1::SessionBashParams {
            session_id: session.id,
            command: "echo \"shell=$VIA_MYSHELL greeting=$GREETING\"".to_owned(),
            exclude_from_context: false,
        })
        .await
        .unwrap();
    assert_eq!(ran.output.trim(), "shell=yes greeting=prefixed");
}

/// A one-pixel red PNG.
const PIXEL_PNG: [u8; 69] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0,
    0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1,
    1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// `args` run by pi, then by `pictl` under pi's name.
async fn pi_then_pid(
    world: &World,
    sides: &Sides,
    proj: &Path,
    args: &[String],
) -> (Outcome, Outcome) {
    let pi = run_side(
        world,
        &peers::npm_bin("pi"),
        &sides.pi_env,
        proj,
        args,
        None,
    )
    .await;
    let pid = run_side(world, &sides.as_pi, &sides.pid_env, proj, args, None).await;
    (pi, pid)
}

/// An `@file` image larger than 2000x2000 pixels is fitted as pi fits it: the same note in
/// its tag and the same size (pi's scaler and ours differ in the pixels); with
/// `images.autoResize: false` both send the file as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_file_images_are_fitted_as_pi_fits_them() {
    use base64::Engine as _;
    let (world, proj) = world().await;
    let picture = image::RgbImage::from_fn(3000, 1500, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x + y) % 239) as u8])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    picture.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let png = png.into_inner();
    std::fs::write(proj.join("wide.png"), &png).unwrap();
    let sides = sides(&world);
    let args: Vec<String> = ["--model", MODEL, "-p", "@wide.png", "What is it?"]
        .map(str::to_owned)
        .to_vec();
    // The user message's text and its image's size, as the model received them.
    let sent = |outcome: &Outcome| -> (String, (u32, u32)) {
        let content = &outcome.requests[0]["messages"][0]["content"];
        let text = content
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<String>();
        let image = content
            .as_array()
            .unwrap()
            .iter()
            .find(|block| block["type"] == "image")
            .unwrap_or_else(|| panic!("no image: {content}"));
        let data = base64::engine::general_purpose::STANDARD
            .decode(image["source"]["data"].as_str().unwrap())
            .unwrap();
        let decoded = image::load_from_memory(&data).unwrap();
        (text, (decoded.width(), decoded.height()))
    };
    let (pi, pid) = pi_then_pid(&world, &sides, &proj, &args).await;
    assert_eq!(
        (pi.code, pid.code),
        (Some(0), Some(0)),
        "{}\n{}",
        pi.stderr,
        pid.stderr
    );
    let (pi_text, pi_size) = sent(&pi);
    assert!(
        pi_text.contains("[Image: original 3000x1500, displayed at 2000x1000."),
        "{pi_text}"
    );
    assert_eq!(sent(&pid), (pi_text, pi_size));

    std::fs::write(
        proj.join(".pi/settings.json"),
        r#"{"images": {"autoResize": false}}"#,
    )
    .unwrap();
    let (pi, pid) = pi_then_pid(&world, &sides, &proj, &args).await;
    let pid_requests: Vec<Value> = pid.requests.iter().map(in_pi_words).collect();
    assert_eq!(pi.requests, pid_requests, "both send the file as it is");
    assert_eq!(sent(&pid).1, (3000, 1500));
}

/// pi's `thinkingBudgets` and `images.blockImages` settings change the request as in pi.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_budgets_and_blocked_images_of_the_settings_as_pi() {
    let (world, proj) = world().await;
    std::fs::write(proj.join("pixel.png"), PIXEL_PNG).unwrap();
    std::fs::write(
        proj.join(".pi/settings.json"),
        serde_json::json!({
            "thinkingBudgets": {"low": 3000, "high": 20000},
            "images": {"blockImages": true},
        })
        .to_string(),
    )
    .unwrap();
    side_by_side(
        &world,
        &proj,
        &[
            line(&["--model", MODEL, "--thinking", "low", "-p", "hi"]),
            line(&["--model", MODEL, "--thinking", "high", "-p", "hi"]),
            line(&["--model", MODEL, "--thinking", "medium", "-p", "hi"]),
            line(&[
                "--model",
                MODEL,
                "-p",
                "@pixel.png",
                "What is in the picture?",
            ]),
        ],
    )
    .await;
    let requests = world.server.requests();
    assert_eq!(
        requests[1].body["thinking"]["budget_tokens"], 3000,
        "pid's low"
    );
    assert_eq!(
        requests[3].body["thinking"]["budget_tokens"], 20000,
        "pid's high"
    );
    assert!(
        requests[7].body_text.contains("Image reading is disabled."),
        "{}",
        requests[7].body_text
    );
    assert!(!requests[7].body_text.contains("\"image\""));
}

/// The user texts of a request body, in order.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            blocks => blocks[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

/// pi's sessions both ways: a pi session file continued with `pictl` gets the daemon's
/// entries appended in pi's format, so pi continues it with every message; continued in pi
/// again, `pictl` opens it afresh with pi's new messages; `piSessionWriteBack: false` leaves
/// the file alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pi_session_file_continued_by_pid_is_continued_by_pi_with_every_message() {
    let (world, proj) = world().await;
    let home = world.daemon.home.path();
    let pi = |args: &'static [&'static str]| {
        let home = home.to_path_buf();
        let proj = proj.clone();
        let world = &world;
        async move {
            let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
            let envs = vec![
                ("HOME".to_owned(), home.display().to_string()),
                ("PI_OFFLINE".to_owned(), "1".to_owned()),
                (
                    "PI_CODING_AGENT_DIR".to_owned(),
                    home.join(".pi/agent").display().to_string(),
                ),
            ];
            run_side(world, &peers::npm_bin("pi"), &envs, &proj, &args, None).await
        }
    };
    let first = pi(&["--model", MODEL, "-p", "remember the number 42"]).await;
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let file = newest_pi_session(home, &proj);
    let path = file.display().to_string();

    // Continued with pictl: its entries land in pi's file.
    let lines_before = std::fs::read_to_string(&file).unwrap().lines().count();
    let (code, stdout, stderr) = as_pi(
        &world,
        &proj,
        &["--model", MODEL, "--session", &path, "-p", "which number?"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "You said: which number?\nTools: read,bash,edit,write\n"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.lines().count() >= lines_before + 2,
        "the question and the answer were appended:\n{text}"
    );
    for line in text.lines() {
        serde_json::from_str::<Value>(line).expect("every line is JSON");
    }

    // pi continues the file with every message: its request carries all of them.
    let before = world.server.calls();
    let again = pi(&["--model", MODEL, "-c", "-p", "and now?"]).await;
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    let requests = world.server.requests();
    assert_eq!(
        user_texts(&requests[before].body),
        ["remember the number 42", "which number?", "and now?"],
        "pi read the daemon's entries from its file"
    );
    assert_eq!(
        newest_pi_session(home, &proj),
        file,
        "pi continued the same file"
    );

    // `pictl -c` continues the newest session here, pi's file now: pi's new messages are
    // there.
    let before = world.server.calls();
    let (code, _, stderr) = as_pi(&world, &proj, &["--model", MODEL, "-c", "-p", "last one"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        user_texts(&world.server.requests()[before].body),
        [
            "remember the number 42",
            "which number?",
            "and now?",
            "last one"
        ]
    );
    // Opened again with nothing new in the file: the same daemon session.
    let (client, _events) = world.daemon.client().await;
    let open = |link| pi_protocol::v1::SessionImportParams {
        path: path.clone(),
        link,
    };
    let a = client
        .call::<pi_protocol::v1::SessionImport>(&open(true))
        .await
        .unwrap();
    let b = client
        .call::<pi_protocol::v1::SessionImport>(&open(true))
        .await
        .unwrap();
    assert_eq!(a.id, b.id);
    assert_eq!(a.pi_file.as_deref(), Some(path.as_str()));

    // With write-back off, the file stays as it is.
    std::fs::write(
        proj.join(".pi/settings.json"),
        r#"{"piSessionWriteBack": false}"#,
    )
    .unwrap();
    let unchanged = std::fs::read_to_string(&file).unwrap();
    let (code, _, stderr) = as_pi(
        &world,
        &proj,
        &["--model", MODEL, "--session", &path, "-p", "not written"],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), unchanged);
}

/// pi's `enabledModels` picks a new session's model (the default when it is in scope, else
/// the scope's first), and `--models` overrides it — as pi does, side by side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_model_scope_picks_the_model_as_pi() {
    let (world, proj) = world().await;
    // A second model on the same server, the daemon reloading its models.json.
    let mut models = world.server.models_json("anthropic-messages");
    let mut big = models["providers"]["scripted"]["models"][0].clone();
    big["id"] = serde_json::json!("scripted-big");
    big["name"] = serde_json::json!("Scripted big");
    models["providers"]["scripted"]["models"]
        .as_array_mut()
        .unwrap()
        .push(big);
    let home = world.daemon.home.path();
    std::fs::write(
        home.join(".pi/agent/models.json"),
        serde_json::to_string_pretty(&models).unwrap(),
    )
    .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !as_pi(&world, &proj, &["--list-models"])
        .await
        .1
        .contains("scripted-big")
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "models.json reloaded"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    std::fs::write(
        proj.join(".pi/settings.json"),
        r#"{"enabledModels": ["scripted/scripted-big"]}"#,
    )
    .unwrap();
    side_by_side(
        &world,
        &proj,
        &[
            line(&["-p", "which model?"]),
            line(&["--models", "scripted-model", "-p", "which model?"]),
        ],
    )
    .await;
    let requests = world.server.requests();
    let n = requests.len();
    assert_eq!(
        requests[n - 3].body["model"],
        "scripted-big",
        "pid: the scope's"
    );
    assert_eq!(
        requests[n - 1].body["model"],
        "scripted-model",
        "pid: --models"
    );

    // The default model, being in the scope, is the one.
    std::fs::write(
        proj.join(".pi/settings.json"),
        r#"{"enabledModels": ["scripted/*"], "defaultProvider": "scripted", "defaultModel": "scripted-big"}"#,
    )
    .unwrap();
    side_by_side(&world, &proj, &[line(&["-p", "which model?"])]).await;
    let last = world.server.requests().pop().unwrap();
    assert_eq!(last.body["model"], "scripted-big");
}

/// A Claude Pro/Max token (`--api-key sk-ant-oat…`, as `ANTHROPIC_OAUTH_TOKEN` or a login gives
/// it) is sent as pi sends it: the same body (Claude Code's identity first, its tool names)
/// and the same authentication, betas and identity headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_subscription_token_is_sent_as_pi_sends_it() {
    let (world, proj) = world().await;
    let args = line(&[
        "-p",
        "--model",
        MODEL,
        "--api-key",
        "sk-ant-oat01-the-subscription",
        "Read the notes",
    ]);
    side_by_side(&world, &proj, std::slice::from_ref(&args)).await;
    let requests = world.server.requests();
    let [.., pi, pid] = requests.as_slice() else {
        panic!("both sides sent a request: {}", requests.len())
    };
    for name in [
        "authorization",
        "x-api-key",
        "anthropic-beta",
        "user-agent",
        "x-app",
        "anthropic-version",
    ] {
        assert_eq!(pi.header(name), pid.header(name), "the {name} header");
    }
    assert_eq!(
        pid.header("authorization"),
        Some("Bearer sk-ant-oat01-the-subscription")
    );
    assert_eq!(
        pid.body["system"][0]["text"],
        "You are Claude Code, Anthropic's official CLI for Claude."
    );
    let tools: Vec<&str> = pid.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["Read", "Bash", "Edit", "Write"]);
}

/// A Mistral model goes out as pi's Mistral SDK sends it: the same body (`max_tokens`,
/// `prompt_mode` for a reasoning model, the messages' parts), to `{baseUrl}/v1/chat/completions`
/// — so a pi user's `baseUrl` override for Mistral keeps working —, with the session in
/// `x-affinity`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistral_model_is_called_as_pis_mistral_sdk_calls_it() {
    let (mut world, proj) = world().await;
    let mut models = world.server.models_json("anthropic-messages");
    models["providers"]["mistral"] = serde_json::json!({"baseUrl": world.server.url()});
    std::fs::write(
        world.daemon.home.path().join(".pi/agent/models.json"),
        models.to_string(),
    )
    .unwrap();
    world.daemon.kill9().await;
    world.daemon.restart().await;
    let args = line(&[
        "-p",
        "--model",
        "mistral/magistral-medium-latest",
        "--thinking",
        "high",
        "--api-key",
        "mistral-key",
        "Hello Mistral",
    ]);
    side_by_side(&world, &proj, std::slice::from_ref(&args)).await;
    let requests = world.server.requests();
    let [.., pi, pid] = requests.as_slice() else {
        panic!("both sides sent a request: {}", requests.len())
    };
    for sent in [pi, pid] {
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.header("authorization"), Some("Bearer mistral-key"));
        assert!(sent.header("x-affinity").is_some_and(|id| !id.is_empty()));
    }
    assert_eq!(pid.body["prompt_mode"], "reasoning");
}

/// Runs `args` with pi and with `pictl` as `pi`, both with `extra` in their environment, and
/// returns the last request each sent (with `same_bodies`, both bodies compared first, in
/// pi's words).
async fn pi_and_pid_with_env(
    world: &World,
    proj: &Path,
    args: &[&str],
    extra: &[(&str, String)],
    same_bodies: bool,
) -> (RecordedRequest, RecordedRequest) {
    let sides = sides(world);
    let with = |env: &[(String, String)]| {
        let mut env = env.to_vec();
        env.extend(
            extra
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone())),
        );
        env
    };
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let pi = run_side(
        world,
        &peers::npm_bin("pi"),
        &with(&sides.pi_env),
        proj,
        &args,
        None,
    )
    .await;
    let pi_request = world.server.requests().pop().expect("pi sent a request");
    let pid = run_side(
        world,
        &sides.as_pi,
        &with(&sides.pid_env),
        proj,
        &args,
        None,
    )
    .await;
    let pid_request = world.server.requests().pop().expect("pid sent a request");
    assert_eq!(pi.code, pid.code, "pi: {}\npid: {}", pi.stderr, pid.stderr);
    // Each side's own session id is its cache key.
    let keyless = |body: &Value| {
        let mut body = body.clone();
        if body.get("prompt_cache_key").is_some() {
            body["prompt_cache_key"] = Value::from("SESSION");
        }
        body
    };
    let pi_bodies: Vec<Value> = pi.requests.iter().map(keyless).collect();
    let pid_bodies: Vec<Value> = pid
        .requests
        .iter()
        .map(|body| keyless(&in_pi_words(body)))
        .collect();
    assert!(
        !same_bodies || pi_bodies == pid_bodies,
        "requests (- pi, + pid):\n{}",
        changed_lines(
            &serde_json::to_string_pretty(&pi_bodies).unwrap(),
            &serde_json::to_string_pretty(&pid_bodies).unwrap()
        )
    );
    (pi_request, pid_request)
}

/// A GitHub Copilot model and an Azure OpenAI deployment go out as pi sends them: the headers
/// each service wants (Copilot's editor identity and intent, Azure's `api-key` and
/// `api-version`) and, for Azure's Responses, the same body. (Chat completions bodies differ
/// in one known way: pi sends a text-only user message as a list of parts, the daemon as a
/// string, which every chat-completions server takes.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_and_azure_requests_are_sent_as_pi_sends_them() {
    let (mut world, proj) = world().await;
    let mut models = world.server.models_json("anthropic-messages");
    models["providers"]["github-copilot"] =
        serde_json::json!({"baseUrl": world.server.base_url("openai-completions")});
    std::fs::write(
        world.daemon.home.path().join(".pi/agent/models.json"),
        models.to_string(),
    )
    .unwrap();
    world.daemon.kill9().await;
    world.daemon.restart().await;

    let (pi, pid) = pi_and_pid_with_env(
        &world,
        &proj,
        &[
            "-p",
            "--model",
            "github-copilot/gpt-4.1",
            "--api-key",
            "tid=copilot-token",
            "Hello",
        ],
        &[],
        false,
    )
    .await;
    for name in [
        "authorization",
        "editor-version",
        "editor-plugin-version",
        "copilot-integration-id",
        "x-initiator",
        "openai-intent",
        "copilot-vision-request",
    ] {
        assert_eq!(pi.header(name), pid.header(name), "the {name} header");
    }
    assert_eq!(pid.header("x-initiator"), Some("user"));
    // The body's other fields as pi's: the token field, strict tools.
    assert_eq!(
        pi.body["max_completion_tokens"],
        pid.body["max_completion_tokens"]
    );
    assert_eq!(
        pi.body["tools"][0]["function"]["strict"],
        pid.body["tools"][0]["function"]["strict"]
    );

    let azure = [
        (
            "AZURE_OPENAI_BASE_URL",
            world.server.base_url("openai-responses"),
        ),
        (
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "gpt-4.1=team-gpt41".to_owned(),
        ),
    ];
    let (pi, pid) = pi_and_pid_with_env(
        &world,
        &proj,
        &[
            "-p",
            "--model",
            "azure-openai-responses/gpt-4.1",
            "--api-key",
            "azure-key",
            "Hello",
        ],
        &azure,
        true,
    )
    .await;
    for name in ["api-key", "authorization"] {
        assert_eq!(pi.header(name), pid.header(name), "the {name} header");
    }
    assert_eq!(
        pi.query_param("api-version"),
        pid.query_param("api-version")
    );
    assert_eq!(pid.body["model"], "team-gpt41");
}

//! `pictl sessions` and `pictl session show|rename|rm|fork|label|export|import`.
//!
//! Listing prints a table for humans or one `SessionInfo` per line with `--json`. Commands
//! that change a session print nothing unless they create something (fork, import print the
//! new session's id) or `--json` asks for the daemon's answer.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use pi_client::Client;
use pi_protocol::v1::message::{AgentMessage, AssistantContent, UserContent};
use pi_protocol::v1::{
    ExportFormat, ReadScope, SessionDelete, SessionEntry, SessionEntryParams, SessionExport,
    SessionExportParams, SessionFork, SessionGet, SessionIdParams, SessionImport,
    SessionImportParams, SessionInfo, SessionLabel, SessionLabelParams, SessionRead,
    SessionReadParams, SessionSetName, SessionSetNameParams,
};

use crate::daemon_client::{self, all_sessions, find_session};
use crate::error::CliError;
use crate::output::{Style, Table, human_time, one_line, print_json, print_line, print_text};

/// Options of `pictl sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Sessions of this working directory (default: the current one)
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub cwd: Option<PathBuf>,
    /// Sessions of every working directory
    #[arg(long)]
    pub all: bool,
    /// Print one JSON object per session
    #[arg(long)]
    pub json: bool,
    /// Show subagents under the session whose `task` call started them
    #[arg(long)]
    pub tree: bool,
    /// Where pi's session files are (default: $PI_CODING_AGENT_SESSION_DIR, else
    /// ~/.pi/agent/sessions)
    #[arg(long, value_name = "DIR")]
    pub session_dir: Option<PathBuf>,
}

/// `pictl session ...` subcommands.
#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Show a session's metadata and its current branch
    Show {
        /// Session id or unique prefix
        id: String,
        /// Print the metadata and the branch's entries as one JSON object
        #[arg(long)]
        json: bool,
    },
    /// Name a session
    Rename {
        /// Session id or unique prefix
        id: String,
        /// The new name
        name: String,
    },
    /// Delete sessions and everything they stored
    Rm {
        /// Session ids or unique prefixes
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Copy a session's history before a user message into a new session
    Fork {
        /// Session id or unique prefix
        id: String,
        /// The user message entry to fork at (default: the last user message of the branch)
        entry: Option<String>,
        /// Print the new session and the message text as JSON
        #[arg(long)]
        json: bool,
    },
    /// Label an entry, or clear its label
    Label {
        /// Session id or unique prefix
        id: String,
        /// The entry to label
        entry: String,
        /// The label; absent clears it
        label: Option<String>,
    },
    /// Export a session as pi's JSONL session file or as an HTML page
    Export {
        /// Session id or unique prefix
        id: String,
        /// pi's JSONL session format (the default)
        #[arg(long, conflicts_with = "html")]
        jsonl: bool,
        /// A self-contained HTML page of the current branch
        #[arg(long)]
        html: bool,
        /// Write to this file instead of stdout
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Import a pi session file (JSONL, versions 1 to 3) as a new session
    Import {
        /// The session file
        file: PathBuf,
        /// Print the new session as JSON
        #[arg(long)]
        json: bool,
    },
}

/// Runs `pictl sessions`.
pub async fn list(args: SessionsArgs) -> Result<ExitCode, CliError> {
    let cwd = if args.all {
        None
    } else {
        Some(
            daemon_client::working_directory(args.cwd.as_deref())?
                .display()
                .to_string(),
        )
    };
    let client = daemon_client::connect().await?.client;
    let sessions = all_sessions(&client, cwd.as_deref()).await?;
    // pi's own session files, unless a daemon session was opened from them.
    let opened: std::collections::HashSet<&str> = sessions
        .iter()
        .filter_map(|session| session.pi_file.as_deref())
        .collect();
    let here = daemon_client::working_directory(args.cwd.as_deref())?;
    let pi_files: Vec<pi_client::pi_files::PiFile> = pi_client::pi_files::list(
        &crate::pi_sessions::sessions_dir(&client, args.session_dir.as_deref(), &here).await?,
        cwd.as_deref().map(std::path::Path::new),
    )
    .into_iter()
    .filter(|file| !opened.contains(file.path.display().to_string().as_str()))
    .collect();
    if args.json {
        for session in &sessions {
            print_json(&serde_json::to_value(session).unwrap_or_default());
        }
        for file in &pi_files {
            print_json(&serde_json::json!({
                "piFile": file.path,
                "id": file.id,
                "cwd": file.cwd,
                "name": file.name,
                "firstMessage": file.first_message,
                "messageCount": file.message_count,
                "updatedAt": file.updated_at,
            }));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let ordered: Vec<(usize, &SessionInfo)> = if args.tree {
        tree_order(&sessions)
    } else {
        sessions.iter().map(|session| (0, session)).collect()
    };
    let mut table = Table::new(&[
        "ID", "TITLE", "CWD", "CREATED", "UPDATED", "MESSAGES", "MODEL",
    ]);
    for (depth, session) in ordered {
        let title = title(session.name.as_deref(), session.first_message.as_deref());
        table.row(vec![
            session.id.clone(),
            if depth == 0 {
                title
            } else {
                format!("{}└ {title}", "  ".repeat(depth - 1))
            },
            session.cwd.clone(),
            human_time(session.created_at),
            human_time(session.updated_at),
            session.message_count.to_string(),
            if session.pi_file.is_some() {
                format!("{} (pi file)", model_name(session))
            } else {
                model_name(session)
            },
        ]);
    }
    for file in &pi_files {
        table.row(vec![
            file.id.clone(),
            title(file.name.as_deref(), file.first_message.as_deref()),
            file.cwd.clone(),
            String::new(),
            human_time(file.updated_at),
            file.message_count.to_string(),
            "pi's file (--session ID opens it)".to_owned(),
        ]);
    }
    if !sessions.is_empty() || !pi_files.is_empty() {
        print_text(&table.render(Style::stdout()));
    }
    Ok(ExitCode::SUCCESS)
}

/// A session's title: its name, else its first message (one line, at most 50 characters).
fn title(name: Option<&str>, first_message: Option<&str>) -> String {
    let text = name.or(first_message).unwrap_or("");
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 50 {
        format!("{}…", line.chars().take(49).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// `sessions` (newest first) with each subagent right under its parent, and its depth.
fn tree_order(sessions: &[SessionInfo]) -> Vec<(usize, &SessionInfo)> {
    let known: std::collections::HashSet<&str> =
        sessions.iter().map(|session| session.id.as_str()).collect();
    // A subagent's listed parent.
    let parents: Vec<Option<&str>> = sessions
        .iter()
        .map(|session| {
            session
                .task_name
                .as_ref()
                .and(session.parent_session_id.as_deref())
                .filter(|parent| known.contains(parent))
        })
        .collect();
    fn visit<'a>(
        at: usize,
        depth: usize,
        sessions: &'a [SessionInfo],
        parents: &[Option<&str>],
        out: &mut Vec<(usize, &'a SessionInfo)>,
    ) {
        out.push((depth, &sessions[at]));
        for child in 0..sessions.len() {
            if parents[child] == Some(sessions[at].id.as_str()) {
                visit(child, depth + 1, sessions, parents, out);
            }
        }
    }
    let mut out = Vec::new();
    for root in 0..sessions.len() {
        if parents[root].is_none() {
            visit(root, 0, sessions, &parents, &mut out);
        }
    }
    out
}

/// Runs one `pictl session` subcommand.
pub async fn run(command: SessionCommand) -> Result<ExitCode, CliError> {
    let client = daemon_client::connect().await?.client;
    match command {
        SessionCommand::Show { id, json } => show(&client, &id, json).await?,
        SessionCommand::Rename { id, name } => {
            let session = find_session(&client, &id).await?;
            client
                .call::<SessionSetName>(&SessionSetNameParams {
                    session_id: session.id,
                    name,
                })
                .await?;
        }
        SessionCommand::Rm { ids } => {
            for id in ids {
                let session = find_session(&client, &id).await?;
                client
                    .call::<SessionDelete>(&SessionIdParams {
                        session_id: session.id,
                    })
                    .await?;
            }
        }
        SessionCommand::Fork { id, entry, json } => {
            let session = find_session(&client, &id).await?;
            let entry_id = match entry {
                Some(entry) => entry,
                None => last_user_entry(&client, &session.id).await?,
            };
            let forked = client
                .call::<SessionFork>(&SessionEntryParams {
                    session_id: session.id,
                    entry_id,
                })
                .await?;
            if json {
                print_json(&serde_json::to_value(&forked).unwrap_or_default());
            } else {
                print_line(&forked.session.id);
            }
        }
        SessionCommand::Label { id, entry, label } => {
            let session = find_session(&client, &id).await?;
            client
                .call::<SessionLabel>(&SessionLabelParams {
                    session_id: session.id,
                    entry_id: entry,
                    label,
                })
                .await?;
        }
        SessionCommand::Export {
            id,
            jsonl: _,
            html,
            output,
        } => {
            let session = find_session(&client, &id).await?;
            let path = output
                .map(|path| std::path::absolute(&path))
                .transpose()
                .map_err(|error| CliError::failed(format!("bad output path: {error}")))?;
            let exported = client
                .call::<SessionExport>(&SessionExportParams {
                    session_id: session.id,
                    format: if html {
                        ExportFormat::Html
                    } else {
                        ExportFormat::Jsonl
                    },
                    path: path.map(|path| path.display().to_string()),
                })
                .await?;
            if let Some(content) = exported.content {
                print_text(&content);
            }
        }
        SessionCommand::Import { file, json } => {
            let path = std::path::absolute(&file)
                .map_err(|error| CliError::failed(format!("bad path: {error}")))?;
            if !path.is_file() {
                return Err(CliError::failed(format!(
                    "File not found: {}",
                    path.display()
                )));
            }
            let imported = client
                .call::<SessionImport>(&SessionImportParams {
                    path: path.display().to_string(),
                    link: false,
                })
                .await?;
            if json {
                print_json(&serde_json::to_value(&imported).unwrap_or_default());
            } else {
                print_line(&imported.id);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn show(client: &Client, id: &str, json_output: bool) -> Result<(), CliError> {
    let session = find_session(client, id).await?;
    let details = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await?;
    let entries = branch(client, &session.id).await?;
    if json_output {
        let mut value = serde_json::to_value(&details).unwrap_or_default();
        value["entries"] = serde_json::to_value(&entries).unwrap_or_default();
        print_json(&value);
        return Ok(());
    }
    let style = Style::stdout();
    let info = &details.info;
    let mut table = Table::new(&["FIELD", "VALUE"]);
    let mut rows = vec![
        ("id", info.id.clone()),
        ("name", info.name.clone().unwrap_or_default()),
        ("cwd", info.cwd.clone()),
        ("created", human_time(info.created_at)),
        ("updated", human_time(info.updated_at)),
        ("model", model_name(info)),
        ("thinking", info.thinking_level.clone()),
        ("messages", info.message_count.to_string()),
        ("status", format!("{:?}", info.status).to_lowercase()),
        ("tools", details.tools.join(",")),
    ];
    if !details.mcp_tools.is_empty() {
        rows.push(("mcp tools", details.mcp_tools.join(",")));
    }
    rows.push(("clients", details.attached_clients.to_string()));
    for (field, value) in rows {
        table.row(vec![field.to_owned(), value]);
    }
    let mut text = table.render(style);
    text.push('\n');
    for entry in &entries {
        if let Some(line) = transcript_line(entry, style) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    print_text(&text);
    Ok(())
}

/// The current branch of a session, root first, every page.
pub async fn branch(client: &Client, session_id: &str) -> Result<Vec<SessionEntry>, CliError> {
    let mut entries = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionRead>(&SessionReadParams {
                session_id: session_id.to_owned(),
                scope: ReadScope::Branch,
                limit: Some(1000),
                cursor,
            })
            .await?;
        entries.extend(page.entries.into_iter().map(|record| record.entry));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(entries),
        }
    }
}

async fn last_user_entry(client: &Client, session_id: &str) -> Result<String, CliError> {
    branch(client, session_id)
        .await?
        .iter()
        .rev()
        .find_map(|entry| match entry {
            SessionEntry::Message {
                id,
                message: AgentMessage::User(_),
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .ok_or_else(|| CliError::failed("the session has no user message to fork at"))
}

/// One line of the human transcript: `[ENTRY] role: text`, tool calls as `-> name args`.
fn transcript_line(entry: &SessionEntry, style: Style) -> Option<String> {
    let (id, body) = match entry {
        SessionEntry::Message { id, message, .. } => (id, message_line(message, style)),
        SessionEntry::ModelChange {
            id,
            provider,
            model_id,
            ..
        } => (id, style.dim(&format!("model {provider}/{model_id}"))),
        SessionEntry::ThinkingLevelChange {
            id, thinking_level, ..
        } => (id, style.dim(&format!("thinking {thinking_level}"))),
        SessionEntry::Label {
            id,
            target_id,
            label,
            ..
        } => (
            id,
            style.dim(&format!(
                "label {target_id} {}",
                label.as_deref().unwrap_or("(cleared)")
            )),
        ),
        SessionEntry::SessionInfo { id, name, .. } => (
            id,
            style.dim(&format!("name {}", name.as_deref().unwrap_or_default())),
        ),
        SessionEntry::Compaction { id, summary, .. } => (
            id,
            style.dim(&format!("compaction: {}", one_line(summary, 100))),
        ),
        SessionEntry::BranchSummary { id, summary, .. } => (
            id,
            style.dim(&format!("branch summary: {}", one_line(summary, 100))),
        ),
        SessionEntry::CustomMessage {
            id, custom_type, ..
        } => (id, style.dim(&format!("custom message {custom_type}"))),
        SessionEntry::Custom { .. } => return None,
    };
    Some(format!("{} {body}", style.dim(&format!("[{id}]"))))
}

fn message_line(message: &AgentMessage, style: Style) -> String {
    match message {
        AgentMessage::User(user) => format!("user: {}", one_line(&user_text(&user.content), 200)),
        AgentMessage::Assistant(assistant) => {
            let mut parts = Vec::new();
            for block in &assistant.content {
                match block {
                    AssistantContent::Text(text) => parts.push(one_line(&text.text, 200)),
                    AssistantContent::Thinking(_) => {}
                    AssistantContent::ToolCall(call) => parts.push(style.cyan(&format!(
                        "-> {} {}",
                        call.name,
                        one_line(&call.arguments.to_string(), 100)
                    ))),
                }
            }
            if let Some(error) = &assistant.error_message {
                parts.push(style.red(&format!("error: {}", one_line(error, 200))));
            }
            format!("assistant: {}", parts.join(" "))
        }
        AgentMessage::ToolResult(result) => {
            let status = if result.is_error {
                style.red("error")
            } else {
                style.green("ok")
            };
            format!(
                "tool {} {status}: {}",
                result.tool_name,
                one_line(&user_text(&result.content), 100)
            )
        }
        AgentMessage::BashExecution(bash) => format!("bash: {}", one_line(&bash.command, 100)),
        AgentMessage::Custom(custom) => format!("custom {}", custom.custom_type),
        AgentMessage::BranchSummary(summary) => {
            format!("branch summary: {}", one_line(&summary.summary, 100))
        }
        AgentMessage::CompactionSummary(summary) => {
            format!("compaction summary: {}", one_line(&summary.summary, 100))
        }
    }
}

fn user_text(content: &[UserContent]) -> String {
    content
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => text.text.clone(),
            UserContent::Image(image) => format!("[{}]", image.mime_type),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `provider/id`, or empty.
pub fn model_name(session: &SessionInfo) -> String {
    session
        .model
        .as_ref()
        .map(|model| format!("{}/{}", model.provider, model.id))
        .unwrap_or_default()
}

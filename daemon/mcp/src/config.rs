//! MCP server definitions from where users keep them: `mcp.json` in our config dir and pi's
//! agent dir (trusted: the user wrote them), and a project's `.pi/mcp.json` and `.mcp.json`
//! (code the project asks to run: started only once approved). Shapes: Claude Code's, Cursor's
//! and omp's `{"mcpServers": {name: {...}}}`, VS Code's `{"servers": {...}}`; a server is
//! `{command, args?, env?, cwd?}` (stdio) or `{type: "http"|"sse"|"streamable-http", url,
//! headers?}`, with `timeout` (ms), `disabled`/`enabled`.
//!
//! `${VAR}` and `${VAR:-default}` expand from the session's environment in commands,
//! arguments, environment values, the working directory, URLs and headers.
//!
//! Architecture invariant: nothing in these files stops anything; a bad entry is a diagnostic
//! naming the file and key, and the rest loads. The first definition of a name wins, in the
//! order ours, pi's, `.pi/mcp.json`, `.mcp.json` (a project cannot shadow a user's server).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use pi_coding::Diagnostic;

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the session's environment.
        env: BTreeMap<String, String>,
        /// Working directory (default: the session's).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
}

/// One server as a session sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerDefinition {
    /// The name in the file (tools are `mcp__<name>__<tool>`).
    pub name: String,
    /// The file that defines it.
    pub file: PathBuf,
    /// Defined by a user-level file (a project's needs approval first).
    pub trusted: bool,
    /// How to reach it, expanded.
    pub transport: Transport,
    /// Per-request timeout.
    pub timeout_ms: Option<u64>,
    /// What the user approves for a project server: the entry as written in its file (before
    /// expansion, so every session's environment agrees), as 32 hex digits. Editing the
    /// entry asks again.
    pub definition_hash: String,
    /// What it runs as the file writes it (before `${VAR}` expansion, so no secret from the
    /// environment): the command and arguments, or the URL.
    pub written: String,
}

impl ServerDefinition {
    /// The identity connections are shared by: everything that makes two definitions the
    /// same server (transport with its resolved command, arguments, environment and working
    /// directory, or URL and headers), as 16 hex digits. Stable across daemon versions (the
    /// store caches tool lists under it).
    pub fn key(&self, session_cwd: &Path) -> String {
        let cwd = match &self.transport {
            Transport::Stdio { cwd: None, .. } => Some(session_cwd),
            _ => None,
        };
        let mut digest = stable_hash(&self.transport_json(), cwd);
        digest.truncate(16);
        digest
    }

    /// The transport as canonical JSON (maps are sorted).
    fn transport_json(&self) -> Value {
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => serde_json::json!({
                "command": command, "args": args, "env": env,
                "cwd": cwd.as_ref().map(|cwd| cwd.display().to_string()),
            }),
            Transport::Http { url, headers } => serde_json::json!({"url": url, "headers": headers}),
        }
    }

    /// What the transport is called in listings.
    pub fn transport_name(&self) -> &'static str {
        match self.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// The files a session's servers come from, highest precedence first.
pub fn files(config_dir: &Path, pi_agent_dir: &Path, cwd: &Path) -> Vec<(PathBuf, bool)> {
    vec![
        (config_dir.join("mcp.json"), true),
        (pi_agent_dir.join("mcp.json"), true),
        (cwd.join(".pi").join("mcp.json"), false),
        (cwd.join(".mcp.json"), false),
    ]
}

/// Loads every server of `files` (`(path, trusted)`) for a session in `cwd`, expanding
/// variables from `env`.
pub fn load(
    files: &[(PathBuf, bool)],
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> (Vec<ServerDefinition>, Vec<Diagnostic>) {
    let mut servers: Vec<ServerDefinition> = Vec::new();
    let mut diagnostics = Vec::new();
    for (path, trusted) in files {
        // A user's file another user could have written would run that user's commands as
        // ours; a project's file is asked about before its servers start anyway.
        if *trusted && let Err(untrusted) = pi_paths::check_trusted(path) {
            diagnostics.push(Diagnostic::warning(
                path,
                format!("is refused, and its servers are not used: {untrusted}"),
            ));
            continue;
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => {
                diagnostics.push(Diagnostic::warning(
                    path,
                    format!("cannot be read ({error}); its servers are not used"),
                ));
                continue;
            }
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(error) => {
                diagnostics.push(Diagnostic::warning(
                    path,
                    format!("is not valid JSON ({error}); its servers are not used"),
                ));
                continue;
            }
        };
        let (section, entries) = match (value.get("mcpServers"), value.get("servers")) {
            (Some(Value::Object(entries)), _) => ("mcpServers", entries),
            (None, Some(Value::Object(entries))) => ("servers", entries),
            _ => {
                diagnostics.push(Diagnostic::warning(
                    path,
                    "has no \"mcpServers\" (or VS Code's \"servers\") object; nothing to load",
                ));
                continue;
            }
        };
        for (name, entry) in entries {
            let key = format!("{section}.{name}");
            let mut problem = |message: String| {
                diagnostics.push(Diagnostic::key_warning(path, key.clone(), message));
            };
            if servers.iter().any(|server| &server.name == name) {
                problem(format!(
                    "server \"{name}\" is already defined by a file that takes precedence; \
                     this one is ignored"
                ));
                continue;
            }
            if !valid_name(name) {
                problem("a server name must be letters, digits, '-' or '_'; rename it".to_owned());
                continue;
            }
            let Value::Object(entry) = entry else {
                problem("must be an object".to_owned());
                continue;
            };
            if entry.get("disabled") == Some(&Value::Bool(true))
                || entry.get("enabled") == Some(&Value::Bool(false))
            {
                continue;
            }
            match server(entry, cwd, env, &mut problem) {
                Some((transport, timeout_ms)) => servers.push(ServerDefinition {
                    name: name.clone(),
                    file: path.clone(),
                    trusted: *trusted,
                    transport,
                    timeout_ms,
                    written: match (entry.get("url"), entry.get("command")) {
                        (Some(Value::String(url)), _) => url.clone(),
                        (_, Some(Value::String(command))) => std::iter::once(command.as_str())
                            .chain(
                                entry
                                    .get("args")
                                    .and_then(Value::as_array)
                                    .into_iter()
                                    .flatten()
                                    .filter_map(Value::as_str),
                            )
                            .collect::<Vec<_>>()
                            .join(" "),
                        _ => String::new(),
                    },
                    definition_hash: {
                        let mut hash = stable_hash(&Value::Object(entry.clone()), None);
                        hash.truncate(32);
                        hash
                    },
                }),
                None => continue,
            }
        }
    }
    (servers, diagnostics)
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// One entry as a transport and timeout, or `None` after reporting why not. A relative
/// `cwd` is the session's directory's (`cwd`) subdirectory, `~/…` one of its `HOME`.
fn server(
    entry: &Map<String, Value>,
    session_cwd: &Path,
    env: &BTreeMap<String, String>,
    problem: &mut dyn FnMut(String),
) -> Option<(Transport, Option<u64>)> {
    let text = |key: &str, problem: &mut dyn FnMut(String)| -> Option<String> {
        match entry.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(expand(text, env)),
            Some(_) => {
                problem(format!("\"{key}\" must be a string"));
                None
            }
        }
    };
    let strings = |key: &str, problem: &mut dyn FnMut(String)| -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        match entry.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, value) in map {
                    match value {
                        Value::String(text) => {
                            out.insert(name.clone(), expand(text, env));
                        }
                        _ => problem(format!("\"{key}.{name}\" must be a string")),
                    }
                }
            }
            Some(_) => problem(format!("\"{key}\" must be an object of strings")),
        }
        out
    };
    let timeout_ms = match entry.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::Number(number)) => match number.as_u64() {
            Some(0) | None => {
                problem("\"timeout\" must be a positive number of milliseconds".to_owned());
                None
            }
            Some(ms) if ms < 1000 => {
                problem(format!(
                    "\"timeout\" is in milliseconds: {ms} ms looks like seconds; write {} for \
                     {ms} seconds (using {ms} ms as written)",
                    ms * 1000
                ));
                Some(ms)
            }
            Some(ms) => Some(ms),
        },
        Some(_) => {
            problem("\"timeout\" must be a number of milliseconds".to_owned());
            None
        }
    };
    let kind = text("type", problem);
    let url = text("url", problem);
    let command = text("command", problem);
    match (kind.as_deref(), url, command) {
        (Some("sse"), Some(_), _) => {
            problem(
                "legacy SSE servers are not supported (the MCP SDK speaks Streamable HTTP); \
                 use the server's Streamable HTTP endpoint with \"type\": \"http\""
                    .to_owned(),
            );
            None
        }
        (Some("http" | "streamable-http" | "streamableHttp") | None, Some(url), None) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                problem(format!(
                    "\"url\" must start with http:// or https://, not {url:?}"
                ));
                return None;
            }
            let headers = strings("headers", problem);
            Some((Transport::Http { url, headers }, timeout_ms))
        }
        (Some("stdio") | None, None, Some(command)) => {
            if command.trim().is_empty() {
                problem("\"command\" is empty".to_owned());
                return None;
            }
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => {
                    let mut args = Vec::new();
                    for (index, item) in items.iter().enumerate() {
                        match item {
                            Value::String(arg) => args.push(expand(arg, env)),
                            _ => {
                                problem(format!("\"args[{index}]\" must be a string"));
                                return None;
                            }
                        }
                    }
                    args
                }
                Some(_) => {
                    problem("\"args\" must be a list of strings".to_owned());
                    return None;
                }
            };
            let env_vars = strings("env", problem);
            let cwd = text("cwd", problem).map(|dir| {
                let home = env.get("HOME").map(PathBuf::from);
                let joined = match (dir.strip_prefix("~/").or((dir == "~").then_some("")), home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ => session_cwd.join(&dir),
                };
                pi_paths::lexical::normalize_absolute(&joined).unwrap_or(joined)
            });
            Some((
                Transport::Stdio {
                    command,
                    args,
                    env: env_vars,
                    cwd,
                },
                timeout_ms,
            ))
        }
        (_, Some(_), Some(_)) => {
            problem("has both \"command\" and \"url\"; keep one".to_owned());
            None
        }
        (Some(other), _, _) => {
            problem(format!(
                "\"type\" {other:?} is not one of stdio, http, streamable-http, or it lacks \
                 its \"command\" or \"url\""
            ));
            None
        }
        (None, None, None) => {
            problem("needs a \"command\" (stdio) or a \"url\" (http)".to_owned());
            None
        }
    }
}

/// `${VAR}` and `${VAR:-default}` from `env` (an unset variable without default is empty).
pub fn expand(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (env.get(name).filter(|value| !value.is_empty()), default) {
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {}
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// SHA-256 of `value`'s JSON text and `extra`'s bytes, in hex.
fn stable_hash(value: &Value, extra: Option<&Path>) -> String {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(value.to_string().as_bytes());
    if let Some(extra) = extra {
        hasher.update([0]);
        hasher.update(extra.as_os_str().as_encoded_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_expand_with_defaults() {
        let env = BTreeMap::from([("TOKEN".to_owned(), "t0k".to_owned())]);
        assert_eq!(expand("Bearer ${TOKEN}", &env), "Bearer t0k");
        assert_eq!(expand("${MISSING:-fallback}/x", &env), "fallback/x");
        assert_eq!(expand("${MISSING}-${TOKEN:-d}", &env), "-t0k");
        assert_eq!(expand("open ${brace", &env), "open ${brace");
    }

    #[test]
    fn every_shape_loads_and_bad_entries_are_diagnostics_naming_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours.json");
        let project = dir.path().join("project.json");
        std::fs::write(
            &ours,
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-fs", "${HOME}"], "env": {"K": "${TOKEN:-none}"}, "timeout": 30},
                "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
                "old": {"type": "sse", "url": "https://example.com/sse"},
                "both": {"command": "x", "url": "https://example.com"},
                "bad name!": {"command": "x"},
                "off": {"command": "x", "disabled": true},
                "args": {"command": "x", "args": [1]}
            }}"#,
        )
        .unwrap();
        std::fs::write(
            &project,
            r#"{"servers": {"fs": {"command": "evil"}, "local": {"command": "./server", "cwd": "tools/.."}, "mine": {"command": "x", "cwd": "~/mcp"}}}"#,
        )
        .unwrap();
        let env = BTreeMap::from([("HOME".to_owned(), "/home/u".to_owned())]);
        let (servers, diagnostics) = load(
            &[(ours.clone(), true), (project.clone(), false)],
            Path::new("/work/project"),
            &env,
        );
        let names: Vec<(&str, bool)> = servers
            .iter()
            .map(|server| (server.name.as_str(), server.trusted))
            .collect();
        assert_eq!(
            names,
            [
                ("fs", true),
                ("web", true),
                ("local", false),
                ("mine", false)
            ]
        );
        // A relative `cwd` is in the session's directory, `~/` in its HOME.
        let cwd_of = |server: &ServerDefinition| match &server.transport {
            Transport::Stdio { cwd, .. } => cwd.clone(),
            Transport::Http { .. } => None,
        };
        assert_eq!(cwd_of(&servers[2]), Some(PathBuf::from("/work/project")));
        assert_eq!(cwd_of(&servers[3]), Some(PathBuf::from("/home/u/mcp")));
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "npx".to_owned(),
                args: vec![
                    "-y".to_owned(),
                    "server-fs".to_owned(),
                    "/home/u".to_owned()
                ],
                env: BTreeMap::from([("K".to_owned(), "none".to_owned())]),
                cwd: None,
            }
        );
        assert_eq!(servers[0].timeout_ms, Some(30));
        let text: Vec<String> = diagnostics
            .iter()
            .map(|d| {
                d.to_string()
                    .replace(&dir.path().display().to_string(), "<dir>")
            })
            .collect();
        assert_eq!(
            text,
            [
                "warning: <dir>/ours.json: `mcpServers.fs`: \"timeout\" is in milliseconds: 30 ms \
                 looks like seconds; write 30000 for 30 seconds (using 30 ms as written)",
                "warning: <dir>/ours.json: `mcpServers.old`: legacy SSE servers are not supported \
                 (the MCP SDK speaks Streamable HTTP); use the server's Streamable HTTP endpoint \
                 with \"type\": \"http\"",
                "warning: <dir>/ours.json: `mcpServers.both`: has both \"command\" and \"url\"; \
                 keep one",
                "warning: <dir>/ours.json: `mcpServers.bad name!`: a server name must be letters, \
                 digits, '-' or '_'; rename it",
                "warning: <dir>/ours.json: `mcpServers.args`: \"args[0]\" must be a string",
                "warning: <dir>/project.json: `servers.fs`: server \"fs\" is already defined by a \
                 file that takes precedence; this one is ignored",
            ]
        );
        // The sharing key follows the resolved definition.
        let cwd = Path::new("/work");
        assert_eq!(servers[0].key(cwd), servers[0].clone().key(cwd));
        assert_ne!(servers[0].key(cwd), servers[0].key(Path::new("/elsewhere")));
        assert_eq!(servers[1].key(cwd), servers[1].key(Path::new("/elsewhere")));
    }
}

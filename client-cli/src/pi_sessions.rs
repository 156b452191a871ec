//! pi's `--session PATH|ID` and `--fork PATH|ID`: a daemon session by id or prefix, or one of
//! pi's session files (a path, or the id prefix of a file under pi's session directory):
//! `--session` opens the file (the daemon session is the file's, its new entries appended to
//! it in pi's format, so pi finds them), `--fork` copies it.
//!
//! pi's session directory is `--session-dir`, else `$PI_CODING_AGENT_SESSION_DIR`, else
//! `sessions/` under pi's agent directory (one subdirectory per working directory).

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use pi_client::Client;
use pi_protocol::ErrorKind;
use pi_protocol::v1::{
    ExportFormat, SessionDelete, SessionExport, SessionExportParams, SessionGet, SessionIdParams,
    SessionImport, SessionImportParams, SessionInfo,
};

use crate::daemon_client;
use crate::error::CliError;

/// The session `--session` names: a daemon session, or a pi session file imported.
pub async fn resolve(
    client: &Client,
    target: &str,
    cwd: &Path,
    session_dir: Option<&Path>,
) -> Result<SessionInfo, CliError> {
    match find(client, target, cwd, session_dir).await? {
        Found::Daemon(session) => Ok(*session),
        Found::File(path) => import(client, &path, true).await,
    }
}

/// A new session holding everything the session `--fork` names holds.
pub async fn fork(
    client: &Client,
    source: &str,
    cwd: &Path,
    session_dir: Option<&Path>,
) -> Result<SessionInfo, CliError> {
    match find(client, source, cwd, session_dir).await? {
        Found::File(path) => import(client, &path, false).await,
        Found::Daemon(session) => {
            // The whole session, as pi's file: exported, then imported as a new one.
            let exported = client
                .call::<SessionExport>(&SessionExportParams {
                    session_id: session.id.clone(),
                    format: ExportFormat::Jsonl,
                    path: None,
                })
                .await?;
            let copy = tempfile::Builder::new()
                .prefix("pictl-fork-")
                .suffix(".jsonl")
                .tempfile()
                .map_err(|error| CliError::failed(format!("cannot write the copy: {error}")))?;
            std::fs::write(copy.path(), exported.content.unwrap_or_default())
                .map_err(|error| CliError::failed(format!("cannot write the copy: {error}")))?;
            import(client, copy.path(), false).await
        }
    }
}

/// Exports `source` (a pi session file, or a daemon session id or prefix) as HTML to `out`
/// (pi's `--export FILE [OUT]`), and says where.
pub async fn export_html(
    client: &Client,
    source: &str,
    out: Option<&str>,
) -> Result<PathBuf, CliError> {
    let path = Path::new(source);
    let (session, temporary) = if path.is_file() {
        (import(client, path, false).await?, true)
    } else {
        match daemon_client::find_session(client, source).await {
            Ok(session) => (session, false),
            Err(_) => return Err(CliError::failed(format!("File not found: {source}"))),
        }
    };
    let out = match out {
        Some(out) => PathBuf::from(out),
        None => {
            let stem = path.file_stem().map_or_else(
                || session.id.clone(),
                |stem| stem.to_string_lossy().into_owned(),
            );
            PathBuf::from(format!("pi-session-{stem}.html"))
        }
    };
    let absolute = std::env::current_dir()?.join(&out);
    let written = client
        .call::<SessionExport>(&SessionExportParams {
            session_id: session.id.clone(),
            format: ExportFormat::Html,
            path: Some(absolute.display().to_string()),
        })
        .await;
    if temporary {
        let _ = client
            .call::<SessionDelete>(&SessionIdParams {
                session_id: session.id.clone(),
            })
            .await;
    }
    written?;
    Ok(out)
}

enum Found {
    Daemon(Box<SessionInfo>),
    File(PathBuf),
}

/// pi's rule: an argument with a slash or ending in `.jsonl` is a path; anything else an id
/// prefix, looked up among the daemon's sessions, then pi's files of this directory, then
/// all of pi's files.
async fn find(
    client: &Client,
    target: &str,
    cwd: &Path,
    session_dir: Option<&Path>,
) -> Result<Found, CliError> {
    if target.contains('/') || target.ends_with(".jsonl") {
        let path = std::env::current_dir()?.join(target);
        if !path.is_file() {
            return Err(CliError::failed(format!(
                "no session file at {}",
                path.display()
            )));
        }
        return Ok(Found::File(path));
    }
    match client
        .call::<SessionGet>(&SessionIdParams {
            session_id: target.to_owned(),
        })
        .await
    {
        Ok(found) => return Ok(Found::Daemon(Box::new(found.info))),
        Err(error) if error.rpc_kind() == Some(ErrorKind::NotFound) => {}
        Err(error) => return Err(error.into()),
    }
    let ours = daemon_client::all_sessions(client, None)
        .await?
        .into_iter()
        .find(|session| session.id.starts_with(target));
    if let Some(session) = ours {
        return Ok(Found::Daemon(Box::new(session)));
    }
    let dir = sessions_dir(session_dir)?;
    let local = dir.join(encoded_cwd(cwd));
    let found = session_files(&local)
        .into_iter()
        .chain(
            session_files(&dir).into_iter().chain(
                subdirectories(&dir)
                    .iter()
                    .flat_map(|sub| session_files(sub)),
            ),
        )
        .find(|file| header_id(file).is_some_and(|id| id.starts_with(target)));
    found
        .map(Found::File)
        .ok_or_else(|| CliError::failed(format!("No session found matching '{target}'")))
}

/// One of pi's session files, as `pictl sessions` lists it.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PiFile {
    /// The file.
    pub path: PathBuf,
    /// Its session id (the header's).
    pub id: String,
    /// Its working directory (the header's).
    pub cwd: String,
    /// Its name (the last `session_info` entry's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The first user message's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_message: Option<String>,
    /// Message entries.
    pub message_count: u64,
    /// Last modification, Unix ms.
    pub updated_at: i64,
}

/// pi's session files of `cwd` (every working directory's with `None`) under `dir`, newest
/// first.
pub fn list_files(dir: &Path, cwd: Option<&Path>) -> Vec<PiFile> {
    let files: Vec<PathBuf> = match cwd {
        Some(cwd) => session_files(&dir.join(encoded_cwd(cwd))),
        None => subdirectories(dir)
            .iter()
            .flat_map(|sub| session_files(sub))
            .collect(),
    };
    let mut listed: Vec<PiFile> = files.iter().filter_map(|file| read_file(file)).collect();
    listed.sort_by_key(|file| std::cmp::Reverse(file.updated_at));
    listed
}

fn read_file(path: &Path) -> Option<PiFile> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next()?).ok()?;
    if header["type"] != "session" {
        return None;
    }
    let mut listed = PiFile {
        path: path.to_path_buf(),
        id: header["id"].as_str()?.to_owned(),
        cwd: header["cwd"].as_str().unwrap_or_default().to_owned(),
        name: None,
        first_message: None,
        message_count: 0,
        updated_at: std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| {
                i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
            }),
    };
    for line in lines {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match entry["type"].as_str() {
            Some("message") => {
                listed.message_count += 1;
                let message = &entry["message"];
                if listed.first_message.is_none() && message["role"] == "user" {
                    listed.first_message = match &message["content"] {
                        serde_json::Value::String(text) => Some(text.clone()),
                        blocks => blocks
                            .as_array()
                            .into_iter()
                            .flatten()
                            .find_map(|block| block["text"].as_str().map(str::to_owned)),
                    };
                }
            }
            Some("session_info") => {
                listed.name = entry["name"].as_str().map(str::to_owned);
            }
            _ => {}
        }
    }
    Some(listed)
}

/// The newest of this directory's sessions with messages — the daemon's, or pi's files
/// (opened) — for `-c`; `None` when there is none.
pub async fn newest(
    client: &Client,
    cwd: &Path,
    session_dir: Option<&Path>,
) -> Result<Option<SessionInfo>, CliError> {
    let ours = daemon_client::all_sessions(client, Some(&cwd.display().to_string()))
        .await?
        .into_iter()
        .find(|session| session.message_count > 0);
    let theirs = list_files(&sessions_dir(session_dir)?, Some(cwd))
        .into_iter()
        .find(|file| file.message_count > 0);
    match (ours, theirs) {
        (Some(ours), Some(file)) if file.updated_at > ours.updated_at => {
            Ok(Some(import(client, &file.path, true).await?))
        }
        (None, Some(file)) => Ok(Some(import(client, &file.path, true).await?)),
        (ours, _) => Ok(ours),
    }
}

/// `path` imported: opened (`link`: the daemon session is the file's, its new entries
/// appended to it) or copied.
async fn import(client: &Client, path: &Path, link: bool) -> Result<SessionInfo, CliError> {
    let absolute = std::env::current_dir()?.join(path);
    Ok(client
        .call::<SessionImport>(&SessionImportParams {
            path: absolute.display().to_string(),
            link,
        })
        .await?)
}

/// pi's session directory.
pub fn sessions_dir(flag: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(dir) = flag {
        return Ok(expand_home(dir));
    }
    if let Some(dir) = std::env::var_os("PI_CODING_AGENT_SESSION_DIR").filter(|dir| !dir.is_empty())
    {
        return Ok(expand_home(Path::new(&dir)));
    }
    Ok(daemon_client::paths()?.pi_agent_dir.join("sessions"))
}

fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), std::env::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// pi's directory name for a working directory: `--` + the path without its leading slash,
/// slashes and colons as dashes, + `--`.
pub fn encoded_cwd(cwd: &Path) -> String {
    let text = cwd.display().to_string();
    let trimmed = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl") && path.is_file())
        .collect();
    // Newest first (pi's file names begin with their timestamp).
    files.sort();
    files.reverse();
    files
}

fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The id in a pi session file's header line.
fn header_id(file: &Path) -> Option<String> {
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(file).ok()?)
        .read_line(&mut line)
        .ok()?;
    let header: serde_json::Value = serde_json::from_str(&line).ok()?;
    (header["type"] == "session")
        .then(|| header["id"].as_str().map(str::to_owned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_directory_is_encoded_as_pi_names_its_session_directory() {
        assert_eq!(
            encoded_cwd(Path::new("/home/alice/work/app")),
            "--home-alice-work-app--"
        );
    }

    #[test]
    fn a_session_file_is_found_by_its_header_id() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("2026-01-01T00-00-00-000Z_abc.jsonl");
        std::fs::write(
            &file,
            "{\"type\":\"session\",\"version\":3,\"id\":\"abc123\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
        )
        .unwrap();
        assert_eq!(header_id(&file).as_deref(), Some("abc123"));
        assert_eq!(session_files(dir.path()), vec![file]);
    }
}

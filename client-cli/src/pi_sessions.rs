//! pi's `--session PATH|ID` and `--fork PATH|ID`: a daemon session by id or prefix, or one of
//! pi's session files (a path, or the id prefix of a file under pi's session directory):
//! `--session` opens the file (the daemon session is the file's, its new entries appended to
//! it in pi's format, so pi finds them), `--fork` copies it.
//!
//! pi's session directory is `--session-dir`, else `$PI_CODING_AGENT_SESSION_DIR`, else
//! `sessions/` under pi's agent directory (one subdirectory per working directory).

use std::path::{Path, PathBuf};

use pi_client::Client;
use pi_client::pi_files;
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
        if !path.exists() {
            // pi starts a new session in a file that does not exist yet.
            start_file(&path, cwd)?;
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
    pi_files::find_by_id(&sessions_dir(client, session_dir, cwd).await?, cwd, target)
        .map(Found::File)
        .ok_or_else(|| CliError::failed(format!("No session found matching '{target}'")))
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
    let theirs = pi_files::list(&sessions_dir(client, session_dir, cwd).await?, Some(cwd))
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

/// A new pi session file at `path` for working directory `cwd`: its header line.
fn start_file(path: &Path, cwd: &Path) -> Result<(), CliError> {
    let header = serde_json::json!({
        "type": "session",
        "version": 3,
        "id": pi_util::ids::new_uuid(),
        "timestamp": pi_util::time::iso_from_millis(pi_util::time::now_millis()),
        "cwd": cwd.display().to_string(),
    });
    let made = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, format!("{header}\n")));
    made.map_err(|error| {
        CliError::failed(format!(
            "cannot start the session file {}: {error}",
            path.display()
        ))
    })
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

/// pi's session directory: `--session-dir`, `$PI_CODING_AGENT_SESSION_DIR`, the settings'
/// `sessionDir`, or pi's agent directory's `sessions/`.
pub async fn sessions_dir(
    client: &Client,
    flag: Option<&Path>,
    cwd: &Path,
) -> Result<PathBuf, CliError> {
    let from_env =
        std::env::var_os("PI_CODING_AGENT_SESSION_DIR").is_some_and(|dir| !dir.is_empty());
    let setting = match (flag, from_env) {
        (None, false) => daemon_client::settings_of(client, cwd)
            .await
            .and_then(|settings| settings.session_dir)
            .map(PathBuf::from),
        _ => None,
    };
    Ok(pi_files::sessions_dir(
        flag.or(setting.as_deref()),
        &daemon_client::paths()?.pi_agent_dir,
    ))
}

//! Reaching the daemon and finding sessions: the glue every session command shares.
//!
//! [`connect`] starts the daemon when none runs (autostart); [`find_session`] accepts a full
//! session id or a unique prefix of one, as pi's `--session` does.

use pi_client::autostart::{self, Connected, StartOptions};
use pi_client::{Client, Paths};
use pi_protocol::ErrorKind;
use pi_protocol::v1::{
    ClientInfo, SessionGet, SessionIdParams, SessionInfo, SessionList, SessionListParams,
};

use crate::error::CliError;

/// How `pictl` introduces itself in `initialize`.
pub fn client_info() -> ClientInfo {
    pi_client::client_info("pictl", env!("CARGO_PKG_VERSION"))
}

/// The daemon's directories (from `PI_HOME` or XDG).
pub fn paths() -> Result<Paths, CliError> {
    Paths::from_env().map_err(|error| CliError::failed(error.to_string()))
}

/// Connects to the daemon, starting it when none answers.
pub async fn connect() -> Result<Connected, CliError> {
    connect_with(StartOptions::default()).await
}

/// Connects for a command that cannot answer questions (`pictl run`): the daemon does not
/// send it `ui/request`, and extensions see `ctx.hasUI` false while only it is attached, as
/// in pi's print mode.
pub async fn connect_without_questions() -> Result<Connected, CliError> {
    connect_with(StartOptions {
        capabilities: pi_protocol::v1::ClientCapabilities {
            opt_out_notifications: vec!["ui/request".to_owned(), "ui/resolved".to_owned()],
        },
        ..StartOptions::default()
    })
    .await
}

async fn connect_with(options: StartOptions) -> Result<Connected, CliError> {
    let paths = paths()?;
    autostart::connect_or_start(&paths, client_info(), &options)
        .await
        .map_err(|error| {
            // Another user's directory or socket: its message says what to do instead.
            let unreachable = error.is_unreachable()
                && !error.is_foreign()
                && !matches!(error, pi_client::ClientError::RemoteUnreachable { .. });
            let cli = CliError::from(error);
            if unreachable {
                cli.with_hint(
                    "start the daemon with `pictl daemon start` (or its service: \
                     `systemctl --user start pid`); `pictl daemon status` shows whether one runs",
                )
            } else {
                cli
            }
        })
}

/// Every stored session, newest activity first, optionally of one working directory.
pub async fn all_sessions(
    client: &Client,
    cwd: Option<&str>,
) -> Result<Vec<SessionInfo>, CliError> {
    let mut sessions = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionList>(&SessionListParams {
                cwd: cwd.map(str::to_owned),
                limit: Some(500),
                cursor,
                parent_id: None,
            })
            .await?;
        sessions.extend(page.sessions);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(sessions),
        }
    }
}

/// The session named by `id`: a full id, or a prefix matching exactly one stored session.
pub async fn find_session(client: &Client, id: &str) -> Result<SessionInfo, CliError> {
    match client
        .call::<SessionGet>(&SessionIdParams {
            session_id: id.to_owned(),
        })
        .await
    {
        Ok(found) => return Ok(found.info),
        Err(error) if error.rpc_kind() == Some(ErrorKind::NotFound) => {}
        Err(error) => return Err(error.into()),
    }
    let matches: Vec<SessionInfo> = all_sessions(client, None)
        .await?
        .into_iter()
        .filter(|session| session.id.starts_with(id))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(CliError::failed(format!("no session matches {id:?}"))
            .with_hint("`pictl sessions --all` lists the stored sessions")),
        several => Err(CliError::failed(format!(
            "{id:?} matches {} sessions: {}",
            several.len(),
            several
                .iter()
                .map(|session| session.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .with_hint("give more characters of the id")),
    }
}

/// The absolute working directory: `--cwd` (made absolute) or the current directory. With a
/// remote (`--remote`, `PI_REMOTE`) a directory on the far host, unchecked here: `--cwd`, else
/// `PI_REMOTE_CWD`, else the same path as the current directory here.
pub fn working_directory(cwd: Option<&std::path::Path>) -> Result<std::path::PathBuf, CliError> {
    let current = std::env::current_dir()
        .map_err(|error| CliError::failed(format!("cannot read the current directory: {error}")))?;
    if pi_client::remote::Remote::current()
        .ok()
        .flatten()
        .is_some()
    {
        let base = match std::env::var_os("PI_REMOTE_CWD").filter(|cwd| !cwd.is_empty()) {
            Some(cwd) if std::path::Path::new(&cwd).is_absolute() => std::path::PathBuf::from(cwd),
            Some(cwd) => {
                return Err(CliError::usage(format!(
                    "PI_REMOTE_CWD must be an absolute path on the far host, not {:?}",
                    cwd.to_string_lossy()
                )));
            }
            None => current,
        };
        return Ok(match cwd {
            Some(path) => base.join(path),
            None => base,
        });
    }
    let path = match cwd {
        Some(path) if path.is_absolute() => path.to_path_buf(),
        Some(path) => current.join(path),
        None => current,
    };
    if !path.is_dir() {
        return Err(CliError::usage(format!(
            "--cwd {} is not a directory",
            path.display()
        )));
    }
    Ok(path)
}

/// Says on stderr what is wrong in the configuration files the daemon reads (`models.json`,
/// `auth.json`, the global `settings.json`) and in `cwd`'s `.pi/settings.json`: each problem
/// with its file and key (a parse error names its line), as pi warns when it starts.
/// Settings the daemon does not apply are not problems; they are not repeated here.
pub async fn warn_config_problems(client: &pi_client::Client, cwd: &std::path::Path) {
    let mut problems = Vec::new();
    if let Ok(status) = client
        .call::<pi_protocol::v1::DaemonStatus>(&pi_protocol::v1::DaemonStatusParams {})
        .await
    {
        problems.extend(status.config.diagnostics);
    }
    if let Ok(settings) = client
        .call::<pi_protocol::v1::SettingsGet>(&pi_protocol::v1::SettingsGetParams {
            cwd: Some(cwd.display().to_string()),
        })
        .await
    {
        problems.extend(settings.diagnostics);
    }
    let mut said = std::collections::HashSet::new();
    for problem in &problems {
        if problem.kind != pi_protocol::v1::ResourceDiagnosticKind::Warning
            || !said.insert((
                problem.path.clone(),
                problem.key.clone(),
                problem.message.clone(),
            ))
        {
            continue;
        }
        let key = problem
            .key
            .as_deref()
            .map(|key| format!(" `{key}`:"))
            .unwrap_or_default();
        crate::output::eprint_line(&format!(
            "Warning: {}:{key} {}",
            problem.path, problem.message
        ));
    }
}

/// The effective settings of `cwd` (`None` when the daemon cannot say).
pub async fn settings_of(
    client: &Client,
    cwd: &std::path::Path,
) -> Option<pi_protocol::v1::EffectiveSettings> {
    client
        .call::<pi_protocol::v1::SettingsGet>(&pi_protocol::v1::SettingsGetParams {
            cwd: Some(cwd.display().to_string()),
        })
        .await
        .ok()
        .map(|response| response.settings)
}

/// The models with a key, counting the keys of this process's environment.
pub async fn models_with_keys(
    client: &Client,
) -> Result<Vec<pi_protocol::v1::ModelInfo>, CliError> {
    Ok(client
        .call::<pi_protocol::v1::ModelList>(&pi_protocol::v1::ModelListParams {
            available_only: true,
            session_id: None,
            env_names: pi_client::env_names(),
        })
        .await?
        .models)
}

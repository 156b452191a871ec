//! Session rows: create, read, list (newest activity first, cursor-paged), update, delete, and
//! crash recovery of runs that were active when the daemon died.

use std::collections::BTreeMap;

use sqlx::Row as _;

use crate::writer::{Statements, Value};
use crate::{Store, StoreError};

/// Variables by name, shared: a row is cloned for every change it records, its variables are
/// not.
pub type Env = std::sync::Arc<BTreeMap<String, String>>;

/// A session's stored metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRow {
    /// UUID.
    pub id: String,
    /// Absolute working directory.
    pub cwd: String,
    /// The client's environment for tools; `None` = the daemon's.
    pub env: Option<Env>,
    /// Display name.
    pub name: Option<String>,
    /// Fork source.
    pub parent_session_id: Option<String>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
    /// The leaf entry.
    pub leaf_id: Option<String>,
    /// Current model (provider, id).
    pub model: Option<(String, String)>,
    /// Current thinking level name.
    pub thinking_level: String,
    /// Active tool names.
    pub tools: Vec<String>,
    /// Message entries.
    pub message_count: u64,
    /// First user text.
    pub first_message: Option<String>,
    /// Highest delivered event seq.
    pub last_seq: u64,
    /// A run is active.
    pub running: bool,
    /// Replaces the default system prompt body (set at creation).
    pub system_prompt: Option<String>,
    /// Appended to the system prompt body (set at creation).
    pub append_system_prompt: Option<String>,
    /// A subagent's task name (set at creation; `parent_session_id` is its parent).
    pub task_name: Option<String>,
    /// Names of the client's variables that looked like secrets (`session::secrets`): not
    /// stored, only their names. Shared: a row is copied for every message it stores.
    pub secret_env_names: std::sync::Arc<[String]>,
    /// Their values, in memory only (never written; empty after a load until a client
    /// supplies them).
    pub secret_env: Env,
    /// The system prompt leaves out skills (set at creation).
    pub no_skills: bool,
    /// The system prompt leaves out context files (set at creation).
    pub no_context_files: bool,
    /// pi extensions it loads besides the configured ones (set at creation).
    pub extensions: std::sync::Arc<[String]>,
    /// It loads none of the configured extensions (set at creation).
    pub no_extensions: bool,
    /// The values it gives the flags extensions register, name → string or `true` (set at
    /// creation).
    pub extension_flags: std::sync::Arc<std::collections::BTreeMap<String, serde_json::Value>>,
    /// The rest of what it was started with on pi's command line (set at creation).
    pub start_options: std::sync::Arc<StartOptions>,
}

/// What a session was started with on pi's command line beyond the row's own columns.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartOptions {
    /// Skill files or directories it loads besides the discovered ones (`--skill`), absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// Prompt template files or directories (`--prompt-template`), absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_templates: Vec<String>,
    /// It loads no discovered or configured prompt templates (`--no-prompt-templates`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_prompt_templates: bool,
    /// The only extension tools it may use (`--tools` names them with the built-in ones,
    /// `--no-tools` allows none); absent: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_tools: Option<Vec<String>>,
    /// The pi session file it was opened from, which its new entries are appended to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi_file: Option<String>,
}

/// A page position in the session list: `(updated_at, id)` of the last row seen.
pub type ListCursor = (i64, String);

macro_rules! session_columns {
    () => {
        "id, cwd, env, name, parent_session_id, created_at, updated_at, leaf_id, model_provider, model_id, \
         thinking_level, tools, message_count, first_message, last_seq, running, system_prompt, \
         append_system_prompt, task_name, secret_env_names, no_skills, no_context_files, \
         extensions, no_extensions, extension_flags, start_options"
    };
}

impl Store {
    /// Inserts a new session.
    pub async fn insert_session(&self, row: SessionRow) -> Result<(), StoreError> {
        let mut write = Statements::default();
        insert_session(&mut write, &row);
        self.write_statements(write).await
    }

    /// The session with `id`.
    pub async fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            session_columns!(),
            " FROM sessions WHERE id = ?1"
        ))
        .bind(id)
        .fetch_optional(&self.reader)
        .await?;
        row.map(|row| session_from_row(&row)).transpose()
    }

    /// One page of sessions, newest activity first, optionally only for `cwd`.
    pub async fn list_sessions(
        &self,
        cwd: Option<&str>,
        cursor: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<SessionRow>, StoreError> {
        self.list_sessions_under(cwd, None, cursor, limit).await
    }

    /// Like [`Store::list_sessions`], only the subagents of `parent` when given.
    pub async fn list_sessions_under(
        &self,
        cwd: Option<&str>,
        parent: Option<&str>,
        cursor: Option<&ListCursor>,
        limit: u32,
    ) -> Result<Vec<SessionRow>, StoreError> {
        let (after_updated, after_id) = match cursor {
            Some((updated, id)) => (Some(*updated), Some(id.as_str())),
            None => (None, None),
        };
        let rows = sqlx::query(concat!(
            "SELECT ",
            session_columns!(),
            " FROM sessions WHERE (?1 IS NULL OR cwd = ?1) \
              AND (?2 IS NULL OR updated_at < ?2 OR (updated_at = ?2 AND id < ?3)) \
              AND (?5 IS NULL OR (parent_session_id = ?5 AND task_name IS NOT NULL)) \
              ORDER BY updated_at DESC, id DESC LIMIT ?4"
        ))
        .bind(cwd)
        .bind(after_updated)
        .bind(after_id)
        .bind(i64::from(limit))
        .bind(parent)
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(session_from_row).collect()
    }

    /// Number of stored sessions.
    pub async fn session_count(&self) -> Result<u64, StoreError> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions")
            .fetch_one(&self.reader)
            .await?;
        Ok(count.max(0) as u64)
    }

    /// The sessions linked to pi session file `path` (opened from it), newest activity first.
    pub async fn sessions_linked_to(&self, path: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT id FROM sessions WHERE json_extract(start_options, '$.piFile') = ?1 \
             ORDER BY updated_at DESC",
        )
        .bind(path)
        .fetch_all(&self.reader)
        .await?)
    }

    /// Whether session `session_id` has an entry with id `entry_id`.
    pub async fn has_entry(&self, session_id: &str, entry_id: &str) -> Result<bool, StoreError> {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM entries WHERE session_id = ?1 AND id = ?2")
                .bind(session_id)
                .bind(entry_id)
                .fetch_optional(&self.reader)
                .await?;
        Ok(found.is_some())
    }

    /// Saves the mutable metadata of a session (everything but id, cwd, env, creation).
    pub async fn update_session(&self, row: &SessionRow) -> Result<(), StoreError> {
        let mut write = Statements::default();
        update_session(&mut write, row);
        self.write_statements(write).await
    }

    /// Deletes a session and its entries; `false` when it did not exist.
    pub async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.write(move |connection| {
            Box::pin(async move {
                let result = sqlx::query("DELETE FROM sessions WHERE id = ?1")
                    .bind(&id)
                    .execute(&mut *connection)
                    .await?;
                sqlx::query("DELETE FROM jobs WHERE session_id = ?1")
                    .bind(&id)
                    .execute(&mut *connection)
                    .await?;
                Ok(result.rows_affected() > 0)
            })
        })
        .await
    }

    /// Sessions whose run was active when the daemon stopped without closing it.
    pub async fn interrupted_sessions(&self) -> Result<Vec<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT id FROM sessions WHERE running = 1")
                .fetch_all(&self.reader)
                .await?,
        )
    }
}

/// Adds the insertion of `row` to `write`.
pub(crate) fn insert_session(write: &mut Statements, row: &SessionRow) {
    let mut values = vec![
        Value::from(row.id.as_str()),
        row.cwd.as_str().into(),
        row.env
            .as_ref()
            .map(|env| serde_json::to_string(&**env).unwrap_or_default())
            .into(),
        row.name.as_deref().into(),
        row.parent_session_id.as_deref().into(),
        row.created_at.into(),
    ];
    values.extend(changing_values(row));
    values.extend([
        row.system_prompt.as_deref().into(),
        row.append_system_prompt.as_deref().into(),
        row.task_name.as_deref().into(),
        serde_json::to_string(&*row.secret_env_names)
            .unwrap_or_else(|_| "[]".to_owned())
            .into(),
        row.no_skills.into(),
        row.no_context_files.into(),
        serde_json::to_string(&*row.extensions)
            .unwrap_or_else(|_| "[]".to_owned())
            .into(),
        row.no_extensions.into(),
        serde_json::to_string(&*row.extension_flags)
            .unwrap_or_else(|_| "{}".to_owned())
            .into(),
        serde_json::to_string(&*row.start_options)
            .unwrap_or_else(|_| "{}".to_owned())
            .into(),
    ]);
    write.push(
        concat!(
            "INSERT INTO sessions (",
            session_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ),
        values,
    );
}

/// Adds saving `row`'s changeable columns to `write`.
pub(crate) fn update_session(write: &mut Statements, row: &SessionRow) {
    let mut values = vec![Value::from(row.name.as_deref())];
    values.extend(changing_values(row));
    values.push(row.id.as_str().into());
    write.push(
        "UPDATE sessions SET name = ?, updated_at = ?, leaf_id = ?, model_provider = ?, model_id = ?, \
         thinking_level = ?, tools = ?, message_count = ?, first_message = ?, last_seq = ?, running = ? \
         WHERE id = ?",
        values,
    );
}

/// The values of the columns a session's activity changes, `updated_at` through `running`, in
/// `session_columns!`' order (which the update follows).
fn changing_values(row: &SessionRow) -> [Value; 10] {
    [
        row.updated_at.into(),
        row.leaf_id.as_deref().into(),
        row.model
            .as_ref()
            .map(|(provider, _)| provider.as_str())
            .into(),
        row.model.as_ref().map(|(_, id)| id.as_str()).into(),
        row.thinking_level.as_str().into(),
        tools_json(row).into(),
        (row.message_count as i64).into(),
        row.first_message.as_deref().into(),
        (row.last_seq as i64).into(),
        row.running.into(),
    ]
}

fn tools_json(row: &SessionRow) -> String {
    serde_json::to_string(&row.tools).unwrap_or_else(|_| "[]".to_owned())
}

fn session_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<SessionRow, StoreError> {
    let env: Option<String> = row.try_get("env")?;
    let tools: String = row.try_get("tools")?;
    let provider: Option<String> = row.try_get("model_provider")?;
    let model_id: Option<String> = row.try_get("model_id")?;
    let secret_names: String = row.try_get("secret_env_names")?;
    Ok(SessionRow {
        id: row.try_get("id")?,
        cwd: row.try_get("cwd")?,
        env: env
            .map(|text| serde_json::from_str(&text).map(Env::new))
            .transpose()
            .map_err(StoreError::corrupt("sessions.env"))?,
        name: row.try_get("name")?,
        parent_session_id: row.try_get("parent_session_id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        leaf_id: row.try_get("leaf_id")?,
        model: provider.zip(model_id),
        thinking_level: row.try_get("thinking_level")?,
        tools: serde_json::from_str(&tools).map_err(StoreError::corrupt("sessions.tools"))?,
        message_count: row.try_get::<i64, _>("message_count")?.max(0) as u64,
        first_message: row.try_get("first_message")?,
        last_seq: row.try_get::<i64, _>("last_seq")?.max(0) as u64,
        running: row.try_get("running")?,
        system_prompt: row.try_get("system_prompt")?,
        append_system_prompt: row.try_get("append_system_prompt")?,
        task_name: row.try_get("task_name")?,
        secret_env_names: serde_json::from_str::<Vec<String>>(&secret_names)
            .map_err(StoreError::corrupt("sessions.secret_env_names"))?
            .into(),
        secret_env: Env::default(),
        no_skills: row.try_get("no_skills")?,
        no_context_files: row.try_get("no_context_files")?,
        extensions: serde_json::from_str::<Vec<String>>(&row.try_get::<String, _>("extensions")?)
            .map_err(StoreError::corrupt("sessions.extensions"))?
            .into(),
        no_extensions: row.try_get("no_extensions")?,
        extension_flags: serde_json::from_str::<
            std::collections::BTreeMap<String, serde_json::Value>,
        >(&row.try_get::<String, _>("extension_flags")?)
        .map_err(StoreError::corrupt("sessions.extension_flags"))?
        .into(),
        start_options: serde_json::from_str::<StartOptions>(
            &row.try_get::<String, _>("start_options")?,
        )
        .map_err(StoreError::corrupt("sessions.start_options"))?
        .into(),
    })
}

//! pi's session files (JSONL): import of versions 1 to 3 (with pi's migrations), export as
//! version 3 that pi opens, and the branch copy used by fork.
//!
//! A file is a header line (`{"type":"session","version":3,"id","timestamp","cwd"}`) then one
//! entry per line. Malformed lines are skipped, as pi does. Version 1 entries get ids and
//! parent links (each the child of the previous); compactions' `firstKeptEntryIndex` becomes
//! `firstKeptEntryId`; version 2's `hookMessage` role becomes `custom`.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use pi_protocol::v1::SessionEntry;
use pi_protocol::v1::message::AgentMessage as WireMessage;
use serde_json::{Value, json};

use crate::entries::{self, EntryBase, EntryIds};
use crate::services::SessionServices;
use crate::{SessionError, user_content_text};
use pi_store::SessionRow;
use pi_util::ids::new_uuid;
use pi_util::time::{iso_from_millis, millis_from_iso, now_millis};

/// The session file version we write.
pub const CURRENT_VERSION: u64 = 3;

/// An entry read from a pi file: its typed form, and the text to store — the file's line
/// itself when the daemon changed nothing in it (so fields the daemon does not model, and the
/// file's number formatting, come back out in exports), else the migrated entry with every
/// field it had.
#[derive(Debug)]
pub struct ImportedEntry {
    /// The entry as the daemon uses it.
    pub entry: SessionEntry,
    /// The JSON to store and export.
    pub body: String,
}

/// Reads a pi session file into a new session row and its entries.
///
/// With `link`, a version 3 file becomes the session's pi file: its new entries are appended
/// to it (a file of an older version is only copied — pi rewrites those when it opens them).
pub fn import_file(
    path: &Path,
    services: &SessionServices,
    link: bool,
) -> Result<(SessionRow, Vec<ImportedEntry>), SessionError> {
    let bad = |message: String| SessionError::invalid("path", message);
    let text = std::fs::read_to_string(path).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            SessionError::FileNotFound(path.to_path_buf())
        } else {
            bad(format!("cannot read {}: {error}", path.display()))
        }
    })?;
    let mut lines = text
        .split('\n')
        .map(|line| line.trim_end_matches('\r'))
        .filter(|line| !line.trim().is_empty());
    let header: Value = lines
        .next()
        .and_then(|line| serde_json::from_str(line).ok())
        .filter(|header: &Value| header["type"] == "session" && header["id"].is_string())
        .ok_or_else(|| {
            bad(format!(
                "{} is not a pi session file: its first line is not a session header",
                path.display()
            ))
        })?;
    let version = header["version"].as_u64().unwrap_or(1);
    if version > CURRENT_VERSION {
        return Err(bad(format!(
            "{} is a version {version} session file; this daemon reads versions 1 to 3",
            path.display()
        )));
    }
    let mut raw: Vec<Value> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut skipped = 0usize;
    for line in lines {
        match serde_json::from_str::<Value>(line) {
            Ok(value) if value.is_object() => {
                raw.push(value);
                texts.push(line.trim());
            }
            _ => skipped += 1,
        }
    }
    // Migrations rewrite entries; only a v3 entry they leave alone keeps its line.
    let originals: Vec<Option<(Value, &str)>> = raw
        .iter()
        .zip(&texts)
        .map(|(value, text)| (version >= CURRENT_VERSION).then(|| (value.clone(), *text)))
        .collect();
    if version < 2 {
        migrate_v1(&mut raw);
    }
    if version < 3 {
        for entry in &mut raw {
            if entry["type"] == "message" && entry["message"]["role"] == "hookMessage" {
                entry["message"]["role"] = json!("custom");
            }
        }
    }
    let mut parsed = Vec::with_capacity(raw.len());
    for (mut value, original) in raw.into_iter().zip(originals) {
        normalize_content(&mut value);
        // A self-parent makes a root, as pi treats it.
        if value["parentId"].is_string() && value["parentId"] == value["id"] {
            value["parentId"] = Value::Null;
        }
        let typed = serde_json::from_value::<SessionEntry>(value.clone());
        // The line itself only if it reads back as the same entry (a duplicated key reads
        // differently through the typed entry than through a `Value`).
        let body = match (original, &typed) {
            (Some((before, text)), Ok(entry))
                if before == value
                    && serde_json::from_str::<SessionEntry>(text).ok().as_ref() == Some(entry) =>
            {
                text.to_owned()
            }
            _ => value.to_string(),
        };
        match typed {
            Ok(entry) => parsed.push(ImportedEntry { entry, body }),
            Err(_) => skipped += 1,
        }
    }
    if skipped > 0 {
        tracing::warn!(path = %path.display(), skipped, "skipped malformed or unknown lines while importing");
    }
    let cwd = header["cwd"].as_str().unwrap_or_default().to_owned();
    let created_at = header["timestamp"]
        .as_str()
        .and_then(millis_from_iso)
        .unwrap_or_else(now_millis);
    let mut row = SessionRow {
        id: new_uuid(),
        cwd,
        env: None,
        name: None,
        parent_session_id: None,
        created_at,
        updated_at: created_at,
        leaf_id: None,
        model: None,
        thinking_level: services.settings.default_thinking.as_str().to_owned(),
        tools: services.tools.default_names(),
        message_count: 0,
        first_message: None,
        last_seq: 0,
        running: false,
        system_prompt: None,
        append_system_prompt: None,
        task_name: None,
        secret_env_names: Vec::new().into(),
        secret_env: pi_store::Env::default(),
        no_skills: false,
        no_context_files: false,
        extensions: std::sync::Arc::from([]),
        no_extensions: false,
        extension_flags: Default::default(),
        start_options: std::sync::Arc::new(pi_store::StartOptions {
            pi_file: (link && version == CURRENT_VERSION).then(|| path.display().to_string()),
            ..pi_store::StartOptions::default()
        }),
    };
    let entries: Vec<SessionEntry> = parsed
        .iter()
        .map(|imported| imported.entry.clone())
        .collect();
    summarize_into_row(&entries, &mut row);
    Ok((row, parsed))
}

/// pi accepts a plain string as the content of user and custom messages; the wire shape is
/// always a list of blocks.
fn normalize_content(entry: &mut Value) {
    let as_blocks = |content: &mut Value| {
        if let Value::String(text) = content {
            *content = json!([{ "type": "text", "text": text }]);
        }
    };
    if entry["type"] == "custom_message" {
        as_blocks(&mut entry["content"]);
    }
    if entry["type"] == "message"
        && matches!(entry["message"]["role"].as_str(), Some("user" | "custom"))
    {
        as_blocks(&mut entry["message"]["content"]);
    }
}

fn migrate_v1(raw: &mut [Value]) {
    let mut ids = EntryIds::default();
    let assigned: Vec<String> = raw.iter().map(|_| ids.allocate()).collect();
    for (index, entry) in raw.iter_mut().enumerate() {
        entry["id"] = json!(assigned[index]);
        entry["parentId"] = if index == 0 {
            Value::Null
        } else {
            json!(assigned[index - 1])
        };
        if entry["type"] == "compaction"
            && let Some(kept) = entry["firstKeptEntryIndex"].as_u64()
        {
            let kept_id = assigned
                .get(kept as usize)
                .cloned()
                .unwrap_or_else(|| assigned[index].clone());
            entry["firstKeptEntryId"] = json!(kept_id);
            if let Some(object) = entry.as_object_mut() {
                object.shift_remove("firstKeptEntryIndex");
            }
        }
        if entry["timestamp"].is_number() {
            let millis = entry["timestamp"].as_i64().unwrap_or(0);
            entry["timestamp"] = json!(iso_from_millis(millis));
        }
    }
}

/// Derives a session row's summary fields from its entries (creation order): leaf (the last
/// entry, as pi loads it), counts, first message, name, model and thinking level.
pub fn summarize_into_row(all: &[SessionEntry], row: &mut SessionRow) {
    row.leaf_id = all
        .last()
        .map(|entry| entries::entry_parts(entry).0.to_owned());
    row.message_count = all
        .iter()
        .filter(|entry| matches!(entry, SessionEntry::Message { .. }))
        .count() as u64;
    row.first_message = all.iter().find_map(|entry| match entry {
        SessionEntry::Message {
            message: WireMessage::User(user),
            ..
        } => Some(user_content_text(&user.content)),
        _ => None,
    });
    if let Some(name) = all.iter().rev().find_map(|entry| match entry {
        SessionEntry::SessionInfo { name, .. } => Some(name.clone()),
        _ => None,
    }) {
        row.name = name;
    }
    if let Ok(context) = entries::build_context(&branch_to_last(all)) {
        if context.model.is_some() {
            row.model = context.model;
        }
        if let Some(level) = context.thinking_level {
            row.thinking_level = level;
        }
    }
    row.last_seq = all.len() as u64;
}

/// The branch from the root to the last entry.
fn branch_to_last(all: &[SessionEntry]) -> Vec<SessionEntry> {
    let by_id: HashMap<&str, &SessionEntry> = all
        .iter()
        .map(|entry| (entries::entry_parts(entry).0, entry))
        .collect();
    let mut branch = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor = all.last();
    while let Some(entry) = cursor {
        let (id, parent, _) = entries::entry_parts(entry);
        if !seen.insert(id) {
            break;
        }
        branch.push(entry.clone());
        cursor = parent.and_then(|parent| by_id.get(parent).copied());
    }
    branch.reverse();
    branch
}

/// The label set on each target, from a session's label entries in creation order (the
/// latest label entry of a target wins; a cleared label is `None`).
pub fn resolve_labels(label_entries: &[SessionEntry]) -> Vec<(String, Option<String>)> {
    let mut labels: Vec<(String, Option<String>)> = Vec::new();
    for entry in label_entries {
        if let SessionEntry::Label {
            target_id, label, ..
        } = entry
        {
            labels.retain(|(target, _)| target != target_id);
            labels.push((target_id.clone(), label.clone()));
        }
    }
    labels
}

/// Copies a branch for a fork, as pi does: label entries are dropped (their children
/// re-linked), and the session's labels (`labels`, from [`resolve_labels`]) whose targets were
/// copied are re-created as fresh label entries at the end.
pub fn copy_without_labels(
    path: &[SessionEntry],
    labels: Vec<(String, Option<String>)>,
    now: i64,
) -> Vec<SessionEntry> {
    let mut stripped: HashMap<String, Option<String>> = HashMap::new();
    let mut copied: Vec<SessionEntry> = Vec::new();
    for entry in path {
        if let SessionEntry::Label { id, parent_id, .. } = entry {
            stripped.insert(id.clone(), parent_id.clone());
            continue;
        }
        let mut entry = entry.clone();
        let mut parent = entries::entry_parts(&entry).1.map(str::to_owned);
        while let Some(through) = parent.as_ref().and_then(|id| stripped.get(id)) {
            parent = through.clone();
        }
        set_parent(&mut entry, parent);
        copied.push(entry);
    }
    let kept: HashSet<String> = copied
        .iter()
        .map(|entry| entries::entry_parts(entry).0.to_owned())
        .collect();
    let mut ids = EntryIds::new(kept.iter().map(String::as_str));
    for (target_id, label) in labels {
        let (Some(label), true) = (label, kept.contains(&target_id)) else {
            continue;
        };
        let parent = copied
            .last()
            .map(|entry| entries::entry_parts(entry).0.to_owned());
        let base = EntryBase::new(&mut ids, parent, now);
        copied.push(SessionEntry::Label {
            id: base.id,
            parent_id: base.parent_id,
            timestamp: base.timestamp,
            target_id,
            label: Some(label),
        });
    }
    copied
}

fn set_parent(entry: &mut SessionEntry, parent: Option<String>) {
    match entry {
        SessionEntry::Message { parent_id, .. }
        | SessionEntry::ThinkingLevelChange { parent_id, .. }
        | SessionEntry::ModelChange { parent_id, .. }
        | SessionEntry::Compaction { parent_id, .. }
        | SessionEntry::BranchSummary { parent_id, .. }
        | SessionEntry::Custom { parent_id, .. }
        | SessionEntry::CustomMessage { parent_id, .. }
        | SessionEntry::Label { parent_id, .. }
        | SessionEntry::SessionInfo { parent_id, .. } => *parent_id = parent,
    }
}

/// The id of the last entry of pi session file `path` (`None`: it has none), for telling
/// whether a session opened from it has everything it holds.
///
/// Reads the file's tail only (a window growing from 64 KiB until it holds a whole entry):
/// a session opened from the file asks before each append.
pub fn last_entry_id(path: &Path) -> Result<Option<String>, SessionError> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let failed = |error: std::io::Error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            SessionError::FileNotFound(path.to_path_buf())
        } else {
            SessionError::invalid("path", format!("cannot read {}: {error}", path.display()))
        }
    };
    let mut file = std::fs::File::open(path).map_err(failed)?;
    let len = file.metadata().map_err(failed)?.len();
    let mut window: u64 = 64 * 1024;
    loop {
        let start = len.saturating_sub(window);
        let mut tail = Vec::new();
        file.seek(SeekFrom::Start(start))
            .and_then(|_| file.read_to_end(&mut tail))
            .map_err(failed)?;
        let text = String::from_utf8_lossy(&tail);
        // The window's first line is cut unless the window starts the file.
        let whole = text.lines().skip(usize::from(start > 0));
        let found = whole
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|value| value["type"] != "session" && value["id"].is_string());
        if let Some(entry) = found {
            return Ok(entry["id"].as_str().map(str::to_owned));
        }
        if start == 0 {
            return Ok(None);
        }
        window = window.saturating_mul(4);
    }
}

/// Appends `bodies` (entries as pi writes them) to pi session file `path`, one line each,
/// in one write.
pub fn append_to_file(path: &Path, bodies: &[&str]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut text = String::new();
    for body in bodies {
        text.push_str(body);
        text.push('\n');
    }
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(text.as_bytes())
}

/// A pi v3 session file for a session: a header, then every entry as stored (an imported
/// entry as its file had it).
pub fn export_jsonl(row: &SessionRow, bodies: &[String]) -> String {
    let header = json!({
        "type": "session",
        "version": CURRENT_VERSION,
        "id": row.id,
        "timestamp": iso_from_millis(row.created_at),
        "cwd": row.cwd,
    });
    let mut out = header.to_string();
    out.push('\n');
    for body in bodies {
        out.push_str(body);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::last_entry_id;

    #[test]
    fn the_last_entry_is_found_from_the_tail_whatever_its_length() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let big = "x".repeat(300 * 1024);
        std::fs::write(
            &file,
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"h\"}}\n\
                 {{\"type\":\"message\",\"id\":\"a1\"}}\n\
                 {{\"type\":\"message\",\"id\":\"b2\",\"text\":\"{big}\"}}\n"
            ),
        )
        .unwrap();
        assert_eq!(last_entry_id(&file).unwrap().as_deref(), Some("b2"));
        std::fs::write(&file, "{\"type\":\"session\",\"version\":3,\"id\":\"h\"}\n").unwrap();
        assert_eq!(last_entry_id(&file).unwrap(), None);
    }
}

//! `write {path, content}`: creates parent directories and replaces the file atomically (a
//! temporary file in the same directory, renamed over the target, permissions kept), under the
//! path's mutation lock. Reports the UTF-8 byte count to the model, as pi does, and to clients
//! what the file was before, read under the same lock (details: `created`, and for a file that
//! existed `previousBytes` and, up to [`PREVIOUS_TEXT_LIMIT`] bytes of UTF-8, `previousText`),
//! so a client's diff never races the write.
//!
//! Also [`write_atomically`], which `edit` uses too: readers see the old file or the new one,
//! never a mix, and a symlink is written through (the link stays, its target changes).

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent::{ABORTED, Tool, ToolFuture, ToolInvocation, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::ToolContext;
use crate::support::{blocking_to_completion, fs_error, object_schema, parse_args};

/// The largest previous file whose text a result's details carry (the tools' 50 KB limit);
/// past it, or for a file that is not UTF-8, the details have its size only.
pub const PREVIOUS_TEXT_LIMIT: u64 = crate::truncate::DEFAULT_MAX_BYTES as u64;

const DESCRIPTION: &str = "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.";

/// The tool's parameters, the same for every session.
static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| {
    object_schema(
        json!({
            "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
            "content": {"type": "string", "description": "Content to write to the file"},
        }),
        &["path", "content"],
    )
});

/// The `write` tool.
pub struct WriteTool {
    context: Arc<ToolContext>,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

impl WriteTool {
    /// `write` for the session of `context`.
    pub fn new(context: Arc<ToolContext>) -> WriteTool {
        WriteTool { context }
    }
}

impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn label(&self) -> &str {
        "Write"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &SCHEMA
    }
    /// pi 0.73.1's line for it in the system prompt.
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Create or overwrite files")
    }
    fn prompt_guidelines(&self) -> &[String] {
        &WRITE_GUIDELINES
    }
    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            let args: WriteArgs = match parse_args("write", &invocation.arguments) {
                Ok(args) => args,
                Err(output) => return output,
            };
            let path = match self.context.place(&args.path) {
                Ok(path) => path,
                Err(error) => return ToolOutput::error(error),
            };
            if let Err(refused) = self.context.check_write(&path) {
                return ToolOutput::error(refused);
            }
            let guard = tokio::select! {
                biased;
                () = invocation.cancel.cancelled() => return ToolOutput::error(ABORTED),
                guard = self.context.locks.lock(&path) => guard,
            };
            let written = path.clone();
            let user_umask = self.context.spawner.user_umask();
            let work = move || {
                let _guard = guard;
                write(&path, &args, user_umask)
            };
            match blocking_to_completion(work).await {
                Ok(Ok(mut output)) => {
                    if let Some(files) = &self.context.files
                        && let Some(note) = files.changed(&written, crate::ChangedBy::Write).await
                    {
                        crate::append_note(&mut output, &note);
                    }
                    output
                }
                Ok(Err(output)) | Err(output) => output,
            }
        })
    }
}

fn write(path: &Path, args: &WriteArgs, user_umask: Option<u32>) -> Result<ToolOutput, ToolOutput> {
    if let Some(parent) = path.parent() {
        create_dirs(parent, user_umask)
            .map_err(|error| ToolOutput::error(fs_error(&error, "mkdir", parent)))?;
    }
    // What the file was: read under the lock, so nothing writes in between.
    let details = match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => {
            let mut details = json!({"created": false, "previousBytes": metadata.len()});
            if metadata.len() <= PREVIOUS_TEXT_LIMIT
                && let Ok(text) = std::fs::read_to_string(path)
            {
                details["previousText"] = Value::String(text);
            }
            details
        }
        // Not a file (a directory fails below with its own error) or none.
        Ok(_) => Value::Null,
        Err(_) => json!({"created": true}),
    };
    write_new_or_replace(path, args.content.as_bytes(), user_umask)
        .map_err(|error| ToolOutput::error(fs_error(&error, "open", path)))?;
    Ok(ToolOutput::text(format!(
        "Successfully wrote {} bytes to {}",
        args.content.len(),
        args.path
    ))
    .with_details(details))
}

/// Creates `dir` and its missing ancestors; with `user_umask`, each new one gets the mode the
/// user's own `mkdir` would give it (the daemon itself creates everything private).
fn create_dirs(dir: &Path, user_umask: Option<u32>) -> std::io::Result<()> {
    let Some(mask) = user_umask else {
        return std::fs::create_dir_all(dir);
    };
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|ancestor| std::fs::symlink_metadata(ancestor).is_err())
        .collect();
    for new in missing.into_iter().rev() {
        match std::fs::create_dir(new) {
            Ok(()) => std::fs::set_permissions(
                new,
                std::os::unix::fs::PermissionsExt::from_mode(0o777 & !mask),
            )?,
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Replaces the file at `path` (following symlinks) with `bytes` atomically, keeping the
/// existing file's permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_new_or_replace(path, bytes, None)
}

/// As [`write_atomically`]; a new file, with `user_umask`, gets the mode the user's own
/// programs would give it (the daemon itself creates everything private).
pub fn write_new_or_replace(
    path: &Path,
    bytes: &[u8],
    user_umask: Option<u32>,
) -> std::io::Result<()> {
    let target: PathBuf = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let Some((dir, name)) = target.parent().zip(target.file_name()) else {
        return Err(std::io::Error::other("the path names no file"));
    };
    let permissions = std::fs::metadata(&target)
        .ok()
        .map(|metadata| metadata.permissions())
        .or_else(|| {
            user_umask.map(|mask| std::os::unix::fs::PermissionsExt::from_mode(0o666 & !mask))
        });
    let mut random = [0u8; 6];
    let _ = getrandom::fill(&mut random);
    let suffix: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    let temporary = dir.join(format!(".{}.pi-{suffix}.tmp", name.to_string_lossy()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&temporary)?;
        file.write_all(bytes)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// pi 0.73.1's guidelines for this tool in the system prompt.
static WRITE_GUIDELINES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    vec!["Use write only for new files or complete rewrites.".to_owned()]
});

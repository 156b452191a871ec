//! pi's session files on disk, for clients that list and open them (`pictl sessions`, `-c`,
//! `--session ID`, the TUI's session picker): where they are, and what each holds.
//!
//! pi keeps one JSONL file per session under its session directory (`--session-dir`, else
//! `$PI_CODING_AGENT_SESSION_DIR`, else `sessions/` in its agent directory), in one
//! subdirectory per working directory (`--home-me-app--` for `/home/me/app`). The first line
//! is a header with the session's id and working directory. Reading never writes.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

/// One of pi's session files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PiFile {
    /// The file.
    pub path: PathBuf,
    /// Its session id (the header's).
    pub id: String,
    /// Its working directory (the header's).
    pub cwd: String,
    /// Its name (the last `session_info` entry's).
    pub name: Option<String>,
    /// The first user message's text.
    pub first_message: Option<String>,
    /// Message entries.
    pub message_count: u64,
    /// Last modification, Unix ms.
    pub updated_at: i64,
}

/// pi's session directory: `flag` (`--session-dir`), else `$PI_CODING_AGENT_SESSION_DIR`,
/// else `sessions/` in `pi_agent_dir`; `~` is the home.
pub fn sessions_dir(flag: Option<&Path>, pi_agent_dir: &Path) -> PathBuf {
    if let Some(dir) = flag {
        return expand_home(dir);
    }
    if let Some(dir) = std::env::var_os("PI_CODING_AGENT_SESSION_DIR").filter(|dir| !dir.is_empty())
    {
        return expand_home(Path::new(&dir));
    }
    pi_agent_dir.join("sessions")
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

/// pi's session files of `cwd` (every working directory's with `None`) under `dir`, newest
/// first.
pub fn list(dir: &Path, cwd: Option<&Path>) -> Vec<PiFile> {
    let files: Vec<PathBuf> = match cwd {
        Some(cwd) => session_files(&dir.join(encoded_cwd(cwd))),
        None => subdirectories(dir)
            .iter()
            .flat_map(|sub| session_files(sub))
            .collect(),
    };
    let mut listed: Vec<PiFile> = files.iter().filter_map(|file| read(file)).collect();
    listed.sort_by_key(|file| std::cmp::Reverse(file.updated_at));
    listed
}

/// The first file whose header id starts with `prefix`: this working directory's first,
/// then the directory's own, then every working directory's.
pub fn find_by_id(dir: &Path, cwd: &Path, prefix: &str) -> Option<PathBuf> {
    session_files(&dir.join(encoded_cwd(cwd)))
        .into_iter()
        .chain(session_files(dir))
        .chain(
            subdirectories(dir)
                .iter()
                .flat_map(|sub| session_files(sub)),
        )
        .find(|file| header_id(file).is_some_and(|id| id.starts_with(prefix)))
}

/// What one file holds; `None` when it is not a pi session file.
pub fn read(path: &Path) -> Option<PiFile> {
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
    fn a_session_file_is_listed_and_found_by_its_header_id() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join(encoded_cwd(Path::new("/w")));
        std::fs::create_dir_all(&sub).unwrap();
        let file = sub.join("2026-01-01T00-00-00-000Z_abc.jsonl");
        std::fs::write(
            &file,
            "{\"type\":\"session\",\"version\":3,\"id\":\"abc123\",\"timestamp\":\"t\",\"cwd\":\"/w\"}\n\
             {\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"hi there\",\"timestamp\":1}}\n\
             {\"type\":\"session_info\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"t\",\"name\":\"greeting\"}\n",
        )
        .unwrap();
        let listed = list(dir.path(), Some(Path::new("/w")));
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, "abc123");
        assert_eq!(listed[0].first_message.as_deref(), Some("hi there"));
        assert_eq!(listed[0].name.as_deref(), Some("greeting"));
        assert_eq!(listed[0].message_count, 1);
        assert_eq!(list(dir.path(), None), listed);
        assert_eq!(
            find_by_id(dir.path(), Path::new("/elsewhere"), "abc"),
            Some(file)
        );
        assert_eq!(find_by_id(dir.path(), Path::new("/w"), "zzz"), None);
    }
}

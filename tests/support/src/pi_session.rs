//! pi's session files, written as pi writes them, for tests of the daemon reading and
//! continuing them.

use std::path::{Path, PathBuf};

/// Writes a version 3 pi session file for working directory `cwd` under `agent_dir`'s
/// `sessions/` (pi's layout: one directory per working directory), holding one user message
/// `text`; its header id is `id`. Returns the file.
pub fn write(agent_dir: &Path, cwd: &Path, id: &str, text: &str) -> PathBuf {
    let encoded = format!(
        "--{}--",
        cwd.display()
            .to_string()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    let dir = agent_dir.join("sessions").join(encoded);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd.display().to_string()}),
        serde_json::json!({"type": "message", "id": "a1", "parentId": null,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": text}],
                "timestamp": 1}}),
    ];
    std::fs::write(
        &file,
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    )
    .unwrap();
    file
}

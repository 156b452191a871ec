mod attach;
mod cli;
mod daemon;
mod drive;
mod pi_stream;
mod rpc;
mod run;
mod sessions;
mod world;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// A temporary `PI_HOME` for `pictl` runs; stops any daemon started in it when dropped.
pub struct Home {
    pub dir: tempfile::TempDir,
    pid_binary: PathBuf,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::Builder::new()
                .prefix("pictl-test-")
                .tempdir()
                .unwrap(),
            pid_binary: pi_test_support::workspace_binary("pid"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `pictl ARGS` with this home.
    pub fn pictl(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_pictl"))
            .args(args)
            .env("PI_HOME", self.path())
            .env("PI_DAEMON_BIN", &self.pid_binary)
            .output()
            .unwrap()
    }

    /// Runs `pictl ARGS` and parses its single line of stdout as JSON.
    pub fn pictl_json(&self, args: &[&str]) -> (Option<i32>, Value) {
        let output = self.pictl(args);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout.lines().count(),
            1,
            "expected exactly one line, got {stdout:?}; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
        (output.status.code(), value)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = self.pictl(&["daemon", "stop", "--timeout", "5"]);
    }
}

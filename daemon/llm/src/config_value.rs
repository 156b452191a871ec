//! Values in `auth.json` and `models.json` that may name a secret instead of holding it (pi's
//! `resolveConfigValue`): `"!command"` runs the command with `sh -c` and uses its trimmed
//! stdout, a value that names a set environment variable uses that variable, anything else is
//! the literal. The environment is injected ([`Environment`]) so tests never read the real one.
//!
//! Guarantees: a command runs at most once per resolver while it succeeds (its output is cached
//! for the resolver's lifetime, which is the daemon's); a command that fails is retried on the
//! next use instead of being cached, so unlocking a password store later works without a
//! restart. A command is killed after [`COMMAND_TIMEOUT`]. Errors never contain the value or the
//! command text, only what went wrong.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// How long a `!command` may run.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Where environment variables come from.
pub trait Environment: Send + Sync + fmt::Debug {
    /// The value of `name`; `None` when unset or empty.
    fn var(&self, name: &str) -> Option<String>;
    /// Every variable, for the environment of `!command` children.
    fn vars(&self) -> Vec<(String, String)>;
}

/// The daemon's own environment.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|value| !value.is_empty())
    }

    fn vars(&self) -> Vec<(String, String)> {
        std::env::vars().collect()
    }
}

/// A fixed set of variables (tests, or a client's environment). `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct MapEnvironment {
    vars: BTreeMap<String, String>,
}

impl MapEnvironment {
    /// No variables.
    pub fn new() -> Self {
        MapEnvironment::default()
    }

    /// Adds or replaces a variable.
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for MapEnvironment {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        MapEnvironment {
            vars: iter
                .into_iter()
                .map(|(name, value)| (name.into(), value.into()))
                .collect(),
        }
    }
}

impl fmt::Debug for MapEnvironment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

impl Environment for MapEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        self.vars
            .get(name)
            .filter(|value| !value.is_empty())
            .cloned()
    }

    fn vars(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }
}

/// Why a `!command` produced no value. Never carries the command text or its output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// `sh` could not be started; check that `/bin/sh` exists.
    #[error("the command could not be started: {0}")]
    Spawn(String),
    /// The command exited unsuccessfully; run it by hand to see why.
    #[error("the command failed ({0})")]
    Failed(String),
    /// The command ran longer than 10 s and was killed; make it faster or unlock what it waits
    /// for.
    #[error("the command did not finish within {} s", COMMAND_TIMEOUT.as_secs())]
    TimedOut,
    /// The command printed nothing; make it print the value.
    #[error("the command printed nothing")]
    Empty,
}

/// Resolves config values, caching successful command output. Cheap to share behind an `Arc`.
pub struct ConfigValueResolver {
    environment: Arc<dyn Environment>,
    timeout: Duration,
    // Command text → trimmed stdout. A sync mutex, never held while a command runs.
    cache: Mutex<HashMap<String, String>>,
}

impl fmt::Debug for ConfigValueResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigValueResolver")
            .field("environment", &self.environment)
            .finish_non_exhaustive()
    }
}

impl ConfigValueResolver {
    /// A resolver reading variables from `environment`.
    pub fn new(environment: Arc<dyn Environment>) -> Self {
        ConfigValueResolver {
            environment,
            timeout: COMMAND_TIMEOUT,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The environment variables come from.
    pub fn environment(&self) -> &dyn Environment {
        self.environment.as_ref()
    }

    /// Resolves `raw`: `!command` (cached while it succeeds), `!!command` (never cached), a set
    /// environment variable's value, or the literal. `Ok(None)` only for an empty literal.
    ///
    /// May block for up to 10 s the first time a command runs; async callers should use
    /// `spawn_blocking`.
    pub fn resolve(&self, raw: &str) -> Result<Option<String>, CommandError> {
        if let Some(command) = raw.strip_prefix("!!") {
            return self.run(command).map(Some);
        }
        if let Some(command) = raw.strip_prefix('!') {
            if let Some(cached) = self.cached(command) {
                return Ok(Some(cached));
            }
            let value = self.run(command)?;
            self.cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(command.to_owned(), value.clone());
            return Ok(Some(value));
        }
        if raw.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            self.environment.var(raw).unwrap_or_else(|| raw.to_owned()),
        ))
    }

    /// Whether `raw` is a command, so resolving it may be slow or fail.
    pub fn is_command(raw: &str) -> bool {
        raw.starts_with('!')
    }

    fn cached(&self, command: &str) -> Option<String> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(command)
            .cloned()
    }

    fn run(&self, command: &str) -> Result<String, CommandError> {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .current_dir("/")
            .env_clear()
            .envs(self.environment.vars())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| CommandError::Spawn(error.to_string()))?;
        let Some(mut stdout) = child.stdout.take() else {
            return Err(CommandError::Spawn("no stdout pipe".to_owned()));
        };
        // The reader thread ends when the pipe closes; after a kill it may outlive us if a
        // grandchild keeps the pipe open, which costs one parked thread, not correctness.
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut output = Vec::new();
            let result = stdout.read_to_end(&mut output).map(|_| output);
            let _ = sender.send(result);
        });
        let output = match receiver.recv_timeout(self.timeout) {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CommandError::Failed(error.to_string()));
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CommandError::TimedOut);
            }
        };
        let status = child
            .wait()
            .map_err(|error| CommandError::Failed(error.to_string()))?;
        if !status.success() {
            return Err(CommandError::Failed(status.to_string()));
        }
        let text = String::from_utf8_lossy(&output).trim().to_owned();
        if text.is_empty() {
            return Err(CommandError::Empty);
        }
        Ok(text)
    }

    #[cfg(test)]
    fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A serde error message with every offending value replaced by `…`, including unknown enum
/// variants: for files of secrets, where a mistyped key must not reach an error string.
pub(crate) fn redact_serde_message(message: &str) -> String {
    redact(message, &["unknown variant `"])
}

/// A serde error message with offending strings and numbers replaced by `…`, keeping unknown
/// enum variants (`"video"` for an input kind) visible because they are not secrets.
pub(crate) fn redact_serde_values(message: &str) -> String {
    redact(message, &[])
}

/// The JSON path of a `serde_path_to_error` error, `(root)` when there is none.
pub(crate) fn json_path(path: &serde_path_to_error::Path) -> String {
    let text = path.to_string();
    if text == "." || text == "?" {
        "(root)".to_owned()
    } else {
        text
    }
}

fn redact(message: &str, extra_markers: &[&str]) -> String {
    const BACKTICKED: [&str; 4] = ["integer `", "floating point `", "char `", "boolean `"];
    const DEBUG_QUOTED: &str = "string \"";
    let mut redacted = String::with_capacity(message.len());
    let mut rest = message;
    loop {
        let next_backtick = BACKTICKED
            .iter()
            .chain(extra_markers)
            .filter_map(|marker| rest.find(marker).map(|at| (at, marker.len())))
            .min();
        let next_quoted = rest.find(DEBUG_QUOTED).map(|at| (at, DEBUG_QUOTED.len()));
        let (at, len, closing) = match (next_backtick, next_quoted) {
            (Some(tick), Some(quote)) if quote.0 < tick.0 => (quote.0, quote.1, '"'),
            (Some(tick), _) => (tick.0, tick.1, '`'),
            (None, Some(quote)) => (quote.0, quote.1, '"'),
            (None, None) => break,
        };
        redacted.push_str(&rest[..at + len]);
        let value = &rest[at + len..];
        let mut end = value.len();
        let mut escaped = false;
        for (index, character) in value.char_indices() {
            if escaped {
                escaped = false;
            } else if character == '\\' && closing == '"' {
                escaped = true;
            } else if character == closing {
                end = index;
                break;
            }
        }
        redacted.push('…');
        rest = &value[end..];
        if let Some(after) = rest.strip_prefix(closing) {
            redacted.push(closing);
            rest = after;
        }
    }
    redacted.push_str(rest);
    redacted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver(environment: MapEnvironment) -> ConfigValueResolver {
        ConfigValueResolver::new(Arc::new(environment))
    }

    #[test]
    fn literals_env_names_and_commands() {
        let env = MapEnvironment::new()
            .with("MY_KEY", "from-env")
            .with("EMPTY", "")
            .with("GREETING", "hi");
        let resolver = resolver(env);
        let check = |raw: &str, expect: Result<Option<&str>, CommandError>| {
            let got = resolver.resolve(raw);
            assert_eq!(got, expect.map(|value| value.map(str::to_owned)), "{raw}");
        };
        check("sk-literal", Ok(Some("sk-literal")));
        check("MY_KEY", Ok(Some("from-env")));
        check("EMPTY", Ok(Some("EMPTY")));
        check("", Ok(None));
        check("!echo '  padded  '", Ok(Some("padded")));
        check("!echo $GREETING", Ok(Some("hi")));
        check("!!echo uncached", Ok(Some("uncached")));
        check(
            "!exit 3",
            Err(CommandError::Failed("exit status: 3".into())),
        );
        check("!true", Err(CommandError::Empty));
    }

    #[test]
    fn successful_commands_are_cached_and_failures_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("runs");
        let command = format!("!echo x >> {0}; wc -l < {0}", counter.display());
        let resolver = resolver(MapEnvironment::new().with("PATH", "/usr/bin:/bin"));
        assert_eq!(resolver.resolve(&command), Ok(Some("1".into())));
        assert_eq!(resolver.resolve(&command), Ok(Some("1".into())));

        let flaky = format!("!test -e {0}.ok && echo ready", counter.display());
        assert!(resolver.resolve(&flaky).is_err());
        std::fs::write(format!("{}.ok", counter.display()), "").unwrap();
        assert_eq!(resolver.resolve(&flaky), Ok(Some("ready".into())));
    }

    #[test]
    fn slow_commands_time_out() {
        let resolver = resolver(MapEnvironment::new().with("PATH", "/usr/bin:/bin"))
            .with_timeout(Duration::from_millis(200));
        assert_eq!(resolver.resolve("!sleep 5"), Err(CommandError::TimedOut));
    }

    #[test]
    fn serde_messages_lose_their_values() {
        let check = |message: &str, expect: &str| {
            assert_eq!(redact_serde_message(message), expect);
        };
        check(
            r#"invalid type: string "sk-SENTINEL-\"x", expected a boolean"#,
            r#"invalid type: string "…", expected a boolean"#,
        );
        check(
            "unknown variant `sk-SENTINEL`, expected `api_key` or `oauth`",
            "unknown variant `…`, expected `api_key` or `oauth`",
        );
        check(
            "invalid type: integer `123`, expected a string at line 1",
            "invalid type: integer `…`, expected a string at line 1",
        );
        check("missing field `key`", "missing field `key`");
        assert_eq!(
            redact_serde_values("unknown variant `video`, expected `text` or `image`"),
            "unknown variant `video`, expected `text` or `image`"
        );
    }

    #[test]
    fn map_environment_debug_hides_values() {
        let env = MapEnvironment::new().with("ANTHROPIC_API_KEY", "sk-SENTINEL-123");
        let debug = format!("{env:?} {:?}", resolver(env.clone()));
        assert!(debug.contains("ANTHROPIC_API_KEY"));
        assert!(!debug.contains("SENTINEL"), "{debug}");
    }
}

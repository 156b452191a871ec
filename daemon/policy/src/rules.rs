//! What a tool call may do: rules per tool and argument pattern (`bash` by command, `write` /
//! `edit` by path, other tools by name), each `allow`, `ask` or `deny`, over a mode's
//! defaults. Layers combine by taking the strictest answer, so a project file can only
//! tighten what the user's files allow.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

pub use pi_coding::approvals::{Action, Mode, PathPattern, Rule};

/// One layer: a mode and rules (the first that matches wins over the mode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layer {
    /// The mode; `None`: no opinion (allow).
    pub mode: Option<Mode>,
    /// The rules.
    pub rules: Vec<Rule>,
    /// Where it comes from (for messages).
    pub source: String,
}

/// A decision and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What happens.
    pub action: Action,
    /// Why, as the model and the person read it.
    pub reason: String,
}

/// Tools that only read the working tree (oh-my-pi's `todo` and `ask` change the session, the
/// web tools read the network, `ast_grep` searches).
const READ_TOOLS: &[&str] = &[
    "read",
    "grep",
    "find",
    "ls",
    "lsp",
    "submit_result",
    "todo",
    "ask",
    "fetch",
    "web_search",
    "ast_grep",
];

/// Commands that only read (the first word of a simple command).
const READ_COMMANDS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "rg", "pwd", "echo", "which", "stat", "file",
    "tree", "du", "df", "sort", "uniq", "cut", "diff", "true", "false", "test", "[", "date",
    "whoami", "uname", "printf", "basename", "dirname", "realpath", "env", "type",
];

/// `git` subcommands that only read.
const READ_GIT: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "branch",
    "rev-parse",
    "ls-files",
    "blame",
    "remote",
];

/// The decision of `layers` for `tool` called with `arguments` in `cwd`: the strictest.
pub fn decide(layers: &[Layer], tool: &str, arguments: &Value, cwd: &Path) -> Decision {
    let mut decision = Decision {
        action: Action::Allow,
        reason: "allowed".to_owned(),
    };
    for layer in layers {
        let mine = layer_decision(layer, tool, arguments, cwd);
        if mine.action > decision.action {
            decision = mine;
        }
    }
    decision
}

fn layer_decision(layer: &Layer, tool: &str, arguments: &Value, cwd: &Path) -> Decision {
    for rule in &layer.rules {
        if let Some(what) = rule_matches(rule, tool, arguments, cwd) {
            return Decision {
                action: rule.action,
                reason: format!("a rule in {} ({what})", layer.source),
            };
        }
    }
    let Some(mode) = layer.mode else {
        return Decision {
            action: Action::Allow,
            reason: "allowed".to_owned(),
        };
    };
    let reads = is_read_only(tool, arguments);
    let action = match mode {
        Mode::Yolo => Action::Allow,
        Mode::AskAll if tool == "submit_result" => Action::Allow,
        Mode::AskAll => Action::Ask,
        Mode::AskWrites if reads => Action::Allow,
        Mode::AskWrites => Action::Ask,
        Mode::ReadOnly if reads => Action::Allow,
        Mode::ReadOnly => Action::Deny,
    };
    Decision {
        action,
        reason: format!("{} mode ({})", mode.name(), layer.source),
    }
}

/// Whether `tool` with `arguments` only reads.
pub fn is_read_only(tool: &str, arguments: &Value) -> bool {
    if tool == "lsp" {
        // Renames and code actions write.
        let action = arguments["action"].as_str().unwrap_or_default();
        return !matches!(action, "rename" | "code_actions")
            || arguments["apply"] == false
            || (action == "code_actions"
                && arguments.get("index").is_none()
                && arguments.get("title").is_none());
    }
    if tool == "ast_edit" {
        // A preview reads; `apply` writes.
        return arguments["apply"] != true;
    }
    if READ_TOOLS.contains(&tool) {
        return true;
    }
    if tool == "bash" {
        let command = arguments["command"].as_str().unwrap_or_default();
        return command_is_read_only(command);
    }
    false
}

/// Whether every simple command of `line` only reads and nothing is redirected into a file.
pub fn command_is_read_only(line: &str) -> bool {
    if writes_by_redirect(line) {
        return false;
    }
    let commands = simple_commands(line);
    !commands.is_empty()
        && commands.iter().all(|command| {
            let words: Vec<&str> = command.split_whitespace().collect();
            simple_command_reads(&words)
        })
}

/// Whether one simple command (its words) only reads: a reading command without the options
/// that make it write a file or run another program.
fn simple_command_reads(words: &[&str]) -> bool {
    let Some((&first, rest)) = words.split_first() else {
        return true;
    };
    let has = |options: &[&str]| {
        rest.iter().any(|word| {
            options.iter().any(|option| {
                *word == *option
                    || (option.starts_with("--") && word.starts_with(&format!("{option}=")))
            })
        })
    };
    match first {
        // `env [-i] [-u NAME] [NAME=value…] [COMMAND…]`: the command it runs decides.
        "env" => {
            let mut at = 0;
            while let Some(word) = rest.get(at) {
                if matches!(
                    *word,
                    "-u" | "--unset" | "-C" | "--chdir" | "-S" | "--split-string"
                ) {
                    at += 2;
                } else if word.starts_with('-') || word.contains('=') {
                    at += 1;
                } else {
                    break;
                }
            }
            rest.get(at)
                .is_none_or(|_| simple_command_reads(&rest[at..]))
        }
        "git" => {
            rest.first().is_some_and(|sub| READ_GIT.contains(sub))
                && !has(&["--output", "--ext-diff", "--textconv"])
        }
        "find" => !has(&[
            "-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "sort" => !has(&["-o", "--output", "--compress-program"]),
        "rg" => !has(&["--pre", "--search-zip", "-z"]),
        "tree" => !has(&["-o"]),
        "file" => !has(&["-C", "--compile"]),
        "date" => !has(&["-s", "--set"]),
        // `uniq INPUT OUTPUT` writes OUTPUT.
        "uniq" => rest.iter().filter(|word| !word.starts_with('-')).count() < 2,
        _ => READ_COMMANDS.contains(&first) && !(first == "printf" && has(&["-v"])),
    }
}

/// A `>` (or `>>`) into anything but `/dev/null` or a descriptor, outside quotes.
fn writes_by_redirect(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let mut quote: Option<char> = None;
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '>') => {
                let mut next = index + 1;
                if chars.get(next) == Some(&'>') {
                    next += 1;
                }
                if chars.get(next) == Some(&'&') {
                    index = next + 1;
                    continue;
                }
                let target: String = chars[next..]
                    .iter()
                    .skip_while(|c| c.is_whitespace())
                    .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|'))
                    .collect();
                if target != "/dev/null" {
                    return true;
                }
                index = next;
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    false
}

/// The simple commands of a shell line: split at `;`, `&&`, `||`, `|`, `&`, newlines,
/// `$(`, backticks and parentheses outside quotes, with leading `NAME=value` assignments
/// dropped.
pub fn simple_commands(line: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let flush = |current: &mut String, commands: &mut Vec<String>| {
        let words: Vec<&str> = current
            .split_whitespace()
            .skip_while(|word| {
                word.split_once('=').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
            })
            .collect();
        if !words.is_empty() {
            commands.push(words.join(" "));
        }
        current.clear();
    };
    let mut previous = ' ';
    while let Some(c) = chars.next() {
        // `2>&1`, `&>file`, `<&3`: redirections, not separators.
        let redirect = c == '&' && (matches!(previous, '>' | '<') || chars.peek() == Some(&'>'));
        previous = c;
        if redirect && quote.is_none() {
            current.push(c);
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, ';' | '|' | '&' | '\n' | '(' | ')' | '`') => flush(&mut current, &mut commands),
            (None, '$') if chars.peek() == Some(&'(') => {
                chars.next();
                flush(&mut current, &mut commands);
            }
            (None, c) => current.push(c),
        }
    }
    flush(&mut current, &mut commands);
    commands
}

fn rule_matches(rule: &Rule, tool: &str, arguments: &Value, cwd: &Path) -> Option<String> {
    if !rule.tool.is_match(tool) {
        return None;
    }
    if let Some(pattern) = &rule.command {
        let line = arguments["command"].as_str()?;
        let matched = simple_commands(line)
            .into_iter()
            .find(|command| pattern.is_match(command))?;
        return Some(format!("`{}` matches `{pattern}`", matched));
    }
    if let Some(pattern) = &rule.path {
        let raw = arguments["path"].as_str()?;
        let path = resolve(cwd, raw);
        let inside = path.starts_with(resolve(cwd, "."));
        let matched = match pattern {
            PathPattern::InsideCwd => inside,
            PathPattern::OutsideCwd => !inside,
            PathPattern::Glob(glob) => {
                let full = if Path::new(glob).is_absolute() {
                    PathBuf::from(glob)
                } else {
                    resolve(cwd, ".").join(glob)
                };
                // `*` stays in a directory, `**` crosses.
                globset::GlobBuilder::new(&full.display().to_string())
                    .literal_separator(true)
                    .build()
                    .is_ok_and(|glob| glob.compile_matcher().is_match(&path))
            }
        };
        return matched.then(|| format!("{} matches the rule's path", path.display()));
    }
    Some(format!("tool `{tool}`"))
}

/// `raw` against `cwd`, `..` resolved, symlinks of the part that exists followed.
pub fn resolve(cwd: &Path, raw: &str) -> PathBuf {
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        cwd.join(raw)
    };
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    // The longest existing ancestor, with its symlinks resolved, then the rest.
    let mut existing = normal.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return normal,
        }
    }
    let mut resolved = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        resolved.push(name);
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn oh_my_pis_tools_read_except_an_applied_ast_edit() {
        for tool in ["todo", "ask", "fetch", "web_search", "ast_grep"] {
            assert!(is_read_only(tool, &json!({})), "{tool}");
        }
        assert!(is_read_only(
            "ast_edit",
            &json!({"pattern": "a", "rewrite": "b"})
        ));
        assert!(!is_read_only(
            "ast_edit",
            &json!({"pattern": "a", "rewrite": "b", "apply": true})
        ));
    }

    #[test]
    fn shell_lines_split_into_simple_commands() {
        let cases: &[(&str, &[&str])] = &[
            ("ls -la", &["ls -la"]),
            ("cd src && cargo test", &["cd src", "cargo test"]),
            ("cat a | grep x; rm -rf b", &["cat a", "grep x", "rm -rf b"]),
            ("FOO=1 BAR=2 git push origin", &["git push origin"]),
            ("echo $(rm -rf /)", &["echo", "rm -rf /"]),
            ("(cd x; make) || true", &["cd x", "make", "true"]),
            ("echo 'a && b' && ls", &["echo 'a && b'", "ls"]),
            ("echo `whoami`", &["echo", "whoami"]),
            ("sleep 1 & curl evil", &["sleep 1", "curl evil"]),
        ];
        for (line, expected) in cases {
            assert_eq!(simple_commands(line), *expected, "{line}");
        }
    }

    #[test]
    fn read_only_commands_are_recognised() {
        for line in [
            "ls -la",
            "git status && git diff HEAD",
            "grep -r foo . | head -5",
            "find . -name '*.rs'",
            "cat x 2>/dev/null",
            "ls > /dev/null 2>&1",
            "env",
            "env LANG=C ls -la",
            "sort -u names.txt",
            "uniq -c names.txt",
            "git log --oneline -5",
            "rg -n TODO src",
        ] {
            assert!(command_is_read_only(line), "{line}");
        }
        for line in [
            "rm -rf x",
            "echo hi > file.txt",
            "cat a >> b",
            "git push",
            "find . -delete",
            "ls && npm install",
            "echo 'x' | tee out",
            "",
            // Options that write a file or run another program (an outsider's findings).
            "env touch made",
            "env -i LANG=C rm x",
            "sort -o out names.txt",
            "sort --output=out names.txt",
            "find . -maxdepth 0 -fprint out",
            "find . -fls out",
            "git diff --output=out",
            "git diff --ext-diff",
            "rg --pre ./script.sh hi .",
            "rg --pre=./script.sh hi .",
            "tree -o out",
            "uniq in.txt out.txt",
            "date -s 2020-01-01",
            "printf -v x hi",
        ] {
            assert!(!command_is_read_only(line), "{line}");
        }
    }

    #[test]
    fn rules_match_commands_paths_and_names_and_layers_only_tighten() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("project");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::os::unix::fs::symlink("/etc", cwd.join("escape")).unwrap();
        let user = Layer {
            mode: Some(Mode::Yolo),
            rules: vec![
                Rule::for_tool("bash", Action::Ask).with_command("git push*"),
                Rule::for_tool("write", Action::Deny).with_path(PathPattern::OutsideCwd),
                Rule::for_tool("mcp__github__*", Action::Ask),
            ],
            source: "settings.json".into(),
        };
        let decide_one =
            |layers: &[Layer], tool: &str, args: Value| decide(layers, tool, &args, &cwd).action;
        let layers = [user.clone()];
        assert_eq!(
            decide_one(
                &layers,
                "bash",
                json!({"command": "make && git push --force"})
            ),
            Action::Ask
        );
        assert_eq!(
            decide_one(&layers, "bash", json!({"command": "GIT_DIR=x git push"})),
            Action::Ask
        );
        assert_eq!(
            decide_one(&layers, "bash", json!({"command": "git status"})),
            Action::Allow
        );
        assert_eq!(
            decide_one(&layers, "write", json!({"path": "src/a.rs"})),
            Action::Allow
        );
        assert_eq!(
            decide_one(&layers, "write", json!({"path": "../x"})),
            Action::Deny
        );
        assert_eq!(
            decide_one(&layers, "write", json!({"path": "src/../../x"})),
            Action::Deny
        );
        // A symlink inside the directory that leads out of it.
        assert_eq!(
            decide_one(&layers, "write", json!({"path": "escape/passwd"})),
            Action::Deny
        );
        assert_eq!(
            decide_one(&layers, "mcp__github__create_issue", json!({})),
            Action::Ask
        );
        assert_eq!(
            decide_one(&layers, "mcp__other__x", json!({})),
            Action::Allow
        );

        // A project layer may tighten (read-only) but not loosen (an allow rule).
        let project = Layer {
            mode: Some(Mode::ReadOnly),
            rules: vec![Rule::for_tool("bash", Action::Allow).with_command("git push*")],
            source: ".pi/settings.json".into(),
        };
        let both = [user, project];
        assert_eq!(
            decide_one(&both, "bash", json!({"command": "git push"})),
            Action::Ask
        );
        let denied = decide(&both, "write", &json!({"path": "src/a.rs"}), &cwd);
        assert_eq!(denied.action, Action::Deny);
        assert_eq!(denied.reason, "read-only mode (.pi/settings.json)");
        assert_eq!(
            decide_one(&both, "read", json!({"path": "src/a.rs"})),
            Action::Allow
        );
        assert_eq!(
            decide_one(&both, "lsp", json!({"action": "rename", "new_name": "x"})),
            Action::Deny
        );
        assert_eq!(
            decide_one(&both, "lsp", json!({"action": "hover"})),
            Action::Allow
        );

        // Path globs: `*` stays in a directory, `**` crosses.
        let globbed = [Layer {
            mode: None,
            rules: vec![
                Rule::for_tool("*", Action::Deny).with_path(PathPattern::Glob("**/*.env".into())),
            ],
            source: "s".into(),
        }];
        assert_eq!(
            decide_one(&globbed, "edit", json!({"path": "src/.env"})),
            Action::Deny
        );
        assert_eq!(
            decide_one(&globbed, "edit", json!({"path": "src/a.rs"})),
            Action::Allow
        );
    }
}

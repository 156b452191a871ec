//! Reads one `settings.json` into a [`SettingsLayer`], reporting every problem as a
//! [`Diagnostic`] naming the file and the key, and loads the layers of a working directory.
//!
//! Rules: a file that is not JSON, or not an object, is ignored as a whole (pi treats it as
//! `{}`), unless it parsed before in this daemon: then its last good version applies until it
//! is fixed or deleted (a half-saved edit never drops the user's defaults); a key with a bad value is ignored (the layers below it apply); an unknown key is
//! reported and ignored; pi's keys that the daemon does not use are accepted silently. pi's
//! legacy forms are migrated on read: `queueMode` → `steeringMode`, and the `skills` object
//! `{enabled, enableSkillCommands, customDirectories}`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use crate::Diagnostic;
use crate::approvals::{Action, Mode, PathPattern, Rule};
use crate::settings::{
    BUILTIN_LSP_SERVERS, LspServerSettings, PathEntry, Settings, SettingsFiles, SettingsLayer,
    TextOrFile,
};

/// pi 0.73's keys that other parts read themselves: `extensions`, `packages` and
/// `npmCommand` (the extension host, with pi's own package manager — decision 0017).
const PI_KEYS_READ_ELSEWHERE: &[&str] = &["extensions", "packages", "npmCommand"];

/// pi 0.73's keys the daemon does not apply, each with why (said once per file as a
/// [`DiagnosticKind::NotApplied`](crate::DiagnosticKind) diagnostic; nothing is dropped
/// silently). Keys of a section name the section (`terminal`: all of `terminal.*`).
const PI_KEYS_NOT_APPLIED: &[(&str, &str)] = &[
    (
        "lastChangelogVersion",
        "it records which of pi's own releases pi has announced; pictl records its own \
         (pictl-changelog-version in the daemon's state directory)",
    ),
    ("enableInstallTelemetry", "the daemon sends no telemetry"),
];

/// The layer each settings file last parsed to, by path: what a bad edit of the file falls back
/// on. Clones share the memory. Bounded by the settings files the daemon has read (two global
/// ones and one per project directory).
#[derive(Clone, Debug, Default)]
pub struct LastGoodLayers(Arc<Mutex<HashMap<PathBuf, SettingsLayer>>>);

impl LastGoodLayers {
    fn remember(&self, path: &Path, layer: &SettingsLayer) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_path_buf(), layer.clone());
    }

    fn forget(&self, path: &Path) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(path);
    }

    fn get(&self, path: &Path) -> Option<SettingsLayer> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .cloned()
    }
}

/// A memory, not part of what the roots are: any two compare equal.
impl PartialEq for LastGoodLayers {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LastGoodLayers {}

/// Reads the layers named by `files`: a missing file is an empty layer, an unreadable one a
/// diagnostic (and its last good version from `last_good`, if any). `home` expands `~` in path
/// values.
pub fn load_settings(
    files: &SettingsFiles,
    home: Option<&Path>,
    last_good: &LastGoodLayers,
) -> (Settings, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let global: Vec<SettingsLayer> = files
        .global
        .iter()
        .map(|path| read_global_layer(path, home, last_good, &mut diagnostics))
        .collect();
    let project = files
        .project
        .as_ref()
        .map(|path| read_layer(path, home, last_good, &mut diagnostics));
    let settings = Settings::merge(&global, project.as_ref());
    // A new language server needs a program and the files it serves, whichever layers
    // set them.
    for (name, entry) in &settings.lsp_servers {
        let known = BUILTIN_LSP_SERVERS.contains(&name.as_str());
        if known || entry.disabled == Some(true) {
            continue;
        }
        let missing: Vec<&str> = [
            ("command", entry.command.is_none()),
            (
                "fileTypes",
                entry.file_types.as_ref().is_none_or(Vec::is_empty),
            ),
        ]
        .into_iter()
        .filter_map(|(field, missing)| missing.then_some(field))
        .collect();
        if missing.is_empty() {
            continue;
        }
        let path = files
            .global
            .iter()
            .zip(&global)
            .chain(files.project.iter().zip(project.iter()))
            .filter(|(_, layer)| layer.lsp_servers.contains_key(name))
            .map(|(path, _)| path.clone())
            .next_back()
            .unwrap_or_default();
        diagnostics.push(Diagnostic::key_warning(
            path,
            format!("lsp.servers.{name}"),
            format!(
                "\"{name}\" is not a built-in language server, so it needs {}; it is ignored",
                missing.join(" and ")
            ),
        ));
    }
    (settings, diagnostics)
}

/// Reads one of the user's own files as a layer: as [`read_layer`], but a file another user
/// could have written (its commands would run as ours) is refused with a diagnostic that says
/// how to fix its owner or mode, and counts as empty.
pub fn read_global_layer(
    path: &Path,
    home: Option<&Path>,
    last_good: &LastGoodLayers,
    diagnostics: &mut Vec<Diagnostic>,
) -> SettingsLayer {
    if let Err(untrusted) = pi_paths::check_trusted(path) {
        diagnostics.push(Diagnostic::warning(
            path,
            format!("is refused, and the file is ignored: {untrusted}"),
        ));
        return SettingsLayer::default();
    }
    read_layer(path, home, last_good, diagnostics)
}

/// Reads one file as a layer (empty when missing). A file that cannot be read or parsed as a
/// whole is its last good version in `last_good` when there is one, else empty.
pub fn read_layer(
    path: &Path,
    home: Option<&Path>,
    last_good: &LastGoodLayers,
    diagnostics: &mut Vec<Diagnostic>,
) -> SettingsLayer {
    let problem = match std::fs::read_to_string(path) {
        Ok(text) => match parse_whole(path, &text, home, diagnostics) {
            Ok(layer) => {
                last_good.remember(path, &layer);
                return layer;
            }
            Err(problem) => problem,
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            last_good.forget(path);
            return SettingsLayer::default();
        }
        Err(error) => format!("cannot be read ({error})"),
    };
    match last_good.get(path) {
        Some(layer) => {
            diagnostics.push(Diagnostic::warning(
                path,
                format!(
                    "{problem}; the daemon keeps using the file's last good version until it is fixed"
                ),
            ));
            layer
        }
        None => {
            diagnostics.push(Diagnostic::warning(
                path,
                format!("{problem}; the file is ignored"),
            ));
            SettingsLayer::default()
        }
    }
}

/// Parses the text of the settings file at `path`.
pub fn parse_layer(
    path: &Path,
    text: &str,
    home: Option<&Path>,
    diagnostics: &mut Vec<Diagnostic>,
) -> SettingsLayer {
    parse_whole(path, text, home, diagnostics).unwrap_or_else(|problem| {
        diagnostics.push(Diagnostic::warning(
            path,
            format!("{problem}; the file is ignored"),
        ));
        SettingsLayer::default()
    })
}

/// The layer of a file that is a JSON object (with diagnostics for its bad keys), or what is
/// wrong with the file as a whole.
fn parse_whole(
    path: &Path,
    text: &str,
    home: Option<&Path>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<SettingsLayer, String> {
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return Err(format!("is not valid JSON ({error})")),
    };
    let Value::Object(object) = value else {
        return Err(format!("must be a JSON object, not {}", kind(&value)));
    };
    let base_dir = path.parent().unwrap_or(path).to_path_buf();
    let mut reader = LayerReader {
        path,
        base_dir,
        home,
        diagnostics,
    };
    Ok(reader.layer(&object))
}

struct LayerReader<'a> {
    path: &'a Path,
    base_dir: PathBuf,
    home: Option<&'a Path>,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl LayerReader<'_> {
    fn layer(&mut self, object: &Map<String, Value>) -> SettingsLayer {
        let mut layer = SettingsLayer::default();
        for (key, value) in object {
            match key.as_str() {
                "defaultProvider" => layer.default_provider = self.string(key, value),
                "defaultModel" => layer.default_model = self.string(key, value),
                "defaultThinkingLevel" => {
                    layer.default_thinking_level = self.string(key, value).and_then(|text| {
                        text.parse()
                            .map_err(|_| {
                                self.bad(key, "off, minimal, low, medium, high or xhigh", value)
                            })
                            .ok()
                    });
                }
                "steeringMode" | "queueMode" => {
                    if key == "queueMode" && object.contains_key("steeringMode") {
                        continue;
                    }
                    layer.steering_mode = self.queue_mode(key, value);
                }
                "followUpMode" => layer.follow_up_mode = self.queue_mode(key, value),
                "compaction" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("compaction.{sub}");
                        match sub.as_str() {
                            "enabled" => layer.compaction_enabled = self.boolean(&dotted, value),
                            "reserveTokens" => {
                                layer.compaction_reserve_tokens = self.integer(&dotted, value);
                            }
                            "keepRecentTokens" => {
                                layer.compaction_keep_recent_tokens = self.integer(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "branchSummary" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("branchSummary.{sub}");
                        match sub.as_str() {
                            "reserveTokens" => {
                                layer.branch_summary_reserve_tokens = self.integer(&dotted, value);
                            }
                            "skipPrompt" => {
                                layer.branch_summary_skip_prompt = self.boolean(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "retry" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("retry.{sub}");
                        match sub.as_str() {
                            "enabled" => layer.retry_enabled = self.boolean(&dotted, value),
                            "maxRetries" => {
                                layer.retry_max_retries = self
                                    .integer(&dotted, value)
                                    .and_then(|n| u32::try_from(n).ok());
                            }
                            "baseDelayMs" => {
                                layer.retry_base_delay_ms = self.integer(&dotted, value)
                            }
                            "maxDelayMs" => layer.retry_max_delay_ms = self.integer(&dotted, value),
                            "provider" => {
                                for (sub, value) in self.object(&dotted, value) {
                                    let dotted = format!("retry.provider.{sub}");
                                    match sub.as_str() {
                                        // pi 0.73's spelling of the longest wait a
                                        // provider may ask for before a retry.
                                        "maxRetryDelayMs" => {
                                            layer.retry_max_delay_ms = self.integer(&dotted, value);
                                        }
                                        "timeoutMs" => {
                                            layer.retry_provider_timeout_ms =
                                                self.integer(&dotted, value);
                                        }
                                        "maxRetries" => {
                                            layer.retry_provider_max_retries = self
                                                .integer(&dotted, value)
                                                .and_then(|n| u32::try_from(n).ok());
                                        }
                                        _ => self.unknown(&dotted),
                                    }
                                }
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "mcp" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("mcp.{sub}");
                        match sub.as_str() {
                            "enabled" => layer.mcp_enabled = self.boolean(&dotted, value),
                            "disabledServers" => {
                                layer.mcp_disabled_servers = self.strings(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "lsp" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("lsp.{sub}");
                        match sub.as_str() {
                            "diagnosticsOnWrite" => {
                                layer.lsp_diagnostics_on_write = self.boolean(&dotted, value);
                            }
                            "diagnosticsOnEdit" => {
                                layer.lsp_diagnostics_on_edit = self.boolean(&dotted, value);
                            }
                            "idleTimeoutMs" => {
                                layer.lsp_idle_timeout_ms = self.integer(&dotted, value);
                            }
                            "servers" => {
                                for (name, value) in self.object(&dotted, value) {
                                    let entry = self.lsp_server(&format!("{dotted}.{name}"), value);
                                    layer.lsp_servers.insert(name.clone(), entry);
                                }
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "approvals" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("approvals.{sub}");
                        match sub.as_str() {
                            "mode" => {
                                layer.approvals_mode =
                                    self.string(&dotted, value).and_then(|mode| {
                                        if Mode::parse(&mode).is_some() {
                                            Some(mode)
                                        } else {
                                            self.bad(
                                                &dotted,
                                                "yolo, ask-writes, ask-all or read-only",
                                                value,
                                            );
                                            None
                                        }
                                    });
                            }
                            "askTimeoutMs" => {
                                layer.approvals_ask_timeout_ms = self.integer(&dotted, value)
                            }
                            "rules" => layer.approvals_rules = Some(self.rules(&dotted, value)),
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "sandbox" if value.is_string() => {
                    layer.sandbox_mode = self.sandbox_mode(key, value)
                }
                "sandbox" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("sandbox.{sub}");
                        match sub.as_str() {
                            "mode" => layer.sandbox_mode = self.sandbox_mode(&dotted, value),
                            "network" => layer.sandbox_network = self.boolean(&dotted, value),
                            "writableRoots" => {
                                layer.sandbox_writable_roots = self.strings(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "sessionEnv" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("sessionEnv.{sub}");
                        match sub.as_str() {
                            "exclude" => layer.session_env_exclude = self.strings(&dotted, value),
                            "include" => layer.session_env_include = self.strings(&dotted, value),
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "task" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("task.{sub}");
                        let target = match sub.as_str() {
                            "maxConcurrency" => &mut layer.task_max_concurrency,
                            "maxRunning" => &mut layer.task_max_running,
                            "maxDepth" => &mut layer.task_max_depth,
                            "maxTurns" => &mut layer.task_max_turns,
                            "idleTimeoutMs" => &mut layer.task_idle_timeout_ms,
                            "loopLimit" => &mut layer.task_loop_limit,
                            _ => {
                                self.unknown(&dotted);
                                continue;
                            }
                        };
                        *target = self.integer(&dotted, value);
                    }
                }
                "shellPath" => layer.shell_path = self.string(key, value),
                "shellCommandPrefix" => layer.shell_command_prefix = self.string(key, value),
                "skills" if value.is_object() => {
                    // pi's legacy form.
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("skills.{sub}");
                        match sub.as_str() {
                            "enabled" => layer.discover_skills = self.boolean(&dotted, value),
                            "enableSkillCommands" => {
                                layer.enable_skill_commands = self.boolean(&dotted, value);
                            }
                            "customDirectories" => layer.skills = self.paths(&dotted, value),
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "skills" => layer.skills = self.paths(key, value),
                "enableSkillCommands" => layer.enable_skill_commands = self.boolean(key, value),
                "prompts" => layer.prompts = self.paths(key, value),
                "theme" => layer.theme = self.string(key, value),
                "themes" => layer.themes = self.paths(key, value),
                "enabledModels" => layer.enabled_models = self.strings(key, value),
                "ompTools" => layer.omp_tools = self.omp_tools(key, value),
                "disabledProviders" => layer.disabled_providers = self.strings(key, value),
                "ttsr" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("ttsr.{sub}");
                        match sub.as_str() {
                            "enabled" => layer.ttsr_enabled = self.boolean(&dotted, value),
                            "contextMode" => match value.as_str() {
                                Some("discard") => layer.ttsr_keep_partial = Some(false),
                                Some("keep") => layer.ttsr_keep_partial = Some(true),
                                _ => self.bad(&dotted, "\"discard\" or \"keep\"", value),
                            },
                            "repeatMode" => match value.as_str() {
                                Some("once") => layer.ttsr_after_gap = Some(false),
                                Some("after-gap") => layer.ttsr_after_gap = Some(true),
                                _ => self.bad(&dotted, "\"once\" or \"after-gap\"", value),
                            },
                            "repeatGap" => layer.ttsr_repeat_gap = self.integer(&dotted, value),
                            "interruptMode" => {
                                match value.as_str().and_then(crate::ttsr::InterruptMode::parse) {
                                    Some(mode) => layer.ttsr_interrupt_mode = Some(mode),
                                    None => self.bad(
                                        &dotted,
                                        "\"always\", \"prose-only\", \"tool-only\" or \"never\"",
                                        value,
                                    ),
                                }
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "sessionDir" => layer.session_dir = self.string(key, value),
                "hideThinkingBlock" => layer.hide_thinking_block = self.boolean(key, value),
                "transport" => {
                    layer.transport = self.string(key, value).and_then(|name| {
                        let transport = pi_llm::Transport::parse(&name);
                        if transport.is_none() {
                            self.bad(key, "one of sse, websocket, websocket-cached, auto", value);
                        }
                        transport
                    });
                }
                // pi's older spelling, used when `transport` is not set.
                "websockets" => {
                    if let Some(on) = self.boolean(key, value)
                        && !object.contains_key("transport")
                    {
                        layer.transport = Some(if on {
                            pi_llm::Transport::WebSocket
                        } else {
                            pi_llm::Transport::Sse
                        });
                    }
                }
                "doubleEscapeAction" => {
                    layer.tui.double_escape_action =
                        self.one_of(key, value, &["tree", "fork", "none"]);
                }
                "treeFilterMode" => {
                    layer.tui.tree_filter_mode = self.one_of(
                        key,
                        value,
                        &["default", "no-tools", "user-only", "labeled-only", "all"],
                    );
                }
                "editorPaddingX" => layer.tui.editor_padding_x = self.within(key, value, 0, 3),
                "autocompleteMaxVisible" => {
                    layer.tui.autocomplete_max_visible = self.within(key, value, 3, 20);
                }
                "showHardwareCursor" => {
                    layer.tui.show_hardware_cursor = self.boolean(key, value);
                }
                "quietStartup" => layer.tui.quiet_startup = self.boolean(key, value),
                "collapseChangelog" => {
                    layer.tui.collapse_changelog = self.boolean(key, value);
                }
                "markdown" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("markdown.{sub}");
                        match sub.as_str() {
                            "codeBlockIndent" => {
                                layer.tui.code_block_indent = self.string(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "terminal" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("terminal.{sub}");
                        match sub.as_str() {
                            "showTerminalProgress" => {
                                layer.tui.show_terminal_progress = self.boolean(&dotted, value);
                            }
                            "showImages" => layer.tui.show_images = self.boolean(&dotted, value),
                            // pi's: a number, floored, at least 1.
                            "imageWidthCells" => match value.as_f64() {
                                Some(cells) if cells.is_finite() => {
                                    layer.tui.image_width_cells =
                                        Some(cells.floor().clamp(1.0, 1000.0) as u16);
                                }
                                _ => self.bad(&dotted, "a number of cells", value),
                            },
                            "clearOnShrink" => self.not_applied(
                                &dotted,
                                "the TUI draws whole frames on the alternate screen, so rows a \
                                 shrinking view leaves are always cleared",
                            ),
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "warnings" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("warnings.{sub}");
                        match sub.as_str() {
                            "anthropicExtraUsage" => {
                                layer.tui.warn_anthropic_extra_usage = self.boolean(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                "piSessionWriteBack" => {
                    layer.pi_session_write_back = self.boolean(key, value);
                }
                "systemPrompt" => layer.system_prompt = self.text_or_file(key, value),
                "appendSystemPrompt" => layer.append_system_prompt = self.text_or_file(key, value),
                "thinkingBudgets" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("thinkingBudgets.{sub}");
                        let slot = match sub.as_str() {
                            "minimal" => 0,
                            "low" => 1,
                            "medium" => 2,
                            "high" => 3,
                            _ => {
                                self.unknown(&dotted);
                                continue;
                            }
                        };
                        layer.thinking_budgets[slot] = self.integer(&dotted, value);
                    }
                }
                "images" => {
                    for (sub, value) in self.object(key, value) {
                        let dotted = format!("images.{sub}");
                        match sub.as_str() {
                            "blockImages" => layer.block_images = self.boolean(&dotted, value),
                            "autoResize" => {
                                layer.auto_resize_images = self.boolean(&dotted, value);
                            }
                            _ => self.unknown(&dotted),
                        }
                    }
                }
                other if PI_KEYS_READ_ELSEWHERE.contains(&other) => {}
                other => match PI_KEYS_NOT_APPLIED.iter().find(|(name, _)| *name == other) {
                    Some((_, why)) => self.not_applied(key, why),
                    None => self.unknown(key),
                },
            }
        }
        layer
    }

    fn bad(&mut self, key: &str, expected: &str, value: &Value) {
        self.diagnostics.push(Diagnostic::key_warning(
            self.path,
            key,
            format!(
                "expected {expected}, found {}; the value is ignored",
                shown(value)
            ),
        ));
    }

    fn rules(&mut self, key: &str, value: &Value) -> Vec<Rule> {
        let Value::Array(items) = value else {
            self.bad(key, "an array of rules", value);
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let dotted = format!("{key}[{index}]");
            let mut tool = String::new();
            let mut command = None;
            let mut path = None;
            let mut action = None;
            for (field, value) in self.object(&dotted, item) {
                let field_key = format!("{dotted}.{field}");
                match field.as_str() {
                    "tool" => tool = self.string(&field_key, value).unwrap_or_default(),
                    "command" => command = self.string(&field_key, value),
                    "path" => {
                        path = self
                            .string(&field_key, value)
                            .map(|path| match path.as_str() {
                                "inside-cwd" => PathPattern::InsideCwd,
                                "outside-cwd" => PathPattern::OutsideCwd,
                                _ => PathPattern::Glob(path),
                            });
                    }
                    "action" => {
                        action = self.string(&field_key, value).and_then(|text| {
                            let parsed = Action::parse(&text);
                            if parsed.is_none() {
                                self.bad(&field_key, "allow, ask or deny", value);
                            }
                            parsed
                        });
                    }
                    _ => self.unknown(&field_key),
                }
            }
            match (tool.is_empty(), action) {
                (false, Some(action)) => {
                    let mut rule = Rule::for_tool(&tool, action);
                    if let Some(command) = command {
                        rule = rule.with_command(&command);
                    }
                    if let Some(path) = path {
                        rule = rule.with_path(path);
                    }
                    rules.push(rule);
                }
                _ => self.diagnostics.push(Diagnostic::key_warning(
                    self.path,
                    dotted,
                    "a rule needs `tool` and `action` (allow, ask or deny); it is ignored",
                )),
            }
        }
        rules
    }

    fn lsp_server(&mut self, key: &str, value: &Value) -> LspServerSettings {
        let mut entry = LspServerSettings::default();
        for (field, value) in self.object(key, value) {
            let dotted = format!("{key}.{field}");
            match field.as_str() {
                "command" => entry.command = self.string(&dotted, value),
                "args" => entry.args = self.strings(&dotted, value),
                "fileTypes" => {
                    entry.file_types = self.strings(&dotted, value).map(|types| {
                        types
                            .into_iter()
                            .map(|kind| kind.trim_start_matches('.').to_owned())
                            .collect()
                    });
                }
                "rootMarkers" => entry.root_markers = self.strings(&dotted, value),
                "initializationOptions" | "settings" => {
                    let value = if value.is_object() {
                        Some(value.clone())
                    } else {
                        self.bad(&dotted, "an object", value);
                        None
                    };
                    if field == "settings" {
                        entry.settings = value;
                    } else {
                        entry.initialization_options = value;
                    }
                }
                "disabled" => entry.disabled = self.boolean(&dotted, value),
                _ => self.unknown(&dotted),
            }
        }
        entry
    }

    fn not_applied(&mut self, key: &str, why: &str) {
        self.diagnostics.push(Diagnostic {
            kind: crate::DiagnosticKind::NotApplied,
            path: self.path.to_path_buf(),
            key: Some(key.to_owned()),
            message: format!("pi's setting is not applied: {why}"),
        });
    }

    /// A string that must be one of `allowed`.
    fn one_of(&mut self, key: &str, value: &Value, allowed: &[&str]) -> Option<String> {
        match value {
            Value::String(text) if allowed.contains(&text.as_str()) => Some(text.clone()),
            _ => {
                let expected = match allowed {
                    [init @ .., last] if !init.is_empty() => {
                        format!("{} or {last}", init.join(", "))
                    }
                    _ => allowed.join(""),
                };
                self.bad(key, &expected, value);
                None
            }
        }
    }

    /// A whole number from `min` to `max`.
    fn within(&mut self, key: &str, value: &Value, min: u8, max: u8) -> Option<u8> {
        match value.as_u64().and_then(|n| u8::try_from(n).ok()) {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.bad(key, &format!("a whole number from {min} to {max}"), value);
                None
            }
        }
    }

    fn unknown(&mut self, key: &str) {
        self.diagnostics.push(Diagnostic::key_warning(
            self.path,
            key,
            "unknown key; it is ignored",
        ));
    }

    fn string(&mut self, key: &str, value: &Value) -> Option<String> {
        match value {
            Value::String(text) => Some(text.clone()),
            _ => {
                self.bad(key, "a string", value);
                None
            }
        }
    }

    fn boolean(&mut self, key: &str, value: &Value) -> Option<bool> {
        match value {
            Value::Bool(flag) => Some(*flag),
            _ => {
                self.bad(key, "true or false", value);
                None
            }
        }
    }

    fn integer(&mut self, key: &str, value: &Value) -> Option<u64> {
        match value.as_u64() {
            Some(number) if number <= u64::from(u32::MAX) => Some(number),
            _ => {
                self.bad(key, "a non-negative integer", value);
                None
            }
        }
    }

    fn sandbox_mode(&mut self, key: &str, value: &Value) -> Option<String> {
        match value.as_str() {
            Some(mode @ ("off" | "workspace-write" | "read-only")) => Some(mode.to_owned()),
            _ => {
                self.bad(key, "\"off\", \"workspace-write\" or \"read-only\"", value);
                None
            }
        }
    }

    fn queue_mode(&mut self, key: &str, value: &Value) -> Option<pi_agent::QueueMode> {
        match value.as_str() {
            Some("all") => Some(pi_agent::QueueMode::All),
            Some("one-at-a-time") => Some(pi_agent::QueueMode::OneAtATime),
            _ => {
                self.bad(key, "\"all\" or \"one-at-a-time\"", value);
                None
            }
        }
    }

    fn object<'v>(&mut self, key: &str, value: &'v Value) -> Vec<(&'v String, &'v Value)> {
        match value {
            Value::Object(object) => object.iter().collect(),
            _ => {
                self.bad(key, "an object", value);
                Vec::new()
            }
        }
    }

    fn text_or_file(&mut self, key: &str, value: &Value) -> Option<TextOrFile> {
        self.string(key, value).map(|value| TextOrFile {
            value,
            base_dir: self.base_dir.clone(),
        })
    }

    /// `ompTools`: `true` (all), `false` (none) or a list of names from [`OMP_TOOLS`].
    fn omp_tools(&mut self, key: &str, value: &Value) -> Option<Vec<String>> {
        use crate::settings::OMP_TOOLS;
        match value {
            Value::Bool(true) => Some(OMP_TOOLS.iter().map(|name| (*name).to_owned()).collect()),
            Value::Bool(false) => Some(Vec::new()),
            Value::Array(_) => {
                let names = self.strings(key, value)?;
                let (known, unknown): (Vec<String>, Vec<String>) = names
                    .into_iter()
                    .partition(|name| OMP_TOOLS.contains(&name.as_str()));
                for name in unknown {
                    self.diagnostics.push(Diagnostic::key_warning(
                        self.path,
                        key,
                        format!(
                            "unknown tool `{name}` (oh-my-pi's tools here are {}); it is ignored",
                            OMP_TOOLS.join(", ")
                        ),
                    ));
                }
                Some(known)
            }
            _ => {
                self.bad(key, "true, false or an array of tool names", value);
                None
            }
        }
    }

    fn strings(&mut self, key: &str, value: &Value) -> Option<Vec<String>> {
        let Value::Array(items) = value else {
            self.bad(key, "an array of strings", value);
            return None;
        };
        Some(
            items
                .iter()
                .enumerate()
                .filter_map(|(index, item)| self.string(&format!("{key}[{index}]"), item))
                .collect(),
        )
    }

    fn paths(&mut self, key: &str, value: &Value) -> Vec<PathEntry> {
        let Value::Array(items) = value else {
            self.bad(key, "an array of paths", value);
            return Vec::new();
        };
        let mut entries = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let item_key = format!("{key}[{index}]");
            let Some(text) = self.string(&item_key, item) else {
                continue;
            };
            let (exclude, raw) = match text.chars().next() {
                Some('!' | '-') => (true, &text[1..]),
                Some('+') => (false, &text[1..]),
                _ => (false, text.as_str()),
            };
            if raw.contains(['*', '?', '[']) {
                self.diagnostics.push(Diagnostic::key_warning(
                    self.path,
                    item_key,
                    format!("glob patterns are not supported yet ({text:?}); the entry is ignored"),
                ));
                continue;
            }
            let expanded = crate::expand_home(raw.trim(), self.home);
            entries.push(PathEntry {
                path: pi_paths::lexical::normalize(&self.base_dir.join(expanded)),
                exclude,
            });
        }
        entries
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short rendering of a bad value for a diagnostic (never long: settings hold no secrets,
/// but a pasted file might be large).
fn shown(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => kind(value).to_owned(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            let text = value.to_string();
            match text.char_indices().nth(40) {
                Some((at, _)) => format!("{}…", &text[..at]),
                None => text,
            }
        }
    }
}

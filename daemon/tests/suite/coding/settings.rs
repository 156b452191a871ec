//! Settings layering (pi's global < ours < project), diagnostics naming file and key, and
//! `settings/setDefault`'s writes.

use pi_daemon::coding::settings_write::set_defaults;
use pi_daemon::coding::{ResourceRoots, Settings};
use serde_json::{Map, Value, json};

use super::Tree;

/// Files under `pi/` (pi's agent dir), `ours/` (our config dir) and `project/` (the cwd).
fn load(tree: &Tree) -> (Settings, String) {
    let roots = ResourceRoots {
        pi_agent_dir: Some(tree.path("pi")),
        config_dir: Some(tree.path("ours")),
        home: Some(tree.path("home")),
        ..ResourceRoots::default()
    };
    let (settings, diagnostics) = roots.load_settings(Some(&tree.path("project")));
    let diagnostics: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
    (settings, tree.redact(&diagnostics.join("\n")))
}

/// The settings the daemon reads, one line.
fn render(tree: &Tree, settings: &Settings) -> String {
    let paths = |entries: &[pi_daemon::coding::settings::PathEntry]| {
        entries
            .iter()
            .map(|entry| {
                let sign = if entry.exclude { "-" } else { "" };
                tree.redact(&format!("{sign}{}", entry.path.display()))
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let mode = |mode: Option<pi_agent::QueueMode>| match mode {
        None => "-",
        Some(pi_agent::QueueMode::All) => "all",
        Some(pi_agent::QueueMode::OneAtATime) => "one",
    };
    format!(
        "model={}/{} thinking={} steer={} follow={} compaction={}/{}/{} branch={}/{} \
         retry={}/{}/{}/{} shell={} skills=[{}] prompts=[{}] discover={} commands={} system={}",
        settings.default_provider.as_deref().unwrap_or("-"),
        settings.default_model.as_deref().unwrap_or("-"),
        settings
            .default_thinking_level
            .map_or("-", |level| level.as_str()),
        mode(settings.steering_mode),
        mode(settings.follow_up_mode),
        settings.compaction.enabled,
        settings.compaction.reserve_tokens,
        settings.compaction.keep_recent_tokens,
        settings.branch_summary.reserve_tokens,
        settings.branch_summary.skip_prompt,
        settings.retry.enabled,
        settings.retry.max_retries,
        settings.retry.base_delay_ms,
        settings.retry.max_delay_ms,
        settings.shell_path.as_deref().unwrap_or("-"),
        paths(&settings.skills),
        paths(&settings.prompts),
        settings.discover_skills,
        settings.enable_skill_commands,
        settings
            .system_prompt
            .as_ref()
            .map_or("-", |text| text.value.as_str()),
    )
}

fn check(files: &[(&str, &str)], expect: &str) {
    let tree = Tree::new(files);
    let (settings, diagnostics) = load(&tree);
    assert_eq!(diagnostics, "", "for {files:?}");
    assert_eq!(render(&tree, &settings), expect, "for {files:?}");
}

#[test]
fn layers_merge_project_over_ours_over_pi() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[],
            "model=-/- thinking=- steer=- follow=- compaction=true/16384/20000 branch=16384/false \
             retry=true/3/2000/60000 shell=- skills=[] prompts=[] discover=true commands=true system=-",
        ),
        (
            &[
                (
                    "pi/settings.json",
                    r#"{"defaultProvider": "anthropic", "defaultModel": "a", "defaultThinkingLevel": "high"}"#,
                ),
                ("ours/settings.json", r#"{"defaultModel": "b"}"#),
            ],
            "model=anthropic/b thinking=high steer=- follow=- compaction=true/16384/20000 \
             branch=16384/false retry=true/3/2000/60000 shell=- skills=[] prompts=[] discover=true \
             commands=true system=-",
        ),
        (
            // Nested objects merge one level; the project wins key by key.
            &[
                (
                    "pi/settings.json",
                    r#"{"compaction": {"enabled": false, "reserveTokens": 1000}, "retry": {"maxRetries": 9}}"#,
                ),
                (
                    "ours/settings.json",
                    r#"{"retry": {"baseDelayMs": 10}, "shellPath": "/bin/zsh"}"#,
                ),
                (
                    "project/.pi/settings.json",
                    r#"{"compaction": {"reserveTokens": 2000}, "retry": {"enabled": false}, "branchSummary": {"skipPrompt": true}}"#,
                ),
            ],
            "model=-/- thinking=- steer=- follow=- compaction=false/2000/20000 branch=16384/true \
             retry=false/9/10/60000 shell=/bin/zsh skills=[] prompts=[] discover=true commands=true \
             system=-",
        ),
        (
            // pi's legacy queueMode is steeringMode, unless steeringMode is there too.
            &[
                (
                    "pi/settings.json",
                    r#"{"queueMode": "all", "followUpMode": "all"}"#,
                ),
                (
                    "project/.pi/settings.json",
                    r#"{"queueMode": "all", "steeringMode": "one-at-a-time"}"#,
                ),
            ],
            "model=-/- thinking=- steer=one follow=all compaction=true/16384/20000 branch=16384/false \
             retry=true/3/2000/60000 shell=- skills=[] prompts=[] discover=true commands=true system=-",
        ),
        (
            // Path entries accumulate (project first, then ours, then pi's), relative to their
            // file, with ~ expanded; pi's legacy skills object still works.
            &[
                (
                    "pi/settings.json",
                    r#"{"skills": {"enabled": false, "customDirectories": ["legacy"], "enableSkillCommands": false}}"#,
                ),
                (
                    "ours/settings.json",
                    r#"{"skills": ["~/mine", "-skip"], "prompts": ["/abs/prompts"]}"#,
                ),
                (
                    "project/.pi/settings.json",
                    r#"{"skills": ["+local", "!../vendored"], "prompts": ["p"], "systemPrompt": "Be brief."}"#,
                ),
            ],
            "model=-/- thinking=- steer=- follow=- compaction=true/16384/20000 branch=16384/false \
             retry=true/3/2000/60000 shell=- skills=[<root>/project/.pi/local,-<root>/project/vendored,\
             <root>/home/mine,-<root>/ours/skip,<root>/pi/legacy] prompts=[<root>/project/.pi/p,/abs/prompts] \
             discover=false commands=false system=Be brief.",
        ),
        (
            // pi's keys other parts read (the extension host) are accepted here without a
            // word.
            &[(
                "pi/settings.json",
                r#"{"packages": [], "extensions": [], "npmCommand": ["pnpm"]}"#,
            )],
            "model=-/- thinking=- steer=- follow=- compaction=true/16384/20000 branch=16384/false \
             retry=true/3/2000/60000 shell=- skills=[] prompts=[] discover=true commands=true system=-",
        ),
    ];
    for (files, expect) in cases {
        check(files, expect);
    }
}

#[test]
fn bad_files_and_keys_are_diagnostics_naming_file_and_key() {
    let tree = Tree::new(&[
        ("pi/settings.json", "{ not json"),
        ("ours/settings.json", "[1, 2]"),
        (
            "project/.pi/settings.json",
            r#"{
                "defaultModel": 42,
                "defaultThinkingLevel": "extreme",
                "steeringMode": "some",
                "compaction": {"enabled": "yes", "reserveTokens": -5, "keepRecent": 1},
                "branchSummary": true,
                "retry": {"maxRetries": 1.5, "maxDelayMs": 1000},
                "skills": ["ok", 7, "src/**/SKILL.md"],
                "prompts": "not-a-list",
                "enableSkillCommands": "false",
                "unknownKey": {"deep": true},
                "defaultProvider": "still-read"
            }"#,
        ),
    ]);
    let (settings, diagnostics) = load(&tree);
    // Good keys of a file with bad ones still apply.
    assert_eq!(settings.default_provider.as_deref(), Some("still-read"));
    assert_eq!(settings.retry.max_delay_ms, 1000);
    assert_eq!(settings.skills.len(), 1);
    insta::assert_snapshot!(diagnostics);
}

#[test]
fn a_bad_edit_keeps_the_files_last_good_version_until_it_is_fixed_or_deleted() {
    let tree = Tree::new(&[
        ("ours/settings.json", r#"{"defaultModel": "from-ours"}"#),
        (
            "project/.pi/settings.json",
            r#"{"retry": {"maxRetries": 7}}"#,
        ),
    ]);
    let roots = ResourceRoots {
        pi_agent_dir: Some(tree.path("pi")),
        config_dir: Some(tree.path("ours")),
        home: Some(tree.path("home")),
        ..ResourceRoots::default()
    };
    let project = tree.path("project");
    let load = || {
        let (settings, diagnostics) = roots.load_settings(Some(&project));
        let diagnostics: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        (settings, tree.redact(&diagnostics.join("\n")))
    };
    let (settings, diagnostics) = load();
    assert_eq!(diagnostics, "");
    assert_eq!(settings.default_model.as_deref(), Some("from-ours"));

    // A half-saved edit of each file: the values read before still apply. A clone of the
    // roots (what each session holds) shares the memory.
    tree.write("ours/settings.json", r#"{"defaultModel": "#);
    tree.write("project/.pi/settings.json", "[]");
    let (settings, diagnostics) = load();
    assert_eq!(settings.default_model.as_deref(), Some("from-ours"));
    assert_eq!(settings.retry.max_retries, 7);
    assert_eq!(
        diagnostics,
        "warning: <root>/ours/settings.json: is not valid JSON (EOF while parsing a value at line 1 \
         column 17); the daemon keeps using the file's last good version until it is fixed\n\
         warning: <root>/project/.pi/settings.json: must be a JSON object, not an array; the daemon keeps \
         using the file's last good version until it is fixed"
    );
    let (from_clone, _) = roots.clone().load_settings(Some(&project));
    assert_eq!(from_clone, settings);

    // Fixed: the new values apply. Deleted, then broken: nothing is left to fall back on.
    tree.write("ours/settings.json", r#"{"defaultModel": "fixed"}"#);
    let (settings, diagnostics) = load();
    assert_eq!(settings.default_model.as_deref(), Some("fixed"));
    assert!(!diagnostics.contains("ours/settings.json"), "{diagnostics}");
    std::fs::remove_file(tree.path("ours/settings.json")).unwrap();
    assert_eq!(load().0.default_model, None);
    tree.write("ours/settings.json", "{");
    let (settings, diagnostics) = load();
    assert_eq!(settings.default_model, None);
    assert!(
        diagnostics.contains("ours/settings.json: is not valid JSON")
            && diagnostics.contains("; the file is ignored"),
        "{diagnostics}"
    );
}

/// Runs `set_defaults` on a file holding `existing` (absent: no file) and shows the file
/// afterwards, or the error (and that the file is unchanged).
fn check_write(existing: Option<&str>, values: Value, unset: &[&str], expect: &str) {
    let tree = Tree::new(&[]);
    let path = tree.path("config/settings.json");
    if let Some(existing) = existing {
        tree.write("config/settings.json", existing);
    }
    let values: Map<String, Value> = serde_json::from_value(values).unwrap();
    let unset: Vec<String> = unset.iter().map(|key| (*key).to_owned()).collect();
    let actual = match set_defaults(&path, &values, &unset) {
        Ok(()) => std::fs::read_to_string(&path).unwrap(),
        Err(error) => {
            let after = std::fs::read_to_string(&path).ok();
            assert_eq!(
                after.as_deref(),
                existing,
                "a refused change leaves the file"
            );
            format!("error: {}", tree.redact(&error.to_string()))
        }
    };
    assert_eq!(actual.trim_end(), expect, "for {existing:?} and {values:?}");
    let leftovers: Vec<_> = std::fs::read_dir(tree.path("config"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.len() <= 1, "temporary files left: {leftovers:?}");
}

#[test]
fn set_default_merges_validates_and_keeps_other_keys() {
    check_write(
        None,
        json!({"defaultModel": "m", "retry": {"maxRetries": 5}}),
        &[],
        "{\n  \"defaultModel\": \"m\",\n  \"retry\": {\n    \"maxRetries\": 5\n  }\n}",
    );
    check_write(
        Some(
            r#"{"theme": "dark", "retry": {"enabled": false, "baseDelayMs": 1}, "defaultProvider": "x"}"#,
        ),
        json!({"retry": {"maxRetries": 5}, "steeringMode": "all"}),
        &["defaultProvider", "retry.baseDelayMs", "never.there"],
        // The file keeps its keys' order; new keys go last.
        "{\n  \"theme\": \"dark\",\n  \"retry\": {\n    \"enabled\": false,\n    \"maxRetries\": 5\n  },\n  \"steeringMode\": \"all\"\n}",
    );
    check_write(
        Some(r#"{"retry": {"maxRetries": 1}}"#),
        json!({}),
        &["retry.maxRetries"],
        "{}",
    );
    check_write(
        Some(r#"{"theme": "dark"}"#),
        json!({"retry": {"maxRetries": "many"}, "bogus": 1}),
        &[],
        // Problems are listed in the order the keys were given.
        "error: invalid settings: `retry.maxRetries`: expected a non-negative integer, found \
         \"many\"; the value is ignored; `bogus`: unknown key; it is ignored",
    );
    check_write(
        Some("{ broken"),
        json!({"defaultModel": "m"}),
        &[],
        "error: <root>/config/settings.json is not a JSON object (key must be a string at line 1 \
         column 3); fix or remove it first",
    );
}

#[test]
fn mcp_settings_layer_and_bad_values_are_diagnostics() {
    let tree = Tree::new(&[
        (
            "ours/settings.json",
            r#"{"mcp": {"disabledServers": ["browser"]}}"#,
        ),
        (
            "project/.pi/settings.json",
            r#"{"mcp": {"enabled": false, "disabledServers": "browser", "other": 1}}"#,
        ),
    ]);
    let (settings, diagnostics) = load(&tree);
    assert!(!settings.mcp_enabled);
    // The project's bad list is ignored; the global one applies.
    assert_eq!(settings.mcp_disabled_servers, ["browser"]);
    assert!(
        diagnostics.contains(
            "`mcp.disabledServers`: expected an array of strings, found \"browser\"; the value is \
             ignored"
        ),
        "{diagnostics}"
    );
    assert!(diagnostics.contains("`mcp.other`"), "{diagnostics}");
    let defaults = Settings::default();
    assert!(defaults.mcp_enabled && defaults.mcp_disabled_servers.is_empty());
}

#[test]
fn the_tuis_keys_layer_and_bad_values_are_diagnostics() {
    let tree = Tree::new(&[
        (
            "ours/settings.json",
            r#"{"doubleEscapeAction": "fork", "editorPaddingX": 1,
                "markdown": {"codeBlockIndent": "    "}}"#,
        ),
        (
            "project/.pi/settings.json",
            r#"{"doubleEscapeAction": "twice", "treeFilterMode": "tools",
                "editorPaddingX": 9, "autocompleteMaxVisible": 2,
                "markdown": {"codeBlockIndent": 4, "theme": "x"}}"#,
        ),
    ]);
    let (settings, diagnostics) = load(&tree);
    // The project's bad values are ignored; the global ones (or pi's defaults) apply.
    let tui = &settings.tui;
    assert_eq!(tui.double_escape_action, "fork");
    assert_eq!(tui.tree_filter_mode, "default");
    assert_eq!(tui.editor_padding_x, 1);
    assert_eq!(tui.autocomplete_max_visible, 5);
    assert_eq!(tui.code_block_indent, "    ");
    for expected in [
        "`doubleEscapeAction`: expected tree, fork or none, found \"twice\"; the value is \
         ignored",
        "`treeFilterMode`: expected default, no-tools, user-only, labeled-only or all, found \
         \"tools\"; the value is ignored",
        "`editorPaddingX`: expected a whole number from 0 to 3, found 9; the value is ignored",
        "`autocompleteMaxVisible`: expected a whole number from 3 to 20, found 2; the value is \
         ignored",
        "`markdown.codeBlockIndent`: expected a string, found 4; the value is ignored",
        "`markdown.theme`: unknown key; it is ignored",
    ] {
        assert!(diagnostics.contains(expected), "{expected}\n{diagnostics}");
    }
    let defaults = Settings::default().tui;
    assert_eq!(
        (
            defaults.double_escape_action.as_str(),
            defaults.tree_filter_mode.as_str(),
            defaults.editor_padding_x,
            defaults.autocomplete_max_visible,
            defaults.show_hardware_cursor,
            defaults.quiet_startup,
            defaults.code_block_indent.as_str(),
            defaults.show_terminal_progress,
        ),
        ("tree", "default", 0, 5, false, false, "  ", false),
        "pi 0.73's defaults"
    );
}

#[test]
fn lsp_servers_merge_field_by_field_and_incomplete_ones_are_diagnostics() {
    let tree = Tree::new(&[
        (
            "ours/settings.json",
            r#"{"lsp": {"idleTimeoutMs": 1000, "servers": {
                "pyright": {"command": "my-pyright", "settings": {"python": {"x": 1}}},
                "zig": {"command": "zls"},
                "half": {"args": ["--stdio"]}}}}"#,
        ),
        (
            "project/.pi/settings.json",
            r#"{"lsp": {"servers": {
                "pyright": {"args": ["--stdio", "-v"], "initializationOptions": 3},
                "zig": {"fileTypes": [".zig"], "colour": "blue"},
                "typescript": {"disabled": true}}}}"#,
        ),
    ]);
    let (settings, diagnostics) = load(&tree);
    assert_eq!(settings.lsp_idle_timeout_ms, Some(1000));
    let pyright = &settings.lsp_servers["pyright"];
    // The user's command and settings, the project's args; the bad options are ignored.
    assert_eq!(pyright.command.as_deref(), Some("my-pyright"));
    assert_eq!(
        pyright.args.as_deref(),
        Some(&["--stdio".to_owned(), "-v".to_owned()][..])
    );
    assert_eq!(pyright.settings, Some(json!({"python": {"x": 1}})));
    assert_eq!(pyright.initialization_options, None);
    assert_eq!(
        settings.lsp_servers["zig"].file_types.as_deref(),
        Some(&["zig".to_owned()][..])
    );
    assert_eq!(settings.lsp_servers["typescript"].disabled, Some(true));
    for expected in [
        "`lsp.servers.pyright.initializationOptions`: expected an object, found 3; the value is \
         ignored",
        "`lsp.servers.zig.colour`: unknown key; it is ignored",
        "ours/settings.json: `lsp.servers.half`: \"half\" is not a built-in language server, so \
         it needs command and fileTypes; it is ignored",
    ] {
        assert!(
            diagnostics.contains(expected),
            "{expected}\n--\n{diagnostics}"
        );
    }
    // zig is complete across the two files.
    assert!(!diagnostics.contains("lsp.servers.zig`:"), "{diagnostics}");
}

#[test]
fn bad_sandbox_settings_are_diagnostics_naming_the_key_and_what_it_takes() {
    let tree = Tree::new(&[
        ("ours/settings.json", r#"{"sandbox": "strict"}"#),
        (
            "project/.pi/settings.json",
            r#"{"sandbox": {"mode": 1, "network": "no", "writableRoots": "/opt", "paths": []}}"#,
        ),
    ]);
    let (_, diagnostics) = load(&tree);
    assert_eq!(
        diagnostics,
        "warning: <root>/ours/settings.json: `sandbox`: expected \"off\", \"workspace-write\" or \"read-only\", found \"strict\"; the value is ignored\n\
         warning: <root>/project/.pi/settings.json: `sandbox.mode`: expected \"off\", \"workspace-write\" or \"read-only\", found 1; the value is ignored\n\
         warning: <root>/project/.pi/settings.json: `sandbox.network`: expected true or false, found \"no\"; the value is ignored\n\
         warning: <root>/project/.pi/settings.json: `sandbox.writableRoots`: expected an array of strings, found \"/opt\"; the value is ignored\n\
         warning: <root>/project/.pi/settings.json: `sandbox.paths`: unknown key; it is ignored"
    );
}

/// Every key of pi 0.73's `settings.json` (its `Settings` type): each either changes what the
/// daemon reads (shown by the loaded settings) or is named once in a "not applied"
/// diagnostic that says why. None is unknown, none is dropped silently.
#[test]
fn every_pi_setting_is_applied_or_named_with_why() {
    let applied: &[(&str, Value)] = &[
        ("defaultProvider", json!("anthropic")),
        ("defaultModel", json!("claude-sonnet-4-5")),
        ("defaultThinkingLevel", json!("high")),
        ("steeringMode", json!("all")),
        ("followUpMode", json!("all")),
        (
            "compaction",
            json!({"enabled": false, "reserveTokens": 1000, "keepRecentTokens": 2000}),
        ),
        (
            "branchSummary",
            json!({"reserveTokens": 3000, "skipPrompt": true}),
        ),
        (
            "retry",
            json!({"enabled": false, "maxRetries": 9, "baseDelayMs": 10,
            "provider": {"maxRetryDelayMs": 5000, "timeoutMs": 120000, "maxRetries": 2}}),
        ),
        ("shellPath", json!("/bin/zsh")),
        ("shellCommandPrefix", json!("set -e")),
        ("skills", json!(["my-skills"])),
        ("prompts", json!(["my-prompts"])),
        ("enableSkillCommands", json!(false)),
        (
            "thinkingBudgets",
            json!({"minimal": 100, "low": 200, "medium": 300, "high": 400}),
        ),
        ("images", json!({"blockImages": true, "autoResize": false})),
        // Read by the clients (settings/get): pictl's scope and pi session lookups, the TUI.
        ("enabledModels", json!(["claude-*"])),
        ("sessionDir", json!("~/sessions")),
        ("hideThinkingBlock", json!(true)),
        // How Codex requests travel.
        ("transport", json!("websocket-cached")),
        // Followed by the TUI (settings/get).
        ("theme", json!("light")),
        ("themes", json!(["my-themes"])),
        ("doubleEscapeAction", json!("fork")),
        ("treeFilterMode", json!("no-tools")),
        ("editorPaddingX", json!(2)),
        ("autocompleteMaxVisible", json!(8)),
        ("showHardwareCursor", json!(true)),
        ("quietStartup", json!(true)),
        ("collapseChangelog", json!(true)),
        ("markdown", json!({"codeBlockIndent": "    "})),
        ("terminal", json!({"showTerminalProgress": true})),
        ("warnings", json!({"anthropicExtraUsage": false})),
        // Read by the extension host with pi's own package manager.
        ("extensions", json!([])),
        ("packages", json!([])),
        ("npmCommand", json!(["npm"])),
    ];
    let not_applied: &[(&str, Value)] = &[
        ("lastChangelogVersion", json!("0.73.1")),
        ("enableInstallTelemetry", json!(false)),
    ];
    // Keys of sections named one by one: `terminal`'s others.
    let not_applied_subkeys = ["terminal.clearOnShrink"];
    let mut file: Map<String, Value> = applied
        .iter()
        .chain(not_applied)
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect();
    file["terminal"] = json!({"showTerminalProgress": true, "showImages": false,
        "imageWidthCells": 40.7, "clearOnShrink": true});
    let tree = Tree::new(&[("pi/settings.json", &Value::Object(file).to_string())]);
    let roots = ResourceRoots {
        pi_agent_dir: Some(tree.path("pi")),
        config_dir: Some(tree.path("ours")),
        home: Some(tree.path("home")),
        ..ResourceRoots::default()
    };
    let (settings, diagnostics) = roots.load_settings(Some(&tree.path("project")));

    // The applied ones, as read.
    assert_eq!(settings.default_provider.as_deref(), Some("anthropic"));
    assert_eq!(settings.default_model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(
        settings.default_thinking_level.map(|l| l.as_str()),
        Some("high")
    );
    assert_eq!(settings.steering_mode, Some(pi_agent::QueueMode::All));
    assert_eq!(settings.follow_up_mode, Some(pi_agent::QueueMode::All));
    assert!(!settings.compaction.enabled);
    assert_eq!(settings.compaction.reserve_tokens, 1000);
    assert_eq!(settings.compaction.keep_recent_tokens, 2000);
    assert_eq!(settings.branch_summary.reserve_tokens, 3000);
    assert!(settings.branch_summary.skip_prompt);
    assert!(!settings.retry.enabled);
    assert_eq!(settings.retry.max_retries, 9);
    assert_eq!(settings.retry.base_delay_ms, 10);
    assert_eq!(
        settings.retry.max_delay_ms, 5000,
        "retry.provider.maxRetryDelayMs"
    );
    assert_eq!(settings.retry.provider_timeout_ms, Some(120_000));
    assert_eq!(settings.retry.provider_max_retries, Some(2));
    assert_eq!(settings.shell_path.as_deref(), Some("/bin/zsh"));
    assert_eq!(settings.shell_command_prefix.as_deref(), Some("set -e"));
    assert_eq!(settings.skills.len(), 1);
    assert_eq!(settings.prompts.len(), 1);
    assert!(!settings.enable_skill_commands);
    assert_eq!(
        settings.thinking_budgets,
        [Some(100), Some(200), Some(300), Some(400)]
    );
    assert!(settings.block_images);
    assert!(!settings.auto_resize_images);
    assert_eq!(settings.enabled_models, ["claude-*"]);
    assert_eq!(settings.session_dir.as_deref(), Some("~/sessions"));
    assert!(settings.hide_thinking_block);
    assert_eq!(settings.transport, pi_llm::Transport::WebSocketCached);
    assert_eq!(settings.theme.as_deref(), Some("light"));
    assert_eq!(settings.themes.len(), 1);
    assert!(settings.themes[0].path.ends_with("pi/my-themes"));
    let tui = &settings.tui;
    assert_eq!(
        (
            tui.double_escape_action.as_str(),
            tui.tree_filter_mode.as_str()
        ),
        ("fork", "no-tools")
    );
    assert_eq!((tui.editor_padding_x, tui.autocomplete_max_visible), (2, 8));
    assert!(tui.show_hardware_cursor && tui.quiet_startup && tui.show_terminal_progress);
    assert_eq!(tui.code_block_indent, "    ");
    assert!(!tui.warn_anthropic_extra_usage);
    assert!(tui.collapse_changelog);
    assert!(!tui.show_images);
    assert_eq!(tui.image_width_cells, 40, "floored, as pi");

    // The others: one "not applied" diagnostic each, naming the key and why.
    let named: Vec<(String, String)> = diagnostics
        .iter()
        .map(|diagnostic| {
            (
                diagnostic.key.clone().unwrap_or_default(),
                diagnostic.message.clone(),
            )
        })
        .collect();
    let keys = not_applied
        .iter()
        .map(|(key, _)| *key)
        .chain(not_applied_subkeys);
    for key in keys {
        let found: Vec<_> = named.iter().filter(|(name, _)| name == key).collect();
        assert_eq!(found.len(), 1, "{key}: {named:?}");
        assert!(
            found[0].1.starts_with("pi's setting is not applied: "),
            "{key}: {}",
            found[0].1
        );
    }
    assert!(
        diagnostics
            .iter()
            .all(|d| d.kind == pi_daemon::coding::DiagnosticKind::NotApplied),
        "nothing else is reported: {named:?}"
    );
    assert_eq!(
        diagnostics.len(),
        not_applied.len() + not_applied_subkeys.len(),
        "{named:?}"
    );

    // pi's older `websockets` gives the transport when `transport` is not set; a transport
    // pi does not know is a warning naming the ones it does.
    for (file, expected) in [
        (r#"{"websockets": true}"#, pi_llm::Transport::WebSocket),
        (r#"{"websockets": false}"#, pi_llm::Transport::Sse),
        (
            r#"{"websockets": false, "transport": "auto"}"#,
            pi_llm::Transport::Auto,
        ),
        (r#"{}"#, pi_llm::Transport::Auto),
    ] {
        let tree = Tree::new(&[("pi/settings.json", file)]);
        let roots = ResourceRoots {
            pi_agent_dir: Some(tree.path("pi")),
            ..ResourceRoots::default()
        };
        let (settings, diagnostics) = roots.load_settings(None);
        assert_eq!(settings.transport, expected, "{file}");
        assert!(diagnostics.is_empty(), "{file}: {diagnostics:?}");
    }
    let tree = Tree::new(&[("pi/settings.json", r#"{"transport": "carrier-pigeon"}"#)]);
    let roots = ResourceRoots {
        pi_agent_dir: Some(tree.path("pi")),
        ..ResourceRoots::default()
    };
    let (settings, diagnostics) = roots.load_settings(None);
    assert_eq!(settings.transport, pi_llm::Transport::Auto);
    assert_eq!(
        diagnostics[0].message,
        "expected one of sse, websocket, websocket-cached, auto, found \"carrier-pigeon\"; the value is ignored"
    );

    // `retry.provider.*` and `images.autoResize` apply, with nothing to say.
    let tree = Tree::new(&[(
        "pi/settings.json",
        r#"{"images": {"autoResize": true}, "retry": {"provider": {"timeoutMs": 1, "maxRetries": 2}}}"#,
    )]);
    let roots = ResourceRoots {
        pi_agent_dir: Some(tree.path("pi")),
        ..ResourceRoots::default()
    };
    let (settings, diagnostics) = roots.load_settings(None);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(settings.retry.provider_timeout_ms, Some(1));
    assert_eq!(settings.retry.provider_max_retries, Some(2));
    assert!(settings.auto_resize_images, "pi's default");
}

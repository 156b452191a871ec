//! Conversions from the coding layer's settings and the sessions' sandbox to the wire types of
//! `settings/*` and `daemon/status`.

use pi_agent::QueueMode;
use pi_llm::ThinkingLevel;
use pi_protocol::v1::{
    BranchSummarySettings, CompactionSettings, EffectiveSettings, RetrySettings,
};

use crate::coding::Settings;
use crate::coding::settings::PathEntry;

/// The daemon's fallbacks for what no settings file sets.
#[derive(Clone, Copy, Debug)]
pub struct SettingsFallbacks {
    /// Thinking level of new sessions.
    pub thinking: ThinkingLevel,
    /// Steering delivery.
    pub steering_mode: QueueMode,
    /// Follow-up delivery.
    pub follow_up_mode: QueueMode,
}

/// The wire form of effective settings.
pub fn effective_settings(settings: &Settings, fallbacks: SettingsFallbacks) -> EffectiveSettings {
    let mode = |mode: QueueMode| match mode {
        QueueMode::All => "all".to_owned(),
        QueueMode::OneAtATime => "one-at-a-time".to_owned(),
    };
    let entries = |entries: &[PathEntry]| {
        entries
            .iter()
            .map(|entry| {
                let prefix = if entry.exclude { "-" } else { "" };
                format!("{prefix}{}", entry.path.display())
            })
            .collect()
    };
    EffectiveSettings {
        default_provider: settings.default_provider.clone(),
        default_model: settings.default_model.clone(),
        default_thinking_level: settings
            .default_thinking_level
            .unwrap_or(fallbacks.thinking)
            .as_str()
            .to_owned(),
        steering_mode: mode(settings.steering_mode.unwrap_or(fallbacks.steering_mode)),
        follow_up_mode: mode(settings.follow_up_mode.unwrap_or(fallbacks.follow_up_mode)),
        compaction: CompactionSettings {
            enabled: settings.compaction.enabled,
            reserve_tokens: settings.compaction.reserve_tokens,
            keep_recent_tokens: settings.compaction.keep_recent_tokens,
        },
        branch_summary: BranchSummarySettings {
            reserve_tokens: settings.branch_summary.reserve_tokens,
            skip_prompt: settings.branch_summary.skip_prompt,
        },
        retry: RetrySettings {
            enabled: settings.retry.enabled,
            max_retries: settings.retry.max_retries,
            base_delay_ms: settings.retry.base_delay_ms,
            max_delay_ms: settings.retry.max_delay_ms,
        },
        shell_path: settings.shell_path.clone(),
        shell_command_prefix: settings.shell_command_prefix.clone(),
        skills: entries(&settings.skills),
        enable_skill_commands: settings.enable_skill_commands,
        mcp: pi_protocol::v1::McpSettings {
            enabled: settings.mcp_enabled,
            disabled_servers: settings.mcp_disabled_servers.clone(),
        },
        prompts: entries(&settings.prompts),
        system_prompt: settings
            .system_prompt
            .as_ref()
            .map(|text| text.value.clone()),
        append_system_prompt: settings
            .append_system_prompt
            .as_ref()
            .map(|text| text.value.clone()),
        enabled_models: settings.enabled_models.clone(),
        session_dir: settings.session_dir.clone(),
        hide_thinking_block: settings.hide_thinking_block,
        double_escape_action: settings.tui.double_escape_action.clone(),
        tree_filter_mode: settings.tui.tree_filter_mode.clone(),
        editor_padding_x: settings.tui.editor_padding_x,
        autocomplete_max_visible: settings.tui.autocomplete_max_visible,
        show_hardware_cursor: settings.tui.show_hardware_cursor,
        quiet_startup: settings.tui.quiet_startup,
        collapse_changelog: settings.tui.collapse_changelog,
        markdown: pi_protocol::v1::MarkdownSettings {
            code_block_indent: settings.tui.code_block_indent.clone(),
        },
        terminal: pi_protocol::v1::TerminalSettings {
            show_terminal_progress: settings.tui.show_terminal_progress,
            show_images: settings.tui.show_images,
            image_width_cells: settings.tui.image_width_cells,
        },
        theme: settings.theme.clone(),
        themes: entries(&settings.themes),
        images: pi_protocol::v1::ImagesSettings {
            auto_resize: settings.auto_resize_images,
            block_images: settings.block_images,
        },
        warnings: pi_protocol::v1::WarningsSettings {
            anthropic_extra_usage: settings.tui.warn_anthropic_extra_usage,
        },
    }
}

/// The wire form of a sandbox for sessions in `cwd` with `env` (`None`: off).
pub fn effective_sandbox(
    sandbox: Option<&pi_tools::sandbox::Sandbox>,
    cwd: &std::path::Path,
    env: &std::collections::BTreeMap<String, String>,
) -> pi_protocol::v1::EffectiveSandbox {
    let Some(sandbox) = sandbox else {
        return pi_protocol::v1::EffectiveSandbox::default();
    };
    pi_protocol::v1::EffectiveSandbox {
        mode: sandbox.mode.as_str().to_owned(),
        network: sandbox.network,
        writable_roots: sandbox
            .writable(cwd, env)
            .iter()
            .map(|root| root.display().to_string())
            .collect(),
        enforcement: Some(pi_tools::sandbox::Enforcement::of_this_machine().describe()),
    }
}

//! The actor's metadata operations: info and `session/get`, the system prompt and input
//! expansion, model, thinking level, name, labels and navigation.

use pi_llm::ThinkingLevel;
use pi_protocol::v1::{
    EmptyResponse, QueueState, SessionEntry, SessionEvent, SessionGetResponse, SessionInfo,
    SessionNavigateResponse, SessionSetModelResponse, SessionSetThinkingResponse, SlashCommand,
};

use super::{EntryKind, Reply, SessionActor};
use crate::compaction::Instructions;
use crate::convert;
use crate::entries;
use crate::error::{Busy, SessionError};
use crate::info;
use crate::services::clamp_thinking;
use pi_util::time::now_millis;

impl SessionActor {
    /// The session's info, with the warnings that hold now (a model its provider does not
    /// list, used as a custom model id).
    pub(super) fn info(&self) -> SessionInfo {
        let mut info = info(
            &self.row,
            self.run.is_some() || self.job.is_some(),
            self.seq,
        );
        info.warnings = self
            .model
            .as_ref()
            .and_then(|model| self.services.models.unlisted_warning(model))
            .into_iter()
            .collect();
        if !info.missing_env.is_empty() {
            const SHOWN: usize = 8;
            let mut names = info
                .missing_env
                .iter()
                .take(SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if info.missing_env.len() > SHOWN {
                names.push_str(&format!(" and {} more", info.missing_env.len() - SHOWN));
            }
            info.warnings.push(format!(
                "this session lacks {names} (only variables known to hold no secret are \
                 stored, so the others of the client that created it are gone since the \
                 session was loaded again); attach from a shell that has them (pictl supplies \
                 them) or send them with session/setEnv"
            ));
        }
        info
    }

    pub(super) fn queue_state(&self) -> QueueState {
        let texts = self.queues.texts();
        QueueState {
            steering: texts.steering,
            follow_up: texts.follow_up,
        }
    }

    pub(super) fn get(&mut self) -> SessionGetResponse {
        let tools: Vec<String> = self
            .tools
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect();
        // As a run merges them: a name the session's own tools use keeps the own tool.
        let mut mcp_tools = self.services.tools.source_tool_names(&self.row.id);
        mcp_tools.retain(|name| !tools.contains(name));
        SessionGetResponse {
            info: self.info(),
            tools,
            mcp_tools,
            queue: self.queue_state(),
            attached_clients: self.prune_subscribers(),
            system_prompt: Some(self.system_prompt()),
            resource_diagnostics: self
                .resources
                .diagnostics
                .iter()
                .map(convert::diagnostic)
                .collect(),
            commands: self.slash_commands(),
            shortcuts: self
                .hooks
                .iter()
                .flat_map(|hooks| hooks.shortcuts())
                .map(|(key, description)| pi_protocol::v1::ExtensionShortcut { key, description })
                .collect(),
            context_files: self
                .resources
                .context_files
                .iter()
                .map(|file| file.path.display().to_string())
                .collect(),
            extensions: self
                .hooks
                .iter()
                .flat_map(|hooks| hooks.extensions())
                .collect(),
            todos: self.todos.todos.clone(),
            plan_mode: self.plan.enabled,
            approved_plan: self.plan.approved.clone(),
            rules: self
                .resources
                .rules
                .iter()
                .map(|rule| pi_protocol::v1::RuleInfo {
                    name: rule.name.clone(),
                    provider: rule.provider.to_owned(),
                    path: rule.path.display().to_string(),
                    kind: match rule.kind() {
                        pi_coding::rules::RuleKind::Always => "always",
                        pi_coding::rules::RuleKind::Rulebook => "rulebook",
                        pi_coding::rules::RuleKind::Stream => "stream",
                    }
                    .to_owned(),
                    description: rule.description.clone(),
                    globs: rule.globs.clone(),
                })
                .collect(),
        }
    }

    /// Applies a todo change (`session/setTodos` records its list in a custom entry; the
    /// `todo` tool's result records the tool's).
    pub(super) async fn change_todos(
        &mut self,
        change: crate::todos::TodoChange,
    ) -> Result<Result<crate::todos::Recorded, crate::todos::TodoError>, SessionError> {
        let (next, record) = match change {
            crate::todos::TodoChange::Apply(op) => {
                match crate::todos::apply(&self.todos.todos, op) {
                    Ok(next) => (next, false),
                    Err(error) => return Ok(Err(error)),
                }
            }
            crate::todos::TodoChange::Set(list) => match crate::todos::normalize(list) {
                Ok(next) => (next, true),
                Err(error) => return Ok(Err(error)),
            },
        };
        let next = crate::todos::Recorded {
            todos: next,
            revision: self.todos.revision + 1,
        };
        if record {
            let row = self.row.clone();
            self.append_entries(
                row,
                vec![EntryKind::Custom {
                    custom_type: crate::todos::TODOS_ENTRY.to_owned(),
                    data: next.to_value(),
                }],
            )
            .await?;
        }
        self.set_todos(next.clone());
        Ok(Ok(next))
    }

    /// The list is now `todos`: told to the clients when it changed.
    pub(super) fn set_todos(&mut self, recorded: crate::todos::Recorded) {
        let changed = recorded.todos != self.todos.todos;
        self.todos = recorded;
        if changed {
            self.broadcast(pi_protocol::v1::SessionEvent::TodosUpdated {
                todos: self.todos.todos.clone(),
            });
        }
    }

    /// The session's prompt templates and (when enabled) skills as slash commands.
    pub(super) fn slash_commands(&self) -> Vec<SlashCommand> {
        let templates = self
            .resources
            .templates
            .iter()
            .map(|template| SlashCommand {
                name: template.name.clone(),
                description: template.description.clone(),
                source: "template".to_owned(),
            });
        let skills = self
            .resources
            .skills
            .iter()
            .filter(|_| self.resources.settings.enable_skill_commands)
            .map(|skill| SlashCommand {
                name: format!("skill:{}", skill.name),
                description: skill.description.clone(),
                source: "skill".to_owned(),
            });
        let mcp =
            self.services
                .tools
                .commands(&self.row.id)
                .into_iter()
                .map(|(name, description)| SlashCommand {
                    name,
                    description,
                    source: "mcp".to_owned(),
                });
        let extensions =
            self.hooks
                .iter()
                .flat_map(|hooks| hooks.commands())
                .map(|(name, description)| SlashCommand {
                    name,
                    description,
                    source: "extension".to_owned(),
                });
        extensions
            .chain(templates)
            .chain(skills)
            .chain(mcp)
            .collect()
    }

    /// The system prompt of the next run: today's date, the session's tools and resources.
    /// The session's own `systemPrompt` / `appendSystemPrompt` (from `session/create`, pi's
    /// `--system-prompt` and `--append-system-prompt`) win over `SYSTEM.md` and
    /// `APPEND_SYSTEM.md`, as pi's flags do.
    pub(super) fn system_prompt(&self) -> String {
        let tools = pi_coding::system_prompt::tool_summaries(&self.tools);
        // pi's: the local date.
        let today = pi_util::time::local_date();
        let date = today.as_str();
        let resources = &self.resources;
        pi_coding::system_prompt::build(&pi_coding::system_prompt::SystemPromptInput {
            tools: &tools,
            cwd: &self.row.cwd,
            date,
            context_files: if self.row.no_context_files {
                &[]
            } else {
                &resources.context_files
            },
            // `--no-skills` left the discovered ones unloaded; `--skill` ones are listed.
            skills: &resources.skills,
            rules: &resources.rules,
            custom_prompt: self
                .row
                .system_prompt
                .as_deref()
                .or(resources.custom_prompt.as_deref()),
            append_prompt: self
                .row
                .append_system_prompt
                .as_deref()
                .or(resources.append_prompt.as_deref()),
            pi_docs: resources.pi_docs.as_deref(),
        })
    }

    /// `/skill:name args` and `/template args` expanded (pi expands before sending).
    pub(super) fn expand_input(&self, text: String) -> String {
        let (expanded, problem) = self.resources.expand_input(&text);
        if let Some(problem) = problem {
            tracing::warn!(%problem, "skill expansion failed");
        }
        expanded
    }

    pub(super) async fn set_model(
        &mut self,
        spec: &str,
        resolved: Option<Box<super::command::ResolvedModel>>,
    ) -> Result<SessionSetModelResponse, SessionError> {
        let super::command::ResolvedModel {
            model,
            level,
            has_key,
            warning,
        } = match resolved {
            Some(resolved) => *resolved,
            None => {
                let (model, level) = self.services.models.resolve(spec).map_err(|error| {
                    SessionError::ModelNotFound {
                        field: None,
                        message: error.to_string(),
                    }
                })?;
                super::command::ResolvedModel {
                    has_key: self.services.models.api_key(&model).is_ok(),
                    warning: self.services.models.unlisted_warning(&model),
                    model,
                    level,
                }
            }
        };
        let thinking = clamp_thinking(&model, level.unwrap_or(self.thinking));
        let mut kinds = vec![EntryKind::ModelChange {
            provider: model.provider.clone(),
            model_id: model.id.clone(),
        }];
        if thinking != self.thinking {
            kinds.push(EntryKind::ThinkingLevelChange(thinking));
        }
        let mut row = self.row.clone();
        row.model = Some((model.provider.clone(), model.id.clone()));
        row.thinking_level = thinking.as_str().to_owned();
        self.append_entries(row, kinds).await?;
        self.model = Some(model.clone());
        self.thinking = thinking;
        let warnings: Vec<String> = warning.into_iter().collect();
        for warning in &warnings {
            tracing::warn!(%warning, "custom model id");
        }
        Ok(SessionSetModelResponse {
            model: crate::model_info(&model, has_key),
            thinking_level: thinking.as_str().to_owned(),
            warnings,
        })
    }

    pub(super) async fn set_thinking(
        &mut self,
        level: &str,
    ) -> Result<SessionSetThinkingResponse, SessionError> {
        let requested: ThinkingLevel =
            level
                .parse()
                .map_err(|error: pi_llm::model::UnknownThinkingLevel| {
                    SessionError::invalid("level", error.to_string())
                })?;
        let level = match &self.model {
            Some(model) => clamp_thinking(model, requested),
            None => requested,
        };
        if level != self.thinking {
            let mut row = self.row.clone();
            row.thinking_level = level.as_str().to_owned();
            self.append_entries(row, vec![EntryKind::ThinkingLevelChange(level)])
                .await?;
            self.thinking = level;
        }
        Ok(SessionSetThinkingResponse {
            level: level.as_str().to_owned(),
        })
    }

    /// Takes the lost secret variables `env` holds (memory only) and rebuilds the tools
    /// with them.
    pub(super) fn set_env(
        &mut self,
        env: std::collections::BTreeMap<String, String>,
        any: bool,
    ) -> pi_protocol::v1::SessionSetEnvResponse {
        let missing = crate::missing_env(&self.row);
        let mut accepted = Vec::new();
        for (name, value) in env {
            if any || missing.contains(&name) {
                std::sync::Arc::make_mut(&mut self.row.secret_env).insert(name.clone(), value);
                accepted.push(name);
            }
        }
        if !accepted.is_empty() {
            let environment = crate::tool_environment(&self.row, &self.registry);
            match self.services.tools.tools(&environment, &self.row.tools) {
                Ok(tools) => self.tools = tools,
                Err(error) => {
                    tracing::warn!(session = self.row.id, %error, "cannot rebuild the tools");
                }
            }
            let info = self.info();
            self.broadcast(pi_protocol::v1::SessionEvent::SessionUpdated { info });
            tracing::info!(
                session = self.row.id,
                variables = accepted.len(),
                "secret variables supplied"
            );
        }
        pi_protocol::v1::SessionSetEnvResponse {
            accepted,
            missing_env: crate::missing_env(&self.row),
        }
    }

    /// pi's `setActiveTools`: the session's own tools become those of `names` it can build;
    /// the others (extensions' and MCP servers' tools) are the runs' tool source's to
    /// narrow. Held until the session is loaded again, as in pi until it restarts.
    pub(super) fn set_active_tools(
        &mut self,
        names: &[String],
    ) -> Result<EmptyResponse, SessionError> {
        let environment = crate::tool_environment(&self.row, &self.registry);
        let mut own = names.to_vec();
        loop {
            match self.services.tools.tools(&environment, &own) {
                Ok(tools) => {
                    self.tools = tools;
                    return Ok(EmptyResponse {});
                }
                Err(crate::services::ToolsError::Unknown(unknown)) if own.contains(&unknown.0) => {
                    own.retain(|name| *name != unknown.0);
                }
                Err(error) => return Err(SessionError::invalid("tools", error.to_string())),
            }
        }
    }

    pub(super) async fn set_name(&mut self, name: &str) -> Result<EmptyResponse, SessionError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(SessionError::invalid(
                "name",
                "Session name cannot be empty",
            ));
        }
        let mut row = self.row.clone();
        row.name = Some(name.to_owned());
        self.append_entries(row, vec![EntryKind::SessionInfo(name.to_owned())])
            .await?;
        Ok(EmptyResponse {})
    }

    pub(super) async fn label(
        &mut self,
        entry_id: &str,
        label: Option<String>,
    ) -> Result<EmptyResponse, SessionError> {
        if self
            .store
            .entry(&self.row.id, entry_id)
            .await
            .map_err(crate::storage(&self.store))?
            .is_none()
        {
            return Err(SessionError::EntryNotFound(entry_id.to_owned()));
        }
        let label = label
            .map(|label| label.trim().to_owned())
            .filter(|label| !label.is_empty());
        let row = self.row.clone();
        self.append_entries(
            row,
            vec![EntryKind::Label {
                target_id: entry_id.to_owned(),
                label,
            }],
        )
        .await?;
        Ok(EmptyResponse {})
    }

    /// `session/navigate`: moves the leaf, after summarizing the branch left behind when
    /// `summary` asks for it (answered when the summary is stored).
    pub(super) async fn navigate(
        &mut self,
        entry_id: &str,
        summary: Option<Instructions>,
        written: Option<Box<(String, serde_json::Value)>>,
        reply: Reply<SessionNavigateResponse>,
    ) {
        let (leaf_id, text) = match self.navigation_target(entry_id).await {
            Ok(target) => target,
            Err(error) => {
                let _ = reply.send(Err(error));
                return;
            }
        };
        let moves = leaf_id != self.row.leaf_id && self.row.leaf_id.is_some();
        let reply = match summary {
            // An extension wrote the summary (pi's `session_before_tree`).
            Some(_) if moves && written.is_some() => {
                if let Some(written) = written {
                    let (summary, details) = *written;
                    let stored = self
                        .store_branch_summary(leaf_id, text, summary, Some(details), true)
                        .await;
                    let _ = reply.send(stored);
                }
                return;
            }
            Some(instructions) if moves => {
                let started = self
                    .start_branch_summary(
                        leaf_id.clone(),
                        entry_id,
                        text.clone(),
                        instructions,
                        reply,
                    )
                    .await;
                match started {
                    // Nothing is abandoned: a plain move.
                    Some(reply) => reply,
                    None => return,
                }
            }
            Some(_) | None => reply,
        };
        let _ = reply.send(self.move_leaf(leaf_id, text).await);
    }

    /// Where navigating to `entry_id` puts the leaf, and the text handed back for editing.
    pub(super) async fn navigation_target(
        &mut self,
        entry_id: &str,
    ) -> Result<(Option<String>, Option<String>), SessionError> {
        if self.run.is_some() || self.job.is_some() {
            return Err(SessionError::Busy(Busy::Navigating));
        }
        let stored = self
            .store
            .entry(&self.row.id, entry_id)
            .await
            .map_err(crate::storage(&self.store))?
            .ok_or_else(|| SessionError::EntryNotFound(entry_id.to_owned()))?;
        let entry = entries::parse_entry(&stored).map_err(SessionError::internal)?;
        // A user or custom message: continue from its parent, and hand its text back to edit.
        Ok(match &entry {
            SessionEntry::Message {
                parent_id,
                message: pi_protocol::v1::message::AgentMessage::User(user),
                ..
            } => (
                parent_id.clone(),
                Some(crate::user_content_text(&user.content)),
            ),
            SessionEntry::CustomMessage {
                parent_id, content, ..
            } => (parent_id.clone(), Some(crate::user_content_text(content))),
            _ => (Some(stored.id.clone()), None),
        })
    }

    /// Moves the leaf (persisted) and rebuilds the context.
    pub(super) async fn move_leaf(
        &mut self,
        leaf_id: Option<String>,
        text: Option<String>,
    ) -> Result<SessionNavigateResponse, SessionError> {
        if leaf_id != self.row.leaf_id {
            let mut row = self.row.clone();
            row.leaf_id = leaf_id.clone();
            row.updated_at = now_millis();
            self.store
                .update_session(&row)
                .await
                .map_err(crate::storage(&self.store))?;
            self.row = row;
            self.reload_context().await?;
            self.broadcast(SessionEvent::LeafChanged {
                leaf_id: leaf_id.clone(),
            });
        }
        Ok(SessionNavigateResponse {
            leaf_id,
            text,
            summary_entry_id: None,
            aborted: false,
        })
    }
}

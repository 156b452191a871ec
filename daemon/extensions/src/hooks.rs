//! A session's extensions at its hook points: slash commands, `input`,
//! `before_agent_start`, the events they observe, and the state they read without asking.
//! Payloads are pi's JSON, as pi's runner takes and gives them; the daemon maps them onto
//! its session core.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{ExtensionError, ExtensionHost, RegisteredCommand, SessionSet};

/// How long `session_before_compact` handlers may take: they may write the summary with a
/// model of their own.
const COMPACTION_HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a user's shell command an extension runs may take: as long as the command does
/// (a day at most), as pi waits for it.
const USER_BASH_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// How long a slash command may run while no dialog waits for a person: commands do work
/// (a summary, a search) where hooks decide.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// The events every session's host mirror hears, handled or not: they keep `ctx.isIdle()`
/// and `agent_end`'s messages true.
const ALWAYS: [&str; 3] = ["agent_start", "agent_end", "message_end"];

impl ExtensionHost {
    /// The slash commands of session `session_id`'s extensions, as loaded now.
    pub fn commands(&self, session_id: &str) -> Vec<RegisteredCommand> {
        self.current(session_id)
            .map(|set| set.commands.clone())
            .unwrap_or_default()
    }

    /// Runs `/name args` once the session's extensions loaded, when one of them registered
    /// `name`; `None` otherwise.
    pub async fn run_command(
        self: &Arc<Self>,
        session_id: &str,
        name: &str,
        args: &str,
    ) -> Option<Result<(), ExtensionError>> {
        let set = self.opened(session_id).await?;
        if !set.commands.iter().any(|command| command.name == name) {
            return None;
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "name": name, "args": args,
            "hasUI": has_ui});
        Some(
            self.call(session_id, "command", params, COMMAND_TIMEOUT)
                .await
                .map(|_| ()),
        )
    }

    /// pi's `input` event: `{action: "continue" | "transform" | "handled", text?, images?}`
    /// (`continue` when no extension handles it).
    pub async fn input(
        self: &Arc<Self>,
        session_id: &str,
        text: &str,
        images: Value,
        source: &str,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(json!({"action": "continue"}));
        };
        if !set.handles("input") {
            return Ok(json!({"action": "continue"}));
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "text": text, "images": images,
            "source": source, "hasUI": has_ui});
        self.call(session_id, "input", params, self.config.hook_timeout)
            .await
    }

    /// pi's `session_before_compact`: `{cancel?, compaction?}` (`null` when no extension
    /// handles it or none decided anything). May take as long as an extension's own summary
    /// (pi waits for it); abandoning the future aborts the handlers' `signal`.
    pub async fn before_compact(
        self: &Arc<Self>,
        session_id: &str,
        preparation: Value,
        branch: Vec<Value>,
        instructions: Option<String>,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(Value::Null);
        };
        if !set.handles("session_before_compact") {
            return Ok(Value::Null);
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "preparation": preparation,
            "branchEntries": branch, "customInstructions": instructions, "hasUI": has_ui});
        let mut abandoned = Abandoned {
            host: self,
            method: "compaction/abort",
            session_id,
            done: false,
        };
        let answer = self
            .call(
                session_id,
                "session_before_compact",
                params,
                COMPACTION_HOOK_TIMEOUT,
            )
            .await;
        abandoned.done = true;
        answer
    }

    /// Runs the handler of the shortcut `key` the session's extensions registered.
    pub async fn shortcut(
        self: &Arc<Self>,
        session_id: &str,
        key: &str,
    ) -> Result<(), ExtensionError> {
        let set = self
            .opened(session_id)
            .await
            .ok_or_else(|| ExtensionError::NotOpen(session_id.to_owned()))?;
        if !set.shortcuts.iter().any(|shortcut| shortcut.key == key) {
            return Err(ExtensionError::Host(format!(
                "no extension of this session registers the shortcut {key}"
            )));
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "key": key, "hasUI": has_ui});
        self.call(session_id, "shortcut", params, COMMAND_TIMEOUT)
            .await
            .map(|_| ())
    }

    /// pi's `session_before_fork`: `{cancel?}` (`null` when no extension handles it). A
    /// handler may ask the session's clients first.
    pub async fn before_fork(
        self: &Arc<Self>,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(Value::Null);
        };
        if !set.handles("session_before_fork") {
            return Ok(Value::Null);
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "entryId": entry_id, "hasUI": has_ui});
        self.call(
            session_id,
            "session_before_fork",
            params,
            self.config.hook_timeout,
        )
        .await
    }

    /// pi's `session_before_switch`: `{cancel?}` (`null` when no extension handles it). A
    /// handler may ask the session's clients first.
    pub async fn before_switch(
        self: &Arc<Self>,
        session_id: &str,
        reason: &str,
        target: Option<&str>,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(Value::Null);
        };
        if !set.handles("session_before_switch") {
            return Ok(Value::Null);
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "reason": reason,
            "targetSessionId": target, "hasUI": has_ui});
        self.call(
            session_id,
            "session_before_switch",
            params,
            self.config.hook_timeout,
        )
        .await
    }

    /// pi's `session_before_tree`: `{cancel?, summary?, customInstructions?,
    /// replaceInstructions?, label?}` (`null` when no extension handles it). May take as
    /// long as an extension's own summary; abandoning the future aborts the handlers'
    /// `signal`.
    pub async fn before_tree(
        self: &Arc<Self>,
        session_id: &str,
        preparation: Value,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(Value::Null);
        };
        if !set.handles("session_before_tree") {
            return Ok(Value::Null);
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "preparation": preparation, "hasUI": has_ui});
        let mut abandoned = Abandoned {
            host: self,
            method: "tree/abort",
            session_id,
            done: false,
        };
        let answer = self
            .call(
                session_id,
                "session_before_tree",
                params,
                COMPACTION_HOOK_TIMEOUT,
            )
            .await;
        abandoned.done = true;
        answer
    }

    /// pi's `user_bash`: `{result}` (pi's `BashResult`, the command's output as an extension
    /// gave it or ran it through its own operations) or `null` (pid runs it). Takes as long
    /// as the command; abandoning the future aborts the extension's run of it.
    pub async fn user_bash(
        self: &Arc<Self>,
        session_id: &str,
        command: &str,
        exclude_from_context: bool,
        cwd: &str,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(Value::Null);
        };
        if !set.handles("user_bash") {
            return Ok(Value::Null);
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "command": command,
            "excludeFromContext": exclude_from_context, "cwd": cwd, "hasUI": has_ui});
        let mut abandoned = Abandoned {
            host: self,
            method: "bash/abort",
            session_id,
            done: false,
        };
        let answer = self
            .call(session_id, "user_bash", params, USER_BASH_TIMEOUT)
            .await;
        // A command given up on is aborted in the host too.
        abandoned.done = answer.is_ok();
        answer
    }

    /// pi's `before_agent_start`: `{systemPrompt?, messages?}` (`null` when no extension
    /// handles it or none changed anything).
    pub async fn before_agent_start(
        self: &Arc<Self>,
        session_id: &str,
        prompt: &str,
        images: Value,
        system_prompt: &str,
    ) -> Result<Value, ExtensionError> {
        let Some(set) = self.opened(session_id).await else {
            return Ok(Value::Null);
        };
        if !set.handles("before_agent_start") {
            return Ok(Value::Null);
        }
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "prompt": prompt, "images": images,
            "systemPrompt": system_prompt, "hasUI": has_ui});
        self.call(
            session_id,
            "before_agent_start",
            params,
            self.config.hook_timeout,
        )
        .await
    }

    /// pi's `context`: the messages of a model request (pi's JSON), as the handlers leave
    /// them.
    pub async fn context(
        self: &Arc<Self>,
        session_id: &str,
        messages: Value,
    ) -> Result<Value, ExtensionError> {
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "messages": messages, "hasUI": has_ui});
        self.call(session_id, "context", params, self.config.hook_timeout)
            .await
    }

    /// pi's `before_provider_request`: a request body, as the handlers leave it.
    pub async fn provider_request(
        self: &Arc<Self>,
        session_id: &str,
        payload: Value,
    ) -> Result<Value, ExtensionError> {
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "payload": payload, "hasUI": has_ui});
        self.call(
            session_id,
            "before_provider_request",
            params,
            self.config.hook_timeout,
        )
        .await
    }

    /// pi's `after_provider_response`: a response's status and headers, heard before its
    /// body is read.
    pub async fn provider_response(
        self: &Arc<Self>,
        session_id: &str,
        status: u16,
        headers: serde_json::Map<String, Value>,
    ) -> Result<Value, ExtensionError> {
        let has_ui = self.has_ui(session_id).await;
        let params = json!({"sessionId": session_id, "status": status, "headers": headers,
            "hasUI": has_ui});
        self.call(
            session_id,
            "after_provider_response",
            params,
            self.config.hook_timeout,
        )
        .await
    }

    /// Whether `set`'s extensions hear events of type `kind` (without a round trip).
    pub fn hears(set: &SessionSet, kind: &str) -> bool {
        !set.extensions.is_empty() && (ALWAYS.contains(&kind) || set.handles(kind))
    }

    /// An event of the session for its extensions, without waiting (pi's observe-only
    /// events: what a handler returns is not used).
    pub fn event(&self, session_id: &str, event: Value) {
        self.tell("event", json!({"sessionId": session_id, "event": event}));
    }

    /// An entry the session stored (pi's session-file format; a `parentId` of `null` is the
    /// leaf's child), for `ctx.sessionManager`.
    pub fn entry(&self, session_id: &str, entry: Value) {
        self.tell(
            "session/entry",
            json!({"sessionId": session_id, "entry": entry}),
        );
    }

    /// The session's leaf moved (`session/navigate`), for `ctx.sessionManager`.
    pub fn leaf(&self, session_id: &str, leaf_id: Option<&str>) {
        self.tell(
            "session/leaf",
            json!({"sessionId": session_id, "leafId": leaf_id}),
        );
    }

    /// What the session's extensions read without asking changed: `changes` replaces those
    /// keys (`model`, `thinkingLevel`, `sessionName`, `systemPrompt`, `activeTools`,
    /// `allTools`, `idle`).
    pub fn state(&self, session_id: &str, changes: serde_json::Map<String, Value>) {
        {
            let mut sessions = self.sessions();
            let Some(session) = sessions.get_mut(session_id) else {
                return;
            };
            for (key, value) in &changes {
                session.state.insert(key.clone(), value.clone());
            }
        }
        let mut params = changes;
        params.insert("sessionId".to_owned(), Value::from(session_id));
        self.tell("session/state", Value::Object(params));
    }

    /// Session `session_id`'s set as it changes (`None` for a session that never warmed
    /// up): read per event without a lock on the host.
    pub fn watch(
        &self,
        session_id: &str,
    ) -> Option<tokio::sync::watch::Receiver<Option<Arc<SessionSet>>>> {
        Some(self.sessions().get(session_id)?.set.subscribe())
    }
}

/// Tells the host to abort what it runs for a hook whose future was dropped before it ended
/// (the compaction or the command was aborted meanwhile).
struct Abandoned<'a> {
    host: &'a ExtensionHost,
    method: &'static str,
    session_id: &'a str,
    done: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.host
                .tell(self.method, json!({"sessionId": self.session_id}));
        }
    }
}

//! A prompt in a session with hooks (pi's extensions), in pi's order: an extension's slash
//! command runs instead of the prompt (even while a run streams); otherwise the `input`
//! handlers may answer, transform or pass it, an MCP prompt or a skill or template expands
//! it, and the `before_agent_start` handlers may change the run's system prompt and add
//! messages after it. The hooks run in a task of their own (one may ask the session's
//! clients, through this actor); the actor goes on serving and takes the outcome back in
//! [`SessionActor::on_prepared`]. While a prompt is being prepared the session is busy.

use std::sync::Arc;

use pi_agent::AgentMessage;
use pi_protocol::v1::message::ImageContent;
use pi_protocol::v1::{EmptyResponse, SessionPromptResponse};
use tokio::task::JoinHandle;

use super::{Reply, SessionActor, user_message};
use crate::error::{Busy, SessionError};
use crate::hooks::{Hooks, Input, InputSource};
use crate::services::{ToolEnvironment, ToolFactory};

/// A prompt whose hooks run.
pub(crate) struct Preparing {
    task: JoinHandle<Prepared>,
    reply: Reply<SessionPromptResponse>,
}

/// What the hooks made of a prompt.
pub(crate) enum Prepared {
    /// An extension's command ran, or an `input` handler answered: no run.
    Done(Result<(), SessionError>),
    /// Not an extension's command: the prompt goes on as a prompt.
    NotCommand {
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
    },
    /// A run starts with this.
    Ready {
        text: String,
        images: Vec<ImageContent>,
        system_prompt: Option<String>,
        messages: Vec<AgentMessage>,
        /// The session's stored model, found among its hooks' models (a session whose model
        /// an extension's provider serves, loaded again).
        model: Option<Box<pi_llm::Model>>,
    },
}

/// An extension's command that runs (its id: who waits for it is in the actor's
/// `command_replies`, so that a closing session can answer them).
pub(crate) type CommandRun = JoinHandle<(u64, Prepared)>;

/// The outcome of the prompt being prepared, and who waits for it.
pub(super) async fn next_prepared(
    preparing: &mut Option<Preparing>,
) -> (
    Result<Prepared, tokio::task::JoinError>,
    Option<Reply<SessionPromptResponse>>,
) {
    let Some(current) = preparing else {
        return std::future::pending().await;
    };
    let outcome = (&mut current.task).await;
    (outcome, preparing.take().map(|done| done.reply))
}

/// `/name args` split after the slash; `None` for text that is no slash command.
fn slash_command(text: &str) -> Option<(String, String)> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    (!name.is_empty()).then(|| (name.to_owned(), args.trim_start().to_owned()))
}

impl SessionActor {
    /// A prompt for a session with hooks: its preparation starts in a task.
    pub(super) async fn prompt_with_hooks(
        &mut self,
        hooks: Arc<dyn Hooks>,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
        reply: Reply<SessionPromptResponse>,
    ) {
        if self.closing.is_some() {
            let _ = reply.send(Err(SessionError::Closing));
            return;
        }
        // Extension commands run even while the session is busy, as in pi, and do not make
        // it busy: a command may send the session a prompt of its own.
        if let Some((name, args)) = slash_command(&text) {
            self.next_command += 1;
            let id = self.next_command;
            self.command_replies.insert(id, reply);
            self.running_commands.push(tokio::spawn(async move {
                // A command that panics is answered like one that failed.
                let ran = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
                    hooks.command(name, args),
                ))
                .await
                .unwrap_or_else(|_| {
                    Some(Err(
                        "the extension's command panicked (see the daemon log)".into()
                    ))
                });
                let prepared = match ran {
                    Some(Ok(())) => Prepared::Done(Ok(())),
                    Some(Err(error)) => Prepared::Done(Err(SessionError::InvalidParams {
                        field: None,
                        message: error.to_string(),
                    })),
                    None => Prepared::NotCommand {
                        text,
                        images,
                        source,
                    },
                };
                (id, prepared)
            }));
            return;
        }
        self.prepare_prompt(hooks, text, images, source, reply)
            .await;
    }

    /// The hooks of a prompt that is no extension command: `input`, expansion,
    /// `before_agent_start`.
    async fn prepare_prompt(
        &mut self,
        hooks: Arc<dyn Hooks>,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
        reply: Reply<SessionPromptResponse>,
    ) {
        if let Err(error) = self.check_idle() {
            let _ = reply.send(Err(error));
            return;
        }
        self.resources = pi_coding::resources::load_in_background(
            self.services.settings.resources.clone(),
            std::path::PathBuf::from(&self.row.cwd),
            crate::resource_choice(&self.row),
        )
        .await;
        let inputs = Inputs {
            tools: self.services.tools.clone(),
            environment: crate::tool_environment(&self.row, &self.registry),
            resources: self.resources.clone(),
            system_prompt: self.system_prompt(),
            stored_model: self.row.model.clone().filter(|_| self.model.is_none()),
        };
        let task = tokio::spawn(inputs.prepare(hooks, text, images, source));
        self.preparing = Some(Preparing { task, reply });
    }

    /// An extension's command ended, or the prompt was no extension's command.
    pub(super) async fn on_command_done(
        &mut self,
        done: Result<(u64, Prepared), tokio::task::JoinError>,
    ) {
        let (id, prepared) = match done {
            Ok(done) => done,
            Err(error) => {
                // Aborted (the session closes: its caller was answered) — a panic is
                // caught in the task.
                tracing::debug!(%error, "an extension's command ended early");
                return;
            }
        };
        let Some(reply) = self.command_replies.remove(&id) else {
            return;
        };
        match prepared {
            Prepared::Done(result) => {
                let _ = reply.send(result.map(|()| SessionPromptResponse { started: false }));
            }
            prepared => Box::pin(self.on_prepared(Ok(prepared), Some(reply))).await,
        }
    }

    /// An extension's message (pi's `sendMessage`).
    pub(super) async fn send_custom(
        &mut self,
        message: AgentMessage,
        trigger: bool,
        deliver: Option<super::command::Deliver>,
    ) -> Result<EmptyResponse, SessionError> {
        use super::command::Deliver;
        if deliver == Some(Deliver::NextTurn) {
            self.next_turn.push(message);
            return Ok(EmptyResponse {});
        }
        if self.run.is_some() {
            match deliver {
                Some(Deliver::FollowUp) => self.queues.push_follow_up(message),
                _ => self.queues.push_steering(message),
            }
            let texts = self.queues.texts();
            self.broadcast(pi_protocol::v1::SessionEvent::QueueUpdate {
                steering: texts.steering,
                follow_up: texts.follow_up,
            });
            return Ok(EmptyResponse {});
        }
        if !trigger {
            self.record_message(message).await?;
            return Ok(EmptyResponse {});
        }
        self.check_idle()?;
        self.model_and_key()?;
        self.overflow_recovery_attempted = false;
        self.start_run(vec![message]).await
    }

    /// The session closes: a prompt being prepared is dropped, and its sender told.
    pub(super) fn abandon_preparing(&mut self) {
        if let Some(preparing) = self.preparing.take() {
            preparing.task.abort();
            let _ = preparing.reply.send(Err(SessionError::Closing));
        }
        // Answered, not dropped: a dropped answer makes the caller send the prompt again
        // to the session's next actor.
        for command in self.running_commands.iter() {
            command.abort();
        }
        self.running_commands.clear();
        for (_, reply) in self.command_replies.drain() {
            let _ = reply.send(Err(SessionError::Closing));
        }
    }

    /// Tells the hooks what they may read of the session (`system_prompt`: a run's, as it
    /// starts).
    pub(super) fn tell_hooks(&self, system_prompt: Option<&str>) {
        if let Some(hooks) = &self.hooks {
            hooks.state(crate::hooks::HookState {
                model: self.model.as_ref(),
                thinking: self.thinking,
                name: self.row.name.as_deref(),
                system_prompt,
                tools: &self.tools,
            });
        }
    }

    /// Why a prompt cannot start a run now.
    pub(super) fn check_idle(&self) -> Result<(), SessionError> {
        if self.run.is_some() || self.preparing.is_some() {
            return Err(SessionError::Busy(Busy::Running));
        }
        if self.job.is_some() || self.pending_compaction.is_some() {
            return Err(SessionError::Busy(Busy::Compacting));
        }
        if self.retry.is_pending() {
            return Err(SessionError::Busy(Busy::RetryPending));
        }
        if self.closing.is_some() {
            return Err(SessionError::Closing);
        }
        Ok(())
    }

    /// The hooks of a prompt are done: its run starts, or the one who sent it hears why not.
    pub(super) async fn on_prepared(
        &mut self,
        outcome: Result<Prepared, tokio::task::JoinError>,
        reply: Option<Reply<SessionPromptResponse>>,
    ) {
        let Some(reply) = reply else { return };
        let result = match outcome {
            Ok(Prepared::Done(result)) => result.map(|()| SessionPromptResponse { started: false }),
            Ok(Prepared::NotCommand {
                text,
                images,
                source,
            }) => match self.hooks.clone() {
                Some(hooks) => {
                    return Box::pin(self.prepare_prompt(hooks, text, images, source, reply)).await;
                }
                None => Err(SessionError::internal("the session's hooks are gone")),
            },
            Ok(Prepared::Ready {
                text,
                images,
                system_prompt,
                messages,
                model,
            }) => {
                if self.model.is_none() && model.is_some() {
                    self.model = model.map(|model| *model);
                    self.tell_hooks(None);
                }
                self.start_prepared(text, images, system_prompt, messages)
                    .await
                    .map(|_| SessionPromptResponse { started: true })
            }
            Err(error) => {
                tracing::error!(%error, "preparing a prompt panicked");
                Err(SessionError::internal(
                    "preparing the prompt failed (see the daemon log); the session is still usable",
                ))
            }
        };
        let _ = reply.send(result);
    }

    async fn start_prepared(
        &mut self,
        text: String,
        images: Vec<ImageContent>,
        system_prompt: Option<String>,
        messages: Vec<AgentMessage>,
    ) -> Result<EmptyResponse, SessionError> {
        self.check_idle()?;
        self.model_and_key()?;
        let mut prompts = vec![user_message(text, images)?];
        prompts.append(&mut self.next_turn);
        prompts.extend(messages);
        self.run_system_prompt = system_prompt;
        self.overflow_recovery_attempted = false;
        self.todo_reminders = 0;
        if let Some(prompts) = self.compact_before_prompt(prompts).await {
            self.start_run(prompts).await?;
        }
        Ok(EmptyResponse {})
    }
}

/// What preparing a prompt needs of the session, taken before the task starts.
struct Inputs {
    tools: Arc<dyn ToolFactory>,
    environment: ToolEnvironment,
    resources: pi_coding::resources::Resources,
    system_prompt: String,
    // The stored model the session could not find among the daemon's: (provider, id).
    stored_model: Option<(String, String)>,
}

impl Inputs {
    async fn prepare(
        self,
        hooks: Arc<dyn Hooks>,
        text: String,
        images: Vec<ImageContent>,
        source: InputSource,
    ) -> Prepared {
        let (mut text, mut images) = (text, images);
        match hooks
            .clone()
            .input(text.clone(), images.clone(), source)
            .await
        {
            Ok(Input::Continue) => {}
            Ok(Input::Transform {
                text: changed,
                images: new_images,
            }) => {
                text = changed;
                if let Some(new_images) = new_images {
                    images = new_images;
                }
            }
            Ok(Input::Handled) => return Prepared::Done(Ok(())),
            // pi reports a failing handler and goes on with the prompt.
            Err(error) => tracing::warn!(%error, "the input hooks failed; the prompt goes on"),
        }
        // `/mcp:<server>:<prompt> args`: the server's prompt, fetched now.
        let fetched = match self.tools.expand_command(&self.environment, &text) {
            Some(expanding) => Some(expanding.await),
            None => None,
        };
        match fetched {
            Some(Ok(expanded)) => text = expanded,
            Some(Err(error)) => {
                return Prepared::Done(Err(SessionError::InvalidParams {
                    field: None,
                    message: error.to_string(),
                }));
            }
            None => {}
        }
        let (expanded, problem) = self.resources.expand_input(&text);
        if let Some(problem) = problem {
            tracing::warn!(%problem, "skill expansion failed");
        }
        let started = hooks
            .clone()
            .before_agent_start(expanded.clone(), images.clone(), self.system_prompt)
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "the before_agent_start hooks failed; the prompt goes on");
                crate::hooks::BeforeAgentStart::default()
            });
        let model = match &self.stored_model {
            Some((provider, id)) => hooks
                .models()
                .await
                .into_iter()
                .map(|(model, _)| model)
                .find(|model| model.provider == *provider && model.id == *id)
                .map(Box::new),
            // (A custom id of such a provider is chosen again with `session/setModel`.)
            None => None,
        };
        Prepared::Ready {
            text: expanded,
            images,
            system_prompt: started.system_prompt,
            messages: started.messages,
            model,
        }
    }
}

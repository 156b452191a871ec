//! Subscription logins driven over the protocol (`auth/*`): each login runs in the daemon
//! (which owns `auth.json` and the loopback callback port), its steps go to the client that
//! started it, and that client's answers come back by login id.
//!
//! Guarantees: at most [`MAX_LOGINS`] logins run at once and each ends within [`LOGIN_TIMEOUT`];
//! a login whose request goes away (the client disconnected, or cancelled) stops and leaves
//! nothing behind; answers are queued per login and bounded.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pi_llm::oauth::{LoginEvent, LoginIo, LoginOptions, OAuthKind};
use pi_llm::registry::LoginFailure;
use pi_llm::{ApiKey, ModelRegistry};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::model::RegistryModels;

/// Logins running at once.
pub const MAX_LOGINS: usize = 8;
/// How long a login may take (a person opening a browser, a device code typed in).
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Why an `auth/*` request failed.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// No such provider, or one without a subscription login.
    #[error("{0}")]
    UnknownProvider(String),
    /// No login with this id is running.
    #[error(
        "no login {0:?} is running (it completed, failed or was cancelled); start one with `auth/login`"
    )]
    UnknownLogin(String),
    /// Too many logins at once.
    #[error("{MAX_LOGINS} logins are already running; finish or cancel one first")]
    TooMany,
    /// The login's answers are not being read.
    #[error("the login {0:?} is not waiting for an answer now")]
    NotAsking(String),
    /// The login failed or was cancelled.
    #[error(transparent)]
    Login(#[from] LoginFailure),
    /// It took too long.
    #[error("the login took longer than {} minutes and was stopped; start it again", LOGIN_TIMEOUT.as_secs() / 60)]
    TimedOut,
    /// Storing or removing a credential failed.
    #[error(transparent)]
    File(#[from] pi_llm::oauth::LoginError),
}

struct Pending {
    answers: mpsc::Sender<String>,
    cancel: CancellationToken,
}

/// The daemon's logins.
pub struct Accounts {
    models: Arc<RegistryModels>,
    // Login id → its answer queue. A sync lock, never held across await.
    pending: Mutex<HashMap<String, Pending>>,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let running = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Accounts")
            .field("running", &running)
            .finish_non_exhaustive()
    }
}

impl Accounts {
    /// Logins of `models`' registry.
    pub fn new(models: Arc<RegistryModels>) -> Self {
        Accounts {
            models,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// The registry (keys, files).
    pub fn registry(&self) -> &ModelRegistry {
        self.models.registry()
    }

    /// Runs `provider`'s login; `on_step` hears its steps with the login id. Returns the
    /// file the credential was stored in.
    pub async fn login(
        &self,
        provider: &str,
        options: LoginOptions,
        on_step: impl Fn(&str, LoginEvent) + Send,
    ) -> Result<PathBuf, AccountError> {
        let kind = OAuthKind::for_provider(provider).ok_or_else(|| {
            let known: Vec<&str> = OAuthKind::ALL
                .iter()
                .map(|kind| kind.provider_id())
                .collect();
            AccountError::UnknownProvider(format!(
                "{provider:?} has no subscription login; log in to one of {}, or store an API \
                 key with `auth/setApiKey`",
                known.join(", ")
            ))
        })?;
        let login_id = pi_util::ids::new_uuid();
        let (answers_in, answers) = mpsc::channel(4);
        let (events, mut events_out) = mpsc::channel(16);
        let cancel = CancellationToken::new();
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if pending.len() >= MAX_LOGINS {
                return Err(AccountError::TooMany);
            }
            pending.insert(
                login_id.clone(),
                Pending {
                    answers: answers_in,
                    cancel: cancel.clone(),
                },
            );
        }
        let _forget = Forget {
            accounts: self,
            login_id: login_id.clone(),
        };
        let mut io = LoginIo { events, answers };
        let registry = self.registry();
        let run = registry.login(kind, &options, &mut io);
        tokio::pin!(run);
        let outcome = loop {
            tokio::select! {
                outcome = &mut run => break outcome.map_err(AccountError::from),
                Some(event) = events_out.recv() => on_step(&login_id, event),
                () = cancel.cancelled() => {
                    break Err(AccountError::Login(LoginFailure::Flow(
                        pi_llm::oauth::OAuthError::Cancelled,
                    )))
                }
                () = tokio::time::sleep(LOGIN_TIMEOUT) => break Err(AccountError::TimedOut),
            }
        };
        // Steps sent just before the end still reach the client, in order.
        while let Ok(event) = events_out.try_recv() {
            on_step(&login_id, event);
        }
        outcome
    }

    /// Gives a running login the answer to its question.
    pub fn answer(&self, login_id: &str, text: String) -> Result<(), AccountError> {
        let sender = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(login_id)
            .map(|pending| pending.answers.clone())
            .ok_or_else(|| AccountError::UnknownLogin(login_id.to_owned()))?;
        sender
            .try_send(text)
            .map_err(|_| AccountError::NotAsking(login_id.to_owned()))
    }

    /// Cancels a running login.
    pub fn cancel(&self, login_id: &str) -> Result<(), AccountError> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let login = pending
            .get(login_id)
            .ok_or_else(|| AccountError::UnknownLogin(login_id.to_owned()))?;
        login.cancel.cancel();
        Ok(())
    }

    /// Removes `provider`'s credential everywhere; the files it was in.
    pub async fn logout(&self, provider: &str) -> Result<Vec<PathBuf>, AccountError> {
        Ok(self.registry().logout(provider).await?)
    }

    /// Stores an API key for `provider`; the file.
    pub async fn set_api_key(&self, provider: &str, key: &str) -> Result<PathBuf, AccountError> {
        if provider.trim().is_empty() {
            return Err(AccountError::UnknownProvider(
                "`provider` is empty: name the provider the key is for (see `pictl models`)"
                    .to_owned(),
            ));
        }
        let registry = self.registry();
        if !registry
            .models()
            .iter()
            .any(|model| model.provider == provider)
        {
            return Err(AccountError::UnknownProvider(format!(
                "no provider is called {provider:?}; `pictl models` lists the providers (a \
                 provider of your own goes in models.json first)"
            )));
        }
        Ok(registry.save_api_key(provider, &ApiKey::new(key)).await?)
    }
}

/// Forgets a login when its request ends, however it ends.
struct Forget<'a> {
    accounts: &'a Accounts,
    login_id: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.accounts
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.login_id);
    }
}

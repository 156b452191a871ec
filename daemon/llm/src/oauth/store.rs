//! [`Logins`]: the subscription credentials of `auth.json` files, kept fresh.
//!
//! Guarantees: one refresh at a time per file and provider in this process (the others wait
//! and take its result), under the file's lock, so pi and other daemons sharing the file
//! never refresh the same login twice either; the file is re-read under the lock, so a token
//! someone else refreshed meanwhile is used as it is. A failed refresh leaves the file as it
//! was and says which login to redo.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::{AuthLock, Endpoints, OAuthError, OAuthKind};
use crate::auth::{AuthCredential, AuthError, AuthFile, OAuthCredential};

/// Why a login's token could not be had.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// The file could not be read or written.
    #[error(transparent)]
    File(#[from] AuthError),
    /// Its lock could not be taken.
    #[error("cannot lock {path}: {source}", path = .path.display())]
    Lock {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The login was removed from the file meanwhile.
    #[error(
        "there is no {provider} login in {path} any more; log in again with `pictl login {provider}` (or /login in the TUI)",
        path = .path.display()
    )]
    LoggedOut {
        /// The provider.
        provider: String,
        /// The file.
        path: PathBuf,
    },
    /// The refresh failed.
    #[error(
        "the {name} login in {path} could not be refreshed ({source}); log in again with `pictl login {provider}` (or /login in the TUI)",
        path = .path.display()
    )]
    Refresh {
        /// The provider.
        provider: String,
        /// pi's name of the login.
        name: &'static str,
        /// The file.
        path: PathBuf,
        /// What the authorization server said.
        source: OAuthError,
    },
}

/// One refresh at a time for one login.
type Flight = Arc<tokio::sync::Mutex<()>>;

/// Now, in Unix milliseconds (the registry's clock).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The refresher of a registry's logins. Shared (`Arc`) by every key it hands out.
pub struct Logins {
    endpoints: Endpoints,
    clock: Clock,
    // One async lock per (file, provider): the single flight. A sync lock around the map,
    // never held across await.
    flights: Mutex<HashMap<(PathBuf, String), Flight>>,
}

impl std::fmt::Debug for Logins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logins")
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

impl Logins {
    /// Logins reaching `endpoints`, expiring by `clock`.
    pub fn new(endpoints: Endpoints, clock: Clock) -> Self {
        Logins {
            endpoints,
            clock,
            flights: Mutex::new(HashMap::new()),
        }
    }

    /// Where logins and refreshes go.
    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    /// Whether `credential` has expired by the clock (pi's rule: no expiry, no refresh).
    pub fn expired(&self, credential: &OAuthCredential) -> bool {
        credential.expires > 0 && (self.clock)() >= credential.expires
    }

    /// `provider`'s credential in `path`, refreshed first when it has expired or when
    /// `rejected` is its access token (the provider refused it).
    pub async fn current(
        &self,
        path: &Path,
        provider: &str,
        rejected: Option<&str>,
    ) -> Result<OAuthCredential, LoginError> {
        let flight = self.flight(path, provider);
        let _one_at_a_time = flight.lock().await;
        let read = || -> Result<(AuthFile, Option<OAuthCredential>), LoginError> {
            let file = AuthFile::load(path)?;
            let credential = match file.get(provider) {
                Some(AuthCredential::Oauth(credential)) => Some(credential.clone()),
                _ => None,
            };
            Ok((file, credential))
        };
        let usable = |credential: &OAuthCredential| {
            !self.expired(credential) && rejected != Some(credential.access.as_str())
        };
        // A token someone else refreshed meanwhile is found without locking the file.
        if let (_, Some(credential)) = read()?
            && usable(&credential)
        {
            return Ok(credential);
        }
        let _locked = AuthLock::acquire(path)
            .await
            .map_err(|source| LoginError::Lock {
                path: path.to_owned(),
                source,
            })?;
        let (mut file, credential) = read()?;
        let credential = credential.ok_or_else(|| LoginError::LoggedOut {
            provider: provider.to_owned(),
            path: path.to_owned(),
        })?;
        if usable(&credential) {
            return Ok(credential);
        }
        let Some(kind) = OAuthKind::for_provider(provider) else {
            return Err(LoginError::Refresh {
                provider: provider.to_owned(),
                name: "subscription",
                path: path.to_owned(),
                source: OAuthError::Local(format!(
                    "the daemon cannot refresh {provider} logins; log in with pi"
                )),
            });
        };
        tracing::info!(provider, path = %path.display(), "refreshing a subscription login");
        let fresh = super::refresh(kind, &self.endpoints, &credential)
            .await
            .map_err(|source| LoginError::Refresh {
                provider: provider.to_owned(),
                name: kind.name(),
                path: path.to_owned(),
                source,
            })?;
        file.set(provider, AuthCredential::Oauth(fresh.clone()));
        file.save()?;
        Ok(fresh)
    }

    /// Stores `credential` as `provider`'s login in `path`, under the file's lock.
    pub async fn save(
        &self,
        path: &Path,
        provider: &str,
        credential: OAuthCredential,
    ) -> Result<(), LoginError> {
        self.edit(path, |file| {
            file.set(provider, AuthCredential::Oauth(credential));
            true
        })
        .await
        .map(|_| ())
    }

    /// Stores `key` as `provider`'s API key in `path`, under the file's lock.
    pub async fn save_api_key(
        &self,
        path: &Path,
        provider: &str,
        key: &str,
    ) -> Result<(), LoginError> {
        self.edit(path, |file| {
            file.set(
                provider,
                AuthCredential::ApiKey {
                    key: key.to_owned(),
                },
            );
            true
        })
        .await
        .map(|_| ())
    }

    /// Removes `provider`'s credential from `path`; whether there was one.
    pub async fn remove(&self, path: &Path, provider: &str) -> Result<bool, LoginError> {
        self.edit(path, |file| file.remove(provider).is_some())
            .await
    }

    /// Re-reads `path` under its lock, applies `change`, writes it when `change` says so.
    async fn edit(
        &self,
        path: &Path,
        change: impl FnOnce(&mut AuthFile) -> bool,
    ) -> Result<bool, LoginError> {
        let _locked = AuthLock::acquire(path)
            .await
            .map_err(|source| LoginError::Lock {
                path: path.to_owned(),
                source,
            })?;
        let mut file = AuthFile::load(path)?;
        let changed = change(&mut file);
        if changed {
            file.save()?;
        }
        Ok(changed)
    }

    fn flight(&self, path: &Path, provider: &str) -> Flight {
        self.flights
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((path.to_owned(), provider.to_owned()))
            .or_default()
            .clone()
    }
}

/// A key that is a subscription login: which login, to refresh it with, and its credential as
/// last seen (shared by the clones of one key, so a run's requests after a refresh use the new
/// token without reading the file again).
#[derive(Clone)]
pub struct LoginRef {
    /// The refresher.
    pub logins: Arc<Logins>,
    /// The provider it is stored under.
    pub provider: String,
    /// The `auth.json` it lives in.
    pub path: PathBuf,
    // A sync lock, never held across await.
    seen: Arc<Mutex<OAuthCredential>>,
}

impl std::fmt::Debug for LoginRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRef")
            .field("provider", &self.provider)
            .field("path", &self.path)
            .finish()
    }
}

impl LoginRef {
    /// The login of `provider` in `path`, whose credential was read as `credential`.
    pub fn new(
        logins: Arc<Logins>,
        provider: impl Into<String>,
        path: impl Into<PathBuf>,
        credential: OAuthCredential,
    ) -> Self {
        LoginRef {
            logins,
            provider: provider.into(),
            path: path.into(),
            seen: Arc::new(Mutex::new(credential)),
        }
    }

    /// A token good now: the one seen while it has not expired (no file is read on a
    /// request's way), else the file's, refreshed when it expired.
    pub async fn fresh(&self) -> Result<OAuthCredential, LoginError> {
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if !self.logins.expired(&seen) {
            return Ok(seen);
        }
        let current = self
            .logins
            .current(&self.path, &self.provider, None)
            .await?;
        Ok(self.remember(current))
    }

    /// A token after the provider refused `rejected` (refreshed unless someone already did).
    pub async fn after_rejection(&self, rejected: &str) -> Result<OAuthCredential, LoginError> {
        let current = self
            .logins
            .current(&self.path, &self.provider, Some(rejected))
            .await?;
        Ok(self.remember(current))
    }

    fn remember(&self, credential: OAuthCredential) -> OAuthCredential {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = credential.clone();
        credential
    }
}

//! `pictl login [PROVIDER]` and `pictl logout [PROVIDER]`: subscription logins (pi's `/login`,
//! `/logout`) run by the daemon and stored in pi's `auth.json`, so pi and every session share
//! them. The URL to open and the questions go to stderr; answers are read from stdin (a pasted
//! code works on a machine without a browser).

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use clap::Args;
use pi_protocol::v1::{
    AuthList, AuthListParams, AuthLogin, AuthLoginEvent, AuthLoginInput, AuthLoginInputParams,
    AuthLoginParams, AuthLogout, AuthLogoutParams, AuthProviderStatus, AuthSetApiKey,
    AuthSetApiKeyParams, AuthSource, LoginStep,
};
use tokio::sync::mpsc;

use crate::daemon_client;
use crate::error::CliError;
use crate::output::{eprint_line, print_text};

/// `pictl login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// anthropic (Claude Pro/Max), openai-codex (ChatGPT Plus/Pro) or github-copilot; with
    /// --key, any provider (default: choose from a list)
    pub provider: Option<String>,
    /// Use this GitHub Enterprise domain for Copilot (`""`: github.com)
    #[arg(long, value_name = "DOMAIN")]
    pub enterprise: Option<String>,
    /// Store an API key for PROVIDER instead, read from stdin
    #[arg(long)]
    pub key: bool,
    /// Print the URL without opening a browser
    #[arg(long)]
    pub no_browser: bool,
}

/// `pictl logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The provider (default: the one you are logged in to, or choose)
    pub provider: Option<String>,
}

/// The terminal's echo turned off while a secret is typed; back on when dropped.
struct NoEcho(Option<rustix::termios::Termios>);

impl NoEcho {
    fn start() -> NoEcho {
        let stdin = std::io::stdin();
        let Ok(saved) = rustix::termios::tcgetattr(&stdin) else {
            return NoEcho(None);
        };
        let mut quiet = saved.clone();
        quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
        match rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &quiet) {
            Ok(()) => NoEcho(Some(saved)),
            Err(_) => NoEcho(None),
        }
    }
}

impl Drop for NoEcho {
    fn drop(&mut self) {
        if let Some(saved) = &self.0 {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                saved,
            );
            // The Enter the person typed was not echoed either.
            eprint_line("");
        }
    }
}

/// Lines of stdin, read on their own thread (a read may wait for ever while the browser
/// completes the login; the process may end without it).
fn stdin_lines() -> mpsc::Receiver<String> {
    let (sender, lines) = mpsc::channel(4);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if sender.blocking_send(line).is_err() {
                break;
            }
        }
    });
    lines
}

fn describe(status: &AuthProviderStatus) -> String {
    let now = pi_util::time::now_millis();
    match &status.source {
        Some(AuthSource::Login { expires, .. }) if *expires > now => "logged in".to_owned(),
        Some(AuthSource::Login { .. }) => "logged in (refreshed when used)".to_owned(),
        Some(AuthSource::ApiKey { .. }) => "API key in auth.json".to_owned(),
        Some(AuthSource::Environment { variable }) => format!("${variable}"),
        Some(AuthSource::ModelsJson { .. }) => "apiKey in models.json".to_owned(),
        Some(AuthSource::Explicit) => "key given at runtime".to_owned(),
        None => "not logged in".to_owned(),
    }
}

/// Asks which of `choices` (numbered on stderr); a number or an id.
async fn choose(
    lines: &mut mpsc::Receiver<String>,
    question: &str,
    choices: &[&AuthProviderStatus],
) -> Result<String, CliError> {
    let ids: Vec<&str> = choices
        .iter()
        .map(|status| status.provider.as_str())
        .collect();
    if !std::io::stdin().is_terminal() {
        return Err(CliError::usage(format!(
            "name the provider: one of {}",
            ids.join(", ")
        )));
    }
    eprint_line(question);
    for (index, status) in choices.iter().enumerate() {
        eprint_line(&format!(
            "  {}. {} ({}) — {}",
            index + 1,
            status.name,
            status.provider,
            describe(status)
        ));
    }
    let answer = lines
        .recv()
        .await
        .ok_or_else(|| CliError::interrupted("no answer on stdin"))?;
    let answer = answer.trim();
    answer
        .parse::<usize>()
        .ok()
        .and_then(|number| ids.get(number.wrapping_sub(1)).copied())
        .or_else(|| ids.iter().copied().find(|id| *id == answer))
        .map(str::to_owned)
        .ok_or_else(|| {
            CliError::usage(format!(
                "{answer:?} is none of the choices; answer with a number or one of {}",
                ids.join(", ")
            ))
        })
}

/// Opens `url` in the desktop's browser, when there is one.
pub(crate) fn open_browser(url: &str) {
    pi_tui::open_in_browser(url.to_owned());
}

/// `pictl login [PROVIDER]`.
pub async fn login(args: LoginArgs) -> Result<ExitCode, CliError> {
    let mut connected = daemon_client::connect().await?;
    let mut lines = stdin_lines();
    let providers = connected
        .client
        .call::<AuthList>(&AuthListParams {})
        .await?
        .providers;
    if args.key {
        let Some(provider) = args.provider else {
            return Err(CliError::usage(
                "name the provider the key is for: `pictl login --key PROVIDER` (see `pictl models`)",
            ));
        };
        let typed = std::io::stdin().is_terminal();
        if typed {
            eprint_line(&format!(
                "Paste the API key for {provider} and press Enter (it is not shown):"
            ));
        }
        let key = {
            let _quiet = typed.then(NoEcho::start);
            tokio::select! {
                key = lines.recv() => key,
                _ = tokio::signal::ctrl_c() => {
                    return Err(CliError::interrupted("interrupted; nothing was stored"));
                }
            }
        }
        .ok_or_else(|| CliError::usage("no key on stdin: pipe it in or paste it"))?;
        let stored = connected
            .client
            .call::<AuthSetApiKey>(&AuthSetApiKeyParams {
                provider: provider.clone(),
                key: key.trim().to_owned(),
            })
            .await?;
        print_text(&format!(
            "Stored the API key for {provider} in {}\n",
            stored.path
        ));
        return Ok(ExitCode::SUCCESS);
    }
    let subscriptions: Vec<&AuthProviderStatus> = providers
        .iter()
        .filter(|status| status.subscription)
        .collect();
    let provider = match args.provider {
        Some(provider) => provider,
        None => choose(&mut lines, "Log in to which subscription?", &subscriptions).await?,
    };
    if !subscriptions
        .iter()
        .any(|status| status.provider == provider)
    {
        let ids: Vec<&str> = subscriptions
            .iter()
            .map(|status| status.provider.as_str())
            .collect();
        return Err(CliError::usage(format!(
            "{provider:?} has no subscription login; log in to one of {}, or store an API key \
             with `pictl login --key {provider}`",
            ids.join(", ")
        )));
    }
    let name = subscriptions
        .iter()
        .find(|status| status.provider == provider)
        .map_or_else(|| provider.clone(), |status| status.name.clone());
    let params = AuthLoginParams {
        provider: provider.clone(),
        enterprise_domain: args.enterprise,
    };
    let call = connected.client.call::<AuthLogin>(&params);
    tokio::pin!(call);
    let mut login_id = None;
    // The open question, and whether an empty answer is fine.
    let mut asking: Option<bool> = None;
    let answer = loop {
        tokio::select! {
            answer = &mut call => break answer?,
            step = connected.notifications.next_of::<AuthLoginEvent>() => {
                let Some(Ok(event)) = step else { continue };
                login_id = Some(event.login_id.clone());
                match event.step {
                    LoginStep::OpenUrl { url, instructions } => {
                        eprint_line(&format!("Open this URL in a browser:\n\n  {url}\n"));
                        eprint_line(&instructions);
                        if !args.no_browser {
                            open_browser(&url);
                        }
                    }
                    LoginStep::Prompt { message, placeholder, allow_empty } => {
                        match placeholder {
                            Some(example) => eprint_line(&format!("{message} (e.g. {example})")),
                            None => eprint_line(&message),
                        }
                        asking = Some(allow_empty);
                    }
                    LoginStep::Progress { message } => eprint_line(&message),
                }
            }
            line = lines.recv(), if asking.is_some() => {
                let text = match (line, asking) {
                    (Some(line), _) => line.trim().to_owned(),
                    // stdin ended: the empty answer where one is fine, else nothing to wait for
                    // but the browser.
                    (None, Some(true)) => String::new(),
                    (None, _) => {
                        asking = None;
                        continue;
                    }
                };
                if let Some(login_id) = &login_id {
                    connected
                        .client
                        .call::<AuthLoginInput>(&AuthLoginInputParams {
                            login_id: login_id.clone(),
                            text,
                        })
                        .await?;
                }
                asking = None;
            }
        }
    };
    print_text(&format!(
        "Logged in to {name}. The tokens are in {} (pi uses them too); sessions refresh them as needed.\n",
        answer.path
    ));
    Ok(ExitCode::SUCCESS)
}

/// `pictl logout [PROVIDER]`.
pub async fn logout(args: LogoutArgs) -> Result<ExitCode, CliError> {
    let connected = daemon_client::connect().await?;
    let provider = match args.provider {
        Some(provider) => provider,
        None => {
            let providers = connected
                .client
                .call::<AuthList>(&AuthListParams {})
                .await?
                .providers;
            let logged_in: Vec<&AuthProviderStatus> = providers
                .iter()
                .filter(|status| matches!(status.source, Some(AuthSource::Login { .. })))
                .collect();
            match logged_in.as_slice() {
                [] => {
                    return Err(CliError::failed(
                        "you are logged in to no subscription; `pictl logout PROVIDER` removes \
                         an API key from auth.json",
                    ));
                }
                [only] => only.provider.clone(),
                several => {
                    let mut lines = stdin_lines();
                    choose(&mut lines, "Log out of which subscription?", several).await?
                }
            }
        }
    };
    let answer = connected
        .client
        .call::<AuthLogout>(&AuthLogoutParams {
            provider: provider.clone(),
        })
        .await?;
    if answer.removed.is_empty() {
        return Err(CliError::failed(format!(
            "there is no login or key for {provider} in auth.json; `pictl models` shows where \
             each provider's key comes from"
        )));
    }
    print_text(&format!(
        "Logged out of {provider}: removed from {}\n",
        answer.removed.join(", ")
    ));
    Ok(ExitCode::SUCCESS)
}

//! `/login` and `/logout`: the subscriptions offered from `auth/list`, a login's dialog fed by
//! its `auth/loginEvent` steps (the URL, the question, the answer typed or pasted), Esc
//! cancelling it, and how the answers of `auth/login` and `auth/logout` are said.

use crossterm::event::KeyCode;
use insta::assert_snapshot;
use pi_protocol::v1::*;
use pi_tui::effect::{Effect, Request};
use pi_tui::input::{Input, Reply};
use pi_tui::overlay::{Overlay, SelectorKind};

use super::support::*;

const URL: &str = "https://claude.ai/oauth/authorize?code=true&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e&response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A53692%2Fcallback&scope=org%3Acreate_api_key+user%3Aprofile+user%3Ainference&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&state=dBjftJeZ4CVP";

/// The daemon requests among the effects (drafts, file listings, the clipboard left out).
fn requests(effects: Vec<Effect>) -> Vec<Request> {
    effects
        .into_iter()
        .filter_map(|effect| match effect {
            Effect::Request(request) => Some(request),
            _ => None,
        })
        .collect()
}

fn status(
    provider: &str,
    name: &str,
    subscription: bool,
    source: Option<AuthSource>,
) -> AuthProviderStatus {
    AuthProviderStatus {
        provider: provider.to_owned(),
        name: name.to_owned(),
        subscription,
        source,
        subscription_token: false,
    }
}

fn login_source() -> Option<AuthSource> {
    Some(AuthSource::Login {
        path: "/home/me/.pi/agent/auth.json".to_owned(),
        expires: 0,
    })
}

/// `auth/list`'s answer: logged in to Claude, the other subscriptions not, and a provider
/// with a key in the environment.
fn providers() -> Vec<AuthProviderStatus> {
    vec![
        status(
            "anthropic",
            "Anthropic (Claude Pro/Max)",
            true,
            login_source(),
        ),
        status("github-copilot", "GitHub Copilot", true, None),
        status(
            "openai-codex",
            "ChatGPT Plus/Pro (Codex Subscription)",
            true,
            None,
        ),
        status(
            "openai",
            "openai",
            false,
            Some(AuthSource::Environment {
                variable: "OPENAI_API_KEY".to_owned(),
            }),
        ),
    ]
}

fn step(login_id: &str, step: LoginStep) -> Input {
    Input::LoginEvent(AuthLoginEventParams {
        login_id: login_id.to_owned(),
        step,
    })
}

fn run(harness: &mut Harness, command: &str) {
    harness.type_text(command);
    harness.send(key(KeyCode::Enter));
}

#[test]
fn slash_login_offers_the_subscriptions_and_starts_the_one_chosen() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    run(&mut harness, "/login");
    assert_eq!(requests(harness.take_effects()), [Request::AuthList]);
    assert!(matches!(
        harness.state.overlay,
        Some(Overlay::Loading {
            kind: SelectorKind::Login,
            ..
        })
    ));

    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    let Some(Overlay::Select(selector)) = &harness.state.overlay else {
        panic!("no selector: {:?}", harness.state.overlay);
    };
    assert_eq!(selector.kind, SelectorKind::Login);
    let rows: Vec<(&str, &str)> = selector
        .visible()
        .map(|item| (item.label.as_str(), item.detail.as_str()))
        .collect();
    // The subscriptions, each with whether it is logged in, then the providers that take an
    // API key (pi's /login offers both).
    assert_eq!(
        rows,
        [
            ("Anthropic (Claude Pro/Max)", "logged in"),
            ("GitHub Copilot", "subscription"),
            ("ChatGPT Plus/Pro (Codex Subscription)", "subscription"),
            ("openai", "$OPENAI_API_KEY"),
        ]
    );
    let screen = harness.screen(80, 24);
    assert!(screen.contains("Log in to a subscription"), "{screen}");
    assert!(screen.contains("GitHub Copilot  subscription"), "{screen}");

    harness.send(key(KeyCode::Down));
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::Login {
            provider: "github-copilot".to_owned()
        }]
    );
    let Some(Overlay::Login(dialog)) = &harness.state.overlay else {
        panic!("no login dialog: {:?}", harness.state.overlay);
    };
    assert_eq!(dialog.provider, "github-copilot");
    let screen = harness.screen(80, 24);
    assert!(screen.contains("Log in: GitHub Copilot"), "{screen}");
    assert!(screen.contains("Starting the login…"), "{screen}");
}

#[test]
fn a_login_shows_the_url_and_the_question_and_sends_the_answer() {
    let mut harness = Harness::attached(Vec::new());
    // Known names (from an earlier `auth/list`) title the dialog; `/login NAME` asks no list.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    harness.take_effects();
    run(&mut harness, "/login anthropic");
    // The daemon answers the list the command waits for.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::Login {
            provider: "anthropic".to_owned()
        }]
    );

    harness.send(step(
        "login-7",
        LoginStep::OpenUrl {
            url: URL.to_owned(),
            instructions: "Complete login in your browser. If the browser is on another \
                           machine, paste the final redirect URL here."
                .to_owned(),
        },
    ));
    // The URL goes to the clipboard, and to the desktop's browser if there is one.
    let effects = harness.take_effects();
    assert!(
        effects.contains(&Effect::Copy(URL.to_owned())),
        "{effects:?}"
    );
    assert!(
        effects.contains(&Effect::OpenUrl(URL.to_owned())),
        "{effects:?}"
    );
    harness.send(step(
        "login-7",
        LoginStep::Prompt {
            message: "Paste the authorization code or full redirect URL:".to_owned(),
            placeholder: Some("http://localhost:53692/callback".to_owned()),
            allow_empty: false,
        },
    ));
    assert_snapshot!(harness.screen(80, 24));

    // An empty answer is not sent when the prompt wants one.
    harness.send(key(KeyCode::Enter));
    assert_eq!(requests(harness.take_effects()), []);
    harness.type_text("the-code#the-state");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::LoginInput {
            login_id: "login-7".to_owned(),
            text: "the-code#the-state".to_owned(),
        }]
    );
    harness.send(step(
        "login-7",
        LoginStep::Progress {
            message: "Exchanging authorization code for tokens...".to_owned(),
        },
    ));
    let screen = harness.screen(80, 24);
    assert!(
        screen.contains("Exchanging authorization code for tokens..."),
        "{screen}"
    );
    assert!(
        screen.contains("Waiting for the login to finish…"),
        "{screen}"
    );
    assert!(!screen.contains("Paste the authorization code"), "{screen}");

    // Done: the dialog closes, the status says where the tokens are, the models are asked
    // for again (the provider's have a key now).
    harness.send(Input::Reply(Reply::LoggedIn {
        provider: "anthropic".to_owned(),
        path: "/home/me/.pi/agent/auth.json".to_owned(),
    }));
    assert!(harness.state.overlay.is_none());
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Logged in to Anthropic (Claude Pro/Max) (tokens in ~/.pi/agent/auth.json)")
    );
    assert!(harness.state.models.is_empty());
    assert_eq!(requests(harness.take_effects()), [Request::ListModels]);
}

#[test]
fn a_pasted_answer_goes_on_one_line_and_an_empty_one_is_sent_when_allowed() {
    let mut harness = Harness::attached(Vec::new());
    run(&mut harness, "/login github-copilot");
    // The daemon answers the list the command waits for.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    harness.send(step(
        "login-2",
        LoginStep::Prompt {
            message: "GitHub Enterprise URL/domain (blank for github.com)".to_owned(),
            placeholder: Some("company.ghe.com".to_owned()),
            allow_empty: true,
        },
    ));
    harness.take_effects();
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::LoginInput {
            login_id: "login-2".to_owned(),
            text: String::new(),
        }]
    );

    harness.send(step(
        "login-2",
        LoginStep::Prompt {
            message: "Paste the code:".to_owned(),
            placeholder: None,
            allow_empty: false,
        },
    ));
    harness.send(Input::Paste(
        "http://localhost/cb?code=abc\n&state=xyz\n".to_owned(),
    ));
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::LoginInput {
            login_id: "login-2".to_owned(),
            text: "http://localhost/cb?code=abc&state=xyz".to_owned(),
        }]
    );
    // Nothing went to the editor.
    assert!(harness.state.editor.is_empty());
}

#[test]
fn esc_cancels_the_login_and_its_answer_says_so() {
    let mut harness = Harness::attached(Vec::new());
    run(&mut harness, "/login anthropic");
    // The daemon answers the list the command waits for.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    harness.send(step(
        "login-3",
        LoginStep::OpenUrl {
            url: URL.to_owned(),
            instructions: String::new(),
        },
    ));
    harness.take_effects();
    harness.send(key(KeyCode::Esc));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::LoginCancel("login-3".to_owned())]
    );
    assert!(harness.state.overlay.is_none());
    harness.send(Input::Reply(Reply::LoginFailed {
        provider: "anthropic".to_owned(),
        message: "the login was cancelled".to_owned(),
        cancelled: true,
    }));
    assert_eq!(harness.state.status.as_deref(), Some("Login cancelled."));

    // Cancelled before its first step named it: that step sends the cancellation.
    run(&mut harness, "/login github-copilot");
    // The daemon answers the list the command waits for.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    harness.take_effects();
    harness.send(key(KeyCode::Esc));
    assert_eq!(requests(harness.take_effects()), []);
    assert!(harness.state.overlay.is_none());
    harness.send(step(
        "login-4",
        LoginStep::Progress {
            message: "Starting".to_owned(),
        },
    ));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::LoginCancel("login-4".to_owned())]
    );
    assert!(harness.state.overlay.is_none());

    // A failed login closes its dialog and shows the daemon's words whole, wrapped.
    run(&mut harness, "/login openai-codex");
    // The daemon answers the list the command waits for.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    let message = "could not reach https://auth.openai.com/oauth/token: error sending request: \
                   client error (Connect): dns error: failed to lookup address information";
    harness.send(Input::Reply(Reply::LoginFailed {
        provider: "openai-codex".to_owned(),
        message: message.to_owned(),
        cancelled: false,
    }));
    assert_eq!(harness.state.status.as_deref(), Some("Login failed."));
    let screen = harness.screen(60, 24);
    assert!(
        screen.contains("Login to ChatGPT Plus/Pro (Codex Subscription) failed"),
        "{screen}"
    );
    assert!(screen.contains("failed to lookup address"), "{screen}");
}

#[test]
fn slash_logout_offers_the_logins_or_says_there_is_none() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    run(&mut harness, "/logout");
    assert_eq!(requests(harness.take_effects()), [Request::AuthList]);
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    let Some(Overlay::Select(selector)) = &harness.state.overlay else {
        panic!("no selector: {:?}", harness.state.overlay);
    };
    assert_eq!(selector.kind, SelectorKind::Logout);
    let values: Vec<&str> = selector.visible().map(|item| item.value.as_str()).collect();
    assert_eq!(values, ["anthropic"]);
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::Logout("anthropic".to_owned())]
    );
    harness.send(Input::Reply(Reply::LoggedOut {
        provider: "anthropic".to_owned(),
        removed: vec!["/home/me/.pi/agent/auth.json".to_owned()],
    }));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("Logged out of anthropic.")
    );
    assert_eq!(requests(harness.take_effects()), [Request::ListModels]);

    // Logged in to nothing: no dialog, a status.
    run(&mut harness, "/logout");
    let none: Vec<AuthProviderStatus> = providers()
        .into_iter()
        .filter(|status| !matches!(status.source, Some(AuthSource::Login { .. })))
        .collect();
    harness.send(Input::Reply(Reply::AuthProviders(none)));
    assert!(harness.state.overlay.is_none());
    assert_eq!(
        harness.state.status.as_deref(),
        Some("You are logged in to no subscription.")
    );

    // Named: logged out at once; nothing to remove is said.
    harness.take_effects();
    run(&mut harness, "/logout github-copilot");
    assert_eq!(
        requests(harness.take_effects()),
        [Request::Logout("github-copilot".to_owned())]
    );
    harness.send(Input::Reply(Reply::LoggedOut {
        provider: "github-copilot".to_owned(),
        removed: Vec::new(),
    }));
    assert_eq!(
        harness.state.status.as_deref(),
        Some("No login or key for github-copilot in auth.json.")
    );
}

/// A provider without a subscription: `/login` takes its API key, never drawn, and stores it.
#[test]
fn slash_login_stores_an_api_key_typed_unseen() {
    let mut harness = Harness::attached(Vec::new());
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    harness.take_effects();
    run(&mut harness, "/login openai");
    assert_eq!(requests(harness.take_effects()), []);
    harness.type_text("sk-secret-typed");
    let screen = harness.screen(80, 24);
    assert!(screen.contains("API key: openai"), "{screen}");
    assert!(screen.contains("Paste the API key for openai"), "{screen}");
    assert!(!screen.contains("sk-secret-typed"), "{screen}");
    assert!(screen.contains("•••••••••••••••"), "{screen}");
    harness.send(key(KeyCode::Enter));
    assert_eq!(
        requests(harness.take_effects()),
        [Request::SetApiKey {
            provider: "openai".to_owned(),
            key: "sk-secret-typed".to_owned()
        }]
    );
    assert!(harness.state.overlay.is_none());
    // Esc leaves without storing anything.
    run(&mut harness, "/login openai");
    harness.type_text("sk-other");
    harness.send(key(KeyCode::Esc));
    assert_eq!(requests(harness.take_effects()), []);
    assert!(harness.state.overlay.is_none());
}

/// The transcript's lines as text.
fn transcript(harness: &mut Harness) -> String {
    harness.screen(200, 40)
}

#[test]
fn a_claude_subscription_gets_pis_extra_usage_warning_once() {
    let mut harness = Harness::attached(Vec::new());
    // The session runs an `anthropic` model: how it is paid for is asked once.
    assert!(requests(harness.take_effects()).contains(&Request::AuthList));
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    let screen = transcript(&mut harness);
    assert!(
        screen.contains("Anthropic subscription auth is active. Third-party harness usage draws"),
        "{screen}"
    );
    assert_eq!(screen.matches("Anthropic subscription auth").count(), 1);
    // Listed again (by /login): not said twice.
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    let screen = transcript(&mut harness);
    assert_eq!(
        screen.matches("Anthropic subscription auth").count(),
        1,
        "{screen}"
    );
}

#[test]
fn a_subscription_token_given_as_a_key_warns_and_a_plain_key_does_not() {
    let key = |subscription_token| {
        let mut status = status(
            "anthropic",
            "Anthropic (Claude Pro/Max)",
            true,
            Some(AuthSource::Environment {
                variable: "ANTHROPIC_API_KEY".to_owned(),
            }),
        );
        status.subscription_token = subscription_token;
        vec![status]
    };
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.send(Input::Reply(Reply::AuthProviders(key(false))));
    assert!(!transcript(&mut harness).contains("Anthropic subscription auth"));
    harness.send(Input::Reply(Reply::AuthProviders(key(true))));
    assert!(transcript(&mut harness).contains("Anthropic subscription auth is active"));
}

#[test]
fn warnings_anthropic_extra_usage_false_keeps_it_quiet() {
    let mut harness = Harness::attached(Vec::new());
    harness.take_effects();
    harness.send(Input::Reply(settings(
        serde_json::json!({"warnings": {"anthropicExtraUsage": false}}),
    )));
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    assert!(!transcript(&mut harness).contains("Anthropic subscription auth"));
}

#[test]
fn no_extra_usage_check_for_other_providers() {
    let mut harness = Harness::new();
    let mut session = info(0);
    session.model = Some(ModelRef {
        provider: "openai".to_owned(),
        id: "gpt-5".to_owned(),
    });
    harness.attach(session, Vec::new());
    assert!(!requests(harness.take_effects()).contains(&Request::AuthList));
    harness.send(Input::Reply(Reply::AuthProviders(providers())));
    assert!(!transcript(&mut harness).contains("Anthropic subscription auth"));
}

#[test]
fn a_subscription_token_in_this_shell_or_on_the_command_line_warns_too() {
    let plain_file_key = || {
        vec![status(
            "anthropic",
            "Anthropic (Claude Pro/Max)",
            true,
            Some(AuthSource::ApiKey {
                path: "/home/me/.pi/agent/auth.json".to_owned(),
            }),
        )]
    };
    let no_key = || {
        vec![status(
            "anthropic",
            "Anthropic (Claude Pro/Max)",
            true,
            None,
        )]
    };
    // ANTHROPIC_OAUTH_TOKEN / ANTHROPIC_API_KEY of this shell: the session's key unless
    // auth.json has one.
    let mut harness = Harness::new();
    harness.state.environment.anthropic_env_token = true;
    harness.attach(info(0), Vec::new());
    harness.send(Input::Reply(Reply::AuthProviders(plain_file_key())));
    assert!(!transcript(&mut harness).contains("Anthropic subscription auth"));
    harness.send(Input::Reply(Reply::AuthProviders(no_key())));
    assert!(transcript(&mut harness).contains("Anthropic subscription auth is active"));
    // `--api-key sk-ant-oat…` beats every file.
    let mut harness = Harness::new();
    harness.state.environment.subscription_key = true;
    harness.attach(info(0), Vec::new());
    harness.send(Input::Reply(Reply::AuthProviders(plain_file_key())));
    assert!(transcript(&mut harness).contains("Anthropic subscription auth is active"));
}

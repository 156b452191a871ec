//! Zero-setup pi migration, through the protocol: a `PI_HOME` whose `.pi/agent` holds pi's
//! settings.json, AGENTS.md, skills and prompts supplies new sessions' default model,
//! thinking level and queue modes, their system prompt and their `/skill:` and `/template`
//! expansion; `settings/get` shows it all and `settings/setDefault` writes only ours.

use std::sync::Arc;

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_daemon::coding::ResourceRoots;
use pi_llm::faux::{FauxProvider, FauxReply};
use pi_llm::{Message, UserContent};
use pi_protocol::ErrorKind;
use pi_protocol::v1::*;
use serde_json::{Value, json};

use crate::suite::sessions::harness::{Options, TestDaemon, run_events};

/// A tool named `read` so skills are listed in the system prompt.
struct ReadStub {
    schema: Value,
}

impl Tool for ReadStub {
    fn name(&self) -> &str {
        "read"
    }
    fn label(&self) -> &str {
        "Read"
    }
    fn description(&self) -> &str {
        "Reads a file"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read file contents")
    }
    fn execute(self: Arc<Self>, _invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async { ToolOutput::text("stub") })
    }
}

fn write(root: &std::path::Path, relative: &str, content: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

async fn start() -> TestDaemon {
    let home = tempfile::Builder::new()
        .prefix("pi-home-test-")
        .tempdir()
        .unwrap();
    let root = home.path();
    write(
        root,
        ".pi/agent/settings.json",
        r#"{"defaultProvider": "faux", "defaultModel": "faux-2", "followUpMode": "all", "theme": "dark"}"#,
    );
    write(root, ".pi/agent/AGENTS.md", "Global pi rules.");
    write(
        root,
        ".pi/agent/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Work with PDF files\n---\nUse pdftotext.\n",
    );
    write(
        root,
        ".pi/agent/skills/Broken/SKILL.md",
        "---\nname: Broken\n---\nno description\n",
    );
    write(root, ".pi/agent/prompts/review.md", "Review $1 carefully.");
    write(root, "work/plain/.keep", "");
    write(root, "work/proj/AGENTS.md", "Project rules.");
    write(
        root,
        "work/proj/.pi/settings.json",
        r#"{"defaultModel": "faux-1", "defaultThinkingLevel": "high", "colour": "blue"}"#,
    );
    let paths = pi_test_support::daemon::paths_for(root);
    let mut options = Options::default();
    options.settings.resources = ResourceRoots::from_paths(&paths);
    options.extra_tools = vec![Arc::new(ReadStub {
        schema: json!({"type": "object", "properties": {}}),
    })];
    TestDaemon::start_in(home, options, FauxProvider::new()).await
}

fn cwd(daemon: &TestDaemon, relative: &str) -> String {
    daemon.home.path().join(relative).display().to_string()
}

fn redact(daemon: &TestDaemon, text: &str) -> String {
    let text = text.replace(&daemon.home.path().display().to_string(), "<home>");
    match text.find("Current date: ") {
        Some(at) => {
            let start = at + "Current date: ".len();
            format!("{}YYYY-MM-DD{}", &text[..start], &text[start + 10..])
        }
        None => text,
    }
}

fn last_user_text(faux: &FauxProvider) -> String {
    let request = faux.requests().pop().unwrap();
    match request.context.messages.last().unwrap() {
        Message::User(user) => match &user.content[..] {
            [UserContent::Text(text)] => text.text.clone(),
            other => panic!("unexpected content {other:?}"),
        },
        other => panic!("unexpected message {other:?}"),
    }
}

#[tokio::test]
async fn pi_agent_dir_supplies_settings_context_skills_and_prompts() {
    let daemon = start().await;
    let (client, mut notifications) = daemon.client().await;
    let create = |relative: &str| SessionCreateParams {
        cwd: cwd(&daemon, relative),
        ..SessionCreateParams::default()
    };

    // pi's global defaults apply where no project overrides them; the project's win in it.
    let plain = client
        .call::<SessionCreate>(&create("work/plain"))
        .await
        .unwrap();
    assert_eq!(plain.model.as_ref().unwrap().id, "faux-2");
    assert_eq!(plain.thinking_level, "off", "faux-2 does not reason");
    let session = client
        .call::<SessionCreate>(&create("work/proj"))
        .await
        .unwrap();
    assert_eq!(session.model.as_ref().unwrap().id, "faux-1");
    assert_eq!(session.thinking_level, "high");

    let get = client
        .call::<SessionGet>(&SessionIdParams {
            session_id: session.id.clone(),
        })
        .await
        .unwrap();
    insta::assert_snapshot!(
        "pi_home_system_prompt",
        redact(&daemon, get.system_prompt.as_deref().unwrap())
    );
    let diagnostics: Vec<String> = get
        .resource_diagnostics
        .iter()
        .map(|d| redact(&daemon, &format!("{}: {:?}: {}", d.path, d.key, d.message)))
        .collect();
    insta::assert_snapshot!("pi_home_session_diagnostics", diagnostics.join("\n"));
    // Clients offer the templates and skills as slash commands.
    let commands: Vec<(String, String)> = get
        .commands
        .iter()
        .map(|command| (command.name.clone(), command.source.clone()))
        .collect();
    assert_eq!(
        commands,
        [
            ("review".to_owned(), "template".to_owned()),
            ("skill:pdf".to_owned(), "skill".to_owned()),
        ]
    );

    // Templates and skills expand before the message is sent (and stored).
    client
        .call::<SessionAttach>(&SessionAttachParams {
            session_id: session.id.clone(),
            after_seq: None,
        })
        .await
        .unwrap();
    let prompt = |text: &str| SessionMessageParams {
        session_id: session.id.clone(),
        text: text.to_owned(),
        images: vec![],
    };
    daemon.faux.push(FauxReply::text("ok"));
    client
        .call::<SessionPrompt>(&prompt("/review src/lib.rs"))
        .await
        .unwrap();
    run_events(&mut notifications, &session.id).await;
    assert_eq!(last_user_text(&daemon.faux), "Review src/lib.rs carefully.");
    let request = daemon.faux.requests().pop().unwrap();
    assert_eq!(request.context.system_prompt, get.system_prompt);

    daemon.faux.push(FauxReply::text("ok"));
    client
        .call::<SessionPrompt>(&prompt("/skill:pdf page 2"))
        .await
        .unwrap();
    run_events(&mut notifications, &session.id).await;
    assert_eq!(
        redact(&daemon, &last_user_text(&daemon.faux)),
        "<skill name=\"pdf\" location=\"<home>/.pi/agent/skills/pdf/SKILL.md\">\nReferences are \
         relative to <home>/.pi/agent/skills/pdf.\n\nUse pdftotext.\n</skill>\n\npage 2"
    );

    // settings/get shows the layers' effect and names the bad key's file.
    let settings = client
        .call::<SettingsGet>(&SettingsGetParams {
            cwd: Some(cwd(&daemon, "work/proj")),
        })
        .await
        .unwrap();
    let shown = redact(&daemon, &serde_json::to_string_pretty(&settings).unwrap());
    insta::assert_snapshot!("pi_home_settings_get", shown);
}

#[tokio::test]
async fn set_default_writes_ours_and_new_sessions_follow_it() {
    let daemon = start().await;
    let (client, _notifications) = daemon.client().await;
    let pi_settings = daemon.home.path().join(".pi/agent/settings.json");
    let pi_before = std::fs::read(&pi_settings).unwrap();

    let bad = client
        .call::<SettingsSetDefault>(&SettingsSetDefaultParams {
            values: serde_json::from_value(json!({"steeringMode": "sometimes"})).unwrap(),
            unset: vec![],
            ..SettingsSetDefaultParams::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.rpc_kind(), Some(ErrorKind::InvalidParams));
    assert!(
        bad.to_string()
            .contains("`steeringMode`: expected \"all\" or \"one-at-a-time\""),
        "{bad}"
    );

    let response = client
        .call::<SettingsSetDefault>(&SettingsSetDefaultParams {
            values: serde_json::from_value(
                json!({"defaultModel": "faux-1", "defaultThinkingLevel": "low"}),
            )
            .unwrap(),
            unset: vec![],
            ..SettingsSetDefaultParams::default()
        })
        .await
        .unwrap();
    assert_eq!(response.settings.default_model.as_deref(), Some("faux-1"));
    assert_eq!(response.settings.default_provider.as_deref(), Some("faux"));
    assert_eq!(
        redact(&daemon, &response.writable_file),
        "<home>/config/settings.json"
    );
    assert_eq!(
        std::fs::read(&pi_settings).unwrap(),
        pi_before,
        "pi's file is never written"
    );
    let ours = std::fs::read_to_string(daemon.home.path().join("config/settings.json")).unwrap();
    assert_eq!(
        ours,
        "{\n  \"defaultModel\": \"faux-1\",\n  \"defaultThinkingLevel\": \"low\"\n}\n"
    );

    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd(&daemon, "work/plain"),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    assert_eq!(session.model.as_ref().unwrap().id, "faux-1");
    assert_eq!(session.thinking_level, "low");

    // A caller's explicit choice beats every settings file, and is never written anywhere.
    let explicit = client
        .call::<SessionCreate>(&SessionCreateParams {
            cwd: cwd(&daemon, "work/plain"),
            model: Some("faux-2".to_owned()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    assert_eq!(explicit.model.as_ref().unwrap().id, "faux-2");
    let ours_after =
        std::fs::read_to_string(daemon.home.path().join("config/settings.json")).unwrap();
    assert_eq!(ours_after, ours);
}

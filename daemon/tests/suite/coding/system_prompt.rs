//! System prompt snapshots for representative inputs: the default body with tools,
//! guidelines, an appended prompt, context files and skills; a custom prompt; tool sets that
//! change the guidelines.

use std::path::PathBuf;

use pi_daemon::coding::context_files::ContextFile;
use pi_daemon::coding::skills::Skill;
use pi_daemon::coding::system_prompt::{SystemPromptInput, ToolSummary, build};

/// Tools as the prompt sees them: the built-ins with pi's snippets and guidelines (some), a
/// custom tool with its own, one without a snippet (not listed).
fn tools(names: &[&str]) -> Vec<ToolSummary> {
    names
        .iter()
        .map(|name| ToolSummary {
            name: (*name).to_owned(),
            snippet: match *name {
                "empty" => None,
                "block" => Some("Wait for the test to release a key".to_owned()),
                other => Some(format!("What {other} does")),
            },
            guidelines: match *name {
                "read" => vec!["Use read to examine files instead of cat or sed.".to_owned()],
                "block" => vec![
                    "  Release keys in order  ".to_owned(),
                    "Use read to examine files instead of cat or sed.".to_owned(),
                ],
                _ => Vec::new(),
            },
        })
        .collect()
}

fn skill(name: &str, description: &str, hidden: bool) -> Skill {
    Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        file_path: PathBuf::from(format!("/home/u/.pi/agent/skills/{name}/SKILL.md")),
        base_dir: PathBuf::from(format!("/home/u/.pi/agent/skills/{name}")),
        disable_model_invocation: hidden,
    }
}

#[test]
fn system_prompt_snapshots() {
    let context_files = vec![
        ContextFile {
            path: PathBuf::from("/home/u/.pi/agent/AGENTS.md"),
            content: "Always answer in English.".to_owned(),
        },
        ContextFile {
            path: PathBuf::from("/work/project/AGENTS.md"),
            content: "# Project\n\nRun `cargo test` before committing.\n".to_owned(),
        },
    ];
    let skills = vec![
        skill("pdf-tools", "Extract text & tables from <PDF> files", false),
        skill("release", "Cut a release (manual only)", true),
        skill("db-migrate", "Write \"safe\" migrations", false),
    ];
    let all_tools = tools(&[
        "read", "bash", "edit", "write", "grep", "find", "ls", "block", "empty",
    ]);
    let bash_only = tools(&["bash"]);
    let cases: Vec<(&str, SystemPromptInput<'_>)> = vec![
        (
            "default_with_everything",
            SystemPromptInput {
                tools: &all_tools,
                cwd: "/work/project",
                date: "2026-03-15",
                context_files: &context_files,
                skills: &skills,
                rules: &[],
                custom_prompt: None,
                append_prompt: Some("Prefer small commits."),
                pi_docs: Some(std::path::Path::new(
                    "/opt/pi/node_modules/@mariozechner/pi-coding-agent",
                )),
            },
        ),
        (
            "custom_prompt_without_read_has_no_skills",
            SystemPromptInput {
                tools: &bash_only,
                cwd: "C:\\work\\project",
                date: "2026-03-15",
                context_files: &context_files[1..],
                skills: &skills,
                rules: &[],
                custom_prompt: Some("You are a release bot."),
                append_prompt: None,
                pi_docs: None,
            },
        ),
    ];
    for (name, input) in &cases {
        insta::assert_snapshot!(*name, build(input));
    }
}

/// The guidelines block for a tool set.
fn guidelines(names: &[&str]) -> String {
    let tools = tools(names);
    let prompt = build(&SystemPromptInput {
        tools: &tools,
        cwd: "/w",
        date: "2026-01-01",
        context_files: &[],
        skills: &[],
        rules: &[],
        custom_prompt: None,
        append_prompt: None,
        pi_docs: None,
    });
    let start = prompt.find("Guidelines:\n").unwrap() + "Guidelines:\n".len();
    let end = prompt[start..].find("\nCurrent date").unwrap() + start;
    prompt[start..end].to_owned()
}

#[test]
fn guidelines_depend_on_the_tools() {
    let concise =
        "- Be concise in your responses\n- Show file paths clearly when working with files";
    let cases: &[(&[&str], String)] = &[
        (&[], concise.to_owned()),
        (
            &["bash"],
            format!("- Use bash for file operations like ls, rg, find\n{concise}"),
        ),
        (
            &["bash", "ls"],
            format!(
                "- Prefer grep/find/ls tools over bash for file exploration (faster, respects \
                 .gitignore)\n{concise}"
            ),
        ),
        (
            &["read", "block"],
            format!(
                "- Use read to examine files instead of cat or sed.\n- Release keys in \
                 order\n{concise}"
            ),
        ),
    ];
    for (names, expect) in cases {
        assert_eq!(&guidelines(names), expect, "for {names:?}");
    }
}

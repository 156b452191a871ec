//! Loading a working directory's resources from pi's agent dir, our config dir, the home and
//! the project: which file wins where only one applies, and what a message expands to.

use pi_daemon::coding::resources::load;
use pi_daemon::coding::{ResourceRoots, Resources};

use super::Tree;

fn roots(tree: &Tree) -> ResourceRoots {
    ResourceRoots {
        pi_agent_dir: Some(tree.path("home/.pi/agent")),
        config_dir: Some(tree.path("config")),
        home: Some(tree.path("home")),
        ..ResourceRoots::default()
    }
}

fn summary(tree: &Tree, resources: &Resources) -> String {
    let context: Vec<String> = resources
        .context_files
        .iter()
        .map(|file| tree.redact(&format!("{}={}", file.path.display(), file.content)))
        .collect();
    let skills: Vec<String> = resources
        .skills
        .iter()
        .map(|skill| tree.redact(&format!("{}@{}", skill.name, skill.file_path.display())))
        .collect();
    let templates: Vec<String> = resources
        .templates
        .iter()
        .map(|template| format!("{}: {}", template.name, template.description))
        .collect();
    let diagnostics: Vec<String> = resources
        .diagnostics
        .iter()
        .map(|diagnostic| tree.redact(&diagnostic.to_string()))
        .collect();
    format!(
        "context: {context:?}\ncustom: {:?}\nappend: {:?}\nskills: {skills:?}\ntemplates: \
         {templates:?}\ndiagnostics: {diagnostics:?}",
        resources.custom_prompt, resources.append_prompt
    )
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n")
}

#[test]
fn ours_wins_over_pis_where_one_applies_and_both_apply_where_pi_uses_several() {
    let tree = Tree::new(&[
        ("home/.pi/agent/AGENTS.md", "pi global"),
        ("home/.pi/agent/SYSTEM.md", "pi system"),
        ("home/.pi/agent/APPEND_SYSTEM.md", "pi append"),
        (
            "home/.pi/agent/skills/shared/SKILL.md",
            &skill("shared", "pi's"),
        ),
        ("home/.pi/agent/prompts/fix.md", "pi's fix $1"),
        ("home/.pi/agent/prompts/only-pi.md", "from pi"),
        (
            "home/.agents/skills/agents-home/SKILL.md",
            &skill("agents-home", "From ~/.agents"),
        ),
        ("config/CLAUDE.md", "ours global"),
        ("config/SYSTEM.md", "our system"),
        ("config/skills/shared/SKILL.md", &skill("shared", "ours")),
        ("config/prompts/fix.md", "our fix $1"),
        ("work/repo/.git/HEAD", "ref"),
        (
            "work/repo/.agents/skills/repo-skill/SKILL.md",
            &skill("repo-skill", "Repo"),
        ),
        ("work/repo/app/AGENTS.md", "app"),
        ("work/repo/app/.pi/APPEND_SYSTEM.md", "project append"),
        ("work/repo/app/.pi/prompts/fix.md", "project fix $1"),
    ]);
    let cwd = tree.path("work/repo/app");
    let resources = load(&roots(&tree), &cwd);
    assert_eq!(
        summary(&tree, &resources),
        "context: [\"<root>/home/.pi/agent/AGENTS.md=pi global\", \"<root>/config/CLAUDE.md=ours \
         global\", \"<root>/work/repo/app/AGENTS.md=app\"]\n\
         custom: Some(\"our system\")\n\
         append: Some(\"project append\")\n\
         skills: [\"repo-skill@<root>/work/repo/.agents/skills/repo-skill/SKILL.md\", \
         \"shared@<root>/config/skills/shared/SKILL.md\", \
         \"agents-home@<root>/home/.agents/skills/agents-home/SKILL.md\"]\n\
         templates: [\"fix: project fix $1 (project)\", \"only-pi: from pi (user)\"]\n\
         diagnostics: [\"collision: <root>/home/.pi/agent/skills/shared/SKILL.md: skill name \
         \\\"shared\\\" is already taken by <root>/config/skills/shared/SKILL.md; this one is \
         ignored\", \"collision: <root>/config/prompts/fix.md: prompt template name \\\"fix\\\" is \
         already taken by <root>/work/repo/app/.pi/prompts/fix.md; this one is ignored\", \
         \"collision: <root>/home/.pi/agent/prompts/fix.md: prompt template name \\\"fix\\\" is \
         already taken by <root>/work/repo/app/.pi/prompts/fix.md; this one is ignored\"]"
    );

    let expand = |text: &str| tree.redact(&resources.expand_input(text).0);
    assert_eq!(expand("/fix the bug"), "project fix the");
    assert_eq!(expand("/only-pi"), "from pi");
    assert_eq!(expand("/unknown x"), "/unknown x");
    assert_eq!(
        expand("/skill:shared go"),
        "<skill name=\"shared\" location=\"<root>/config/skills/shared/SKILL.md\">\nReferences \
         are relative to <root>/config/skills/shared.\n\nBody of shared.\n</skill>\n\ngo"
    );
}

#[test]
fn prompt_settings_override_the_files_and_may_name_a_file() {
    let tree = Tree::new(&[
        ("config/SYSTEM.md", "file system prompt"),
        (
            "config/prompts/custom.md",
            "Prompt from a file named in settings.",
        ),
        (
            "config/settings.json",
            r#"{"systemPrompt": "prompts/custom.md", "appendSystemPrompt": "Plain appended text.", "skills": {"enabled": false}}"#,
        ),
        (
            "home/.pi/agent/skills/ignored/SKILL.md",
            &skill("ignored", "Discovery is off"),
        ),
        ("project/.keep", ""),
    ]);
    let resources = load(&roots(&tree), &tree.path("project"));
    assert_eq!(
        resources.custom_prompt.as_deref(),
        Some("Prompt from a file named in settings.")
    );
    assert_eq!(
        resources.append_prompt.as_deref(),
        Some("Plain appended text.")
    );
    assert!(resources.skills.is_empty(), "{:?}", resources.skills);
    assert!(
        resources.diagnostics.is_empty(),
        "{:?}",
        resources.diagnostics
    );
}

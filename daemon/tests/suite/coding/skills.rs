//! Skills discovery edge cases: collisions, invalid names, missing and long descriptions,
//! `disable-model-invocation`, scan rules, settings exclusions; and `/skill:` expansion.

use pi_daemon::coding::settings::PathEntry;
use pi_daemon::coding::skills::{
    self, Skill, SkillExpansion, SkillSources, format_for_prompt, load_skills,
};

use super::Tree;

fn skill_md(name: Option<&str>, description: Option<&str>, extra: &str) -> String {
    let mut text = String::from("---\n");
    if let Some(name) = name {
        text.push_str(&format!("name: {name}\n"));
    }
    if let Some(description) = description {
        text.push_str(&format!("description: {description}\n"));
    }
    text.push_str(extra);
    text.push_str("---\n# Body\nDo the thing.\n");
    text
}

/// Loads skills from `dirs` (then `explicit`) of `tree` and renders skills and diagnostics.
fn render(tree: &Tree, sources: &SkillSources) -> (Vec<Skill>, String) {
    let mut diagnostics = Vec::new();
    let skills = load_skills(sources, &mut diagnostics);
    let mut out = String::from("skills:\n");
    for skill in &skills {
        out.push_str(&format!(
            "  {} <- {}{}\n",
            skill.name,
            tree.redact(&skill.file_path.display().to_string()),
            if skill.disable_model_invocation {
                " (hidden from the model)"
            } else {
                ""
            }
        ));
    }
    out.push_str("diagnostics:\n");
    for diagnostic in &diagnostics {
        out.push_str(&format!("  {}\n", tree.redact(&diagnostic.to_string())));
    }
    (skills, out)
}

#[test]
fn discovery_edge_cases() {
    let long_name = "a".repeat(65);
    let long_description = "d".repeat(1025);
    let tree = Tree::new(&[
        // Project skills (scanned first).
        (
            "project/.pi/skills/deploy/SKILL.md",
            &skill_md(None, Some("Deploys"), ""),
        ),
        (
            "project/.pi/skills/review/SKILL.md",
            &skill_md(Some("review"), Some("Project review"), ""),
        ),
        // A directory with SKILL.md is one skill: nothing below it is scanned.
        (
            "project/.pi/skills/review/nested/SKILL.md",
            &skill_md(Some("nested"), Some("never"), ""),
        ),
        // Root-level .md files are skills; their name defaults to the directory's.
        (
            "project/.pi/skills/quick.md",
            &skill_md(Some("quick"), Some("Root file"), ""),
        ),
        // Not a skill: a non-SKILL.md file below the root, dot dirs, node_modules.
        ("project/.pi/skills/group/notes.md", "just notes"),
        (
            "project/.pi/skills/group/inner/SKILL.md",
            &skill_md(Some("inner"), Some("Nested deeper"), ""),
        ),
        (
            "project/.pi/skills/.hidden/SKILL.md",
            &skill_md(Some("hidden"), Some("x"), ""),
        ),
        (
            "project/.pi/skills/node_modules/dep/SKILL.md",
            &skill_md(Some("dep"), Some("x"), ""),
        ),
        // User skills: a collision with a project skill loses.
        (
            "user/skills/review/SKILL.md",
            &skill_md(Some("review"), Some("User review"), ""),
        ),
        // Invalid names still load, with warnings.
        (
            "user/skills/Bad_Name/SKILL.md",
            &skill_md(Some("Bad_Name"), Some("Caps"), ""),
        ),
        (
            "user/skills/-edge-/SKILL.md",
            &skill_md(Some("-edge-"), Some("Hyphens"), ""),
        ),
        (
            "user/skills/double--dash/SKILL.md",
            &skill_md(None, Some("Dashes"), ""),
        ),
        (
            "user/skills/mismatch/SKILL.md",
            &skill_md(Some("other-name"), Some("Mismatch"), ""),
        ),
        (
            &format!("user/skills/{long_name}/SKILL.md"),
            &skill_md(None, Some("Long name"), ""),
        ),
        // Missing or empty description: skipped.
        (
            "user/skills/nodesc/SKILL.md",
            &skill_md(Some("nodesc"), None, ""),
        ),
        (
            "user/skills/blankdesc/SKILL.md",
            &skill_md(Some("blankdesc"), Some("\"  \""), ""),
        ),
        // Too long a description: loaded with a warning.
        (
            "user/skills/verbose/SKILL.md",
            &skill_md(Some("verbose"), Some(&long_description), ""),
        ),
        // disable-model-invocation: loaded, hidden from the prompt; a bad value is a warning.
        (
            "user/skills/manual/SKILL.md",
            &skill_md(
                Some("manual"),
                Some("Only by /skill:manual"),
                "disable-model-invocation: true\n",
            ),
        ),
        (
            "user/skills/odd-flag/SKILL.md",
            &skill_md(
                Some("odd-flag"),
                Some("Flag"),
                "disable-model-invocation: sometimes\n",
            ),
        ),
        // Unknown fields are ignored; broken frontmatter skips the skill.
        (
            "user/skills/extra/SKILL.md",
            &skill_md(
                Some("extra"),
                Some("Extra fields"),
                "license: MIT\nallowed-tools: [read]\nmetadata:\n  a: b\n",
            ),
        ),
        (
            "user/skills/broken/SKILL.md",
            "---\nname: broken\ndescription: \"unterminated\n---\nbody",
        ),
        // Excluded by a settings entry.
        (
            "user/skills/excluded/SKILL.md",
            &skill_md(Some("excluded"), Some("Never"), ""),
        ),
    ]);
    let sources = SkillSources {
        entries: vec![PathEntry {
            path: tree.path("user/skills/excluded"),
            exclude: true,
        }],
        dirs: vec![
            tree.path("project/.pi/skills"),
            tree.path("missing/skills"),
            tree.path("user/skills"),
        ],
        explicit: vec![
            // The same file again (counted once, no collision) and a path that is not there.
            tree.path("user/skills/verbose/SKILL.md"),
            tree.path("nowhere/SKILL.md"),
        ],
    };
    let (skills, rendered) = render(&tree, &sources);
    insta::assert_snapshot!(rendered);
    insta::assert_snapshot!("prompt_block", tree.redact(&format_for_prompt(&skills)));
}

#[test]
fn settings_entries_come_first_and_symlinks_count_once() {
    let tree = Tree::new(&[
        (
            "extra/review/SKILL.md",
            &skill_md(Some("review"), Some("From settings"), ""),
        ),
        (
            "user/skills/review/SKILL.md",
            &skill_md(Some("review"), Some("User"), ""),
        ),
        (
            "user/skills/solo/SKILL.md",
            &skill_md(Some("solo"), Some("Solo"), ""),
        ),
    ]);
    std::os::unix::fs::symlink(tree.path("user/skills/solo"), tree.path("linked")).unwrap();
    let sources = SkillSources {
        entries: vec![PathEntry {
            path: tree.path("extra"),
            exclude: false,
        }],
        dirs: vec![tree.path("user/skills")],
        explicit: vec![tree.path("linked")],
    };
    let (_, rendered) = render(&tree, &sources);
    // The link is validated as its own file (as pi does) before it is found to be a duplicate.
    assert_eq!(
        rendered,
        "skills:\n  review <- <root>/extra/review/SKILL.md\n  solo <- <root>/user/skills/solo/SKILL.md\n\
         diagnostics:\n  warning: <root>/linked/SKILL.md: `name`: name \"solo\" does not match its \
         directory \"linked\"\n  collision: <root>/user/skills/review/SKILL.md: skill name \"review\" is \
         already taken by <root>/extra/review/SKILL.md; this one is ignored\n"
    );
}

#[test]
fn project_dirs_walk_up_to_the_git_root() {
    let tree = Tree::new(&[("repo/.git/HEAD", "ref")]);
    let cwd = tree.mkdir("repo/a/b");
    let dirs: Vec<String> = skills::project_skill_dirs(&cwd)
        .iter()
        .map(|dir| tree.redact(&dir.display().to_string()))
        .collect();
    assert_eq!(
        dirs,
        [
            "<root>/repo/a/b/.pi/skills",
            "<root>/repo/a/b/.agents/skills",
            "<root>/repo/a/.agents/skills",
            "<root>/repo/.agents/skills",
        ]
    );
}

#[test]
fn skill_commands_expand_to_the_body_and_arguments() {
    let tree = Tree::new(&[(
        "skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploys\n---\n\nRun ./scripts/deploy.sh\n",
    )]);
    let mut diagnostics = Vec::new();
    let skills = load_skills(
        &SkillSources {
            dirs: vec![tree.path("skills")],
            ..SkillSources::default()
        },
        &mut diagnostics,
    );
    let check = |input: &str, expect: &str| {
        let actual = match skills::expand(input, &skills) {
            SkillExpansion::NotACommand => "not a command".to_owned(),
            SkillExpansion::Unknown => "unknown".to_owned(),
            SkillExpansion::Expanded(text) => tree.redact(&text),
            SkillExpansion::ReadFailed(diagnostic) => tree.redact(&diagnostic.to_string()),
        };
        assert_eq!(actual, expect, "for {input:?}");
    };
    let body = "<skill name=\"deploy\" location=\"<root>/skills/deploy/SKILL.md\">\n\
                References are relative to <root>/skills/deploy.\n\nRun ./scripts/deploy.sh\n</skill>";
    check("/skill:deploy", body);
    check(
        "/skill:deploy  to staging now ",
        &format!("{body}\n\nto staging now"),
    );
    check("/skill:nope args", "unknown");
    check("deploy it", "not a command");
    std::fs::remove_file(tree.path("skills/deploy/SKILL.md")).unwrap();
    check(
        "/skill:deploy",
        "warning: <root>/skills/deploy/SKILL.md: cannot be read (No such file or directory (os \
         error 2)); `/skill:deploy` is sent unexpanded",
    );
}

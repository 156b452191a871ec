//! Loads everything a session's prompt is built from, for one working directory: settings,
//! context files, `SYSTEM.md` / `APPEND_SYSTEM.md` (or the `systemPrompt` /
//! `appendSystemPrompt` settings, which override them), skills and prompt templates.
//!
//! Global resources come from two directories: pi's agent dir (`~/.pi/agent`, read when it
//! exists, so pi users need no setup) and our config dir. Ours takes precedence where only one
//! can apply (settings keys, `SYSTEM.md`, a skill or template name); both apply where pi would
//! use several (context files: pi's first, then ours).
//!
//! Architecture invariant: loading never fails and never writes. Every problem is a
//! [`Diagnostic`] in [`Resources::diagnostics`].

use std::path::{Path, PathBuf};

use pi_paths::Paths;

use crate::context_files::{self, ContextFile};
use crate::settings::{Settings, SettingsFiles, TextOrFile};
use crate::settings_parse::LastGoodLayers;
use crate::skills::{self, Skill, SkillExpansion, SkillSources};
use crate::system_prompt::{self, SystemPromptInput, ToolSummary};
use crate::templates::{self, PromptTemplate, TemplateSources};
use crate::{Diagnostic, settings_parse};

/// The global directories resources are read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRoots {
    /// pi's agent directory; read when it exists.
    pub pi_agent_dir: Option<PathBuf>,
    /// Our config directory.
    pub config_dir: Option<PathBuf>,
    /// The user's home: `~` in settings paths, and `~/.agents/skills`.
    pub home: Option<PathBuf>,
    /// The last good version of every settings file read through these roots (clones share
    /// it): a bad edit of a file that was good keeps that version until it is fixed.
    pub last_good: LastGoodLayers,
    /// pi's package (its `README.md`, `docs/`, `examples/`), which the system prompt points
    /// to as pi's does, while it is installed.
    pub pi_docs: Option<PathBuf>,
}

/// The loaded resources of one working directory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resources {
    /// Effective settings.
    pub settings: Settings,
    /// Context files, in prompt order.
    pub context_files: Vec<ContextFile>,
    /// Skills, in precedence order.
    pub skills: Vec<Skill>,
    /// Prompt templates, in precedence order.
    pub templates: Vec<PromptTemplate>,
    /// Rules from the agent config directories (oh-my-pi's discovery, on with `ompTools`).
    pub rules: Vec<crate::rules::Rule>,
    /// pi's package the default prompt points to (installed, when loaded).
    pub pi_docs: Option<PathBuf>,
    /// Replaces the default prompt body.
    pub custom_prompt: Option<String>,
    /// Appended to the prompt body.
    pub append_prompt: Option<String>,
    /// Everything that was wrong, in discovery order.
    pub diagnostics: Vec<Diagnostic>,
}

impl ResourceRoots {
    /// The daemon's roots: pi's agent dir, our config dir, and the home that holds `.pi/agent`
    /// (none when `PI_CODING_AGENT_DIR` moved the agent dir elsewhere).
    pub fn from_paths(paths: &Paths) -> Self {
        let home = paths
            .pi_agent_dir
            .ends_with(".pi/agent")
            .then(|| paths.pi_agent_dir.parent().and_then(Path::parent))
            .flatten()
            .map(Path::to_path_buf);
        ResourceRoots {
            pi_agent_dir: Some(paths.pi_agent_dir.clone()),
            config_dir: Some(paths.config_dir.clone()),
            home,
            last_good: LastGoodLayers::default(),
            pi_docs: None,
        }
    }

    /// The global directories, lowest precedence first (pi's, then ours).
    pub fn global_dirs(&self) -> Vec<PathBuf> {
        self.pi_agent_dir
            .iter()
            .chain(&self.config_dir)
            .cloned()
            .collect()
    }

    /// The settings files for `cwd` (only the global ones without a cwd).
    pub fn settings_files(&self, cwd: Option<&Path>) -> SettingsFiles {
        SettingsFiles::new(
            self.pi_agent_dir.as_deref(),
            self.config_dir.as_deref(),
            cwd,
        )
    }

    /// pi's global settings file (`settings/setDefault` with the `pi` target).
    pub fn pi_settings_file(&self) -> Option<PathBuf> {
        self.pi_agent_dir
            .as_ref()
            .map(|dir| dir.join("settings.json"))
    }

    /// The file `settings/setDefault` writes: ours.
    pub fn writable_settings_file(&self) -> Option<PathBuf> {
        self.config_dir
            .as_ref()
            .map(|dir| dir.join("settings.json"))
    }

    /// The settings layers of `cwd` one by one: the global files' (lowest first) and the
    /// project's (for policies, where a project may only tighten); `None`: the global ones.
    pub fn settings_layers(
        &self,
        cwd: Option<&Path>,
    ) -> (
        Vec<crate::settings::SettingsLayer>,
        Option<crate::settings::SettingsLayer>,
    ) {
        let files = self.settings_files(cwd);
        let mut diagnostics = Vec::new();
        let global = files
            .global
            .iter()
            .map(|path| {
                settings_parse::read_global_layer(
                    path,
                    self.home.as_deref(),
                    &self.last_good,
                    &mut diagnostics,
                )
            })
            .collect();
        let project = files.project.as_ref().map(|path| {
            settings_parse::read_layer(
                path,
                self.home.as_deref(),
                &self.last_good,
                &mut diagnostics,
            )
        });
        (global, project)
    }

    /// Effective settings for `cwd` (or the global layers only) and their diagnostics.
    pub fn load_settings(&self, cwd: Option<&Path>) -> (Settings, Vec<Diagnostic>) {
        settings_parse::load_settings(
            &self.settings_files(cwd),
            self.home.as_deref(),
            &self.last_good,
        )
    }
}

/// What was derived from a directory's settings files, per directory, made again only
/// when one of the files' modification time or size changed (for callers that need the
/// settings on every tool call: reading and parsing the files each time is most of their
/// cost).
#[derive(Debug)]
pub struct SettingsCache<T> {
    // Per directory: the files' (modification time, size) or absence, and the value.
    entries: std::sync::Mutex<std::collections::HashMap<PathBuf, Stamped<T>>>,
}

/// A settings file's modification time, size, owner and mode (a file another user can write
/// is refused, so a `chmod` counts as a change).
type FileStamp = (std::time::SystemTime, u64, u32, u32);

/// The files' stamps (or absence) and the value made from them.
type Stamped<T> = (Vec<Option<FileStamp>>, std::sync::Arc<T>);

impl<T> Default for SettingsCache<T> {
    fn default() -> Self {
        SettingsCache {
            entries: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }
}

impl<T> SettingsCache<T> {
    /// The value for `cwd` under `roots`: the cached one while its files are unchanged, else
    /// `make`'s.
    pub fn get(
        &self,
        roots: &ResourceRoots,
        cwd: &Path,
        make: impl FnOnce() -> T,
    ) -> std::sync::Arc<T> {
        let files = roots.settings_files(Some(cwd));
        let stamps: Vec<Option<FileStamp>> = files
            .global
            .iter()
            .chain(files.project.iter())
            .map(|path| {
                use std::os::unix::fs::MetadataExt as _;
                std::fs::metadata(path).ok().and_then(|meta| {
                    Some((meta.modified().ok()?, meta.len(), meta.uid(), meta.mode()))
                })
            })
            .collect();
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((known, value)) = entries.get(cwd)
            && *known == stamps
        {
            return value.clone();
        }
        let value = std::sync::Arc::new(make());
        entries.insert(cwd.to_path_buf(), (stamps, value.clone()));
        value
    }
}

/// What one session chose on pi's command line about its resources: skills and prompt
/// templates besides the discovered ones (`--skill`, `--prompt-template`), or none of the
/// discovered and configured ones (`--no-skills`, `--no-prompt-templates`; the explicit ones
/// still load, as in pi).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceChoice {
    /// Skill files or directories, absolute.
    pub skills: Vec<PathBuf>,
    /// Prompt template files or directories, absolute.
    pub prompt_templates: Vec<PathBuf>,
    /// No discovered or configured skills.
    pub no_skills: bool,
    /// No discovered or configured prompt templates.
    pub no_prompt_templates: bool,
}

/// Loads the resources of `cwd`.
pub fn load(roots: &ResourceRoots, cwd: &Path) -> Resources {
    load_with(roots, cwd, &ResourceChoice::default())
}

/// Loads the resources of `cwd` as a session chose them.
pub fn load_with(roots: &ResourceRoots, cwd: &Path, choice: &ResourceChoice) -> Resources {
    let (settings, mut diagnostics) = roots.load_settings(Some(cwd));
    let global_lowest_first = roots.global_dirs();
    let global_highest_first: Vec<PathBuf> = global_lowest_first.iter().rev().cloned().collect();

    let mut context_files =
        context_files::load_context_files(&global_lowest_first, cwd, &mut diagnostics);
    // oh-my-pi's discovery of other tools' rules, instructions and commands, for projects
    // that turn its tools on.
    let discovered = if settings.omp_tools.is_empty() {
        crate::rules::Discovered::default()
    } else {
        crate::rules::discover(
            cwd,
            roots.home.as_deref(),
            &global_lowest_first,
            &settings.disabled_providers,
            &mut diagnostics,
        )
    };
    // Stream rules that cannot be compiled are named now (the runs skip them).
    let _ = crate::ttsr::Ttsr::new(
        &discovered.rules,
        &settings.ttsr,
        std::collections::BTreeSet::new(),
        &mut diagnostics,
    );
    for file in discovered.context_files {
        if !context_files.iter().any(|known| known.path == file.path) {
            context_files.push(file);
        }
    }
    let mut prompt_text = |setting: &Option<TextOrFile>, file_name: &str| match setting {
        Some(value) => resolve_text_or_file(value, roots.home.as_deref(), &mut diagnostics),
        None => {
            context_files::load_prompt_file(file_name, cwd, &global_highest_first, &mut diagnostics)
        }
    };
    let custom_prompt = prompt_text(&settings.system_prompt, "SYSTEM.md");
    let append_prompt = prompt_text(&settings.append_system_prompt, "APPEND_SYSTEM.md");

    let mut skill_sources = SkillSources {
        entries: if choice.no_skills {
            Vec::new()
        } else {
            settings.skills.clone()
        },
        explicit: choice.skills.clone(),
        ..SkillSources::default()
    };
    if settings.discover_skills && !choice.no_skills {
        skill_sources.dirs = skills::project_skill_dirs(cwd);
        skill_sources
            .dirs
            .extend(global_highest_first.iter().map(|dir| dir.join("skills")));
        skill_sources.dirs.extend(
            roots
                .home
                .iter()
                .map(|home| home.join(".agents").join("skills")),
        );
    }
    let skills = skills::load_skills(&skill_sources, &mut diagnostics);

    let template_sources = if choice.no_prompt_templates {
        TemplateSources {
            entries: Vec::new(),
            project_dir: None,
            user_dirs: Vec::new(),
            explicit: choice.prompt_templates.clone(),
        }
    } else {
        TemplateSources {
            entries: settings.prompts.clone(),
            project_dir: Some(cwd.join(".pi").join("prompts")),
            user_dirs: global_highest_first
                .iter()
                .map(|dir| dir.join("prompts"))
                .chain(discovered.template_dirs.iter().cloned())
                .collect(),
            explicit: choice.prompt_templates.clone(),
        }
    };
    let templates = templates::load_templates(&template_sources, &mut diagnostics);

    Resources {
        settings,
        context_files,
        skills,
        templates,
        rules: discovered.rules,
        pi_docs: roots
            .pi_docs
            .clone()
            .filter(|dir| dir.join("README.md").is_file()),
        custom_prompt,
        append_prompt,
        diagnostics,
    }
}

/// [`load`] on a blocking thread (it reads files); diagnostics are logged at debug level
/// (clients see them in `session/get`).
pub async fn load_in_background(
    roots: ResourceRoots,
    cwd: PathBuf,
    choice: ResourceChoice,
) -> Resources {
    let loaded = tokio::task::spawn_blocking(move || load_with(&roots, &cwd, &choice)).await;
    let resources = loaded.unwrap_or_else(|error| {
        tracing::error!(%error, "loading resources panicked; using none");
        Resources::default()
    });
    for problem in &resources.diagnostics {
        tracing::debug!(%problem, "resource problem");
    }
    resources
}

impl Resources {
    /// The system prompt for these resources with `tools`, in `cwd`, on `date` (`YYYY-MM-DD`).
    pub fn system_prompt(&self, tools: &[ToolSummary], cwd: &str, date: &str) -> String {
        system_prompt::build(&SystemPromptInput {
            tools,
            cwd,
            date,
            context_files: &self.context_files,
            skills: &self.skills,
            rules: &self.rules,
            custom_prompt: self.custom_prompt.as_deref(),
            append_prompt: self.append_prompt.as_deref(),
            pi_docs: self.pi_docs.as_deref(),
        })
    }

    /// What a user message becomes: `/skill:name args` expanded, else `/template args`
    /// expanded, else the text unchanged. A skill file that cannot be read leaves the text
    /// unchanged and returns the diagnostic.
    pub fn expand_input(&self, text: &str) -> (String, Option<Diagnostic>) {
        match skills::expand(text, &self.skills) {
            SkillExpansion::Expanded(message) => return (message, None),
            SkillExpansion::ReadFailed(diagnostic) => return (text.to_owned(), Some(diagnostic)),
            SkillExpansion::NotACommand | SkillExpansion::Unknown => {}
        }
        match templates::expand(text, &self.templates) {
            Some(expanded) => (expanded, None),
            None => (text.to_owned(), None),
        }
    }
}

/// The content of the file the value names (`~` expanded, relative to its settings file), or
/// the value itself when it names no file.
fn resolve_text_or_file(
    value: &TextOrFile,
    home: Option<&Path>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let candidate = value
        .base_dir
        .join(crate::expand_home(value.value.trim(), home));
    if !value.value.contains('\n') && candidate.is_file() {
        return context_files::read_text(&candidate, diagnostics);
    }
    Some(value.value.clone())
}

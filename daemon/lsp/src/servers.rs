//! Which language server serves a file: the definitions (settings' new servers first, then
//! the built-in common servers in order of preference per language, each with the settings'
//! overrides; disabled ones left out), the file's root (the nearest ancestor with one of the
//! server's root markers, walking up), and the server's program (the project's own
//! `node_modules/.bin` and `.venv/bin` first, then `PATH`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use pi_coding::settings::LspServerSettings;

/// A language server the daemon knows how to run.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerDefinition {
    /// Its name.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// File extensions it serves (without the dot).
    pub extensions: Vec<String>,
    /// Files or directories that mark a project root.
    pub root_markers: Vec<String>,
    /// How to install it, for the error when none is found.
    pub install: String,
    /// Sent as `initializationOptions`.
    pub initialization_options: Option<Value>,
    /// What `workspace/configuration` answers, by dotted section.
    pub settings: Value,
}

/// A built-in language server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Builtin {
    /// Its name (`pyright`, `typescript`, ...).
    pub name: &'static str,
    /// The program.
    pub command: &'static str,
    /// Its arguments.
    pub args: &'static [&'static str],
    /// File extensions it serves (without the dot).
    pub extensions: &'static [&'static str],
    /// Files or directories that mark a project root.
    pub root_markers: &'static [&'static str],
    /// How to install it, for the error when none is found.
    pub install: &'static str,
}

/// The built-in servers, the preferred first for each language.
pub const DEFAULTS: &[Builtin] = &[
    Builtin {
        name: "rust-analyzer",
        command: "rust-analyzer",
        args: &[],
        extensions: &["rs"],
        root_markers: &["Cargo.toml", "rust-project.json"],
        install: "rustup component add rust-analyzer",
    },
    Builtin {
        name: "pyright",
        command: "pyright-langserver",
        args: &["--stdio"],
        extensions: &["py", "pyi"],
        root_markers: &[
            "pyrightconfig.json",
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
            ".git",
        ],
        install: "npm install -g pyright",
    },
    Builtin {
        name: "basedpyright",
        command: "basedpyright-langserver",
        args: &["--stdio"],
        extensions: &["py", "pyi"],
        root_markers: &["pyrightconfig.json", "pyproject.toml", "setup.py", ".git"],
        install: "pip install basedpyright",
    },
    Builtin {
        name: "pylsp",
        command: "pylsp",
        args: &[],
        extensions: &["py"],
        root_markers: &["pyproject.toml", "setup.py", "setup.cfg", ".git"],
        install: "pip install python-lsp-server",
    },
    Builtin {
        name: "typescript",
        command: "typescript-language-server",
        args: &["--stdio"],
        extensions: &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
        root_markers: &["tsconfig.json", "jsconfig.json", "package.json", ".git"],
        install: "npm install -g typescript-language-server typescript",
    },
    Builtin {
        name: "gopls",
        command: "gopls",
        args: &[],
        extensions: &["go"],
        root_markers: &["go.work", "go.mod", ".git"],
        install: "go install golang.org/x/tools/gopls@latest",
    },
    Builtin {
        name: "clangd",
        command: "clangd",
        args: &[],
        extensions: &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        root_markers: &[
            "compile_commands.json",
            "compile_flags.txt",
            ".clangd",
            "CMakeLists.txt",
            ".git",
        ],
        install: "apt-get install clangd",
    },
    Builtin {
        name: "bash-language-server",
        command: "bash-language-server",
        args: &["start"],
        extensions: &["sh", "bash"],
        root_markers: &[".git"],
        install: "npm install -g bash-language-server",
    },
    Builtin {
        name: "json",
        command: "vscode-json-language-server",
        args: &["--stdio"],
        extensions: &["json", "jsonc"],
        root_markers: &["package.json", ".git"],
        install: "npm install -g vscode-langservers-extracted",
    },
    Builtin {
        name: "css",
        command: "vscode-css-language-server",
        args: &["--stdio"],
        extensions: &["css", "scss", "less"],
        root_markers: &["package.json", ".git"],
        install: "npm install -g vscode-langservers-extracted",
    },
    Builtin {
        name: "html",
        command: "vscode-html-language-server",
        args: &["--stdio"],
        extensions: &["html", "htm"],
        root_markers: &["package.json", ".git"],
        install: "npm install -g vscode-langservers-extracted",
    },
    Builtin {
        name: "yaml",
        command: "yaml-language-server",
        args: &["--stdio"],
        extensions: &["yaml", "yml"],
        root_markers: &[".git"],
        install: "npm install -g yaml-language-server",
    },
    Builtin {
        name: "marksman",
        command: "marksman",
        args: &["server"],
        extensions: &["md", "markdown"],
        root_markers: &[".marksman.toml", ".git"],
        install: "download marksman from https://github.com/artempyanykh/marksman/releases",
    },
];

/// Whether `name` is a built-in server's.
pub fn is_builtin(name: &str) -> bool {
    DEFAULTS.iter().any(|builtin| builtin.name == name)
}

/// The definitions `settings` (`lsp.servers`) make: new servers first (by name), then the
/// built-ins with their overrides; disabled ones and incomplete new ones left out.
pub fn definitions(settings: &BTreeMap<String, LspServerSettings>) -> Vec<ServerDefinition> {
    let owned =
        |items: &[&str]| -> Vec<String> { items.iter().map(|&item| item.to_owned()).collect() };
    let mut definitions = Vec::new();
    for (name, entry) in settings {
        if is_builtin(name) || entry.disabled == Some(true) {
            continue;
        }
        let (Some(command), Some(extensions)) = (&entry.command, &entry.file_types) else {
            continue;
        };
        definitions.push(ServerDefinition {
            name: name.clone(),
            command: command.clone(),
            args: entry.args.clone().unwrap_or_default(),
            extensions: extensions.clone(),
            root_markers: entry
                .root_markers
                .clone()
                .unwrap_or_else(|| vec![".git".to_owned()]),
            install: format!("install `{command}`, which settings' lsp.servers.{name} names"),
            initialization_options: entry.initialization_options.clone(),
            settings: entry.settings.clone().unwrap_or(Value::Null),
        });
    }
    for builtin in DEFAULTS {
        let entry = settings.get(builtin.name).cloned().unwrap_or_default();
        if entry.disabled == Some(true) {
            continue;
        }
        definitions.push(ServerDefinition {
            name: builtin.name.to_owned(),
            command: entry.command.unwrap_or_else(|| builtin.command.to_owned()),
            args: entry.args.unwrap_or_else(|| owned(builtin.args)),
            extensions: entry
                .file_types
                .unwrap_or_else(|| owned(builtin.extensions)),
            root_markers: entry
                .root_markers
                .unwrap_or_else(|| owned(builtin.root_markers)),
            install: builtin.install.to_owned(),
            initialization_options: entry.initialization_options,
            settings: entry.settings.unwrap_or(Value::Null),
        });
    }
    definitions
}

/// The LSP language id of a file.
pub fn language_id(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
    {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "sh" | "bash" => "shellscript",
        "json" => "json",
        "jsonc" => "jsonc",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "html" | "htm" => "html",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "markdown",
        _ => "plaintext",
    }
}

/// The nearest ancestor of `file` holding one of `markers`; `fallback` when none does.
pub fn root_of(file: &Path, markers: &[String], fallback: &Path) -> PathBuf {
    let mut dir = file.parent();
    while let Some(current) = dir {
        if markers.iter().any(|marker| current.join(marker).exists()) {
            return current.to_path_buf();
        }
        dir = current.parent();
    }
    fallback.to_path_buf()
}

/// `command` in the project's own bins under `root` (and its ancestors), else on `PATH`.
pub fn find_program(command: &str, root: &Path, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let mut dir = Some(root);
    while let Some(current) = dir {
        for bin in ["node_modules/.bin", ".venv/bin", "venv/bin"] {
            let candidate = current.join(bin).join(command);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
        dir = current.parent();
    }
    env.get("PATH")?
        .split(':')
        .map(|dir| Path::new(dir).join(command))
        .find(|candidate| candidate.is_file())
}

/// The server for `file` among `definitions`: the first for its extension whose program is
/// found, with its root and program; the error names what to install.
pub fn server_for(
    file: &Path,
    session_cwd: &Path,
    env: &BTreeMap<String, String>,
    definitions: Vec<ServerDefinition>,
) -> Result<(ServerDefinition, PathBuf, PathBuf), super::error::LspError> {
    use super::error::LspError;
    let extension = file
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or_default();
    let serves = |extensions: &[String]| extensions.iter().any(|known| known == extension);
    let candidates: Vec<ServerDefinition> = definitions
        .into_iter()
        .filter(|definition| serves(&definition.extensions))
        .collect();
    if candidates.is_empty() {
        let disabled: Vec<&str> = DEFAULTS
            .iter()
            .filter(|builtin| builtin.extensions.contains(&extension))
            .map(|builtin| builtin.name)
            .collect();
        if !extension.is_empty() && !disabled.is_empty() {
            return Err(LspError::Disabled {
                extension: extension.to_owned(),
                names: disabled.iter().map(|name| (*name).to_owned()).collect(),
            });
        }
        return Err(LspError::Unknown(if extension.is_empty() {
            file.display().to_string()
        } else {
            format!(".{extension}")
        }));
    }
    for definition in &candidates {
        let root = root_of(file, &definition.root_markers, session_cwd);
        let found = if Path::new(&definition.command).is_absolute() {
            Some(PathBuf::from(&definition.command)).filter(|program| program.is_file())
        } else {
            find_program(&definition.command, &root, env)
        };
        if let Some(program) = found {
            return Ok((definition.clone(), root, program));
        }
    }
    let options: Vec<String> = candidates
        .iter()
        .map(|definition| format!("{} (`{}`)", definition.name, definition.install))
        .collect();
    Err(LspError::NotInstalled {
        extension: extension.to_owned(),
        options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_know_every_built_in_server_by_name() {
        let names: Vec<&str> = DEFAULTS.iter().map(|builtin| builtin.name).collect();
        assert_eq!(names, pi_coding::settings::BUILTIN_LSP_SERVERS);
    }

    #[test]
    fn roots_walk_up_and_programs_prefer_the_projects_bins() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(project.join("src/deep")).unwrap();
        std::fs::write(project.join("tsconfig.json"), "{}").unwrap();
        let file = project.join("src/deep/main.ts");
        assert_eq!(
            root_of(&file, &["tsconfig.json".to_owned()], dir.path()),
            project
        );
        assert_eq!(
            root_of(&file, &["nothing-here".to_owned()], dir.path()),
            dir.path().to_path_buf()
        );

        let env: BTreeMap<String, String> = [("PATH".to_owned(), "/nonexistent".to_owned())].into();
        let error = server_for(&file, dir.path(), &env, definitions(&BTreeMap::new())).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no language server for .ts files is installed; install one of: typescript \
             (`npm install -g typescript-language-server typescript`)"
        );
        let bin = project.join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("typescript-language-server"), "").unwrap();
        let (definition, root, program) =
            server_for(&file, dir.path(), &env, definitions(&BTreeMap::new())).unwrap();
        assert_eq!(definition.name, "typescript");
        assert_eq!(root, project);
        assert_eq!(program, bin.join("typescript-language-server"));
        assert_eq!(
            server_for(
                Path::new("/x/notes.xyz"),
                dir.path(),
                &env,
                definitions(&BTreeMap::new())
            )
            .unwrap_err()
            .to_string(),
            "no language server is known for .xyz files"
        );
    }

    #[test]
    fn settings_override_built_ins_add_servers_and_disable_them() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for program in ["my-pyright", "zls"] {
            std::fs::write(bin.join(program), "").unwrap();
        }
        let env: BTreeMap<String, String> = [("PATH".to_owned(), bin.display().to_string())].into();
        let settings: BTreeMap<String, LspServerSettings> = [
            (
                "pyright".to_owned(),
                LspServerSettings {
                    command: Some("my-pyright".to_owned()),
                    settings: Some(serde_json::json!({"python": {"analysis": {}}})),
                    ..LspServerSettings::default()
                },
            ),
            (
                "zig".to_owned(),
                LspServerSettings {
                    command: Some("zls".to_owned()),
                    file_types: Some(vec!["zig".to_owned()]),
                    ..LspServerSettings::default()
                },
            ),
            (
                "half".to_owned(),
                LspServerSettings {
                    command: Some("half".to_owned()),
                    ..LspServerSettings::default()
                },
            ),
            (
                "typescript".to_owned(),
                LspServerSettings {
                    disabled: Some(true),
                    ..LspServerSettings::default()
                },
            ),
        ]
        .into();
        let definitions = definitions(&settings);
        assert_eq!(definitions[0].name, "zig");
        assert!(
            definitions
                .iter()
                .all(|d| d.name != "half" && d.name != "typescript")
        );

        let file = dir.path().join("a.py");
        let (definition, root, program) =
            server_for(&file, dir.path(), &env, definitions.clone()).unwrap();
        assert_eq!(definition.name, "pyright");
        assert_eq!(definition.args, ["--stdio"]);
        assert_eq!(
            definition.settings["python"],
            serde_json::json!({"analysis": {}})
        );
        assert_eq!(
            (root.as_path(), program),
            (dir.path(), bin.join("my-pyright"))
        );

        let (definition, _, program) = server_for(
            &dir.path().join("main.zig"),
            dir.path(),
            &env,
            definitions.clone(),
        )
        .unwrap();
        assert_eq!(
            (definition.name.as_str(), program),
            ("zig", bin.join("zls"))
        );
        assert_eq!(definition.root_markers, [".git"]);

        assert_eq!(
            server_for(&dir.path().join("a.ts"), dir.path(), &env, definitions)
                .unwrap_err()
                .to_string(),
            "the language servers for .ts files (typescript) are disabled in settings \
             (lsp.servers.<name>.disabled)"
        );
    }
}

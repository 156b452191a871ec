//! Which language server serves a file: the built-in definitions (the common servers, in
//! order of preference per language), the file's root (the nearest ancestor with one of the
//! server's root markers, walking up), and the server's program (the project's own
//! `node_modules/.bin` and `.venv/bin` first, then `PATH`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A language server the daemon knows how to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerDefinition {
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
pub const DEFAULTS: &[ServerDefinition] = &[
    ServerDefinition {
        name: "rust-analyzer",
        command: "rust-analyzer",
        args: &[],
        extensions: &["rs"],
        root_markers: &["Cargo.toml", "rust-project.json"],
        install: "rustup component add rust-analyzer",
    },
    ServerDefinition {
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
    ServerDefinition {
        name: "basedpyright",
        command: "basedpyright-langserver",
        args: &["--stdio"],
        extensions: &["py", "pyi"],
        root_markers: &["pyrightconfig.json", "pyproject.toml", "setup.py", ".git"],
        install: "pip install basedpyright",
    },
    ServerDefinition {
        name: "pylsp",
        command: "pylsp",
        args: &[],
        extensions: &["py"],
        root_markers: &["pyproject.toml", "setup.py", "setup.cfg", ".git"],
        install: "pip install python-lsp-server",
    },
    ServerDefinition {
        name: "typescript",
        command: "typescript-language-server",
        args: &["--stdio"],
        extensions: &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
        root_markers: &["tsconfig.json", "jsconfig.json", "package.json", ".git"],
        install: "npm install -g typescript-language-server typescript",
    },
    ServerDefinition {
        name: "gopls",
        command: "gopls",
        args: &[],
        extensions: &["go"],
        root_markers: &["go.work", "go.mod", ".git"],
        install: "go install golang.org/x/tools/gopls@latest",
    },
    ServerDefinition {
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
    ServerDefinition {
        name: "bash-language-server",
        command: "bash-language-server",
        args: &["start"],
        extensions: &["sh", "bash"],
        root_markers: &[".git"],
        install: "npm install -g bash-language-server",
    },
    ServerDefinition {
        name: "json",
        command: "vscode-json-language-server",
        args: &["--stdio"],
        extensions: &["json", "jsonc"],
        root_markers: &["package.json", ".git"],
        install: "npm install -g vscode-langservers-extracted",
    },
    ServerDefinition {
        name: "css",
        command: "vscode-css-language-server",
        args: &["--stdio"],
        extensions: &["css", "scss", "less"],
        root_markers: &["package.json", ".git"],
        install: "npm install -g vscode-langservers-extracted",
    },
    ServerDefinition {
        name: "html",
        command: "vscode-html-language-server",
        args: &["--stdio"],
        extensions: &["html", "htm"],
        root_markers: &["package.json", ".git"],
        install: "npm install -g vscode-langservers-extracted",
    },
    ServerDefinition {
        name: "yaml",
        command: "yaml-language-server",
        args: &["--stdio"],
        extensions: &["yaml", "yml"],
        root_markers: &[".git"],
        install: "npm install -g yaml-language-server",
    },
    ServerDefinition {
        name: "marksman",
        command: "marksman",
        args: &["server"],
        extensions: &["md", "markdown"],
        root_markers: &[".marksman.toml", ".git"],
        install: "download marksman from https://github.com/artempyanykh/marksman/releases",
    },
];

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
pub fn root_of(file: &Path, markers: &[&str], fallback: &Path) -> PathBuf {
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

/// The server for `file`: the first definition for its extension whose program is found,
/// with its root and program; the error names what to install.
pub fn server_for(
    file: &Path,
    session_cwd: &Path,
    env: &BTreeMap<String, String>,
) -> Result<(&'static ServerDefinition, PathBuf, PathBuf), String> {
    let extension = file
        .extension()
        .and_then(|extension| extension.to_str())
        .unwrap_or_default();
    let candidates: Vec<&ServerDefinition> = DEFAULTS
        .iter()
        .filter(|definition| definition.extensions.contains(&extension))
        .collect();
    if candidates.is_empty() {
        return Err(format!(
            "no language server is known for {} files",
            if extension.is_empty() {
                file.display().to_string()
            } else {
                format!(".{extension}")
            }
        ));
    }
    for definition in &candidates {
        let root = root_of(file, definition.root_markers, session_cwd);
        if let Some(program) = find_program(definition.command, &root, env) {
            return Ok((definition, root, program));
        }
    }
    let options: Vec<String> = candidates
        .iter()
        .map(|definition| format!("{} (`{}`)", definition.name, definition.install))
        .collect();
    Err(format!(
        "no language server for .{extension} files is installed; install one of: {}",
        options.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_walk_up_and_programs_prefer_the_projects_bins() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(project.join("src/deep")).unwrap();
        std::fs::write(project.join("tsconfig.json"), "{}").unwrap();
        let file = project.join("src/deep/main.ts");
        assert_eq!(root_of(&file, &["tsconfig.json"], dir.path()), project);
        assert_eq!(
            root_of(&file, &["nothing-here"], dir.path()),
            dir.path().to_path_buf()
        );

        let env: BTreeMap<String, String> = [("PATH".to_owned(), "/nonexistent".to_owned())].into();
        let error = server_for(&file, dir.path(), &env).unwrap_err();
        assert_eq!(
            error,
            "no language server for .ts files is installed; install one of: typescript \
             (`npm install -g typescript-language-server typescript`)"
        );
        let bin = project.join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("typescript-language-server"), "").unwrap();
        let (definition, root, program) = server_for(&file, dir.path(), &env).unwrap();
        assert_eq!(definition.name, "typescript");
        assert_eq!(root, project);
        assert_eq!(program, bin.join("typescript-language-server"));
        assert_eq!(
            server_for(Path::new("/x/notes.xyz"), dir.path(), &env).unwrap_err(),
            "no language server is known for .xyz files"
        );
    }
}

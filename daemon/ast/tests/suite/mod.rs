//! Shared harness: a fixture repository in a temp directory (one small program per language, a
//! `.gitignore`d directory and file, a non-code file), and helpers that run a search or a
//! rewrite against it.

mod errors;
mod lang;
mod rewrite;
mod search;

use std::path::{Path, PathBuf};

use pi_ast::{AstError, EditPlan, Lang, Limits, SearchReport};
use tempfile::TempDir;

/// The fixture's files: path, content.
const FIXTURE: &[(&str, &str)] = &[
    (".gitignore", "ignored/\n*.gen.rs\n"),
    (
        "rust/src/lib.rs",
        r#"pub fn first(values: &[Option<u32>]) -> u32 {
    let head = values[0].unwrap();
    let parsed: u32 = "7".parse().unwrap();
    head + parsed
}
"#,
    ),
    (
        "rust/src/safe.rs",
        "pub fn safe(value: Option<u32>) -> u32 {\n    value.unwrap_or(0)\n}\n",
    ),
    (
        "rust/src/out.gen.rs",
        "pub fn generated() { cache.unwrap(); }\n",
    ),
    (
        "rust/ignored/skip.rs",
        "pub fn skipped() { hidden.unwrap(); }\n",
    ),
    (
        "web/app.ts",
        r#"export function greet(name: string): void {
  console.log("hello", name);
  console.log(
    "multi",
    name,
  );
}
"#,
    ),
    (
        "web/view.tsx",
        r#"export const View = () => {
  console.log("render");
  return <div>{"hi"}</div>;
};
"#,
    ),
    (
        "web/legacy.js",
        "function legacy() {\n  console.log(1);\n}\n",
    ),
    (
        "scripts/tool.py",
        r#"import sys


def main():
    print("start")
    print(len(sys.argv))
"#,
    ),
    (
        "go/main.go",
        r#"package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("a", 1)
	fmt.Println()
}
"#,
    ),
    ("docs/README.md", "Call `x.unwrap()` carefully.\n"),
];

/// A temp directory holding the fixture.
pub struct Fixture {
    dir: TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        let fixture = Fixture {
            dir: tempfile::tempdir().unwrap(),
        };
        for (path, content) in FIXTURE {
            fixture.write(path, content);
        }
        fixture
    }

    /// The fixture's root (canonical).
    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Writes `content` to `relative`, creating directories.
    pub fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// The text of `relative`.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(relative)).unwrap()
    }

    /// Searches `paths` for `pattern` in `lang` (a name) with `limits`.
    pub fn search_with(
        &self,
        paths: &[&str],
        pattern: &str,
        lang: Option<&str>,
        limits: &Limits,
    ) -> Result<SearchReport, AstError> {
        let lang = lang.map(|name| name.parse::<Lang>()).transpose()?;
        pi_ast::search(&self.root(), &paths_of(paths), pattern, lang, limits)
    }

    /// Searches with the default limits; the search must succeed.
    pub fn search(&self, paths: &[&str], pattern: &str, lang: Option<&str>) -> SearchReport {
        self.search_with(paths, pattern, lang, &Limits::default())
            .unwrap_or_else(|error| panic!("search failed: {error}"))
    }

    /// The error a search with the default limits fails with, as text.
    pub fn search_error(&self, paths: &[&str], pattern: &str, lang: Option<&str>) -> String {
        match self.search_with(paths, pattern, lang, &Limits::default()) {
            Ok(report) => panic!("the search succeeded: {}", report.to_text()),
            Err(error) => error.to_string(),
        }
    }

    /// Previews rewriting `pattern` to `replacement` in `paths`.
    pub fn rewrite_with(
        &self,
        paths: &[&str],
        pattern: &str,
        replacement: &str,
        lang: Option<&str>,
        limits: &Limits,
    ) -> Result<EditPlan, AstError> {
        let lang = lang.map(|name| name.parse::<Lang>()).transpose()?;
        pi_ast::rewrite(
            &self.root(),
            &paths_of(paths),
            pattern,
            replacement,
            lang,
            limits,
        )
    }

    /// Previews a rewrite with the default limits; it must succeed.
    pub fn rewrite(
        &self,
        paths: &[&str],
        pattern: &str,
        replacement: &str,
        lang: Option<&str>,
    ) -> EditPlan {
        self.rewrite_with(paths, pattern, replacement, lang, &Limits::default())
            .unwrap_or_else(|error| panic!("rewrite failed: {error}"))
    }
}

fn paths_of(paths: &[&str]) -> Vec<PathBuf> {
    paths.iter().map(PathBuf::from).collect()
}

/// Each match as `path:line:col-line:col text {meta}` on one line, for compact assertions.
pub fn summary(report: &SearchReport) -> Vec<String> {
    report
        .matches
        .iter()
        .map(|found| {
            let meta: Vec<String> = found
                .meta
                .iter()
                .map(|(name, value)| format!("{name}={}", value.replace('\n', "⏎")))
                .collect();
            format!(
                "{}:{}:{}-{}:{} {} {{{}}}",
                found.path.display(),
                found.start_line,
                found.start_col,
                found.end_line,
                found.end_col,
                found.text.replace('\n', "⏎"),
                meta.join(", ")
            )
        })
        .collect()
}

/// The paths of the files a report's matches are in, deduplicated in order.
pub fn files_of(report: &SearchReport) -> Vec<&Path> {
    let mut files: Vec<&Path> = Vec::new();
    for found in &report.matches {
        if files.last() != Some(&found.path.as_path()) {
            files.push(&found.path);
        }
    }
    files
}

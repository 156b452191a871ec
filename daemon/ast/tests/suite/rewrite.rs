//! `rewrite` then `apply`: the preview writes nothing, apply writes the plan, and refuses when a
//! file changed since the preview.

use pi_ast::{AppliedFile, Limits};

use super::Fixture;

#[test]
fn preview_then_apply() {
    let fixture = Fixture::new();
    let before = fixture.read("rust/src/lib.rs");
    let plan = fixture.rewrite(
        &["rust"],
        "$A.unwrap()",
        "$A.expect(\"checked\")",
        Some("rust"),
    );
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.replacements(), 2);
    assert_eq!(plan.files_searched, 2);
    let file = &plan.files[0];
    assert_eq!(file.path(), std::path::Path::new("rust/src/lib.rs"));
    assert_eq!(file.absolute_path(), fixture.root().join("rust/src/lib.rs"));
    assert_eq!(file.original(), before);
    // The preview wrote nothing.
    assert_eq!(fixture.read("rust/src/lib.rs"), before);
    insta::assert_snapshot!(plan.to_text(), @r#"
    --- a/rust/src/lib.rs
    +++ b/rust/src/lib.rs
    @@ -1,5 +1,5 @@
     pub fn first(values: &[Option<u32>]) -> u32 {
    -    let head = values[0].unwrap();
    -    let parsed: u32 = "7".parse().unwrap();
    +    let head = values[0].expect("checked");
    +    let parsed: u32 = "7".parse().expect("checked");
         head + parsed
     }

    2 replacements in 1 file (2 files searched).
    "#);

    let applied = pi_ast::apply(&plan).unwrap();
    assert_eq!(
        applied.files,
        [AppliedFile {
            path: "rust/src/lib.rs".into(),
            replacements: 2,
        }]
    );
    assert_eq!(fixture.read("rust/src/lib.rs"), file.new_text());
    insta::assert_snapshot!(applied.to_text(), @r"
    Applied 2 replacements in 1 file:
      rust/src/lib.rs (2)
    ");
    // Applied, the pattern matches no more.
    assert!(
        fixture
            .search(&["rust"], "$A.unwrap()", None)
            .matches
            .is_empty()
    );
}

#[test]
fn rewrite_across_languages_by_extension() {
    let fixture = Fixture::new();
    let plan = fixture.rewrite(&[], "console.log($$$ARGS)", "logger.debug($$$ARGS)", None);
    let files: Vec<(String, usize)> = plan
        .files
        .iter()
        .map(|file| (file.path().display().to_string(), file.replacements()))
        .collect();
    assert_eq!(
        files,
        [
            ("web/app.ts".to_owned(), 2),
            ("web/legacy.js".to_owned(), 1),
            ("web/view.tsx".to_owned(), 1)
        ]
    );
    insta::assert_snapshot!(plan.files[0].new_text(), @r#"
    export function greet(name: string): void {
      logger.debug("hello", name);
      logger.debug("multi",
      name,);
    }
    "#);
}

#[test]
fn python_and_go_rewrites() {
    let fixture = Fixture::new();
    let plan = fixture.rewrite(
        &["scripts"],
        "print($X)",
        "logging.info($X)",
        Some("python"),
    );
    insta::assert_snapshot!(plan.files[0].diff(), @r#"
    --- a/scripts/tool.py
    +++ b/scripts/tool.py
    @@ -2,5 +2,5 @@
     
     
     def main():
    -    print("start")
    -    print(len(sys.argv))
    +    logging.info("start")
    +    logging.info(len(sys.argv))
    "#);

    let plan = fixture.rewrite(
        &["go"],
        "fmt.Println($$$ARGS)",
        "log.Println($$$ARGS)",
        None,
    );
    assert_eq!(plan.replacements(), 3);
    insta::assert_snapshot!(plan.files[0].new_text(), @r#"
    package main

    import "fmt"

    func main() {
    	log.Println("hello")
    	log.Println("a", 1)
    	log.Println()
    }
    "#);
}

#[test]
fn nested_matches_replace_the_outer_one() {
    let fixture = Fixture::new();
    fixture.write("nested.rs", "fn f() { a.unwrap().unwrap(); }\n");
    let plan = fixture.rewrite(&["nested.rs"], "$A.unwrap()", "$A?", None);
    assert_eq!(plan.replacements(), 1);
    assert_eq!(plan.files[0].new_text(), "fn f() { a.unwrap()?; }\n");
}

#[test]
fn multi_line_replacements_take_the_match_indentation() {
    let fixture = Fixture::new();
    let plan = fixture.rewrite(
        &["scripts"],
        "print($X)",
        "if verbose:\n    print($X)",
        Some("python"),
    );
    insta::assert_snapshot!(plan.files[0].new_text(), @r#"
    import sys


    def main():
        if verbose:
            print("start")
        if verbose:
            print(len(sys.argv))
    "#);
}

#[test]
fn no_match_is_an_empty_plan() {
    let fixture = Fixture::new();
    let plan = fixture.rewrite(&["rust"], "$A.expect($B)", "$A.unwrap()", Some("rust"));
    assert!(plan.files.is_empty());
    assert_eq!(
        plan.to_text(),
        "No matches in 2 files searched; nothing to change.\n"
    );
    let applied = pi_ast::apply(&plan).unwrap();
    assert!(applied.files.is_empty());
}

#[test]
fn the_limit_keeps_whole_files() {
    let fixture = Fixture::new();
    let limits = Limits {
        max_matches: 1,
        ..Limits::default()
    };
    let plan = fixture
        .rewrite_with(&["web"], "console.log($$$A)", "log($$$A)", None, &limits)
        .unwrap();
    // app.ts has two matches: it is taken whole, and no file after it.
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.replacements(), 2);
    assert!(plan.truncated);
    assert!(
        plan.to_text().ends_with(
            "\n2 replacements in 1 file (2 files searched).\nStopped after 2 replacements; more \
             files match: narrow the path or the pattern, or apply this and run the rewrite \
             again.\n"
        ),
        "{}",
        plan.to_text()
    );
}

#[test]
fn apply_is_refused_when_a_file_changed_since_the_preview() {
    let fixture = Fixture::new();
    let plan = fixture.rewrite(&["web"], "console.log($$$A)", "log($$$A)", None);
    assert_eq!(plan.files.len(), 3);
    let app = fixture.read("web/app.ts");
    fixture.write(
        "web/legacy.js",
        "function legacy() {\n  console.log(2);\n}\n",
    );
    let error = pi_ast::apply(&plan).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`web/legacy.js` changed since the preview (its content differs); nothing was written: \
         run the rewrite again to preview the current content"
    );
    // Nothing was written, not even the files before the changed one.
    assert_eq!(fixture.read("web/app.ts"), app);
    assert_eq!(
        fixture.read("web/legacy.js"),
        "function legacy() {\n  console.log(2);\n}\n"
    );
}

#[test]
fn apply_is_refused_when_a_file_was_deleted_since_the_preview() {
    let fixture = Fixture::new();
    let plan = fixture.rewrite(&["web/view.tsx"], "console.log($$$A)", "log($$$A)", None);
    std::fs::remove_file(fixture.root().join("web/view.tsx")).unwrap();
    assert_eq!(
        pi_ast::apply(&plan).unwrap_err().to_string(),
        "`web/view.tsx` changed since the preview (it no longer exists); nothing was written: \
         run the rewrite again to preview the current content"
    );
}

#[test]
fn apply_keeps_permissions_and_writes_through_symlinks() {
    use std::os::unix::fs::PermissionsExt as _;

    let fixture = Fixture::new();
    let root = fixture.root();
    let script = root.join("scripts/tool.py");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
    std::os::unix::fs::symlink(&script, root.join("link.py")).unwrap();
    let plan = fixture.rewrite(&["link.py"], "print($X)", "log($X)", None);
    pi_ast::apply(&plan).unwrap();
    assert!(root.join("link.py").is_symlink());
    assert!(fixture.read("scripts/tool.py").contains("log(\"start\")"));
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o751);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(root.join("scripts"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["tool.py"]);
}

//! `search`: meta-variables in each language, language inference over a mixed directory,
//! `.gitignore`, the limits and the report's text.

use std::path::Path;

use pi_ast::{Lang, Limits, SkipReason, SkippedFile};

use super::{Fixture, files_of, summary};

#[test]
fn rust_method_call_with_a_meta_variable() {
    let fixture = Fixture::new();
    let report = fixture.search(&["rust"], "$A.unwrap()", Some("rust"));
    assert_eq!(
        summary(&report),
        [
            "rust/src/lib.rs:2:16-2:34 values[0].unwrap() {A=values[0]}",
            r#"rust/src/lib.rs:3:23-3:43 "7".parse().unwrap() {A="7".parse()}"#,
        ]
    );
    // `unwrap_or(0)` is another method; the ignored directory and file are not searched.
    assert_eq!(report.files_searched, 2);
    assert!(!report.truncated);
    assert!(report.matches.iter().all(|found| found.lang == Lang::Rust));
    insta::assert_snapshot!(report.to_text(), @r#"
    rust/src/lib.rs:2:16: values[0].unwrap()
        $A = values[0]
    rust/src/lib.rs:3:23: "7".parse().unwrap()
        $A = "7".parse()

    2 matches in 1 file (2 files searched).
    "#);

    // Statements match whole, with their `;`.
    let report = fixture.search(&["rust"], "let $X = $Y.unwrap();", Some("rust"));
    assert_eq!(
        summary(&report),
        ["rust/src/lib.rs:2:5-2:35 let head = values[0].unwrap(); {X=head, Y=values[0]}"]
    );
}

#[test]
fn typescript_list_meta_variable_covers_tsx_and_multi_line_matches() {
    let fixture = Fixture::new();
    let report = fixture.search(&["web"], "console.log($$$ARGS)", Some("ts"));
    assert_eq!(
        summary(&report),
        [
            r#"web/app.ts:2:3-2:29 console.log("hello", name) {ARGS="hello", name}"#,
            r#"web/app.ts:3:3-6:4 console.log(⏎    "multi",⏎    name,⏎  ) {ARGS="multi",⏎    name,}"#,
            r#"web/view.tsx:2:3-2:24 console.log("render") {ARGS="render"}"#,
        ]
    );
    assert_eq!(report.matches[2].lang, Lang::Tsx);
    insta::assert_snapshot!(report.to_text(), @r#"
    web/app.ts:2:3: console.log("hello", name)
        $ARGS = "hello", name
    web/app.ts:3:3:
        console.log(
            "multi",
            name,
          )
        $ARGS = "multi", name,

    web/view.tsx:2:3: console.log("render")
        $ARGS = "render"

    3 matches in 2 files (2 files searched).
    "#);
}

#[test]
fn javascript_list_meta_variable() {
    let fixture = Fixture::new();
    let report = fixture.search(&["web"], "console.log($$$ARGS)", Some("javascript"));
    assert_eq!(
        summary(&report),
        ["web/legacy.js:2:3-2:17 console.log(1) {ARGS=1}"]
    );
    assert_eq!(report.files_searched, 1);
}

#[test]
fn python_single_meta_variable() {
    let fixture = Fixture::new();
    let report = fixture.search(&["scripts"], "print($X)", Some("py"));
    assert_eq!(
        summary(&report),
        [
            r#"scripts/tool.py:5:5-5:19 print("start") {X="start"}"#,
            "scripts/tool.py:6:5-6:25 print(len(sys.argv)) {X=len(sys.argv)}",
        ]
    );
    // A `$` that starts no meta-variable is code: `$5` in a string is matched as written.
    fixture.write(
        "scripts/price.py",
        "print(\"costs $5\")\nprint(\"costs $6\")\n",
    );
    let report = fixture.search(&["scripts/price.py"], "print(\"costs $5\")", None);
    assert_eq!(
        summary(&report),
        [r#"scripts/price.py:1:1-1:18 print("costs $5") {}"#]
    );
    // One argument only: `print($X)` does not match `print(a, b)`.
    fixture.write("scripts/two.py", "print(1, 2)\n");
    let report = fixture.search(&["scripts/two.py"], "print($X)", Some("python"));
    assert!(report.matches.is_empty());
}

#[test]
fn go_calls_with_any_arguments() {
    let fixture = Fixture::new();
    let report = fixture.search(&["go"], "fmt.Println($$$)", Some("go"));
    // At the top of a file `fmt.Println(x)` would parse as a type conversion; the pattern is
    // read as a call, so calls with any number of arguments match.
    assert_eq!(
        summary(&report),
        [
            r#"go/main.go:6:2-6:22 fmt.Println("hello") {}"#,
            r#"go/main.go:7:2-7:21 fmt.Println("a", 1) {}"#,
            "go/main.go:8:2-8:15 fmt.Println() {}",
        ]
    );
    let report = fixture.search(&["go"], "fmt.Println($A, $B)", Some("go"));
    assert_eq!(
        summary(&report),
        [r#"go/main.go:7:2-7:21 fmt.Println("a", 1) {A="a", B=1}"#]
    );
    let report = fixture.search(&["go"], "fmt.Println($A)", Some("go"));
    assert_eq!(
        summary(&report),
        [r#"go/main.go:6:2-6:22 fmt.Println("hello") {A="hello"}"#]
    );
    // A real type conversion stays one.
    fixture.write(
        "go/bytes.go",
        "package main\n\nfunc b(s string) []byte { return []byte(s) }\n",
    );
    let report = fixture.search(&["go/bytes.go"], "[]byte($S)", Some("go"));
    assert_eq!(summary(&report), ["go/bytes.go:3:34-3:43 []byte(s) {S=s}"]);
    // Declarations parse at the top level as they are.
    let report = fixture.search(&["go"], "func $NAME() { $$$BODY }", Some("go"));
    assert_eq!(report.matches.len(), 1);
    assert_eq!(report.matches[0].meta["NAME"], "main");
}

#[test]
fn inferred_languages_over_a_mixed_directory() {
    let fixture = Fixture::new();
    let report = fixture.search(&[], "console.log($$$ARGS)", None);
    assert_eq!(
        files_of(&report),
        [
            Path::new("web/app.ts"),
            Path::new("web/legacy.js"),
            Path::new("web/view.tsx")
        ]
    );
    let langs: Vec<Lang> = report.matches.iter().map(|found| found.lang).collect();
    assert_eq!(
        langs,
        [
            Lang::TypeScript,
            Lang::TypeScript,
            Lang::JavaScript,
            Lang::Tsx
        ]
    );
    // Every code file of the fixture but the ignored ones: 3 Rust, 3 web, Python, Go.
    assert_eq!(report.files_searched, 7);

    // A Python-only pattern searches the files of the languages it parses in and skips the
    // others (`def` is no Rust, TypeScript, JavaScript or Go).
    let report = fixture.search(&[], "def $F():\n    $$$BODY", None);
    assert_eq!(files_of(&report), [Path::new("scripts/tool.py")]);
    assert_eq!(report.files_searched, 1);
    assert_eq!(report.matches[0].meta["F"], "main");

    let report = fixture.search(&["."], "$A.unwrap()", None);
    insta::assert_snapshot!(report.to_text(), @r#"
    rust/src/lib.rs:2:16: values[0].unwrap()
        $A = values[0]
    rust/src/lib.rs:3:23: "7".parse().unwrap()
        $A = "7".parse()

    2 matches in 1 file (7 files searched).
    "#);
}

#[test]
fn gitignored_files_are_skipped_unless_named() {
    let fixture = Fixture::new();
    let report = fixture.search(&[], "$A.unwrap()", Some("rust"));
    assert_eq!(files_of(&report), [Path::new("rust/src/lib.rs")]);

    let report = fixture.search(
        &["rust/ignored/skip.rs", "rust/src/out.gen.rs"],
        "$A.unwrap()",
        Some("rust"),
    );
    assert_eq!(
        summary(&report),
        [
            "rust/ignored/skip.rs:1:20-1:35 hidden.unwrap() {A=hidden}",
            "rust/src/out.gen.rs:1:22-1:36 cache.unwrap() {A=cache}",
        ]
    );
}

#[test]
fn an_ignored_directory_named_explicitly_is_searched() {
    // As ripgrep does: naming a path overrides the ignore files that would skip it.
    let fixture = Fixture::new();
    let report = fixture.search(&["rust/ignored"], "$A.unwrap()", None);
    assert_eq!(files_of(&report), [Path::new("rust/ignored/skip.rs")]);
}

#[test]
fn a_file_reached_twice_is_searched_once() {
    let fixture = Fixture::new();
    let report = fixture.search(
        &["rust/src/lib.rs", "rust", "./rust/src/"],
        "$A.unwrap()",
        Some("rust"),
    );
    assert_eq!(report.matches.len(), 2);
    assert_eq!(report.files_searched, 2);
}

#[test]
fn nested_matches_are_all_reported() {
    let fixture = Fixture::new();
    fixture.write("nested.rs", "fn f() { a.unwrap().unwrap(); }\n");
    let report = fixture.search(&["nested.rs"], "$A.unwrap()", None);
    assert_eq!(
        summary(&report),
        [
            "nested.rs:1:10-1:29 a.unwrap().unwrap() {A=a.unwrap()}",
            "nested.rs:1:10-1:20 a.unwrap() {A=a}",
        ]
    );
}

#[test]
fn columns_count_characters() {
    let fixture = Fixture::new();
    fixture.write("wide.py", "é = 1; print(\"ünï\")\n");
    let report = fixture.search(&["wide.py"], "print($X)", None);
    assert_eq!(
        summary(&report),
        ["wide.py:1:8-1:20 print(\"ünï\") {X=\"ünï\"}"]
    );
}

#[test]
fn the_match_limit_cuts_and_says_so() {
    let fixture = Fixture::new();
    let limits = Limits {
        max_matches: 2,
        ..Limits::default()
    };
    let report = fixture
        .search_with(&["web"], "console.log($$$ARGS)", None, &limits)
        .unwrap();
    assert_eq!(report.matches.len(), 2);
    assert!(report.truncated);
    insta::assert_snapshot!(report.to_text(), @r#"
    web/app.ts:2:3: console.log("hello", name)
        $ARGS = "hello", name
    web/app.ts:3:3:
        console.log(
            "multi",
            name,
          )
        $ARGS = "multi", name,

    2 matches in 1 file (2 files searched).
    Stopped at the first 2 matches; there are more: narrow the path or the pattern.
    "#);

    // Exactly as many matches as the limit is not a cut.
    let limits = Limits {
        max_matches: 3,
        ..Limits::default()
    };
    let report = fixture
        .search_with(&["web"], "console.log($$$ARGS)", Some("ts"), &limits)
        .unwrap();
    assert_eq!(report.matches.len(), 3);
    assert!(!report.truncated);
}

#[test]
fn the_default_limit_is_200_matches() {
    let fixture = Fixture::new();
    let calls = "  console.log(i);\n".repeat(250);
    fixture.write("many/calls.js", format!("function f() {{\n{calls}}}\n"));
    let report = fixture.search(&["many"], "console.log($A)", None);
    assert_eq!(report.matches.len(), 200);
    assert!(report.truncated);
    assert_eq!(report.matches[199].start_line, 201);
}

#[test]
fn long_matches_and_captures_are_cut() {
    let fixture = Fixture::new();
    let argument = "x".repeat(100);
    fixture.write("long.js", format!("console.log(\"{argument}\");\n"));
    let limits = Limits {
        max_text_bytes: 20,
        ..Limits::default()
    };
    let report = fixture
        .search_with(&["long.js"], "console.log($A)", None, &limits)
        .unwrap();
    let found = &report.matches[0];
    assert_eq!(found.text, "console.log(\"xxxxxxx… (95 more bytes)");
    assert_eq!(found.meta["A"], "\"xxxxxxxxxxxxxxxxxxx… (82 more bytes)");
    assert_eq!((found.end_line, found.end_col), (1, 116));
}

#[test]
fn large_and_binary_files_in_a_directory_are_skipped_and_reported() {
    let fixture = Fixture::new();
    fixture.write(
        "big/huge.js",
        format!("// {}\nconsole.log(1);\n", "x".repeat(200)),
    );
    fixture.write("big/binary.js", b"console.log(1);\n\xff\xfe\n");
    fixture.write("big/small.js", "console.log(2);\n");
    let limits = Limits {
        max_file_bytes: 100,
        ..Limits::default()
    };
    let report = fixture
        .search_with(&["big"], "console.log($A)", None, &limits)
        .unwrap();
    assert_eq!(
        summary(&report),
        ["big/small.js:1:1-1:15 console.log(2) {A=2}"]
    );
    assert_eq!(
        report.skipped,
        [
            SkippedFile {
                path: "big/binary.js".into(),
                reason: SkipReason::NotText,
            },
            SkippedFile {
                path: "big/huge.js".into(),
                reason: SkipReason::TooLarge { bytes: 220 },
            },
        ]
    );
    insta::assert_snapshot!(report.to_text(), @r"
    big/small.js:1:1: console.log(2)
        $A = 2

    1 match in 1 file (1 file searched).
    Skipped 2 files:
      big/binary.js (not UTF-8 text)
      big/huge.js (220 bytes, over the size limit)
    ");
}

#[test]
fn no_match_is_an_empty_report() {
    let fixture = Fixture::new();
    let report = fixture.search(&["rust"], "$A.expect($B)", Some("rust"));
    assert!(report.matches.is_empty());
    assert_eq!(report.to_text(), "No matches in 2 files searched.\n");
}

#[test]
fn an_explicit_language_parses_a_file_whatever_its_extension() {
    let fixture = Fixture::new();
    fixture.write("build/script.txt", "fn main() { opt.unwrap(); }\n");
    let report = fixture.search(&["build/script.txt"], "$A.unwrap()", Some("rust"));
    assert_eq!(
        summary(&report),
        ["build/script.txt:1:13-1:25 opt.unwrap() {A=opt}"]
    );
}

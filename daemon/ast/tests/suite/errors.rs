//! Every refusal's text: what was wrong and what to do.

use pi_ast::{Lang, Limits};

use super::Fixture;

/// The error `result` holds, as text.
fn error_text<T: std::fmt::Debug>(result: Result<T, pi_ast::AstError>) -> String {
    result.expect_err("an error").to_string()
}

#[test]
fn unknown_language() {
    assert_eq!(
        error_text("cobol".parse::<Lang>()),
        "unknown language `cobol`; supported languages: rust (rs), typescript (ts), tsx, \
         javascript (js, jsx), python (py), go (golang)"
    );
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&[], "$A", Some("kotlin")),
        "unknown language `kotlin`; supported languages: rust (rs), typescript (ts), tsx, \
         javascript (js, jsx), python (py), go (golang)"
    );
}

#[test]
fn empty_pattern() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&[], "  \n", None),
        "the pattern is empty; write code to find, with $NAME for any single node and $$$NAME \
         for any list of nodes (for example `$A.unwrap()`)"
    );
}

#[test]
fn pattern_that_does_not_parse_in_the_language() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&[], "fn $F(", Some("rust")),
        "the pattern `fn $F(` does not parse as Rust code (syntax error at `fn $F(`); write one \
         complete Rust expression, statement or item, with $NAME for any single node and \
         $$$NAME for any list of nodes"
    );
    assert_eq!(
        fixture.search_error(&[], "def $F():\n    pass", Some("go")),
        "the pattern `def $F():\n    pass` does not parse as Go code (syntax error at `def $F():\n    \
         pass`); write one complete Go expression, statement or item, with $NAME for any single node and \
         $$$NAME for any list of nodes"
    );
    assert_eq!(
        fixture.search_error(&[], "$$$ARGS", Some("js")),
        "the pattern `$$$ARGS` does not parse as JavaScript code (a $$$ list cannot be the whole \
         pattern: use $NAME, or put $$$NAME inside a larger pattern); write one complete \
         JavaScript expression, statement or item, with $NAME for any single node and $$$NAME \
         for any list of nodes"
    );
}

#[test]
fn pattern_that_parses_in_no_language() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&[], "let x = ", None),
        "the pattern `let x =` does not parse as code in any supported language (rust (rs), \
         typescript (ts), tsx, javascript (js, jsx), python (py), go (golang)); check its \
         syntax, or pass `lang` to see why it does not parse in that language"
    );
}

#[test]
fn a_long_pattern_is_quoted_cut() {
    let fixture = Fixture::new();
    let pattern = format!("foo({}", "a, ".repeat(100));
    let text = fixture.search_error(&[], &pattern, Some("python"));
    assert!(
        text.starts_with(&format!(
            "the pattern `{}… (303 characters)`",
            &pattern[..200]
        )),
        "{text}"
    );
}

#[test]
fn path_that_does_not_exist() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&["rust", "nowhere/else"], "$A", Some("rust")),
        "path `nowhere/else` does not exist; give a file or directory relative to the working \
         directory"
    );
}

#[test]
fn file_of_unknown_language() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&["docs/README.md"], "$A.unwrap()", None),
        "cannot tell the language of `docs/README.md` from its extension; pass `lang` (one of: \
         rust (rs), typescript (ts), tsx, javascript (js, jsx), python (py), go (golang))"
    );
}

#[test]
fn explicit_file_where_the_pattern_is_not_code() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&["scripts/tool.py"], "fn $F() {}", None),
        "the pattern `fn $F() {}` does not parse as Python code (it is several nodes, and a \
         pattern matches one node: search for one statement or expression at a time); write \
         one complete Python expression, statement or item, with $NAME for any single node \
         and $$$NAME for any list of nodes"
    );
}

#[test]
fn no_files_to_search() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture.search_error(&["docs"], "$A.unwrap()", Some("rust")),
        "no Rust files under `docs`; .gitignore'd files are skipped: check the path, or the \
         language (supported: rust (rs), typescript (ts), tsx, javascript (js, jsx), python \
         (py), go (golang))"
    );
    assert_eq!(
        fixture.search_error(&["scripts", "go"], "fn $F() {}", None),
        "no files in a language the pattern parses in (Rust) under `scripts`, `go`; \
         .gitignore'd files are skipped: check the path, or the language (supported: rust \
         (rs), typescript (ts), tsx, javascript (js, jsx), python (py), go (golang))"
    );
    fixture.write("vendor/.gitignore", "*\n");
    fixture.write("vendor/lib.rs", "fn f() { x.unwrap(); }\n");
    assert_eq!(
        fixture.search_error(&["vendor"], "$A.unwrap()", Some("rust")),
        "no Rust files under `vendor`; .gitignore'd files are skipped: check the path, or the \
         language (supported: rust (rs), typescript (ts), tsx, javascript (js, jsx), python \
         (py), go (golang))"
    );
}

#[test]
fn explicit_file_too_large() {
    let fixture = Fixture::new();
    let limits = Limits {
        max_file_bytes: 64,
        ..Limits::default()
    };
    assert_eq!(
        error_text(fixture.search_with(&["web/app.ts"], "console.log($A)", None, &limits)),
        "`web/app.ts` is 119 bytes, over the 64-byte limit for structural search; search a \
         smaller file or use grep"
    );
}

#[test]
fn explicit_file_not_text() {
    let fixture = Fixture::new();
    fixture.write("blob.js", b"\xff\xfe\x00console.log(1)");
    assert_eq!(
        fixture.search_error(&["blob.js"], "console.log($A)", None),
        "`blob.js` is not UTF-8 text, so it cannot be parsed as code"
    );
}

#[test]
fn replacement_with_a_meta_variable_the_pattern_does_not_capture() {
    let fixture = Fixture::new();
    assert_eq!(
        error_text(fixture.rewrite_with(
            &["rust"],
            "$A.unwrap()",
            "$B.expect($MESSAGE)",
            Some("rust"),
            &Limits::default(),
        )),
        "the replacement uses $B, $MESSAGE, which the pattern does not capture (the pattern \
         captures $A); every $NAME in the replacement must appear in the pattern"
    );
    assert_eq!(
        error_text(fixture.rewrite_with(
            &["web"],
            "console.log($$$)",
            "logger.info($$$ARGS)",
            None,
            &Limits::default(),
        )),
        "the replacement uses $ARGS, which the pattern does not capture (the pattern captures \
         nothing); every $NAME in the replacement must appear in the pattern"
    );
}

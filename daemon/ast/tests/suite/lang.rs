//! `Lang`: names, aliases and extensions.

use std::path::Path;

use pi_ast::Lang;

#[test]
fn names_and_aliases() {
    let check = |name: &str, expected: Option<Lang>| {
        assert_eq!(Lang::from_name(name), expected, "{name}");
    };
    check("rust", Some(Lang::Rust));
    check("rs", Some(Lang::Rust));
    check("typescript", Some(Lang::TypeScript));
    check("ts", Some(Lang::TypeScript));
    check("tsx", Some(Lang::Tsx));
    check("javascript", Some(Lang::JavaScript));
    check("js", Some(Lang::JavaScript));
    check("jsx", Some(Lang::JavaScript));
    check("python", Some(Lang::Python));
    check("py", Some(Lang::Python));
    check("go", Some(Lang::Go));
    check("golang", Some(Lang::Go));
    check("Rust", Some(Lang::Rust));
    check(" TS ", Some(Lang::TypeScript));
    check("cobol", None);
    check("", None);
    assert_eq!("PY".parse::<Lang>().unwrap(), Lang::Python);
}

#[test]
fn all_in_order_with_names() {
    let names: Vec<(&str, String)> = Lang::all()
        .iter()
        .map(|lang| (lang.name(), lang.to_string()))
        .collect();
    assert_eq!(
        names,
        [
            ("rust", "Rust".to_owned()),
            ("typescript", "TypeScript".to_owned()),
            ("tsx", "TSX".to_owned()),
            ("javascript", "JavaScript".to_owned()),
            ("python", "Python".to_owned()),
            ("go", "Go".to_owned()),
        ]
    );
    for lang in Lang::all() {
        assert_eq!(Lang::from_name(lang.name()), Some(*lang));
    }
}

#[test]
fn extensions() {
    let check = |path: &str, expected: Option<Lang>| {
        assert_eq!(Lang::from_path(Path::new(path)), expected, "{path}");
    };
    check("src/lib.rs", Some(Lang::Rust));
    check("a.ts", Some(Lang::TypeScript));
    check("a.mts", Some(Lang::TypeScript));
    check("a.cts", Some(Lang::TypeScript));
    check("a.d.ts", Some(Lang::TypeScript));
    check("a.tsx", Some(Lang::Tsx));
    check("a.js", Some(Lang::JavaScript));
    check("a.mjs", Some(Lang::JavaScript));
    check("a.cjs", Some(Lang::JavaScript));
    check("a.jsx", Some(Lang::JavaScript));
    check("a.py", Some(Lang::Python));
    check("a.pyi", Some(Lang::Python));
    check("main.go", Some(Lang::Go));
    check("MAIN.GO", Some(Lang::Go));
    check("README.md", None);
    check("Makefile", None);
    check(".rs", None);
}

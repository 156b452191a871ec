//! Tidy rules for the TUI's sources: named ANSI colours only (STYLE.md item 31), and a `//!`
//! paragraph opening every file.

use std::path::Path;

fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(directory) = stack.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                files.push((path.display().to_string(), text));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn only_named_ansi_colours_are_used() {
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, text)| {
            [
                "Color::Rgb",
                "Color::Indexed",
                "Color::Gray",
                "Color::DarkGray",
                "Color::White",
                "Color::Black",
                "Color::Light",
            ]
            .iter()
            .any(|banned| text.contains(banned))
        })
        .map(|(path, _)| path)
        .collect();
    assert_eq!(
        offenders,
        Vec::<String>::new(),
        "use the default foreground, dim, or a named colour"
    );
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let missing: Vec<String> = sources()
        .into_iter()
        .filter(|(_, text)| !text.starts_with("//!"))
        .map(|(path, _)| path)
        .collect();
    assert_eq!(missing, Vec::<String>::new());
}

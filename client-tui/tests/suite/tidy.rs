//! Tidy rules for the TUI's sources: colours only through the theme's roles (STYLE.md item
//! 31: the theme maps them to the terminal's colours), and a `//!` paragraph opening every
//! file.

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
fn colours_come_only_from_the_theme() {
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(path, text)| {
            // `Color::` itself, not a longer name ending in it (`ThemeColor::`).
            let names_a_colour = text.match_indices("Color::").any(|(at, _)| {
                !text[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            !path.ends_with("src/theme.rs") && names_a_colour
        })
        .map(|(path, _)| path)
        .collect();
    assert_eq!(
        offenders,
        Vec::<String>::new(),
        "draw with `theme::role(Role::…)`, the default foreground or dim: the theme paints \
         the colours"
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

//! Gemini conversations: `functionCall` / `functionResponse` turns.

use serde_json::Value;

/// The `functionCall` or `functionResponse` parts of one content, as (name, id).
type NamedParts = Vec<(String, Option<String>)>;

/// Gemini: a model content with `functionCall` parts is followed directly by a user content
/// with as many `functionResponse` parts, for the same names (and ids when both carry them).
pub(super) fn check_contents(contents: &[Value], problems: &mut Vec<String>) {
    // The previous content's function calls as (name, id).
    let mut open: Option<(usize, NamedParts)> = None;
    for (i, content) in contents.iter().enumerate() {
        let role = content["role"].as_str().unwrap_or("user");
        if role != "user" && role != "model" {
            problems.push(format!(
                "contents[{i}].role must be user or model, not {role:?}"
            ));
        }
        let parts = content["parts"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if parts.is_empty() {
            problems.push(format!("contents[{i}].parts must be a non-empty array"));
        }
        let mut named = |key: &str| -> NamedParts {
            let mut found = Vec::new();
            for (p, part) in parts.iter().enumerate() {
                if let Some(object) = part.get(key) {
                    let name = object["name"].as_str().unwrap_or_default();
                    if name.is_empty() {
                        problems.push(format!("contents[{i}].parts[{p}].{key} without a name"));
                    }
                    found.push((name.to_owned(), object["id"].as_str().map(str::to_owned)));
                }
            }
            found
        };
        let calls = named("functionCall");
        let responses = named("functionResponse");
        let names = |list: &[(String, Option<String>)]| {
            let mut names: Vec<&str> = list.iter().map(|(name, _)| name.as_str()).collect();
            names.sort_unstable();
            names.join(", ")
        };
        match open.take() {
            Some((a, expected)) if role != "user" || responses.is_empty() => problems.push(format!(
                "contents[{a}]: function calls [{}] are not answered by functionResponse parts in contents[{i}]",
                names(&expected)
            )),
            Some((a, expected)) => {
                let ids = |list: &[(String, Option<String>)]| {
                    let mut ids: Option<Vec<String>> = list.iter().map(|(_, id)| id.clone()).collect();
                    if let Some(ids) = &mut ids {
                        ids.sort_unstable();
                    }
                    ids
                };
                let ids_differ = matches!((ids(&expected), ids(&responses)), (Some(want), Some(got)) if want != got);
                if names(&expected) != names(&responses) || ids_differ {
                    problems.push(format!(
                        "contents[{i}]: functionResponse parts [{}] do not match the function calls [{}] of contents[{a}]",
                        names(&responses),
                        names(&expected)
                    ));
                }
            }
            None if !responses.is_empty() => problems.push(format!(
                "contents[{i}]: orphan functionResponse parts [{}]: the previous content has no functionCall",
                names(&responses)
            )),
            None => {}
        }
        if !calls.is_empty() {
            if role == "model" {
                open = Some((i, calls));
            } else {
                problems.push(format!(
                    "contents[{i}]: functionCall parts outside a model content"
                ));
            }
        }
    }
    if let Some((a, expected)) = open {
        problems.push(format!(
            "contents[{a}]: function calls [{}] are not answered (the conversation ends)",
            expected
                .iter()
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

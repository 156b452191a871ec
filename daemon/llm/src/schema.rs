//! Tool parameter schemas as each API accepts them. Built-in tools' schemas already fit every
//! API and pass through untouched (the same bytes); schemas from elsewhere (MCP servers) are
//! adapted only where an API would refuse them:
//!
//! - every API: the top level is an object schema (`type: "object"`);
//! - Anthropic and OpenAI refuse `anyOf` / `oneOf` / `allOf` at the top level: their branches'
//!   properties merge into the top level (required: what every branch requires, or for
//!   `allOf` what any branch requires);
//! - OpenAI: an object schema has `properties` (some compatible servers insist);
//! - Google (`parametersJsonSchema`) takes a subset of JSON Schema: other keywords are dropped
//!   throughout, `const` becomes a one-value `enum`, `allOf` merges into its schema, a
//!   nullable `type` list keeps its non-null type, and draft-07 `definitions` become `$defs`
//!   (with their references).
//!
//! Invariant: property names are never touched, only schema keywords.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

/// Which API's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Anthropic Messages (`input_schema`).
    Anthropic,
    /// OpenAI Chat Completions and Responses (`parameters`).
    OpenAi,
    /// Google Generative AI (`parametersJsonSchema`).
    Google,
}

/// The keywords Google's `parametersJsonSchema` takes.
const GOOGLE_KEYWORDS: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "oneOf",
    "properties",
    "additionalProperties",
    "required",
    "propertyOrdering",
];

/// `schema` as `dialect` accepts it; borrowed when it already fits.
pub fn adapt(schema: &Value, dialect: Dialect) -> Cow<'_, Value> {
    if fits(schema, dialect) {
        return Cow::Borrowed(schema);
    }
    let mut schema = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    if dialect != Dialect::Google {
        merge_top_level_combinators(&mut schema);
    }
    if schema.get("type") != Some(&json!("object")) {
        schema.insert("type".to_owned(), json!("object"));
    }
    if dialect == Dialect::OpenAi && !schema.contains_key("properties") {
        schema.insert("properties".to_owned(), json!({}));
    }
    let mut schema = Value::Object(schema);
    if dialect == Dialect::Google {
        google(&mut schema);
    }
    Cow::Owned(schema)
}

/// Whether `schema` needs no change for `dialect`.
fn fits(schema: &Value, dialect: Dialect) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if map.get("type") != Some(&json!("object")) {
        return false;
    }
    match dialect {
        Dialect::Anthropic => !has_combinator(map),
        Dialect::OpenAi => !has_combinator(map) && map.contains_key("properties"),
        Dialect::Google => google_fits(schema),
    }
}

fn has_combinator(map: &Map<String, Value>) -> bool {
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|key| map.contains_key(*key))
}

/// Moves the branches of top-level `anyOf` / `oneOf` / `allOf` into the top level.
fn merge_top_level_combinators(schema: &mut Map<String, Value>) {
    for (key, all) in [("allOf", true), ("anyOf", false), ("oneOf", false)] {
        let Some(Value::Array(branches)) = schema.remove(key) else {
            continue;
        };
        let mut properties = match schema.remove("properties") {
            Some(Value::Object(properties)) => properties,
            _ => Map::new(),
        };
        let mut required: Vec<Value> = match schema.remove("required") {
            Some(Value::Array(required)) => required,
            _ => Vec::new(),
        };
        let mut common: Option<Vec<Value>> = None;
        for branch in &branches {
            if let Some(Value::Object(branch_properties)) = branch.get("properties") {
                for (name, property) in branch_properties {
                    properties
                        .entry(name.clone())
                        .or_insert_with(|| property.clone());
                }
            }
            let branch_required: Vec<Value> = branch
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if all {
                for name in branch_required {
                    if !required.contains(&name) {
                        required.push(name);
                    }
                }
            } else {
                common = Some(match common {
                    None => branch_required,
                    Some(common) => common
                        .into_iter()
                        .filter(|name| branch_required.contains(name))
                        .collect(),
                });
            }
        }
        for name in common.unwrap_or_default() {
            if !required.contains(&name) {
                required.push(name);
            }
        }
        schema.insert("properties".to_owned(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(required));
        }
    }
}

/// Whether every schema in `schema` uses only Google's keywords (and no `const`, `allOf` or
/// type list).
fn google_fits(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    map.iter().all(|(key, value)| {
        GOOGLE_KEYWORDS.contains(&key.as_str())
            && !(key == "$ref"
                && value
                    .as_str()
                    .is_some_and(|r| r.starts_with("#/definitions/")))
            && !(key == "type" && value.is_array())
            && sub_schemas(key, value).all(google_fits)
    })
}

/// The schemas directly inside keyword `key`'s `value`.
fn sub_schemas<'a>(key: &str, value: &'a Value) -> Box<dyn Iterator<Item = &'a Value> + 'a> {
    match (key, value) {
        ("properties" | "$defs" | "definitions", Value::Object(map)) => Box::new(map.values()),
        ("items" | "additionalProperties", Value::Object(_)) => Box::new(std::iter::once(value)),
        ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(list)) => {
            Box::new(list.iter())
        }
        _ => Box::new(std::iter::empty()),
    }
}

/// Rewrites `schema` (recursively) to Google's keywords.
fn google(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    // Draft-07's `definitions` is `$defs` here; references follow.
    if let Some(definitions) = map.remove("definitions") {
        map.entry("$defs").or_insert(definitions);
    }
    if let Some(Value::String(reference)) = map.get_mut("$ref")
        && let Some(rest) = reference.strip_prefix("#/definitions/")
    {
        *reference = format!("#/$defs/{rest}");
    }
    if let Some(constant) = map.remove("const") {
        map.entry("enum").or_insert_with(|| json!([constant]));
    }
    if let Some(Value::Array(types)) = map.get("type") {
        let kept = types
            .iter()
            .find(|kind| kind.as_str() != Some("null"))
            .cloned()
            .unwrap_or(json!("string"));
        map.insert("type".to_owned(), kept);
    }
    if let Some(Value::Array(branches)) = map.remove("allOf") {
        let mut merged = Map::new();
        merged.insert("allOf".to_owned(), Value::Array(branches));
        merge_top_level_combinators(&mut merged);
        for (key, value) in merged {
            match (key.as_str(), map.get_mut(&key)) {
                ("properties", Some(Value::Object(existing))) => {
                    if let Value::Object(more) = value {
                        for (name, property) in more {
                            existing.entry(name).or_insert(property);
                        }
                    }
                }
                ("required", Some(Value::Array(existing))) => {
                    if let Value::Array(more) = value {
                        for name in more {
                            if !existing.contains(&name) {
                                existing.push(name);
                            }
                        }
                    }
                }
                _ => {
                    map.entry(key).or_insert(value);
                }
            }
        }
    }
    map.retain(|key, _| GOOGLE_KEYWORDS.contains(&key.as_str()));
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "$defs", Value::Object(children)) => {
                children.values_mut().for_each(google);
            }
            ("items" | "additionalProperties", child @ Value::Object(_)) => google(child),
            ("items" | "prefixItems" | "anyOf" | "oneOf", Value::Array(children)) => {
                children.iter_mut().for_each(google);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_moves_draft_07_definitions_to_defs_with_their_references() {
        let schema = json!({
            "type": "object",
            "properties": {"item": {"$ref": "#/definitions/Item"}},
            "definitions": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}},
        });
        assert_eq!(
            *adapt(&schema, Dialect::Google),
            json!({
                "type": "object",
                "properties": {"item": {"$ref": "#/$defs/Item"}},
                "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}},
            })
        );
    }

    #[test]
    fn fitting_schemas_pass_through_untouched() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Where"}},
            "required": ["path"],
        });
        for dialect in [Dialect::Anthropic, Dialect::OpenAi, Dialect::Google] {
            assert!(matches!(adapt(&schema, dialect), Cow::Borrowed(_)));
        }
    }

    #[test]
    fn top_level_alternatives_merge_for_anthropic_and_openai() {
        let schema = json!({
            "type": "object",
            "oneOf": [
                {"properties": {"id": {"type": "string"}, "q": {"type": "string"}}, "required": ["id", "q"]},
                {"properties": {"name": {"type": "string"}, "q": {"type": "string"}}, "required": ["name", "q"]},
            ],
        });
        let expected = json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "q": {"type": "string"}, "name": {"type": "string"}},
            "required": ["q"],
        });
        assert_eq!(*adapt(&schema, Dialect::Anthropic), expected);
        assert_eq!(*adapt(&schema, Dialect::OpenAi), expected);
        let all = json!({"allOf": [
            {"properties": {"a": {"type": "number"}}, "required": ["a"]},
            {"properties": {"b": {"type": "number"}}, "required": ["b"]},
        ]});
        assert_eq!(
            *adapt(&all, Dialect::Anthropic),
            json!({"properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                   "required": ["a", "b"], "type": "object"})
        );
    }

    #[test]
    fn openai_gets_an_object_with_properties() {
        assert_eq!(
            *adapt(&json!({"type": "object"}), Dialect::OpenAi),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            *adapt(&json!(true), Dialect::Anthropic),
            json!({"type": "object"})
        );
    }

    #[test]
    fn google_keeps_its_keywords_and_never_touches_property_names() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "default": {"type": "string", "default": "x", "minLength": 1},
                "mode": {"const": "fast"},
                "maybe": {"type": ["integer", "null"], "exclusiveMinimum": 0},
                "list": {"type": "array", "items": {"type": "string", "examples": ["a"]}},
            },
            "required": ["default"],
        });
        assert_eq!(
            *adapt(&schema, Dialect::Google),
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "default": {"type": "string"},
                    "mode": {"enum": ["fast"]},
                    "maybe": {"type": "integer"},
                    "list": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["default"],
            })
        );
    }
}

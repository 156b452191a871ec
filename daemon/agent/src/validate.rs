//! Validation of tool-call arguments against the tool's JSON Schema, with pi's (AJV's) scalar
//! coercion and pi's error text, which the model reads and corrects.

use serde_json::{Map, Value};

/// Checks `arguments` against `schema`. Returns the arguments with scalars coerced where the
/// schema asks for another scalar type (`"5"` → `5`), or the error text for the model:
/// `Validation failed for tool "<name>":\n  - <path>: <message>...\n\nReceived arguments:\n<json>`.
pub fn validate_arguments(
    tool_name: &str,
    schema: &Value,
    arguments: &Value,
) -> Result<Value, String> {
    let mut coerced = arguments.clone();
    coerce(schema, &mut coerced);
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        Err(error) => {
            return Err(format!(
                "Tool \"{tool_name}\" has an invalid parameter schema: {error}"
            ));
        }
    };
    let problems: Vec<String> = validator
        .iter_errors(&coerced)
        .map(|error| {
            let path = error.instance_path().to_string();
            let path = if path.is_empty() {
                "root".to_owned()
            } else {
                path
            };
            format!("  - {path}: {error}")
        })
        .collect();
    if problems.is_empty() {
        return Ok(coerced);
    }
    let received =
        serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{received}",
        problems.join("\n")
    ))
}

/// Coerces scalars in place where the schema's `type` asks for another scalar type.
fn coerce(schema: &Value, value: &mut Value) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Value::Object(object) = value {
        if let Some(Value::Object(properties)) = schema.get("properties") {
            coerce_properties(properties, object);
        }
        return;
    }
    if let Value::Array(items) = value {
        if let Some(item_schema) = schema.get("items") {
            for item in items {
                coerce(item_schema, item);
            }
        }
        return;
    }
    let wanted: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return,
    };
    if wanted.iter().any(|kind| type_matches(kind, value)) {
        return;
    }
    for kind in wanted {
        if let Some(converted) = convert(kind, value) {
            *value = converted;
            return;
        }
    }
}

fn coerce_properties(properties: &Map<String, Value>, object: &mut Map<String, Value>) {
    for (name, property_schema) in properties {
        if let Some(value) = object.get_mut(name) {
            coerce(property_schema, value);
        }
    }
}

fn type_matches(kind: &str, value: &Value) -> bool {
    match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        _ => false,
    }
}

fn convert(kind: &str, value: &Value) -> Option<Value> {
    match (kind, value) {
        ("number", Value::String(text)) => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number)),
        ("integer", Value::String(text)) => text.trim().parse::<i64>().ok().map(Value::from),
        ("integer", Value::Number(number)) => number
            .as_f64()
            .filter(|n| n.fract() == 0.0)
            .map(|n| Value::from(n as i64)),
        ("boolean", Value::String(text)) => match text.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(number)) => Some(Value::String(number.to_string())),
        ("string", Value::Bool(flag)) => Some(Value::String(flag.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}, "flag": {"type": "boolean"}},
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn scalars_are_coerced_like_ajv() {
        let coerced = validate_arguments(
            "read",
            &schema(),
            &json!({"path": "a", "limit": "10", "flag": "true"}),
        )
        .unwrap();
        assert_eq!(coerced, json!({"path": "a", "limit": 10, "flag": true}));
    }

    #[test]
    fn errors_list_every_problem_and_the_received_arguments() {
        let error = validate_arguments("read", &schema(), &json!({"limit": "ten"})).unwrap_err();
        assert!(
            error.starts_with("Validation failed for tool \"read\":\n  - "),
            "{error}"
        );
        assert!(error.contains("\"path\" is a required property"), "{error}");
        assert!(error.contains("/limit"), "{error}");
        assert!(
            error.ends_with("Received arguments:\n{\n  \"limit\": \"ten\"\n}"),
            "{error}"
        );
    }
}

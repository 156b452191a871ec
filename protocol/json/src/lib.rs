//! [`ToolArguments`]: a tool call's arguments as a parsed [`Value`] and, when known, the exact
//! JSON text the model wrote. [`ToolArguments::to_json_string`] gives that text byte for byte
//! (for the next request: a provider's prompt cache matches the request prefix byte for byte);
//! serializing writes it too (through `serde_json`, into the store, exports and events), on one
//! line: a line break between tokens is written as a space.
//!
//! Invariant: `raw`, when present, parses to `value`. Every way to change the value
//! ([`ToolArguments::from`] a `Value`, [`ToolArguments::set`]) drops the text; only
//! [`ToolArguments::from_raw`] and deserializing set it.
//!
//! Shared by `pi-llm` and `pi-protocol` (decision 0009); depends on nothing of ours.

use std::borrow::Cow;
use std::ops::Deref;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A tool call's arguments, keeping the text they were read from. Reads through to the
/// [`Value`] (`Deref`); equality compares values, not text.
#[derive(Clone, Debug, Default)]
pub struct ToolArguments {
    value: Value,
    raw: Option<Box<RawValue>>,
}

impl ToolArguments {
    /// Arguments read from `text`, kept verbatim. `Err` when `text` is not JSON.
    pub fn from_raw(text: String) -> Result<ToolArguments, serde_json::Error> {
        let raw = RawValue::from_string(text)?;
        let value = serde_json::from_str(raw.get())?;
        Ok(ToolArguments {
            value,
            raw: Some(raw),
        })
    }

    /// The parsed value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The parsed value, owned.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The exact text, when the arguments were read from one.
    pub fn raw(&self) -> Option<&str> {
        self.raw.as_deref().map(RawValue::get)
    }

    /// The JSON text to send on: the exact text when known, else the value compactly.
    pub fn to_json_string(&self) -> String {
        self.to_string()
    }

    /// Replaces the value (and forgets the text).
    pub fn set(&mut self, value: Value) {
        self.value = value;
        self.raw = None;
    }
}

impl From<Value> for ToolArguments {
    fn from(value: Value) -> ToolArguments {
        ToolArguments { value, raw: None }
    }
}

/// The JSON text: exact when known, else compact.
impl std::fmt::Display for ToolArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.raw() {
            Some(text) => f.write_str(text),
            None => std::fmt::Display::fmt(&self.value, f),
        }
    }
}

impl Deref for ToolArguments {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl PartialEq for ToolArguments {
    fn eq(&self, other: &ToolArguments) -> bool {
        self.value == other.value
    }
}

impl PartialEq<Value> for ToolArguments {
    fn eq(&self, other: &Value) -> bool {
        &self.value == other
    }
}

/// Writes the exact text to serde_json's writer, except that line breaks (which JSON allows
/// only between tokens) become spaces: what is written goes into line-delimited JSON
/// (JSON-RPC frames, JSONL session files), where a value must stay on one line
/// ([`ToolArguments::to_json_string`] keeps them, for request bodies). Every other serializer
/// (a `Value`, snapshot tools) gets the value: a raw value means something only to
/// serde_json's writer, recognized by its type name (there is no other way to ask).
impl Serialize for ToolArguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let to_json_text = std::any::type_name::<S>().starts_with("&mut serde_json::ser::");
        if !to_json_text {
            return self.value.serialize(serializer);
        }
        match &self.raw {
            Some(raw) if raw.get().contains(['\n', '\r']) => {
                let one_line = raw.get().replace(['\n', '\r'], " ");
                RawValue::from_string(one_line)
                    .map_err(serde::ser::Error::custom)?
                    .serialize(serializer)
            }
            Some(raw) => raw.serialize(serializer),
            None => self.value.serialize(serializer),
        }
    }
}

/// serde_json's name for the raw text of a value (`serde_json::value::RawValue`'s private
/// token, stable since raw values exist): asked for a newtype struct of this name, its
/// deserializers hand over the value's exact text as a one-entry map `{TOKEN: text}`.
/// Other deserializers (serde's buffer for internally tagged enums) hand over the value
/// itself, parsed: the text is then not known, only the value.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> Deserialize<'de> for ToolArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ToolArguments, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_TOKEN, ArgumentsVisitor)
    }
}

struct ArgumentsVisitor;

impl<'de> serde::de::Visitor<'de> for ArgumentsVisitor {
    type Value = ToolArguments;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("tool-call arguments (JSON)")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<ToolArguments, D::Error> {
        Value::deserialize(deserializer).map(ToolArguments::from)
    }

    fn visit_map<M: serde::de::MapAccess<'de>>(
        self,
        mut map: M,
    ) -> Result<ToolArguments, M::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(Value::Object(serde_json::Map::new()).into());
        };
        if first == RAW_TOKEN {
            let text: String = map.next_value()?;
            return ToolArguments::from_raw(text).map_err(M::Error::custom);
        }
        // A plain object (a deserializer without raw text).
        let mut object = serde_json::Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        Ok(Value::Object(object).into())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<ToolArguments, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::Array(items).into())
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<ToolArguments, E> {
        Ok(Value::Bool(value).into())
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<ToolArguments, E> {
        Ok(Value::from(value).into())
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<ToolArguments, E> {
        Ok(Value::from(value).into())
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<ToolArguments, E> {
        Ok(Value::from(value).into())
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<ToolArguments, E> {
        Ok(Value::String(value.to_owned()).into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<ToolArguments, E> {
        Ok(Value::Null.into())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<ToolArguments, E> {
        Ok(Value::Null.into())
    }
}

impl JsonSchema for ToolArguments {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        Value::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Value::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_survives_a_round_trip_and_a_changed_value_drops_it() {
        let text = "{\"path\": \"a.txt\",   \"content\": \"x\" }";
        let arguments = ToolArguments::from_raw(text.to_owned()).unwrap();
        assert_eq!(arguments["path"], "a.txt");
        let written = serde_json::to_string(&arguments).unwrap();
        assert_eq!(written, text);
        let read: ToolArguments = serde_json::from_str(&written).unwrap();
        assert_eq!(read.raw(), Some(text));
        assert_eq!(read, arguments);

        let mut changed = read.clone();
        changed.set(serde_json::json!({"path": "b.txt"}));
        assert_eq!(changed.raw(), None);
        assert_eq!(
            serde_json::to_string(&changed).unwrap(),
            r#"{"path":"b.txt"}"#
        );
        assert!(ToolArguments::from_raw("{\"path\": ".to_owned()).is_err());
    }

    #[test]
    fn inside_a_struct_the_text_is_written_in_place() {
        #[derive(Serialize, Deserialize)]
        struct Call {
            name: String,
            arguments: ToolArguments,
        }
        let line = "{\"name\":\"read\",\"arguments\":{ \"path\" : \"a\" }}";
        let call: Call = serde_json::from_str(line).unwrap();
        assert_eq!(call.name, "read");
        assert_eq!(serde_json::to_string(&call).unwrap(), line);
        // Through a `Value` the text cannot survive; the value does.
        let through_value: Call =
            serde_json::from_value(serde_json::to_value(&call).unwrap()).unwrap();
        assert_eq!(through_value.arguments, call.arguments);
        assert_eq!(through_value.arguments.raw(), Some(r#"{"path":"a"}"#));
    }

    #[test]
    fn inside_an_internally_tagged_enum_the_value_survives_without_its_text() {
        #[derive(Serialize, Deserialize)]
        #[serde(tag = "type")]
        enum Block {
            #[serde(rename = "toolCall")]
            ToolCall { arguments: ToolArguments },
        }
        let line = r#"{"type":"toolCall","arguments":{ "path" : "a", "n": [1, 2.5, null, true] }}"#;
        let Block::ToolCall { arguments } = serde_json::from_str(line).unwrap();
        assert_eq!(
            arguments,
            serde_json::json!({"path": "a", "n": [1, 2.5, null, true]})
        );
        assert_eq!(arguments.raw(), None);
        let from_value: ToolArguments =
            serde_json::from_value(serde_json::json!([1, "x"])).unwrap();
        assert_eq!(from_value, serde_json::json!([1, "x"]));
    }

    #[test]
    fn serialized_text_stays_on_one_line() {
        let text = "{\"a\": 1,\r\n \"b\": \"x\\ny\"}";
        let arguments = ToolArguments::from_raw(text.to_owned()).unwrap();
        assert_eq!(arguments.to_json_string(), text);
        let line = serde_json::to_string(&arguments).unwrap();
        assert_eq!(line, "{\"a\": 1,   \"b\": \"x\\ny\"}");
        assert_eq!(
            serde_json::from_str::<Value>(&line).unwrap(),
            *arguments.value()
        );
    }

    #[test]
    fn other_serializers_get_the_value() {
        let arguments = ToolArguments::from_raw("{ \"a\" : 1 }".to_owned()).unwrap();
        assert_eq!(serde_json::to_string(&arguments).unwrap(), "{ \"a\" : 1 }");
        assert_eq!(
            serde_json::to_string_pretty(&arguments).unwrap(),
            "{ \"a\" : 1 }"
        );
        assert_eq!(
            serde_json::to_value(&arguments).unwrap(),
            serde_json::json!({"a": 1})
        );
    }
}

/// Serializes an `f64` as JavaScript writes a number: a whole number without a fraction
/// (`0`, `3`, not `0.0`), as pi's JSON has it; others as `serde_json` writes them.
pub fn js_number<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() < EXACT {
        #[allow(clippy::cast_possible_truncation, reason = "whole and below 2^53")]
        let whole = *value as i64;
        serializer.serialize_i64(whole)
    } else {
        serializer.serialize_f64(*value)
    }
}

#[cfg(test)]
mod js_number_tests {
    #[derive(serde::Serialize)]
    struct Cost {
        #[serde(serialize_with = "super::js_number")]
        zero: f64,
        #[serde(serialize_with = "super::js_number")]
        whole: f64,
        #[serde(serialize_with = "super::js_number")]
        part: f64,
    }

    #[test]
    fn whole_numbers_are_written_as_javascript_writes_them() {
        let text = serde_json::to_string(&Cost {
            zero: 0.0,
            whole: 3.0,
            part: 0.0123,
        })
        .unwrap();
        assert_eq!(text, r#"{"zero":0,"whole":3,"part":0.0123}"#);
    }
}

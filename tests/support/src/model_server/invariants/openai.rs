//! OpenAI conversations: chat completions `tool` messages and Responses function-call items.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

/// Chat completions: `tool` messages follow the assistant message with `tool_calls`
/// directly, and answer each of its calls once.
pub(super) fn check_chat_messages(messages: &[Value], problems: &mut Vec<String>) {
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut answered: HashSet<String> = HashSet::new();
    // The assistant message whose calls the following tool messages answer, and its call ids.
    let mut open: Option<(usize, Vec<String>)> = None;
    let unanswered =
        |open: &Option<(usize, Vec<String>)>, answered: &HashSet<String>, before: &str| {
            let Some((a, ids)) = open else {
                return Vec::new();
            };
            ids.iter()
                .filter(|id| !answered.contains(*id))
                .map(|id| format!("messages[{a}]: tool call {id:?} has no tool message {before}"))
                .collect::<Vec<_>>()
        };
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            if id.is_empty() {
                problems.push(format!("messages[{i}]: tool message without tool_call_id"));
            } else if answered.contains(id) {
                problems.push(format!(
                    "messages[{i}]: second tool message for tool call {id:?}"
                ));
            } else if open
                .as_ref()
                .is_some_and(|(_, ids)| ids.iter().any(|open_id| open_id == id))
            {
                answered.insert(id.to_owned());
            } else if let Some(a) = calls.get(id) {
                problems.push(format!(
                    "messages[{i}]: tool message for {id:?} does not directly follow messages[{a}]"
                ));
            } else {
                problems.push(format!(
                    "messages[{i}]: orphan tool message: no earlier tool call has id {id:?}"
                ));
            }
            if message["content"].is_null() {
                problems.push(format!("messages[{i}]: tool message without content"));
            }
            continue;
        }
        problems.extend(unanswered(
            &open,
            &answered,
            &format!("before messages[{i}]"),
        ));
        open = None;
        match role {
            "system" | "developer" | "user" => {}
            "assistant" => {
                let tool_calls = message["tool_calls"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                if tool_calls.is_empty() && message["content"].is_null() {
                    problems.push(format!(
                        "messages[{i}]: assistant message with neither content nor tool_calls"
                    ));
                }
                let mut ids = Vec::new();
                for (c, call) in tool_calls.iter().enumerate() {
                    let at = format!("messages[{i}].tool_calls[{c}]");
                    let id = call["id"].as_str().unwrap_or_default();
                    if id.is_empty() {
                        problems.push(format!("{at}: tool call without an id"));
                    } else if calls.insert(id.to_owned(), i).is_some() {
                        problems.push(format!("{at}: tool call id {id:?} is used twice"));
                    }
                    if call["type"] != json!("function") {
                        problems.push(format!("{at}: type must be \"function\""));
                    }
                    if call["function"]["name"].as_str().is_none_or(str::is_empty) {
                        problems.push(format!("{at}: function.name is empty"));
                    }
                    if !call["function"]["arguments"].is_string() {
                        problems.push(format!("{at}: function.arguments must be a JSON string"));
                    }
                    ids.push(id.to_owned());
                }
                if !ids.is_empty() {
                    open = Some((i, ids));
                }
            }
            _ => problems.push(format!(
                "messages[{i}].role {role:?} is not a chat completions role"
            )),
        }
    }
    problems.extend(unanswered(&open, &answered, "(the conversation ends)"));
}

/// Responses: every `function_call_output` answers an earlier `function_call` once and every
/// `function_call` has an output; function-call item ids begin with `fc`.
pub(super) fn check_responses_input(items: &[Value], chained: bool, problems: &mut Vec<String>) {
    let mut calls: Vec<(usize, String)> = Vec::new();
    let mut outputs: HashSet<String> = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let item_type = match item["type"].as_str() {
            Some(item_type) => item_type,
            None if item.get("role").is_some() => "message",
            None => "",
        };
        match item_type {
            "message" => {
                let role = item["role"].as_str().unwrap_or_default();
                if !["user", "assistant", "system", "developer"].contains(&role) {
                    problems.push(format!("input[{i}].role {role:?} is not a Responses role"));
                }
            }
            "function_call" => {
                let call_id = item["call_id"].as_str().unwrap_or_default();
                if call_id.is_empty() {
                    problems.push(format!("input[{i}]: function_call without a call_id"));
                } else if calls.iter().any(|(_, id)| id == call_id) {
                    problems.push(format!("input[{i}]: call_id {call_id:?} is used twice"));
                }
                if item["name"].as_str().is_none_or(str::is_empty) {
                    problems.push(format!("input[{i}]: function_call without a name"));
                }
                if !item["arguments"].is_string() {
                    problems.push(format!(
                        "input[{i}]: function_call arguments must be a JSON string"
                    ));
                }
                if let Some(id) = item.get("id").and_then(Value::as_str)
                    && !id.starts_with("fc")
                {
                    problems.push(format!("input[{i}].id {id:?} must begin with 'fc'"));
                }
                calls.push((i, call_id.to_owned()));
            }
            "function_call_output" => {
                let call_id = item["call_id"].as_str().unwrap_or_default();
                if !calls.iter().any(|(_, id)| id == call_id) && !chained {
                    problems.push(format!(
                        "input[{i}]: orphan function_call_output: no earlier function_call has call_id {call_id:?}"
                    ));
                }
                if !outputs.insert(call_id.to_owned()) {
                    problems.push(format!(
                        "input[{i}]: second function_call_output for {call_id:?}"
                    ));
                }
                if item["output"].is_null() {
                    problems.push(format!("input[{i}]: function_call_output without output"));
                }
            }
            "" => problems.push(format!("input[{i}] has neither type nor role")),
            _ => {}
        }
    }
    for (i, call_id) in calls.iter().filter(|(_, id)| !outputs.contains(id)) {
        problems.push(format!(
            "input[{i}]: No tool output found for function call {call_id}."
        ));
    }
}

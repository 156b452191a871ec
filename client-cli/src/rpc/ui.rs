//! pi's extension UI sub-protocol over the daemon's `ui/*`: a `ui/request` for the bridged
//! session becomes an `extension_ui_request` line (its `id` is the daemon's request id), and
//! an `extension_ui_response` line becomes a `ui/respond` call. Unknown ids are ignored, as in
//! pi; a request the daemon re-sends (around an attach) is written once.

use pi_protocol::v1::{ExtensionUi, UiAnswer, UiRequestParams};
use serde_json::{Value, json};

/// The `extension_ui_request` line for a daemon request (pi's shape: `type`, `id`, `method`
/// and the method's fields).
pub fn request_line(params: &UiRequestParams) -> Value {
    let mut line = json!({"type": "extension_ui_request", "id": params.request_id});
    if let (Value::Object(line), Ok(Value::Object(fields))) =
        (&mut line, serde_json::to_value(&params.request))
    {
        line.extend(fields);
    }
    line
}

/// The fire-and-forget `extension_ui_request` line pi writes for what an extension shows
/// outside dialogs (`notify`, `setStatus`, `setWidget`, `setTitle`, `set_editor_text`),
/// with a fresh id nobody answers.
pub fn notice_line(ui: &ExtensionUi) -> Value {
    let id = pi_util::ids::new_uuid();
    match ui {
        ExtensionUi::Notify { message, level } => json!({"type": "extension_ui_request",
            "id": id, "method": "notify", "message": message, "notifyType": level}),
        ExtensionUi::Status { key, text } => json!({"type": "extension_ui_request", "id": id,
            "method": "setStatus", "statusKey": key, "statusText": text}),
        ExtensionUi::Widget {
            key,
            lines,
            placement,
        } => json!({"type": "extension_ui_request", "id": id, "method": "setWidget",
            "widgetKey": key, "widgetLines": lines, "widgetPlacement": placement}),
        ExtensionUi::Title { title } => {
            json!({"type": "extension_ui_request", "id": id, "method": "setTitle", "title": title})
        }
        ExtensionUi::EditorText { text, .. } => json!({"type": "extension_ui_request",
            "id": id, "method": "set_editor_text", "text": text}),
    }
}

/// The answer carried by an `extension_ui_response` line: `value`, `confirmed` or
/// `cancelled` (pi's fields).
pub fn answer_of(line: &Value) -> UiAnswer {
    UiAnswer {
        value: line["value"].as_str().map(str::to_owned),
        values: line["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        confirmed: line["confirmed"].as_bool(),
        cancelled: line["cancelled"].as_bool().unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_protocol::v1::UiRequest;

    #[test]
    fn notices_take_pis_shapes() {
        let line = notice_line(&ExtensionUi::Status {
            key: "k".into(),
            text: None,
        });
        assert_eq!(line["method"], "setStatus");
        assert_eq!(line["statusKey"], "k");
        assert!(line["statusText"].is_null());
        assert!(line["id"].as_str().is_some_and(|id| !id.is_empty()));
        let line = notice_line(&ExtensionUi::Notify {
            message: "pong".into(),
            level: pi_protocol::v1::NotifyLevel::Warning,
        });
        assert_eq!(
            (&line["method"], &line["message"], &line["notifyType"]),
            (&json!("notify"), &json!("pong"), &json!("warning"))
        );
        let line = notice_line(&ExtensionUi::Widget {
            key: "w".into(),
            lines: Some(vec!["a".into()]),
            placement: pi_protocol::v1::WidgetPlacement::BelowEditor,
        });
        assert_eq!(line["widgetPlacement"], "belowEditor");
        assert_eq!(line["widgetLines"], json!(["a"]));
    }

    #[test]
    fn requests_and_answers_take_pis_shapes() {
        let params = UiRequestParams {
            session_id: "s".into(),
            request_id: "ui-7".into(),
            request: UiRequest::Select {
                title: "Pick".into(),
                options: vec!["a".into(), "b".into()],
                multiple: false,
            },
        };
        assert_eq!(
            request_line(&params),
            json!({"type": "extension_ui_request", "id": "ui-7", "method": "select",
                   "title": "Pick", "options": ["a", "b"]})
        );
        assert_eq!(
            answer_of(&json!({"type": "extension_ui_response", "id": "ui-7", "confirmed": true})),
            UiAnswer {
                confirmed: Some(true),
                ..UiAnswer::default()
            }
        );
        assert!(answer_of(&json!({"id": "x", "cancelled": true})).cancelled);
    }
}

//! pi's extension UI sub-protocol over the daemon's `ui/*`: a `ui/request` for the bridged
//! session becomes an `extension_ui_request` line (its `id` is the daemon's request id), and
//! an `extension_ui_response` line becomes a `ui/respond` call. Unknown ids are ignored, as in
//! pi; a request the daemon re-sends (around an attach) is written once.

use pi_protocol::v1::{UiAnswer, UiRequestParams};
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

/// The answer carried by an `extension_ui_response` line: `value`, `confirmed` or
/// `cancelled` (pi's fields).
pub fn answer_of(line: &Value) -> UiAnswer {
    UiAnswer {
        value: line["value"].as_str().map(str::to_owned),
        confirmed: line["confirmed"].as_bool(),
        cancelled: line["cancelled"].as_bool().unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_protocol::v1::UiRequest;

    #[test]
    fn requests_and_answers_take_pis_shapes() {
        let params = UiRequestParams {
            session_id: "s".into(),
            request_id: "ui-7".into(),
            request: UiRequest::Select {
                title: "Pick".into(),
                options: vec!["a".into(), "b".into()],
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

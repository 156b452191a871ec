//! `azure-openai-responses`: the Responses API of an Azure OpenAI resource
//! (`POST {base}/responses?api-version=…`, SSE, the key in `api-key`), as pi 0.73.1 calls it.
//!
//! Where it goes (pi's order): `AZURE_OPENAI_BASE_URL`, else
//! `https://$AZURE_OPENAI_RESOURCE_NAME.openai.azure.com/openai/v1`, else the model's base URL
//! (an Azure host's bare or `/openai` path becomes `/openai/v1`); `AZURE_OPENAI_API_VERSION`
//! (default `v1`). The body names the deployment: `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`
//! (`model=deployment,…`) or the model id. Otherwise the body and the stream are OpenAI's
//! Responses, without `store`.

use serde_json::{Value, json};

use super::openai_responses::{self, ResponsesDecoder};
use crate::event::AssistantStream;
use crate::http::HttpRequest;
use crate::model::Model;
use crate::provider::{Context, Provider, StreamOptions};

/// The Azure OpenAI wire format.
#[derive(Debug, Default)]
pub struct AzureOpenAiProvider;

impl Provider for AzureOpenAiProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let request = build_request(model, context, &options);
        super::send(model, request, &options, ResponsesDecoder::default())
    }
}

/// The deployment serving `model`: from `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, else its id.
fn deployment(model: &Model, options: &StreamOptions) -> String {
    options
        .env_var("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")
        .and_then(|map| {
            map.split(',').find_map(|entry| {
                let (id, name) = entry.trim().split_once('=')?;
                (id.trim() == model.id && !name.trim().is_empty()).then(|| name.trim().to_owned())
            })
        })
        .unwrap_or_else(|| model.id.clone())
}

/// The resource's base URL, normalized as pi does.
fn base_url(model: &Model, options: &StreamOptions) -> Result<String, String> {
    let configured = options
        .env_var("AZURE_OPENAI_BASE_URL")
        .or_else(|| {
            options
                .env_var("AZURE_OPENAI_RESOURCE_NAME")
                .map(|name| format!("https://{}.openai.azure.com/openai/v1", name.trim()))
        })
        .or_else(|| (!model.base_url.trim().is_empty()).then(|| model.base_url.clone()))
        .ok_or_else(|| {
            "Azure OpenAI needs its resource: set AZURE_OPENAI_BASE_URL or \
             AZURE_OPENAI_RESOURCE_NAME, or give the provider a baseUrl in models.json"
                .to_owned()
        })?;
    let trimmed = configured.trim().trim_end_matches('/');
    let mut url = url::Url::parse(trimmed)
        .map_err(|error| format!("the Azure OpenAI base URL {trimmed:?} is not a URL ({error})"))?;
    let azure_host = url.host_str().is_some_and(|host| {
        host.ends_with(".openai.azure.com") || host.ends_with(".cognitiveservices.azure.com")
    });
    let path = url.path().trim_end_matches('/').to_owned();
    if azure_host && (path.is_empty() || path == "/openai") {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.to_string().trim_end_matches('/').to_owned())
}

/// The request for `model`.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let base = base_url(model, options)?;
    let version = options
        .env_var("AZURE_OPENAI_API_VERSION")
        .unwrap_or_else(|| "v1".to_owned());
    // OpenAI's Responses body, then Azure's differences.
    let mut request = openai_responses::build_request(model, context, options)?;
    if let Value::Object(body) = &mut request.body {
        body.insert("model".into(), json!(deployment(model, options)));
        body.shift_remove("store");
        body.shift_remove("prompt_cache_retention");
        if let Some(session_id) = &options.session_id {
            body.insert("prompt_cache_key".into(), json!(session_id));
        }
    }
    request.headers.retain(|(name, _)| name != "authorization");
    if let Some(key) = &options.api_key {
        request
            .headers
            .push(("api-key".into(), key.expose().to_owned()));
    }
    let mut url = url::Url::parse(&format!("{base}/responses"))
        .map_err(|error| format!("the Azure OpenAI URL is not valid ({error})"))?;
    url.query_pairs_mut().append_pair("api-version", &version);
    request.url = url.to_string();
    Ok(request)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;

    fn model(base_url: &str) -> Model {
        Model {
            id: "gpt-5.4".into(),
            name: "GPT-5.4".into(),
            api: "azure-openai-responses".into(),
            provider: "azure-openai-responses".into(),
            base_url: base_url.into(),
            reasoning: true,
            input: vec![crate::model::InputKind::Text],
            cost: Default::default(),
            context_window: 400_000,
            max_tokens: 128_000,
            headers: Default::default(),
            compat: None,
        }
    }

    fn options(vars: &[(&str, &str)]) -> StreamOptions {
        StreamOptions {
            api_key: Some(crate::provider::ApiKey::new("azure-key")),
            env: Some(Arc::new(
                vars.iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            )),
            ..StreamOptions::default()
        }
    }

    #[test]
    fn the_resource_and_deployment_come_from_pis_variables() {
        let context = Context::default();
        let request = build_request(
            &model(""),
            &context,
            &options(&[
                ("AZURE_OPENAI_RESOURCE_NAME", "acme"),
                (
                    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
                    "gpt-4=old, gpt-5.4 = prod-54",
                ),
            ]),
        )
        .unwrap();
        assert_eq!(
            request.url,
            "https://acme.openai.azure.com/openai/v1/responses?api-version=v1"
        );
        assert_eq!(request.body["model"], json!("prod-54"));
        assert!(request.body.get("store").is_none());
        assert!(
            request
                .headers
                .iter()
                .any(|(name, value)| name == "api-key" && value == "azure-key")
        );
        assert!(
            !request
                .headers
                .iter()
                .any(|(name, _)| name == "authorization")
        );

        let request = build_request(
            &model("https://acme.cognitiveservices.azure.com/openai/"),
            &context,
            &options(&[("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")]),
        )
        .unwrap();
        assert_eq!(
            request.url,
            "https://acme.cognitiveservices.azure.com/openai/v1/responses?api-version=2025-04-01-preview"
        );
        assert_eq!(request.body["model"], json!("gpt-5.4"));

        let error = build_request(&model(""), &context, &options(&[])).unwrap_err();
        assert_eq!(
            error,
            "Azure OpenAI needs its resource: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or give the provider a baseUrl in models.json"
        );
    }
}

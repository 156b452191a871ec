//! `google-vertex`: Gemini on Vertex AI (`…:streamGenerateContent?alt=sse`, the Gemini body and
//! stream), as pi 0.73.1 reaches it through Google's SDK.
//!
//! With a key (`GOOGLE_CLOUD_API_KEY`): Vertex's express mode,
//! `https://aiplatform.googleapis.com/v1beta1/publishers/google/models/{id}`, the key in
//! `x-goog-api-key`. Without one: Application Default Credentials (`oauth::adc`) as a Bearer
//! token, at `projects/$GOOGLE_CLOUD_PROJECT/locations/$GOOGLE_CLOUD_LOCATION/…` on the
//! location's host (`global`: `aiplatform.googleapis.com`; `us`, `eu`:
//! `aiplatform.{loc}.rep.googleapis.com`; else `{loc}-aiplatform.googleapis.com`). A base URL
//! set in `models.json` (without pi's `{location}` placeholder) replaces the host.

use super::deferred::deferred;
use super::google::{GoogleDecoder, build_request as gemini_request};
use crate::event::AssistantStream;
use crate::failure::FailureKind;
use crate::http::HttpRequest;
use crate::model::Model;
use crate::provider::{Context, Provider, StreamOptions};

/// The Vertex AI wire format.
#[derive(Debug, Default)]
pub struct GoogleVertexProvider;

impl Provider for GoogleVertexProvider {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        if options.api_key.is_some() {
            let request = build_request(model, context, &options, None);
            return super::send(model, request, &options, GoogleDecoder::default());
        }
        // Application Default Credentials: a token first.
        let request = build_request(model, context, &options, Some(String::new()));
        let file = crate::oauth::adc::credentials_file(|name| options.env_var(name));
        // Where token requests go (`PI_OAUTH_ORIGIN`): the session's environment over the
        // daemon's.
        let endpoints = crate::oauth::Endpoints::from_lookup(|name| {
            options
                .env_var(name)
                .or_else(|| std::env::var(name).ok().filter(|value| !value.is_empty()))
        });
        let owned_model = model.clone();
        deferred(
            model,
            options.cancel.clone(),
            FailureKind::Auth,
            async move {
                let mut request = request?;
                let file = file.ok_or_else(|| {
                    "Vertex AI needs credentials: set GOOGLE_CLOUD_API_KEY, or run `gcloud auth \
                     application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS to a \
                     service account key), with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION"
                        .to_owned()
                })?;
                let token = crate::oauth::adc::token(&file, &endpoints)
                    .await
                    .map_err(|error| format!("Google credentials {}: {error}", file.display()))?;
                request.headers.retain(|(name, _)| name != "authorization");
                request
                    .headers
                    .push(("authorization".into(), format!("Bearer {token}")));
                Ok(super::send(
                    &owned_model,
                    Ok(request),
                    &options,
                    GoogleDecoder::default(),
                ))
            },
        )
    }
}

/// Whether `base` names an API version in its path (`/v1`, `/v1beta1`).
fn has_version(base: &str) -> bool {
    url::Url::parse(base).is_ok_and(|url| {
        url.path_segments().is_some_and(|mut segments| {
            segments.any(|segment| {
                segment
                    .strip_prefix('v')
                    .and_then(|rest| rest.split("beta").next())
                    .is_some_and(|digits| {
                        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
                    })
            })
        })
    })
}

/// The request for `model`: with the options' key (express mode), or (`bearer: Some`) for a
/// token added later.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    bearer: Option<String>,
) -> Result<HttpRequest, String> {
    let mut request = gemini_request(model, context, options)?;
    let custom = Some(model.base_url.trim().trim_end_matches('/'))
        .filter(|base| !base.is_empty() && !base.contains("{location}"))
        .map(str::to_owned);
    let id = model.id.strip_prefix("models/").unwrap_or(&model.id);
    let resource = if bearer.is_some() {
        let project = options
            .env_var("GOOGLE_CLOUD_PROJECT")
            .or_else(|| options.env_var("GCLOUD_PROJECT"))
            .ok_or_else(|| {
                "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT"
                    .to_owned()
            })?;
        let location = options
            .env_var("GOOGLE_CLOUD_LOCATION")
            .ok_or_else(|| "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION".to_owned())?;
        let host = match location.as_str() {
            "global" => "https://aiplatform.googleapis.com".to_owned(),
            "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com"),
            other => format!("https://{other}-aiplatform.googleapis.com"),
        };
        (
            custom.clone().unwrap_or(host),
            format!("projects/{project}/locations/{location}/publishers/google/models/{id}"),
        )
    } else {
        (
            custom
                .clone()
                .unwrap_or_else(|| "https://aiplatform.googleapis.com".to_owned()),
            format!("publishers/google/models/{id}"),
        )
    };
    let (base, path) = resource;
    let version = if has_version(&base) { "" } else { "/v1beta1" };
    request.url = format!("{base}{version}/{path}:streamGenerateContent?alt=sse");
    Ok(request)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;

    fn model(base_url: &str) -> Model {
        Model {
            id: "gemini-2.5-pro".into(),
            name: "Gemini 2.5 Pro".into(),
            api: "google-vertex".into(),
            provider: "google-vertex".into(),
            base_url: base_url.into(),
            reasoning: true,
            input: vec![crate::model::InputKind::Text],
            cost: Default::default(),
            context_window: 1_000_000,
            max_tokens: 65_536,
            headers: Default::default(),
            compat: None,
        }
    }

    fn options(key: Option<&str>, vars: &[(&str, &str)]) -> StreamOptions {
        StreamOptions {
            api_key: key.map(crate::provider::ApiKey::new),
            env: Some(Arc::new(
                vars.iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            )),
            ..StreamOptions::default()
        }
    }

    #[test]
    fn urls_follow_googles_sdk() {
        let context = Context::default();
        let url = |base: &str, key: Option<&str>, vars: &[(&str, &str)]| {
            build_request(
                &model(base),
                &context,
                &options(key, vars),
                key.is_none().then(String::new),
            )
            .map(|request| request.url)
        };
        let placeholder = "https://{location}-aiplatform.googleapis.com";
        assert_eq!(
            url(placeholder, Some("k"), &[]).unwrap(),
            "https://aiplatform.googleapis.com/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        let adc = [
            ("GOOGLE_CLOUD_PROJECT", "proj"),
            ("GOOGLE_CLOUD_LOCATION", "europe-west4"),
        ];
        assert_eq!(
            url(placeholder, None, &adc).unwrap(),
            "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(
                placeholder,
                None,
                &[("GCLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "global")]
            )
            .unwrap(),
            "https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(
                placeholder,
                None,
                &[("GCLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "eu")]
            )
            .unwrap(),
            "https://aiplatform.eu.rep.googleapis.com/v1beta1/projects/p/locations/eu/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url("http://proxy/v1", None, &adc).unwrap(),
            "http://proxy/v1/projects/proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(placeholder, None, &[("GOOGLE_CLOUD_LOCATION", "x")]).unwrap_err(),
            "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT"
        );
        assert_eq!(
            url(placeholder, None, &[("GOOGLE_CLOUD_PROJECT", "p")]).unwrap_err(),
            "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION"
        );
    }
}

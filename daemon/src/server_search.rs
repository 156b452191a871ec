//! `web_search` through the search its model's provider runs itself: Anthropic's
//! `web_search_20250305` server tool (models on the Messages API) and OpenAI's `web_search`
//! tool (models on the Responses API). One request with the session's own model, key and
//! provider machinery (subscription logins included): the search tool added to the body, the
//! model asked to answer with the results only.

use std::collections::BTreeMap;
use std::sync::Arc;

use pi_llm::{
    Context, Message, PayloadHook, StopReason, StreamOptions, ThinkingLevel, UserContent,
    UserMessage,
};
use pi_web::{Recency, SearchQuery};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::session::SessionsWeak;

/// A provider's own search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerSearch {
    /// Anthropic's `web_search_20250305`.
    Anthropic,
    /// OpenAI's `web_search` (Responses API).
    OpenAi,
}

impl ServerSearch {
    /// The search a model on wire format `api` can run itself.
    pub fn of(api: &str) -> Option<ServerSearch> {
        match api {
            "anthropic-messages" => Some(ServerSearch::Anthropic),
            "openai-responses" | "openai-codex-responses" => Some(ServerSearch::OpenAi),
            _ => None,
        }
    }

    /// Its name as `web_search {provider}` takes it.
    pub fn name(self) -> &'static str {
        match self {
            ServerSearch::Anthropic => "anthropic",
            ServerSearch::OpenAi => "openai",
        }
    }

    /// The search of that name.
    pub fn named(name: &str) -> Option<ServerSearch> {
        match name.trim().to_ascii_lowercase().as_str() {
            "anthropic" => Some(ServerSearch::Anthropic),
            "openai" => Some(ServerSearch::OpenAi),
            _ => None,
        }
    }

    /// The tool entry the request body gets.
    fn tool(self) -> Value {
        match self {
            ServerSearch::Anthropic => {
                json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 3})
            }
            ServerSearch::OpenAi => json!({"type": "web_search"}),
        }
    }
}

/// A session's model, for its provider's search.
pub struct SessionModel {
    /// The daemon's sessions.
    pub sessions: SessionsWeak,
    /// The session.
    pub session_id: String,
    /// Its environment (keys).
    pub env: Arc<BTreeMap<String, String>>,
}

/// What a search found: the search used and the model's list of results.
pub struct Found {
    /// The search.
    pub search: ServerSearch,
    /// The results as the model wrote them.
    pub text: String,
    /// The model that searched (`provider/id`).
    pub model: String,
}

const SYSTEM: &str = "You are a web search engine. Search the web for the query and answer \
only with the results, best first, as a numbered list: each result's title and URL on one line \
(`1. Title — https://…`) and one sentence of what the page says on the next. Only pages the \
search returned; no other text.";

impl SessionModel {
    /// The search the session's model can run, if any (`wanted`: only that one); the error
    /// says why not.
    pub async fn search(
        &self,
        wanted: Option<ServerSearch>,
        query: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<Found, String> {
        let registry = self.sessions.upgrade().ok_or("the daemon is stopping")?;
        let info = registry
            .stored_info(&self.session_id)
            .await
            .map_err(|error| error.to_string())?;
        let models = &registry.services().models;
        let model = info
            .model
            .as_ref()
            .and_then(|model| models.find_or_custom(&model.provider, &model.id))
            .ok_or("the session has no model to search with")?;
        let label = format!("{}/{}", model.provider, model.id);
        let search = match (ServerSearch::of(&model.api), wanted) {
            (Some(search), None) => search,
            (Some(search), Some(wanted)) if search == wanted => search,
            (_, Some(wanted)) => {
                return Err(format!(
                    "the session's model {label} cannot run {}'s search (its API is {}); \
                     choose a model on {} or another provider",
                    wanted.name(),
                    model.api,
                    match wanted {
                        ServerSearch::Anthropic => "Anthropic's Messages API",
                        ServerSearch::OpenAi => "OpenAI's Responses API",
                    }
                ));
            }
            (None, None) => {
                return Err(format!(
                    "the session's model {label} has no search of its own"
                ));
            }
        };
        let api_key = models
            .api_key_in(&model, &self.env)
            .map_err(|error| error.to_string())?;
        let mut prompt = format!("Query: {}", query.query.trim());
        if let Some(recency) = query.recency {
            prompt.push_str(&format!(
                "\nOnly pages from the past {}.",
                match recency {
                    Recency::Day => "day",
                    Recency::Week => "week",
                    Recency::Month => "month",
                    Recency::Year => "year",
                }
            ));
        }
        prompt.push_str(&format!(
            "\nAt most {} results.",
            query.limit.unwrap_or(10).clamp(1, 20)
        ));
        let context = Context {
            system_prompt: Some(SYSTEM.to_owned()),
            messages: vec![Message::User(UserMessage {
                content: vec![UserContent::text(prompt)],
                timestamp: pi_util::time::now_millis(),
            })],
            tools: Vec::new(),
        };
        let tool = search.tool();
        let options = StreamOptions {
            api_key,
            thinking: ThinkingLevel::Off,
            max_tokens: Some(4096),
            cancel: cancel.child_token(),
            payload: Some(PayloadHook(Arc::new(move |mut body: Value| {
                let tool = tool.clone();
                Box::pin(async move {
                    body["tools"] = json!([tool]);
                    body
                })
            }))),
            env: Some(self.env.clone()),
            ..StreamOptions::default()
        };
        let message = models
            .provider()
            .stream(&model, &context, options)
            .result()
            .await;
        match message.stop_reason {
            StopReason::Error | StopReason::Aborted => Err(format!(
                "{}'s search through {label} failed: {}",
                search.name(),
                message
                    .error_message
                    .as_deref()
                    .unwrap_or("no reason given")
            )),
            _ => Ok(Found {
                search,
                text: message.text().trim().to_owned(),
                model: label,
            }),
        }
    }
}

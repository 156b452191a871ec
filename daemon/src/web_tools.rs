//! oh-my-pi's web tools over `pi-web`: `read` of an http(s) URL (for sessions that name a web
//! tool), `fetch` (the same, by URL), and `web_search` through the provider whose key the
//! session's environment has. Both refuse when the session's sandbox keeps it off the
//! network; the approval policy gates them like any tool.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use pi_agent::{Tool, ToolFuture, ToolInvocation, ToolOutput};
use pi_web::{Recency, SearchProvider, SearchQuery, WebClient, WebError};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The tool that reads a URL.
pub const FETCH: &str = "fetch";
/// The search tool.
pub const WEB_SEARCH: &str = "web_search";
/// The web tools, by name.
pub const TOOLS: [&str; 2] = [FETCH, WEB_SEARCH];

/// The refusal when the sandbox keeps the session off the network.
const NO_NETWORK: &str = "The sandbox keeps this session off the network (`sandbox.network` is \
false), so web pages cannot be read or searched. Work with what is on disk, or ask the user to \
allow the network.";

/// The daemon's one web client, made on first use.
#[derive(Clone, Debug, Default)]
pub struct Web {
    client: Arc<std::sync::OnceLock<Result<Arc<WebClient>, String>>>,
}

impl Web {
    fn client(&self) -> Result<Arc<WebClient>, String> {
        self.client
            .get_or_init(|| {
                WebClient::new(pi_web::WebConfig::default())
                    .map(Arc::new)
                    .map_err(|error| error.to_string())
            })
            .clone()
    }
}

/// `read`'s reader of http(s) URLs for one session.
#[derive(Debug)]
pub struct WebPages {
    /// The client.
    pub web: Web,
    /// The session may not reach the network.
    pub offline: bool,
}

impl pi_tools::UriReader for WebPages {
    fn scheme(&self) -> &str {
        "https://"
    }

    fn handles(&self, uri: &str) -> bool {
        let lower = uri.get(..8).unwrap_or(uri).to_ascii_lowercase();
        lower.starts_with("https://") || lower.starts_with("http://")
    }

    fn describe(&self) -> String {
        "Also reads web pages given as http(s) URLs: HTML as markdown, JSON pretty-printed, PDFs \
         as text (offset and limit page through a long one without fetching it again)."
            .to_owned()
    }

    fn path_hint(&self) -> String {
        "an http(s) URL".to_owned()
    }

    fn read<'a>(&'a self, uri: &'a str) -> pi_tools::UriFuture<'a> {
        Box::pin(async move {
            if self.offline {
                return Err(NO_NETWORK.to_owned());
            }
            let client = self.web.client()?;
            // Dropping the future (an abort) cancels the fetch with it.
            let cancel = CancellationToken::new();
            let _cancel_on_drop = cancel.clone().drop_guard();
            let page = client
                .fetch(uri, &cancel)
                .await
                .map_err(|error| error.to_string())?;
            // The header comes first whatever the offset, and the offsets are the page's
            // own lines.
            let mut header = format!("URL: {}\nContent-Type: {}\n", page.url, page.content_type);
            for note in &page.notes {
                header.push_str(&format!("Note: {note}\n"));
            }
            header.push('\n');
            Ok(vec![
                pi_tools::UriContent::Preface(header),
                pi_tools::UriContent::Text(page.text.clone()),
            ])
        })
    }
}

/// `fetch {url, offset?, limit?}`: `read` of a URL under its own name.
pub struct FetchTool {
    read: Arc<dyn Tool>,
}

impl FetchTool {
    /// Over `read`, a read tool whose context reads URLs with [`WebPages`].
    pub fn new(read: Arc<dyn Tool>) -> FetchTool {
        FetchTool { read }
    }
}

static FETCH_PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The http(s) URL"},
            "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
            "limit": {"type": "number", "description": "Maximum number of lines to read"}
        },
        "required": ["url"]
    })
});

impl Tool for FetchTool {
    fn name(&self) -> &str {
        FETCH
    }

    fn label(&self) -> &str {
        "Fetch"
    }

    fn description(&self) -> &str {
        "Read a web page by URL: HTML as clean markdown, JSON pretty-printed, PDFs as text, with \
         the final URL after redirects. Long pages are cut like files; read on with offset (the \
         page is not fetched again for a few minutes)."
    }

    fn parameters(&self) -> &Value {
        &FETCH_PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read a web page by URL (markdown, JSON, PDF text)")
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        let url = invocation.arguments["url"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("https://") || lower.starts_with("http://")) {
            return Box::pin(async move {
                ToolOutput::error(format!(
                    "fetch reads http(s) URLs, and {url:?} is not one; use read for files"
                ))
            });
        }
        let mut arguments = json!({"path": url});
        for key in ["offset", "limit"] {
            if let Some(value) = invocation
                .arguments
                .get(key)
                .filter(|value| !value.is_null())
            {
                arguments[key] = value.clone();
            }
        }
        self.read.clone().execute(ToolInvocation {
            arguments,
            ..invocation
        })
    }
}

/// `web_search {query, recency?, limit?, provider?}`.
pub struct WebSearchTool {
    web: Web,
    env: Arc<BTreeMap<String, String>>,
    offline: bool,
    // The session's model, whose provider may search itself.
    model: crate::server_search::SessionModel,
}

impl WebSearchTool {
    /// Searches with the keys of `env` (the session's environment), else with the search of
    /// `model`'s provider.
    pub fn new(
        web: Web,
        env: Arc<BTreeMap<String, String>>,
        offline: bool,
        model: crate::server_search::SessionModel,
    ) -> WebSearchTool {
        WebSearchTool {
            web,
            env,
            offline,
            model,
        }
    }
}

static SEARCH_PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to search for"},
            "recency": {"type": "string", "enum": ["day", "week", "month", "year"], "description": "Only results from this recent period"},
            "limit": {"type": "number", "description": "How many results (default 10, at most 20)"},
            "provider": {"type": "string", "enum": ["brave", "exa", "tavily", "searxng", "anthropic", "openai"], "description": "A provider to use instead of the one chosen by which key is set (anthropic, openai: the search of the session's model's provider)"}
        },
        "required": ["query"]
    })
});

impl Tool for WebSearchTool {
    fn name(&self) -> &str {
        WEB_SEARCH
    }

    fn label(&self) -> &str {
        "Web search"
    }

    fn description(&self) -> &str {
        "Search the web: titles, URLs and snippets of the best results (read a result with fetch \
         or read). Narrow with recency (day, week, month, year) and limit."
    }

    fn parameters(&self) -> &Value {
        &SEARCH_PARAMETERS
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search the web for pages (titles, URLs, snippets)")
    }

    fn execute(self: Arc<Self>, invocation: ToolInvocation) -> ToolFuture {
        Box::pin(async move {
            if self.offline {
                return ToolOutput::error(NO_NETWORK);
            }
            let arguments = &invocation.arguments;
            let query = SearchQuery {
                query: arguments["query"].as_str().unwrap_or_default().to_owned(),
                recency: arguments["recency"].as_str().and_then(Recency::from_name),
                limit: arguments["limit"]
                    .as_u64()
                    .map(|limit| u32::try_from(limit).unwrap_or(u32::MAX)),
            };
            if query.query.trim().is_empty() {
                return ToolOutput::error("`query` is empty; say what to search for");
            }
            // A provider's own search: named, or where no search key is set and the model
            // can search.
            let named = arguments["provider"].as_str();
            let server = named.and_then(crate::server_search::ServerSearch::named);
            let keyed = SearchProvider::from_env(&self.env);
            if server.is_some() || (named.is_none() && keyed.is_none()) {
                return match self.model.search(server, &query, &invocation.cancel).await {
                    Ok(found) => server_output(&query, found),
                    Err(why) if server.is_some() => {
                        ToolOutput::error(format!("Cannot search: {why}"))
                    }
                    Err(why) => {
                        ToolOutput::error(format!("{} ({why})", WebError::NoSearchProvider))
                    }
                };
            }
            let provider = match named {
                Some(name) => SearchProvider::named(name, &self.env),
                None => keyed.ok_or(WebError::NoSearchProvider),
            };
            let provider = match provider {
                Ok(provider) => provider,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            let client = match self.web.client() {
                Ok(client) => client,
                Err(error) => return ToolOutput::error(error),
            };
            let hits = match client.search(&provider, &query, &invocation.cancel).await {
                Ok(hits) => hits,
                Err(error) => return ToolOutput::error(error.to_string()),
            };
            let mut text = if hits.is_empty() {
                format!("No results for {:?} ({}).", query.query, provider.name())
            } else {
                format!(
                    "{} results for {:?} ({}):\n",
                    hits.len(),
                    query.query,
                    provider.name()
                )
            };
            for (number, hit) in hits.iter().enumerate() {
                text.push_str(&format!(
                    "\n{}. {}\n   {}\n",
                    number + 1,
                    hit.title,
                    hit.url
                ));
                if let Some(published) = &hit.published {
                    text.push_str(&format!("   published {published}\n"));
                }
                if !hit.snippet.trim().is_empty() {
                    text.push_str(&format!("   {}\n", hit.snippet.trim()));
                }
            }
            let hits: Vec<Value> = hits
                .iter()
                .map(|hit| {
                    json!({"title": hit.title, "url": hit.url, "snippet": hit.snippet,
                        "published": hit.published})
                })
                .collect();
            ToolOutput::text(text.trim_end())
                .with_details(json!({"provider": provider.name(), "hits": hits}))
        })
    }
}

/// The result of a provider's own search.
fn server_output(query: &SearchQuery, found: crate::server_search::Found) -> ToolOutput {
    let name = found.search.name();
    let text = if found.text.is_empty() {
        format!(
            "No results for {:?} ({name} search through {}).",
            query.query, found.model
        )
    } else {
        format!(
            "Results for {:?} ({name} search through {}):\n\n{}",
            query.query, found.model, found.text
        )
    };
    ToolOutput::text(text).with_details(json!({"provider": name, "model": found.model}))
}

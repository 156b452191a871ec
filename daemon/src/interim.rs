//! Interim model and tool services used until the real ones are wired: no models and no tools.
//! Sessions can be created, read, imported and exported; prompting explains that no model is
//! configured.

use std::sync::Arc;

use pi_agent::Tool;
use pi_llm::{ApiKey, AssistantStream, Context, Model, Provider, StreamOptions, ThinkingLevel};

use crate::session::{ModelService, ToolEnvironment, ToolFactory};

/// Knows no models.
#[derive(Debug, Default)]
pub struct NoModels;

impl ModelService for NoModels {
    fn provider(&self) -> Arc<dyn Provider> {
        Arc::new(NoProvider)
    }
    fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), String> {
        Err(format!(
            "no model matches {spec:?}: this daemon has no model providers configured"
        ))
    }
    fn find(&self, _provider: &str, _id: &str) -> Option<Model> {
        None
    }
    fn default_model(&self) -> Option<Model> {
        None
    }
    fn api_key(&self, model: &Model) -> Result<Option<ApiKey>, String> {
        Err(format!("no key is configured for {}", model.provider))
    }
    fn list(&self) -> Vec<(Model, bool)> {
        Vec::new()
    }
}

#[derive(Debug)]
struct NoProvider;

impl Provider for NoProvider {
    fn stream(
        &self,
        model: &Model,
        _context: &Context,
        _options: StreamOptions,
    ) -> AssistantStream {
        // Dropping the sender ends the stream with an error event.
        AssistantStream::channel(model).1
    }
}

/// Offers no tools.
#[derive(Debug, Default)]
pub struct NoTools;

impl ToolFactory for NoTools {
    fn tools(
        &self,
        _environment: &ToolEnvironment,
        names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, String> {
        match names.first() {
            Some(name) => Err(format!("unknown tool {name:?}: no tools are available")),
            None => Ok(Vec::new()),
        }
    }
    fn default_names(&self) -> Vec<String> {
        Vec::new()
    }
}

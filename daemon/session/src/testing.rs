//! Test and benchmark doubles for session services: models served by pi-llm's faux provider
//! and a fixed set of tools. Not used by `pid` itself.

use std::sync::Arc;

use pi_agent::Tool;
use pi_llm::faux::{FauxProvider, faux_model};
use pi_llm::{ApiKey, Model, Provider, ThinkingLevel};

use crate::{ModelService, ToolEnvironment, ToolFactory};

/// The second faux model: like `faux/faux-1` but without reasoning.
pub fn second_faux_model() -> Model {
    Model {
        id: "faux-2".into(),
        name: "Faux 2".into(),
        reasoning: false,
        ..faux_model()
    }
}

/// Models `faux/faux-1` and `faux/faux-2`, streamed by a faux provider (or `provider`).
pub struct FauxModels {
    /// The scripted provider.
    pub faux: FauxProvider,
    /// Overrides the provider (to test misbehaving providers).
    pub provider: Option<Arc<dyn Provider>>,
}

impl ModelService for FauxModels {
    fn provider(&self) -> Arc<dyn Provider> {
        self.provider
            .clone()
            .unwrap_or_else(|| Arc::new(self.faux.clone()))
    }

    fn resolve(&self, spec: &str) -> Result<(Model, Option<ThinkingLevel>), pi_llm::ResolveError> {
        let (name, level) = match spec.split_once(':') {
            Some((name, level)) => (
                name,
                Some(
                    level
                        .parse()
                        .map_err(|_: pi_llm::model::UnknownThinkingLevel| {
                            pi_llm::ResolveError::UnknownThinkingLevel {
                                spec: spec.to_owned(),
                                level: level.to_owned(),
                            }
                        })?,
                ),
            ),
            None => (spec, None),
        };
        [faux_model(), second_faux_model()]
            .into_iter()
            .find(|model| name == model.id || name == format!("{}/{}", model.provider, model.id))
            .map(|model| (model, level))
            .ok_or_else(|| pi_llm::ResolveError::NoMatch {
                spec: spec.to_owned(),
                closest: vec!["faux/faux-1".to_owned()],
            })
    }

    fn find(&self, provider: &str, id: &str) -> Option<Model> {
        [faux_model(), second_faux_model()]
            .into_iter()
            .find(|m| m.provider == provider && m.id == id)
    }

    fn default_model(&self) -> Option<Model> {
        Some(faux_model())
    }

    fn api_key(&self, _model: &Model) -> Result<Option<ApiKey>, pi_llm::KeyError> {
        Ok(None)
    }

    fn list(&self) -> Vec<(Model, bool)> {
        vec![(faux_model(), true), (second_faux_model(), true)]
    }
}

/// Hands every session the same tools; all of them by default.
pub struct StaticTools {
    /// The tools.
    pub tools: Vec<Arc<dyn Tool>>,
}

impl ToolFactory for StaticTools {
    fn tools(
        &self,
        _environment: &ToolEnvironment,
        names: &[String],
    ) -> Result<Vec<Arc<dyn Tool>>, crate::services::ToolsError> {
        names
            .iter()
            .map(|name| {
                self.tools
                    .iter()
                    .find(|tool| tool.name() == name)
                    .cloned()
                    .ok_or_else(|| pi_tools::UnknownTool(name.clone()).into())
            })
            .collect()
    }

    fn default_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }
}

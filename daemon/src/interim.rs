//! The interim tool service used until the built-in tools are wired: no tools.

use std::sync::Arc;

use pi_agent::Tool;

use crate::session::{ToolEnvironment, ToolFactory};

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

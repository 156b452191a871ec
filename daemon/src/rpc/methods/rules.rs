//! `rules/test`: a thin adapter over the coding layer's stream rules (TTSR).

use std::collections::BTreeSet;
use std::path::Path;

use pi_protocol::v1::{RuleTestResult, RulesTestParams, RulesTestResponse};
use pi_protocol::{ErrorKind, ErrorObject};

use crate::coding::rules::Rule;
use crate::coding::ttsr::Ttsr;
use crate::rpc::dispatch::RequestContext;
use crate::session::convert::diagnostic;
use crate::session::params::absolute_path;

/// `rules/test`.
pub async fn test(
    context: &RequestContext,
    params: RulesTestParams,
) -> Result<RulesTestResponse, ErrorObject> {
    let cwd = absolute_path("cwd", &params.cwd).map_err(crate::rpc::errors::session)?;
    let source = params.source.clone().unwrap_or_else(|| "text".to_owned());
    let tool = match source.as_str() {
        "text" | "thinking" => None,
        other => match other.strip_prefix("tool:").filter(|name| !name.is_empty()) {
            Some(name) => Some(name.to_owned()),
            None => {
                return Err(ErrorObject::new(
                    ErrorKind::InvalidParams,
                    format!("source {other:?} is not text, thinking or tool:NAME"),
                )
                .with_field("source"));
            }
        },
    };
    let rule_file = params.rule.as_deref().map(|rule| cwd.join(rule));
    if let Some(file) = &rule_file
        && !file.is_file()
    {
        return Err(ErrorObject::new(
            ErrorKind::InvalidParams,
            format!("no rule file at {}", file.display()),
        )
        .with_field("rule"));
    }
    let roots = context.state.sessions.services().settings.resources.clone();
    let tested = tokio::task::spawn_blocking(move || {
        let mut diagnostics = Vec::new();
        let resources = crate::coding::resources::load(&roots, &cwd);
        let rules: Vec<Rule> = match &rule_file {
            Some(file) => crate::coding::rules::rule_at(file, &mut diagnostics)
                .into_iter()
                .collect(),
            None => resources.rules,
        };
        let mut settings = resources.settings.ttsr;
        // A rule tested is tested even where the settings turn the stream rules off.
        settings.enabled = true;
        let mut results = Vec::new();
        if let Some(ttsr) = Ttsr::new(&rules, &settings, BTreeSet::new(), &mut diagnostics) {
            let source = match (&tool, source.as_str()) {
                (Some(name), _) => pi_agent::watch::DeltaSource::ToolCall { name },
                (None, "thinking") => pi_agent::watch::DeltaSource::Thinking,
                (None, _) => pi_agent::watch::DeltaSource::Text,
            };
            let fired = ttsr.test(source, &params.text);
            for rule in ttsr.rules() {
                let verdict = fired
                    .iter()
                    .find(|(fired, _)| std::ptr::eq(*fired, rule))
                    .map(|(_, interrupts)| *interrupts);
                results.push(result(rule, verdict));
            }
        }
        if let Some(file) = &rule_file
            && results.is_empty()
            && diagnostics.is_empty()
        {
            diagnostics.push(crate::coding::Diagnostic::warning(
                file,
                "has no condition, so it never fires on the stream (it is a rulebook rule)",
            ));
        }
        RulesTestResponse {
            rules: results,
            diagnostics: diagnostics.iter().map(diagnostic).collect(),
        }
    })
    .await
    .map_err(|error| ErrorObject::new(ErrorKind::Internal, error.to_string()))?;
    Ok(tested)
}

fn result(rule: &Rule, interrupts: Option<bool>) -> RuleTestResult {
    RuleTestResult {
        name: rule.name.clone(),
        path: display(&rule.path),
        fires: interrupts.is_some(),
        interrupts: interrupts.unwrap_or(false),
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

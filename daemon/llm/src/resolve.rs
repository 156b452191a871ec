//! From what a user types (`sonnet`, `anthropic/claude-opus-4-6:high`,
//! `openrouter/openai/gpt-oss-120b:free`) to one model and an optional thinking level, by pi's
//! rules (spec §2.7, `resolveCliModel` and `parseModelPattern`):
//!
//! 1. If the text before the first `/` is a provider, look only at that provider's models.
//! 2. Within the candidates: exact `provider/id`, then exact id, then a case-insensitive
//!    substring of id or name, preferring aliases (`-latest`, or no `-YYYYMMDD` suffix) and then
//!    the highest id.
//! 3. Nothing matched: if the part after the last `:` is a thinking level, resolve the part
//!    before it; ids with colons (`…:free`, `…:thinking`) therefore match whole first.
//! 4. A provider-scoped miss retries the whole text against every model
//!    (`openai/gpt-oss-120b` is an OpenRouter and Groq id).
//!
//! 5. Still nothing, but the text before the first `/` is a known provider: like pi, a custom
//!    model id — the provider's default model (else its first) with the rest as id and name
//!    ([`custom_model`]). Callers warn about it ([`is_listed`]).
//!
//! Ties are broken by preferring providers with a key, then catalog provider order, so the
//! result is deterministic.

use crate::model::{Model, ThinkingLevel};

/// Why a model spec did not resolve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The spec was empty; name a model as `provider/id`, an id, or part of a name.
    #[error("no model given; name one as provider/id, an id, or part of a name")]
    Empty,
    /// Nothing matched; use one of the closest matches, or add the model to `models.json`.
    #[error("{}", describe_no_match(spec, closest))]
    NoMatch {
        /// What was asked for.
        spec: String,
        /// The most similar `provider/id`s, most similar first.
        closest: Vec<String>,
    },
    /// A model matched but the `:suffix` is not a thinking level; use one of the levels.
    #[error(
        "unknown thinking level \"{level}\" in \"{spec}\"; use off, minimal, low, medium, high or xhigh"
    )]
    UnknownThinkingLevel {
        /// What was asked for.
        spec: String,
        /// The suffix after the last `:`.
        level: String,
    },
}

fn describe_no_match(spec: &str, closest: &[String]) -> String {
    if closest.is_empty() {
        format!("no model matches \"{spec}\"; no models are known")
    } else {
        format!(
            "no model matches \"{spec}\"; closest: {}",
            closest.join(", ")
        )
    }
}

/// How many near misses a [`ResolveError::NoMatch`] lists.
const CLOSEST: usize = 5;

/// Resolves `spec` among `models` (in catalog order); `has_key(provider)` breaks ties.
pub fn resolve_spec(
    models: &[Model],
    has_key: &dyn Fn(&str) -> bool,
    spec: &str,
) -> Result<(Model, Option<ThinkingLevel>), ResolveError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(ResolveError::Empty);
    }
    let matcher = Matcher { models, has_key };
    let mut invalid_level = None;
    if let Some((prefix, rest)) = spec.split_once('/')
        && let Some(provider) = models
            .iter()
            .map(|model| model.provider.as_str())
            .find(|provider| provider.eq_ignore_ascii_case(prefix))
    {
        let scoped: Vec<&Model> = models
            .iter()
            .filter(|model| model.provider == provider)
            .collect();
        match matcher.parse_pattern(rest, &scoped) {
            Outcome::Found(model, level) => return Ok((model.clone(), level)),
            Outcome::InvalidLevel(level) => invalid_level = Some(level),
            Outcome::NotFound => {}
        }
    }
    let all: Vec<&Model> = models.iter().collect();
    match matcher.parse_pattern(spec, &all) {
        Outcome::Found(model, level) => Ok((model.clone(), level)),
        Outcome::InvalidLevel(level) => Err(ResolveError::UnknownThinkingLevel {
            spec: spec.to_owned(),
            level,
        }),
        Outcome::NotFound => match invalid_level {
            Some(level) => Err(ResolveError::UnknownThinkingLevel {
                spec: spec.to_owned(),
                level,
            }),
            None => custom_model(models, spec)
                .map(|model| (model, None))
                .ok_or_else(|| ResolveError::NoMatch {
                    spec: spec.to_owned(),
                    closest: closest(spec, models),
                }),
        },
    }
}

/// pi's custom model id: for `provider/id` where `provider` has models but none is `id`, the
/// provider's default model (the catalog's, else its first) with `id` as id and name. `None`
/// for an unknown provider or an empty id.
pub fn custom_model(models: &[Model], spec: &str) -> Option<Model> {
    let (prefix, id) = spec.trim().split_once('/')?;
    let id = id.trim();
    if id.is_empty() {
        return None;
    }
    let of_provider = |model: &&Model| model.provider.eq_ignore_ascii_case(prefix);
    let default_id = models
        .iter()
        .find(of_provider)
        .and_then(|model| crate::catalog::provider(&model.provider))
        .map(|info| info.default_model);
    let base = models
        .iter()
        .filter(of_provider)
        .find(|model| Some(model.id.as_str()) == default_id)
        .or_else(|| models.iter().find(of_provider))?;
    let mut model = base.clone();
    model.id = id.to_owned();
    model.name = id.to_owned();
    Some(model)
}

/// Whether `model` is one of `models` (by provider and id), not a [`custom_model`].
pub fn is_listed(models: &[Model], model: &Model) -> bool {
    models
        .iter()
        .any(|listed| listed.provider == model.provider && listed.id == model.id)
}

enum Outcome<'a> {
    Found(&'a Model, Option<ThinkingLevel>),
    /// A model matched the part before the last `:`, which is not a level.
    InvalidLevel(String),
    NotFound,
}

struct Matcher<'a> {
    models: &'a [Model],
    has_key: &'a dyn Fn(&str) -> bool,
}

impl<'a> Matcher<'a> {
    fn parse_pattern(&self, pattern: &str, candidates: &[&'a Model]) -> Outcome<'a> {
        if let Some(model) = self.try_match(pattern, candidates) {
            return Outcome::Found(model, None);
        }
        let Some((prefix, suffix)) = pattern.rsplit_once(':') else {
            return Outcome::NotFound;
        };
        let level = ThinkingLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == suffix);
        match (level, self.parse_pattern(prefix, candidates)) {
            (Some(level), Outcome::Found(model, _)) => Outcome::Found(model, Some(level)),
            (None, Outcome::Found(..)) => Outcome::InvalidLevel(suffix.to_owned()),
            (_, other) => other,
        }
    }

    fn try_match(&self, pattern: &str, candidates: &[&'a Model]) -> Option<&'a Model> {
        let wanted = pattern.to_lowercase();
        if let Some((provider, id)) = wanted.split_once('/')
            && let Some(model) = candidates.iter().find(|model| {
                model.provider.to_lowercase() == provider && model.id.to_lowercase() == id
            })
        {
            return Some(model);
        }
        let exact: Vec<&'a Model> = candidates
            .iter()
            .copied()
            .filter(|model| model.id.to_lowercase() == wanted)
            .collect();
        if !exact.is_empty() {
            return self.best(&exact);
        }
        let matches: Vec<&'a Model> = candidates
            .iter()
            .copied()
            .filter(|model| {
                model.id.to_lowercase().contains(&wanted)
                    || model.name.to_lowercase().contains(&wanted)
            })
            .collect();
        let keyed: Vec<&'a Model> = matches
            .iter()
            .copied()
            .filter(|model| (self.has_key)(&model.provider))
            .collect();
        let pool = if keyed.is_empty() { matches } else { keyed };
        let aliases: Vec<&'a Model> = pool
            .iter()
            .copied()
            .filter(|model| is_alias(&model.id))
            .collect();
        let pool = if aliases.is_empty() { pool } else { aliases };
        pool.into_iter().max_by(|a, b| {
            a.id.to_lowercase()
                .cmp(&b.id.to_lowercase())
                .then_with(|| self.rank(&b.provider).cmp(&self.rank(&a.provider)))
        })
    }

    /// Among models with the same id: a provider with a key, then catalog order.
    fn best(&self, tied: &[&'a Model]) -> Option<&'a Model> {
        tied.iter()
            .copied()
            .min_by_key(|model| (!(self.has_key)(&model.provider), self.rank(&model.provider)))
    }

    /// Position of the provider's first model in the catalog.
    fn rank(&self, provider: &str) -> usize {
        self.models
            .iter()
            .position(|model| model.provider == provider)
            .unwrap_or(usize::MAX)
    }
}

/// pi's `isAlias`: ends with `-latest`, or does not end with a `-YYYYMMDD` date.
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    let dated = bytes.len() > 9
        && bytes[bytes.len() - 9] == b'-'
        && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

/// The `provider/id`s most similar to `spec` by edit distance to the id or `provider/id`.
fn closest(spec: &str, models: &[Model]) -> Vec<String> {
    let wanted: Vec<char> = spec.to_lowercase().chars().collect();
    let mut scored: Vec<(usize, usize, String)> = models
        .iter()
        .enumerate()
        .map(|(position, model)| {
            let full = format!("{}/{}", model.provider, model.id);
            let distance = edit_distance(&wanted, &model.id.to_lowercase())
                .min(edit_distance(&wanted, &full.to_lowercase()));
            (distance, position, full)
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .map(|(_, _, full)| full)
        .take(CLOSEST)
        .collect()
}

fn edit_distance(a: &[char], b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, a_char) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, b_char) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(a_char != b_char);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// pi's warning for a custom model id, and what to do to make it a listed model.
pub fn unlisted_warning(model: &Model) -> String {
    format!(
        "model \"{}\" is not listed for provider \"{}\"; using it as a custom model id with the \
         provider's defaults (context window {}, max tokens {}); add it to models.json to set \
         its own",
        model.id, model.provider, model.context_window, model.max_tokens
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_dates() {
        for (id, alias) in [
            ("claude-sonnet-4-5", true),
            ("claude-sonnet-4-5-20250929", false),
            ("claude-3-5-haiku-latest", true),
            ("gpt-4o-2024-08-06", true),
            ("20250929", true),
        ] {
            assert_eq!(is_alias(id), alias, "{id}");
        }
    }

    #[test]
    fn edit_distances() {
        let distance = |a: &str, b: &str| edit_distance(&a.chars().collect::<Vec<_>>(), b);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "same"), 0);
    }
}

//! Prompt history: every prompt, steering and follow-up message sent to any session, one row
//! per distinct text and working directory, searchable with FTS5.

use sqlx::Row as _;

use crate::writer::Statements;
use crate::{Store, StoreError};

/// One remembered prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryRow {
    /// The text.
    pub text: String,
    /// Working directory of its session.
    pub cwd: String,
    /// When it was last sent, Unix ms.
    pub sent_at: i64,
}

impl Store {
    /// Records a sent prompt (sending the same text again in the same directory moves it to
    /// the front).
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn record_prompt(
        &self,
        text: &str,
        cwd: &str,
        sent_at: i64,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        write.push(
            "INSERT INTO prompt_history (text, cwd, sent_at) VALUES (?, ?, ?) \
             ON CONFLICT (text, cwd) DO UPDATE SET sent_at = max(sent_at, excluded.sent_at)",
            [text.into(), cwd.into(), sent_at.into()],
        );
        self.write_statements(write).await
    }

    /// Prompts newest first, each text once; `query` words must all match (as prefixes);
    /// `cwd` restricts to one working directory.
    #[tracing::instrument(level = "trace", skip_all, err)]
    pub async fn search_prompts(
        &self,
        query: Option<&str>,
        cwd: Option<&str>,
        limit: u32,
    ) -> Result<Vec<HistoryRow>, StoreError> {
        let match_expression = query
            .map(fts_prefix_query)
            .filter(|expression| !expression.is_empty());
        let rows = match &match_expression {
            Some(expression) => {
                sqlx::query(
                    "SELECT text, max(cwd) AS cwd, max(sent_at) AS sent_at FROM prompt_history \
                     WHERE id IN (SELECT rowid FROM prompt_history_fts WHERE prompt_history_fts MATCH ?1) \
                     AND (?2 IS NULL OR cwd = ?2) \
                     GROUP BY text ORDER BY sent_at DESC LIMIT ?3",
                )
                .bind(expression)
                .bind(cwd)
                .bind(limit as i64)
                .fetch_all(&self.reader)
                .await?
            }
            None => {
                sqlx::query(
                    "SELECT text, max(cwd) AS cwd, max(sent_at) AS sent_at FROM prompt_history \
                     WHERE (?1 IS NULL OR cwd = ?1) \
                     GROUP BY text ORDER BY sent_at DESC LIMIT ?2",
                )
                .bind(cwd)
                .bind(limit as i64)
                .fetch_all(&self.reader)
                .await?
            }
        };
        rows.iter()
            .map(|row| {
                Ok(HistoryRow {
                    text: row.try_get("text")?,
                    cwd: row.try_get("cwd")?,
                    sent_at: row.try_get("sent_at")?,
                })
            })
            .collect()
    }
}

/// Turns user words into an FTS5 query: each word quoted (no operators) and a prefix.
fn fts_prefix_query(query: &str) -> String {
    query
        .split_whitespace()
        .map(|word| format!("\"{}\"*", word.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn prompts_are_found_newest_first_by_word_prefix_and_directory() {
        let (_dir, store) = crate::temp_store().await;
        store
            .record_prompt("fix the parser", "/a", 1)
            .await
            .unwrap();
        store
            .record_prompt("explain \"quoted\" OR words", "/a", 2)
            .await
            .unwrap();
        store.record_prompt("fix the tests", "/b", 3).await.unwrap();
        store
            .record_prompt("fix the parser", "/a", 4)
            .await
            .unwrap();
        store
            .record_prompt("fix the parser", "/b", 5)
            .await
            .unwrap();

        let texts =
            |rows: Vec<HistoryRow>| rows.into_iter().map(|row| row.text).collect::<Vec<_>>();
        assert_eq!(
            texts(store.search_prompts(None, None, 10).await.unwrap()),
            [
                "fix the parser",
                "fix the tests",
                "explain \"quoted\" OR words"
            ]
        );
        assert_eq!(
            texts(
                store
                    .search_prompts(Some("fi pars"), None, 10)
                    .await
                    .unwrap()
            ),
            ["fix the parser"]
        );
        assert_eq!(
            texts(
                store
                    .search_prompts(Some("\"quoted\" OR"), None, 10)
                    .await
                    .unwrap()
            ),
            ["explain \"quoted\" OR words"]
        );
        assert_eq!(
            texts(
                store
                    .search_prompts(Some("fix"), Some("/b"), 10)
                    .await
                    .unwrap()
            ),
            ["fix the parser", "fix the tests"]
        );
        assert_eq!(
            texts(store.search_prompts(Some("   "), None, 1).await.unwrap()),
            ["fix the parser"]
        );
    }
}

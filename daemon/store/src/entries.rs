//! Session entries: appended in one transaction with the session row they change, read as the
//! branch from root to a leaf (a recursive query, loading only that path), by creation order,
//! or by announcing `seq` for replay.

use sqlx::Row as _;

use crate::sessions::{SessionRow, insert_session, update_session};
use crate::writer::{Statements, Value};
use crate::{Store, StoreError};

/// An entry as stored: pi's v3 JSON in `body`, with its position and announcing seq.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredEntry {
    /// 8-hex id.
    pub id: String,
    /// Parent id.
    pub parent_id: Option<String>,
    /// Creation order in the session.
    pub ordinal: i64,
    /// The seq of the event that announced it.
    pub seq: u64,
    /// The `type` field (`message`, `model_change`, ...).
    pub kind: String,
    /// The entry's JSON.
    pub body: String,
}

/// An entry to append.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEntry {
    /// 8-hex id, unique in the session.
    pub id: String,
    /// Parent id.
    pub parent_id: Option<String>,
    /// The seq of the event that will announce it.
    pub seq: u64,
    /// The `type` field.
    pub kind: String,
    /// The entry's JSON.
    pub body: String,
}

/// Deepest branch the recursive walk follows; guards against a corrupt cycle.
const MAX_BRANCH_DEPTH: i64 = 10_000_000;
macro_rules! entry_columns {
    () => {
        "id, parent_id, ordinal, seq, type, body"
    };
}

impl Store {
    /// Appends `entries` (in order) and saves `session`, atomically.
    pub async fn append_entries(
        &self,
        session: &SessionRow,
        entries: Vec<NewEntry>,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        insert_entries(&mut write, &session.id, entries);
        update_session(&mut write, session);
        self.write_statements(write).await
    }

    /// Creates a session together with its entries (import, fork), atomically.
    pub async fn insert_session_with_entries(
        &self,
        session: &SessionRow,
        entries: Vec<NewEntry>,
    ) -> Result<(), StoreError> {
        let mut write = Statements::default();
        insert_session(&mut write, session);
        insert_entries(&mut write, &session.id, entries);
        self.write_statements(write).await
    }

    /// The branch from the root to `leaf_id`, root first. Empty for no leaf.
    pub async fn branch(
        &self,
        session_id: &str,
        leaf_id: Option<&str>,
    ) -> Result<Vec<StoredEntry>, StoreError> {
        let Some(leaf_id) = leaf_id else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(
            "WITH RECURSIVE path (id, parent_id, depth) AS ( \
                 SELECT id, parent_id, 0 FROM entries WHERE session_id = ?1 AND id = ?2 \
                 UNION ALL \
                 SELECT entries.id, entries.parent_id, path.depth + 1 FROM entries \
                 JOIN path ON entries.session_id = ?1 AND entries.id = path.parent_id \
                 WHERE path.depth < ?3 \
             ) \
             SELECT entries.id, entries.parent_id, entries.ordinal, entries.seq, entries.type, entries.body \
             FROM path JOIN entries ON entries.session_id = ?1 AND entries.id = path.id \
             ORDER BY path.depth DESC",
        )
        .bind(session_id)
        .bind(leaf_id)
        .bind(MAX_BRANCH_DEPTH)
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(entry_from_row).collect()
    }

    /// Entries after `after_ordinal` in creation order, at most `limit`.
    pub async fn entries_by_ordinal(
        &self,
        session_id: &str,
        after_ordinal: i64,
        limit: u32,
    ) -> Result<Vec<StoredEntry>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            entry_columns!(),
            " FROM entries WHERE session_id = ?1 AND ordinal > ?2 ORDER BY ordinal LIMIT ?3"
        ))
        .bind(session_id)
        .bind(after_ordinal)
        .bind(i64::from(limit))
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(entry_from_row).collect()
    }

    /// Entries announced after `after_seq`, in seq order, at most `limit`.
    pub async fn entries_after_seq(
        &self,
        session_id: &str,
        after_seq: u64,
        limit: u32,
    ) -> Result<Vec<StoredEntry>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            entry_columns!(),
            " FROM entries WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
        ))
        .bind(session_id)
        .bind(after_seq as i64)
        .bind(i64::from(limit))
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(entry_from_row).collect()
    }

    /// Every entry of one type (`label`, ...), in creation order.
    pub async fn entries_of_kind(
        &self,
        session_id: &str,
        kind: &str,
    ) -> Result<Vec<StoredEntry>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            entry_columns!(),
            " FROM entries WHERE session_id = ?1 AND type = ?2 ORDER BY ordinal"
        ))
        .bind(session_id)
        .bind(kind)
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(entry_from_row).collect()
    }

    /// One entry.
    pub async fn entry(
        &self,
        session_id: &str,
        entry_id: &str,
    ) -> Result<Option<StoredEntry>, StoreError> {
        let row = sqlx::query(concat!(
            "SELECT ",
            entry_columns!(),
            " FROM entries WHERE session_id = ?1 AND id = ?2"
        ))
        .bind(session_id)
        .bind(entry_id)
        .fetch_optional(&self.reader)
        .await?;
        row.map(|row| entry_from_row(&row)).transpose()
    }

    /// Every entry id of a session (to keep new ids unique).
    pub async fn entry_ids(&self, session_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT id FROM entries WHERE session_id = ?1")
                .bind(session_id)
                .fetch_all(&self.reader)
                .await?,
        )
    }

    /// Number of entries of a session.
    pub async fn entry_count(&self, session_id: &str) -> Result<u64, StoreError> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM entries WHERE session_id = ?1")
            .bind(session_id)
            .fetch_one(&self.reader)
            .await?;
        Ok(count.max(0) as u64)
    }
}

/// Adds appending `entries`, in order after the session's last one, to `write`.
fn insert_entries(write: &mut Statements, session_id: &str, entries: Vec<NewEntry>) {
    let session_id: Value = session_id.into();
    for entry in entries {
        write.push(
            "INSERT INTO entries (session_id, id, parent_id, ordinal, seq, type, body) \
             SELECT ?, ?, ?, COALESCE(MAX(ordinal), -1) + 1, ?, ?, ? FROM entries WHERE session_id = ?",
            [
                session_id.clone(),
                entry.id.into(),
                entry.parent_id.into(),
                (entry.seq as i64).into(),
                entry.kind.into(),
                entry.body.into(),
                session_id.clone(),
            ],
        );
    }
}

fn entry_from_row(row: &sqlx::sqlite::SqliteRow) -> Result<StoredEntry, StoreError> {
    Ok(StoredEntry {
        id: row.try_get("id")?,
        parent_id: row.try_get("parent_id")?,
        ordinal: row.try_get("ordinal")?,
        seq: row.try_get::<i64, _>("seq")?.max(0) as u64,
        kind: row.try_get("type")?,
        body: row.try_get("body")?,
    })
}

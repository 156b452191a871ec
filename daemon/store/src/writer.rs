//! The single writer: one task owns the only connection that writes, and commits whatever
//! writes are queued in one `BEGIN IMMEDIATE` transaction (group commit).
//!
//! Why: SQLite allows one writer at a time. Deferred transactions on a pool of connections
//! that read and then write fail at once with `SQLITE_BUSY` (lock upgrade) or
//! `SQLITE_BUSY_SNAPSHOT` (another connection committed first), which `busy_timeout` never
//! resolves. With one writing connection there is no contention inside the daemon, and
//! batching makes the cost of a commit shared by every session that wrote meanwhile
//! (`docs/decisions/0007-one-sqlite-writer.md`).
//!
//! Invariants:
//! - A write's caller is answered only after the transaction that carried it committed (or
//!   failed): `Ok` means durable, so "stored before announced" holds for every caller.
//! - Writes are applied in the order they were queued; each runs inside its own savepoint
//!   when it shares a transaction, so a write that fails is undone alone and answered with
//!   its own error while the others commit.
//! - If the transaction as a whole fails (disk full, I/O error), every write in it is
//!   answered with an error and nothing of it is visible.
//!
//! Speed: every statement sqlx runs is a round trip to the connection's worker thread (two
//! thread wake-ups, tens of microseconds). The hot writes (appending entries, saving a
//! session row, recording a prompt) are therefore given as [`Statements`], SQL text and
//! values. Such a write alone in its transaction runs with its `BEGIN IMMEDIATE` and
//! `COMMIT` as one multi-statement query, one round trip (if that query fails, it is rolled
//! back and run again step by step, so that the write gets its own error); in a bigger
//! batch, each runs with its savepoint as one query.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use sqlx::sqlite::{SqliteArguments, SqliteConnectOptions, SqliteConnection};
use sqlx::{Arguments as _, AssertSqlSafe, ConnectOptions as _, Connection as _, Executor as _};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::StoreError;
use crate::error::StorageFailure;

/// Writes queued before callers wait for room.
const QUEUE_CAPACITY: usize = 4096;
/// Most writes one transaction carries.
const MAX_BATCH: usize = 512;

/// The work of one write, run on the writing connection inside a transaction.
pub(crate) type WriteWork<T> = Box<
    dyn for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T, StoreError>> + Send,
>;

/// A value bound to one `?` of a [`Statements`] write.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Text(Arc<str>),
}

impl From<i64> for Value {
    fn from(value: i64) -> Self {
        Value::Int(value)
    }
}

impl From<bool> for Value {
    fn from(value: bool) -> Self {
        Value::Int(i64::from(value))
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Value::Text(value.into())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Self {
        Value::Text(value.into())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Self {
        value.map_or(Value::Null, Into::into)
    }
}

/// A write given as SQL statements and the values of their placeholders, in order. The
/// statements use anonymous `?` placeholders only: values bind across statements in order.
#[derive(Debug, Default)]
pub(crate) struct Statements {
    sql: String,
    values: Vec<Value>,
}

impl Statements {
    /// Adds one statement (no trailing `;`) with the values of its `?`s.
    pub(crate) fn push(&mut self, statement: &str, values: impl IntoIterator<Item = Value>) {
        let before = self.values.len();
        self.values.extend(values);
        debug_assert_eq!(
            statement.matches('?').count(),
            self.values.len() - before,
            "one value per `?` in {statement}"
        );
        self.sql.push_str(statement);
        self.sql.push_str(";\n");
    }

    fn bind(&self, arguments: &mut SqliteArguments) -> Result<(), sqlx::Error> {
        for value in &self.values {
            match value {
                Value::Null => arguments.add(None::<i64>),
                Value::Int(number) => arguments.add(*number),
                Value::Text(text) => arguments.add(text.clone()),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok(())
    }

    /// Runs the statements on `connection` as one query, between `before` and `after`
    /// (statements without values, such as `BEGIN IMMEDIATE;`).
    async fn execute_between(
        &self,
        connection: &mut SqliteConnection,
        before: &str,
        after: &str,
    ) -> Result<(), StoreError> {
        let mut arguments = SqliteArguments::default();
        self.bind(&mut arguments)?;
        let sql = [before, self.sql.as_str(), after].concat();
        sqlx::query_with(AssertSqlSafe(sql), arguments)
            .execute(connection)
            .await?;
        Ok(())
    }
}

/// The address of the writer task. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct WriterHandle {
    // Sent to by every `Store` clone; received by the writer task. Bounded: when the writer
    // falls behind by `QUEUE_CAPACITY` writes, writers wait.
    jobs: mpsc::Sender<Box<dyn Job>>,
    // Cancelled by `close`: the writer finishes what is queued and stops.
    closing: CancellationToken,
    // The writer task, taken (once) by `close` to wait for it. A sync mutex, never held
    // across an await.
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
    // Batches committed and writes carried, for `daemon/status`-style counters and tests.
    stats: Arc<WriterStats>,
}

/// Counters of the writer (content-free).
#[derive(Debug, Default)]
pub struct WriterStats {
    /// Transactions committed or attempted.
    pub transactions: std::sync::atomic::AtomicU64,
    /// Writes carried by those transactions.
    pub writes: std::sync::atomic::AtomicU64,
    /// Writes alone in their transaction that ran with it as one query.
    pub one_query: std::sync::atomic::AtomicU64,
    /// Such writes whose query failed and that ran again step by step.
    pub retried: std::sync::atomic::AtomicU64,
}

impl WriterHandle {
    /// Starts the writer task on `connection` (already migrated). `options` reopen the
    /// connection if its worker dies.
    pub(crate) fn start(connection: SqliteConnection, options: SqliteConnectOptions) -> Self {
        let (jobs, receiver) = mpsc::channel(QUEUE_CAPACITY);
        let closing = CancellationToken::new();
        let stats = Arc::new(WriterStats::default());
        let task = tokio::spawn(serve(
            connection,
            options,
            receiver,
            closing.clone(),
            stats.clone(),
        ));
        WriterHandle {
            jobs,
            closing,
            task: Arc::new(Mutex::new(Some(task))),
            stats,
        }
    }

    /// Runs `work` in the writer's next transaction; answers once that transaction committed.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        work: WriteWork<T>,
    ) -> Result<T, StoreError> {
        self.enqueue(|answer| {
            Box::new(WriteJob {
                work: Some(work),
                answer,
            })
        })
        .await
    }

    /// Runs `statements` in the writer's next transaction; answers once it committed.
    pub(crate) async fn write_statements(&self, statements: Statements) -> Result<(), StoreError> {
        self.enqueue(|answer| Box::new(StatementsJob { statements, answer }))
            .await
    }

    /// Queues the job `make` builds around its answer, and waits for that answer.
    async fn enqueue<T: Send + 'static>(
        &self,
        make: impl FnOnce(Answer<T>) -> Box<dyn Job>,
    ) -> Result<T, StoreError> {
        if self.closing.is_cancelled() {
            return Err(StoreError::closed());
        }
        let (reply, answer) = oneshot::channel();
        let job = make(Answer {
            output: None,
            reply,
        });
        self.jobs
            .send(job)
            .await
            .map_err(|_| StoreError::closed())?;
        answer.await.unwrap_or_else(|_| Err(StoreError::closed()))
    }

    /// Counters.
    pub(crate) fn stats(&self) -> &WriterStats {
        &self.stats
    }

    /// Lets the writer finish what is queued, then stops it and closes its connection.
    pub(crate) async fn close(&self) {
        self.closing.cancel();
        let task = self
            .task
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// A queued write, with its type erased so that one queue carries writes of any result type.
trait Job: Send {
    /// Runs the write; `true` when it succeeded.
    fn run<'c>(&'c mut self, connection: &'c mut SqliteConnection) -> BoxFuture<'c, bool>;
    /// The write's own error, once it ran and failed.
    fn error(&self) -> Option<StoreError>;
    /// Answers the caller: its own result if the transaction committed, else `failure`.
    fn finish(self: Box<Self>, failure: Option<StoreError>);
    /// Runs the write inside its own savepoint of the batch's transaction, rolled back to it
    /// if the write fails (the write keeps its error). `Err` when the savepoint itself
    /// failed: the transaction is broken.
    fn run_in_savepoint<'c>(
        &'c mut self,
        connection: &'c mut SqliteConnection,
    ) -> BoxFuture<'c, Result<(), sqlx::Error>> {
        Box::pin(async move {
            connection.execute("SAVEPOINT write").await?;
            if self.run(connection).await {
                connection.execute("RELEASE write").await?;
            } else {
                connection
                    .execute("ROLLBACK TO write; RELEASE write")
                    .await?;
            }
            Ok(())
        })
    }
    /// The write as statements, when it is one (see [`Statements`]).
    fn statements(&self) -> Option<&Statements> {
        None
    }
    /// Records that the write's statements ran, as part of the batch's one query.
    fn ran(&mut self) {}
}

/// A write's result, once it ran, and where its caller waits for the answer.
struct Answer<T> {
    // Set once the write ran.
    output: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T> Answer<T> {
    /// Records the write's own result; `true` when it succeeded.
    fn set(&mut self, output: Result<T, StoreError>) -> bool {
        let succeeded = output.is_ok();
        self.output = Some(output);
        succeeded
    }

    fn error(&self) -> Option<StoreError> {
        match &self.output {
            Some(Err(error)) => Some(error.clone()),
            Some(Ok(_)) | None => None,
        }
    }

    fn finish(self, failure: Option<StoreError>) {
        let answer = match (self.output, failure) {
            // A write that failed keeps its own error, whatever happened to the transaction.
            (Some(Err(error)), _) => Err(error),
            (Some(Ok(_)), Some(failure)) => Err(failure),
            (Some(Ok(value)), None) => Ok(value),
            (None, failure) => Err(failure.unwrap_or_else(StoreError::closed)),
        };
        let _ = self.reply.send(answer);
    }
}

struct WriteJob<T> {
    // Taken by `run`.
    work: Option<WriteWork<T>>,
    answer: Answer<T>,
}

impl<T: Send + 'static> Job for WriteJob<T> {
    fn run<'c>(&'c mut self, connection: &'c mut SqliteConnection) -> BoxFuture<'c, bool> {
        Box::pin(async move {
            let Some(work) = self.work.take() else {
                return false;
            };
            let output = work(connection).await;
            self.answer.set(output)
        })
    }

    fn error(&self) -> Option<StoreError> {
        self.answer.error()
    }

    fn finish(self: Box<Self>, failure: Option<StoreError>) {
        self.answer.finish(failure);
    }
}

struct StatementsJob {
    statements: Statements,
    answer: Answer<()>,
}

impl Job for StatementsJob {
    fn run<'c>(&'c mut self, connection: &'c mut SqliteConnection) -> BoxFuture<'c, bool> {
        Box::pin(async move {
            let output = self.statements.execute_between(connection, "", "").await;
            self.answer.set(output)
        })
    }

    fn error(&self) -> Option<StoreError> {
        self.answer.error()
    }

    fn finish(self: Box<Self>, failure: Option<StoreError>) {
        self.answer.finish(failure);
    }

    fn run_in_savepoint<'c>(
        &'c mut self,
        connection: &'c mut SqliteConnection,
    ) -> BoxFuture<'c, Result<(), sqlx::Error>> {
        Box::pin(async move {
            // The savepoint and the write's statements in one query.
            let output = self
                .statements
                .execute_between(connection, "SAVEPOINT write;\n", "RELEASE write;")
                .await;
            if !self.answer.set(output) {
                connection
                    .execute("ROLLBACK TO write; RELEASE write")
                    .await?;
            }
            Ok(())
        })
    }

    fn statements(&self) -> Option<&Statements> {
        Some(&self.statements)
    }

    fn ran(&mut self) {
        self.answer.set(Ok(()));
    }
}

async fn serve(
    mut connection: SqliteConnection,
    options: SqliteConnectOptions,
    mut jobs: mpsc::Receiver<Box<dyn Job>>,
    closing: CancellationToken,
    stats: Arc<WriterStats>,
) {
    let mut batch: Vec<Box<dyn Job>> = Vec::with_capacity(MAX_BATCH);
    loop {
        let received = tokio::select! {
            biased;
            received = jobs.recv_many(&mut batch, MAX_BATCH) => received,
            () = closing.cancelled() => {
                // Refuse new writes; what is queued still runs below, then `recv_many`
                // answers 0.
                jobs.close();
                jobs.recv_many(&mut batch, MAX_BATCH).await
            }
        };
        if received == 0 {
            break;
        }
        let failure = commit_batch(&mut connection, &mut batch, &stats).await;
        stats
            .transactions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        stats
            .writes
            .fetch_add(batch.len() as u64, std::sync::atomic::Ordering::Relaxed);
        if let Some(error) = &failure {
            tracing::warn!(%error, writes = batch.len(), "a database transaction failed");
        }
        let reconnect = failure
            .as_ref()
            .is_some_and(|error| error.failure() == StorageFailure::Closed);
        for job in batch.drain(..) {
            job.finish(failure.clone());
        }
        if reconnect && !closing.is_cancelled() {
            // The connection's worker died; a new connection serves the next writes.
            match options.connect().await {
                Ok(fresh) => {
                    tracing::warn!("reopened the database's writing connection");
                    connection = fresh;
                }
                Err(error) => tracing::error!(%error, "cannot reopen the database"),
            }
        }
    }
    if let Err(error) = connection.close().await {
        tracing::warn!(%error, "closing the database's writing connection failed");
    }
}

/// Runs `batch` in one transaction. Returns the transaction's failure, if it failed; each
/// job also keeps its own result.
///
/// Round trips to the connection's worker thread: a [`Statements`] write alone is one query
/// with its `BEGIN IMMEDIATE` and `COMMIT`; in a bigger batch, each [`Statements`] write is
/// one query with its savepoint, between one `BEGIN` and one `COMMIT`. The queries' text
/// depends only on the kind of write, so sqlx's statement cache keeps them prepared.
async fn commit_batch(
    connection: &mut SqliteConnection,
    batch: &mut [Box<dyn Job>],
    stats: &WriterStats,
) -> Option<StoreError> {
    if let [job] = batch
        && let Some(statements) = job.statements()
    {
        match statements
            .execute_between(connection, "BEGIN IMMEDIATE;\n", "COMMIT;")
            .await
        {
            Ok(()) => {
                stats
                    .one_query
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                job.ran();
                return None;
            }
            Err(error) => {
                // Undo what the query did before it failed (SQLite may have rolled back
                // already; then this fails harmlessly), then run it again step by step so
                // that the write gets its own error and the transaction its own.
                tracing::debug!(%error, "a write failed; running it again step by step");
                stats
                    .retried
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let _ = connection.execute("ROLLBACK").await;
            }
        }
    }
    if let Err(error) = connection.execute("BEGIN IMMEDIATE").await {
        return Some(error.into());
    }
    let outcome: Result<(), sqlx::Error> = async {
        if let [job] = batch {
            // Alone in its transaction: its failure is the transaction's.
            if !job.run(connection).await {
                connection.execute("ROLLBACK").await?;
                return Ok(());
            }
        } else {
            for job in batch.iter_mut() {
                job.run_in_savepoint(connection).await?;
            }
        }
        connection.execute("COMMIT").await?;
        Ok(())
    }
    .await;
    match outcome {
        Ok(()) => None,
        Err(error) => {
            // SQLite may have rolled back already (a full disk, an I/O error); then this
            // fails harmlessly with "no transaction is active".
            let _ = connection.execute("ROLLBACK").await;
            // A write's own failure (say, the disk filled up during it) usually broke the
            // transaction; it explains the others' failure better than the statement that
            // noticed.
            let cause = batch.iter().find_map(|job| job.error());
            Some(cause.unwrap_or_else(|| error.into()))
        }
    }
}

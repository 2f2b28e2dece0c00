//! The PostgreSQL read side. [`StoreReader`] is a blocking interface (the
//! host calls it from `spawn_blocking`, and the kernel's history lookup
//! calls it from a session's actor), so each read is handed to a small pool
//! of reader threads, each with its own connection and single-threaded
//! runtime, and the caller waits for the answer. Nothing here blocks inside
//! the host's async runtime, so no runtime is ever entered twice.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::runtime::Runtime;
use tokio_postgres::{Client, Row};

use super::{connect, describe, escape_nul, unescape_nul};
use crate::storage::store::{
    AnswerKind, CredentialRecord, CredentialRole, SessionRecord, SessionStateKey, SessionStatus, StoreError,
    StoreReader, StoredAnswer, StoredCheckpoint, StoredEvent,
};

/// Reader threads (each one connection).
const READERS: usize = 4;
/// Reads waiting for a reader thread before callers wait to enqueue.
const QUEUE: usize = 256;

type ReadFuture<'c, T> = Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + 'c>>;
type Job = Box<dyn FnOnce(&mut ReaderConnection) + Send>;

struct ReaderConnection {
    url: String,
    runtime: Runtime,
    client: Option<Client>,
}

impl ReaderConnection {
    fn run<T>(&mut self, read: impl for<'c> FnOnce(&'c Client) -> ReadFuture<'c, T>) -> Result<T, StoreError> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            let url = self.url.clone();
            self.client = Some(self.runtime.block_on(async move { connect(&url).await })?);
        }
        let client = self.client.as_ref().expect("connected above");
        self.runtime.block_on(read(client)).map_err(|e| StoreError::Backend(describe(&e)))
    }
}

/// Read connections (see the module documentation).
pub struct PgReader {
    jobs: SyncSender<Job>,
}

impl PgReader {
    pub(super) fn new(url: &str) -> Result<Self, StoreError> {
        let (jobs, queue) = sync_channel::<Job>(QUEUE);
        let queue: Arc<Mutex<Receiver<Job>>> = Arc::new(Mutex::new(queue));
        for i in 0..READERS {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| StoreError::Backend(format!("cannot start a PostgreSQL reader's runtime: {e}")))?;
            let mut connection = ReaderConnection { url: url.to_owned(), runtime, client: None };
            let queue = Arc::clone(&queue);
            std::thread::Builder::new()
                .name(format!("gaos-pg-read-{i}"))
                .spawn(move || {
                    loop {
                        let job = queue.lock().unwrap_or_else(PoisonError::into_inner).recv();
                        match job {
                            Ok(job) => job(&mut connection),
                            Err(_) => return,
                        }
                    }
                })
                .map_err(|e| StoreError::Backend(format!("cannot start a PostgreSQL reader thread: {e}")))?;
        }
        Ok(PgReader { jobs })
    }

    /// Run `read` on a reader thread and wait for its answer.
    fn read<T: Send + 'static>(
        &self,
        read: impl for<'c> FnOnce(&'c Client) -> ReadFuture<'c, T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, wait) = sync_channel(1);
        let job: Job = Box::new(move |connection| {
            let _ = answer.send(connection.run(read));
        });
        self.jobs.send(job).map_err(|_| StoreError::Backend("the PostgreSQL readers stopped".into()))?;
        wait.recv().map_err(|_| StoreError::Backend("a PostgreSQL reader stopped mid-read".into()))?
    }

    fn rows(&self, sql: &'static str, params: Vec<Param>) -> Result<Vec<Row>, StoreError> {
        self.read(move |client| {
            Box::pin(async move {
                let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    params.iter().map(Param::as_sql).collect();
                client.query(sql, &params).await
            })
        })
    }
}

/// An owned query parameter.
enum Param {
    Text(String),
    Int(i64),
    OptText(Option<String>),
}

impl Param {
    fn as_sql(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        match self {
            Param::Text(s) => s,
            Param::Int(n) => n,
            Param::OptText(s) => s,
        }
    }
}

fn text(s: &str) -> Param {
    Param::Text(s.to_owned())
}

fn unknown(what: &str, value: &str) -> StoreError {
    StoreError::Backend(format!("the store holds an unknown {what} {value:?}"))
}

fn session_row(row: &Row) -> Result<SessionRecord, StoreError> {
    let status: String = row.get(3);
    Ok(SessionRecord {
        id: row.get(0),
        game_id: row.get(1),
        created_at_ms: row.get(2),
        status: SessionStatus::parse(&status).ok_or_else(|| unknown("session status", &status))?,
        config: row.get(4),
        owner: row.get(5),
        epoch: row.get(6),
    })
}

fn event_row(row: &Row) -> StoredEvent {
    StoredEvent {
        seq: row.get::<_, i64>(0) as u64,
        event_id: row.get(1),
        transition_revision: row.get::<_, i64>(2) as u64,
        body: row.get(3),
    }
}

fn answer_row(row: &Row) -> Result<StoredAnswer, StoreError> {
    let kind: String = row.get(1);
    Ok(StoredAnswer {
        session_id: row.get(0),
        kind: AnswerKind::parse(&kind).ok_or_else(|| unknown("answer kind", &kind))?,
        key: unescape_nul(row.get(2)),
        status: u16::try_from(row.get::<_, i32>(3)).map_err(|_| unknown("answer status", "out of range"))?,
        request: row.get(4),
        body: row.get(5),
    })
}

pub(super) fn credential_row(row: &Row) -> Result<CredentialRecord, StoreError> {
    let role: String = row.get(2);
    Ok(CredentialRecord {
        token_hash: row.get(0),
        session_id: row.get(1),
        role: CredentialRole::parse(&role).ok_or_else(|| unknown("credential role", &role))?,
        seat: row.get(3),
        issued_at_ms: row.get(4),
    })
}

impl StoreReader for PgReader {
    fn list_sessions(&self, status: Option<SessionStatus>) -> Result<Vec<SessionRecord>, StoreError> {
        let rows = self.rows(
            "SELECT id, game_id, created_at_ms, status, config, owner, epoch FROM gaos_sessions
             WHERE $1::TEXT IS NULL OR status = $1 ORDER BY created_at_ms, id",
            vec![Param::OptText(status.map(|s| s.as_str().to_owned()))],
        )?;
        rows.iter().map(session_row).collect()
    }

    fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let rows = self.rows(
            "SELECT id, game_id, created_at_ms, status, config, owner, epoch FROM gaos_sessions WHERE id = $1",
            vec![text(id)],
        )?;
        rows.first().map(session_row).transpose()
    }

    fn load_events(&self, id: &str) -> Result<Vec<StoredEvent>, StoreError> {
        self.load_events_from(id, 0)
    }

    fn load_answers(&self, id: &str) -> Result<Vec<StoredAnswer>, StoreError> {
        let rows = self.rows(
            "SELECT session_id, kind, key, status, request, body FROM gaos_answers
             WHERE session_id = $1 AND kind <> 'act'",
            vec![text(id)],
        )?;
        rows.iter().map(answer_row).collect()
    }

    fn load_answer(&self, id: &str, kind: AnswerKind, key: &str) -> Result<Option<StoredAnswer>, StoreError> {
        let rows = self.rows(
            "SELECT session_id, kind, key, status, request, body FROM gaos_answers
             WHERE session_id = $1 AND kind = $2 AND key = $3",
            vec![text(id), text(kind.as_str()), Param::Text(escape_nul(key))],
        )?;
        rows.first().map(answer_row).transpose()
    }

    fn load_credentials(&self) -> Result<Vec<CredentialRecord>, StoreError> {
        let rows = self.rows(
            "SELECT token_hash, session_id, role, seat, issued_at_ms FROM gaos_credentials WHERE NOT revoked",
            Vec::new(),
        )?;
        rows.iter().map(credential_row).collect()
    }

    fn load_session_state(&self, id: &str) -> Result<Vec<(SessionStateKey, String)>, StoreError> {
        let rows = self.rows("SELECT key, value FROM gaos_session_state WHERE session_id = $1", vec![text(id)])?;
        Ok(rows
            .iter()
            .filter_map(|row| Some((SessionStateKey::parse(row.get::<_, &str>(0))?, row.get::<_, String>(1))))
            .collect())
    }

    fn load_checkpoint(&self, id: &str) -> Result<Option<StoredCheckpoint>, StoreError> {
        let rows = self.rows(
            "SELECT transition_revision, events, transcript_prefix, body FROM gaos_checkpoints WHERE session_id = $1",
            vec![text(id)],
        )?;
        Ok(rows.first().map(|row| StoredCheckpoint {
            session_id: id.to_owned(),
            transition_revision: row.get::<_, i64>(0) as u64,
            events: row.get::<_, i64>(1) as u64,
            transcript_prefix: row.get(2),
            body: row.get(3),
        }))
    }

    fn load_events_from(&self, id: &str, seq: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let rows = self.rows(
            "SELECT seq, event_id, transition_revision, body FROM gaos_events
             WHERE session_id = $1 AND seq >= $2 ORDER BY seq",
            vec![text(id), Param::Int(seq as i64)],
        )?;
        Ok(rows.iter().map(event_row).collect())
    }

    fn was_accepted(&self, id: &str, participant: &str, submission: &str, floor: u64) -> Result<bool, StoreError> {
        let rows = self.rows(
            "SELECT 1 FROM gaos_accepted WHERE session_id = $1 AND participant_id = $2 AND submission_id = $3
             AND transition_revision <= $4",
            vec![
                text(id),
                Param::Text(escape_nul(participant)),
                Param::Text(escape_nul(submission)),
                Param::Int(floor as i64),
            ],
        )?;
        Ok(!rows.is_empty())
    }

    fn load_credential(&self, token_hash: &str) -> Result<Option<CredentialRecord>, StoreError> {
        let rows = self.rows(
            "SELECT token_hash, session_id, role, seat, issued_at_ms FROM gaos_credentials
             WHERE token_hash = $1 AND NOT revoked",
            vec![text(token_hash)],
        )?;
        rows.first().map(credential_row).transpose()
    }

    fn load_session_credentials(&self, id: &str) -> Result<Vec<CredentialRecord>, StoreError> {
        let rows = self.rows(
            "SELECT token_hash, session_id, role, seat, issued_at_ms FROM gaos_credentials
             WHERE session_id = $1 AND NOT revoked",
            vec![text(id)],
        )?;
        rows.iter().map(credential_row).collect()
    }
}

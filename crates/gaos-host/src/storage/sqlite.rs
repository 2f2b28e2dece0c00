//! The embedded default store: SQLite in WAL mode with `synchronous=FULL`.
//!
//! One write connection (on the writer thread) commits groups of batches;
//! every commit fsyncs the WAL before any caller is answered. Checkpoints
//! (copying the WAL back into the database file) mostly run on a separate
//! checkpointer thread with its own connection, so the writer rarely stalls
//! on them; see [`Checkpointer`].

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::sqlite_history;
use super::store::{
    AnswerKind, CredentialRecord, CredentialRole, SessionRecord, SessionStateKey, SessionStatus, StoreError,
    StoreReader, StoreWriter, StoredAnswer, StoredCheckpoint, StoredEvent, WriteBatch, WriteOp,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    game_id TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    status TEXT NOT NULL,
    config TEXT NOT NULL,
    owner TEXT NOT NULL,
    epoch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    transition_revision INTEGER NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE TABLE IF NOT EXISTS answers (
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    status INTEGER NOT NULL,
    request TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (session_id, kind, key)
);
CREATE TABLE IF NOT EXISTS credentials (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    seat TEXT,
    issued_at_ms INTEGER NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS session_state (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
";

fn backend(e: rusqlite::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// Schema version kept in `PRAGMA user_version`.
///
/// Version 1 stored events and answers in `WITHOUT ROWID` tables keyed by
/// session. Their rows (events ~330 bytes, act answers ~500) are too large
/// for that layout: interior pages hold whole rows, so every group commit
/// dirtied a leaf and its interior pages per session and table, about ten
/// 4 KiB WAL frames per act (160 MB/s of WAL at 6,000 actions/s, measured).
/// Version 2 appends rows to rowid tables (the rows of a group commit share
/// a few pages at the right edge) and finds them through small unique
/// indexes, one leaf per session.
///
/// Version 3 adds the checkpoints and the accepted-identity index
/// (`sqlite_history.rs`), filled from the stored events on upgrade.
const SCHEMA_VERSION: i64 = 3;

/// Bring a database created by an earlier version up to [`SCHEMA_VERSION`]
/// (in one transaction; a fresh database only gets its version stamped).
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(backend)?;
    if version >= SCHEMA_VERSION {
        return Ok(());
    }
    let without_rowid = |table: &str| -> Result<bool, StoreError> {
        let sql: Option<String> = conn
            .query_row("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1", [table], |row| row.get(0))
            .optional()
            .map_err(backend)?;
        Ok(sql.is_some_and(|sql| sql.to_ascii_uppercase().contains("WITHOUT ROWID")))
    };
    let mut steps = String::from("BEGIN IMMEDIATE;\nDROP INDEX IF EXISTS events_by_id;\n");
    if without_rowid("events")? {
        steps.push_str(
            "ALTER TABLE events RENAME TO events_v1;
             CREATE TABLE events (
                 session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT NOT NULL,
                 transition_revision INTEGER NOT NULL, body TEXT NOT NULL, UNIQUE (session_id, seq));
             INSERT INTO events (session_id, seq, event_id, transition_revision, body)
                 SELECT session_id, seq, event_id, transition_revision, body FROM events_v1 ORDER BY session_id, seq;
             DROP TABLE events_v1;\n",
        );
    }
    if without_rowid("answers")? {
        steps.push_str(
            "ALTER TABLE answers RENAME TO answers_v1;
             CREATE TABLE answers (
                 session_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, status INTEGER NOT NULL,
                 request TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (session_id, kind, key));
             INSERT INTO answers (session_id, kind, key, status, request, body)
                 SELECT session_id, kind, key, status, request, body FROM answers_v1;
             DROP TABLE answers_v1;\n",
        );
    }
    if version < 3 {
        steps.push_str(sqlite_history::BACKFILL);
    }
    steps.push_str(&format!("PRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;"));
    conn.execute_batch(&steps).map_err(|e| {
        // The upgrade failed: its error is the one to report; a failed
        // rollback leaves the transaction to die with the connection.
        if let Err(rollback) = conn.execute_batch("ROLLBACK") {
            tracing::warn!(error = %rollback, "rolling back a failed schema upgrade failed");
        }
        StoreError::Backend(format!("cannot upgrade the database schema to version {SCHEMA_VERSION}: {e}"))
    })
}

/// Page cache of the write connection, in KiB (SQLite's default is 2 MiB).
/// Every group commit touches the hot index leaves of each busy session;
/// with the default cache those pages were spilled to the WAL
/// mid-transaction and read back, several times per commit. 32 MiB keeps the
/// hot set of thousands of sessions. Larger caches measured slower while
/// SQLite walked the whole cache at the end of most transactions; the page
/// cache layer ([`use_layered_page_cache`]) now skips that walk.
const WRITER_CACHE_KIB: i64 = 32 * 1024;

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "journal_mode", "WAL").map_err(backend)?;
    conn.pragma_update(None, "synchronous", "FULL").map_err(backend)?;
    conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(backend)?;
    Ok(())
}

/// Open (and create) the database file, returning the writer and a reader.
pub fn open(path: &Path) -> Result<(SqliteWriter, SqliteReader), StoreError> {
    use_layered_page_cache();
    let conn = Connection::open(path).map_err(backend)?;
    configure(&conn)?;
    conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB).map_err(backend)?;
    // The checkpointer thread copies the WAL in the background and lets the
    // writer start it over (see [`Checkpointer`]); the writer's own
    // automatic checkpoint is only a safety net that bounds the WAL if the
    // background thread ever falls behind.
    conn.pragma_update(None, "wal_autocheckpoint", WAL_SAFETY_FRAMES).map_err(backend)?;
    conn.set_prepared_statement_cache_capacity(32);
    conn.execute_batch(SCHEMA).map_err(backend)?;
    conn.execute_batch(sqlite_history::SCHEMA).map_err(backend)?;
    migrate(&conn)?;
    let gate = Arc::new(Mutex::new(()));
    let checkpointer = Checkpointer::spawn(path, Arc::clone(&gate))?;
    let reader = SqliteReader { path: path.to_path_buf(), pool: Mutex::new(Vec::new()) };
    Ok((SqliteWriter { conn, gate, _checkpointer: checkpointer }, reader))
}

/// Put `gaos_sqlite_pagecache`'s layer in front of SQLite's page cache before
/// this process opens its first connection: without it, most group commits
/// end with a walk over the writer's whole 32 MiB cache (7 % of host CPU
/// under load, BENCHMARKS.md). When a connection was opened earlier (a
/// program embedding the host that uses SQLite itself), SQLite refuses it
/// and the store runs on SQLite's cache as is: the same results, more CPU.
pub fn use_layered_page_cache() {
    static REPORTED: std::sync::Once = std::sync::Once::new();
    if let Err(e) = gaos_sqlite_pagecache::install() {
        REPORTED.call_once(|| tracing::info!(error = %e, "SQLite keeps its default page cache"));
    }
}

/// The write connection (lives on the writer thread).
pub struct SqliteWriter {
    conn: Connection,
    /// Held for each group commit; the checkpointer holds it for the short
    /// final pass that lets the WAL start over.
    gate: Arc<Mutex<()>>,
    _checkpointer: Checkpointer,
}

/// How often the checkpointer copies committed WAL frames into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);
/// WAL size (frames = pages, 192 MiB) from which the checkpointer arranges
/// for the WAL to start over. Each restart holds the writer for one short
/// pass (10–30 ms, mostly the database fsync), so rarer is better for tail
/// latency; the price is a longer WAL to replay after a crash.
const WAL_RESTART_FRAMES: i64 = 48 * 1024;
/// Unlocked passes tried before the final gated one (each copies what the
/// writer appended during the previous pass, so they shrink quickly).
const CONVERGE_PASSES: usize = 4;
/// A pass that copied fewer frames than this is small enough to repeat
/// with the writer held.
const CONVERGED_FRAMES: i64 = 512;
/// WAL size at which the writer checkpoints by itself after a commit: only
/// reached if the background thread stalls (SQLite's automatic checkpoint,
/// which runs inside the commit and so delays every caller of that group).
const WAL_SAFETY_FRAMES: i64 = 128 * 1024;

/// A thread with its own connection that checkpoints the WAL in the
/// background, concurrently with the writer, which keeps appending. Commits
/// stay durable on their own (each fsyncs the WAL); checkpoints only move
/// pages into the database file so the WAL can be reused.
///
/// A `PASSIVE` pass runs every [`CHECKPOINT_EVERY`]. Under sustained writes
/// such passes never catch up completely (the writer appends while they
/// copy), and SQLite only starts the WAL over when a write transaction
/// begins on a fully copied WAL, so the WAL would grow without bound (1.6 GB
/// in 15 s at full load, measured). So once the WAL holds
/// [`WAL_RESTART_FRAMES`], the thread runs passes back to back until one
/// copies little, then holds the writer's gate for one last short pass:
/// the next group commit finds the WAL fully copied and starts it over. The
/// writer waits for a few hundred frames of copying, not for the tens of
/// thousands its own automatic checkpoint would copy inside a commit (a
/// 30–40 ms stall every second at 6,000 actions/s, measured).
/// Stops when the [`SqliteWriter`] is dropped.
struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    fn spawn(path: &Path, gate: Arc<Mutex<()>>) -> Result<Checkpointer, StoreError> {
        let conn = Connection::open(path).map_err(backend)?;
        configure(&conn)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("gaos-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_EVERY) {
                    if let Err(e) = checkpoint_round(&conn, &gate, WAL_RESTART_FRAMES) {
                        tracing::warn!(error = %e, "a background WAL checkpoint failed; it is retried");
                    }
                }
            })
            .map_err(|e| StoreError::Backend(format!("cannot start the checkpointer thread: {e}")))?;
        Ok(Checkpointer { stop: Some(stop), thread: Some(thread) })
    }
}

/// One `PASSIVE` pass (never waits for the writer): the WAL's size and how
/// many of its frames are now in the database file (both -1 when the
/// database is not in WAL mode).
fn passive_pass(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| Ok((row.get(1)?, row.get(2)?)))
}

/// One background round: a pass, and when the WAL is large, the passes
/// that let it start over (see [`Checkpointer`]).
fn checkpoint_round(conn: &Connection, gate: &Mutex<()>, restart_frames: i64) -> rusqlite::Result<()> {
    let (mut log, mut copied) = passive_pass(conn)?;
    if log < restart_frames {
        return Ok(());
    }
    for _ in 0..CONVERGE_PASSES {
        let before = copied;
        (log, copied) = passive_pass(conn)?;
        if log < restart_frames || copied - before < CONVERGED_FRAMES {
            break;
        }
    }
    if log < restart_frames {
        return Ok(());
    }
    // A poisoned gate only means a writer panicked mid-commit; SQLite rolled
    // that transaction back, so checkpointing stays safe.
    let _held = gate.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    passive_pass(conn).map(|_| ())
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn apply_op(tx: &Connection, op: &WriteOp) -> Result<(), StoreError> {
    match op {
        WriteOp::CreateSession(r) => {
            let inserted = tx
                .execute(
                    "INSERT OR IGNORE INTO sessions (id, game_id, created_at_ms, status, config, owner, epoch)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![r.id, r.game_id, r.created_at_ms, r.status.as_str(), r.config, r.owner, r.epoch],
                )
                .map_err(backend)?;
            if inserted == 0 {
                let existing: Option<String> = tx
                    .query_row("SELECT config FROM sessions WHERE id = ?1", params![r.id], |row| row.get(0))
                    .optional()
                    .map_err(backend)?;
                if existing.as_deref() != Some(r.config.as_str()) {
                    return Err(StoreError::Conflict(format!("session {} already exists", r.id)));
                }
            }
        }
        WriteOp::SetStatus { session_id, status } => {
            tx.execute("UPDATE sessions SET status = ?2 WHERE id = ?1", params![session_id, status.as_str()])
                .map_err(backend)?;
        }
        WriteOp::Events { session_id, events } => {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO events (session_id, seq, event_id, transition_revision, body)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(backend)?;
            for e in events {
                let n = insert
                    .execute(params![session_id, e.seq as i64, e.event_id, e.transition_revision as i64, e.body])
                    .map_err(backend)?;
                if n == 0 {
                    // The position is taken: the same event again is a no-op.
                    let (event_id, body): (String, String) = tx
                        .prepare_cached("SELECT event_id, body FROM events WHERE session_id = ?1 AND seq = ?2")
                        .and_then(|mut select| {
                            select.query_row(params![session_id, e.seq as i64], |row| Ok((row.get(0)?, row.get(1)?)))
                        })
                        .map_err(backend)?;
                    if event_id != e.event_id {
                        return Err(StoreError::Conflict(format!(
                            "position {} of session {session_id} holds another event ({event_id}, not {})",
                            e.seq, e.event_id
                        )));
                    }
                    if body != e.body {
                        return Err(StoreError::Conflict(format!(
                            "event {} is already stored with other content",
                            e.event_id
                        )));
                    }
                }
            }
        }
        WriteOp::Answer(a) => {
            let n = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO answers (session_id, kind, key, status, request, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .and_then(|mut insert| {
                    insert.execute(params![a.session_id, a.kind.as_str(), a.key, a.status, a.request, a.body])
                })
                .map_err(backend)?;
            if n == 0 {
                let existing: (String, String) = tx
                    .query_row(
                        "SELECT request, body FROM answers WHERE session_id = ?1 AND kind = ?2 AND key = ?3",
                        params![a.session_id, a.kind.as_str(), a.key],
                        |row| Ok((row.get(0)?, row.get(1)?)),
                    )
                    .map_err(backend)?;
                if existing != (a.request.clone(), a.body.clone()) {
                    return Err(StoreError::Conflict(format!(
                        "{} answer {} is already stored",
                        a.kind.as_str(),
                        a.key
                    )));
                }
            }
        }
        WriteOp::Credential(c) => {
            tx.execute(
                "INSERT INTO credentials (token_hash, session_id, role, seat, issued_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![c.token_hash, c.session_id, c.role.as_str(), c.seat, c.issued_at_ms],
            )
            .map_err(backend)?;
        }
        WriteOp::RevokeSeatCredentials { session_id, seat } => {
            tx.execute(
                "UPDATE credentials SET revoked = 1 WHERE session_id = ?1 AND role = ?2 AND seat = ?3",
                params![session_id, CredentialRole::Seat.as_str(), seat],
            )
            .map_err(backend)?;
        }
        WriteOp::Accepted { session_id, identities } => {
            sqlite_history::put_accepted(tx, session_id, identities).map_err(backend)?;
        }
        WriteOp::Checkpoint(checkpoint) => {
            sqlite_history::put_checkpoint(tx, checkpoint).map_err(backend)?;
        }
        WriteOp::SessionState { session_id, key, value } => {
            tx.execute(
                "INSERT INTO session_state (session_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                params![session_id, key.as_str(), value],
            )
            .map_err(backend)?;
        }
    }
    Ok(())
}

/// Run one cached statement without parameters (transaction control: the
/// writer runs several per batch, so they are parsed once, not per batch).
fn run_cached(conn: &Connection, sql: &str) -> Result<(), StoreError> {
    conn.prepare_cached(sql).and_then(|mut statement| statement.execute([])).map(|_| ()).map_err(backend)
}

/// One node owns every session of an SQLite store (the data directory's
/// lock makes sure of it), so fences are not checked here.
impl StoreWriter for SqliteWriter {
    fn apply_group(&mut self, batches: &[WriteBatch]) -> Vec<Result<(), StoreError>> {
        let _gate = self.gate.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut results: Vec<Result<(), StoreError>> = Vec::with_capacity(batches.len());
        if let Err(err) = run_cached(&self.conn, "BEGIN IMMEDIATE") {
            return batches.iter().map(|_| Err(err.clone())).collect();
        }
        for batch in batches {
            let outcome = (|| {
                run_cached(&self.conn, "SAVEPOINT batch")?;
                for op in &batch.ops {
                    if let Err(e) = apply_op(&self.conn, op) {
                        run_cached(&self.conn, "ROLLBACK TO batch")?;
                        run_cached(&self.conn, "RELEASE batch")?;
                        return Err(e);
                    }
                }
                run_cached(&self.conn, "RELEASE batch")
            })();
            results.push(outcome);
        }
        if let Err(err) = run_cached(&self.conn, "COMMIT") {
            // Every batch of the group fails with the commit's error.
            if let Err(rollback) = self.conn.execute_batch("ROLLBACK") {
                tracing::warn!(error = %rollback, "rolling back a failed group commit failed");
            }
            return batches.iter().map(|_| Err(err.clone())).collect();
        }
        results
    }
}

/// Page cache of each pooled read connection, in KiB.
const READER_CACHE_KIB: i64 = 16 * 1024;

/// Read connections (a small pool; WAL lets them run beside the writer).
pub struct SqliteReader {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
}

impl SqliteReader {
    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let conn = match self.pool.lock().map_err(|_| StoreError::Backend("reader pool poisoned".into()))?.pop() {
            Some(conn) => conn,
            None => {
                let conn = Connection::open(&self.path).map_err(backend)?;
                conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(backend)?;
                // Point reads of evicted act answers run on every new
                // submission once a session's answers left memory.
                conn.pragma_update(None, "cache_size", -READER_CACHE_KIB).map_err(backend)?;
                conn
            }
        };
        let result = f(&conn).map_err(backend);
        if let Ok(mut pool) = self.pool.lock()
            && pool.len() < 4
        {
            pool.push(conn);
        }
        result
    }
}

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRecord> {
    let status: String = row.get(3)?;
    Ok(SessionRecord {
        id: row.get(0)?,
        game_id: row.get(1)?,
        created_at_ms: row.get(2)?,
        status: SessionStatus::parse(&status).unwrap_or(SessionStatus::Active),
        config: row.get(4)?,
        owner: row.get(5)?,
        epoch: row.get(6)?,
    })
}

impl StoreReader for SqliteReader {
    fn list_sessions(&self, status: Option<SessionStatus>) -> Result<Vec<SessionRecord>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, game_id, created_at_ms, status, config, owner, epoch FROM sessions
                 WHERE ?1 IS NULL OR status = ?1 ORDER BY created_at_ms, id",
            )?;
            let rows = stmt.query_map(params![status.map(SessionStatus::as_str)], session_row)?;
            rows.collect()
        })
    }

    fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.with(|conn| {
            conn.query_row(
                "SELECT id, game_id, created_at_ms, status, config, owner, epoch FROM sessions WHERE id = ?1",
                params![id],
                session_row,
            )
            .optional()
        })
    }

    fn load_events(&self, id: &str) -> Result<Vec<StoredEvent>, StoreError> {
        self.with(|conn| sqlite_history::load_events_from(conn, id, 0))
    }

    fn load_checkpoint(&self, id: &str) -> Result<Option<StoredCheckpoint>, StoreError> {
        self.with(|conn| sqlite_history::load_checkpoint(conn, id))
    }

    fn load_events_from(&self, id: &str, seq: u64) -> Result<Vec<StoredEvent>, StoreError> {
        self.with(|conn| sqlite_history::load_events_from(conn, id, seq))
    }

    fn was_accepted(&self, id: &str, participant: &str, submission: &str, floor: u64) -> Result<bool, StoreError> {
        self.with(|conn| sqlite_history::was_accepted(conn, id, participant, submission, floor))
    }

    fn load_answers(&self, id: &str) -> Result<Vec<StoredAnswer>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT session_id, kind, key, status, request, body FROM answers WHERE session_id = ?1 AND kind != 'act'",
            )?;
            let rows = stmt.query_map(params![id], answer_row)?;
            rows.collect()
        })
    }

    fn load_answer(&self, id: &str, kind: AnswerKind, key: &str) -> Result<Option<StoredAnswer>, StoreError> {
        self.with(|conn| {
            conn.prepare_cached(
                "SELECT session_id, kind, key, status, request, body FROM answers
                 WHERE session_id = ?1 AND kind = ?2 AND key = ?3",
            )?
            .query_row(params![id, kind.as_str(), key], answer_row)
            .optional()
        })
    }

    fn load_credentials(&self) -> Result<Vec<CredentialRecord>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT token_hash, session_id, role, seat, issued_at_ms FROM credentials WHERE revoked = 0",
            )?;
            let rows = stmt.query_map([], credential_row)?;
            rows.collect()
        })
    }

    fn load_credential(&self, token_hash: &str) -> Result<Option<CredentialRecord>, StoreError> {
        self.with(|conn| {
            conn.prepare_cached(
                "SELECT token_hash, session_id, role, seat, issued_at_ms FROM credentials
                 WHERE token_hash = ?1 AND revoked = 0",
            )?
            .query_row(params![token_hash], credential_row)
            .optional()
        })
    }

    fn load_session_credentials(&self, id: &str) -> Result<Vec<CredentialRecord>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT token_hash, session_id, role, seat, issued_at_ms FROM credentials
                 WHERE session_id = ?1 AND revoked = 0",
            )?;
            let rows = stmt.query_map(params![id], credential_row)?;
            rows.collect()
        })
    }

    fn load_session_state(&self, id: &str) -> Result<Vec<(SessionStateKey, String)>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn.prepare_cached("SELECT key, value FROM session_state WHERE session_id = ?1")?;
            let rows = stmt.query_map(params![id], |row| Ok((row.get::<_, String>(0)?, row.get(1)?)))?;
            let rows: Vec<(String, String)> = rows.collect::<rusqlite::Result<_>>()?;
            Ok(rows.into_iter().filter_map(|(key, value)| Some((SessionStateKey::parse(&key)?, value))).collect())
        })
    }
}

/// Maps a `SELECT token_hash, session_id, role, seat, issued_at_ms` row.
fn credential_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<CredentialRecord> {
    Ok(CredentialRecord {
        token_hash: row.get(0)?,
        session_id: row.get(1)?,
        role: {
            let role: String = row.get(2)?;
            CredentialRole::parse(&role).ok_or_else(|| unknown_text(2, "credential role", &role))?
        },
        seat: row.get(3)?,
        issued_at_ms: row.get(4)?,
    })
}

/// A text column holding a value this build does not know.
fn unknown_text(column: usize, what: &str, text: &str) -> rusqlite::Error {
    let message = format!("unknown {what} {text:?}");
    rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, message.into())
}

/// Maps a `SELECT session_id, kind, key, status, request, body` row.
fn answer_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredAnswer> {
    Ok(StoredAnswer {
        session_id: row.get(0)?,
        kind: {
            let kind: String = row.get(1)?;
            AnswerKind::parse(&kind).ok_or_else(|| unknown_text(1, "answer kind", &kind))?
        },
        key: row.get(2)?,
        status: row.get(3)?,
        request: row.get(4)?,
        body: row.get(5)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gaos_testkit::server::TempDir;

    fn event(seq: u64, event_id: &str, body: &str) -> WriteBatch {
        let stored = StoredEvent { seq, event_id: event_id.into(), transition_revision: seq, body: body.into() };
        WriteBatch::of(vec![WriteOp::Events { session_id: "s".into(), events: vec![stored] }])
    }

    #[test]
    fn events_are_idempotent_by_position_and_conflicts_are_refused() {
        let dir = TempDir::new("gaos-sqlite-events");
        let (mut writer, reader) = open(&dir.path().join("db")).expect("open");
        let results = writer.apply_group(&[event(0, "s:1:0", "{}"), event(0, "s:1:0", "{}")]);
        assert_eq!(results, vec![Ok(()), Ok(())], "the same event again is a no-op");
        let results =
            writer.apply_group(&[event(0, "s:1:0", "{\"x\":1}"), event(0, "s:9:0", "{}"), event(1, "s:1:1", "{}")]);
        assert!(matches!(&results[0], Err(StoreError::Conflict(m)) if m.contains("other content")), "{results:?}");
        assert!(matches!(&results[1], Err(StoreError::Conflict(m)) if m.contains("another event")), "{results:?}");
        assert_eq!(results[2], Ok(()), "a failing batch does not fail the others");
        let stored = reader.load_events("s").expect("load");
        assert_eq!(stored.iter().map(|e| e.event_id.as_str()).collect::<Vec<_>>(), ["s:1:0", "s:1:1"]);
    }

    #[test]
    fn a_version_1_database_is_upgraded_with_its_rows() {
        let dir = TempDir::new("gaos-sqlite-migrate");
        let path = dir.path().join("db");
        {
            let conn = Connection::open(&path).expect("open");
            conn.execute_batch(
                "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT NOT NULL,
                     transition_revision INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq))
                     WITHOUT ROWID;
                 CREATE UNIQUE INDEX events_by_id ON events (session_id, event_id);
                 CREATE TABLE answers (session_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
                     status INTEGER NOT NULL, request TEXT NOT NULL, body TEXT NOT NULL,
                     PRIMARY KEY (session_id, kind, key)) WITHOUT ROWID;
                 INSERT INTO events VALUES ('s', 1, 's:1:1', 1, '{\"b\":1}'), ('s', 0, 's:1:0', 1, '{\"a\":1}');
                 INSERT INTO answers VALUES ('s', 'attach', 'k', 200, 'r', '{}');",
            )
            .expect("a version 1 database");
        }
        let (mut writer, reader) = open(&path).expect("open upgrades");
        let stored = reader.load_events("s").expect("load");
        assert_eq!(
            stored.iter().map(|e| (e.seq, e.body.as_str())).collect::<Vec<_>>(),
            [(0, "{\"a\":1}"), (1, "{\"b\":1}")]
        );
        assert_eq!(reader.load_answers("s").expect("answers").len(), 1);
        let conn = Connection::open(&path).expect("open");
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
        assert_eq!(version, SCHEMA_VERSION);
        let old: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema
                 WHERE (name IN ('events', 'answers') AND sql LIKE '%WITHOUT ROWID%') OR name = 'events_by_id'",
                [],
                |r| r.get(0),
            )
            .expect("schema");
        assert_eq!(old, 0, "the version 1 tables and index are gone");
        // Identity by position still holds after the upgrade.
        let results = writer.apply_group(&[event(1, "s:1:1", "{\"b\":1}"), event(1, "s:1:1", "{}")]);
        assert_eq!(results[0], Ok(()));
        assert!(matches!(&results[1], Err(StoreError::Conflict(_))), "{results:?}");
        drop(writer);
        // Opening again leaves an upgraded database alone.
        let (_, reader) = open(&path).expect("reopen");
        assert_eq!(reader.load_events("s").expect("load").len(), 2);
    }

    #[test]
    fn background_rounds_keep_a_busy_wal_bounded() {
        let dir = TempDir::new("gaos-sqlite-restart");
        let path = dir.path().join("db");
        let (mut writer, _reader) = open(&path).expect("open");
        let conn = Connection::open(&path).expect("checkpoint connection");
        configure(&conn).expect("configure");
        let gate = Arc::clone(&writer.gate);
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writing = {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                // ~6,000 pages of rows, committed back to back as a busy host does.
                let body = "x".repeat(300);
                for group in 0..3_000u64 {
                    let batches: Vec<WriteBatch> = (0..8)
                        .map(|i| {
                            let seq = group * 8 + i;
                            event(seq, &format!("s:{seq}:0"), &body)
                        })
                        .collect();
                    assert!(writer.apply_group(&batches).iter().all(Result::is_ok));
                }
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            checkpoint_round(&conn, &gate, 256).expect("a round");
            std::thread::sleep(Duration::from_millis(10));
        }
        writing.join().expect("the writer thread");
        let wal = std::fs::metadata(dir.path().join("db-wal")).map(|m| m.len()).unwrap_or(0);
        // Never restarted, the WAL holds every page written (~50 MB, measured);
        // with the rounds it starts over every few hundred frames (a restart
        // can be missed when another checkpoint pass holds its locks, so
        // allow a few rounds' worth).
        assert!(wal < 16 * 1024 * 1024, "the WAL grew to {wal} bytes");
    }
}

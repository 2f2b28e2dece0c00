//! The PostgreSQL schema as versioned migrations, run at start. Two hosts
//! starting at once on an empty database both come up: the migrations run
//! under a transaction-scoped advisory lock, so the second host waits, then
//! finds them applied.
//!
//! The fence lives in the database: [`gaos_fence`] reads the session row
//! `FOR SHARE` inside the batch's own transaction and raises [`FENCED`] when
//! the row no longer names the batch's owner and epoch. A claim (which
//! updates the row) waits for every batch holding that share lock to commit,
//! and a batch that runs after the claim sees the new owner: under READ
//! COMMITTED a locking read always sees the newest committed row version,
//! which a plain `WHERE EXISTS` sub-select does not.

use tokio_postgres::Client;

use crate::storage::store::StoreError;

/// SQLSTATE raised by `gaos_fence` when a batch's fence does not hold.
pub(super) const FENCED: &str = "GAF01";
/// SQLSTATE raised when a write contradicts what is stored (an event at a
/// taken position with other content, an answer stored with other bytes).
pub(super) const CONFLICT: &str = "GAC01";

/// Key of the advisory lock the migrations run under.
const MIGRATION_LOCK: i64 = 0x6761_6f73_0001;

/// Every migration, in order; `version` is its index plus one.
const MIGRATIONS: &[&str] = &[
    // 1: the tables the SQLite store keeps, plus cluster membership.
    r#"
CREATE TABLE gaos_sessions (
    id TEXT PRIMARY KEY,
    game_id TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    status TEXT NOT NULL,
    config TEXT NOT NULL,
    owner TEXT NOT NULL,
    epoch BIGINT NOT NULL
);
CREATE INDEX gaos_sessions_by_status ON gaos_sessions (status, created_at_ms, id);
CREATE TABLE gaos_events (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event_id TEXT NOT NULL,
    transition_revision BIGINT NOT NULL,
    body TEXT NOT NULL,
    -- The fence epoch the event was written under (what a failover test
    -- checks: no event of a deposed owner's epoch after the move).
    epoch BIGINT NOT NULL,
    PRIMARY KEY (session_id, seq),
    UNIQUE (session_id, event_id)
);
CREATE TABLE gaos_answers (
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    status INTEGER NOT NULL,
    request TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, kind, key)
);
CREATE TABLE gaos_credentials (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    seat TEXT,
    issued_at_ms BIGINT NOT NULL,
    revoked BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX gaos_credentials_by_session ON gaos_credentials (session_id);
CREATE TABLE gaos_session_state (
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE TABLE gaos_checkpoints (
    session_id TEXT PRIMARY KEY,
    transition_revision BIGINT NOT NULL,
    events BIGINT NOT NULL,
    transcript_prefix TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE gaos_accepted (
    session_id TEXT NOT NULL,
    participant_id TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    transition_revision BIGINT NOT NULL,
    PRIMARY KEY (session_id, participant_id, submission_id)
);
CREATE TABLE gaos_nodes (
    node_id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    lease_ms BIGINT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Facts every host of the cluster must agree on (the SHA-256 of the
-- operator token and of the host key; never the secrets themselves).
CREATE TABLE gaos_cluster_facts (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE FUNCTION gaos_fence(p_session TEXT, p_owner TEXT, p_epoch BIGINT) RETURNS VOID AS $$
DECLARE
    row_owner TEXT;
    row_epoch BIGINT;
BEGIN
    SELECT owner, epoch INTO row_owner, row_epoch FROM gaos_sessions WHERE id = p_session FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'nobody' USING ERRCODE = 'GAF01';
    END IF;
    IF row_owner <> p_owner OR row_epoch <> p_epoch THEN
        RAISE EXCEPTION '%@%', row_owner, row_epoch USING ERRCODE = 'GAF01';
    END IF;
END $$ LANGUAGE plpgsql;

-- Events are idempotent by position: the same event again is a no-op, other
-- content at a taken position (or a taken event id) is a conflict.
CREATE FUNCTION gaos_put_events(p_session TEXT, p_seq BIGINT[], p_ids TEXT[], p_revisions BIGINT[],
                                p_bodies TEXT[], p_epoch BIGINT) RETURNS VOID AS $$
DECLARE
    i INTEGER;
    old_id TEXT;
    old_body TEXT;
BEGIN
    FOR i IN 1 .. coalesce(array_length(p_seq, 1), 0) LOOP
        INSERT INTO gaos_events (session_id, seq, event_id, transition_revision, body, epoch)
            VALUES (p_session, p_seq[i], p_ids[i], p_revisions[i], p_bodies[i], p_epoch)
            ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            SELECT event_id, body INTO old_id, old_body FROM gaos_events
                WHERE session_id = p_session AND seq = p_seq[i];
            IF NOT FOUND THEN
                RAISE EXCEPTION 'event % of session % is stored at another position', p_ids[i], p_session
                    USING ERRCODE = 'GAC01';
            ELSIF old_id <> p_ids[i] THEN
                RAISE EXCEPTION 'position % of session % holds another event (%, not %)', p_seq[i], p_session,
                    old_id, p_ids[i] USING ERRCODE = 'GAC01';
            ELSIF old_body <> p_bodies[i] THEN
                RAISE EXCEPTION 'event % is already stored with other content', p_ids[i] USING ERRCODE = 'GAC01';
            END IF;
        END IF;
    END LOOP;
END $$ LANGUAGE plpgsql;

CREATE FUNCTION gaos_put_answer(p_session TEXT, p_kind TEXT, p_key TEXT, p_status INTEGER, p_request TEXT,
                                p_body TEXT) RETURNS VOID AS $$
DECLARE
    old_request TEXT;
    old_body TEXT;
BEGIN
    INSERT INTO gaos_answers (session_id, kind, key, status, request, body)
        VALUES (p_session, p_kind, p_key, p_status, p_request, p_body)
        ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        SELECT request, body INTO old_request, old_body FROM gaos_answers
            WHERE session_id = p_session AND kind = p_kind AND key = p_key;
        IF old_request <> p_request OR old_body <> p_body THEN
            RAISE EXCEPTION '% answer % is already stored', p_kind, p_key USING ERRCODE = 'GAC01';
        END IF;
    END IF;
END $$ LANGUAGE plpgsql;

CREATE FUNCTION gaos_create_session(p_id TEXT, p_game TEXT, p_created BIGINT, p_status TEXT, p_config TEXT,
                                    p_owner TEXT, p_epoch BIGINT) RETURNS VOID AS $$
BEGIN
    INSERT INTO gaos_sessions (id, game_id, created_at_ms, status, config, owner, epoch)
        VALUES (p_id, p_game, p_created, p_status, p_config, p_owner, p_epoch)
        ON CONFLICT DO NOTHING;
    IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM gaos_sessions WHERE id = p_id AND config = p_config) THEN
        RAISE EXCEPTION 'session % already exists', p_id USING ERRCODE = 'GAC01';
    END IF;
END $$ LANGUAGE plpgsql;
"#,
];

fn backend(what: &str, e: tokio_postgres::Error) -> StoreError {
    StoreError::Backend(format!("{what}: {}", super::describe(&e)))
}

/// Apply every migration the database has not seen, in one transaction
/// under the migration lock.
pub(super) async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(|e| backend("cannot start the schema transaction", e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| backend("cannot take the migration lock", e))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS gaos_schema_migrations (
             version INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await
    .map_err(|e| backend("cannot create the migrations table", e))?;
    let applied: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM gaos_schema_migrations", &[])
        .await
        .map_err(|e| backend("cannot read the schema version", e))?
        .get(0);
    let known = MIGRATIONS.len() as i32;
    if applied > known {
        return Err(StoreError::Backend(format!(
            "the database's schema is at version {applied}, newer than this build knows ({known}): upgrade gaos"
        )));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(applied as usize) {
        let version = index as i32 + 1;
        tx.batch_execute(migration).await.map_err(|e| backend(&format!("schema migration {version} failed"), e))?;
        tx.execute("INSERT INTO gaos_schema_migrations (version) VALUES ($1)", &[&version])
            .await
            .map_err(|e| backend("cannot record a schema migration", e))?;
        tracing::info!(version, "PostgreSQL schema migrated");
    }
    tx.commit().await.map_err(|e| backend("cannot commit the schema migrations", e))
}

/// The schema version this build migrates to.
pub fn schema_version() -> usize {
    MIGRATIONS.len()
}

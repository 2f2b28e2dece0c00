//! The SQLite tables behind long sessions (schema version 3): each
//! session's newest kernel checkpoint, and the index of accepted submission
//! identities the kernel's history lookup asks once a compacted kernel no
//! longer holds them.

use rusqlite::{Connection, OptionalExtension, params};

use super::store::{AcceptedIdentity, StoredCheckpoint, StoredEvent};

/// Tables added in schema version 3 (created on every open if missing).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT PRIMARY KEY,
    transition_revision INTEGER NOT NULL,
    events INTEGER NOT NULL,
    transcript_prefix TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS accepted (
    session_id TEXT NOT NULL,
    participant_id TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    transition_revision INTEGER NOT NULL,
    UNIQUE (session_id, participant_id, submission_id)
);
";

/// The upgrade step to version 3: identities accepted before this version
/// are indexed from their stored events, so a session from an older build
/// can be compacted too.
pub(super) const BACKFILL: &str = "
INSERT OR IGNORE INTO accepted (session_id, participant_id, submission_id, transition_revision)
    SELECT session_id, json_extract(body, '$.participantId'), json_extract(body, '$.submissionId'), transition_revision
    FROM events
    WHERE json_valid(body) AND json_extract(body, '$.kind') = 'intent-accepted'
      AND json_extract(body, '$.participantId') IS NOT NULL AND json_extract(body, '$.submissionId') IS NOT NULL;
";

pub(super) fn put_checkpoint(tx: &Connection, c: &StoredCheckpoint) -> rusqlite::Result<()> {
    // Only a newer checkpoint replaces the stored one (a batch retried
    // after a failure never moves it back).
    tx.prepare_cached(
        "INSERT INTO checkpoints (session_id, transition_revision, events, transcript_prefix, body)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (session_id) DO UPDATE SET transition_revision = excluded.transition_revision,
             events = excluded.events, transcript_prefix = excluded.transcript_prefix, body = excluded.body
         WHERE excluded.transition_revision > checkpoints.transition_revision",
    )?
    .execute(params![c.session_id, c.transition_revision as i64, c.events as i64, c.transcript_prefix, c.body])?;
    Ok(())
}

pub(super) fn put_accepted(tx: &Connection, session_id: &str, identities: &[AcceptedIdentity]) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO accepted (session_id, participant_id, submission_id, transition_revision)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    for identity in identities {
        insert.execute(params![
            session_id,
            identity.participant_id,
            identity.submission_id,
            identity.transition_revision as i64
        ])?;
    }
    Ok(())
}

pub(super) fn load_checkpoint(conn: &Connection, id: &str) -> rusqlite::Result<Option<StoredCheckpoint>> {
    conn.prepare_cached(
        "SELECT transition_revision, events, transcript_prefix, body FROM checkpoints WHERE session_id = ?1",
    )?
    .query_row(params![id], |row| {
        Ok(StoredCheckpoint {
            session_id: id.to_owned(),
            transition_revision: row.get::<_, i64>(0)? as u64,
            events: row.get::<_, i64>(1)? as u64,
            transcript_prefix: row.get(2)?,
            body: row.get(3)?,
        })
    })
    .optional()
}

pub(super) fn load_events_from(conn: &Connection, id: &str, seq: u64) -> rusqlite::Result<Vec<StoredEvent>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, event_id, transition_revision, body FROM events WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![id, seq as i64], |row| {
        Ok(StoredEvent {
            seq: row.get::<_, i64>(0)? as u64,
            event_id: row.get(1)?,
            transition_revision: row.get::<_, i64>(2)? as u64,
            body: row.get(3)?,
        })
    })?;
    rows.collect()
}

pub(super) fn was_accepted(
    conn: &Connection,
    id: &str,
    participant: &str,
    submission: &str,
    floor: u64,
) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM accepted WHERE session_id = ?1 AND participant_id = ?2 AND submission_id = ?3
             AND transition_revision <= ?4",
        )?
        .query_row(params![id, participant, submission, floor as i64], |_| Ok(()))
        .optional()?
        .is_some())
}

#[cfg(test)]
mod tests {
    use gaos_testkit::server::TempDir;

    use super::super::sqlite::open;
    use super::super::store::StoreReader;

    #[test]
    fn upgrading_a_version_2_database_indexes_the_identities_its_events_accepted() {
        let dir = TempDir::new("gaos-sqlite-v3");
        let path = dir.path().join("db");
        {
            let conn = rusqlite::Connection::open(&path).expect("open");
            conn.execute_batch(
                "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT NOT NULL,
                     transition_revision INTEGER NOT NULL, body TEXT NOT NULL, UNIQUE (session_id, seq));
                 INSERT INTO events VALUES
                     ('s', 0, 's:1:0', 1, '{\"kind\":\"intent-accepted\",\"participantId\":\"a\",\"submissionId\":\"a:0\"}'),
                     ('s', 1, 's:2:0', 2, '{\"kind\":\"resolution\"}'),
                     ('s', 2, 's:3:0', 3, 'not json');
                 PRAGMA user_version = 2;",
            )
            .expect("a version 2 database");
        }
        let (_writer, reader) = open(&path).expect("open upgrades");
        assert!(reader.was_accepted("s", "a", "a:0", 1).expect("lookup"), "indexed from its event");
        assert!(!reader.was_accepted("s", "a", "a:0", 0).expect("lookup"), "only at or below the floor asked");
        assert!(!reader.was_accepted("s", "b", "a:0", 5).expect("lookup"));
        assert_eq!(reader.load_events_from("s", 1).expect("tail").len(), 2);
        assert_eq!(reader.load_checkpoint("s").expect("none yet"), None);
    }
}

//! The layer under a workload that makes SQLite renumber pages (random keys
//! into indexes), grow and roll back transactions, shrink the file (VACUUM),
//! and change the database under a second connection's cache: every read must match a model, the
//! database must pass SQLite's own integrity check, and the layer must have
//! both skipped truncations (the point of it) and forwarded the ones that
//! drop pages (rollbacks, another connection's writes).
//!
//! One test per file: the layer must be installed before the process opens
//! its first connection.

use std::collections::BTreeMap;

use rusqlite::{Connection, params};

/// A small deterministic generator (xorshift64*), so a failure replays.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn open(path: &std::path::Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "cache_size", -32 * 1024).unwrap();
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, k TEXT NOT NULL, v TEXT NOT NULL);
         CREATE UNIQUE INDEX IF NOT EXISTS rows_by_k ON rows (k);",
    )
    .unwrap();
    conn
}

fn contents(conn: &Connection) -> BTreeMap<String, String> {
    let mut select = conn.prepare("SELECT k, v FROM rows ORDER BY k").unwrap();
    select.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn pages_renumbered_rolled_back_and_changed_elsewhere_read_back_as_written() {
    gaos_sqlite_pagecache::install().expect("installed before the first connection");
    assert!(gaos_sqlite_pagecache::installed());

    let dir = std::env::temp_dir().join(format!("gaos-pagecache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("layered.db");
    let _ = std::fs::remove_file(&path);
    let writers = [open(&path), open(&path)];
    let mut model: BTreeMap<String, String> = BTreeMap::new();
    let mut draws = Draws(0x9E37_79B9_7F4A_7C15);

    for round in 0..400u64 {
        // Alternate connections now and then: the other one's cache must
        // notice the change (SQLite resets it, a truncation to nothing).
        let conn = &writers[usize::from(round % 7 == 0)];
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut pending = model.clone();
        for _ in 0..(20 + draws.below(60)) {
            let key = format!("k{:016x}", draws.next());
            let value = "v".repeat(1 + draws.below(300) as usize);
            if draws.below(10) == 0 {
                // A savepoint that grows the database and is rolled back.
                conn.execute_batch("SAVEPOINT s").unwrap();
                conn.execute("INSERT OR REPLACE INTO rows (k, v) VALUES (?1, ?2)", params![key, value]).unwrap();
                conn.execute_batch("ROLLBACK TO s; RELEASE s").unwrap();
            } else if draws.below(8) == 0 && !pending.is_empty() {
                let victim = pending.keys().nth(draws.below(pending.len() as u64) as usize).unwrap().clone();
                conn.execute("DELETE FROM rows WHERE k = ?1", params![victim]).unwrap();
                pending.remove(&victim);
            } else {
                conn.execute("INSERT OR REPLACE INTO rows (k, v) VALUES (?1, ?2)", params![key, value]).unwrap();
                pending.insert(key, value);
            }
        }
        if round % 5 == 3 {
            // The whole transaction is rolled back: pages it added past the
            // old end of the database must leave the cache.
            conn.execute_batch("ROLLBACK").unwrap();
        } else {
            conn.execute_batch("COMMIT").unwrap();
            model = pending;
        }
        if round % 50 == 49 {
            for reader in &writers {
                assert_eq!(contents(reader), model, "round {round}");
            }
        }
        if round % 100 == 60 {
            // The database shrinks under both caches: VACUUM rewrites it
            // smaller, and the WAL is checkpointed into the file and truncated.
            conn.execute_batch(
                "DELETE FROM rows WHERE substr(k, 2, 1) IN ('0', '1', '2', '3');
                 VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .unwrap();
            model.retain(|key, _| !matches!(key.as_bytes()[1], b'0'..=b'3'));
            for reader in &writers {
                assert_eq!(contents(reader), model, "after VACUUM, round {round}");
            }
        }
    }

    for conn in &writers {
        let verdict: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
        assert_eq!(verdict, "ok");
        assert_eq!(contents(conn), model);
    }
    drop(writers);
    let reopened = open(&path);
    assert_eq!(contents(&reopened), model, "what a new connection reads from the file");
    drop(reopened);

    let seen = gaos_sqlite_pagecache::truncations();
    assert!(seen.skipped > 0, "the layer skipped no truncation: {seen:?}");
    assert!(seen.forwarded > 0, "the layer forwarded no truncation: {seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

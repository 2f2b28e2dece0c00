//! The SQLite store runs on `gaos_sqlite_pagecache`'s layer (its own file: the
//! layer goes in before the process's first connection): many sessions played
//! concurrently make the writer's index pages split and renumber, the layer
//! skips the commits' needless cache scans, and what a reopened host reads is
//! what was acknowledged, in a database SQLite finds intact.

use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::CreateRequest;
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_testkit::server::TempDir;

mod support;
use support::{json, submission};

const SESSIONS: usize = 24;
const ROUNDS: u64 = 60;

async fn open(path: &std::path::Path) -> Host {
    let (writer, reader) = gaos_host::storage::sqlite::open(path).expect("a database");
    let options = HostOptions { checkpoint_every: 16, ..HostOptions::new(gaos_games::GameRegistry::builtin()) };
    Host::open(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host").0
}

fn total(view: &str) -> Option<u64> {
    json(view).get("tick").and_then(|tick| tick.get("total")).and_then(Value::as_u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_on_the_layered_cache_read_back_what_was_acknowledged() {
    let dir = TempDir::new("gaos-page-cache");
    let path = dir.path().join("gaos.sqlite3");
    let host = open(&path).await;
    assert!(gaos_sqlite_pagecache::installed(), "the store opened SQLite's first connection, so the layer is in");
    let before = gaos_sqlite_pagecache::truncations();

    let mut ids = Vec::new();
    for i in 0..SESSIONS {
        let create =
            format!(r#"{{"game":"conformance/counter","sessionId":"paged-{i:02}","level":{{"rounds":1000}}}}"#);
        let request = CreateRequest::from_value(json(&create)).expect("a create request");
        host.create(&Caller::Operator, request).await.expect("created");
        ids.push(format!("paged-{i:02}"));
    }
    let mut plays = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let host = host.clone();
        let id = id.clone();
        plays.push(tokio::spawn(async move {
            let mut expected = 0;
            for revision in 0..ROUNDS {
                for (seat, n) in [("a", (revision + i as u64) % 4), ("b", revision % 3)] {
                    let caller = Caller::Seat { session_id: id.clone(), seat: seat.into() };
                    let answer = host.act(&caller, &id, Presented::default(), submission(&id, revision, seat, n)).await;
                    answer.unwrap_or_else(|e| panic!("{id} round {revision} seat {seat}: {e:?}"));
                    expected += n;
                }
            }
            (id, expected)
        }));
    }
    let mut expected = Vec::new();
    for play in plays {
        expected.push(play.await.expect("a session played"));
    }
    let seen = gaos_sqlite_pagecache::truncations();
    assert!(seen.skipped > before.skipped, "no commit skipped a cache scan: {before:?} → {seen:?}");
    drop(host);

    // SQLite's own check of every b-tree, then a host that reads it all back.
    let check = rusqlite::Connection::open(&path).expect("a connection");
    let verdict: String = check.query_row("PRAGMA integrity_check", [], |row| row.get(0)).expect("a verdict");
    assert_eq!(verdict, "ok");
    drop(check);
    let reopened = open(&path).await;
    for (id, sum) in expected {
        let seat = Caller::Seat { session_id: id.clone(), seat: "a".into() };
        let view = reopened.observe(&seat, &id).await.expect("observed");
        assert_eq!(total(&view.body), Some(sum), "{id}: {}", view.body);
    }
}

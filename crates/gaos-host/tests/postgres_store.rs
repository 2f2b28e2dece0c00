//! The PostgreSQL store behind the same seam as SQLite, on a real server
//! (`gaos_testkit::postgres`): the same writes read back the same way from
//! both stores, migrations run once when two hosts start at once, and a
//! batch whose fence no longer holds writes nothing.

use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::{ActRequest, CreateRequest};
use gaos_host::storage::{
    AcceptedIdentity, AnswerKind, CredentialRecord, CredentialRole, Fence, SessionRecord, SessionStateKey,
    SessionStatus, StoreError, StoreReader, StoreWriter, StoredAnswer, StoredCheckpoint, StoredEvent, WriteBatch,
    WriteOp,
};
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_testkit::postgres::{self, TestPostgres};
use gaos_testkit::server::TempDir;

fn record(id: &str) -> SessionRecord {
    SessionRecord {
        id: id.into(),
        game_id: "conformance/counter".into(),
        created_at_ms: 1,
        status: SessionStatus::Active,
        config: "{}".into(),
        owner: "node-a".into(),
        epoch: 1,
    }
}

fn event(seq: u64, body: &str) -> StoredEvent {
    StoredEvent { seq, event_id: format!("s:{seq}:0"), transition_revision: seq + 1, body: body.into() }
}

fn fence(epoch: i64) -> Fence {
    Fence { session_id: "s".into(), owner: "node-a".into(), epoch }
}

/// The same writes through a store, and what it reads back (as text, so
/// two stores compare).
fn exercise(writer: &mut dyn StoreWriter, reader: &dyn StoreReader) -> Vec<String> {
    let results = writer.apply_group(&[WriteBatch::of(vec![WriteOp::CreateSession(record("s"))])]);
    assert_eq!(results, vec![Ok(())]);
    let answer = StoredAnswer {
        session_id: "s".into(),
        kind: AnswerKind::Act,
        key: "a\u{0}a:0".into(),
        status: 202,
        request: "r".into(),
        body: "{\"x\":1}".into(),
    };
    let first = WriteBatch::fenced(
        vec![
            WriteOp::Events { session_id: "s".into(), events: vec![event(0, "{\"a\":1}"), event(1, "{\"b\":2}")] },
            WriteOp::Answer(answer.clone()),
            WriteOp::SessionState { session_id: "s".into(), key: SessionStateKey::Leases, value: "{}".into() },
            WriteOp::Credential(CredentialRecord {
                token_hash: "h1".into(),
                session_id: "s".into(),
                role: CredentialRole::Seat,
                seat: Some("a".into()),
                issued_at_ms: 5,
            }),
        ],
        fence(1),
    );
    let again = first.clone();
    let mut other_content = first.clone();
    other_content.ops.truncate(1);
    if let WriteOp::Events { events, .. } = &mut other_content.ops[0] {
        events[0].body = "{\"a\":9}".into();
    }
    let results = writer.apply_group(&[first, other_content]);
    assert_eq!(results[0], Ok(()));
    assert!(matches!(&results[1], Err(StoreError::Conflict(_))), "{results:?}");
    // The same events again are a no-op (credentials are not re-inserted).
    let mut replay = again;
    replay.ops.truncate(3);
    assert_eq!(writer.apply_group(&[replay]), vec![Ok(())]);
    let checkpoint = StoredCheckpoint {
        session_id: "s".into(),
        transition_revision: 2,
        events: 2,
        transcript_prefix: "00".into(),
        body: "{}".into(),
    };
    let mut older = checkpoint.clone();
    older.transition_revision = 1;
    older.body = "{\"old\":true}".into();
    let accepted =
        vec![AcceptedIdentity { participant_id: "a".into(), submission_id: "a:0".into(), transition_revision: 1 }];
    let results = writer.apply_group(&[
        WriteBatch::fenced(
            vec![WriteOp::Accepted { session_id: "s".into(), identities: accepted }, WriteOp::Checkpoint(checkpoint)],
            fence(1),
        ),
        WriteBatch::fenced(vec![WriteOp::Checkpoint(older)], fence(1)),
        WriteBatch::fenced(
            vec![
                WriteOp::SetStatus { session_id: "s".into(), status: SessionStatus::Terminal },
                WriteOp::RevokeSeatCredentials { session_id: "s".into(), seat: "a".into() },
            ],
            fence(1),
        ),
    ]);
    assert_eq!(results, vec![Ok(()), Ok(()), Ok(())]);
    let mut seen = Vec::new();
    let session = reader.load_session("s").expect("load").expect("a session");
    seen.push(format!("{} {} {}", session.id, session.status.as_str(), session.owner));
    for e in reader.load_events("s").expect("events") {
        seen.push(format!("event {} {} {} {}", e.seq, e.event_id, e.transition_revision, e.body));
    }
    seen.push(format!("tail {}", reader.load_events_from("s", 1).expect("tail").len()));
    seen.push(format!("{:?}", reader.load_answer("s", AnswerKind::Act, "a\u{0}a:0").expect("answer")));
    seen.push(format!("{:?}", reader.load_session_state("s").expect("state")));
    seen.push(format!("{:?}", reader.load_checkpoint("s").expect("checkpoint")));
    seen.push(format!("accepted {}", reader.was_accepted("s", "a", "a:0", 1).expect("lookup")));
    seen.push(format!("below {}", reader.was_accepted("s", "a", "a:0", 0).expect("lookup")));
    seen.push(format!("credentials {:?}", reader.load_credentials().expect("credentials")));
    seen.push(format!("revoked {:?}", reader.load_credential("h1").expect("credential")));
    seen.push(format!("list {}", reader.list_sessions(Some(SessionStatus::Terminal)).expect("list").len()));
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_writes_read_back_the_same_from_sqlite_and_postgresql() {
    let dir = TempDir::new("gaos-store-parity");
    let (mut sqlite_writer, sqlite_reader) =
        gaos_host::storage::sqlite::open(&dir.path().join("db")).expect("an SQLite store");
    let sqlite = exercise(&mut sqlite_writer, &sqlite_reader);
    let url = postgres::server().database("parity");
    let (pg_writer, pg_reader) = gaos_host::storage::postgres::open(&url).await.expect("a PostgreSQL store");
    let pg = tokio::task::spawn_blocking(move || {
        let mut writer = pg_writer;
        exercise(&mut writer, &pg_reader)
    })
    .await
    .expect("the PostgreSQL run");
    assert_eq!(sqlite, pg);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_fence_moved_on_writes_nothing() {
    let url = postgres::server().database("fence");
    let (writer, reader) = gaos_host::storage::postgres::open(&url).await.expect("a PostgreSQL store");
    let checked_url = url.clone();
    tokio::task::spawn_blocking(move || {
        let mut writer = writer;
        assert_eq!(writer.apply_group(&[WriteBatch::of(vec![WriteOp::CreateSession(record("s"))])]), vec![Ok(())]);
        let batch = |seq: u64, epoch: i64| {
            WriteBatch::fenced(
                vec![WriteOp::Events { session_id: "s".into(), events: vec![event(seq, "{}")] }],
                fence(epoch),
            )
        };
        assert_eq!(writer.apply_group(&[batch(0, 1)]), vec![Ok(())]);
        // Another host claims the session: the row moves to node-b at epoch 2.
        TestPostgres::query(
            &checked_url,
            "UPDATE gaos_sessions SET owner = 'node-b', epoch = epoch + 1 WHERE id = 's'",
        );
        let results = writer.apply_group(&[batch(1, 1), WriteBatch::of(vec![WriteOp::CreateSession(record("t"))])]);
        match &results[0] {
            Err(StoreError::Fenced { now, epoch, .. }) => {
                assert_eq!(*epoch, 1);
                assert!(now.contains("node-b@2"), "{now}");
            }
            other => panic!("expected Fenced, got {other:?}"),
        }
        assert_eq!(results[1], Ok(()), "a fenced batch does not fail the others of its group");
        assert_eq!(reader.load_events("s").expect("events").len(), 1, "nothing of the fenced batch was written");
        // A batch of a session that is not stored at all is fenced too.
        let mut stray = batch(0, 1);
        stray.fence = Some(Fence { session_id: "nope".into(), owner: "node-a".into(), epoch: 1 });
        assert!(matches!(writer.apply_group(&[stray]).remove(0), Err(StoreError::Fenced { .. })));
    })
    .await
    .expect("the run");
    // Every stored event carries the epoch it was written under.
    assert_eq!(TestPostgres::query(&url, "SELECT string_agg(seq || '@' || epoch, ',') FROM gaos_events"), "0@1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_starting_at_once_on_an_empty_database_both_come_up() {
    let url = postgres::server().database("migrate");
    let (a, b) = tokio::join!(gaos_host::storage::postgres::open(&url), gaos_host::storage::postgres::open(&url));
    assert!(a.is_ok() && b.is_ok(), "{:?} {:?}", a.err(), b.err());
    let versions = TestPostgres::query(&url, "SELECT string_agg(version::text, ',') FROM gaos_schema_migrations");
    assert_eq!(
        versions,
        (1..=gaos_host::storage::postgres::schema_version()).map(|v| v.to_string()).collect::<Vec<_>>().join(",")
    );
}

fn counter() -> CreateRequest {
    CreateRequest::from_value(json(r#"{"game":"conformance/counter"}"#)).expect("a create request")
}

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_on_postgresql_plays_and_a_reopened_host_rehydrates_the_session() {
    let url = postgres::server().database("host");
    let open = || async {
        let (writer, reader) = gaos_host::storage::postgres::open(&url).await.expect("a PostgreSQL store");
        let options = HostOptions::new(gaos_games::GameRegistry::builtin());
        Host::open(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host").0
    };
    let host = open().await;
    let created = host.create(&Caller::Operator, counter()).await.expect("created");
    let id = json(&created.body).get("sessionId").and_then(Value::as_str).expect("an id").to_owned();
    let seat = |s: &str| Caller::Seat { session_id: id.clone(), seat: s.into() };
    for revision in 0..3u64 {
        for s in ["a", "b"] {
            let body = ActRequest::from_value(json(&format!(
                r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{id}","tickId":"{id}:{revision}",
                    "revision":{revision},"participantId":"{s}","submissionId":"{s}:{revision}","command":{{"n":1}}}}"#
            )));
            let answer = host.act(&seat(s), &id, Presented::default(), body).await.expect("acts");
            assert!(answer.status < 300, "{}", answer.body);
        }
    }
    let before = host.observe(&seat("a"), &id).await.expect("observe").body;
    let transcript = host.transcript(&Caller::Operator, &id).await.expect("transcript");
    drop(host);
    let again = open().await;
    assert_eq!(again.observe(&seat("a"), &id).await.expect("observe").body, before);
    assert_eq!(again.transcript(&Caller::Operator, &id).await.expect("transcript"), transcript);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deposed_hosts_act_is_fenced_and_stores_nothing() {
    let url = postgres::server().database("deposed");
    let (writer, reader) = gaos_host::storage::postgres::open(&url).await.expect("a PostgreSQL store");
    let options = HostOptions::new(gaos_games::GameRegistry::builtin());
    let (host, _) = Host::open(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host");
    let created = host.create(&Caller::Operator, counter()).await.expect("created");
    let id = json(&created.body).get("sessionId").and_then(Value::as_str).expect("an id").to_owned();
    let act = |seat: &str, revision: u64| {
        ActRequest::from_value(json(&format!(
            r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{id}","tickId":"{id}:{revision}",
                "revision":{revision},"participantId":"{seat}","submissionId":"{seat}:{revision}","command":{{"n":1}}}}"#
        )))
    };
    let a = Caller::Seat { session_id: id.clone(), seat: "a".into() };
    assert_eq!(host.act(&a, &id, Presented::default(), act("a", 0)).await.expect("acts").status, 202);
    let stored = TestPostgres::query(&url, &format!("SELECT count(*) FROM gaos_events WHERE session_id = '{id}'"));
    // Another host claims the session while this one still holds it in memory.
    TestPostgres::query(
        &url,
        &format!("UPDATE gaos_sessions SET owner = 'elsewhere', epoch = epoch + 1 WHERE id = '{id}'"),
    );
    let b = Caller::Seat { session_id: id.clone(), seat: "b".into() };
    let fenced = host.act(&b, &id, Presented::default(), act("b", 0)).await.expect_err("fenced");
    assert_eq!(fenced.code, gaos_session::ErrorCode::Fenced, "{fenced}");
    assert_eq!(
        TestPostgres::query(&url, &format!("SELECT count(*) FROM gaos_events WHERE session_id = '{id}'")),
        stored,
        "nothing of the deposed host's write was stored"
    );
    let metrics = host.metrics().render();
    assert!(metrics.contains("gaos_fenced_writes_total 1"), "{metrics}");
}

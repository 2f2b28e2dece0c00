//! The stored session configuration is typed: a session whose stored
//! configuration does not read back fails its load with `rehydrate_failed`
//! and is revoked (by the restart pass, or by the first request that loads
//! it), never runs on a default.

use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_testkit::server::TempDir;

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

async fn open(dir: &TempDir) -> Host {
    let (writer, reader) = gaos_host::storage::sqlite::open(&dir.path().join("gaos.sqlite3")).expect("a database");
    let options = HostOptions::new(gaos_games::GameRegistry::builtin());
    Host::open_lazy(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host")
}

async fn created(host: &Host, body: &str) -> String {
    let answer = host.create(&Caller::Operator, json(body)).await.expect("created");
    json(&answer.body).get("sessionId").and_then(Value::as_str).expect("sessionId").to_owned()
}

/// Rewrite the stored configuration of `id` with `edit`.
fn edit_config(dir: &TempDir, id: &str, edit: impl FnOnce(&mut gaos_json::Map)) {
    let db = rusqlite::Connection::open(dir.path().join("gaos.sqlite3")).expect("the database");
    let text: String =
        db.query_row("SELECT config FROM sessions WHERE id = ?1", [id], |row| row.get(0)).expect("a stored config");
    let mut config = json(&text).as_object().cloned().expect("an object");
    edit(&mut config);
    let text = gaos_json::canonical_json(&Value::Object(config));
    db.execute("UPDATE sessions SET config = ?1 WHERE id = ?2", [text.as_str(), id]).expect("rewritten");
}

fn observer(id: &str) -> Caller {
    Caller::Seat { session_id: id.to_owned(), seat: "a".into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_configuration_round_trips_and_an_unreadable_one_fails_the_load() {
    let dir = TempDir::new("gaos-stored-config");
    let (plain, limited, broken_policy, broken_cadence) = {
        let host = open(&dir).await;
        let limited_body = r#"{"game":"conformance/counter","limits":{"receiptRetention":4},
            "policy":{"durability":{"attachable":false},"evaluation":{"kind":"none"},"evidence":{"kind":"replay"},"publication":{"kind":"none"}}}"#;
        (
            created(&host, r#"{"game":"conformance/counter"}"#).await,
            created(&host, limited_body).await,
            created(&host, r#"{"game":"conformance/counter"}"#).await,
            created(&host, r#"{"game":"conformance/counter"}"#).await,
        )
    };
    // A policy that does not validate would once have become the host
    // default; a cadence that does not read would have failed late.
    edit_config(&dir, &broken_policy, |c| {
        c.insert("policy".into(), json(r#"{"evaluation":{"kind":"bogus"}}"#));
    });
    edit_config(&dir, &broken_cadence, |c| {
        c.insert("cadence".into(), json(r#"{"mode":"sometimes"}"#));
    });
    let host = open(&dir).await;
    for id in [&plain, &limited] {
        let answer = host.observe(&observer(id), id).await.expect("an intact configuration loads");
        assert_eq!(answer.status, 200);
    }
    // The typed policy came back: the session is still not attachable.
    let attach = host
        .attach(&observer(&limited), &limited, Default::default(), json(r#"{"requestId":"r-1"}"#))
        .await
        .expect_err("not attachable");
    assert_eq!(attach.code, gaos_session::ErrorCode::NotAttachable);
    // The restart pass fails their loads, says why, and revokes them.
    let report = host.rehydrate_active().await.expect("the pass");
    for (id, field) in [(&broken_policy, "policy"), (&broken_cadence, "cadence")] {
        let (_, why) = report.failed.iter().find(|(failed, _)| failed == id).expect("the load failed");
        assert!(why.contains(id.as_str()), "{why}");
        assert!(why.contains(field) || why.contains("mode"), "{why}");
        let refused = host.observe(&observer(id), id).await.expect_err("a revoked session");
        assert_eq!(refused.code, gaos_session::ErrorCode::Revoked, "{refused}");
        assert!(refused.message.contains("rehydrate_failed"), "{refused}");
    }
    assert!(report.loaded.contains(&plain) && report.loaded.contains(&limited));
    // A host that meets one on a request instead (no restart pass): the
    // load fails with `rehydrate_failed`, and the session is revoked so
    // every later call answers `410 revoked` from memory.
    let dir2 = TempDir::new("gaos-stored-config-lazy");
    let id = {
        let lazy = open(&dir2).await;
        created(&lazy, r#"{"game":"conformance/counter"}"#).await
    };
    edit_config(&dir2, &id, |c| {
        c.insert("policy".into(), json(r#"{"evaluation":{"kind":"bogus"}}"#));
    });
    let lazy = open(&dir2).await;
    for _ in 0..2 {
        let refused = lazy.observe(&observer(&id), &id).await.expect_err("an unreadable configuration");
        assert_eq!(refused.code, gaos_session::ErrorCode::Revoked, "{refused}");
        assert_eq!(refused.status.as_u16(), 410);
    }
    drop(lazy);
    let reopened = open(&dir2).await;
    let report = reopened.rehydrate_active().await.expect("the pass");
    assert!(!report.loaded.contains(&id) && report.failed.is_empty(), "revoked durably: {report:?}");
}

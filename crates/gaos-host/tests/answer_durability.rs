//! A submission that completes a turns window is persisted in two steps: the
//! ingest, then the resolution that carries the stored answer. When the
//! second step fails (here: an injected storage failure; in production: a
//! crash or a full disk), the client's exact retry must still resolve the
//! window, and every later retry must get the same bytes as that answer.

use std::sync::Arc;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::CreateRequest;
use gaos_host::storage::faults::FaultyStore;
use gaos_host::storage::{WriteBatch, WriteOp};
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_testkit::server::TempDir;

mod support;
use support::{json, submission};

/// Whether a batch persists a resolution.
fn resolves(batch: &WriteBatch) -> bool {
    batch.ops.iter().any(|op| match op {
        WriteOp::Events { events, .. } => events.iter().any(|e| e.body.contains(r#""kind":"resolution""#)),
        _ => false,
    })
}

fn create(text: &str) -> CreateRequest {
    CreateRequest::from_value(json(text)).expect("a create request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_a_failed_resolution_resolves_the_window_and_its_answer_sticks() {
    let dir = TempDir::new("gaos-answer-durability");
    let (writer, reader) = gaos_host::storage::sqlite::open(&dir.path().join("gaos.sqlite3")).expect("a database");
    let (store, faults) = FaultyStore::wrap(writer);
    let (host, _) = Host::open(
        Box::new(store),
        Arc::new(reader),
        "operator",
        HostOptions::new(gaos_games::GameRegistry::builtin()),
    )
    .await
    .expect("a host");
    let created = host.create(&Caller::Operator, create(r#"{"game":"conformance/counter"}"#)).await.expect("created");
    let id = json(&created.body).get("sessionId").and_then(Value::as_str).expect("sessionId").to_owned();
    let seat = |s: &str| Caller::Seat { session_id: id.clone(), seat: s.into() };

    let first = host.act(&seat("a"), &id, Presented::default(), submission(&id, 0, "a", 1)).await.expect("a acts");
    assert_eq!(first.status, 202);
    faults.fail_matching(Some(Box::new(resolves)));
    let failed = host.act(&seat("b"), &id, Presented::default(), submission(&id, 0, "b", 2)).await;
    assert_eq!(failed.expect_err("the resolution cannot be persisted").status.as_u16(), 503);
    faults.fail_matching(None);

    // b's ingest is durable; its exact retry resolves the window.
    let retry = host.act(&seat("b"), &id, Presented::default(), submission(&id, 0, "b", 2)).await.expect("retry");
    let answer = json(&retry.body);
    assert_eq!(retry.status, 200, "{}", retry.body);
    assert_eq!(answer.get("revision").and_then(Value::as_u64), Some(1), "the window resolved: {}", retry.body);
    assert_eq!(answer.get("tick").and_then(|t| t.get("total")).and_then(Value::as_u64), Some(3));
    for _ in 0..2 {
        let again = host.act(&seat("b"), &id, Presented::default(), submission(&id, 0, "b", 2)).await.expect("again");
        assert_eq!(again, retry, "every later retry returns the same bytes");
    }
    let transcript = host.transcript(&Caller::Operator, &id).await.expect("transcript");
    assert_eq!(transcript.matches(r#""kind":"resolution""#).count(), 1, "resolved exactly once");
    let next = host.act(&seat("a"), &id, Presented::default(), submission(&id, 1, "a", 1)).await.expect("round 2");
    assert_eq!(next.status, 202, "the session plays on: {}", next.body);
}

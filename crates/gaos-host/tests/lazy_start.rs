//! Issue 19 item 3: a host opened lazily reads only credentials; sessions
//! are rehydrated on first use or by the restart pass, a request racing the
//! pass waits for the same load, and the reconcile report waits for the pass.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use gaos_host::auth::Caller;
use gaos_host::lease::Presented;
use gaos_host::requests::{ActRequest, CreateRequest};
use gaos_host::{Host, HostOptions};
use gaos_json::Value;
use gaos_testkit::server::TempDir;

fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

fn submission(session: &str, revision: u64, seat: &str) -> ActRequest {
    ActRequest::from_value(json(&format!(
        r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"{session}","tickId":"{session}:{revision}",
            "revision":{revision},"participantId":"{seat}","submissionId":"{seat}:{revision}","command":{{"n":1}}}}"#
    )))
}

async fn open(dir: &TempDir, lazy: bool) -> Host {
    let (writer, reader) = gaos_host::storage::sqlite::open(&dir.path().join("gaos.sqlite3")).expect("a database");
    let options = HostOptions::new(gaos_games::GameRegistry::builtin());
    if lazy {
        Host::open_lazy(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host")
    } else {
        Host::open(Box::new(writer), Arc::new(reader), "operator", options).await.expect("a host").0
    }
}

/// A counter session with `rounds` resolved windows; returns its id.
async fn played(host: &Host, rounds: u64) -> String {
    let created = host
        .create(
            &Caller::Operator,
            CreateRequest::from_value(json(r#"{"game":"conformance/counter","level":{"rounds":100}}"#))
                .expect("a create request"),
        )
        .await
        .expect("created");
    let id = json(&created.body).get("sessionId").and_then(Value::as_str).expect("sessionId").to_owned();
    for revision in 0..rounds {
        for seat in ["a", "b"] {
            let caller = Caller::Seat { session_id: id.clone(), seat: seat.into() };
            let answer =
                host.act(&caller, &id, Presented::default(), submission(&id, revision, seat)).await.expect("acts");
            assert!(answer.status < 300, "{}", answer.body);
        }
    }
    id
}

fn seat_a(id: &str) -> Caller {
    Caller::Seat { session_id: id.to_owned(), seat: "a".into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_host_loads_a_session_on_first_use_and_the_pass_finds_it_loaded() {
    let dir = TempDir::new("gaos-lazy-start");
    let (first, second) = {
        let host = open(&dir, false).await;
        (played(&host, 3).await, played(&host, 2).await)
    };
    let before = open(&dir, false).await.observe(&seat_a(&first), &first).await.expect("observed").body;

    let host = open(&dir, true).await;
    assert_eq!(host.metrics().live_sessions.load(Ordering::Relaxed), 0, "nothing is loaded before it is asked for");
    let observed = host.observe(&seat_a(&first), &first).await.expect("the first use loads it");
    assert_eq!(observed.body, before, "the lazily loaded session answers as a fully loaded one");
    assert_eq!(host.metrics().live_sessions.load(Ordering::Relaxed), 1, "only the session asked for");

    let report = host.rehydrate_active().await.expect("the restart pass");
    let mut loaded = report.loaded.clone();
    loaded.sort();
    let mut expected = vec![first.clone(), second];
    expected.sort();
    assert_eq!(loaded, expected, "the pass reports every active session, the one already loaded too");
    assert_eq!(host.metrics().live_sessions.load(Ordering::Relaxed), 2, "one actor each, never two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_racing_the_restart_pass_wait_for_the_same_load_and_the_report_waits_for_the_pass() {
    let dir = TempDir::new("gaos-lazy-race");
    let ids = {
        let host = open(&dir, false).await;
        let mut ids = Vec::new();
        for rounds in 1..=6 {
            ids.push(played(&host, rounds).await);
        }
        ids
    };
    let host = open(&dir, true).await;
    let early = tokio::time::timeout(Duration::from_millis(200), host.reconcile_report(&Caller::Operator)).await;
    assert!(early.is_err(), "the report is not answered before the pass has run");

    let pass = tokio::spawn({
        let host = host.clone();
        async move { host.rehydrate_active().await }
    });
    let observers = ids.iter().rev().map(|id| {
        let host = host.clone();
        let id = id.clone();
        async move { host.observe(&seat_a(&id), &id).await }
    });
    for observed in futures_util::future::join_all(observers).await {
        assert_eq!(observed.expect("a session being loaded is waited for, never refused").status, 200);
    }
    let report = host.reconcile_report(&Caller::Operator).await.expect("the report");
    assert_eq!(report.get("loaded").and_then(Value::as_u64), Some(6), "{}", gaos_json::canonical_json(&report));
    assert_eq!(pass.await.expect("the pass ran").expect("the pass").loaded.len(), 6);
    assert_eq!(host.metrics().live_sessions.load(Ordering::Relaxed), 6, "one actor per session");
}

//! A seat cannot bloat the host (issue 15, item 8), against the real server:
//! - a command larger than `--max-command-bytes` (default 16 KiB) is
//!   `413 command_too_large` and leaves nothing behind;
//! - requests for unknown session ids (many, long) leave no entry in the
//!   session map (`gaos_session_slots` on `/metrics`);
//! - a revoked session is answered without reading its event log again
//!   (`gaos_store_event_rows_total`, `gaos_store_session_loads_total`).

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// One value of `/metrics`.
#[track_caller]
fn metric(base: &str, name: &str) -> u64 {
    let text = get(base, "/metrics", None).text();
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} in /metrics:\n{text}"))
}

fn event_count(base: &str, op: &str, session: &Session) -> usize {
    transcript(base, op, session).1.len()
}

#[test]
fn a_command_over_the_size_limit_is_refused_and_stores_nothing() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let session = create_session(base, op, &json!({"game": "conformance/hilo", "seed": 1}));
    let tick = get(base, &session.path("tick"), Some(session.token("alice"))).json();
    let events = event_count(base, op, &session);
    let padded = |bytes: usize| json!({"card": 0, "junk": "x".repeat(bytes)});

    let refused = act(base, &session, "alice", &submission(&tick, "alice", "big", padded(17 * 1024)));
    assert_error(&refused, 413, "command_too_large");
    assert_eq!(event_count(base, op, &session), events, "nothing was recorded");
    // The same submission id is still free: nothing of the refused one stayed.
    let ok = act(base, &session, "alice", &submission(&tick, "alice", "big", json!({"card": 0})));
    assert!(ok.is_success(), "{}", ok.text());
    // Under the limit, the game decides (here: the junk field is refused by the game, not by size).
    let small = act(base, &session, "bob", &submission(&tick, "bob", "small", padded(1024)));
    assert_ne!(small.status, 413, "{}", small.text());

    let strict = TestServer::start_with(GAOS, &["--max-command-bytes", "64"]);
    let (base, op) = (&strict.base_url, &strict.operator_token);
    let session = create_session(base, op, &json!({"game": "conformance/hilo", "seed": 1}));
    let tick = get(base, &session.path("tick"), Some(session.token("alice"))).json();
    assert_error(&act(base, &session, "alice", &submission(&tick, "alice", "p", padded(80))), 413, "command_too_large");
    assert!(act(base, &session, "alice", &submission(&tick, "alice", "p", json!({"card": 0}))).is_success());
}

#[test]
fn unknown_session_ids_leave_no_entry_behind() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let session = create_session(base, op, &json!({"game": "conformance/hilo"}));
    assert_eq!(metric(base, "gaos_session_slots"), 1);
    for i in 0..400 {
        let id = format!("unknown-{i}-{}", "z".repeat(2_000));
        let answer = get(base, &format!("/v1/sessions/{id}/transcript"), Some(op));
        assert_error(&answer, 404, "unknown_session");
    }
    assert_eq!(metric(base, "gaos_session_slots"), 1, "400 unknown ids left nothing in the session map");
    assert_eq!(get(base, &session.path("tick"), Some(session.token("alice"))).status, 200);
}

#[test]
fn a_revoked_session_is_answered_without_reading_its_events_again() {
    let mut server = TestServer::start(GAOS);
    let session =
        create_session(&server.base_url, &server.operator_token, &json!({"game": "conformance/hilo", "seed": 2}));
    let stopped =
        post(&server.base_url, &session.path("stop"), Some(session.token("alice")), &json!({"reason": "done"}));
    assert_eq!(stopped.status, 200, "{}", stopped.text());
    server.kill();
    server.restart();
    let base = &server.base_url;
    let alice = session.token("alice");
    assert_error(&get(base, &session.path("tick"), Some(alice)), 410, "revoked");
    let (loads, rows) = (metric(base, "gaos_store_session_loads_total"), metric(base, "gaos_store_event_rows_total"));
    for _ in 0..100 {
        assert_error(&get(base, &session.path("tick"), Some(alice)), 410, "revoked");
    }
    assert_eq!(metric(base, "gaos_store_session_loads_total"), loads, "no further store reads");
    assert_eq!(metric(base, "gaos_store_event_rows_total"), rows, "its event log was never read again");
    assert_eq!(metric(base, "gaos_session_slots"), 0, "and it holds no entry in the session map");
}

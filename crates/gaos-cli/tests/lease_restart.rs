//! Restart over a lapsed claim (issue 7, acceptance 4; spec/lease.md §4 and
//! rule 9): the server is killed while a claim is live, stays down past the
//! claim's expiry, and comes back over the same data directory. The claim is
//! reported `expired` at `GET /v1/admin/reconcile`, the seat is paused (the
//! lapse is recorded), and the holder renews and finishes the game, whose
//! replay verifies.
//!
//! The test clock's offset does not survive a restart, so this test uses a
//! short real lease and a real wait while the server is down.

mod lease_support;

use std::time::Duration;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use lease_support::*;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// The short real lease of the session that lapses while the host is down.
const SHORT_LEASE_MS: u64 = 600;
/// How long the host stays down: past the short lease.
const DOWNTIME: Duration = Duration::from_millis(SHORT_LEASE_MS + 150);

/// `seat` marks `cell` at the current cursor; asserts it resolved.
#[track_caller]
fn play(base: &str, session: &Session, seat: &str, lease: Option<&Lease>, cell: u64, id: &str) {
    let envelope = envelope_of(base, session, seat);
    let response = act_as(base, session, seat, lease, &submission(&envelope, seat, id, json!({"cell": cell})));
    assert_eq!(response.status, 200, "{seat} plays {cell}: {}", response.text());
    assert_eq!(response.json()["revision"].as_u64(), envelope["revision"].as_u64().map(|r| r + 1));
}

fn claim_row(session: &Session, seat: &str) -> Value {
    json!({"sessionId": session.id, "seat": seat, "epoch": 1})
}

fn sorted(rows: &Value) -> Vec<Value> {
    let mut rows = rows.as_array().cloned().unwrap_or_default();
    rows.sort_by_key(|r| (r["sessionId"].to_string(), r["seat"].to_string()));
    rows
}

#[test]
fn a_restart_over_a_lapsed_claim_pauses_and_reports_it_and_the_session_finishes() {
    let mut server = TestServer::start_with(GAOS, &["--test-clock", "--lease-min-ms", "100"]);
    let dir = TempDir::new("gaos-lease-restart");
    let level = tictactoe_level();
    let (session, lease, kept, kept_lease) = {
        let (base, op) = (&server.base_url, &server.operator_token);
        // A session whose claims hold for the whole test: retained.
        let kept =
            create_session(base, op, &json!({"game": "conformance/tictactoe", "level": level, "seed": 2, "lease": {}}));
        let kept_lease = lease_of(&kept.created);
        // The session under test: x and o both hold short claims (o's is implicit).
        let session = create_session(
            base,
            op,
            &json!({"game": "conformance/tictactoe", "level": level, "seed": 2, "lease": {"durationMs": SHORT_LEASE_MS}}),
        );
        let lease = lease_of(&session.created);
        play(base, &session, "x", Some(&lease), 0, "x0");
        play(base, &session, "o", None, 3, "o0");
        (session, lease, kept, kept_lease)
    };
    // Down past the expiry of both short claims.
    server.kill();
    std::thread::sleep(DOWNTIME);
    server.restart();
    let (base, op) = (&server.base_url, &server.operator_token);

    let report = get(base, "/v1/admin/reconcile", Some(op));
    assert_eq!(report.status, 200, "{}", report.text());
    let report = report.json();
    assert_eq!(report["loaded"], json!(2), "both sessions were rehydrated: {report}");
    assert_eq!(sorted(&report["expired"]), sorted(&json!([claim_row(&session, "o"), claim_row(&session, "x")])));
    assert_eq!(sorted(&report["retained"]), vec![claim_row(&kept, "x")], "{report}");
    assert_eq!(report["failed"], json!([]));
    assert_error(&get(base, "/v1/admin/reconcile", Some(session.token("x"))), 403, "forbidden");

    // The lapses are recorded at start, without any call of the holders.
    let records = wait_for_lease_event(base, op, &session, "lease_expired", 2);
    assert_eq!(
        records,
        [
            json!({"event": "lease_expired", "seat": "o", "holderId": "bearer", "epoch": 1, "pausedSession": false}),
            json!({"event": "lease_expired", "seat": "x", "holderId": "creator", "epoch": 1, "pausedSession": false}),
        ]
    );
    // The world survived: both moves are there, and the seat is paused.
    let envelope = envelope_of(base, &session, "x");
    assert_eq!(envelope["revision"], json!(2));
    assert_eq!(envelope["tick"]["board"], json!("x..o....."));
    assert_eq!(lease_state(base, &session, "x", Some(&lease)), "lapsed");
    let (_, before) = transcript(base, op, &session);
    let refused = act_as(base, &session, "x", Some(&lease), &submission(&envelope, "x", "x1", json!({"cell": 1})));
    assert_error(&refused, 409, "lease_expired");
    assert_eq!(transcript(base, op, &session).1, before, "the refused act had no effect");

    // The holder renews and finishes (renewing before each move: the real lease is short).
    for (seat, cell, id) in [("x", 1, "x1"), ("o", 4, "o1"), ("x", 2, "x2")] {
        if seat == "x" {
            let renewed = renew(base, &session, "x", Some(&lease));
            assert_eq!(renewed.status, 200, "{}", renewed.text());
            assert_eq!(renewed.json()["state"], json!("active"));
            assert_eq!(renewed.json()["epoch"], json!(1), "renewal keeps the epoch");
        }
        play(base, &session, seat, (seat == "x").then_some(&lease), cell, id);
    }
    let (_, events) = transcript(base, op, &session);
    let mut identities = accepted_identities(&events);
    identities.sort();
    let expected: Vec<(String, String)> =
        ["o0", "o1", "x0", "x1", "x2"].iter().map(|s| (s[..1].to_owned(), (*s).to_owned())).collect();
    assert_eq!(identities, expected, "every move is in the transcript exactly once");
    let kinds_after: Vec<String> =
        lease_records(&events).iter().map(|r| format!("{}:{}", r["event"], r["seat"])).collect();
    assert_eq!(kinds_after[..3], ["\"lease_expired\":\"o\"", "\"lease_expired\":\"x\"", "\"lease_renewed\":\"x\""]);
    let result = finalize_and_verify(GAOS, base, dir.path(), &session, "x", "restart-over-lapse");
    assert_eq!(result["outcome"]["status"], json!("won"));

    // The retained claim still drives without renewal.
    assert_eq!(lease_state(base, &kept, "x", Some(&kept_lease)), "active");
    play(base, &kept, "x", Some(&kept_lease), 4, "kx0");
}

//! Controller leases (spec/lease.md §4) through the real `gaos serve` binary.
//! The host runs with `--test-clock`, so every expiry is crossed by moving
//! the host clock (`POST /v1/admin/clock`), never by sleeping; lease
//! durations are long in real time (5 s) so only the test clock lapses them.
//!
//! One test per line of §4, plus fencing, lease-unaware callers, the lease
//! event lane (transcript and stream) and the duration bounds.

mod lease_support;

use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use lease_support::*;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// Lease of the claims under test (real milliseconds: only the test clock crosses it).
const LEASE_MS: u64 = 5_000;
/// A clock step that crosses one lease.
const PAST_LEASE: u64 = LEASE_MS + 1_000;

fn server() -> TestServer {
    TestServer::start_with(GAOS, &["--test-clock", "--lease-min-ms", "100"])
}

/// A tictactoe session (x moves first) whose creator seat `x` holds a lease.
fn create_tictactoe(base: &str, op: &str, lease_ms: Option<u64>) -> (Session, Lease) {
    // The creator's claim is asked for (`"lease"`); without it the seat is free.
    let mut body = json!({"game": "conformance/tictactoe", "level": tictactoe_level(), "seed": 1, "lease": {}});
    if let Some(ms) = lease_ms {
        body["lease"] = json!({"durationMs": ms});
    }
    let session = create_session(base, op, &body);
    let lease = lease_of(&session.created);
    assert_eq!(lease.epoch, 1, "the creator's claim is the seat's first epoch");
    let ext = &session.created["extensions"]["gaos.host.lease"];
    assert_eq!(ext["durationMs"].as_u64(), Some(lease_ms.unwrap_or(300_000)), "{ext}");
    (session, lease)
}

/// `seat` puts its mark on `cell`, as submission `id`, at the current cursor.
fn play(base: &str, session: &Session, seat: &str, lease: Option<&Lease>, cell: u64, id: &str) -> Response {
    let envelope = envelope_of(base, session, seat);
    act_as(base, session, seat, lease, &submission(&envelope, seat, id, json!({"cell": cell})))
}

#[track_caller]
fn assert_resolved(response: &Response, revision: u64) {
    assert_eq!(response.status, 200, "a sequential move resolves at once: {}", response.text());
    assert_eq!(response.json()["revision"].as_u64(), Some(revision), "{}", response.text());
}

/// Every seat call on a session that must be gone: 410 `revoked`.
#[track_caller]
fn assert_all_revoked(base: &str, op: &str, session: &Session, lease: &Lease) {
    let x = session.token("x");
    let envelope_body = json!({
        "protocol": "gaos.ticks", "protocolVersion": "1.0", "sessionId": session.id, "tickId": "t", "revision": 0,
        "participantId": "x", "submissionId": "after-revocation", "command": {"cell": 8}
    });
    let attach_lease = json!({"requestId": "after-revocation", "lease": {"durationMs": LEASE_MS}});
    let calls: Vec<(&str, Response)> = vec![
        ("act (lease-aware)", act_as(base, session, "x", Some(lease), &envelope_body)),
        ("act (bearer)", act_as(base, session, "x", None, &envelope_body)),
        ("act (other seat)", act_as(base, session, "o", None, &json!({"participantId": "o", "sessionId": session.id}))),
        ("attach", seat_post(base, session, "x", "attach", None, &json!({"requestId": "after-revocation"}))),
        ("attach with a lease", seat_post(base, session, "o", "attach", None, &attach_lease)),
        ("renew", renew(base, session, "x", Some(lease))),
        ("renew (bearer)", renew(base, session, "x", None)),
        ("heartbeat", seat_post(base, session, "x", "lease/heartbeat", Some(lease), &json!({}))),
        ("pause", seat_post(base, session, "x", "pause", Some(lease), &json!({"reason": "again"}))),
        ("resume", seat_post(base, session, "x", "resume", Some(lease), &json!({}))),
        ("stop", seat_post(base, session, "x", "stop", Some(lease), &json!({"reason": "again"}))),
        ("operator pause", post(base, &session.path("pause"), Some(op), &json!({"seat": "x"}))),
        ("emergency stop again", post(base, &session.path("emergency-stop"), Some(op), &json!({}))),
        ("GET /lease", send_as(base, "GET", &session.path("lease"), x, Some(lease), None)),
        ("GET /tick", get(base, &session.path("tick"), Some(x))),
        ("GET /tick (spectator)", get(base, &session.path("tick"), Some(&session.spectator))),
        ("GET /snapshot", get(base, &session.path("snapshot"), Some(x))),
        ("GET /stream", get(base, &session.path("stream"), Some(x))),
        ("GET /replay", get(base, &session.path("replay"), Some(x))),
        ("finalize", post(base, &session.path("finalize"), Some(x), &json!({"requestId": "after-revocation"}))),
    ];
    for (what, response) in calls {
        assert_eq!(response.status, 410, "{what} on a revoked session answers 410: {}", response.text());
        assert_error(&response, 410, "revoked");
    }
}

/// §4: "A holder silent for longer than its lease loses nothing: lapse,
/// pause, renew, continue; the final replay verifies and equals the replay of
/// an uninterrupted run with the same commands."
#[test]
fn a_silent_holder_loses_nothing_and_its_replay_equals_the_uninterrupted_run() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-lease-silent");
    let moves = [("x", 0, "x0"), ("o", 3, "o0"), ("x", 1, "x1"), ("o", 4, "o1"), ("x", 2, "x2")];

    // The uninterrupted run: the same commands, nobody silent.
    let (straight, straight_lease) = create_tictactoe(base, op, None);
    for (i, (seat, cell, id)) in moves.iter().enumerate() {
        let lease = (*seat == "x").then_some(&straight_lease);
        assert_resolved(&play(base, &straight, seat, lease, *cell, id), i as u64 + 1);
    }
    finalize_and_verify(GAOS, base, dir.path(), &straight, "o", "uninterrupted");
    let straight_replay = download_replay(base, &straight, "o");
    assert_eq!(replay_extensions(&straight_replay), Vec::<Value>::new(), "nothing lapsed in the uninterrupted run");

    // The same game with x silent past its lease before each of its later moves.
    let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
    assert_resolved(&play(base, &session, "x", Some(&lease), 0, "x0"), 1);
    assert_resolved(&play(base, &session, "o", None, 3, "o0"), 2);
    for (i, (cell, id)) in [(1, "x1"), (2, "x2")].into_iter().enumerate() {
        let revision = 3 + 2 * i as u64;
        // x observes, then goes silent past its lease before submitting.
        let envelope = envelope_of(base, &session, "x");
        let body = submission(&envelope, "x", id, json!({"cell": cell}));
        advance_clock(base, op, PAST_LEASE);
        // Eager detection: the lapse is recorded without any call of the holder
        // (o's implicit claim of the same duration lapses with it).
        let records = recorded_lease_events(base, op, &session, "lease_expired", 2 * (i + 1));
        let lapse = records.iter().rev().find(|r| r["event"] == json!("lease_expired") && r["seat"] == json!("x"));
        assert_eq!(
            lapse,
            Some(
                &json!({"event": "lease_expired", "seat": "x", "holderId": "creator", "epoch": 1, "pausedSession": false})
            )
        );
        assert_eq!(lease_state(base, &session, "x", Some(&lease)), "lapsed", "the lapse paused the seat");

        // Acting on the lapsed claim: typed, recoverable, and without effect.
        let (_, before) = transcript(base, op, &session);
        let refused = act_as(base, &session, "x", Some(&lease), &body);
        assert_error(&refused, 409, "lease_expired");
        assert_eq!(refused.json()["seat"], json!("x"));
        assert_eq!(refused.json()["epoch"], json!(1));
        let heartbeat = seat_post(base, &session, "x", "lease/heartbeat", Some(&lease), &json!({}));
        assert_error(&heartbeat, 409, "lease_expired");
        assert_eq!(transcript(base, op, &session).1, before, "a refused dispatch changes nothing");
        assert_eq!(envelope_of(base, &session, "x")["revision"].as_u64(), Some(revision - 1));

        // Renew re-acquires the claim (same epoch) and the same submission goes through once.
        let renewed = renew(base, &session, "x", Some(&lease));
        assert_eq!(renewed.status, 200, "renew: {}", renewed.text());
        assert_eq!(renewed.json()["state"], json!("active"));
        assert_eq!(renewed.json()["epoch"], json!(1));
        assert_resolved(&act_as(base, &session, "x", Some(&lease), &body), revision);
        if i == 0 {
            assert_resolved(&play(base, &session, "o", None, 4, "o1"), revision + 1);
        }
    }
    let (_, events) = transcript(base, op, &session);
    let mut identities = accepted_identities(&events);
    identities.sort();
    let expected: Vec<(String, String)> =
        ["o0", "o1", "x0", "x1", "x2"].iter().map(|s| (s[..1].to_owned(), (*s).to_owned())).collect();
    assert_eq!(identities, expected, "every move is in the transcript exactly once");
    // Every lapse and renewal is an event: x's explicit renewals and o's
    // implicit ones (o plays with its bearer token only).
    let expected_lease_events = [
        ("lease_expired", "o"),
        ("lease_expired", "x"),
        ("lease_renewed", "x"),
        ("lease_renewed", "o"),
        ("lease_expired", "o"),
        ("lease_expired", "x"),
        ("lease_renewed", "x"),
    ];
    let expected: Vec<(Value, Value)> =
        expected_lease_events.iter().map(|(event, seat)| (json!(event), json!(seat))).collect();
    let recorded: Vec<(Value, Value)> =
        lease_records(&events).iter().map(|r| (r["event"].clone(), r["seat"].clone())).collect();
    assert_eq!(recorded, expected, "every lapse and renewal is an event");

    finalize_and_verify(GAOS, base, dir.path(), &session, "o", "interrupted");
    let replay = download_replay(base, &session, "o");
    let extensions = replay_extensions(&replay);
    assert!(extensions.iter().all(|r| r["lane"] == json!(LEASE_LANE)), "{extensions:?}");
    let in_replay: Vec<(Value, Value)> =
        extensions.iter().map(|r| (r["record"]["event"].clone(), r["record"]["seat"].clone())).collect();
    assert_eq!(in_replay, expected, "the lease events live in the extension lane of the replay");
    let (ours, theirs) = (gameplay(&replay), gameplay(&straight_replay));
    assert_eq!(ours["records"].as_array().map(Vec::len), theirs["records"].as_array().map(Vec::len));
    assert_eq!(ours, theirs, "the gameplay equals the uninterrupted run's");
    assert_eq!(ours["levels"][0]["result"]["status"], json!("won"));
}

/// §4: "After a lapse, a second controller can take the seat; the first can
/// never renew back in, even after the second also lapses." (Rule 1: one
/// writer per seat while a claim is live.)
#[test]
fn a_second_controller_takes_a_lapsed_seat_and_the_first_never_renews_back_in() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, first) = create_tictactoe(base, op, Some(LEASE_MS));
    let takeover = json!({"requestId": "controller-2", "lease": {"durationMs": LEASE_MS}});

    // While the first claim is live the seat has one writer.
    let refused = seat_post(base, &session, "x", "attach", None, &takeover);
    assert_error(&refused, 409, "writer_conflict");
    assert_eq!(refused.json()["holderId"], json!("creator"), "the conflict names the holder");
    assert_eq!(refused.json()["epoch"], json!(1));
    assert!(!refused.text().contains(&first.token), "the conflict never reveals the holder's token");

    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    let attached = seat_post(base, &session, "x", "attach", None, &takeover);
    assert_eq!(attached.status, 200, "takeover: {}", attached.text());
    let second = lease_of(&attached.json());
    assert_eq!(second.epoch, 2, "a takeover is a new epoch");
    assert_ne!(second.token, first.token);
    let records = session_lease_records(base, op, &session);
    assert_eq!(
        records.last(),
        Some(&json!({
            "event": "takeover", "seat": "x", "holderId": "attach:controller-2", "epoch": 2,
            "previousHolderId": "creator", "previousEpoch": 1
        }))
    );
    assert_eq!(lease_state(base, &session, "x", Some(&first)), "superseded");
    assert_eq!(lease_state(base, &session, "x", Some(&second)), "active");

    let superseded = |what: &str, response: Response| {
        assert_error(&response, 409, "writer_conflict");
        let body = response.json();
        assert_eq!(body["holderId"], json!("attach:controller-2"), "{what}: {body}");
        assert_eq!(body["epoch"], json!(2), "{what}: {body}");
    };
    let envelope = envelope_of(base, &session, "x");
    let old_move = submission(&envelope, "x", "x0-old", json!({"cell": 0}));
    superseded("renew", renew(base, &session, "x", Some(&first)));
    superseded("act", act_as(base, &session, "x", Some(&first), &old_move));
    superseded("heartbeat", seat_post(base, &session, "x", "lease/heartbeat", Some(&first), &json!({})));
    superseded("resume", seat_post(base, &session, "x", "resume", Some(&first), &json!({})));
    superseded("stop", seat_post(base, &session, "x", "stop", Some(&first), &json!({})));
    assert_resolved(&play(base, &session, "x", Some(&second), 0, "x0"), 1);

    // The second holder lapses too; the first still cannot renew back in.
    advance_clock(base, op, PAST_LEASE);
    let records = recorded_lease_events(base, op, &session, "lease_expired", 2);
    assert_eq!(
        records.last(),
        Some(&json!({
            "event": "lease_expired", "seat": "x", "holderId": "attach:controller-2", "epoch": 2,
            "pausedSession": false
        }))
    );
    assert_eq!(lease_state(base, &session, "x", Some(&second)), "lapsed");
    superseded("renew after the second lapsed", renew(base, &session, "x", Some(&first)));
    superseded("act after the second lapsed", act_as(base, &session, "x", Some(&first), &old_move));
    assert_eq!(lease_state(base, &session, "x", Some(&first)), "superseded");

    // The second holder renews (nobody took the seat since) and keeps it.
    let renewed = renew(base, &session, "x", Some(&second));
    assert_eq!(renewed.status, 200, "{}", renewed.text());
    assert_eq!(renewed.json()["epoch"], json!(2));
    let third = json!({"requestId": "controller-3", "lease": {"durationMs": LEASE_MS}});
    let refused = seat_post(base, &session, "x", "attach", None, &third);
    assert_error(&refused, 409, "writer_conflict");
    assert_eq!(refused.json()["holderId"], json!("attach:controller-2"));
    assert_eq!(
        kinds(&session_lease_records(base, op, &session)),
        ["lease_expired", "takeover", "lease_expired", "lease_renewed"]
    );
}

/// §4: "Renew never resumes a deliberate pause; resume without a live claim
/// fails." Pausing is free (the holder, a superseded holder, the operator);
/// resuming is driving.
#[test]
fn renew_never_resumes_a_deliberate_pause_and_resume_needs_a_live_claim() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
    let envelope = envelope_of(base, &session, "x");
    let first_move = submission(&envelope, "x", "x0", json!({"cell": 0}));

    let paused = seat_post(base, &session, "x", "pause", Some(&lease), &json!({"reason": "state looks uncertain"}));
    assert_eq!(paused.status, 200, "{}", paused.text());
    assert_eq!(paused.json()["state"], json!("paused"));
    assert_eq!(paused.json()["pauseReasons"], json!(["state looks uncertain"]));
    assert_error(&act_as(base, &session, "x", Some(&lease), &first_move), 409, "session_paused");

    // Renewing a live claim keeps the pause.
    let renewed = renew(base, &session, "x", Some(&lease));
    assert_eq!(renewed.status, 200, "{}", renewed.text());
    assert_eq!(renewed.json()["state"], json!("paused"), "renew never resumes a deliberate pause");
    assert_error(&act_as(base, &session, "x", Some(&lease), &first_move), 409, "session_paused");

    // The claim lapses over the pause: resume needs a live claim.
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    assert_eq!(lease_state(base, &session, "x", Some(&lease)), "lapsed");
    let resume = seat_post(base, &session, "x", "resume", Some(&lease), &json!({}));
    assert_error(&resume, 409, "lease_expired");
    assert_eq!(resume.json()["epoch"], json!(1));
    assert_error(&act_as(base, &session, "x", Some(&lease), &first_move), 409, "lease_expired");

    // Renewal resumes only the pause the lapse caused: the seat stays paused.
    let renewed = renew(base, &session, "x", Some(&lease));
    assert_eq!(renewed.status, 200, "{}", renewed.text());
    assert_eq!(renewed.json()["state"], json!("paused"), "renew after a lapse over a pause stays paused");
    assert_error(&act_as(base, &session, "x", Some(&lease), &first_move), 409, "session_paused");
    let resumed = seat_post(base, &session, "x", "resume", Some(&lease), &json!({}));
    assert_eq!(resumed.status, 200, "{}", resumed.text());
    assert_eq!(resumed.json()["state"], json!("active"));
    assert_eq!(resumed.json()["pauseReasons"], json!([]));
    assert_resolved(&act_as(base, &session, "x", Some(&lease), &first_move), 1);
    assert_eq!(
        kinds(&session_lease_records(base, op, &session)),
        ["paused", "lease_expired", "lease_renewed", "resumed"]
    );

    // A superseded holder may still pause (free) but never resume.
    assert_resolved(&play(base, &session, "o", None, 3, "o0"), 2);
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 3);
    let attached =
        seat_post(base, &session, "x", "attach", None, &json!({"requestId": "c2", "lease": {"durationMs": LEASE_MS}}));
    assert_eq!(attached.status, 200, "{}", attached.text());
    let second = lease_of(&attached.json());
    let old_pause = seat_post(base, &session, "x", "pause", Some(&lease), &json!({"reason": "old holder saw smoke"}));
    assert_eq!(old_pause.status, 200, "pausing is free: {}", old_pause.text());
    assert_error(&seat_post(base, &session, "x", "resume", Some(&lease), &json!({})), 409, "writer_conflict");
    assert_error(&play(base, &session, "x", Some(&second), 1, "x1"), 409, "session_paused");
    assert_eq!(lease_state(base, &session, "x", Some(&second)), "paused", "a pause survives the takeover");
    let resumed = seat_post(base, &session, "x", "resume", Some(&second), &json!({}));
    assert_eq!(resumed.status, 200, "{}", resumed.text());

    // The operator may pause a seat but not resume it.
    let operator_pause = post(base, &session.path("pause"), Some(op), &json!({"seat": "x", "reason": "audit"}));
    assert_eq!(operator_pause.status, 200, "{}", operator_pause.text());
    assert_error(&play(base, &session, "x", Some(&second), 1, "x1"), 409, "session_paused");
    let operator_resume = post(base, &session.path("resume"), Some(op), &json!({"seat": "x"}));
    assert_error(&operator_resume, 403, "forbidden");
    assert_eq!(seat_post(base, &session, "x", "resume", Some(&second), &json!({})).status, 200);
    assert_resolved(&play(base, &session, "x", Some(&second), 1, "x1"), 3);
    let recorded: Vec<String> = session_lease_records(base, op, &session)
        .iter()
        .map(|r| format!("{}:{}", r["event"].as_str().unwrap_or("?"), r["seat"].as_str().unwrap_or("?")))
        .collect();
    assert_eq!(
        recorded,
        [
            "paused:x",
            "lease_expired:x",
            "lease_renewed:x",
            "resumed:x",
            // o's implicit claim (from its bearer move) lapses alongside.
            "lease_expired:o",
            "lease_expired:x",
            "takeover:x",
            "paused:x",
            "resumed:x",
            "paused:x",
            "resumed:x"
        ]
    );
}

/// §4: "Emergency stop is terminal; nothing recovers a revoked session" —
/// not renew, resume, acting, attaching, a lapse, nor a restart.
#[test]
fn emergency_stop_is_terminal_and_nothing_recovers_a_revoked_session() {
    let mut server = server();
    let (session, lease) = {
        let (base, op) = (&server.base_url, &server.operator_token);
        let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
        assert_resolved(&play(base, &session, "x", Some(&lease), 0, "x0"), 1);
        let stopped = post(base, &session.path("emergency-stop"), Some(op), &json!({"reason": "operator drill"}));
        assert_eq!(stopped.status, 200, "{}", stopped.text());
        assert_eq!(stopped.json(), json!({"sessionId": session.id, "status": "revoked", "reason": "operator drill"}));
        let (_, events) = transcript(base, op, &session);
        let last = events.last().expect("events");
        assert_eq!(last["kind"], json!("extension"));
        assert_eq!(last["lane"], json!(LEASE_LANE));
        assert_eq!(last["record"], json!({"event": "revoked", "reason": "operator drill", "by": "operator"}));

        assert_all_revoked(base, op, &session, &lease);
        // Time passing changes nothing either: no lapse is recorded for a revoked session.
        advance_clock(base, op, PAST_LEASE);
        assert_all_revoked(base, op, &session, &lease);
        assert_eq!(transcript(base, op, &session).1, events, "nothing is appended after the revocation");
        (session, lease)
    };
    // Nor does a restart.
    server.restart();
    let (base, op) = (&server.base_url, &server.operator_token);
    assert_all_revoked(base, op, &session, &lease);
    let report = get(base, "/v1/admin/reconcile", Some(op)).json();
    assert_eq!(report["loaded"], json!(0), "a revoked session is not rehydrated: {report}");
}

/// Rule 7: explicit stop revokes, and a lapsed holder may still stop.
#[test]
fn a_lapsed_holder_may_stop_and_the_stop_is_final() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    let stopped = seat_post(base, &session, "x", "stop", Some(&lease), &json!({"reason": "done thinking"}));
    assert_eq!(stopped.status, 200, "{}", stopped.text());
    assert_eq!(stopped.json(), json!({"sessionId": session.id, "status": "revoked", "reason": "done thinking"}));
    assert_eq!(
        session_lease_records(base, op, &session).last(),
        Some(&json!({"event": "revoked", "reason": "done thinking", "by": "seat:x"}))
    );
    assert_all_revoked(base, op, &session, &lease);
}

/// Rule 10: a call carrying an older epoch than the seat's current one is
/// rejected, and has no effect.
#[test]
fn a_call_with_an_older_epoch_is_fenced() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, first) = create_tictactoe(base, op, Some(LEASE_MS));
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    let attached =
        seat_post(base, &session, "x", "attach", None, &json!({"requestId": "c2", "lease": {"durationMs": LEASE_MS}}));
    let second = lease_of(&attached.json());
    assert_eq!(second.epoch, 2);
    let (_, before) = transcript(base, op, &session);

    let stale = second.at_epoch(1);
    let envelope = envelope_of(base, &session, "x");
    let body = submission(&envelope, "x", "x0", json!({"cell": 0}));
    for (what, response) in [
        ("act", act_as(base, &session, "x", Some(&stale), &body)),
        ("renew", renew(base, &session, "x", Some(&stale))),
        ("heartbeat", seat_post(base, &session, "x", "lease/heartbeat", Some(&stale), &json!({}))),
        ("resume", seat_post(base, &session, "x", "resume", Some(&stale), &json!({}))),
        ("old token at its own epoch", act_as(base, &session, "x", Some(&first), &body)),
    ] {
        assert_error(&response, 409, "writer_conflict");
        assert_eq!(response.json()["epoch"], json!(2), "{what}: the answer names the current epoch");
    }
    // A lease token presented for another seat does not belong to it.
    let o_envelope = envelope_of(base, &session, "o");
    let o_body = submission(&o_envelope, "o", "o-with-x-lease", json!({"cell": 4}));
    assert_error(&act_as(base, &session, "o", Some(&second), &o_body), 403, "capability_rejected");
    assert_eq!(transcript(base, op, &session).1, before, "fenced calls change nothing");
    assert_eq!(envelope_of(base, &session, "x")["revision"], json!(0));
    assert_resolved(&act_as(base, &session, "x", Some(&second), &body), 1);
}

/// Rule 11: callers that only send the seat's bearer token keep working
/// across a lapse: the host renews implicitly and records `lease_renewed`.
#[test]
fn lease_unaware_callers_keep_working_across_a_lapse() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-lease-bearer");
    let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
    // x acts under the creator's claim; o gets an implicit claim on its first act.
    assert_resolved(&play(base, &session, "x", None, 0, "x0"), 1);
    assert_eq!(lease_info(base, &session, "o", None)["state"], Value::Null, "o has no claim yet");
    assert_resolved(&play(base, &session, "o", None, 3, "o0"), 2);
    let o = lease_info(base, &session, "o", None);
    assert_eq!(
        (o["state"].clone(), o["holderId"].clone(), o["epoch"].clone()),
        (json!("active"), json!("bearer"), json!(1))
    );

    advance_clock(base, op, PAST_LEASE);
    let records = recorded_lease_events(base, op, &session, "lease_expired", 2);
    let lapsed: Vec<Value> = records.iter().map(|r| r["seat"].clone()).collect();
    assert_eq!(lapsed, [json!("o"), json!("x")], "both claims lapsed");
    assert_eq!(lease_state(base, &session, "x", None), "lapsed");

    assert_resolved(&play(base, &session, "x", None, 1, "x1"), 3);
    assert_resolved(&play(base, &session, "o", None, 4, "o1"), 4);
    let records = session_lease_records(base, op, &session);
    assert_eq!(
        records[2..],
        [
            json!({"event": "lease_renewed", "seat": "x", "holderId": "creator", "epoch": 1, "implicit": true}),
            json!({"event": "lease_renewed", "seat": "o", "holderId": "bearer", "epoch": 1, "implicit": true}),
        ],
        "the implicit renewals are recorded: {records:?}"
    );
    // The lease-aware holder of x still drives the same (renewed) claim.
    assert_eq!(lease_state(base, &session, "x", Some(&lease)), "active");
    assert_resolved(&play(base, &session, "x", Some(&lease), 2, "x2"), 5);
    finalize_and_verify(GAOS, base, dir.path(), &session, "x", "bearer-across-lapse");
}

/// Rule 3 and §4: every lapse, renewal, pause, resume, takeover and
/// revocation is an `extension` event on lane `gaos.lease` in the transcript,
/// and the same record reaches observers as an SSE `lease` event.
#[test]
fn every_lease_event_is_in_the_transcript_and_on_the_stream() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
    let seat_stream = SseReader::open(base, &session.path("stream"), session.token("x"));
    let spectator_stream = SseReader::open(base, &session.path("stream"), &session.spectator);
    wait_until(std::time::Duration::from_secs(5), "both streams open", || {
        !seat_stream.events().is_empty() && !spectator_stream.events().is_empty()
    });

    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    assert_eq!(renew(base, &session, "x", Some(&lease)).status, 200);
    assert_eq!(seat_post(base, &session, "x", "pause", Some(&lease), &json!({"reason": "look"})).status, 200);
    assert_eq!(seat_post(base, &session, "x", "resume", Some(&lease), &json!({})).status, 200);
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 2);
    let attached =
        seat_post(base, &session, "x", "attach", None, &json!({"requestId": "c2", "lease": {"durationMs": LEASE_MS}}));
    assert_eq!(attached.status, 200, "{}", attached.text());
    let stopped = post(base, &session.path("emergency-stop"), Some(op), &json!({"reason": "end of drill"}));
    assert_eq!(stopped.status, 200);

    let (_, events) = transcript(base, op, &session);
    let lease_events: Vec<&Value> = events.iter().filter(|e| e["kind"] == json!("extension")).collect();
    assert!(lease_events.iter().all(|e| e["lane"] == json!(LEASE_LANE)), "lane: {lease_events:?}");
    let records = lease_records(&events);
    assert_eq!(
        kinds(&records),
        ["lease_expired", "lease_renewed", "paused", "resumed", "lease_expired", "takeover", "revoked"]
    );
    assert_eq!(
        records[2],
        json!({"event": "paused", "seat": "x", "holderId": "creator", "epoch": 1, "reason": "look"})
    );
    assert_eq!(records[3], json!({"event": "resumed", "seat": "x", "holderId": "creator", "epoch": 1}));
    assert_eq!(records[1], json!({"event": "lease_renewed", "seat": "x", "holderId": "creator", "epoch": 1}));

    for (name, stream) in [("seat", seat_stream), ("spectator", spectator_stream)] {
        let mut streamed = Vec::new();
        wait_until(std::time::Duration::from_secs(5), &format!("the {name} stream's lease events"), || {
            streamed = stream.events().into_iter().filter(|e| e.event == "lease").collect();
            streamed.len() >= records.len()
        });
        let (_, all) = stream.stop();
        let streamed: Vec<Value> = all
            .into_iter()
            .filter(|e| e.event == "lease")
            .map(|e| serde_json::from_str(&e.data).expect("lease event data is JSON"))
            .collect();
        assert_eq!(streamed, records, "the {name} stream carries every lease record, in order");
    }
}

/// Rule 1: claim durations outside `[--lease-min-ms, --lease-max-ms]` are
/// refused at create and attach.
#[test]
fn lease_durations_outside_the_bounds_are_refused() {
    let server = TestServer::start_with(GAOS, &["--test-clock", "--lease-min-ms", "100", "--lease-max-ms", "60000"]);
    let (base, op) = (&server.base_url, &server.operator_token);
    let create =
        |lease: Value| post(base, "/v1/sessions", Some(op), &json!({"game": "conformance/tictactoe", "lease": lease}));
    for lease in [
        json!({"durationMs": 99}),
        json!({"durationMs": 60_001}),
        json!({"durationMs": 0}),
        json!({"durationMs": "5000"}),
        json!({"durationMs": 5000, "holder": "x"}),
        json!(5000),
    ] {
        assert_error(&create(lease.clone()), 400, "invalid_request");
    }
    // `{}` asks for the host default, clamped into the bounds.
    let defaulted = create(json!({}));
    assert_eq!(defaulted.status, 201, "{}", defaulted.text());
    assert_eq!(defaulted.json()["extensions"]["gaos.host.lease"]["durationMs"], json!(60_000));
    for ms in [100u64, 60_000] {
        let created = create(json!({"durationMs": ms}));
        assert_eq!(created.status, 201, "{}", created.text());
        assert_eq!(created.json()["extensions"]["gaos.host.lease"]["durationMs"], json!(ms));
    }
    // Without a lease field the creator takes no claim: the seat is free
    // for whoever drives it first (issue 18, item 6).
    let session = create_session(base, op, &json!({"game": "conformance/tictactoe"}));
    assert_eq!(session.created["extensions"].get("gaos.host.lease"), None, "{}", session.created);
    assert_eq!(lease_state(base, &session, "x", None), "none");

    for ms in [99u64, 60_001] {
        let body = json!({"requestId": format!("attach-{ms}"), "lease": {"durationMs": ms}});
        assert_error(&seat_post(base, &session, "o", "attach", None, &body), 400, "invalid_request");
    }
    let attached =
        seat_post(base, &session, "o", "attach", None, &json!({"requestId": "ok", "lease": {"durationMs": 100}}));
    assert_eq!(attached.status, 200, "{}", attached.text());
    assert_eq!(attached.json()["extensions"]["gaos.host.lease"]["durationMs"], json!(100));
}

/// `POST` as `seat` with its bearer token plus only `Gaos-Lease-Epoch` (a
/// caller that keeps the epoch but authenticates with the seat token).
fn post_with_epoch(base: &str, session: &Session, seat: &str, route: &str, epoch: u64, body: &Value) -> Response {
    let auth = format!("Bearer {}", session.token(seat));
    let epoch = epoch.to_string();
    let headers = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
        ("Authorization", auth.as_str()),
        ("Gaos-Lease-Epoch", epoch.as_str()),
    ];
    send(base, "POST", &session.path(route), &headers, Some(body.to_string().as_bytes()))
        .unwrap_or_else(|e| panic!("POST {route}: {e}"))
}

/// Rule 10 for callers without a lease token: a call that carries an older
/// `Gaos-Lease-Epoch` than the seat's current one is rejected too — acting,
/// lease routes and attach alike.
#[test]
fn a_bearer_call_carrying_an_older_epoch_is_fenced() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, _first) = create_tictactoe(base, op, Some(LEASE_MS));
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    let attached =
        seat_post(base, &session, "x", "attach", None, &json!({"requestId": "c2", "lease": {"durationMs": LEASE_MS}}));
    assert_eq!(lease_of(&attached.json()).epoch, 2);
    let (_, before) = transcript(base, op, &session);

    let envelope = envelope_of(base, &session, "x");
    let body = submission(&envelope, "x", "x0", json!({"cell": 0}));
    for (what, response) in [
        ("act", post_with_epoch(base, &session, "x", "actions", 1, &body)),
        ("renew", post_with_epoch(base, &session, "x", "lease/renew", 1, &json!({}))),
        ("heartbeat", post_with_epoch(base, &session, "x", "lease/heartbeat", 1, &json!({}))),
    ] {
        assert_error(&response, 409, "writer_conflict");
        assert_eq!(response.json()["epoch"], json!(2), "{what}: the answer names the current epoch");
    }
    // An attach carrying the old epoch cannot take the seat either, even once it lapsed.
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 2);
    let (_, before_attach) = transcript(base, op, &session);
    let stale_attach = json!({"requestId": "c3", "lease": {"durationMs": LEASE_MS}});
    assert_error(&post_with_epoch(base, &session, "x", "attach", 1, &stale_attach), 409, "writer_conflict");
    assert_eq!(transcript(base, op, &session).1, before_attach, "a fenced attach takes nothing");
    assert_eq!(before_attach[..before.len()], before[..], "fenced calls changed nothing before the lapse");
    assert_eq!(lease_info(base, &session, "x", None)["epoch"], json!(2));

    // The current epoch goes through (the lease-unaware act renews the lapsed claim).
    let answer = post_with_epoch(base, &session, "x", "actions", 2, &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
    let fresh = post_with_epoch(base, &session, "x", "attach", 2, &stale_attach);
    assert_error(&fresh, 409, "writer_conflict"); // the claim is live again: one writer per seat
}

/// Rule 2: every authorized dispatch by the holder re-arms the expiry (act,
/// heartbeat, pause, resume); reads (observe, snapshot, GET /lease) do not.
#[test]
fn use_renews_the_lease_and_reads_do_not() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, lease) = create_tictactoe(base, op, Some(LEASE_MS));
    let expires_at = || lease_info(base, &session, "x", Some(&lease))["expiresAt"].as_i64().expect("expiresAt");
    let issued = expires_at();

    advance_clock(base, op, 3_000);
    envelope_of(base, &session, "x");
    assert_eq!(get(base, &session.path("snapshot"), Some(session.token("x"))).status, 200);
    assert_eq!(send_as(base, "GET", &session.path("tick"), session.token("x"), Some(&lease), None).status, 200);
    assert_eq!(expires_at(), issued, "reads do not renew");

    // Each use slides the expiry to a full lease from now; without it the
    // claim would lapse at the next step.
    let mut last = issued;
    for what in ["act", "heartbeat", "pause", "resume"] {
        let response = match what {
            "act" => {
                let envelope = envelope_of(base, &session, "x");
                act_as(base, &session, "x", Some(&lease), &submission(&envelope, "x", "x0", json!({"cell": 0})))
            }
            "pause" => seat_post(base, &session, "x", "pause", Some(&lease), &json!({"reason": "r"})),
            route => seat_post(
                base,
                &session,
                "x",
                if route == "heartbeat" { "lease/heartbeat" } else { route },
                Some(&lease),
                &json!({}),
            ),
        };
        assert_eq!(response.status, 200, "{what}: {}", response.text());
        let now = expires_at();
        assert!(now >= last + 3_000, "{what} slid the expiry ({last} -> {now})");
        last = now;
        advance_clock(base, op, 3_000);
        let live = if what == "pause" { "paused" } else { "active" };
        assert_eq!(lease_state(base, &session, "x", Some(&lease)), live, "still live after {what}");
    }
    assert_eq!(
        session_lease_records(base, op, &session).iter().filter(|r| r["event"] == json!("lease_expired")).count(),
        0
    );
    advance_clock(base, op, LEASE_MS);
    assert_eq!(lease_state(base, &session, "x", Some(&lease)), "lapsed", "an idle holder lapses");
}

/// The test clock is an operator route of `--test-clock` hosts only.
#[test]
fn the_clock_route_exists_only_on_test_clock_hosts() {
    let plain = TestServer::start(GAOS);
    let response = post(&plain.base_url, "/v1/admin/clock", Some(&plain.operator_token), &json!({"advanceMs": 1000}));
    assert_error(&response, 404, "not_found");
    // Without flags the host's bounds are the spec's: at least 1 s, at most (and by default) 300 s.
    let create = |lease: Value| {
        let body = json!({"game": "conformance/tictactoe", "lease": lease});
        post(&plain.base_url, "/v1/sessions", Some(&plain.operator_token), &body)
    };
    assert_error(&create(json!({"durationMs": 999})), 400, "invalid_request");
    assert_error(&create(json!({"durationMs": 300_001})), 400, "invalid_request");
    assert_eq!(create(json!({"durationMs": 1_000})).status, 201);
    let default =
        create_session(&plain.base_url, &plain.operator_token, &json!({"game": "conformance/tictactoe", "lease": {}}));
    assert_eq!(default.created["extensions"]["gaos.host.lease"]["durationMs"], json!(300_000));

    let testing = server();
    let session = create_session(&testing.base_url, &testing.operator_token, &json!({"game": "conformance/counter"}));
    let by_seat = post(&testing.base_url, "/v1/admin/clock", Some(session.token("a")), &json!({"advanceMs": 1000}));
    assert_error(&by_seat, 403, "forbidden");
    let backwards =
        post(&testing.base_url, "/v1/admin/clock", Some(&testing.operator_token), &json!({"advanceMs": -1}));
    assert_eq!(backwards.status / 100, 4, "the clock never moves backwards: {}", backwards.text());
}

/// Rules 8 and 11: the host's implicit renewal for a lease-unaware caller is
/// never silent — also when the act it recovers is then refused because the
/// seat is deliberately paused. The renewal stands (as if the caller had
/// renewed and retried) and is recorded; the refused act changes nothing else.
#[test]
fn an_implicit_renewal_is_recorded_even_when_the_act_is_refused_as_paused() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, _lease) = create_tictactoe(base, op, Some(LEASE_MS));
    let paused = seat_post(base, &session, "x", "pause", None, &json!({"reason": "checking"}));
    assert_eq!(paused.status, 200, "{}", paused.text());
    advance_clock(base, op, PAST_LEASE);
    recorded_lease_events(base, op, &session, "lease_expired", 1);
    assert_eq!(lease_state(base, &session, "x", None), "lapsed");

    let envelope = envelope_of(base, &session, "x");
    let body = submission(&envelope, "x", "x0", json!({"cell": 0}));
    assert_error(&act_as(base, &session, "x", None, &body), 409, "session_paused");
    let state = lease_state(base, &session, "x", None);
    let (_, events) = transcript(base, op, &session);
    let records = lease_records(&events);
    assert_eq!(state, "paused", "the implicit renewal stands: the claim is live and still deliberately paused");
    assert_eq!(
        records.last(),
        Some(&json!({"event": "lease_renewed", "seat": "x", "holderId": "creator", "epoch": 1, "implicit": true})),
        "a live claim after a lapse was renewed visibly: {records:?}"
    );
    assert!(accepted_identities(&events).is_empty(), "the refused act was not registered");

    // The renewed claim survives a restart (the lease book was made durable with its event).
    let mut server = server;
    server.restart();
    let (base, op) = (&server.base_url, &server.operator_token);
    let report = get(base, "/v1/admin/reconcile", Some(op)).json();
    assert_eq!(report["retained"], json!([{"sessionId": session.id, "seat": "x", "epoch": 1}]), "{report}");
    assert_eq!(seat_post(base, &session, "x", "resume", None, &json!({})).status, 200);
    let answer = act_as(base, &session, "x", None, &body);
    assert_eq!(answer.status, 200, "{}", answer.text());
}

/// Rule 3: detection is eager — on the real clock too, a lapse is recorded
/// by a host timer, without any call of the holder (the operator's
/// transcript read does not check leases).
#[test]
fn a_lapse_is_detected_eagerly_on_the_real_clock() {
    let server = server();
    let (base, op) = (&server.base_url, &server.operator_token);
    let (session, lease) = create_tictactoe(base, op, Some(200));
    let records = wait_for_lease_event(base, op, &session, "lease_expired", 1);
    assert_eq!(
        records,
        [json!({"event": "lease_expired", "seat": "x", "holderId": "creator", "epoch": 1, "pausedSession": false})]
    );
    assert_eq!(lease_state(base, &session, "x", Some(&lease)), "lapsed");
}

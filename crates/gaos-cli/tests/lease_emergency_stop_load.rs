//! Emergency stop under load (issue 7, acceptance 5; spec/lease.md rule 7):
//! several threads hammer `POST /actions` on a long counter session while the
//! operator's emergency stop races them. Nothing commits after the stop's
//! `revoked` event, every acknowledged act is in the transcript before it,
//! and afterwards every call answers 410 `revoked`.

mod lease_support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use lease_support::*;
use serde_json::json;

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
/// Threads per seat.
const THREADS_PER_SEAT: usize = 3;
/// Acts acknowledged before the operator pulls the stop.
const ACKED_BEFORE_STOP: usize = 40;

/// One act a hammering thread sent.
#[derive(Debug, Clone)]
struct Sent {
    seat: &'static str,
    submission_id: String,
    sent_at: Instant,
    status: u16,
    code: Option<String>,
}

#[test]
fn an_emergency_stop_under_load_is_final_and_nothing_commits_after_it() {
    let server = TestServer::start_with(GAOS, &["--test-clock", "--lease-min-ms", "100"]);
    let (base, op) = (server.base_url.clone(), server.operator_token.clone());
    let session =
        create_session(&base, &op, &json!({"game": "conformance/counter", "level": {"rounds": 100_000}, "lease": {}}));
    let creator_lease = lease_of(&session.created);

    let log: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for seat in ["a", "b"] {
        for t in 0..THREADS_PER_SEAT {
            let (base, session, log, acknowledged, stop) =
                (base.clone(), session.clone(), Arc::clone(&log), Arc::clone(&acknowledged), Arc::clone(&stop));
            // One thread of the creator seat drives with its lease; the rest are lease-unaware.
            let lease = (seat == "a" && t == 0).then(|| creator_lease.clone());
            threads.push(std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let observed = get(&base, &session.path("tick"), Some(session.token(seat)));
                    let envelope = if observed.status == 200 {
                        observed.json()
                    } else {
                        assert_error(&observed, 410, "revoked");
                        // Keep acting at the last known cursor: the act must be refused too.
                        json!({"sessionId": session.id, "tickId": "gone", "revision": 0})
                    };
                    n += 1;
                    let id = format!("{seat}:{t}:{n}");
                    let body = submission(&envelope, seat, &id, json!({"n": 1}));
                    let sent_at = Instant::now();
                    let response = act_as(&base, &session, seat, lease.as_ref(), &body);
                    if matches!(response.status, 200 | 202) {
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                    let code = response.code();
                    log.lock().expect("log").push(Sent {
                        seat,
                        submission_id: id,
                        sent_at,
                        status: response.status,
                        code,
                    });
                }
            }));
        }
    }

    wait_until(Duration::from_secs(20), "acts acknowledged under load", || {
        acknowledged.load(Ordering::SeqCst) >= ACKED_BEFORE_STOP
    });
    let stopped = post(&base, &session.path("emergency-stop"), Some(&op), &json!({"reason": "load drill"}));
    let stop_answered = Instant::now();
    assert_eq!(stopped.status, 200, "{}", stopped.text());
    assert_eq!(stopped.json(), json!({"sessionId": session.id, "status": "revoked", "reason": "load drill"}));
    // Let the threads keep hammering the revoked session for a while.
    let after_stop =
        |log: &Mutex<Vec<Sent>>| log.lock().expect("log").iter().filter(|s| s.sent_at > stop_answered).count();
    wait_until(Duration::from_secs(10), "acts sent after the stop", || after_stop(&log) >= 4 * THREADS_PER_SEAT);
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().expect("a hammering thread panicked");
    }
    let log = log.lock().expect("log").clone();

    // Every answer is an acceptance, a loser of the race for a window, or revoked.
    for sent in &log {
        let ok = match sent.status {
            200 | 202 | 410 => true,
            409 => matches!(sent.code.as_deref(), Some("stale_tick" | "conflicting_intent")),
            _ => false,
        };
        assert!(ok, "unexpected answer under load: {sent:?}");
        if sent.status == 410 {
            assert_eq!(sent.code.as_deref(), Some("revoked"), "{sent:?}");
        }
        if sent.sent_at > stop_answered {
            assert_eq!(sent.status, 410, "an act sent after the stop answered must be refused: {sent:?}");
        }
    }
    assert!(log.iter().any(|s| s.status == 410), "some acts raced the stop and lost");

    // The stop's event is the last event: nothing committed after it.
    let (_, events) = transcript(&base, &op, &session);
    let revoked: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["kind"] == json!("extension") && e["record"]["event"] == json!("revoked"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(revoked, [events.len() - 1], "exactly one revoked event, and it is the last");
    assert_eq!(events[events.len() - 1]["lane"], json!(LEASE_LANE));
    assert_eq!(
        events[events.len() - 1]["record"],
        json!({"event": "revoked", "reason": "load drill", "by": "operator"})
    );

    // Every acknowledged act is in the transcript (before the stop), exactly once.
    let identities = accepted_identities(&events);
    let mut acked: Vec<(String, String)> = log
        .iter()
        .filter(|s| matches!(s.status, 200 | 202))
        .map(|s| (s.seat.to_owned(), s.submission_id.clone()))
        .collect();
    acked.sort();
    let mut committed = identities.clone();
    committed.sort();
    assert_eq!(committed, acked, "the transcript holds exactly the acknowledged acts");
    let resolutions = events.iter().filter(|e| e["kind"] == json!("resolution")).count();
    assert!(resolutions * 2 >= ACKED_BEFORE_STOP - 2, "the load resolved rounds: {resolutions}");

    // Afterwards every call answers 410 revoked, and the transcript stays as it was.
    let envelope = json!({"sessionId": session.id, "tickId": "t", "revision": 0});
    let calls: Vec<(&str, Response)> = vec![
        ("act", act_as(&base, &session, "a", None, &submission(&envelope, "a", "late", json!({"n": 1})))),
        (
            "act with the lease",
            act_as(&base, &session, "a", Some(&creator_lease), &submission(&envelope, "a", "late2", json!({"n": 1}))),
        ),
        ("renew", renew(&base, &session, "a", Some(&creator_lease))),
        ("resume", seat_post(&base, &session, "a", "resume", Some(&creator_lease), &json!({}))),
        ("heartbeat", seat_post(&base, &session, "b", "lease/heartbeat", None, &json!({}))),
        ("pause", seat_post(&base, &session, "b", "pause", None, &json!({}))),
        (
            "attach",
            seat_post(
                &base,
                &session,
                "b",
                "attach",
                None,
                &json!({"requestId": "late", "lease": {"durationMs": 1000}}),
            ),
        ),
        ("GET /tick", get(&base, &session.path("tick"), Some(session.token("b")))),
        ("GET /lease", get(&base, &session.path("lease"), Some(session.token("a")))),
        ("emergency stop", post(&base, &session.path("emergency-stop"), Some(&op), &json!({}))),
    ];
    for (what, response) in calls {
        assert_eq!(response.status, 410, "{what} after the stop: {}", response.text());
        assert_error(&response, 410, "revoked");
    }
    advance_clock(&base, &op, 600_000);
    assert_eq!(transcript(&base, &op, &session).1, events, "nothing is appended after the revocation");
}

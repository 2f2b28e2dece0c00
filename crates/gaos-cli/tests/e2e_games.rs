//! Every conformance game played to its end over HTTP against the real
//! `gaos serve` binary: two seats with their own tokens, attach receipts
//! (chained, digests recomputed client-side), finalize by a seat, and the
//! downloaded replay verified by `gaos replay verify`.
//!
//! Along the way each test pins the status mapping (create 201, pending 202,
//! resolved 200), byte-identical retries, and the terminal/finalized
//! lifecycle extensions.

use std::time::{Duration, Instant};

use gaos_kernel::commitment::{CommitmentBinding, commitment_hash};
use gaos_testkit::fixtures::hilo_deal;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");

/// Attach `first` then `second` (chained receipts, sequences 0 and 1).
fn attach_pair(server: &TestServer, session: &Session, first: &str, second: &str) -> (Value, Value) {
    let (base, op) = (&server.base_url, &server.operator_token);
    let a = attach_with_receipt(base, op, session, first, &format!("attach-{first}"), 0, None);
    let digest = a["receiptDigest"].as_str().expect("digest").to_owned();
    let b = attach_with_receipt(base, op, session, second, &format!("attach-{second}"), 1, Some(&digest));
    (a, b)
}

/// After the game moved on, the first attach request id cannot be reused,
/// and a fresh request id extends the chain.
fn attach_after_advance(server: &TestServer, session: &Session, seat: &str, previous: &Value) {
    let (base, op) = (&server.base_url, &server.operator_token);
    let reused = json!({"requestId": format!("attach-{seat}"), "participantId": seat});
    assert_error(
        &post(base, &session.path("attach"), Some(session.token(seat)), &reused),
        409,
        "attach_request_reused",
    );
    let link = previous["receiptDigest"].as_str().expect("digest");
    attach_with_receipt(base, op, session, seat, &format!("attach-{seat}-again"), 2, Some(link));
}

/// The seat's envelope once the game ended: done, terminal extension.
fn assert_terminal(server: &TestServer, session: &Session, seat: &str) -> Value {
    let envelope = tick(&server.base_url, session, session.token(seat));
    assert_eq!(envelope["tick"]["done"], json!(true), "the game is over: {envelope}");
    assert_eq!(envelope["tick"]["legalActions"], json!([]));
    assert_eq!(envelope["extensions"]["gaos.session.finalization"], json!({"status": "terminal"}));
    envelope
}

/// Acting after finalize is refused and changes nothing.
fn assert_closed_after_finalize(server: &TestServer, session: &Session, seat: &str) {
    let base = &server.base_url;
    let envelope = tick(base, session, session.token(seat));
    let body = submission(&envelope, seat, "after-finalize", json!({"n": 1}));
    assert_error(&act(base, session, seat, &body), 409, "session_finalized");
    let attach = json!({"requestId": "after-finalize"});
    assert_error(&post(base, &session.path("attach"), Some(session.token(seat)), &attach), 409, "session_finalized");
    assert_eq!(tick(base, session, session.token(seat)), envelope);
}

#[test]
fn counter_is_played_attached_finalized_and_verified() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-e2e-counter");
    let session = create_session(base, op, &json!({"game": "conformance/counter", "policy": receipts_policy()}));
    assert_eq!(session.seat_tokens.keys().map(String::as_str).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(session.created["tick"]["seat"], json!("a"), "the creator seat defaults to the first seat");

    play_simultaneous_window(base, &session, &[("a", json!({"n": 1})), ("b", json!({"n": 10}))], "r0");
    let (_, second) = attach_pair(&server, &session, "a", "b");
    play_simultaneous_window(base, &session, &[("b", json!({"n": 20})), ("a", json!({"n": 2}))], "r1");
    attach_after_advance(&server, &session, "a", &second);
    let last = play_simultaneous_window(base, &session, &[("a", json!({"n": 3})), ("b", json!({"n": 30}))], "r2");
    assert_eq!(last["tick"]["status"], json!("ended"));
    assert_eq!(last["tick"]["total"], json!(66));
    assert_eq!(last["extensions"]["gaos.session.finalization"], json!({"status": "terminal"}));

    let end = assert_terminal(&server, &session, "a");
    assert_eq!(end["tick"]["round"], json!(3));
    let (_, events) = transcript(base, op, &session);
    let mut identities = accepted_identities(&events);
    identities.sort();
    let expected: Vec<(String, String)> =
        ["a:r0", "a:r1", "a:r2", "b:r0", "b:r1", "b:r2"].iter().map(|s| (s[..1].to_owned(), (*s).to_owned())).collect();
    assert_eq!(identities, expected, "every accepted submission is in the transcript once");

    finalize_and_verify(GAOS, base, dir.path(), &session, "b", "counter");
    assert_closed_after_finalize(&server, &session, "a");
}

#[test]
fn hilo_is_played_attached_finalized_and_verified() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-e2e-hilo");
    let seed = 7u32;
    let session =
        create_session(base, op, &json!({"game": "conformance/hilo", "seed": seed, "policy": receipts_policy()}));
    let (mut alice, mut bob) = hilo_deal(seed, 3, 9);
    assert_eq!(session.created["tick"]["hand"], json!(alice), "the host deals as GAMES.md specifies");

    let mut score = (0, 0);
    let mut second = None;
    for round in 0..3 {
        // Each seat plays its highest card.
        let pick = |hand: &[u64]| (0..hand.len()).max_by_key(|&i| (hand[i], usize::MAX - i)).expect("a card");
        let (ia, ib) = (pick(&alice), pick(&bob));
        let (ca, cb) = (alice.remove(ia), bob.remove(ib));
        score.0 += u64::from(ca > cb);
        score.1 += u64::from(cb > ca);
        let moves = [("alice", json!({"card": ia})), ("bob", json!({"card": ib}))];
        let last = play_simultaneous_window(base, &session, &moves, &format!("r{round}"));
        assert_eq!(last["tick"]["hand"], json!(bob), "bob's answer shows bob's remaining hand");
        assert_eq!(tick(base, &session, session.token("alice"))["tick"]["hand"], json!(alice));
        match round {
            0 => second = Some(attach_pair(&server, &session, "bob", "alice").1),
            1 => attach_after_advance(&server, &session, "bob", second.as_ref().expect("attached in round 0")),
            _ => {}
        }
    }
    let end = assert_terminal(&server, &session, "alice");
    assert_eq!(end["tick"]["score"], json!({"alice": score.0, "bob": score.1}));
    assert_eq!(end["tick"]["status"], json!("ended"));
    assert_eq!(end["tick"]["outcome"]["kind"], json!("decided"));

    let result = finalize_and_verify(GAOS, base, dir.path(), &session, "alice", "hilo");
    assert_eq!(result["outcome"]["status"], json!("ended"));
    assert_closed_after_finalize(&server, &session, "bob");
}

#[test]
fn tictactoe_is_played_attached_finalized_and_verified() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-e2e-tictactoe");
    let session = create_session(base, op, &json!({"game": "conformance/tictactoe", "policy": receipts_policy()}));
    // x completes the top row in five moves: won with 3 stars.
    let moves = [("x", 0), ("o", 3), ("x", 1), ("o", 4), ("x", 2)];
    let mut second = None;
    for (i, (seat, cell)) in moves.iter().enumerate() {
        let envelope = tick(base, &session, session.token(seat));
        assert_eq!(envelope["revision"].as_u64(), Some(i as u64));
        assert_eq!(envelope["tick"]["toMove"], json!(seat));
        let body = submission(&envelope, seat, &format!("{seat}:{i}"), json!({"cell": cell}));
        let response = act(base, &session, seat, &body);
        assert_eq!(response.status, 200, "a sequential move resolves at once: {}", response.text());
        let answer = response.json();
        assert_eq!(answer["revision"].as_u64(), Some(i as u64 + 1));
        let retry = act(base, &session, seat, &body);
        assert_eq!(retry.body, response.body, "an exact retry returns the first answer");
        match i {
            1 => second = Some(attach_pair(&server, &session, "x", "o").1),
            3 => attach_after_advance(&server, &session, "x", second.as_ref().expect("attached after move 1")),
            _ => {}
        }
    }
    let end = assert_terminal(&server, &session, "o");
    assert_eq!(end["tick"]["board"], json!("xxxoo...."));
    assert_eq!(end["tick"]["status"], json!("won"));
    assert_eq!(end["tick"]["stars"], json!(3));
    let result = finalize_and_verify(GAOS, base, dir.path(), &session, "o", "tictactoe");
    assert_eq!(result["outcome"]["status"], json!("won"));
    assert_eq!(result["outcome"]["stars"], json!(3));
    assert_closed_after_finalize(&server, &session, "x");
}

fn sealed_commit(session: &Session, seat: &str, salt: &str, bid: u64) -> String {
    let binding = CommitmentBinding { session_id: &session.id, seat, commitment_id: 0, window_ref: 0 };
    let payload = gaos_json::parse(&json!({"bid": bid}).to_string()).expect("JSON");
    commitment_hash(&binding, salt, &payload).expect("a well-formed commitment")
}

#[test]
fn sealed_commit_reveal_is_played_attached_finalized_and_verified() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-e2e-sealed");
    let session = create_session(base, op, &json!({"game": "conformance/sealed", "policy": receipts_policy()}));
    let bids =
        [("north", "00112233445566778899aabbccddeeff", 40u64), ("south", "ffeeddccbbaa99887766554433221100", 70)];
    let commits: Vec<(&str, Value)> = bids
        .iter()
        .map(|(seat, salt, bid)| (*seat, json!({"commit": sealed_commit(&session, seat, salt, *bid)})))
        .collect();
    let after_commit = play_simultaneous_window(base, &session, &commits, "commit");
    assert_eq!(after_commit["tick"]["phase"], json!("reveal"));
    assert_eq!(after_commit["tick"]["bids"], json!({}), "bids stay sealed until both reveal");
    let (_, second) = attach_pair(&server, &session, "south", "north");
    let reveals: Vec<(&str, Value)> =
        bids.iter().map(|(seat, salt, bid)| (*seat, json!({"reveal": {"salt": salt, "bid": bid}}))).collect();
    let last = play_simultaneous_window(base, &session, &reveals, "reveal");
    assert_eq!(last["tick"]["phase"], json!("done"));
    assert_eq!(last["tick"]["bids"], json!({"north": 40, "south": 70}), "both reveals verified");
    assert_eq!(last["tick"]["status"], json!("ended"));
    assert_eq!(last["tick"]["outcome"]["ranking"][0]["seat"], json!("south"));
    attach_after_advance(&server, &session, "south", &second);
    assert_terminal(&server, &session, "north");
    finalize_and_verify(GAOS, base, dir.path(), &session, "north", "sealed");
    assert_closed_after_finalize(&server, &session, "south");
}

#[test]
fn race_advances_on_the_host_clock_and_verifies() {
    let server = TestServer::start(GAOS);
    let (base, op) = (&server.base_url, &server.operator_token);
    let dir = TempDir::new("gaos-e2e-race");
    let session = create_session(
        base,
        op,
        &json!({
            "game": "conformance/race",
            "cadence": {"mode": "ticks", "ticksPerSecond": 20},
            "policy": receipts_policy(),
        }),
    );
    // p1 boosts once per observed window; p2 never acts. A boost answered 2xx
    // is resolved in its window, so p1 ends exactly `accepted` cells ahead.
    let mut accepted = Vec::new();
    let mut last_revision = None;
    let deadline = Instant::now() + Duration::from_secs(20);
    let final_envelope = loop {
        assert!(Instant::now() < deadline, "the race did not finish on the host's clock");
        let envelope = tick(base, &session, session.token("p1"));
        if envelope["tick"]["done"] == json!(true) {
            break envelope;
        }
        let revision = envelope["revision"].as_u64().expect("revision");
        if last_revision != Some(revision) {
            last_revision = Some(revision);
            let id = format!("p1:boost:{revision}");
            let response = act(base, &session, "p1", &submission(&envelope, "p1", &id, json!({"boost": true})));
            match response.status {
                200 | 202 => accepted.push(id),
                // The scheduler moved the cursor (or ended the race) first.
                409 => assert!(
                    matches!(response.code().as_deref(), Some("stale_tick" | "terminal")),
                    "unexpected conflict: {}",
                    response.text()
                ),
                _ => panic!("unexpected answer to a boost: {} {}", response.status, response.text()),
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let view = &final_envelope["tick"];
    assert_eq!(view["status"], json!("ended"));
    let (p1, p2) = (view["pos"]["p1"].as_u64().expect("p1"), view["pos"]["p2"].as_u64().expect("p2"));
    assert!(p1.max(p2) >= 12, "someone crossed the line: {view}");
    assert_eq!(p1 - p2, accepted.len() as u64, "every acknowledged boost counted once: {view}");
    assert!(!accepted.is_empty(), "at least one boost landed within a 50 ms window");
    let (_, events) = transcript(base, op, &session);
    let mut identities: Vec<String> = accepted_identities(&events).into_iter().map(|(_, id)| id).collect();
    identities.sort();
    accepted.sort();
    assert_eq!(identities, accepted, "the transcript holds exactly the acknowledged boosts");
    let resolutions = events.iter().filter(|e| e["kind"] == json!("resolution")).count() as u64;
    assert_eq!(resolutions, view["tick"].as_u64().expect("tick"), "one resolution per scheduled tick");
    // The cursor is stable once the race is over: attach there.
    let (_, second) = attach_pair(&server, &session, "p2", "p1");
    assert!(second["previousReceiptDigest"].is_string(), "the second receipt is chained: {second}");
    assert_terminal(&server, &session, "p2");
    finalize_and_verify(GAOS, base, dir.path(), &session, "p2", "race");
}

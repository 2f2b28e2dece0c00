//! Periodic seat signatures on a real `gaos serve` (RFC-010
//! `seat-signature`, kernel spec §5.9): alice's key allows four ticks of
//! unsigned moves (`signingTier.N = 4`) and she sends every move chained
//! but unsigned; bob signs each of his. With nothing else the match ends
//! with alice's moves uncovered, and its replay is not `accepted-signed`.
//! Through `POST /seat-signature` (the Rust client's `seat_signature`)
//! alice signs her chain head once after the last move: the event is
//! recorded, the finalized result reports her signed and the replay
//! verifies `accepted-signed`. A signature at another tick, over another
//! head or under another key is refused and stores nothing; the same
//! signature again (a retry) answers without a write; an unsigned session
//! takes none; a spectator's or the operator's token cannot sign.

use gaos_kernel::signing::{PeriodicAttestation, decode_chain_hash, to_base64};
use gaos_runner::signing::SeatSigningKey;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};
use signed_support::{GAOS, chained, verify_text};

mod signed_support;

const ROUNDS: u64 = 3;
const POLICY: &str = "gaos.submission.ed25519.v1";

/// A hilo match in which alice moves unsigned throughout and bob signs.
fn play(server: &TestServer, alice: &SeatSigningKey, bob: &SeatSigningKey) -> Session {
    let request = json!({"game": "conformance/hilo", "seed": 5, "participantId": "alice",
        "level": {"handSize": ROUNDS, "maxCard": 13},
        "seatKeys": [alice.seat_key("alice", 4).to_string().parse::<Value>().expect("JSON"),
                     bob.seat_key("bob", 1).to_string().parse::<Value>().expect("JSON")],
        "signaturePolicy": {"scheme": POLICY}});
    let session = create_session(&server.base_url, &server.operator_token, &request);
    for round in 0..ROUNDS {
        for (seat, key, sign) in [("alice", alice, false), ("bob", bob, true)] {
            let envelope = tick(&server.base_url, &session, session.token(seat));
            let body = chained(&envelope, seat, &format!("{seat}-{round}"), json!({"card": 0}), key, sign);
            let answer = act(&server.base_url, &session, seat, &body);
            assert!(answer.status == 200 || answer.status == 202, "round {round} {seat}: {}", answer.text());
        }
    }
    session
}

/// alice's periodic signature over `head` at `tick`, under `key`.
fn periodic(session: &Session, key: &SeatSigningKey, tick: u64, head: &str) -> Value {
    let chain_head = decode_chain_hash(head).expect("32 bytes");
    let attestation = PeriodicAttestation {
        session_id: &session.id,
        seat: "alice",
        tick,
        client_time: 5_000,
        chain_head: &chain_head,
    };
    let preimage = attestation.preimage().expect("a preimage");
    json!({"tick": tick, "clientTime": 5_000, "prevChainHash": head, "sig": to_base64(&key.sign(&preimage))})
}

fn finalize(base: &str, session: &Session) -> Value {
    let finalized = post(base, &session.path("finalize"), Some(session.token("bob")), &json!({"requestId": "f"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    finalized.json()
}

#[test]
fn a_periodic_signature_covers_a_seats_unsigned_moves_and_the_replay_is_accepted_signed() {
    let server = TestServer::start(GAOS);
    let dir = TempDir::new("gaos-signed-periodic");
    let (alice, bob) = (SeatSigningKey::from_seed([1; 32]), SeatSigningKey::from_seed([2; 32]));
    let base = server.base_url.clone();

    // Without a periodic signature alice's moves stay uncovered.
    let uncovered = play(&server, &alice, &bob);
    let result = finalize(&base, &uncovered);
    let alice_report = result["extensions"]["gaos.session.signatures"]["seats"]
        .as_array()
        .and_then(|seats| seats.iter().find(|s| s["seat"] == json!("alice")).cloned())
        .expect("alice's report");
    assert_eq!(alice_report["signed"], json!(false), "{alice_report}");
    let replay = get(&base, &uncovered.path("replay"), Some(uncovered.token("bob"))).text();
    let verdict = verify_text(dir.path(), "uncovered", &replay);
    assert_ne!(verdict["verdict"], json!("accepted-signed"), "{verdict}");

    // The same match, and alice signs her chain head once it is over.
    let session = play(&server, &alice, &bob);
    let envelope = tick(&base, &session, session.token("alice"));
    let head = envelope["extensions"]["gaos.session.signing"]["chainHead"].as_str().expect("a head").to_owned();
    let now = envelope["tick"].as_u64().unwrap_or_else(|| envelope["revision"].as_u64().expect("revision"));
    let route = session.path("seat-signature");
    let before = transcript(&base, &server.operator_token, &session);

    let refusals = [
        (periodic(&session, &alice, now + 1, &head), 409, "stale_tick"),
        (periodic(&session, &bob, now, &head), 400, "invalid_signature"),
        (periodic(&session, &alice, now, &to_base64(&[7u8; 32])), 400, "invalid_signature"),
        (json!({"tick": now, "clientTime": 1, "prevChainHash": head}), 400, "invalid_request"),
    ];
    for (body, status, code) in &refusals {
        assert_error(&post(&base, &route, Some(session.token("alice")), body), *status, code);
    }
    let good = periodic(&session, &alice, now, &head);
    assert_error(&post(&base, &route, Some(&session.spectator), &good), 403, "forbidden");
    assert_error(&post(&base, &route, Some(&server.operator_token), &good), 403, "forbidden");
    assert_eq!(transcript(&base, &server.operator_token, &session), before, "a refused signature stores nothing");

    // alice signs through the Rust client; a retry of it writes nothing more.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let client = gaos_client::SessionClient::builder(&base)
        .token(session.token("alice"))
        .participant_id("alice")
        .build()
        .expect("a client");
    let sig = good["sig"].as_str().expect("sig");
    for _ in 0..2 {
        let answered = runtime
            .block_on(client.seat_signature(&session.id, now, 5_000, &head, sig))
            .unwrap_or_else(|e| panic!("alice's periodic signature: {e}"));
        assert_eq!(answered.status, 200);
    }
    let (_, events) = transcript(&base, &server.operator_token, &session);
    let signatures: Vec<&Value> = events.iter().filter(|e| e["kind"] == json!("seat-signature")).collect();
    assert_eq!(signatures.len(), 1, "one event, not one per retry: {signatures:?}");

    let result = finalize(&base, &session);
    for seat in result["extensions"]["gaos.session.signatures"]["seats"].as_array().expect("seats") {
        assert_eq!(seat["signed"], json!(true), "{seat}");
    }
    let replay = get(&base, &session.path("replay"), Some(session.token("bob"))).text();
    let verdict = verify_text(dir.path(), "covered", &replay);
    assert_eq!(verdict["verdict"], json!("accepted-signed"), "{verdict}");
    // After finalize nothing more is recorded.
    let late = post(&base, &route, Some(session.token("alice")), &good);
    assert_error(&late, 409, "session_finalized");

    // An unsigned session takes no seat signature.
    let plain = create_session(&base, &server.operator_token, &json!({"game": "conformance/hilo", "seed": 5}));
    let answer = post(&base, &plain.path("seat-signature"), Some(plain.token("alice")), &good);
    assert_error(&answer, 400, "invalid_request");
}

//! Signed sessions and the host's checkpoints (issue 30): on a real `gaos
//! serve --checkpoint-every 1`, a signed hilo match whose bob registers his
//! key at attach (after attaches that recorded lease events) and whose alice
//! (signing tier 2) leaves every other move chained but unsigned, to be
//! covered by her next signed one, is killed and restarted twice: between
//! windows while alice's unsigned move awaits its covering signature, and
//! in the middle of a window. Every seat's chain heads, the uncovered move
//! and the registered key survive; the finalized replay is `accepted-signed`
//! and the result reports each seat signed. (A signed session keeps its
//! whole log: a checkpoint taken before its roster was complete would not
//! even restore under the final roster.)

use gaos_runner::signing::SeatSigningKey;
use gaos_testkit::http::*;
use gaos_testkit::server::{TempDir, TestServer};
use serde_json::{Value, json};
use signed_support::{GAOS, chained, verify_text};

mod signed_support;

const ROUNDS: u64 = 8;

#[test]
fn a_signed_session_survives_checkpoints_and_restarts_and_finalizes_accepted_signed() {
    let mut server = TestServer::start_with(GAOS, &["--checkpoint-every", "1"]);
    let dir = TempDir::new("gaos-signed-checkpoints");
    let (alice, bob) = (SeatSigningKey::from_seed([1; 32]), SeatSigningKey::from_seed([2; 32]));
    let request = json!({"game": "conformance/hilo", "seed": 5, "participantId": "alice",
        "level": {"handSize": ROUNDS, "maxCard": 13},
        "seatKeys": [alice.seat_key("alice", 2).to_string().parse::<Value>().expect("JSON")],
        "seatKeysAtAttach": ["bob"], "signaturePolicy": {"scheme": "gaos.submission.ed25519.v1"}});
    let session = create_session(&server.base_url, &server.operator_token, &request);

    // Before the roster is complete, lease events (bob pauses and resumes
    // his seat) are transitions: a checkpoint would be due at each.
    let attach = |base: &str, id: &str, seat_key: Option<Value>| {
        let mut body = json!({"requestId": id});
        if let Some(k) = seat_key {
            body["seatKey"] = k;
        }
        let answer = post(base, &session.path("attach"), Some(session.token("bob")), &body);
        assert_eq!(answer.status, 200, "{}", answer.text());
    };
    attach(&server.base_url, "bob-0", None);
    for route in ["pause", "resume"] {
        let answer = post(&server.base_url, &session.path(route), Some(session.token("bob")), &json!({}));
        assert_eq!(answer.status, 200, "{route}: {}", answer.text());
    }
    let (_, events) = transcript(&server.base_url, &server.operator_token, &session);
    assert!(events.iter().any(|e| e["kind"] == json!("extension")), "lease events were recorded: {events:?}");
    let bob_entry: Value = bob.seat_key("bob", 1).to_string().parse().expect("JSON");
    attach(&server.base_url, "bob-1", Some(bob_entry));

    for round in 0..ROUNDS {
        for (seat, key, sign) in [("alice", &alice, round % 2 == 1), ("bob", &bob, true)] {
            let base = server.base_url.clone();
            let envelope = tick(&base, &session, session.token(seat));
            let body = chained(&envelope, seat, &format!("{seat}-{round}"), json!({"card": 0}), key, sign);
            let answer = act(&base, &session, seat, &body);
            assert!(answer.status == 200 || answer.status == 202, "round {round} {seat}: {}", answer.text());
            if round == 5 && seat == "alice" {
                server.restart(); // mid-window: alice's signed move is pending
            }
        }
        if round == 2 {
            server.restart(); // alice's unsigned round-2 move awaits its cover
        }
    }
    let base = server.base_url.clone();
    let finalized = post(&base, &session.path("finalize"), Some(session.token("alice")), &json!({"requestId": "f"}));
    assert_eq!(finalized.status, 200, "{}", finalized.text());
    let report = &finalized.json()["extensions"]["gaos.session.signatures"];
    assert_eq!(report["state"], json!("signed"), "{report}");
    let seats = report["seats"].as_array().expect("seats");
    let alice_report = seats.iter().find(|s| s["seat"] == json!("alice")).expect("alice");
    assert_eq!(alice_report["submissions"], json!(ROUNDS));
    assert_eq!(alice_report["validSignatures"], json!(ROUNDS / 2), "every other move of alice is signed");
    for seat in seats {
        assert_eq!(seat["signed"], json!(true), "{seat}");
        assert_eq!(seat["chainReproduced"], json!(true), "{seat}");
    }
    let replay = get(&base, &session.path("replay"), Some(session.token("bob"))).text();
    let verdict = verify_text(dir.path(), "restarted", &replay);
    assert_eq!(verdict["verdict"], json!("accepted-signed"), "{verdict}");
}

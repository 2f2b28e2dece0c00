//! Attach receipts leak nothing a seat may not see (issue 15 item 1).
//!
//! Bob attacks his own attach receipts the way the defect was found: he knows
//! his own view, the public fields and the old (unkeyed) digest rules, so he
//! enumerates every hand alice could hold (9^3 = 729 for hilo at handSize 3,
//! maxCard 9) and every card she could have played under the predictable
//! default submission id, hashes each guess the unkeyed way and compares it
//! with `stateDigest` / `transcriptDigest`. Before the digests were keyed
//! with a per-session host secret this found alice's hand and her pending
//! move; now no guess may match.
//!
//! The transcript attacker is stronger than a seat: it reads the event prefix
//! (and the shape of alice's pending event) with the operator token, so only
//! the hidden card is guessed. Even so nothing may match.

use gaos_testkit::fixtures::hilo_deal;
use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const HAND: usize = 3;
const MAX_CARD: u64 = 9;
const SEED: u32 = 7;

fn canonical(value: &Value) -> String {
    gaos_json::canonical_json(&gaos_json::parse(&value.to_string()).expect("JSON"))
}

fn sha256(text: &str) -> String {
    gaos_json::sha256_hex(text.as_bytes())
}

/// The old unkeyed `stateDigest`: SHA-256 of
/// `{"cursor":C,"tick":T,"views":{"alice":..,"bob":..}}`.
fn unkeyed_state_digest(cursor: u64, tick: u64, alice: &Value, bob: &Value) -> String {
    sha256(&format!(
        "{{\"cursor\":{cursor},\"tick\":{tick},\"views\":{{\"alice\":{},\"bob\":{}}}}}",
        canonical(alice),
        canonical(bob)
    ))
}

/// Every hand of `HAND` cards in `1..=MAX_CARD`.
fn all_hands() -> Vec<Vec<u64>> {
    let mut hands = vec![Vec::new()];
    for _ in 0..HAND {
        hands = hands.into_iter().flat_map(|h| (1..=MAX_CARD).map(move |c| [h.clone(), vec![c]].concat())).collect();
    }
    hands
}

/// Bob's view as the attach answer carries it (the tick without the
/// envelope-only members).
fn view_of(tick: &Value) -> Value {
    let mut view = tick.as_object().expect("a tick object").clone();
    view.remove("legalActions");
    view.remove("done");
    Value::Object(view)
}

fn create(base: &str, op: &str) -> Session {
    create_session(
        base,
        op,
        &json!({"game": "conformance/hilo", "seed": SEED, "level": {"handSize": HAND, "maxCard": MAX_CARD},
                "policy": receipts_policy()}),
    )
}

fn attach(base: &str, s: &Session, seat: &str, request_id: &str) -> Value {
    let r = post(base, &s.path("attach"), Some(s.token(seat)), &json!({"requestId": request_id}));
    assert_eq!(r.status, 200, "attach: {}", r.text());
    r.json()
}

#[test]
fn no_hand_guess_reproduces_the_state_digest() {
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.as_str(), server.operator_token.as_str());
    let s = create(base, op);
    let answer = attach(base, &s, "bob", "bob-0");
    let receipt = &answer["receipt"];
    let digest = receipt["stateDigest"].as_str().expect("a stateDigest").to_owned();
    let bob = view_of(&answer["tick"]);
    assert_eq!(bob["seat"], json!("bob"));
    let cursor = receipt["revision"].as_u64().expect("revision");
    let (true_hand, _) = hilo_deal(SEED, HAND, MAX_CARD as u32);
    let hands = all_hands();
    assert_eq!(hands.len(), 729);
    assert!(hands.contains(&true_hand), "the search space holds alice's real hand {true_hand:?}");
    let mut found = Vec::new();
    for tick in 0..=cursor + 1 {
        for hand in &hands {
            let mut alice = bob.clone();
            alice["seat"] = json!("alice");
            alice["hand"] = json!(hand);
            if unkeyed_state_digest(cursor, tick, &alice, &bob) == digest {
                found.push((tick, hand.clone()));
            }
        }
    }
    assert_eq!(found, vec![], "bob recovered alice's hand (really {true_hand:?}) from his receipt's stateDigest");
    check_receipt_digest(receipt);
}

#[test]
fn no_pending_move_guess_reproduces_the_transcript_digest() {
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.as_str(), server.operator_token.as_str());
    let s = create(base, op);
    let envelope = get(base, &s.path("tick"), Some(s.token("alice"))).json();
    let tick_id = envelope["tickId"].as_str().expect("a tickId").to_owned();
    let played = 1u64;
    let id = gaos_session_default_id("alice", &tick_id);
    let r = act(base, &s, "alice", &submission(&envelope, "alice", &id, json!({"card": played})));
    assert_eq!(r.status, 202, "alice's move is pending: {}", r.text());
    let answer = attach(base, &s, "bob", "bob-after-alice");
    let digest = answer["receipt"]["transcriptDigest"].as_str().expect("a transcriptDigest").to_owned();

    // The durable events, one canonical line each (the header line is not hashed).
    let text = get(base, &s.path("transcript"), Some(op)).text();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let (pending, prefix) = lines.split_last().expect("alice's intent is the newest event");
    let pending: Value = serde_json::from_str(pending).expect("event JSON");
    assert_eq!(pending["kind"], json!("intent-accepted"), "{pending}");
    let mut found = Vec::new();
    for card in 0..HAND as u64 {
        let mut guess = pending.clone();
        guess["submissionId"] = json!(id);
        guess["command"] = json!({"card": card});
        guess["canonicalCommand"] = json!(canonical(&json!({"card": card})));
        if guess.get("action").is_some_and(|a| a.get("index").is_some()) {
            guess["action"]["index"] = json!(card);
        }
        let mut events: Vec<String> = prefix.iter().map(|l| (*l).to_owned()).collect();
        events.push(canonical(&guess));
        if sha256(&events.join("\n")) == digest {
            found.push(card);
        }
    }
    assert_eq!(found, Vec::<u64>::new(), "bob learned alice's pending card (really {played}) from transcriptDigest");
}

/// The default submission id of the reference clients, `<seat>:<tickId>:0`
/// for a seat's first submission at a tick (spec lifecycle.md).
fn gaos_session_default_id(seat: &str, tick_id: &str) -> String {
    format!("{seat}:{tick_id}:0")
}

/// The key survives a restart (a new attach at the same revision attests the
/// same digests) and two seats' receipts at one revision agree.
#[test]
fn keyed_digests_are_stable_across_seats_and_restarts() {
    let mut server = TestServer::start(GAOS);
    let s = create(&server.base_url.clone(), &server.operator_token.clone());
    let digests = |answer: &Value| {
        let receipt = &answer["receipt"];
        check_receipt_digest(receipt);
        (receipt["stateDigest"].clone(), receipt["transcriptDigest"].clone())
    };
    let before = digests(&attach(&server.base_url, &s, "bob", "bob-0"));
    assert_eq!(digests(&attach(&server.base_url, &s, "alice", "alice-0")), before, "every seat gets the same digests");
    server.restart();
    assert_eq!(digests(&attach(&server.base_url, &s, "bob", "bob-1")), before, "the digest key survived the restart");
}

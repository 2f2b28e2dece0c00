//! No seat ever receives another seat's hidden hand in hilo, and the
//! spectator receives no hand at all — across tick envelopes, act answers
//! (pending and resolved), attach answers, error bodies, snapshots, the SSE
//! stream, the finalize result and the replay.
//!
//! The check is structural: every JSON body is parsed and walked. The hands
//! are computed client-side from the seed (the deal of GAMES.md), and the seed is
//! chosen so that no hand state of bob ever equals one of alice's, so any
//! appearance of bob's cards under any key is caught.

use std::ops::RangeInclusive;
use std::time::Duration;

use gaos_testkit::fixtures::hilo_deal;
use gaos_testkit::http::*;
use gaos_testkit::server::TestServer;
use serde_json::{Value, json};

const GAOS: &str = env!("CARGO_BIN_EXE_gaos");
const HAND: usize = 4;
const MAX_CARD: u32 = 13;

/// Every object in `value`, depth first.
fn objects(value: &Value) -> Vec<&serde_json::Map<String, Value>> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                out.push(map);
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    out
}

/// Every array in `value`, depth first.
fn arrays(value: &Value) -> Vec<&Vec<Value>> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => stack.extend(map.values()),
            Value::Array(items) => {
                out.push(items);
                stack.extend(items);
            }
            _ => {}
        }
    }
    out
}

/// Hand states after each round when alice plays her first card and bob his
/// last one: `states[k]` is the hand after k rounds.
fn hand_states(mut hand: Vec<u64>, first: bool) -> Vec<Vec<u64>> {
    let mut states = vec![hand.clone()];
    while !hand.is_empty() {
        if first {
            hand.remove(0)
        } else {
            hand.pop().expect("a card")
        };
        states.push(hand.clone());
    }
    states
}

/// A body alice received, and the round range her hand could be in.
struct Received {
    what: String,
    body: Value,
    stages: RangeInclusive<usize>,
}

struct Leaks {
    alice: Vec<Vec<u64>>,
    bob: Vec<Vec<u64>>,
}

impl Leaks {
    /// A seat body: no `hands`; every `hand` is alice's at that stage inside
    /// a view of seat alice; no array equals any of bob's (non-empty) hands.
    fn check_alice(&self, received: &Received) -> Option<usize> {
        let Received { what, body, stages } = received;
        let mut stage_seen = None;
        for map in objects(body) {
            assert!(!map.contains_key("hands"), "{what}: alice received the full state: {body}");
            if let Some(hand) = map.get("hand") {
                assert_eq!(map.get("seat"), Some(&json!("alice")), "{what}: a hand outside alice's view: {body}");
                let stage = stages
                    .clone()
                    .find(|&k| *hand == json!(self.alice[k]))
                    .unwrap_or_else(|| panic!("{what}: hand {hand} is not alice's hand in rounds {stages:?}: {body}"));
                stage_seen = Some(stage);
            }
            if map.contains_key("handCounts") {
                assert_eq!(map.get("seat"), Some(&json!("alice")), "{what}: a view of another seat: {body}");
                assert!(map.contains_key("hand"), "{what}: alice's view carries her own hand: {body}");
            }
        }
        for array in arrays(body) {
            for hand in self.bob.iter().filter(|h| !h.is_empty()) {
                assert_ne!(*array, json!(hand).as_array().expect("array").clone(), "{what}: bob's hand leaked: {body}");
            }
        }
        stage_seen
    }

    /// A spectator body: no hand of anyone, under any key.
    fn check_spectator(&self, what: &str, body: &Value) {
        for map in objects(body) {
            assert!(
                !map.contains_key("hand") && !map.contains_key("hands"),
                "{what}: the spectator got a hand: {body}"
            );
            if map.contains_key("handCounts") {
                assert!(!map.contains_key("seat"), "{what}: the spectator got a seat view: {body}");
            }
        }
        for array in arrays(body) {
            for hand in self.alice.iter().chain(&self.bob).filter(|h| !h.is_empty()) {
                assert_ne!(*array, json!(hand).as_array().expect("array").clone(), "{what}: a hand leaked: {body}");
            }
        }
    }
}

/// The first seed whose hand states never coincide between the seats.
fn distinct_seed() -> (u32, Leaks) {
    (1u32..)
        .map(|seed| {
            let (alice, bob) = hilo_deal(seed, HAND, MAX_CARD);
            (seed, Leaks { alice: hand_states(alice, true), bob: hand_states(bob, false) })
        })
        .find(|(_, l)| {
            let mut all: Vec<&Vec<u64>> = l.alice.iter().chain(&l.bob).filter(|h| !h.is_empty()).collect();
            let n = all.len();
            all.sort();
            all.dedup();
            all.len() == n
        })
        .expect("some seed deals distinct hands")
}

fn keep(got: &mut Vec<Received>, what: String, response: &Response, stages: RangeInclusive<usize>) {
    got.push(Received { what, body: response.json(), stages });
}

fn jsonl(text: &str) -> Value {
    Value::Array(text.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect())
}

#[test]
fn no_seat_ever_sees_another_seats_hand_and_the_spectator_sees_none() {
    let (seed, leaks) = distinct_seed();
    let server = TestServer::start(GAOS);
    let (base, op) = (server.base_url.as_str(), server.operator_token.as_str());
    let s = create_session(
        base,
        op,
        &json!({"game": "conformance/hilo", "seed": seed, "level": {"handSize": HAND, "maxCard": MAX_CARD},
                "policy": receipts_policy()}),
    );
    let (alice, spectator) = (s.token("alice"), s.spectator.as_str());
    let alice_stream = SseReader::open(base, &s.path("stream"), alice);
    let spectator_stream = SseReader::open(base, &s.path("stream"), spectator);

    let mut got: Vec<Received> = Vec::new();
    let mut spectator_got: Vec<(String, Value)> = Vec::new();
    let mut previous: Option<Value> = None;
    for k in 0..HAND {
        let here = k..=k;
        let envelope = {
            let r = get(base, &s.path("tick"), Some(alice));
            keep(&mut got, format!("tick {k}"), &r, here.clone());
            r.json()
        };
        let r = get(base, &s.path("snapshot"), Some(alice));
        keep(&mut got, format!("snapshot {k}"), &r, here.clone());
        let r = get(base, &format!("{}?after=0", s.path("snapshot")), Some(alice));
        keep(&mut got, format!("snapshot after 0, round {k}"), &r, here.clone());
        let r = post(base, &s.path("attach"), Some(alice), &json!({"requestId": format!("attach-{k}")}));
        assert_eq!(r.status, 200, "{}", r.text());
        keep(&mut got, format!("attach {k}"), &r, here.clone());
        let r = act(base, &s, "alice", &submission(&envelope, "alice", &format!("bad-{k}"), json!({"card": 99})));
        assert_error(&r, 422, "illegal_command");
        keep(&mut got, format!("illegal command {k}"), &r, here.clone());
        if let Some(old) = &previous {
            let r = act(base, &s, "alice", &submission(old, "alice", &format!("stale-{k}"), json!({"card": 0})));
            assert_error(&r, 409, "stale_tick");
            keep(&mut got, format!("stale tick {k}"), &r, here.clone());
        }
        let r = post(base, &s.path("finalize"), Some(alice), &json!({"requestId": "early"}));
        assert_error(&r, 409, "not_terminal");
        keep(&mut got, format!("finalize early {k}"), &r, here.clone());

        let alice_move = submission(&envelope, "alice", &format!("alice:{k}"), json!({"card": 0}));
        let bob_move = submission(&envelope, "bob", &format!("bob:{k}"), json!({"card": leaks.bob[k].len() - 1}));
        let after = k + 1..=k + 1;
        if k % 2 == 0 {
            // alice first: pending answers, then bob resolves.
            let r = act(base, &s, "alice", &alice_move);
            assert_eq!(r.status, 202, "{}", r.text());
            keep(&mut got, format!("pending act {k}"), &r, here.clone());
            let r = get(base, &s.path("tick"), Some(alice));
            keep(&mut got, format!("pending tick {k}"), &r, here.clone());
            let r = act(base, &s, "alice", &submission(&envelope, "alice", &format!("again-{k}"), json!({"card": 1})));
            assert_error(&r, 409, "conflicting_intent");
            keep(&mut got, format!("conflicting intent {k}"), &r, here.clone());
            assert_eq!(act(base, &s, "bob", &bob_move).status, 200);
            let r = act(base, &s, "alice", &alice_move);
            keep(&mut got, format!("retry of a resolved pending act {k}"), &r, here.clone());
        } else {
            // bob first: alice's act resolves the window.
            assert_eq!(act(base, &s, "bob", &bob_move).status, 202);
            let r = act(base, &s, "alice", &alice_move);
            assert_eq!(r.status, 200, "{}", r.text());
            keep(&mut got, format!("resolving act {k}"), &r, after.clone());
        }
        let r = get(base, &s.path("tick"), Some(spectator));
        spectator_got.push((format!("spectator tick {k}"), r.json()));
        let r = act(base, &s, "bob", &bob_move);
        assert!(r.is_success(), "bob's retry: {}", r.text());
        previous = Some(envelope);
    }
    let end = HAND..=HAND;
    let r = get(base, &s.path("tick"), Some(alice));
    assert_eq!(r.json()["tick"]["done"], json!(true));
    keep(&mut got, "final tick".into(), &r, end.clone());
    let r = post(base, &s.path("finalize"), Some(alice), &json!({"requestId": "done"}));
    assert_eq!(r.status, 200, "{}", r.text());
    keep(&mut got, "finalize".into(), &r, end.clone());
    let replay = get(base, &s.path("replay"), Some(alice));
    assert_eq!(replay.status, 200);
    got.push(Received { what: "replay".into(), body: jsonl(&replay.text()), stages: end.clone() });
    let r = post(base, &s.path("attach"), Some(alice), &json!({"requestId": "late"}));
    assert_error(&r, 409, "session_finalized");
    keep(&mut got, "attach after finalize".into(), &r, end.clone());

    for (what, response) in [
        ("spectator final tick", get(base, &s.path("tick"), Some(spectator))),
        ("spectator snapshot", get(base, &s.path("snapshot"), Some(spectator))),
        ("spectator act", post(base, &s.path("actions"), Some(spectator), &json!({"participantId": "alice"}))),
        ("spectator attach", post(base, &s.path("attach"), Some(spectator), &json!({"requestId": "x"}))),
        ("spectator replay", get(base, &s.path("replay"), Some(spectator))),
    ] {
        let body = if response.header("content-type") == Some("application/json") {
            response.json()
        } else {
            jsonl(&response.text())
        };
        spectator_got.push((what.into(), body));
    }

    // The initial frame plus one per resolution, on both streams.
    wait_until(Duration::from_secs(10), "the streams delivered every resolution", || {
        alice_stream.events().len() > HAND && spectator_stream.events().len() > HAND
    });
    let (status, events) = alice_stream.stop();
    assert_eq!(status, 200);
    let mut last_stage = 0;
    let mut stream_hands = 0;
    for (i, event) in events.iter().enumerate() {
        let body: Value = serde_json::from_str(&event.data).expect("stream data is JSON");
        if event.event == "resync" {
            continue;
        }
        for map in objects(&body).into_iter().filter(|m| m.contains_key("scopeId") || m.contains_key("seat")) {
            if map.contains_key("scopeId") {
                assert_eq!(map.get("seat"), Some(&json!("alice")), "stream event {i} is for alice only: {body}");
            }
        }
        let received = Received { what: format!("stream event {i}"), body, stages: last_stage..=HAND };
        if let Some(stage) = leaks.check_alice(&received) {
            last_stage = stage;
            stream_hands += 1;
        }
    }
    assert_eq!(stream_hands, HAND + 1, "alice's stream showed her hand at every round: {events:?}");
    assert_eq!(last_stage, HAND);

    let (status, events) = spectator_stream.stop();
    assert_eq!(status, 200);
    assert!(events.len() > HAND, "the spectator stream carried every resolution: {events:?}");
    for (i, event) in events.iter().enumerate() {
        let body: Value = serde_json::from_str(&event.data).expect("stream data is JSON");
        leaks.check_spectator(&format!("spectator stream event {i}"), &body);
    }

    let mut hands_seen = 0;
    for received in &got {
        hands_seen += usize::from(leaks.check_alice(received).is_some());
    }
    assert!(hands_seen >= 4 * HAND, "alice's own hand was visible in {hands_seen} bodies");
    for (what, body) in &spectator_got {
        leaks.check_spectator(what, body);
    }
}
